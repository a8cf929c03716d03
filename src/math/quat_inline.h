/* Inline form of ibMat3_FromQuat for the hot paths (the joint correction's predictions): the same
 * arithmetic, so the same bits, without the call and the returned-struct copy. */
#ifndef IBDYN_SRC_QUAT_INLINE_H
#define IBDYN_SRC_QUAT_INLINE_H

#include "ibdyn/math.h"
#include "math/v2.h"

/* App. A.2, column convention: R v == q v q* for a unit quaternion q. */
static inline void ib_mat3_from_quat(ibQuat q, ibMat3* R)
{
	double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
	double xy = q.x * q.y, yz = q.y * q.z, zx = q.z * q.x;
	double xw = q.x * q.w, yw = q.y * q.w, zw = q.z * q.w;
	R->m[0][0] = 1.0 - 2.0 * (yy + zz);
	R->m[0][1] = 2.0 * (xy - zw);
	R->m[0][2] = 2.0 * (zx + yw);
	R->m[1][0] = 2.0 * (xy + zw);
	R->m[1][1] = 1.0 - 2.0 * (zz + xx);
	R->m[1][2] = 2.0 * (yz - xw);
	R->m[2][0] = 2.0 * (zx - yw);
	R->m[2][1] = 2.0 * (yz + xw);
	R->m[2][2] = 1.0 - 2.0 * (xx + yy);
}

/* ib_mat3_from_quat of two quaternions lane by lane (math/v2.h). */
static inline void ib_mat3_from_quat2(ibQuat qa, ibQuat qb, ibMat3* Ra, ibMat3* Rb)
{
	const ibV2 w = {qa.w, qb.w}, x = {qa.x, qb.x}, y = {qa.y, qb.y}, z = {qa.z, qb.z};
	const ibV2 one = {1.0, 1.0}, two = {2.0, 2.0};
	ibV2 xx = x * x, yy = y * y, zz = z * z;
	ibV2 xy = x * y, yz = y * z, zx = z * x;
	ibV2 xw = x * w, yw = y * w, zw = z * w;
	const ibV2 m[9] = {one - two * (yy + zz), two * (xy - zw), two * (zx + yw),
	                    two * (xy + zw),       one - two * (zz + xx), two * (yz - xw),
	                    two * (zx - yw),       two * (yz + xw),       one - two * (xx + yy)};
	for (int i = 0; i < 9; ++i) {
		Ra->m[i / 3][i % 3] = m[i][0];
		Rb->m[i / 3][i % 3] = m[i][1];
	}
}

#endif
