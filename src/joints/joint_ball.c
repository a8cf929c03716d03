/* Ball joint (§3.2.3, eq. 3.13): joint points a on body 1 and b on body 2 coincide; P = E3,
 * d = b' - a'. Distance variant (footnote 1, digest §4.7 [R]): |b - a| = dist, P = u^T with
 * u = (b - a)/|b - a|, d = (|b' - a'| - dist) u'. */
#include "joints/joint_internal.h"

static void ball_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = ib_pose_point(p1, c->la);
	c->b = ib_pose_point(p2, c->lb);
	c->rows = 3;
	c->P[0] = ibV3(1, 0, 0);
	c->P[1] = ibV3(0, 1, 0);
	c->P[2] = ibV3(0, 0, 1);
}

static ibVec3 ball_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	return ibSub(ib_pose_point(p2, c->lb), ib_pose_point(p1, c->la));
}

static ibVec3 safe_dir(ibVec3 d, ibVec3 fallback)
{
	double l = ibLength(d);
	return l > 1e-300 ? ibScale(1.0 / l, d) : fallback;
}

static void distance_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = ib_pose_point(p1, c->la);
	c->b = ib_pose_point(p2, c->lb);
	c->rows = 1;
	c->P[0] = safe_dir(ibSub(c->b, c->a), ibV3(0, 0, 1));
}

static ibVec3 distance_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	ibVec3 d = ibSub(ib_pose_point(p2, c->lb), ib_pose_point(p1, c->la));
	double l = ibLength(d);
	return ibScale(l - c->dist, safe_dir(d, ibV3(0, 0, 1)));
}

const ibBasicType ib_basic_ball = {"ball", false, false, ball_prepare, ball_error};
const ibBasicType ib_basic_distance = {"distance", false, false, distance_prepare, distance_error};
