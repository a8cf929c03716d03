/* ibdyn math: 3-vectors, unit quaternions and 3x3 matrices in double precision.
 * Conventions: column vectors; quaternions (w, x, y, z) map body coordinates to world
 * coordinates, v_world = q v_body q*; ibMat3 is row-major, m[row][col]. */
#ifndef IBDYN_MATH_H
#define IBDYN_MATH_H

#include <math.h>
#include <stdbool.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A 3-vector (m, m/s, N, ... depending on use). */
typedef struct ibVec3 {
	double x, y, z;
} ibVec3;

/** A quaternion w + xi + yj + zk; unit quaternions represent rotations body -> world. */
typedef struct ibQuat {
	double w, x, y, z;
} ibQuat;

/** A 3x3 matrix, row-major: m[row][col]. */
typedef struct ibMat3 {
	double m[3][3];
} ibMat3;

/** pi. */
#define IB_PI 3.14159265358979323846264338327950288

/** The zero vector. */
#define IB_VEC3_ZERO ((ibVec3){0.0, 0.0, 0.0})
/** The identity rotation. */
#define IB_QUAT_IDENTITY ((ibQuat){1.0, 0.0, 0.0, 0.0})

/** Vector from components. */
static inline ibVec3 ibV3(double x, double y, double z) { return (ibVec3){x, y, z}; }
/** a + b. */
static inline ibVec3 ibAdd(ibVec3 a, ibVec3 b) { return (ibVec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
/** a - b. */
static inline ibVec3 ibSub(ibVec3 a, ibVec3 b) { return (ibVec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
/** s * a. */
static inline ibVec3 ibScale(double s, ibVec3 a) { return (ibVec3){s * a.x, s * a.y, s * a.z}; }
/** a + s * b. */
static inline ibVec3 ibMulAdd(ibVec3 a, double s, ibVec3 b) { return (ibVec3){a.x + s * b.x, a.y + s * b.y, a.z + s * b.z}; }
/** -a. */
static inline ibVec3 ibNeg(ibVec3 a) { return (ibVec3){-a.x, -a.y, -a.z}; }
/** Component-wise product. */
static inline ibVec3 ibMulCW(ibVec3 a, ibVec3 b) { return (ibVec3){a.x * b.x, a.y * b.y, a.z * b.z}; }
/** Dot product. */
static inline double ibDot(ibVec3 a, ibVec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
/** Cross product a x b. */
static inline ibVec3 ibCross(ibVec3 a, ibVec3 b)
{
	return (ibVec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
/** Squared Euclidean length. */
static inline double ibLengthSq(ibVec3 a) { return ibDot(a, a); }
/** Euclidean length. */
static inline double ibLength(ibVec3 a) { return sqrt(ibDot(a, a)); }
/** Distance |a - b|. */
static inline double ibDistance(ibVec3 a, ibVec3 b) { return ibLength(ibSub(a, b)); }
/** a / |a|, or the zero vector if |a| == 0. */
static inline ibVec3 ibNormalize(ibVec3 a)
{
	double l = ibLength(a);
	return l > 0.0 ? ibScale(1.0 / l, a) : IB_VEC3_ZERO;
}
/** True if all components are finite. */
static inline bool ibVec3_IsFinite(ibVec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }
/** Component i (0, 1, 2). */
static inline double ibVec3_Get(ibVec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
/** A unit vector perpendicular to the unit vector n. */
static inline ibVec3 ibPerpendicular(ibVec3 n)
{
	ibVec3 w = fabs(n.x) < 0.57735 ? ibV3(1, 0, 0) : (fabs(n.y) < 0.57735 ? ibV3(0, 1, 0) : ibV3(0, 0, 1));
	return ibNormalize(ibCross(n, w));
}

/** Quaternion from components. */
static inline ibQuat ibQ(double w, double x, double y, double z) { return (ibQuat){w, x, y, z}; }
/** Hamilton product a * b (rotation b first, then a). */
static inline ibQuat ibQuatMul(ibQuat a, ibQuat b)
{
	return (ibQuat){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
	                a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z, a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x};
}
/** Conjugate (the inverse of a unit quaternion). */
static inline ibQuat ibQuatConj(ibQuat q) { return (ibQuat){q.w, -q.x, -q.y, -q.z}; }
/** Squared norm. */
static inline double ibQuatNormSq(ibQuat q) { return q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z; }
/** q / |q| (identity if |q| == 0). */
static inline ibQuat ibQuatNormalize(ibQuat q)
{
	double n = sqrt(ibQuatNormSq(q));
	if (n == 0.0) return IB_QUAT_IDENTITY;
	double s = 1.0 / n;
	return (ibQuat){q.w * s, q.x * s, q.y * s, q.z * s};
}
/** True if all components are finite. */
static inline bool ibQuat_IsFinite(ibQuat q) { return isfinite(q.w) && isfinite(q.x) && isfinite(q.y) && isfinite(q.z); }
/** Rotate v by the unit quaternion q: q v q*. */
static inline ibVec3 ibRotate(ibQuat q, ibVec3 v)
{
	ibVec3 u = {q.x, q.y, q.z};
	ibVec3 t = ibScale(2.0, ibCross(u, v));
	return ibAdd(ibAdd(v, ibScale(q.w, t)), ibCross(u, t));
}
/** Rotate v by the inverse of the unit quaternion q: q* v q. */
static inline ibVec3 ibInvRotate(ibQuat q, ibVec3 v) { return ibRotate(ibQuatConj(q), v); }
/** Unit quaternion for a rotation by angle (rad) about the unit axis. */
static inline ibQuat ibQuatFromAxisAngle(ibVec3 axis, double angle)
{
	double s = sin(0.5 * angle);
	return (ibQuat){cos(0.5 * angle), s * axis.x, s * axis.y, s * axis.z};
}

/** The identity matrix. */
static inline ibMat3 ibMat3_Identity(void) { return (ibMat3){{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}; }
/** The zero matrix. */
static inline ibMat3 ibMat3_Zero(void) { return (ibMat3){{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}}; }
/** Diagonal matrix diag(d). */
static inline ibMat3 ibMat3_Diag(ibVec3 d) { return (ibMat3){{{d.x, 0, 0}, {0, d.y, 0}, {0, 0, d.z}}}; }
/** Matrix with the given columns. */
static inline ibMat3 ibMat3_FromColumns(ibVec3 c0, ibVec3 c1, ibVec3 c2)
{
	return (ibMat3){{{c0.x, c1.x, c2.x}, {c0.y, c1.y, c2.y}, {c0.z, c1.z, c2.z}}};
}
/** Column j of A. */
static inline ibVec3 ibMat3_Column(ibMat3 A, int j) { return (ibVec3){A.m[0][j], A.m[1][j], A.m[2][j]}; }
/** A v. */
static inline ibVec3 ibMat3_MulV(ibMat3 A, ibVec3 v)
{
	return (ibVec3){A.m[0][0] * v.x + A.m[0][1] * v.y + A.m[0][2] * v.z, A.m[1][0] * v.x + A.m[1][1] * v.y + A.m[1][2] * v.z,
	                A.m[2][0] * v.x + A.m[2][1] * v.y + A.m[2][2] * v.z};
}
/** A^T v. */
static inline ibVec3 ibMat3_MulTV(ibMat3 A, ibVec3 v)
{
	return (ibVec3){A.m[0][0] * v.x + A.m[1][0] * v.y + A.m[2][0] * v.z, A.m[0][1] * v.x + A.m[1][1] * v.y + A.m[2][1] * v.z,
	                A.m[0][2] * v.x + A.m[1][2] * v.y + A.m[2][2] * v.z};
}
/** A B. */
static inline ibMat3 ibMat3_Mul(ibMat3 A, ibMat3 B)
{
	ibMat3 C;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) C.m[i][j] = A.m[i][0] * B.m[0][j] + A.m[i][1] * B.m[1][j] + A.m[i][2] * B.m[2][j];
	return C;
}
/** A^T. */
static inline ibMat3 ibMat3_Transpose(ibMat3 A)
{
	ibMat3 T;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) T.m[i][j] = A.m[j][i];
	return T;
}
/** A + B. */
static inline ibMat3 ibMat3_Add(ibMat3 A, ibMat3 B)
{
	ibMat3 C;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) C.m[i][j] = A.m[i][j] + B.m[i][j];
	return C;
}
/** s A. */
static inline ibMat3 ibMat3_Scale(double s, ibMat3 A)
{
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) A.m[i][j] *= s;
	return A;
}
/** Cross-product matrix [a]x, so that [a]x b = a x b. */
static inline ibMat3 ibMat3_Skew(ibVec3 a) { return (ibMat3){{{0, -a.z, a.y}, {a.z, 0, -a.x}, {-a.y, a.x, 0}}}; }
/** R diag(d) R^T (e.g. a world inertia tensor from principal moments d and rotation R). */
static inline ibMat3 ibMat3_RotateDiag(ibMat3 R, ibVec3 d)
{
	ibMat3 C;
	for (int i = 0; i < 3; ++i)
		for (int j = i; j < 3; ++j) {
			C.m[i][j] = R.m[i][0] * d.x * R.m[j][0] + R.m[i][1] * d.y * R.m[j][1] + R.m[i][2] * d.z * R.m[j][2];
			C.m[j][i] = C.m[i][j];
		}
	return C;
}
/** True if all entries are finite. */
static inline bool ibMat3_IsFinite(ibMat3 A)
{
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j)
			if (!isfinite(A.m[i][j])) return false;
	return true;
}

/** Rotation matrix of the unit quaternion q (column convention: R v == q v q*), App. A.2. */
IB_API ibMat3 ibMat3_FromQuat(ibQuat q);
/** Unit quaternion of a rotation matrix, Shepperd's branch selection (largest of trace, R11, R22, R33); w >= 0. */
IB_API ibQuat ibQuat_FromMat3(ibMat3 R);
/** Axis (unit) and angle in [0, pi] of the unit quaternion q (shortest rotation; axis (1,0,0) for angle 0). */
IB_API void ibQuat_ToAxisAngle(ibQuat q, ibVec3* axis, double* angle);
/** Rotation vector angle*axis of the shortest rotation represented by q (length in [0, pi]). */
IB_API ibVec3 ibQuat_ToRotationVector(ibQuat q);
/** Unit quaternion of a rotation vector (axis * angle, rad). */
IB_API ibQuat ibQuat_FromRotationVector(ibVec3 r);
/** Determinant of A. */
IB_API double ibMat3_Det(ibMat3 A);
/** Inverse of a general 3x3 matrix (App. C.4); returns false (and *out = 0) if singular. */
IB_API bool ibMat3_Inverse(ibMat3 A, ibMat3* out);
/** Inverse of a symmetric 3x3 matrix (App. C.5, uses only the upper triangle); false if singular. */
IB_API bool ibMat3_InverseSym(ibMat3 A, ibMat3* out);
/** Orthonormalise the columns of a nearly orthogonal matrix (App. C.3, column form) into a rotation. */
IB_API ibMat3 ibMat3_Orthonormalize(ibMat3 R);
/** Jacobi eigen-decomposition of a symmetric matrix: A = V diag(values) V^T, V a rotation (det +1),
 * eigenvalues sorted ascending. Returns the number of sweeps used (negative if not converged). */
IB_API int ibMat3_EigenSym(ibMat3 A, ibVec3* values, ibMat3* vectors);
/** Rotation matrix R = Rx(a) Ry(b) Rz(c) from Euler angles in radians (App. C.2). */
IB_API ibMat3 ibMat3_FromEulerXYZ(double a, double b, double c);

#ifdef __cplusplus
}
#endif
#endif
