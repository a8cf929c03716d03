/* Tests for the ibdyn math module: quaternion/matrix conversions (App. A), inverses,
 * orthonormalisation and Euler angles (App. C), the Jacobi eigen-solver and a few inline helpers.
 * All random input comes from a fixed-seed xorshift64* generator, so every run is identical. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>

#include "ibdyn/math.h"
#include "test_util.h"

#define PI 3.14159265358979323846

/* Fails with both values printed if !(a <= b). */
#define assert_le(a, b)                                                                          \
	do {                                                                                         \
		double a_ = (a), b_ = (b);                                                               \
		if (!(a_ <= b_)) {                                                                       \
			print_error("%s = %.17g > %s = %.17g\n", #a, a_, #b, b_);                            \
			fail();                                                                              \
		}                                                                                        \
	} while (0)


/* Unit quaternion with the given w and a random vector part. */
static ibQuat quat_with_w(double w)
{
	ibVec3 u = ibScale(sqrt(1.0 - w * w), rand_unit_vec());
	return (ibQuat){w, u.x, u.y, u.z};
}

/* The i-th quaternion of the round-trip set: random ones mixed with hard cases. */
static ibQuat test_quat(int i)
{
	double sgn = (i & 8) ? -1.0 : 1.0;
	switch (i % 8) {
	case 0: return quat_with_w(sgn * 1e-7 * urand(0.5, 2.0)); /* w ~ 1e-7: "tr > 0" fails here */
	case 1: return quat_with_w(sgn * urand(0.0, 1e-3));       /* near 180 degrees */
	case 2: return quat_with_w(0.0);                          /* exactly 180 degrees */
	case 3: {                                                 /* 180 degrees about a near-axis */
		ibVec3 u = ibNormalize(ibAdd(ibV3(i % 3 == 0, i % 3 == 1, i % 3 == 2), rand_vec(-1e-6, 1e-6)));
		return ibQuatNormalize((ibQuat){sgn * urand(0, 1e-7), u.x, u.y, u.z});
	}
	case 4: return quat_with_w(sgn * sqrt(1.0 - urand(0.0, 1e-12))); /* near identity */
	default: return rand_unit_quat(); /* uniform, either sign of w */
	}
}

static double quat_diff_up_to_sign(ibQuat a, ibQuat b)
{
	double dp = fmax(fmax(fabs(a.w - b.w), fabs(a.x - b.x)), fmax(fabs(a.y - b.y), fabs(a.z - b.z)));
	double dm = fmax(fmax(fabs(a.w + b.w), fabs(a.x + b.x)), fmax(fabs(a.y + b.y), fabs(a.z + b.z)));
	return fmin(dp, dm);
}

static double mat_diff(ibMat3 A, ibMat3 B)
{
	double d = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) d = fmax(d, fabs(A.m[i][j] - B.m[i][j]));
	return d;
}

static double mat_maxabs(ibMat3 A) { return mat_diff(A, ibMat3_Zero()); }

static double vec_diff(ibVec3 a, ibVec3 b) { return fmax(fmax(fabs(a.x - b.x), fabs(a.y - b.y)), fabs(a.z - b.z)); }

/* max |R^T R - I| */
static double ortho_error(ibMat3 R) { return mat_diff(ibMat3_Mul(ibMat3_Transpose(R), R), ibMat3_Identity()); }

static ibMat3 rand_rotation(void) { return ibMat3_FromQuat(rand_unit_quat()); }

/* ---- quaternions and rotation matrices ------------------------------------------------------ */
static void test_quat_matrix_roundtrip(void** state)
{
	(void)state;
	rng_seed(1);
	double maxRt = 0, maxRot = 0, maxOrtho = 0, maxDet = 0;
	for (int i = 0; i < 10000; ++i) {
		ibQuat q = test_quat(i);
		ibMat3 R = ibMat3_FromQuat(q);
		ibQuat p = ibQuat_FromMat3(R);
		assert_true(p.w >= 0.0);
		assert_le(fabs(sqrt(ibQuatNormSq(p)) - 1.0), 4 * DBL_EPSILON);
		maxRt = fmax(maxRt, quat_diff_up_to_sign(p, q));
		ibVec3 v = rand_vec(-2, 2);
		maxRot = fmax(maxRot, vec_diff(ibMat3_MulV(R, v), ibRotate(q, v)));
		maxRot = fmax(maxRot, vec_diff(ibMat3_MulTV(R, v), ibInvRotate(q, v)));
		maxOrtho = fmax(maxOrtho, ortho_error(R));
		maxDet = fmax(maxDet, fabs(ibMat3_Det(R) - 1.0));
	}
	assert_le(maxRt, 1e-13);
	assert_le(maxRot, 1e-14);
	assert_le(maxOrtho, 1e-14);
	assert_le(maxDet, 1e-14);
	/* exact cases: identity, and 180 degrees about each axis */
	assert_le(quat_diff_up_to_sign(ibQuat_FromMat3(ibMat3_Identity()), IB_QUAT_IDENTITY), 0.0);
	assert_le(quat_diff_up_to_sign(ibQuat_FromMat3(ibMat3_Diag(ibV3(1, -1, -1))), ibQ(0, 1, 0, 0)), 0.0);
	assert_le(quat_diff_up_to_sign(ibQuat_FromMat3(ibMat3_Diag(ibV3(-1, 1, -1))), ibQ(0, 0, 1, 0)), 0.0);
	assert_le(quat_diff_up_to_sign(ibQuat_FromMat3(ibMat3_Diag(ibV3(-1, -1, 1))), ibQ(0, 0, 0, 1)), 0.0);
	/* a quarter turn about z maps x to y */
	ibMat3 Rz = ibMat3_FromQuat(ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.5 * PI));
	assert_le(vec_diff(ibMat3_MulV(Rz, ibV3(1, 0, 0)), ibV3(0, 1, 0)), 1e-15);
}

static void test_quat_composition(void** state)
{
	(void)state;
	rng_seed(2);
	for (int i = 0; i < 1000; ++i) {
		ibQuat a = rand_unit_quat(), b = rand_unit_quat();
		ibMat3 Rab = ibMat3_FromQuat(ibQuatMul(a, b));
		assert_le(mat_diff(Rab, ibMat3_Mul(ibMat3_FromQuat(a), ibMat3_FromQuat(b))), 1e-14);
		ibVec3 v = rand_vec(-1, 1);
		assert_le(vec_diff(ibRotate(ibQuatMul(a, b), v), ibRotate(a, ibRotate(b, v))), 1e-14);
		assert_le(vec_diff(ibInvRotate(a, ibRotate(a, v)), v), 4e-15);
	}
}

static void test_axis_angle(void** state)
{
	(void)state;
	rng_seed(3);
	ibVec3 axis;
	double angle;
	for (int i = 0; i < 2000; ++i) {
		ibVec3 n = rand_unit_vec();
		double t = (i % 4 == 0) ? urand(0, 1e-6) : (i % 4 == 1 ? PI - urand(0, 1e-6) : urand(0, PI));
		ibQuat q = ibQuatFromAxisAngle(n, t);
		ibQuat_ToAxisAngle(q, &axis, &angle);
		assert_le(fabs(angle - t), 1e-14);
		if (t > 1e-7) assert_le(vec_diff(axis, n), 1e-13);
		assert_le(fabs(ibLength(axis) - 1.0), 1e-15);
		/* -q is the same rotation */
		ibQuat_ToAxisAngle((ibQuat){-q.w, -q.x, -q.y, -q.z}, &axis, &angle);
		assert_le(fabs(angle - t), 1e-14);
		/* an angle in (pi, 2 pi) is reported as the shorter rotation about -axis */
		double t2 = urand(PI + 1e-3, 2 * PI - 1e-3);
		ibQuat_ToAxisAngle(ibQuatFromAxisAngle(n, t2), &axis, &angle);
		assert_le(fabs(angle - (2 * PI - t2)), 1e-13);
		assert_le(vec_diff(axis, ibNeg(n)), 1e-13);
	}
	ibQuat_ToAxisAngle(IB_QUAT_IDENTITY, &axis, &angle);
	assert_true(angle == 0.0 && axis.x == 1.0 && axis.y == 0.0 && axis.z == 0.0);
	ibQuat_ToAxisAngle(ibQ(-1, 0, 0, 0), &axis, &angle);
	assert_true(angle == 0.0 && axis.x == 1.0);
	ibQuat_ToAxisAngle(ibQ(1, 3e-310, 0, -4e-310), &axis, &angle); /* subnormal vector part */
	assert_le(vec_diff(axis, ibV3(0.6, 0, -0.8)), 1e-13);
	assert_le(fabs(angle - 1e-309), 1e-322);
	ibQuat_ToAxisAngle(ibQ(0, 0, 1, 0), &axis, &angle);
	assert_le(fabs(angle - PI), 1e-15);
	assert_le(vec_diff(axis, ibV3(0, 1, 0)), 0.0);
}

static void test_rotation_vector(void** state)
{
	(void)state;
	rng_seed(4);
	for (int i = 0; i < 4000; ++i) {
		double t = (i % 4 == 0) ? pow(10.0, urand(-300, -3)) : urand(0, PI - 1e-6);
		ibVec3 r = ibScale(t, rand_unit_vec());
		ibQuat q = ibQuat_FromRotationVector(r);
		assert_le(fabs(sqrt(ibQuatNormSq(q)) - 1.0), 4 * DBL_EPSILON);
		assert_le(quat_diff_up_to_sign(q, ibQuatFromAxisAngle(ibNormalize(r), t)), 2 * DBL_EPSILON);
		ibVec3 back = ibQuat_ToRotationVector(q);
		assert_le(vec_diff(back, r), 1e-14 * t);
		/* agrees with ToAxisAngle */
		ibVec3 axis;
		double angle;
		ibQuat_ToAxisAngle(q, &axis, &angle);
		assert_le(vec_diff(ibScale(angle, axis), back), 1e-14 * t);
	}
	/* small angles: relative accuracy on both sides of the series threshold */
	double ts[] = {1e-300, 1e-20, 1e-8, 0.99e-4, 1.01e-4};
	for (size_t k = 0; k < sizeof ts / sizeof ts[0]; ++k) {
		ibVec3 r = ibV3(0.6 * ts[k], 0.0, -0.8 * ts[k]);
		ibQuat q = ibQuat_FromRotationVector(r);
		assert_le(fabs(q.x / r.x - sin(0.5 * ts[k]) / ts[k]), 2e-16);
		ibVec3 back = ibQuat_ToRotationVector(q);
		assert_le(vec_diff(back, r), 4 * DBL_EPSILON * ts[k]);
	}
	ibQuat q0 = ibQuat_FromRotationVector(IB_VEC3_ZERO);
	assert_true(q0.w == 1.0 && q0.x == 0.0 && q0.y == 0.0 && q0.z == 0.0);
	ibVec3 r0 = ibQuat_ToRotationVector(IB_QUAT_IDENTITY);
	assert_true(r0.x == 0.0 && r0.y == 0.0 && r0.z == 0.0);
	/* the shortest rotation: -q gives the same vector, and the length is at most pi */
	ibQuat q = ibQuatFromAxisAngle(ibV3(0, 0, 1), 1.5 * PI);
	assert_le(vec_diff(ibQuat_ToRotationVector(q), ibV3(0, 0, -0.5 * PI)), 1e-15);
	assert_le(vec_diff(ibQuat_ToRotationVector(ibQ(-q.w, -q.x, -q.y, -q.z)), ibV3(0, 0, -0.5 * PI)), 1e-15);
}

static void test_quat_normalize(void** state)
{
	(void)state;
	rng_seed(5);
	for (int i = 0; i < 1000; ++i) {
		ibQuat q = rand_unit_quat();
		double s = pow(10.0, urand(-100, 100));
		ibQuat n = ibQuatNormalize((ibQuat){s * q.w, s * q.x, s * q.y, s * q.z});
		assert_le(fabs(sqrt(ibQuatNormSq(n)) - 1.0), 4 * DBL_EPSILON);
		assert_le(quat_diff_up_to_sign(n, q), 4 * DBL_EPSILON);
	}
	/* a long product of rotations stays a unit quaternion with per-step normalisation */
	ibQuat acc = IB_QUAT_IDENTITY;
	for (int i = 0; i < 100000; ++i) acc = ibQuatNormalize(ibQuatMul(acc, rand_unit_quat()));
	assert_le(fabs(sqrt(ibQuatNormSq(acc)) - 1.0), 4 * DBL_EPSILON);
	ibQuat z = ibQuatNormalize(ibQ(0, 0, 0, 0));
	assert_true(z.w == 1.0 && z.x == 0.0 && z.y == 0.0 && z.z == 0.0);
}

/* ---- matrices --------------------------------------------------------------------------------- */
static void test_det(void** state)
{
	(void)state;
	rng_seed(6);
	assert_true(ibMat3_Det(ibMat3_Diag(ibV3(2, 3, -4))) == -24.0);
	assert_true(ibMat3_Det((ibMat3){{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}}) == 0.0);
	assert_true(ibMat3_Det((ibMat3){{{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}}) == -1.0);
	for (int i = 0; i < 1000; ++i) {
		ibMat3 A = ibMat3_Add(rand_rotation(), ibMat3_Diag(rand_vec(-1, 1)));
		ibMat3 B = ibMat3_Add(rand_rotation(), ibMat3_Diag(rand_vec(-1, 1)));
		double dA = ibMat3_Det(A), dB = ibMat3_Det(B);
		assert_le(fabs(ibMat3_Det(ibMat3_Mul(A, B)) - dA * dB), 1e-13);
		assert_le(fabs(ibMat3_Det(ibMat3_Transpose(A)) - dA), 1e-14);
	}
}

/* U diag(s) V^T with singular values s in [0.5, 2] times 10^k: condition number <= 4. */
static ibMat3 rand_well_conditioned(double scale)
{
	ibMat3 S = ibMat3_Diag(ibScale(scale, rand_vec(0.5, 2.0)));
	return ibMat3_Mul(ibMat3_Mul(rand_rotation(), S), ibMat3_Transpose(rand_rotation()));
}

static void test_inverse(void** state)
{
	(void)state;
	rng_seed(7);
	ibMat3 inv;
	for (int i = 0; i < 5000; ++i) {
		double scale = (i % 2) ? 1.0 : pow(10.0, urand(-100, 100));
		ibMat3 A = rand_well_conditioned(scale);
		assert_true(ibMat3_Inverse(A, &inv));
		assert_le(mat_diff(ibMat3_Mul(A, inv), ibMat3_Identity()), 1e-12);
		assert_le(mat_diff(ibMat3_Mul(inv, A), ibMat3_Identity()), 1e-12);
		/* symmetric (possibly indefinite), garbage in the lower triangle must be ignored */
		ibVec3 d = ibScale(scale, rand_vec(0.5, 2.0));
		if (i % 3 == 0) d.y = -d.y;
		ibMat3 S = ibMat3_RotateDiag(rand_rotation(), d), G = S;
		G.m[1][0] = G.m[2][0] = G.m[2][1] = 1e300;
		assert_true(ibMat3_InverseSym(G, &inv));
		for (int r = 0; r < 3; ++r)
			for (int c = 0; c < 3; ++c) assert_true(inv.m[r][c] == inv.m[c][r]);
		assert_le(mat_diff(ibMat3_Mul(S, inv), ibMat3_Identity()), 1e-12);
		ibMat3 inv2;
		assert_true(ibMat3_Inverse(S, &inv2));
		assert_le(mat_diff(inv, inv2), 1e-13 * mat_maxabs(inv));
	}
	/* the thesis' (doubly negated) App. C.4 formula gives the same result */
	ibMat3 A = {{{2, -1, 0.5}, {0.3, 4, 1}, {-1, 0.25, 3}}};
	double a = 2, b = -1, c = 0.5, d = 0.3, e = 4, f = 1, g = -1, h = 0.25, k = 3;
	double den = a * (f * h - e * k) + b * (d * k - f * g) + c * (e * g - d * h);
	ibMat3 T = {{{f * h - e * k, b * k - c * h, c * e - b * f}, {d * k - f * g, c * g - a * k, a * f - c * d},
	             {e * g - d * h, a * h - b * g, b * d - a * e}}};
	assert_true(ibMat3_Inverse(A, &inv));
	assert_le(mat_diff(inv, ibMat3_Scale(1.0 / den, T)), 1e-15);
	assert_le(fabs(ibMat3_Det(A) + den), 1e-14);
}

static void assert_singular(ibMat3 A)
{
	ibMat3 out = ibMat3_Identity();
	assert_false(ibMat3_Inverse(A, &out));
	assert_true(mat_maxabs(out) == 0.0);
	ibMat3 S = A; /* symmetric part from the upper triangle */
	S.m[1][0] = S.m[0][1], S.m[2][0] = S.m[0][2], S.m[2][1] = S.m[1][2];
	if (mat_diff(S, A) == 0.0) {
		out = ibMat3_Identity();
		assert_false(ibMat3_InverseSym(A, &out));
		assert_true(mat_maxabs(out) == 0.0);
	}
}

static void test_inverse_singular(void** state)
{
	(void)state;
	rng_seed(8);
	assert_singular(ibMat3_Zero());
	assert_singular((ibMat3){{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}});
	assert_singular((ibMat3){{{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}, {0.7, 0.8, 0.9}}});
	assert_singular(ibMat3_Diag(ibV3(1, 1, 0)));
	assert_singular((ibMat3){{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}}); /* symmetric rank 1 */
	ibMat3 nan = ibMat3_Identity();
	nan.m[1][2] = NAN;
	assert_singular(nan);
	assert_true(ibMat3_Inverse(ibMat3_Identity(), NULL)); /* NULL out is allowed */
	assert_false(ibMat3_InverseSym(ibMat3_Zero(), NULL));
	for (int i = 0; i < 10000; ++i) {
		/* rank 2: third row (and for the symmetric case third eigenvalue) zero, any scale */
		double scale = pow(10.0, urand(-100, 100));
		ibVec3 r1 = rand_vec(-scale, scale), r2 = rand_vec(-scale, scale);
		ibVec3 r3 = ibAdd(ibScale(urand(-1, 1), r1), ibScale(urand(-1, 1), r2));
		assert_singular(ibMat3_Transpose(ibMat3_FromColumns(r1, r2, r3)));
		assert_singular(ibMat3_RotateDiag(rand_rotation(), ibV3(scale * urand(0.5, 2), -scale * urand(0.5, 2), 0)));
	}
	/* badly scaled but well-conditioned after row scaling: still invertible */
	ibMat3 inv;
	assert_true(ibMat3_Inverse(ibMat3_Diag(ibV3(1, 1e-8, 1e-8)), &inv));
	assert_le(fabs(inv.m[2][2] - 1e8), 1e-7);
}

static void test_orthonormalize(void** state)
{
	(void)state;
	rng_seed(9);
	for (int i = 0; i < 5000; ++i) {
		ibMat3 R = rand_rotation();
		double eps = (i % 3 == 0) ? 1e-3 : (i % 3 == 1 ? 1e-8 : 1e-15);
		ibMat3 P = R;
		for (int r = 0; r < 3; ++r)
			for (int c = 0; c < 3; ++c) P.m[r][c] += urand(-eps, eps);
		ibMat3 O = ibMat3_Orthonormalize(P);
		assert_le(ortho_error(O), 1e-14);
		assert_le(fabs(ibMat3_Det(O) - 1.0), 1e-14);
		assert_le(mat_diff(O, R), 6 * eps + 1e-15);
		/* a uniformly scaled rotation (the mode the plain iteration amplifies) */
		O = ibMat3_Orthonormalize(ibMat3_Scale(urand(0.5, 2.0), P));
		assert_le(ortho_error(O), 1e-14);
		assert_le(mat_diff(O, R), 6 * eps + 1e-15);
	}
	ibMat3 R = rand_rotation();
	assert_le(mat_diff(ibMat3_Orthonormalize(R), R), 1e-15);
	/* inputs far from a rotation still give a proper rotation */
	ibMat3 bad[] = {ibMat3_Diag(ibV3(1, 1, -1)), ibMat3_Zero(), (ibMat3){{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}},
	                ibMat3_Scale(-1.0, R), (ibMat3){{{1, 5, 0}, {0, 1, 0}, {0, 0, 1}}}};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
		ibMat3 O = ibMat3_Orthonormalize(bad[k]);
		assert_le(ortho_error(O), 1e-14);
		assert_le(fabs(ibMat3_Det(O) - 1.0), 1e-14);
	}
}

static void test_euler(void** state)
{
	(void)state;
	rng_seed(10);
	for (int i = 0; i < 1000; ++i) {
		double a = urand(-PI, PI), b = urand(-PI, PI), c = urand(-PI, PI);
		ibMat3 Rx = {{{1, 0, 0}, {0, cos(a), -sin(a)}, {0, sin(a), cos(a)}}};
		ibMat3 Ry = {{{cos(b), 0, sin(b)}, {0, 1, 0}, {-sin(b), 0, cos(b)}}};
		ibMat3 Rz = {{{cos(c), -sin(c), 0}, {sin(c), cos(c), 0}, {0, 0, 1}}};
		ibMat3 E = ibMat3_FromEulerXYZ(a, b, c);
		assert_le(mat_diff(E, ibMat3_Mul(ibMat3_Mul(Rx, Ry), Rz)), 1e-15);
		ibQuat q = ibQuatMul(ibQuatMul(ibQuatFromAxisAngle(ibV3(1, 0, 0), a), ibQuatFromAxisAngle(ibV3(0, 1, 0), b)),
		                     ibQuatFromAxisAngle(ibV3(0, 0, 1), c));
		assert_le(mat_diff(E, ibMat3_FromQuat(q)), 1e-14);
		assert_le(ortho_error(E), 1e-15);
	}
	ibMat3 E = ibMat3_FromEulerXYZ(0.5 * PI, 0, 0); /* +90 deg about x maps y to z */
	assert_le(vec_diff(ibMat3_MulV(E, ibV3(0, 1, 0)), ibV3(0, 0, 1)), 1e-15);
}

/* ---- eigen-decomposition ---------------------------------------------------------------------- */
/* Checks A = V diag(l) V^T, V a rotation and l ascending; returns the sweep count. */
static int check_eigen(ibMat3 A, ibVec3* lOut, ibMat3* vOut)
{
	ibVec3 l;
	ibMat3 V;
	int sweeps = ibMat3_EigenSym(A, &l, &V);
	assert_true(sweeps >= 0 && sweeps <= 10);
	assert_true(l.x <= l.y && l.y <= l.z);
	assert_le(ortho_error(V), 1e-14);
	assert_le(fabs(ibMat3_Det(V) - 1.0), 1e-14);
	double scale = mat_maxabs(A);
	assert_le(mat_diff(ibMat3_RotateDiag(V, l), A), 1e-13 * scale);
	for (int k = 0; k < 3; ++k) {
		ibVec3 v = ibMat3_Column(V, k);
		assert_le(vec_diff(ibMat3_MulV(A, v), ibScale(ibVec3_Get(l, k), v)), 1e-13 * scale);
	}
	if (lOut) *lOut = l;
	if (vOut) *vOut = V;
	return sweeps;
}

static void sort3(double* d)
{
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j + 1 < 3 - i; ++j)
			if (d[j] > d[j + 1]) {
				double t = d[j];
				d[j] = d[j + 1];
				d[j + 1] = t;
			}
}

static void test_eigen_random(void** state)
{
	(void)state;
	rng_seed(11);
	for (int i = 0; i < 10000; ++i) {
		double scale = (i % 4 == 0) ? pow(10.0, urand(-200, 200)) : 1.0;
		double d[3];
		for (int k = 0; k < 3; ++k) d[k] = scale * pow(10.0, urand(-3, 3)); /* SPD, condition <= 1e6 */
		if (i % 5 == 0) d[1] = -d[1];                                          /* indefinite */
		if (i % 7 == 0) d[2] = d[0];                                           /* repeated */
		ibMat3 A = ibMat3_RotateDiag(rand_rotation(), ibV3(d[0], d[1], d[2]));
		ibVec3 l;
		check_eigen(A, &l, NULL);
		sort3(d);
		double mx = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
		for (int k = 0; k < 3; ++k) assert_le(fabs(ibVec3_Get(l, k) - d[k]), 1e-14 * mx);
	}
	/* random symmetric M + M^T with entries of both signs */
	for (int i = 0; i < 2000; ++i) {
		ibMat3 M = ibMat3_FromColumns(rand_vec(-1, 1), rand_vec(-1, 1), rand_vec(-1, 1));
		check_eigen(ibMat3_Add(M, ibMat3_Transpose(M)), NULL, NULL);
	}
}

static void test_eigen_special(void** state)
{
	(void)state;
	rng_seed(12);
	ibVec3 l;
	ibMat3 V;
	/* already diagonal: no sweeps, exact values, a signed permutation with det +1 */
	assert_int_equal(check_eigen(ibMat3_Diag(ibV3(3, 1, 2)), &l, &V), 0);
	assert_true(l.x == 1 && l.y == 2 && l.z == 3);
	assert_le(vec_diff(ibMat3_Column(V, 0), ibV3(0, 1, 0)), 0.0);
	assert_le(vec_diff(ibMat3_Column(V, 1), ibV3(0, 0, 1)), 0.0);
	/* zero matrix */
	assert_int_equal(check_eigen(ibMat3_Zero(), &l, &V), 0);
	assert_true(l.x == 0 && l.y == 0 && l.z == 0);
	assert_le(mat_diff(V, ibMat3_Identity()), 0.0);
	/* a sphere: triple eigenvalue, exactly and after a rotation with rounding */
	check_eigen(ibMat3_Diag(ibV3(2, 2, 2)), &l, NULL);
	assert_true(l.x == 2 && l.y == 2 && l.z == 2);
	check_eigen(ibMat3_RotateDiag(rand_rotation(), ibV3(0.4, 0.4, 0.4)), &l, NULL);
	assert_le(vec_diff(l, ibV3(0.4, 0.4, 0.4)), 1e-16);
	/* a cylinder-like tensor: double eigenvalue; axis recovered up to sign */
	ibMat3 R = rand_rotation();
	check_eigen(ibMat3_RotateDiag(R, ibV3(1.0, 5.0, 1.0)), &l, &V);
	assert_le(vec_diff(l, ibV3(1, 1, 5)), 1e-14);
	assert_le(fabs(fabs(ibDot(ibMat3_Column(V, 2), ibMat3_Column(R, 1))) - 1.0), 1e-14);
	/* rank 1, singular and subnormal-scale matrices */
	check_eigen((ibMat3){{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}}, &l, NULL);
	assert_le(vec_diff(l, ibV3(0, 0, 14)), 1e-14 * 14);
	check_eigen(ibMat3_Scale(1e-310, (ibMat3){{{2, 1, 0}, {1, 2, 0}, {0, 0, 4}}}), &l, NULL);
	assert_le(vec_diff(l, ibV3(1e-310, 3e-310, 4e-310)), 1e-323);
	check_eigen((ibMat3){{{0, 1, 0}, {1, 0, 0}, {0, 0, 0}}}, &l, NULL);
	assert_le(vec_diff(l, ibV3(-1, 0, 1)), 1e-15);
	/* only the upper triangle is read */
	ibMat3 A = ibMat3_RotateDiag(R, ibV3(1, 2, 3)), G = A;
	G.m[1][0] = G.m[2][0] = G.m[2][1] = 7.0;
	ibVec3 lg;
	ibMat3 Vg;
	ibMat3_EigenSym(G, &lg, &Vg);
	ibMat3_EigenSym(A, &l, &V);
	assert_le(vec_diff(l, lg), 0.0);
	assert_le(mat_diff(V, Vg), 0.0);
	/* non-finite input: reported as not converged */
	A.m[0][1] = NAN;
	assert_true(ibMat3_EigenSym(A, &l, &V) < 0);
	assert_true(ibMat3_EigenSym(ibMat3_Identity(), NULL, NULL) == 0);
}

/* ---- inline helpers --------------------------------------------------------------------------- */
static void test_inline_helpers(void** state)
{
	(void)state;
	rng_seed(13);
	for (int i = 0; i < 10000; ++i) {
		ibVec3 a = rand_vec(-10, 10), b = rand_vec(-10, 10);
		assert_le(vec_diff(ibMat3_MulV(ibMat3_Skew(a), b), ibCross(a, b)), 1e-13);
		assert_le(fabs(ibDot(ibCross(a, b), a)), 1e-12);
		ibVec3 n = rand_unit_vec();
		if (i % 4 == 0) n = ibNormalize(ibAdd(ibV3(i % 3 == 0, i % 3 == 1, i % 3 == 2), rand_vec(-1e-3, 1e-3)));
		if (i % 4 == 1) n = ibNormalize(ibAdd(ibV3(1, 1, 1), rand_vec(-1e-6, 1e-6)));
		ibVec3 p = ibPerpendicular(n);
		assert_le(fabs(ibLength(p) - 1.0), 4 * DBL_EPSILON);
		assert_le(fabs(ibDot(p, n)), 4 * DBL_EPSILON);
		/* RotateDiag equals R diag(d) R^T */
		if (i < 1000) {
			ibMat3 R = rand_rotation();
			ibVec3 d = rand_vec(0, 3);
			ibMat3 ref = ibMat3_Mul(ibMat3_Mul(R, ibMat3_Diag(d)), ibMat3_Transpose(R));
			assert_le(mat_diff(ibMat3_RotateDiag(R, d), ref), 1e-15 * 3);
		}
	}
	ibVec3 axes[] = {ibV3(1, 0, 0), ibV3(0, 1, 0), ibV3(0, 0, 1), ibV3(0, 0, -1)};
	for (size_t k = 0; k < 4; ++k) {
		ibVec3 p = ibPerpendicular(axes[k]);
		assert_le(fabs(ibLength(p) - 1.0), 0.0);
		assert_le(fabs(ibDot(p, axes[k])), 0.0);
	}
	assert_true(ibLength(ibNormalize(IB_VEC3_ZERO)) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quat_matrix_roundtrip), cmocka_unit_test(test_quat_composition),
		cmocka_unit_test(test_axis_angle),            cmocka_unit_test(test_rotation_vector),
		cmocka_unit_test(test_quat_normalize),        cmocka_unit_test(test_det),
		cmocka_unit_test(test_inverse),               cmocka_unit_test(test_inverse_singular),
		cmocka_unit_test(test_orthonormalize),        cmocka_unit_test(test_euler),
		cmocka_unit_test(test_eigen_random),          cmocka_unit_test(test_eigen_special),
		cmocka_unit_test(test_inline_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
