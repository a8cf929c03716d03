/* Swing cone and twist limits of ball joints (src/joints/joint_limit_ball.c), iterative and LGS:
 * - a damped ball-jointed pendulum released 70 deg from the horizontal cone axis (cone 45 deg) never
 *   leaves the cone by more than eps_d (checked every step, from the body poses alone) and comes to
 *   rest on the cone's boundary at its lowest point; the same with an elliptic cone (30/60 deg);
 * - a cube spinning about the joint axis stops at its twist limit within eps_d and stays there;
 * - restitution 0.5: swing and twist rebound at half the approach speed within 1e-6, both twist stops;
 * - the API validates the new fields; ibJoint_GetSwingTwist agrees with the pose measurement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/joint.h"
#include "joint_test_util.h"

static const double H = 0.01;
static const double EPS_D = 1e-6; /* default angularTolerance */

/* Shortest rotation taking the unit x onto the unit d. */
static ibQuat rotation_to(ibVec3 x, ibVec3 d)
{
	ibVec3 ax = ibCross(x, d);
	double s = ibLength(ax);
	if (s < 1e-12) return IB_QUAT_IDENTITY;
	return ibQuatFromAxisAngle(ibScale(1.0 / s, ax), atan2(s, ibDot(x, d)));
}

/* Swing of B's axis (body x) from the world x axis and its azimuth about x from world y towards z. */
static double swing_of(ibBodyId b, double* psi)
{
	ibVec3 d = ibRotate(ibBody_GetRotation(b), ibV3(1, 0, 0));
	if (psi) *psi = atan2(d.z, d.y);
	return atan2(sqrt(d.y * d.y + d.z * d.z), d.x);
}

/* Elliptic bound theta_max(psi) with half-angles t1 (towards y) and t2 (towards z). */
static double theta_max(double psi, double t1, double t2)
{
	return 1.0 / sqrt(cos(psi) * cos(psi) / (t1 * t1) + sin(psi) * sin(psi) / (t2 * t2));
}

/* Static base at the origin, 1 m link (box 1 x 0.1 x 0.1) starting along d0, ball joint at the
 * origin with A's axis +x (reference +y) and B's axis along the link. */
static ibJointId cone_pendulum(ibWorldId w, ibBodyId* link, ibVec3 d0, double t1, double t2, double e)
{
	ibBodyId base = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 0.0);
	*link = jt_box(w, ibScale(0.5, d0), rotation_to(ibV3(1, 0, 0), d0), ibV3(0.5, 0.05, 0.05), 1000.0);
	ibJointDef d = ibDefaultJointDef(IB_JOINT_BALL);
	d.bodyA = base;
	d.bodyB = *link;
	assert_int_equal(ibJointDef_SetWorldAnchors(&d, ibV3(0, 0, 0), ibV3(0, 0, 0)), IB_OK);
	assert_int_equal(ibJointDef_SetWorldAxes(&d, ibV3(1, 0, 0), d0), IB_OK);
	d.localAxisB = ibV3(1, 0, 0);
	d.localRefA = ibV3(0, 1, 0);
	d.enableConeLimit = true;
	d.coneAngle = t1;
	d.coneAngle2 = t2;
	d.limitRestitution = e;
	ibJointId j = ibCreateJoint(w, &d);
	assert_true(ibJoint_IsValid(j));
	return j;
}

static void cone_rests(ibJointSolver method, double t1, double t2)
{
	ibWorldId w = jt_world_method(method, ibV3(0, -9.81, 0));
	ibBodyId link;
	const double a0 = 70.0 * IB_PI / 180.0;
	ibVec3 d0 = ibV3(cos(a0), -sin(a0) * cos(0.5), sin(a0) * sin(0.5)); /* below and beside the cone */
	ibJointId j = cone_pendulum(w, &link, d0, t1, t2, 0.0);
	assert_int_equal(ibBody_SetDamping(link, 2.0, 2.0), IB_OK);
	double over = 0.0, swMax = 0.0;
	for (int i = 0; i < 1200; ++i) {
		jt_step(w, H);
		double psi, sw = swing_of(link, &psi);
		over = fmax(over, sw - theta_max(psi, t1, t2 > 0.0 ? t2 : t1));
		swMax = fmax(swMax, sw);
	}
	JT_LE(over, EPS_D);
	/* at rest on the boundary, at its lowest point: psi = pi (towards -y), swing = t1 */
	double psi, sw = swing_of(link, &psi);
	JT_LE(fabs(sw - t1), 2.0 * EPS_D);
	JT_LE(fabs(fabs(psi) - IB_PI), 1e-4);
	JT_LE(ibLength(ibBody_GetAngularVelocity(link)), 1e-4);
	double cone, twist;
	assert_int_equal(ibJoint_GetBallLimitImpulses(j, &cone, &twist), IB_OK);
	assert_true(cone > 0.0 && twist == 0.0);
	JT_LE(ibJoint_GetPositionError(j), 1e-6);
	double s2, t;
	assert_int_equal(ibJoint_GetSwingTwist(j, &s2, &t), IB_OK);
	JT_LE(fabs(s2 - sw), 1e-9);
	ibDestroyWorld(w);
}

static void test_cone_iterative(void** s)
{
	(void)s;
	cone_rests(IB_SOLVER_ITERATIVE, IB_PI / 4.0, 0.0);
}

static void test_cone_lgs(void** s)
{
	(void)s;
	cone_rests(IB_SOLVER_LGS, IB_PI / 4.0, 0.0);
}

static void test_elliptic_cone_iterative(void** s)
{
	(void)s;
	cone_rests(IB_SOLVER_ITERATIVE, IB_PI / 6.0, IB_PI / 3.0);
}

static void test_elliptic_cone_lgs(void** s)
{
	(void)s;
	cone_rests(IB_SOLVER_LGS, IB_PI / 6.0, IB_PI / 3.0);
}

/* Static base, cube (0.2 m, isotropic inertia) centred on the ball joint at the origin; A's and B's
 * axis +x, references +y. */
static ibJointId cube_joint(ibWorldId w, ibBodyId* cube, bool cone, double t, bool twist, double lo, double up, double e)
{
	ibBodyId base = jt_box(w, ibV3(-0.5, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 0.0);
	*cube = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.1, 0.1, 0.1), 1000.0);
	ibJointDef d = ibDefaultJointDef(IB_JOINT_BALL);
	d.bodyA = base;
	d.bodyB = *cube;
	assert_int_equal(ibJointDef_SetWorldFrame(&d, ibV3(0, 0, 0), ibV3(1, 0, 0)), IB_OK);
	d.localRefA = d.localRefB = ibV3(0, 1, 0);
	d.enableConeLimit = cone;
	d.coneAngle = t;
	d.enableTwistLimit = twist;
	d.lowerTwist = lo;
	d.upperTwist = up;
	d.limitRestitution = e;
	ibJointId j = ibCreateJoint(w, &d);
	assert_true(ibJoint_IsValid(j));
	return j;
}

/* Twist of the cube about x (no swing in these tests: its axis stays on x). */
static double twist_of(ibBodyId b)
{
	ibVec3 r = ibRotate(ibBody_GetRotation(b), ibV3(0, 1, 0));
	return atan2(r.z, r.y);
}

static void twist_stops(ibJointSolver method)
{
	ibWorldId w = jt_world_method(method, ibV3(0, 0, 0));
	ibBodyId cube;
	ibJointId j = cube_joint(w, &cube, true, 0.3, true, -0.5, 0.4, 0.0);
	assert_int_equal(ibBody_SetAngularVelocity(cube, ibV3(6, 0, 0)), IB_OK); /* 6 rad/s: reaches 0.4 in 0.067 s */
	double over = 0.0;
	for (int i = 0; i < 100; ++i) {
		jt_step(w, H);
		over = fmax(over, twist_of(cube) - 0.4);
		double t;
		assert_int_equal(ibJoint_GetSwingTwist(j, NULL, &t), IB_OK);
		JT_LE(fabs(t - twist_of(cube)), 1e-9);
	}
	JT_LE(over, EPS_D);
	JT_LE(fabs(twist_of(cube) - 0.4), 2.0 * EPS_D);
	JT_LE(ibLength(ibBody_GetAngularVelocity(cube)), 1e-6);
	double sw;
	assert_int_equal(ibJoint_GetSwingTwist(j, &sw, NULL), IB_OK);
	JT_LE(sw, 1e-9);
	ibDestroyWorld(w);
}

static void test_twist_iterative(void** s)
{
	(void)s;
	twist_stops(IB_SOLVER_ITERATIVE);
}

static void test_twist_lgs(void** s)
{
	(void)s;
	twist_stops(IB_SOLVER_LGS);
}

/* e = 0.5. Twist: the cube turns at -2 rad/s about x, hits -0.5 at 0.25 s, rebounds at 1 rad/s, hits
 * 0.3 at 1.05 s. Swing: a second cube turns at 1.5 rad/s about z (its axis x swings in the xy plane),
 * hits the 0.3 rad cone at 0.2 s, rebounds at 0.75 rad/s, hits the other side at 1.0 s. */
static void restitution(ibJointSolver method)
{
	const double e = 0.5;
	ibWorldId w = jt_world_method(method, ibV3(0, 0, 0));
	ibBodyId ct, cs;
	cube_joint(w, &ct, false, 0.0, true, -0.5, 0.3, e);
	cube_joint(w, &cs, true, 0.3, false, 0.0, 0.0, e);
	assert_int_equal(ibBody_SetAngularVelocity(ct, ibV3(-2, 0, 0)), IB_OK);
	assert_int_equal(ibBody_SetAngularVelocity(cs, ibV3(0, 0, 1.5)), IB_OK);
	jtRebounds rt = {-2.0, {0}, 0}, rs = {1.5, {0}, 0};
	double tOver = 0.0, sOver = 0.0;
	for (int i = 0; i < 130; ++i) {
		jt_step(w, H);
		double t = twist_of(ct);
		tOver = fmax(tOver, fmax(-0.5 - t, t - 0.3));
		sOver = fmax(sOver, swing_of(cs, NULL) - 0.3);
		jt_track(&rt, ibBody_GetAngularVelocity(ct).x);
		jt_track(&rs, ibBody_GetAngularVelocity(cs).z);
	}
	JT_LE(tOver, EPS_D);
	JT_LE(sOver, EPS_D);
	assert_int_equal(rt.n, 2);
	assert_int_equal(rs.n, 2);
	for (int k = 0; k < 2; ++k) {
		JT_LE(fabs(rt.ratio[k] - e), 1e-6);
		JT_LE(fabs(rs.ratio[k] - e), 1e-6);
	}
	/* no velocity in the other DOFs */
	ibVec3 wt = ibBody_GetAngularVelocity(ct), ws = ibBody_GetAngularVelocity(cs);
	JT_LE(fabs(wt.y) + fabs(wt.z), 1e-9);
	JT_LE(fabs(ws.x) + fabs(ws.y), 1e-9);
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

static void test_api(void** s)
{
	(void)s;
	ibWorldId w = jt_world_method(IB_SOLVER_ITERATIVE, ibV3(0, 0, 0));
	ibBodyId cube;
	ibJointId j = cube_joint(w, &cube, true, 0.5, true, -0.5, 0.5, 0.0);
	assert_int_equal(ibJoint_SetConeLimit(j, true, 0.0, 0.0), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetConeLimit(j, true, 0.5, 4.0), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetConeLimit(j, true, NAN, 0.0), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetTwistLimit(j, true, 0.5, -0.5), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetTwistLimit(j, true, -4.0, 0.0), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibJoint_SetConeLimit(j, true, 0.2, 0.6), IB_OK);
	ibJointDef d;
	assert_int_equal(ibJoint_GetDef(j, &d), IB_OK);
	assert_true(d.enableConeLimit && d.coneAngle == 0.2 && d.coneAngle2 == 0.6);
	/* cone and twist limits only on ball joints */
	ibJointDef h = ibDefaultJointDef(IB_JOINT_HINGE);
	h.bodyA = ibJoint_GetBodyA(j);
	h.bodyB = cube;
	h.enableTwistLimit = true;
	h.lowerTwist = -0.1;
	h.upperTwist = 0.1;
	assert_false(ibJoint_IsValid(ibCreateJoint(w, &h)));
	/* disabled: the cube turns freely past the old twist range */
	assert_int_equal(ibJoint_SetTwistLimit(j, false, 0.0, 0.0), IB_OK);
	assert_int_equal(ibBody_SetAngularVelocity(cube, ibV3(3, 0, 0)), IB_OK);
	for (int i = 0; i < 30; ++i) jt_step(w, H);
	assert_true(twist_of(cube) > 0.8);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cone_iterative),          cmocka_unit_test(test_cone_lgs),
	    cmocka_unit_test(test_elliptic_cone_iterative), cmocka_unit_test(test_elliptic_cone_lgs),
	    cmocka_unit_test(test_twist_iterative),         cmocka_unit_test(test_twist_lgs),
	    cmocka_unit_test(test_restitution_iterative),   cmocka_unit_test(test_restitution_lgs),
	    cmocka_unit_test(test_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
