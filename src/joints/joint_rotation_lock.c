/* Rotation lock (§3.2.3 "Translationsgelenk", eqs 3.17-3.19), with the world-frame error of the
 * digest (§4.4, item 2): q_err = q2 qrel0 q1^-1, qrel0 = q2(0)^-1 q1(0), d = rotation vector of
 * q_err (shortest rotation), P = E3. The thesis' literal formula is written for world-to-body
 * quaternions and does not vanish for q1(0) != q2(0) with our body-to-world convention. */
#include "joints/joint_internal.h"

static void rotlock_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = p1->s;
	c->b = p2->s;
	c->rows = 3;
	c->P[0] = ibV3(1, 0, 0);
	c->P[1] = ibV3(0, 1, 0);
	c->P[2] = ibV3(0, 0, 1);
}

static ibVec3 rotlock_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibQuat e = ibQuatMul(ibQuatMul(p2->q, c->qrel0), ibQuatConj(p1->q));
	return ibQuat_ToRotationVector(e);
}

const ibBasicType ib_basic_rotation_lock = {"rotation-lock", true, false, rotlock_prepare, rotlock_error};
