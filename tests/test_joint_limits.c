/* Joint limits (src/joints/joint_limit.c): a hinge pendulum released above its lower angle limit
 * swings into it and never passes it by more than eps_d (checked every step), then rests on it; a
 * slider under gravity stops at its lower limit within eps_d; limit restitution e = 0.5 rebounds
 * with e times the approach speed; the API validates limits. Iterative and LGS worlds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/joint.h"
#include "joint_test_util.h"

static const double H = 0.01;

/* Hinge angle of B about z from the world x axis (B's reference at creation), measured from the pose alone. */
static double hinge_angle(ibBodyId b)
{
	ibVec3 rb = ibRotate(ibBody_GetRotation(b), ibV3(1, 0, 0));
	return atan2(ibCross(ibV3(1, 0, 0), rb).z, rb.x);
}

/* Static base, 1 m link (box 1 x 0.1 x 0.1, 1000 kg/m^3) along +x hinged at the origin about z. */
static ibJointId pendulum(ibWorldId w, ibBodyId* link, double lower, double upper, double e)
{
	ibBodyId base = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 0.0);
	*link = jt_box(w, ibV3(0.5, 0, 0), IB_QUAT_IDENTITY, ibV3(0.5, 0.05, 0.05), 1000.0);
	ibJointDef d = ibDefaultJointDef(IB_JOINT_HINGE);
	d.bodyA = base;
	d.bodyB = *link;
	assert_int_equal(ibJointDef_SetWorldFrame(&d, ibV3(0, 0, 0), ibV3(0, 0, 1)), IB_OK);
	d.localRefA = d.localRefB = ibV3(1, 0, 0);
	d.enableLimit = true;
	d.lowerLimit = lower;
	d.upperLimit = upper;
	d.limitRestitution = e;
	ibJointId j = ibCreateJoint(w, &d);
	assert_true(ibJoint_IsValid(j));
	return j;
}

static void hinge_rests_on_limit(ibJointSolver method)
{
	ibWorldId w = jt_world_method(method, ibV3(0, -9.81, 0));
	ibBodyId link;
	const double lower = -IB_PI / 4.0;
	ibJointId j = pendulum(w, &link, lower, IB_PI / 2.0, 0.0);
	double eps = 1e-6; /* default angularTolerance */
	double minAngle = 0.0, over = 0.0;
	bool reached = false;
	for (int i = 0; i < 400; ++i) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		double a = hinge_angle(link);
		minAngle = fmin(minAngle, a);
		over = fmax(over, lower - a);
		if (a < lower + 1e-3) reached = true;
	}
	JT_LE(over, eps);
	assert_true(reached);
	/* resting on the limit under gravity: angle at the limit, no angular velocity, impulse pushing */
	JT_LE(fabs(hinge_angle(link) - lower), 2.0 * eps);
	JT_LE(ibLength(ibBody_GetAngularVelocity(link)), 1e-5);
	assert_true(ibJoint_GetLimitImpulse(j) > 0.0);
	/* hinge rows still hold */
	JT_LE(ibJoint_GetPositionError(j), 1e-6);
	ibDestroyWorld(w);
}

static void test_hinge_limit_iterative(void** s)
{
	(void)s;
	hinge_rests_on_limit(IB_SOLVER_ITERATIVE);
}

static void test_hinge_limit_lgs(void** s)
{
	(void)s;
	hinge_rests_on_limit(IB_SOLVER_LGS);
}

/* Static rail, 1 kg box sliding along y; anchors at the centres, so the slider position is y_B. */
static ibJointId slider(ibWorldId w, ibBodyId* box, double lower, double upper, double e)
{
	ibBodyId base = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 0.0);
	*box = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 1000.0);
	ibJointDef d = ibDefaultJointDef(IB_JOINT_SLIDER);
	d.bodyA = base;
	d.bodyB = *box;
	assert_int_equal(ibJointDef_SetWorldFrame(&d, ibV3(0, 0, 0), ibV3(0, 1, 0)), IB_OK);
	d.enableLimit = true;
	d.lowerLimit = lower;
	d.upperLimit = upper;
	d.limitRestitution = e;
	ibJointId j = ibCreateJoint(w, &d);
	assert_true(ibJoint_IsValid(j));
	return j;
}

static void slider_stops(ibJointSolver method)
{
	ibWorldId w = jt_world_method(method, ibV3(0, -9.81, 0));
	ibBodyId box;
	ibJointId j = slider(w, &box, -0.5, 1.0, 0.0);
	double eps = 1e-6, over = 0.0;
	for (int i = 0; i < 200; ++i) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		over = fmax(over, -0.5 - ibBody_GetPosition(box).y);
	}
	JT_LE(over, eps);
	JT_LE(fabs(ibBody_GetPosition(box).y + 0.5), eps);
	JT_LE(ibLength(ibBody_GetLinearVelocity(box)), 1e-5);
	/* per step the limit carries the weight: impulse m g h */
	JT_LE(fabs(ibJoint_GetLimitImpulse(j) - 1.0 * 9.81 * H), 1e-6);
	ibDestroyWorld(w);
}

static void test_slider_limit_iterative(void** s)
{
	(void)s;
	slider_stops(IB_SOLVER_ITERATIVE);
}

static void test_slider_limit_lgs(void** s)
{
	(void)s;
	slider_stops(IB_SOLVER_LGS);
}

/* Without gravity a slider moving at -1 m/s hits its lower limit at 0.25 s, rebounds at e times its
 * speed, hits the upper limit at 0.95 s; a hinge turning at -2 rad/s hits its lower limit at 0.25 s
 * and the upper one at 1.05 s. Each stop: v_after = -e v_before (v_before: the velocity after the
 * preceding step, the approach speed the stop sees). */
static void restitution(ibJointSolver method)
{
	const double e = 0.5;
	ibWorldId w = jt_world_method(method, ibV3(0, 0, 0));
	ibBodyId box, link;
	slider(w, &box, -0.25, 0.1, e);
	pendulum(w, &link, -0.5, 0.3, e);
	assert_int_equal(ibBody_SetLinearVelocity(box, ibV3(0, -1, 0)), IB_OK);
	assert_int_equal(ibBody_SetAngularVelocity(link, ibV3(0, 0, -2)), IB_OK);
	/* the link's centre moves with the rotation: set the consistent linear velocity too */
	assert_int_equal(ibBody_SetLinearVelocity(link, ibCross(ibV3(0, 0, -2), ibV3(0.5, 0, 0))), IB_OK);
	jtRebounds rs = {-1.0, {0}, 0}, rh = {-2.0, {0}, 0};
	double yOver = 0.0, aOver = 0.0;
	int firstS = -1, firstH = -1;
	for (int i = 0; i < 120; ++i) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		double y = ibBody_GetPosition(box).y, a = hinge_angle(link);
		yOver = fmax(yOver, fmax(-0.25 - y, y - 0.1));
		aOver = fmax(aOver, fmax(-0.5 - a, a - 0.3));
		jt_track(&rs, ibBody_GetLinearVelocity(box).y);
		jt_track(&rh, ibBody_GetAngularVelocity(link).z);
		if (rs.n == 1 && firstS < 0) firstS = i;
		if (rh.n == 1 && firstH < 0) firstH = i;
	}
	JT_LE(yOver, 1e-6);
	JT_LE(aOver, 1e-6);
	assert_int_equal(rs.n, 2);
	assert_int_equal(rh.n, 2);
	for (int k = 0; k < 2; ++k) {
		JT_LE(fabs(rs.ratio[k] - e), 1e-6);
		JT_LE(fabs(rh.ratio[k] - e), 1e-6);
	}
	/* the stops happen in the steps that reach the limits (0.25 s = end of step 25) */
	assert_true(firstS >= 23 && firstS <= 25);
	assert_true(firstH >= 23 && firstH <= 25);
	ibDestroyWorld(w);
}

static void test_restitution_iterative(void** s)
{
	(void)s;
	restitution(IB_SOLVER_ITERATIVE);
}

static void test_restitution_lgs(void** s)
{
	(void)s;
	restitution(IB_SOLVER_LGS);
}

static void test_limit_api(void** s)
{
	(void)s;
	ibWorldId w = jt_world_method(IB_SOLVER_ITERATIVE, ibV3(0, 0, 0));
	ibBodyId link;
	ibJointId j = pendulum(w, &link, -0.5, 0.5, 0.0);
	double lo = 0, up = 0;
	assert_true(ibJoint_GetLimit(j, &lo, &up));
	assert_true(lo == -0.5 && up == 0.5);
	assert_int_equal(ibJoint_SetLimit(j, true, 0.5, -0.5), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetLimit(j, true, -4.0, 0.0), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetLimit(j, true, -1.0, NAN), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetLimitRestitution(j, 1.5), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetLimitRestitution(j, 0.25), IB_OK);
	assert_true(ibJoint_GetLimitRestitution(j) == 0.25);
	assert_int_equal(ibJoint_SetLimit(j, false, 0.0, 0.0), IB_OK);
	assert_false(ibJoint_GetLimit(j, NULL, NULL));
	/* limits on a joint that has no coordinate */
	ibJointDef d = ibDefaultJointDef(IB_JOINT_BALL);
	d.bodyA = ibJoint_GetBodyA(j);
	d.bodyB = link;
	d.enableLimit = true;
	d.upperLimit = 1.0;
	assert_false(ibJoint_IsValid(ibCreateJoint(w, &d)));
	/* a disabled limit: the pendulum turns freely past the old range */
	assert_int_equal(ibBody_SetAngularVelocity(link, ibV3(0, 0, 3)), IB_OK);
	assert_int_equal(ibBody_SetLinearVelocity(link, ibCross(ibV3(0, 0, 3), ibV3(0.5, 0, 0))), IB_OK);
	for (int i = 0; i < 30; ++i) assert_int_equal(ibWorld_Step(w, H), IB_OK);
	assert_true(hinge_angle(link) > 0.8);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hinge_limit_iterative), cmocka_unit_test(test_hinge_limit_lgs),
	    cmocka_unit_test(test_slider_limit_iterative), cmocka_unit_test(test_slider_limit_lgs),
	    cmocka_unit_test(test_restitution_iterative), cmocka_unit_test(test_restitution_lgs),
	    cmocka_unit_test(test_limit_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
