/* ibdyn math: conversions between unit quaternions, rotation matrices, axis/angle and rotation
 * vectors. Formulas: thesis Appendix A (A.2 quaternion -> matrix, Algorithm A.1 matrix ->
 * quaternion, Algorithm A.2 quaternion -> axis/angle), as corrected in DIGEST.md section 27. */
#include "ibdyn/math.h"
#include "math/quat_inline.h"

IB_API ibMat3 ibMat3_FromQuat(ibQuat q)
{
	ibMat3 R;
	ib_mat3_from_quat(q, &R);
	return R;
}

/* Algorithm A.1 [Sho85] with the digest's fix of the third branch. Instead of the thesis'
 * "1 + trace > 0" test (inaccurate when w is small), Shepperd's selection is used: the branch
 * belonging to the largest of {trace, R11, R22, R33} divides by the largest quaternion component,
 * which is at least 1/2. The result is normalised and flipped to w >= 0. */
IB_API ibQuat ibQuat_FromMat3(ibMat3 R)
{
	double r11 = R.m[0][0], r22 = R.m[1][1], r33 = R.m[2][2];
	double tr = r11 + r22 + r33;
	ibQuat q;
	if (tr >= r11 && tr >= r22 && tr >= r33) {
		double s = sqrt(1.0 + tr); /* 2|w| */
		q.w = 0.5 * s;
		s = 0.5 / s;
		q.x = (R.m[2][1] - R.m[1][2]) * s;
		q.y = (R.m[0][2] - R.m[2][0]) * s;
		q.z = (R.m[1][0] - R.m[0][1]) * s;
	} else if (r11 >= r22 && r11 >= r33) {
		double s = sqrt(1.0 + r11 - (r22 + r33)); /* 2|x| */
		q.x = 0.5 * s;
		s = 0.5 / s;
		q.y = (R.m[0][1] + R.m[1][0]) * s;
		q.z = (R.m[2][0] + R.m[0][2]) * s;
		q.w = (R.m[2][1] - R.m[1][2]) * s;
	} else if (r22 >= r33) {
		double s = sqrt(1.0 + r22 - (r33 + r11)); /* 2|y| */
		q.y = 0.5 * s;
		s = 0.5 / s;
		q.z = (R.m[1][2] + R.m[2][1]) * s;
		q.x = (R.m[0][1] + R.m[1][0]) * s;
		q.w = (R.m[0][2] - R.m[2][0]) * s;
	} else {
		double s = sqrt(1.0 + r33 - (r11 + r22)); /* 2|z| */
		q.z = 0.5 * s;
		s = 0.5 / s;
		q.x = (R.m[2][0] + R.m[0][2]) * s;
		q.y = (R.m[1][2] + R.m[2][1]) * s;
		q.w = (R.m[1][0] - R.m[0][1]) * s;
	}
	q = ibQuatNormalize(q);
	if (q.w < 0.0) q = (ibQuat){-q.w, -q.x, -q.y, -q.z};
	return q;
}

/* |(x, y, z)| without underflow for tiny vector parts (rotations below ~1e-154 rad). */
static double ib_vec_len(ibVec3 v)
{
	double m = fmax(fmax(fabs(v.x), fabs(v.y)), fabs(v.z));
	if (m == 0.0 || m > 0x1p-500) return ibLength(v);
	return ldexp(ibLength(ibScale(0x1p600, v)), -600);
}

/* Algorithm A.2 with the digest's [IMPL] note: flip to w >= 0 (shortest rotation, angle in
 * [0, pi]) and use angle = 2 atan2(|xyz|, w), which is accurate near 0 and pi. */
IB_API void ibQuat_ToAxisAngle(ibQuat q, ibVec3* axis, double* angle)
{
	if (q.w < 0.0) q = (ibQuat){-q.w, -q.x, -q.y, -q.z};
	ibVec3 v = {q.x, q.y, q.z};
	double l = ib_vec_len(v);
	ibVec3 a = ibV3(1.0, 0.0, 0.0);
	double alpha = 0.0;
	if (l > 0.0) {
		a = ibV3(v.x / l, v.y / l, v.z / l); /* not 1/l: overflows for subnormal l */
		alpha = 2.0 * atan2(l, q.w);
	}
	if (axis) *axis = a;
	if (angle) *angle = alpha;
}

/* angle * axis = (2 atan2(l, w) / l) * xyz with l = |xyz|; the factor tends to 2/w as l -> 0,
 * so no cancellation occurs near the identity. */
IB_API ibVec3 ibQuat_ToRotationVector(ibQuat q)
{
	if (q.w < 0.0) q = (ibQuat){-q.w, -q.x, -q.y, -q.z};
	ibVec3 v = {q.x, q.y, q.z};
	double l = ib_vec_len(v);
	if (l == 0.0) return IB_VEC3_ZERO;
	return ibScale(2.0 * atan2(l, q.w) / l, v);
}

/* q = (cos(t/2), sin(t/2)/t * r) with t = |r|. For small t, sin(t/2)/t is evaluated by its
 * Taylor series 1/2 - t^2/48 + t^4/3840 (truncation error < t^6/645120, below 1e-30 here). */
IB_API ibQuat ibQuat_FromRotationVector(ibVec3 r)
{
	double t2 = ibLengthSq(r);
	double t = sqrt(t2);
	double c, f;
	if (t < 1e-4) {
		f = 0.5 - t2 * (1.0 / 48.0) + t2 * t2 * (1.0 / 3840.0);
		c = 1.0 - t2 * (1.0 / 8.0) + t2 * t2 * (1.0 / 384.0);
	} else {
		f = sin(0.5 * t) / t;
		c = cos(0.5 * t);
	}
	return (ibQuat){c, f * r.x, f * r.y, f * r.z};
}
