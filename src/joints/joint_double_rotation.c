/* Double-rotation joint (§3.2.3 "Doppelrotationsgelenk", Fig. 3.13): the angle between x (body 1)
 * and y (body 2) stays alpha0. P = z^T, z = unit(x x y); d = (alpha' - alpha0) z'. Turning body 1
 * by +phi about z moves x towards y and reduces alpha. Singular for x parallel to y. */
#include <math.h>

#include "joints/joint_internal.h"

static ibVec3 axis_z(ibVec3 x, ibVec3 y)
{
	ibVec3 z = ibCross(x, y);
	double l = ibLength(z);
	return l > 1e-300 ? ibScale(1.0 / l, z) : ibPerpendicular(x);
}

static void dbl_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = p1->s;
	c->b = p2->s;
	c->rows = 1;
	c->P[0] = axis_z(ib_pose_vector(p1, c->lx1), ib_pose_vector(p2, c->lx2));
}

static ibVec3 dbl_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 x = ibNormalize(ib_pose_vector(p1, c->lx1));
	ibVec3 y = ibNormalize(ib_pose_vector(p2, c->lx2));
	double alpha = atan2(ibLength(ibCross(x, y)), ibDot(x, y));
	return ibScale(alpha - c->alpha0, axis_z(x, y));
}

const ibBasicType ib_basic_double_rotation = {"double-rotation", true, false, dbl_prepare, dbl_error};
