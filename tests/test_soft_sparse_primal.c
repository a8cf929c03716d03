/* The particle-space form of the sparse soft solve (src/soft/soft_sparse_primal.c) against a
 * brute-force reference: random rows over particles (one pinned) and rigid bodies (a rotated dynamic
 * box, a static body), with compliance and without (hard rows, Schur complement); lambda must solve
 * the row-space system (J M^-1 J^T + diag(alpha/h^2)) lambda = b, dense Gaussian elimination, to
 * 1e-9 relative. Also: the form is refused for too many hard rows; pins changed while a sparse
 * cloth runs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include <suitesparse/cholmod.h>

#include "soft/soft_sparse_primal.h"
#include "dynamics/world.h"
#include "soft_test_util.h"

#define NP 14
#define MAXM 60

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct Sys {
	ibWorldId wid;
	ibWorld* w;
	ibSoftStore* ss;
	int32_t bodyKey[2]; /* dynamic, static */
	int m, parts;
	int32_t incStart[MAXM + 1], incPart[MAXM * 4], incRow[MAXM * 4];
	int32_t partStart[NP + 64 + 1], partInc[MAXM * 4];
	double Jstore[MAXM * 4 * 6];
	double* incJ[MAXM * 4];
	double comp[MAXM], dc[MAXM];
} Sys;

static void make_world(Sys* s)
{
	ibWorldDef wd = ibDefaultWorldDef();
	s->wid = ibCreateWorld(&wd);
	ibVec3 v[NP];
	double mass[NP];
	for (int i = 0; i < NP; ++i) {
		v[i] = ibV3(urand(), urand(), urand());
		mass[i] = 0.05 + urand();
	}
	int pin = 3;
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	d.vertices = v;
	d.vertexCount = NP;
	d.vertexMasses = mass;
	d.pinned = &pin;
	d.pinnedCount = 1;
	assert_true(ibSoftBody_IsValid(ibCreateSoftBody(s->wid, &d)));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.rotation = ibQuatNormalize((ibQuat){0.8, 0.3, -0.4, 0.2});
	ibBodyId dyn = ibCreateBody(s->wid, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 2.0;
	ibBox box = {{0.3, 0.1, 0.05}};
	assert_true(ibShape_IsValid(ibCreateBoxShape(dyn, &sd, &box)));
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId stat = ibCreateBody(s->wid, &gd);
	s->w = ib_world_get(s->wid);
	s->ss = ib_soft_store(s->w, false);
	assert_non_null(s->ss);
	assert_int_equal(s->ss->particleCount, NP);
	s->parts = NP + s->w->bodyHigh;
	s->bodyKey[0] = NP + dyn.index1 - 1;
	s->bodyKey[1] = NP + stat.index1 - 1;
}

/* m random rows of 1..4 distinct participants; hard rows (compliance 0) every `hardEvery`-th */
static void make_rows(Sys* s, int m, int hardEvery, double h)
{
	s->m = m;
	int z = 0, jz = 0;
	for (int j = 0; j < m; ++j) {
		s->incStart[j] = z;
		int cnt = 1 + (int)(urand() * 4.0), keys[4], n = 0;
		while (n < cnt) {
			double u = urand();
			int32_t key = u < 0.15 ? s->bodyKey[0] : u < 0.2 ? s->bodyKey[1] : (int32_t)(urand() * NP);
			bool dup = false;
			for (int k = 0; k < n; ++k) dup |= keys[k] == key;
			if (!dup) keys[n++] = key;
		}
		for (int k = 0; k < n; ++k) {
			int width = keys[k] < NP ? 3 : 6;
			s->incPart[z] = keys[k];
			s->incRow[z] = j;
			s->incJ[z] = s->Jstore + jz;
			for (int i = 0; i < width; ++i) s->Jstore[jz++] = 2.0 * urand() - 1.0;
			++z;
		}
		s->comp[j] = hardEvery > 0 && j % hardEvery == 0 ? 0.0 : pow(10.0, -3.0 + 3.0 * urand()) * 1e-2;
		s->dc[j] = s->comp[j] / (h * h);
	}
	s->incStart[m] = z;
	for (int p = 0; p <= s->parts; ++p) s->partStart[p] = 0;
	for (int q = 0; q < z; ++q) s->partStart[s->incPart[q] + 1]++;
	for (int p = 0; p < s->parts; ++p) s->partStart[p + 1] += s->partStart[p];
	int32_t cur[NP + 64];
	for (int p = 0; p < s->parts; ++p) cur[p] = s->partStart[p];
	for (int q = 0; q < z; ++q) s->partInc[cur[s->incPart[q]]++] = q;
}

static ibSpGraph graph(const Sys* s)
{
	return (ibSpGraph){s->m,           s->parts,     NP,           s->incStart, s->incPart,
	                   s->incRow,      s->partStart, s->partInc,   s->incJ,     s->comp};
}

/* M^-1 J_q^T x, as an impulse response dotted with J_r */
static double response(const Sys* s, int32_t key, const double* a, const double* b)
{
	if (key < NP) return s->ss->particles[key].invMass * (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
	const ibBody* body = &s->w->bodies[key - NP];
	if (!ib_is_dynamic(body)) return 0.0;
	double r = body->invMass * (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
	for (int i = 0; i < 3; ++i)
		for (int l = 0; l < 3; ++l) r += a[3 + i] * body->invInertiaW.m[i][l] * b[3 + l];
	return r;
}

static void reference(const Sys* s, const double* b, double* lam)
{
	int m = s->m;
	static double A[MAXM][MAXM + 1];
	for (int i = 0; i < m; ++i) {
		for (int j = 0; j < m; ++j) {
			double v = i == j ? s->dc[i] : 0.0;
			for (int qi = s->incStart[i]; qi < s->incStart[i + 1]; ++qi)
				for (int qj = s->incStart[j]; qj < s->incStart[j + 1]; ++qj)
					if (s->incPart[qi] == s->incPart[qj]) v += response(s, s->incPart[qi], s->incJ[qi], s->incJ[qj]);
			A[i][j] = v;
		}
		A[i][m] = b[i];
	}
	for (int c = 0; c < m; ++c) {
		int piv = c;
		for (int r = c + 1; r < m; ++r)
			if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
		for (int k = 0; k <= m; ++k) {
			double t = A[c][k];
			A[c][k] = A[piv][k];
			A[piv][k] = t;
		}
		assert_true(fabs(A[c][c]) > 1e-12);
		for (int r = c + 1; r < m; ++r) {
			double f = A[r][c] / A[c][c];
			for (int k = c; k <= m; ++k) A[r][k] -= f * A[c][k];
		}
	}
	for (int r = m - 1; r >= 0; --r) {
		double t = A[r][m];
		for (int k = r + 1; k < m; ++k) t -= A[r][k] * lam[k];
		lam[r] = t / A[r][r];
	}
}

static void check(int m, int hardEvery, int trials)
{
	for (int t = 0; t < trials; ++t) {
		Sys s;
		memset(&s, 0, sizeof s);
		make_world(&s);
		make_rows(&s, m, hardEvery, 0.01);
		/* every hard row needs a free participant, else the reference is singular: redraw */
		bool ok = true;
		for (int j = 0; j < m; ++j) {
			if (s.comp[j] > 0.0) continue;
			bool free = false;
			for (int q = s.incStart[j]; q < s.incStart[j + 1]; ++q) {
				int32_t k = s.incPart[q];
				free |= k < NP ? s.ss->particles[k].invMass > 0.0 : k == s.bodyKey[0];
			}
			ok &= free;
		}
		if (!ok) {
			ibDestroyWorld(s.wid);
			--t;
			continue;
		}
		cholmod_common cc;
		assert_true(cholmod_start(&cc));
		cc.print = 0;
		ibSpGraph g = graph(&s);
		double flops = 0.0;
		ibSpPrimal* P = ib_sp_primal_build(s.w, s.ss, &cc, &g, &flops);
		assert_non_null(P);
		assert_true(flops > 0.0 && isfinite(flops));
		assert_true(ib_sp_primal_factor(s.w, s.ss, &cc, P, &g, s.dc));
		double b[MAXM], lam[MAXM], ref[MAXM];
		for (int j = 0; j < m; ++j) b[j] = 2.0 * urand() - 1.0;
		assert_true(ib_sp_primal_solve(P, &cc, &g, s.dc, b, lam));
		reference(&s, b, ref);
		double err = 0.0, nrm = 0.0;
		for (int j = 0; j < m; ++j) {
			err = fmax(err, fabs(lam[j] - ref[j]));
			nrm = fmax(nrm, fabs(ref[j]));
		}
		if (!(err <= 1e-9 * nrm)) fail_msg("trial %d: |lambda - reference| = %.3g (|reference| %.3g)", t, err, nrm);
		ib_sp_primal_free(s.w, &cc, &P);
		cholmod_finish(&cc);
		ibDestroyWorld(s.wid);
	}
}

static void test_soft_rows_only(void** state)
{
	(void)state;
	check(30, 0, 20);
}

static void test_with_hard_rows(void** state)
{
	(void)state;
	check(30, 6, 20); /* 5 hard rows of 30 */
	check(12, 3, 20);
}

static void test_too_many_hard_rows(void** state)
{
	(void)state;
	Sys s;
	memset(&s, 0, sizeof s);
	make_world(&s);
	make_rows(&s, MAXM, 1, 0.01); /* all 60 rows hard: more than IB_SP_MAX_HARD */
	cholmod_common cc;
	assert_true(cholmod_start(&cc));
	ibSpGraph g = graph(&s);
	double flops = 0.0;
	ibSpPrimal* P = ib_sp_primal_build(s.w, s.ss, &cc, &g, &flops);
	assert_true(IB_SP_MAX_HARD < MAXM ? P == NULL : P != NULL);
	ib_sp_primal_free(s.w, &cc, &P);
	cholmod_finish(&cc);
	ibDestroyWorld(s.wid);
}

/* A pin set and one released while a sparse cloth (24 x 24: 625 particles, AUTO) runs: the
 * particle-space pattern follows (a newly pinned vertex does not move at all, a released corner
 * falls), every step converged. */
static void test_pin_change(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	SoftGrid g = soft_grid(24, 1.0, ibV3(-0.5, 0, 0), ibV3(1, 0, 0), ibV3(0, 1, 0));
	int pins[2] = {0, 24};
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	d.vertices = g.v;
	d.vertexCount = g.nv;
	d.triangles = g.t;
	d.triangleCount = g.nt;
	d.pinned = pins;
	d.pinnedCount = 2;
	d.stretchCompliance = 1e-3;
	d.bending = IB_SOFT_BENDING_DIHEDRAL;
	d.bendingCompliance = 1.0;
	d.positionTolerance = 1e-6;
	ibSoftBodyId c = ibCreateSoftBody(w, &d);
	assert_true(ibSoftBody_IsValid(c));
	int mid = 12 * 25 + 12;
	for (int k = 0; k < 20; ++k) {
		if (k == 5) {
			assert_int_equal(ibSoftBody_SetPinned(c, mid, true), IB_OK);
			assert_int_equal(ibSoftBody_SetPinned(c, 24, false), IB_OK);
		}
		ibVec3 before = ibSoftBody_GetPosition(c, mid);
		assert_int_equal(ibWorld_Step(w, 0.005), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		assert_true(st.converged && st.stepSubdivisions == 1);
		assert_true(ibWorld_GetSoftStepStats(w).sparseFactorizations > 0);
		ibVec3 after = ibSoftBody_GetPosition(c, mid);
		if (k >= 5) assert_true(after.x == before.x && after.y == before.y && after.z == before.z);
	}
	assert_true(ibSoftBody_GetPosition(c, 24).z < -0.005);       /* the released corner fell */
	assert_true(ibSoftBody_GetPosition(c, 0).z == 0.0);          /* the kept pin held */
	assert_true(ibSoftBody_GetPosition(c, mid + 1).z < 0.0);     /* the cloth still moves */
	soft_grid_free(&g);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_soft_rows_only), cmocka_unit_test(test_with_hard_rows),
	                                   cmocka_unit_test(test_too_many_hard_rows), cmocka_unit_test(test_pin_change)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
