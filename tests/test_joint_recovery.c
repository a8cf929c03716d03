/* Large joint errors present at the start of a sub-step of ibWorld_Step (joint_internal.h
 * ib_joints_recovery_slack, ib_limit_slack; step.c sets the fraction). The thesis' joint correction removes the
 * whole predicted error in every step, whatever its length. ibWorld_Step cuts its step into sub-steps (times
 * of contact, rotation sub-steps, halves of an unconverged step), and the time-of-contact search re-simulates
 * from the step start over ever shorter times; an error left by an unconverged step (a ragdoll's landing:
 * 3.8 mm at a shoulder, a cone exceeded by 0.045 rad) was then removed within attempts of down to 5e-7 s, at
 * up to 190 m/s and 1e4 rad/s, and the ragdoll of test_contact_ragdoll.c's seed 40 gained 40 kJ (of 1.3 kJ).
 * Removing such an error by the end of the step was not enough: a time-of-contact search that left a last
 * sub-step of 1.6e-5 s removed it there (seed 20: 31 J). Now a sub-step removes the share of an error above
 * 10 tolerances that its length has of the step: at the rate of a whole step; the rest goes in the next steps.
 *
 * Asserted on the joint correction of a sub-step of 1e-4 s of a step of 1/60 s (white box: the step's length
 * and the fraction set as step.c sets them), for two free boxes joined with an error at the start (a ball
 * joint's anchors 5 mm apart, a hinge 0.1 rad beyond its limit, a ball joint 0.1 rad outside its cone), with
 * the iterative method and both linear-system methods: the relative velocity it leaves at the joint is the
 * error over the step (0.3 m/s, 6 rad/s; before: over the sub-step, 50 m/s and 1000 rad/s), and in a whole
 * step the same: the whole error goes. Through the public API: the errors are gone after a step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"

enum { PAIR_BALL, PAIR_HINGE_LIMIT, PAIR_CONE };

static const double E0 = 0.005, A0 = 0.1; /* the ball joint's anchor distance (m); beyond the limit / cone (rad) */

/* Two boxes (0.4 m and 0.2 m) joined 0.5 m below the first one's centre; kind: the error they start with. */
static ibJointId pair(ibWorldId w, int kind, ibBodyId* a, ibBodyId* b)
{
	ibQuat q = kind == PAIR_HINGE_LIMIT ? ibQuatFromAxisAngle(ibV3(0, 1, 0), A0)
	           : kind == PAIR_CONE      ? ibQuatFromAxisAngle(ibV3(0, 1, 0), 0.5 + A0)
	                                    : IB_QUAT_IDENTITY;
	*a = jt_box(w, ibV3(0, 0, 2), IB_QUAT_IDENTITY, ibV3(0.2, 0.2, 0.2), 1000.0);
	*b = jt_box(w, ibAdd(ibV3(0, 0, 1.5), ibRotate(q, ibV3(0, 0, -0.5))), q, ibV3(0.1, 0.1, 0.1), 1000.0);
	ibJointDef jd = ibDefaultJointDef(kind == PAIR_HINGE_LIMIT ? IB_JOINT_HINGE : IB_JOINT_BALL);
	jd.bodyA = *a;
	jd.bodyB = *b;
	jd.localAnchorA = ibV3(0, 0, -0.5);
	jd.localAnchorB = ibV3(kind == PAIR_BALL ? E0 : 0.0, 0, 0.5);
	jd.localAxisA = jd.localAxisB = kind == PAIR_CONE ? ibV3(0, 0, -1) : ibV3(0, 1, 0);
	jd.localRefA = jd.localRefB = ibV3(1, 0, 0);
	if (kind == PAIR_HINGE_LIMIT) {
		jd.enableLimit = true;
		jd.lowerLimit = -1.0;
		jd.upperLimit = 0.0;
	} else if (kind == PAIR_CONE) {
		jd.enableConeLimit = true;
		jd.coneAngle = 0.5;
	}
	ibJointId j = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(j));
	return j;
}

/* relative velocity at the joint (ball: of B's anchor point relative to A's, m/s) or relative angular speed
 * (limits, rad/s) */
static double relative_speed(ibBodyId a, ibBodyId b, int kind)
{
	if (kind != PAIR_BALL) return ibLength(ibSub(ibBody_GetAngularVelocity(b), ibBody_GetAngularVelocity(a)));
	ibVec3 p = ibBody_GetPosition(a); /* the joint is near (0, 0, 1.5): the anchors' velocities there */
	ibVec3 x = ibV3(0, 0, 1.5);
	ibVec3 ua = ibAdd(ibBody_GetLinearVelocity(a), ibCross(ibBody_GetAngularVelocity(a), ibSub(x, p)));
	ibVec3 ub = ibAdd(ibBody_GetLinearVelocity(b), ibCross(ibBody_GetAngularVelocity(b), ibSub(x, ibBody_GetPosition(b))));
	return ibLength(ibSub(ub, ua));
}

/* The joint correction of a sub-step h of a step H (h == H: a whole step). */
static void sub_step(int kind, ibJointSolver method, double h, double H)
{
	ibWorldId id = jt_world_method(method, IB_VEC3_ZERO);
	ibBodyId a, b;
	pair(id, kind, &a, &b);
	ibWorld* w = ib_world_get(id);
	assert_non_null(w);
	w->frameLength = H;
	w->recoveryFraction = h / H; /* as step.c sets it */
	assert_int_equal(ib_joints_position_correction(w, h), IB_OK);
	w->recoveryFraction = 1.0;
	const double e0 = kind == PAIR_BALL ? E0 : A0;
	double v = relative_speed(a, b, kind);
	print_message("kind %d, solver %d, sub-step %.1e s of %.4f s: relative speed %.4e (error / step %.4e)\n", kind,
	              (int)method, h, H, v, e0 / H);
	/* the speed that removes e0 h / H in h (to first order: the boxes turn) */
	JT_LE(fabs(v - e0 / H), 0.02 * e0 / H);
	ibDestroyWorld(id);
}

static void check(int kind, ibJointSolver method)
{
	sub_step(kind, method, 1e-4, 1.0 / 60.0);
	sub_step(kind, method, 1.0 / 60.0, 1.0 / 60.0); /* a whole step: all of it (the thesis) */
	/* through the public API: the error is gone after a step */
	ibWorldId w = jt_world_method(method, IB_VEC3_ZERO);
	ibBodyId a, b;
	ibJointId j = pair(w, kind, &a, &b);
	assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
	JT_LE(ibJoint_GetPositionError(j), 1e-6);
	if (kind == PAIR_HINGE_LIMIT) JT_LE(ibJoint_GetMotorValue(j), 1e-6);
	if (kind == PAIR_CONE) {
		double sw, tw;
		assert_int_equal(ibJoint_GetSwingTwist(j, &sw, &tw), IB_OK);
		JT_LE(sw - 0.5, 1e-6);
	}
	ibDestroyWorld(w);
}

static void test_ball_anchor_error(void** state)
{
	(void)state;
	check(PAIR_BALL, IB_SOLVER_ITERATIVE);
	check(PAIR_BALL, IB_SOLVER_LGS);
	check(PAIR_BALL, IB_SOLVER_LGS_SPARSE);
}

static void test_hinge_beyond_limit(void** state)
{
	(void)state;
	check(PAIR_HINGE_LIMIT, IB_SOLVER_ITERATIVE);
	check(PAIR_HINGE_LIMIT, IB_SOLVER_LGS);
}

static void test_outside_cone(void** state)
{
	(void)state;
	check(PAIR_CONE, IB_SOLVER_ITERATIVE);
	check(PAIR_CONE, IB_SOLVER_LGS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ball_anchor_error),
	    cmocka_unit_test(test_hinge_beyond_limit),
	    cmocka_unit_test(test_outside_cone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
