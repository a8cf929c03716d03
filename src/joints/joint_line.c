/* Line joint (§3.2.3, Fig. 3.9): the point b of body 2 stays on the line a0 + lambda x fixed to
 * body 1. The impulse acts at the foot point a = a0 + ((b - a0).x) x; P = [y^T; z^T] with y, z
 * orthonormal and perpendicular to x; d = b' - a' with the foot point on the predicted line.
 * Distance variant: b stays at distance dist from the line (1 DOF, P = u^T, u = unit(b - a)). */
#include "joints/joint_internal.h"

static ibVec3 foot(ibVec3 a0, ibVec3 x, ibVec3 b) { return ibMulAdd(a0, ibDot(ibSub(b, a0), x), x); }

static void line_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 x = ibNormalize(ib_pose_vector(p1, c->lx1));
	c->b = ib_pose_point(p2, c->lb);
	c->a = foot(ib_pose_point(p1, c->la), x, c->b);
	c->rows = 2;
	ib_orthonormal_basis(x, &c->P[0], &c->P[1]);
}

static ibVec3 line_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 x = ibNormalize(ib_pose_vector(p1, c->lx1));
	ibVec3 b = ib_pose_point(p2, c->lb);
	return ibSub(b, foot(ib_pose_point(p1, c->la), x, b));
}

static void line_distance_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	line_prepare(c, p1, p2);
	ibVec3 d = ibSub(c->b, c->a);
	c->rows = 1;
	double l = ibLength(d);
	c->P[0] = l > 1e-300 ? ibScale(1.0 / l, d) : c->P[0];
}

static ibVec3 line_distance_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 d = line_error(c, p1, p2);
	double l = ibLength(d);
	if (!(l > 1e-300)) return ibScale(-c->dist, ibPerpendicular(ibNormalize(ib_pose_vector(p1, c->lx1))));
	return ibScale((l - c->dist) / l, d);
}

const ibBasicType ib_basic_line = {"line", false, false, line_prepare, line_error};
const ibBasicType ib_basic_line_distance = {"line-distance", false, false, line_distance_prepare, line_distance_error};
