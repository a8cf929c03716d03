/* Plane joint (§3.2.3, Fig. 3.10): the point b of body 2 stays in the plane n.X = n.a0 (+ dist)
 * fixed to body 1; P = n^T; the impulse acts at the foot point a = b - ((b - a0).n - dist) n;
 * d = ((b' - a0').n' - dist) n'. */
#include "joints/joint_internal.h"

static void plane_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 n = ibNormalize(ib_pose_vector(p1, c->lx1));
	c->b = ib_pose_point(p2, c->lb);
	double s = ibDot(ibSub(c->b, ib_pose_point(p1, c->la)), n) - c->dist;
	c->a = ibMulAdd(c->b, -s, n);
	c->rows = 1;
	c->P[0] = n;
}

static ibVec3 plane_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 n = ibNormalize(ib_pose_vector(p1, c->lx1));
	double s = ibDot(ibSub(ib_pose_point(p2, c->lb), ib_pose_point(p1, c->la)), n) - c->dist;
	return ibScale(s, n);
}

const ibBasicType ib_basic_plane = {"plane", false, false, plane_prepare, plane_error};
