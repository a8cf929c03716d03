/* Velocity-only joints (§3.2.6): no position condition; during the velocity correction the chosen
 * translational rows P (u_a - u_b) or rotational rows P (w1 - w2) are set to zero. The rows are
 * body 1's user axes selected by dofMask. */
#include "joints/joint_internal.h"

static int rows_from_mask(const ibBasic* c, const ibPose* p1, ibVec3* P)
{
	int n = 0;
	for (int k = 0; k < 3; ++k)
		if (c->dofMask & (1u << k)) P[n++] = ibNormalize(ib_pose_vector(p1, c->lu1[k]));
	return n;
}

static void vel_lin_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = ib_pose_point(p1, c->la);
	c->b = ib_pose_point(p2, c->lb);
	c->rows = rows_from_mask(c, p1, c->P);
}

static void vel_ang_prepare(ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	c->a = p1->s;
	c->b = p2->s;
	c->rows = rows_from_mask(c, p1, c->P);
}

static ibVec3 no_error(const ibBasic* c, const ibPose* p1, const ibPose* p2)
{
	(void)c;
	(void)p1;
	(void)p2;
	return IB_VEC3_ZERO;
}

const ibBasicType ib_basic_velocity_linear = {"velocity-linear", false, true, vel_lin_prepare, no_error};
const ibBasicType ib_basic_velocity_angular = {"velocity-angular", true, true, vel_ang_prepare, no_error};
