/* Direction joint / axis alignment (§3.2.3 "Richtungsgelenk", Fig. 3.12): x1 (body 1) = x2
 * (body 2). P = [y^T; z^T] perpendicular to x1(t0); d = angle(x1', x2') unit(x1' x x2') with
 * atan2 for accuracy near 0 (digest §4.5); antiparallel: any axis perpendicular to x1. */
#include <math.h>

#include "joints/joint_internal.h"

static void align_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = p1->s;
	c->b = p2->s;
	c->rows = 2;
	ib_orthonormal_basis(ibNormalize(ib_pose_vector(p1, c->lx1)), &c->P[0], &c->P[1]);
}

static ibVec3 align_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 x1 = ibNormalize(ib_pose_vector(p1, c->lx1)); /* footnote 2: renormalise */
	ibVec3 x2 = ibNormalize(ib_pose_vector(p2, c->lx2));
	ibVec3 cr = ibCross(x1, x2);
	double s = ibLength(cr), co = ibDot(x1, x2);
	if (s < 1e-300) return co > 0.0 ? IB_VEC3_ZERO : ibScale(IB_PI, ibPerpendicular(x1));
	return ibScale(atan2(s, co) / s, cr);
}

const ibBasicType ib_basic_axis_align = {"axis-align", true, false, align_prepare, align_error};
