/* Jacobians of the soft rows against central finite differences: the rigid–soft ball joint on a
 * triangle (the Russian article with the world-frame lever arm of digest §24.4) on random
 * triangles with delta != 0 and rotated rigid bodies, the rigid–vertex ball joint, the dihedral
 * bending row and the volume rows; and a check that the article's uncorrected local lever arm
 * fails the same comparison. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"
#include "soft_test_util.h"

#define FD_EPS 1e-6

typedef void EvalFn(const void* ctx, const ibPartState* s, double* C, double* J);

/* Max |J - J_fd| over all columns; bodies perturbed in COM position and by a world rotation
 * exp(eps [e_i]x) R (world angular velocity). */
static double fd_check(EvalFn* f, const void* ctx, ibPartState* s, int count, const bool* isBody, int rows,
                       const double* J)
{
	int cols = 0;
	for (int k = 0; k < count; ++k) cols += isBody[k] ? 6 : 3;
	double worst = 0.0, Cp[6], Cm[6];
	int col = 0;
	for (int k = 0; k < count; ++k) {
		int width = isBody[k] ? 6 : 3;
		for (int i = 0; i < width; ++i) {
			ibPartState save = s[k];
			for (int sign = -1; sign <= 1; sign += 2) {
				if (i < 3) {
					double* x = i == 0 ? &s[k].x.x : i == 1 ? &s[k].x.y : &s[k].x.z;
					*x += sign * FD_EPS;
				} else {
					ibVec3 axis = ibV3(i == 3, i == 4, i == 5);
					s[k].q = ibQuatNormalize(ibQuatMul(ibQuatFromAxisAngle(axis, sign * FD_EPS), save.q));
					s[k].R = ibMat3_FromQuat(s[k].q);
				}
				f(ctx, s, sign > 0 ? Cp : Cm, NULL);
				s[k] = save;
			}
			for (int r = 0; r < rows; ++r) {
				double fd = (Cp[r] - Cm[r]) / (2.0 * FD_EPS);
				worst = fmax(worst, fabs(fd - J[r * cols + col + i]));
			}
		}
		col += width;
	}
	return worst;
}

typedef struct TriCtx {
	double bary[4];
	ibVec3 local;
} TriCtx;

static void tri_eval(const void* ctx, const ibPartState* s, double* C, double* J)
{
	const TriCtx* t = ctx;
	ib_soft_ball_triangle(t->bary, t->local, s, C, J);
}

static void random_rigid(unsigned long long* rng, ibPartState* s)
{
	s->x = soft_rand_vec(rng);
	ibVec3 axis = ibNormalize(soft_rand_vec(rng));
	s->q = ibQuatFromAxisAngle(axis, 0.5 + 2.0 * fabs(soft_rand(rng))); /* well away from identity */
	s->R = ibMat3_FromQuat(s->q);
}

static void test_triangle_joint_jacobian(void** state)
{
	(void)state;
	unsigned long long rng = 0x9e3779b97f4a7c15ull;
	const bool isBody[4] = {false, false, false, true};
	double worst = 0.0, worstLocal = 1e300;
	for (int trial = 0; trial < 200; ++trial) {
		ibPartState s[4];
		for (int k = 0; k < 3; ++k) s[k].x = soft_rand_vec(&rng);
		random_rigid(&rng, &s[3]);
		TriCtx t;
		t.bary[0] = 0.2 + 0.3 * fabs(soft_rand(&rng));
		t.bary[1] = 0.1 + 0.3 * fabs(soft_rand(&rng));
		t.bary[2] = 1.0 - t.bary[0] - t.bary[1];
		t.bary[3] = 0.3 + 0.5 * soft_rand(&rng); /* delta != 0 */
		if (fabs(t.bary[3]) < 0.05) t.bary[3] = 0.4;
		t.local = soft_rand_vec(&rng);
		ibVec3 n = ibCross(ibSub(s[1].x, s[0].x), ibSub(s[2].x, s[0].x));
		if (ibLength(n) < 0.05) continue; /* avoid near-degenerate triangles (1/|n|^3 terms) */
		double C[3], J[45];
		tri_eval(&t, s, C, J);
		/* sanity identity of §24.3: J_A + J_B + J_C = (alpha + beta + gamma) I = I */
		for (int r = 0; r < 3; ++r)
			for (int c = 0; c < 3; ++c)
				assert_true(fabs(J[r * 15 + c] + J[r * 15 + 3 + c] + J[r * 15 + 6 + c] - (r == c)) < 1e-12);
		worst = fmax(worst, fd_check(tri_eval, &t, s, 4, isBody, 3, J));
		/* the article's block [p1_local]x in place of [R p1_local]x */
		ibMat3 L = ibMat3_Skew(t.local);
		for (int r = 0; r < 3; ++r)
			for (int c = 0; c < 3; ++c) J[r * 15 + 12 + c] = L.m[r][c];
		worstLocal = fmin(worstLocal, fd_check(tri_eval, &t, s, 4, isBody, 3, J));
	}
	print_message("triangle joint: max |J - J_fd| = %.3g; with the local lever arm min = %.3g\n", worst, worstLocal);
	assert_true(worst < 1e-7);
	assert_true(worstLocal > 1e-3); /* the comparison detects the uncorrected block in every trial */
}

static void vert_eval(const void* ctx, const ibPartState* s, double* C, double* J)
{
	ib_soft_ball_vertex(*(const ibVec3*)ctx, s, C, J);
}

static void test_vertex_joint_jacobian(void** state)
{
	(void)state;
	unsigned long long rng = 12345;
	const bool isBody[2] = {false, true};
	for (int trial = 0; trial < 50; ++trial) {
		ibPartState s[2];
		s[0].x = soft_rand_vec(&rng);
		random_rigid(&rng, &s[1]);
		ibVec3 local = soft_rand_vec(&rng);
		double C[3], J[27];
		vert_eval(&local, s, C, J);
		assert_true(fd_check(vert_eval, &local, s, 2, isBody, 3, J) < 1e-7);
	}
}

static void row_eval(const void* ctx, const ibPartState* s, double* C, double* J)
{
	ib_soft_eval_row(NULL, ctx, s, C, J);
}

static void test_internal_rows(void** state)
{
	(void)state;
	unsigned long long rng = 777;
	const bool isBody[4] = {false, false, false, false};
	double worst = 0.0;
	for (int trial = 0; trial < 100; ++trial) {
		ibPartState s[4];
		for (int k = 0; k < 4; ++k) s[k].x = soft_rand_vec(&rng);
		ibSoftRow r;
		memset(&r, 0, sizeof r);
		double C[1], J[12];
		for (int kind = IB_ROW_DISTANCE; kind <= IB_ROW_TET_VOLUME; ++kind) {
			r.kind = kind;
			r.count = kind == IB_ROW_DISTANCE ? 2 : 4;
			r.scale = 0.7;
			r.rest = 0.1;
			row_eval(&r, s, C, J);
			worst = fmax(worst, fd_check(row_eval, &r, s, r.count, isBody, 1, J));
		}
	}
	print_message("internal rows: max |J - J_fd| = %.3g\n", worst);
	assert_true(worst < 1e-7);
}

/* Dihedral angle: flat -> 0, folded by 90 degrees -> +-pi/2, sign by the fold direction. */
static void test_dihedral_values(void** state)
{
	(void)state;
	ibVec3 x[4] = {ibV3(0.5, -1, 0), ibV3(0.5, 1, 0), ibV3(0, 0, 0), ibV3(1, 0, 0)};
	assert_true(fabs(ib_soft_dihedral(x, NULL)) < 1e-15);
	x[1] = ibV3(0.5, 0, 1);
	double up = ib_soft_dihedral(x, NULL);
	x[1] = ibV3(0.5, 0, -1);
	double down = ib_soft_dihedral(x, NULL);
	assert_true(fabs(fabs(up) - IB_PI / 2) < 1e-12);
	assert_true(fabs(up + down) < 1e-12);
}

/* The public evaluation of a triangle joint matches the internal one (user frame -> principal). */
static void test_public_evaluate(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	SoftGrid g = soft_grid(2, 1.0, ibV3(0, 0, 0), ibV3(1, 0, 0), ibV3(0, 1, 0));
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = g.v;
	sd.vertexCount = g.nv;
	sd.triangles = g.t;
	sd.triangleCount = g.nt;
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.3, 0.2, 0.5);
	bd.rotation = ibQuatFromAxisAngle(ibNormalize(ibV3(1, 2, 3)), 1.0);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	ibBox box = {{0.1, 0.2, 0.3}};
	shd.localPosition = ibV3(0.05, 0, 0); /* COM away from the body origin */
	ibCreateBoxShape(b, &shd, &box);
	ibSoftJointDef jd = ibDefaultSoftJointDef();
	jd.body = b;
	jd.soft = sb;
	jd.triangle = 1;
	jd.worldPoint = ibV3(0.2, 0.3, 0.25);
	ibConstraintId c = ibCreateSoftJoint(w, &jd);
	assert_true(ibConstraint_IsValid(c));
	double al, be, ga, de;
	assert_int_equal(ibConstraint_GetTriangleCoordinates(c, &al, &be, &ga, &de), IB_OK);
	assert_true(fabs(al + be + ga - 1.0) < 1e-14);
	assert_true(fabs(de - 0.25) < 1e-14);
	assert_int_equal(ibConstraint_GetColumns(c), 15);
	double C[3], J[45];
	assert_int_equal(ibConstraint_Evaluate(c, C, J), IB_OK);
	for (int r = 0; r < 3; ++r) assert_true(fabs(C[r]) < 1e-14); /* satisfied at creation */
	/* angular block = [r]x with the world lever arm r = point - COM */
	ibVec3 r = ibSub(jd.worldPoint, ibBody_GetWorldCenterOfMass(b));
	ibMat3 S = ibMat3_Skew(r);
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) assert_true(fabs(J[i * 15 + 12 + k] - S.m[i][k]) < 1e-13);
	soft_grid_free(&g);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_triangle_joint_jacobian), cmocka_unit_test(test_vertex_joint_jacobian),
	    cmocka_unit_test(test_internal_rows), cmocka_unit_test(test_dihedral_values),
	    cmocka_unit_test(test_public_evaluate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
