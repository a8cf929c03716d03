/* The O(n) block factorisation of the LGS path (solver_lgs_tree.c) against a dense solve of the same
 * system: on random trees (chains, stars, binary trees, random parents with branching up to 8;
 * ball, hinge and universal joints mixed; up to 1000 joints in slow builds) the dense matrix
 * A = G M^-1 G^T is assembled here from the same per-basic blocks (projection rows P, joint points,
 * masses and world inverse inertias), factored with a dense Cholesky decomposition, and the
 * velocity correction Delta u = -M^-1 G^T A^-1 (G u) compared with what ib_lgs_velocity_correction
 * applies to the bodies in its one solve: they agree to 1e-9 relative. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"
#include "joints/joint_internal.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

enum { SHAPE_CHAIN, SHAPE_STAR, SHAPE_BINARY, SHAPE_RANDOM, SHAPE_COUNT };
static const char* const kShape[SHAPE_COUNT] = {"chain", "star", "binary", "random"};

static int parent_of(int shape, int i, jtRng* r)
{
	if (i == 0) return -1;
	switch (shape) {
	case SHAPE_CHAIN: return i - 1;
	case SHAPE_STAR: return i <= 12 ? 0 : 1 + (i % 12); /* a hub with 12 children, then 12 long arms */
	case SHAPE_BINARY: return (i - 1) / 2;
	default: { /* random parent among the last 8 bodies: branching from 1 to 8 */
		int lo = i > 8 ? i - 8 : 0;
		return lo + (int)(jt_uniform(r, 0.0, 1.0) * (i - lo)) % (i - lo);
	}
	}
}

/* A random tree of n boxes held by the world at body 0; joints mixed unless ballOnly. */
static ibWorldId build(int shape, int n, uint64_t seed, bool ballOnly)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.method = IB_SOLVER_LGS;
	wd.solver.velocityTolerance = 1e-6; /* no iterative polish after the one solve */
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	jtRng rng = {seed * 0x9e3779b97f4a7c15ull + 77u};
	ibBodyId ground = jt_static(w, IB_VEC3_ZERO);
	ibBodyId* b = malloc((size_t)n * sizeof *b);
	assert_non_null(b);
	static const ibJointType types[3] = {IB_JOINT_BALL, IB_JOINT_HINGE, IB_JOINT_UNIVERSAL};
	for (int i = 0; i < n; ++i) {
		int p = parent_of(shape, i, &rng);
		ibVec3 anchor = p < 0 ? IB_VEC3_ZERO
		                      : ibAdd(ibBody_GetWorldCenterOfMass(b[p]), ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 com = ibAdd(anchor, ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 half = ibV3(jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25));
		b[i] = jt_box(w, com, jt_rand_quat(&rng), half, jt_uniform(&rng, 300.0, 3000.0));
		ibJointType t = ballOnly ? IB_JOINT_BALL : types[(int)(jt_uniform(&rng, 0.0, 3.0)) % 3];
		ibJointDef jd = ibDefaultJointDef(t);
		jd.bodyA = p < 0 ? ground : b[p];
		jd.bodyB = b[i];
		assert_int_equal(ibJointDef_SetWorldAnchors(&jd, anchor, anchor), IB_OK);
		ibVec3 ax = jt_rand_unit(&rng);
		assert_int_equal(ibJointDef_SetWorldAxes(&jd, ax, t == IB_JOINT_UNIVERSAL ? jt_rand_perp(&rng, ax) : ax), IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	}
	for (int i = 0; i < n; ++i) {
		ibBody_SetLinearVelocity(b[i], jt_rand_vec(&rng, 1.0));
		ibBody_SetAngularVelocity(b[i], jt_rand_vec(&rng, 1.0));
	}
	free(b);
	return w;
}

/* Jacobian row r of basic c for body bi: velocity error P_r . (u_b - u_a) = sum of row . (v, w). */
static void row_of(const ibWorld* w, const ibBasic* c, int r, int32_t bi, double out[6])
{
	double s = bi == c->b2 ? 1.0 : -1.0;
	ibVec3 P = c->P[r], m = IB_VEC3_ZERO, l = P;
	if (c->type->rotational)
		m = P, l = IB_VEC3_ZERO;
	else
		m = ibCross(ibSub(bi == c->b2 ? c->b : c->a, w->bodies[bi].st.s), P);
	out[0] = s * l.x, out[1] = s * l.y, out[2] = s * l.z, out[3] = s * m.x, out[4] = s * m.y, out[5] = s * m.z;
}

static void minv_times(const ibBody* b, const double g[6], double out[6])
{
	for (int i = 0; i < 3; ++i) out[i] = b->invMass * g[i];
	ibVec3 a = ibMat3_MulV(b->invInertiaW, ibV3(g[3], g[4], g[5]));
	out[3] = a.x, out[4] = a.y, out[5] = a.z;
}

/* Dense Delta u (6 per body, indexed by body) of the velocity correction; returns the row count. */
static int dense_correction(ibWorld* w, double* du)
{
	ibJointStore* st = w->joints;
	int rows = 0;
	for (int32_t k = 0; k < st->basicCount; ++k) rows += st->basics[k].rows;
	int32_t* rb = malloc((size_t)rows * sizeof *rb);
	int* rr = malloc((size_t)rows * sizeof *rr);
	double* A = calloc((size_t)rows * (size_t)rows, sizeof *A);
	double* y = calloc((size_t)rows, sizeof *y);
	assert_true(rb && rr && A && y);
	int i = 0;
	for (int32_t k = 0; k < st->basicCount; ++k)
		for (int r = 0; r < st->basics[k].rows; ++r, ++i) rb[i] = k, rr[i] = r;
	/* A_ij = sum over shared dynamic bodies of G_i M^-1 G_j^T; rhs = G u */
	for (i = 0; i < rows; ++i) {
		const ibBasic* ci = &st->basics[rb[i]];
		ibVec3 e = ib_solver_velocity_error(w, ci);
		y[i] = ibDot(ci->P[rr[i]], e);
		const int32_t bi2[2] = {ci->b1, ci->b2};
		for (int s = 0; s < 2; ++s) {
			const ibBody* body = &w->bodies[bi2[s]];
			if (!ib_is_dynamic(body)) continue;
			double g[6], mg[6];
			row_of(w, ci, rr[i], bi2[s], g);
			minv_times(body, g, mg);
			for (int j = 0; j < rows; ++j) {
				const ibBasic* cj = &st->basics[rb[j]];
				if (cj->b1 != bi2[s] && cj->b2 != bi2[s]) continue;
				double h[6], dot = 0.0;
				row_of(w, cj, rr[j], bi2[s], h);
				for (int q = 0; q < 6; ++q) dot += h[q] * mg[q];
				A[(size_t)i * (size_t)rows + (size_t)j] += dot;
			}
		}
	}
	/* dense Cholesky A = L L^T (lower triangle in place), then A lambda = -y */
	for (int c = 0; c < rows; ++c) {
		double* Lc = A + (size_t)c * (size_t)rows;
		double d = Lc[c];
		for (int k = 0; k < c; ++k) d -= Lc[k] * Lc[k];
		assert_true(d > 0.0);
		Lc[c] = sqrt(d);
		for (int r = c + 1; r < rows; ++r) {
			double* Lr = A + (size_t)r * (size_t)rows;
			double s = Lr[c];
			for (int k = 0; k < c; ++k) s -= Lr[k] * Lc[k];
			Lr[c] = s / Lc[c];
		}
	}
	for (int r = 0; r < rows; ++r) {
		double s = -y[r];
		for (int k = 0; k < r; ++k) s -= A[(size_t)r * (size_t)rows + (size_t)k] * y[k];
		y[r] = s / A[(size_t)r * (size_t)rows + (size_t)r];
	}
	for (int r = rows - 1; r >= 0; --r) {
		double s = y[r];
		for (int k = r + 1; k < rows; ++k) s -= A[(size_t)k * (size_t)rows + (size_t)r] * y[k];
		y[r] = s / A[(size_t)r * (size_t)rows + (size_t)r];
	}
	/* Delta u = M^-1 G^T lambda */
	memset(du, 0, sizeof(double) * 6 * (size_t)w->bodyHigh);
	for (i = 0; i < rows; ++i) {
		const ibBasic* ci = &st->basics[rb[i]];
		const int32_t bi2[2] = {ci->b1, ci->b2};
		for (int s = 0; s < 2; ++s) {
			const ibBody* body = &w->bodies[bi2[s]];
			if (!ib_is_dynamic(body)) continue;
			double g[6], mg[6];
			row_of(w, ci, rr[i], bi2[s], g);
			minv_times(body, g, mg);
			for (int q = 0; q < 6; ++q) du[6 * bi2[s] + q] += y[i] * mg[q];
		}
	}
	free(rb);
	free(rr);
	free(A);
	free(y);
	return rows;
}

static double compare(int shape, int n, uint64_t seed, bool ballOnly)
{
	ibWorldId id = build(shape, n, seed, ballOnly);
	ibWorld* w = ib_world_get(id);
	assert_true(ib_joints_rebuild_basics(w));
	for (int32_t k = 0; k < w->joints->basicCount; ++k) ib_solver_prepare(w, &w->joints->basics[k]);
	double* du = malloc(sizeof(double) * 6 * (size_t)w->bodyHigh);
	double* u0 = malloc(sizeof(double) * 6 * (size_t)w->bodyHigh);
	assert_true(du && u0);
	int rows = dense_correction(w, du);
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		double v[6] = {b->st.v.x, b->st.v.y, b->st.v.z, b->st.w.x, b->st.w.y, b->st.w.z};
		memcpy(u0 + 6 * i, v, sizeof v);
	}
	assert_true(ib_lgs_applicable(w));
	w->stats.velocityIterations = 0;
	assert_int_equal(ib_lgs_velocity_correction(w, 0.01), IB_OK);
	assert_int_equal(w->stats.velocityIterations, 1); /* one solve, no fallback */
	double diff = 0.0, scale = 0.0;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		double v[6] = {b->st.v.x, b->st.v.y, b->st.v.z, b->st.w.x, b->st.w.y, b->st.w.z};
		for (int q = 0; q < 6; ++q) {
			diff = fmax(diff, fabs(v[q] - u0[6 * i + q] - du[6 * i + q]));
			scale = fmax(scale, fabs(du[6 * i + q]));
		}
	}
	free(du);
	free(u0);
	ibDestroyWorld(id);
	double rel = diff / scale;
	print_message("%-6s n %4d (%s, %d rows): O(n) vs dense Cholesky, max |dDelta u| %.2e of %.2e (%.1e relative)\n",
	              kShape[shape], n, ballOnly ? "ball" : "mixed", rows, diff, scale, rel);
	if (!(rel <= 1e-9)) fail_msg("%s n %d: O(n) and dense velocity corrections differ by %.3e relative", kShape[shape], n, rel);
	return rel;
}

static void test_dense(void** state)
{
	(void)state;
#if IBDYN_SLOW_TESTS
	static const int sizes[] = {5, 40, 300};
#else
	static const int sizes[] = {5, 40, 120};
#endif
	for (int sh = 0; sh < SHAPE_COUNT; ++sh)
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) compare(sh, sizes[k], 3 + 11 * (uint64_t)k + (uint64_t)sh, false);
#if IBDYN_SLOW_TESTS
	compare(SHAPE_RANDOM, 1000, 5, true); /* 3000 rows: the dense factorisation takes a few seconds */
	compare(SHAPE_STAR, 1000, 6, true);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_dense)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
