/* The joint sweeps that follow a contact impulse computed with the joints' response K_eff
 * (ib_contact_follow_checked, contact_joint_response.c) must bring the joints back to their velocity conditions
 * before the contact loop visits its next point. A hinge whose limit is at its stop, on a light body hung from
 * a heavy one (a 1 kg sphere leg at a 1000 kg table top, as in scenes/hinged_table.xml), has strongly coupled
 * rows: the ball part's point row turns the leg about the limit's axis, and the row-by-row sweeps (ball rows,
 * axis rows, limit row) converged at about 0.97 per sweep, so every follow ran to its cap of 100 sweeps
 * (22 000 joint sweeps and 22 ms per step of the hinged table). Since session 29 each such joint is first
 * solved as one block, all its rows at once, the limit row one-sided on its accumulated impulse
 * (ib_limits_block_follow_sweep, joint_limit.c).
 *
 * White box (the joint correction run as the step runs it, then a velocity kick to the leg as a contact impulse
 * would give it): one block sweep leaves the hinge's rows and its limit row at their targets to rounding, where
 * 20 row sweeps leave more than 1e-3 of the kick; a kick away from the stop is not held back by the limit row
 * (one-sided); the same at t0+h in the velocity correction's phase (the limit row's own accumulator there).
 * The joints' own limit loops use the same blocks (test_arm_on_its_stop). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"
#include "joints/joint_internal.h"

static const double H = 1.0 / 60.0;

typedef struct Leg {
	ibWorldId id;
	ibWorld* w;
	ibBodyId top, leg;
	ibJointId hinge;
} Leg;

/* the table's +x, -y leg: a 1000 kg top (2 x 1 x 0.2 m), a 1 kg sphere (r 0.1 m) hinged (axis y) at the top's
 * bottom corner, its centre 0.2 m outward and 0.3 m down, the lower limit 0 at the built pose */
static Leg build(void)
{
	Leg L;
	L.id = jt_world(ibV3(0, 0, -9.81));
	L.top = jt_box(L.id, ibV3(0, 0, 0.5), IB_QUAT_IDENTITY, ibV3(1, 0.5, 0.1), 2500.0);
	L.leg = jt_sphere(L.id, ibV3(1.1, -0.4, 0.1), 0.1, 1.0);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = L.top;
	jd.bodyB = L.leg;
	jd.localAnchorA = ibV3(0.9, -0.4, -0.1);
	jd.localAnchorB = ibV3(-0.2, 0, 0.3);
	jd.localAxisA = jd.localAxisB = ibV3(0, 1, 0);
	jd.localRefA = jd.localRefB = ibV3(1, 0, 0);
	jd.enableLimit = true;
	jd.lowerLimit = 0.0;
	jd.upperLimit = 0.5;
	L.hinge = ibCreateJoint(L.id, &jd);
	assert_true(ibJoint_IsValid(L.hinge));
	L.w = ib_world_get(L.id);
	assert_non_null(L.w);
	return L;
}

/* largest velocity error of the hinge's basic rows (m/s, rad/s) */
static double rows_error(ibWorld* w)
{
	ibJointStore* st = w->joints;
	double e = 0.0;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		ib_solver_prepare(w, c);
		e = fmax(e, ib_solver_projected_norm(c, ib_solver_velocity_error(w, c)));
	}
	return e;
}

/* the limit row's rate: the hinge angle's rate (rad/s; > 0 away from the lower stop) */
static double limit_rate(const Leg* L) { return ibBody_GetAngularVelocity(L->leg).y - ibBody_GetAngularVelocity(L->top).y; }

/* a contact impulse's effect on the leg: along x and down, turning it by spin about y (< 0: into its stop) */
static void kick(const Leg* L, double spin)
{
	assert_int_equal(ibBody_SetLinearVelocity(L->leg, ibV3(0.3, 0.1, -0.2)), IB_OK);
	assert_int_equal(ibBody_SetAngularVelocity(L->leg, ibV3(1.0, spin, 0.5)), IB_OK);
}

static void test_block_follow_at_stop(void** state)
{
	(void)state;
	/* phase 1 (the contact position loop at t0): after the joints' own correction */
	Leg A = build(), B = build();
	for (int k = 0; k < 2; ++k) assert_int_equal(ib_joints_position_correction(k ? B.w : A.w, H), IB_OK);
	kick(&A, -2.0);
	kick(&B, -2.0);
	double e0 = rows_error(A.w);
	assert_true(e0 > 0.1);
	assert_true(ib_limits_block_follow_sweep(A.w, H));
	double eBlock = rows_error(A.w), rBlock = limit_rate(&A);
	for (int i = 0; i < 20; ++i) {
		ib_limits_follow_sweep(B.w, H);
		ib_joints_velocity_sweep(B.w);
	}
	double eRows = fmax(rows_error(B.w), fabs(limit_rate(&B)));
	print_message("hinge at its stop, kicked (%.3f m/s): one block sweep leaves %.3e m/s and a limit rate of %.3e rad/s; "
	              "20 row sweeps leave %.3e\n",
	              e0, eBlock, rBlock, eRows);
	assert_true(eBlock <= 1e-12 * e0);
	assert_true(fabs(rBlock) <= 1e-12);
	assert_true(eRows > 1e-3 * e0); /* why: the rows one by one converge slowly */
	/* nothing left for the row sweeps */
	assert_false(ib_limits_follow_sweep(A.w, H));
	assert_false(ib_joints_velocity_sweep(A.w));
	ibDestroyWorld(A.id);
	ibDestroyWorld(B.id);

	/* a kick away from the stop (the leg turned outward about the hinge, plus a little off the hinge's motion):
	 * the limit row does not pull (one-sided, its accumulated impulse stays >= 0), the hinge's rows hold */
	Leg C = build();
	kick(&C, -2.0); /* pressed into its stop at t0: the joint correction loads the limit row */
	assert_int_equal(ib_joints_position_correction(C.w, H), IB_OK);
	ibJointStore* st = C.w->joints;
	const ibJoint* jc = &st->joints[C.hinge.index1 - 1];
	assert_true(jc->limitAcc > 0.0);
	ibVec3 om = ibV3(0.0, 2.0, 0.0), r = ibSub(ibBody_GetPosition(C.leg), ibV3(0.9, -0.4, 0.4));
	assert_int_equal(ibBody_SetAngularVelocity(C.leg, ibAdd(om, ibV3(0.2, 0.0, -0.1))), IB_OK);
	assert_int_equal(ibBody_SetLinearVelocity(C.leg, ibAdd(ibCross(om, r), ibV3(0.05, -0.02, 0.03))), IB_OK);
	ib_limits_block_follow_sweep(C.w, H);
	print_message("kicked away from the stop: rows %.3e m/s, limit rate %.3f rad/s, limit impulse %.3e N m s\n", rows_error(C.w),
	              limit_rate(&C), jc->limitAcc);
	assert_true(rows_error(C.w) <= 1e-12);
	assert_true(limit_rate(&C) > 1.0);
	assert_true(jc->limitAcc >= 0.0);
	ibDestroyWorld(C.id);
}

static void test_block_follow_velocity_phase(void** state)
{
	(void)state;
	/* phase 2 (the contact velocity loop at t0+h follows with h = 0): after the joints' velocity correction */
	Leg A = build();
	assert_int_equal(ib_joints_position_correction(A.w, H), IB_OK);
	kick(&A, -2.0); /* pressed into the stop: the velocity correction makes the limit row active */
	assert_int_equal(ib_joints_velocity_correction(A.w, H), IB_OK);
	kick(&A, -2.0);
	double e0 = rows_error(A.w);
	assert_true(ib_limits_block_follow_sweep(A.w, 0.0));
	print_message("velocity phase: %.3f m/s -> rows %.3e m/s, limit rate %.3e rad/s\n", e0, rows_error(A.w), limit_rate(&A));
	assert_true(rows_error(A.w) <= 1e-12 * e0);
	assert_true(fabs(limit_rate(&A)) <= 1e-12);
	assert_false(ib_joints_velocity_sweep(A.w)); /* its limit rows and basic rows: nothing left */
	ibDestroyWorld(A.id);
}

/* 60 steps, each converged: the most position and velocity sweeps of a step; returns the largest joint error */
static double run_steps(ibWorldId w, int* worstPos, int* worstVel)
{
	double err = 0.0;
	*worstPos = *worstVel = 0;
	for (int k = 0; k < 60; ++k) {
		jt_step(w, H);
		ibStepStats st = ibWorld_GetStepStats(w);
		assert_true(st.converged);
		*worstPos = st.positionIterations > *worstPos ? st.positionIterations : *worstPos;
		*worstVel = st.velocityIterations > *worstVel ? st.velocityIterations : *worstVel;
		err = fmax(err, fmax(st.maxPositionError, st.maxAngularError));
	}
	return err;
}

/* The joints' own correction (public API): a 1 kg sphere arm hinged to a static base, held horizontal by its
 * hinge's stop against gravity. Its limit loops (ib_limits_position_correction, ib_limits_velocity_correction)
 * swept the hinge's rows and the limit row one by one: 144 position and 227 velocity sweeps in every step, the
 * errors just under the tolerances. With the blocks: a few sweeps, the errors at rounding level. */
static void test_arm_on_its_stop(void** state)
{
	(void)state;
	ibWorldId w = jt_world(ibV3(0, 0, -9.81));
	ibBodyId base = jt_static(w, ibV3(0, 0, 1));
	ibBodyId arm = jt_sphere(w, ibV3(0.7, 0, 0.8), 0.1, 1.0);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = base;
	jd.bodyB = arm;
	jd.localAnchorA = ibV3(0.5, 0, 0);
	jd.localAnchorB = ibV3(-0.2, 0, 0.2);
	jd.localAxisA = jd.localAxisB = ibV3(0, 1, 0);
	jd.localRefA = jd.localRefB = ibV3(1, 0, 0);
	jd.enableLimit = true;
	jd.lowerLimit = -0.5;
	jd.upperLimit = 0.0; /* gravity turns the arm down, about +y: against the upper stop */
	ibJointId h = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(h));
	int worstPos, worstVel;
	double err = run_steps(w, &worstPos, &worstVel);
	double angle = ibJoint_GetMotorValue(h), lim = ibJoint_GetLimitImpulse(h);
	print_message("arm on its stop, 60 steps: at most %d position and %d velocity sweeps per step, joint errors <= %.3e, "
	              "angle %.3e rad, limit impulse %.4f N m s\n",
	              worstPos, worstVel, err, angle, lim);
	assert_true(worstPos <= 10 && worstVel <= 10); /* 144 and 227 before */
	assert_true(err <= 1e-9);
	assert_true(fabs(angle) <= 1e-6);
	/* the stop carries the arm's weight moment, m g r_x over the step (the arm's centre 0.2 m beyond the hinge
	 * axis, the load moment about it 1 * 9.81 * 0.2) */
	assert_true(fabs(fabs(lim) - 9.81 * 0.2 * H) <= 1e-6);
	ibDestroyWorld(w);
}

/* A slider's limit row acts at B's anchor along the rail (linear, with a lever arm): a 1 kg box on a static rail
 * along y, its anchor 0.3 m off its centre, gravity along the rail and across it, resting on its lower stop. The
 * stop carries m g_y h per step, the rows hold to rounding within a few sweeps. */
static void test_slider_on_its_stop(void** state)
{
	(void)state;
	ibWorldId w = jt_world(ibV3(0, -9.81, -9.81));
	ibBodyId base = jt_static(w, ibV3(0, 0, 0));
	ibBodyId box = jt_box(w, ibV3(0.3, 0, 0), IB_QUAT_IDENTITY, ibV3(0.05, 0.05, 0.05), 1000.0);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_SLIDER);
	jd.bodyA = base;
	jd.bodyB = box;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, ibV3(0, 0, 0), ibV3(0, 1, 0)), IB_OK);
	jd.enableLimit = true;
	jd.lowerLimit = 0.0;
	jd.upperLimit = 1.0;
	ibJointId s = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(s));
	int worstPos, worstVel;
	double err = run_steps(w, &worstPos, &worstVel);
	double y = ibBody_GetPosition(box).y, lim = ibJoint_GetLimitImpulse(s);
	print_message("slider on its stop, 60 steps: at most %d position and %d velocity sweeps per step, joint errors <= %.3e, "
	              "y %.3e m, limit impulse %.6f N s (m g h %.6f)\n",
	              worstPos, worstVel, err, y, lim, 9.81 * H);
	assert_true(worstPos <= 10 && worstVel <= 10);
	assert_true(err <= 1e-9);
	assert_true(fabs(y) <= 1e-6);
	assert_true(fabs(lim - 9.81 * H) <= 1e-6);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_block_follow_at_stop),
	    cmocka_unit_test(test_block_follow_velocity_phase),
	    cmocka_unit_test(test_arm_on_its_stop),
	    cmocka_unit_test(test_slider_on_its_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
