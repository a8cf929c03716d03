/* Sleeping of resting islands (src/dynamics/sleep.c, docs/contacts.md "Sleeping"): a dropped box
 * falls asleep at t_land + timeToSleep and then keeps a bit-identical pose; a second box dropped on
 * it wakes it and both fall asleep again, resting within eps_d + eps_c; user calls wake an island;
 * a swinging pendulum never sleeps (a hanging one does); enableSleep = false never sleeps; a
 * sleeping stack costs no contact points or sweeps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact_test_util.h"

#define EPSC 1e-4
#define EPSD 1e-5
#define H (1.0 / 200.0)
#define G 9.81

static void enable_sleeping(ibWorldId w)
{
	ibSolverSettings ss = ibWorld_GetSolverSettings(w);
	assert_false(ss.sleep.enabled); /* opt-in */
	ss.sleep.enabled = true;
	assert_int_equal(ibWorld_SetSolverSettings(w, &ss), IB_OK);
}

static ibWorldId make_world(void)
{
	ibWorldId w = ct_world_v(EPSC, EPSD, 1e-4);
	enable_sleeping(w);
	ct_ground(w, 0.0, ct_mat(0.0, 0.5, 0.5));
	return w;
}

/* unit cube of 1 kg with its centre at pos */
static ibBodyId make_box(ibWorldId w, ibVec3 pos, bool enableSleep)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = pos;
	bd.enableSleep = enableSleep;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = ct_mat(0.0, 0.5, 0.5);
	sd.mass = 1.0;
	ibBox box = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(b, &sd, &box);
	return b;
}

static void step(ibWorldId w)
{
	assert_int_equal(ibWorld_Step(w, H), IB_OK);
}

/* Steps until body b sleeps (at most T seconds); returns the time it fell asleep (or -1). */
static double step_until_asleep(ibWorldId w, ibBodyId b, double T)
{
	int n = (int)lround(T / H);
	for (int k = 0; k < n; ++k) {
		step(w);
		if (!ibBody_IsAwake(b)) return ibWorld_GetTime(w);
	}
	return -1.0;
}

/* the box falls asleep at t_land + timeToSleep (within a few steps), then its pose never changes */
static void test_box_falls_asleep(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	double drop = 0.2;
	ibBodyId b = make_box(w, ibV3(0, 0, 0.5 + drop), true);
	assert_true(ibBody_IsAwake(b));
	double tLand = sqrt(2.0 * drop / G);
	double T = ibWorld_GetSolverSettings(w).sleep.timeToSleep;
	double t = step_until_asleep(w, b, 3.0);
	printf("box dropped from %.2f m: asleep at t = %.4f s (t_land + timeToSleep = %.4f s)\n", drop, t, tLand + T);
	assert_true(t > 0.0);
	assert_true(t >= tLand + T - 2.0 * H);
	assert_true(t <= tLand + T + 0.1); /* settling after the impact (e = 0) takes a few steps */
	ibVec3 p = ibBody_GetPosition(b);
	ibQuat q = ibBody_GetRotation(b);
	assert_true(fabs(p.z - 0.5) <= EPSD + EPSC);
	assert_true(ibLengthSq(ibBody_GetLinearVelocity(b)) == 0.0 && ibLengthSq(ibBody_GetAngularVelocity(b)) == 0.0);
	for (int k = 0; k < 400; ++k) {
		step(w);
		ibVec3 p2 = ibBody_GetPosition(b);
		ibQuat q2 = ibBody_GetRotation(b);
		assert_memory_equal(&p, &p2, sizeof p);
		assert_memory_equal(&q, &q2, sizeof q);
		assert_false(ibBody_IsAwake(b));
	}
	ibStepStats st = ibWorld_GetStepStats(w);
	assert_int_equal(st.awakeBodies, 0);
	assert_int_equal(st.sleepingIslands, 1);
	assert_int_equal(st.contactPoints, 0);
	ibDestroyWorld(w);
}

/* a second box dropped on the sleeping one wakes it; both sleep again as one island, resting */
static void test_second_box_wakes(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId a = make_box(w, ibV3(0, 0, 0.5 + 0.05), true);
	assert_true(step_until_asleep(w, a, 3.0) > 0.0);
	double drop = 0.3;
	ibBodyId b = make_box(w, ibV3(0.1, -0.05, 1.5 + drop), true);
	bool woke = false;
	double pen = 0.0;
	int n = (int)lround(4.0 / H);
	int k = 0;
	for (; k < n; ++k) {
		step(w);
		if (ibBody_IsAwake(a)) woke = true;
		double za = ibBody_GetPosition(a).z, zb = ibBody_GetPosition(b).z;
		pen = fmax(pen, fmax(-(za - 0.5), (za + 0.5) - (zb - 0.5)));
		if (woke && !ibBody_IsAwake(a) && !ibBody_IsAwake(b)) break;
	}
	double tWake = ibWorld_GetTime(w);
	printf("second box: lower box woke = %d, both asleep again at t = %.3f s, max penetration %.3e m\n", woke, tWake, pen);
	assert_true(woke);
	assert_true(k < n);
	assert_false(ibBody_IsAwake(a));
	assert_false(ibBody_IsAwake(b));
	assert_true(pen <= EPSD + EPSC);
	ibVec3 pa = ibBody_GetPosition(a), pb = ibBody_GetPosition(b);
	assert_true(fabs(pa.z - 0.5) <= EPSD + EPSC && fabs(pb.z - 1.5) <= 2.0 * (EPSD + EPSC));
	assert_true(fabs(pb.x - 0.1) < 1e-2 && fabs(pb.y + 0.05) < 1e-2); /* it stayed where it landed */
	ibStepStats st = ibWorld_GetStepStats(w);
	assert_int_equal(st.sleepingIslands, 1); /* one island: the two boxes touch */
	assert_int_equal(st.awakeBodies, 0);
	ibDestroyWorld(w);
}

/* SetLinearVelocity / ApplyImpulse / ApplyForce on a sleeping body wake its whole island;
 * SetAwake(false) puts the island to sleep at once, SetAwake(true) wakes it */
static void test_user_calls_wake(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId a = make_box(w, ibV3(0, 0, 0.5 + EPSC / 2), true);
	ibBodyId b = make_box(w, ibV3(0, 0, 1.5 + EPSC), true);
	ibBodyId far = make_box(w, ibV3(5, 0, 0.5 + EPSC / 2), true);
	for (int round = 0; round < 4; ++round) {
		for (int k = 0; k < 600 && (ibBody_IsAwake(a) || ibBody_IsAwake(b) || ibBody_IsAwake(far)); ++k) step(w);
		assert_false(ibBody_IsAwake(a));
		assert_false(ibBody_IsAwake(b));
		assert_false(ibBody_IsAwake(far));
		assert_int_equal(ibWorld_GetStepStats(w).sleepingIslands, 2);
		switch (round) {
		case 0: assert_int_equal(ibBody_SetLinearVelocity(b, ibV3(0.01, 0, 0)), IB_OK); break;
		case 1: assert_int_equal(ibBody_ApplyImpulseAtPoint(a, ibV3(0.01, 0, 0), ibBody_GetPosition(a)), IB_OK); break;
		case 2: assert_int_equal(ibBody_ApplyForceToCenter(b, ibV3(0.1, 0, 0)), IB_OK); break;
		default: assert_int_equal(ibBody_SetAwake(a, true), IB_OK); break;
		}
		assert_true(ibBody_IsAwake(a)); /* the whole island of the two boxes */
		assert_true(ibBody_IsAwake(b));
		assert_false(ibBody_IsAwake(far)); /* another island */
		step(w);
	}
	/* explicit sleep: at once, with zero velocities */
	assert_int_equal(ibBody_SetLinearVelocity(far, ibV3(1, 0, 0)), IB_OK);
	step(w);
	assert_true(ibBody_IsAwake(far));
	assert_int_equal(ibBody_SetAwake(far, false), IB_OK);
	assert_false(ibBody_IsAwake(far));
	assert_true(ibLengthSq(ibBody_GetLinearVelocity(far)) == 0.0);
	/* static bodies cannot sleep; a body with sleep disabled cannot be put to sleep */
	ibBodyId c = make_box(w, ibV3(-5, 0, 0.5 + EPSC / 2), false);
	assert_int_not_equal(ibBody_SetAwake(c, false), IB_OK);
	assert_true(ibBody_IsAwake(c));
	ibDestroyWorld(w);
}

/* a pendulum on a ball joint never sleeps while it swings; hanging at rest it falls asleep, and a
 * joint destroyed wakes it */
static void test_pendulum(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.sleep.enabled = true;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(w, &bd);
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(1, 0, 0);
	ibBodyId bob = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	ibSphere s = {0.1};
	ibCreateSphereShape(bob, &sd, &s);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
	jd.bodyA = ground;
	jd.bodyB = bob;
	assert_int_equal(ibJointDef_SetWorldAnchors(&jd, ibV3(0, 0, 0), ibV3(0, 0, 0)), IB_OK);
	ibJointId j = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(j));
	int n = (int)lround(6.0 / H); /* about three periods of the 1 m pendulum */
	for (int k = 0; k < n; ++k) {
		step(w);
		assert_true(ibBody_IsAwake(bob));
	}
	/* hanging at rest it sleeps */
	ibDestroyJoint(j);
	ibBody_SetTransform(bob, ibV3(0, 0, -1), IB_QUAT_IDENTITY);
	ibBody_SetLinearVelocity(bob, IB_VEC3_ZERO);
	ibBody_SetAngularVelocity(bob, IB_VEC3_ZERO);
	assert_int_equal(ibJointDef_SetWorldAnchors(&jd, ibV3(0, 0, 0), ibV3(0, 0, 0)), IB_OK);
	j = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(j));
	double t0 = ibWorld_GetTime(w);
	double t = step_until_asleep(w, bob, 2.0);
	printf("hanging pendulum asleep after %.3f s (v = %g)\n", t - t0, ibLength(ibBody_GetLinearVelocity(bob)));
	assert_true(t > 0.0 && t - t0 <= wd.solver.sleep.timeToSleep + 2.0 * H);
	ibVec3 p = ibBody_GetPosition(bob);
	for (int k = 0; k < 100; ++k) step(w);
	ibVec3 p2 = ibBody_GetPosition(bob);
	assert_memory_equal(&p, &p2, sizeof p);
	assert_int_equal(ibDestroyJoint(j), IB_OK); /* destroying the joint wakes the bob: it falls */
	assert_true(ibBody_IsAwake(bob));
	for (int k = 0; k < 20; ++k) step(w);
	assert_true(ibBody_GetPosition(bob).z < p.z - 0.01);
	ibDestroyWorld(w);
}

/* enableSleep = false on the body, or sleeping off in the world: the resting box never sleeps */
static void test_sleep_disabled(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId b = make_box(w, ibV3(0, 0, 0.6), false);
	ibBodyId a = make_box(w, ibV3(3, 0, 0.6), true);
	ibBodyId c = make_box(w, ibV3(3, 0, 1.6 + 0.05), true); /* on a, which never sleeps */
	ibBody_EnableSleep(a, false);
	assert_false(ibBody_IsSleepEnabled(a));
	assert_true(ibBody_IsSleepEnabled(c));
	for (int k = 0; k < (int)lround(3.0 / H); ++k) {
		step(w);
		assert_true(ibBody_IsAwake(b));
		assert_true(ibBody_IsAwake(a));
		assert_true(ibBody_IsAwake(c)); /* same island as a */
	}
	ibDestroyWorld(w);

	ibWorldDef wd = ibDefaultWorldDef(); /* sleeping off (the default) */
	w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(0.0, 0.5, 0.5));
	b = make_box(w, ibV3(0, 0, 0.6), true);
	for (int k = 0; k < (int)lround(3.0 / H); ++k) {
		step(w);
		assert_true(ibBody_IsAwake(b));
	}
	assert_int_equal(ibWorld_GetStepStats(w).awakeBodies, 1);
	/* invalid settings are refused */
	ibSolverSettings ss = ibWorld_GetSolverSettings(w);
	ss.sleep.timeToSleep = -1.0;
	assert_int_not_equal(ibWorld_SetSolverSettings(w, &ss), IB_OK);
	ibDestroyWorld(w);
}

/* a sleeping stack of three resolves no contact points; awake it did */
static void test_sleeping_stack_costs_nothing(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId b[3];
	for (int i = 0; i < 3; ++i) b[i] = make_box(w, ibV3(0, 0, 0.5 + i * (1.0 + EPSC / 2) + EPSC / 2), true);
	step(w);
	ibStepStats awake = ibWorld_GetStepStats(w);
	assert_true(awake.contactPoints >= 12); /* 3 faces x 4 corners */
	assert_true(awake.contactIterations > 0);
	assert_true(step_until_asleep(w, b[2], 3.0) > 0.0);
	for (int i = 0; i < 3; ++i) assert_false(ibBody_IsAwake(b[i]));
	step(w);
	ibStepStats st = ibWorld_GetStepStats(w);
	printf("stack of 3: awake %d contact points, %d + %d contact sweeps; asleep %d points, %d + %d sweeps\n",
	       awake.contactPoints, awake.contactIterations, awake.contactVelocityIterations, st.contactPoints,
	       st.contactIterations, st.contactVelocityIterations);
	assert_int_equal(st.contactPoints, 0);
	assert_int_equal(st.restingPoints, 0);
	assert_int_equal(st.contactIterations, 0);
	assert_int_equal(st.contactVelocityIterations, 0);
	assert_int_equal(st.awakeBodies, 0);
	assert_int_equal(st.sleepingIslands, 1);
	assert_int_equal(ibWorld_GetContactCount(w), 0); /* no narrowphase for sleeping-sleeping / -static pairs */
	assert_int_equal(ibBody_SetAwake(b[1], true), IB_OK);
	assert_true(ibBody_IsAwake(b[0]) && ibBody_IsAwake(b[2]));
	step(w);
	st = ibWorld_GetStepStats(w);
	assert_true(ibWorld_GetContactCount(w) >= 3);
	assert_true(st.contactPoints >= 12);
	assert_int_equal(st.awakeBodies, 3);
	ibDestroyWorld(w);
}

/* a body created asleep floats until touched; a box falling on it wakes it */
static void test_created_asleep(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0, 0, 2.0);
	bd.isAwake = false;
	ibBodyId a = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	ibBox box = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(a, &sd, &box);
	assert_false(ibBody_IsAwake(a));
	for (int k = 0; k < 50; ++k) step(w);
	assert_true(ibBody_GetPosition(a).z == 2.0);
	ibBodyId b = make_box(w, ibV3(0, 0, 3.5 + 0.1), true);
	bool woke = false;
	for (int k = 0; k < 100 && !woke; ++k) {
		step(w);
		woke = ibBody_IsAwake(a);
	}
	assert_true(woke);
	assert_true(ibBody_IsAwake(b));
	for (int k = 0; k < 20; ++k) step(w);
	assert_true(ibBody_GetPosition(a).z < 2.0 - 1e-3); /* it falls now */
	/* destroying the ground wakes what sleeps on it */
	ibDestroyWorld(w);
	w = make_world();
	ibBodyId c = make_box(w, ibV3(0, 0, 0.5 + EPSC / 2), true);
	assert_true(step_until_asleep(w, c, 3.0) > 0.0);
	ibBodyId bodies[4];
	int nb = ibWorld_GetBodies(w, bodies, 4);
	assert_int_equal(nb, 2);
	assert_int_equal(ibDestroyBody(bodies[0]), IB_OK); /* the ground */
	assert_true(ibBody_IsAwake(c));
	ibDestroyWorld(w);
}

/* a moving kinematic body touching a sleeping box wakes it (and pushes it); creating a joint wakes both ends */
static void test_kinematic_and_joint_wake(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId a = make_box(w, ibV3(0, 0, 0.5 + EPSC / 2), true);
	ibBodyId c = make_box(w, ibV3(0, 4, 0.5 + EPSC / 2), true);
	assert_int_equal(ibBody_SetAwake(a, false), IB_OK);
	assert_int_equal(ibBody_SetAwake(c, false), IB_OK);
	assert_int_equal(ibWorld_GetStepStats(w).sleepingIslands, 0); /* stats are those of the last step */
	ibBodyDef kd = ibDefaultBodyDef();
	kd.type = IB_BODY_KINEMATIC;
	kd.position = ibV3(-1.6, 0, 0.5 + EPSC);
	kd.linearVelocity = ibV3(0.5, 0, 0);
	ibBodyId k = ibCreateBody(w, &kd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox box = {{0.5, 0.5, 0.4}};
	ibCreateBoxShape(k, &sd, &box);
	step(w);
	assert_false(ibBody_IsAwake(a)); /* not touching yet */
	assert_int_equal(ibWorld_GetStepStats(w).sleepingIslands, 2);
	bool woke = false;
	for (int i = 0; i < 400 && !woke; ++i) { /* 0.6 m gap at 0.5 m/s: 240 steps */
		step(w);
		woke = ibBody_IsAwake(a);
	}
	assert_true(woke);
	for (int i = 0; i < 40; ++i) step(w);
	assert_true(ibBody_GetPosition(a).x > 0.05); /* pushed along */
	assert_false(ibBody_IsAwake(c));
	/* a joint between the sleeping box c and the static ground wakes c */
	ibBodyId bodies[4];
	assert_true(ibWorld_GetBodies(w, bodies, 4) == 4);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
	jd.bodyA = bodies[0];
	jd.bodyB = c;
	assert_int_equal(ibJointDef_SetWorldAnchors(&jd, ibV3(0, 4, 1), ibV3(0, 4, 1)), IB_OK);
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	assert_true(ibBody_IsAwake(c));
	ibDestroyWorld(w);
}

/* a teleport next to a sleeping body wakes it, also after a time when nobody slept (the world's
 * "anyone asleep" shortcut is set again when a body falls asleep) */
static void test_teleport_wakes_after_all_awake(void** state)
{
	(void)state;
	ibWorldId w = make_world();
	ibBodyId a = make_box(w, ibV3(0, 0, 0.5 + EPSC / 2), true);
	ibBodyId b = make_box(w, ibV3(5, 0, 0.5 + EPSC / 2), true);
	assert_int_equal(ibBody_SetAwake(a, false), IB_OK);
	assert_int_equal(ibBody_SetAwake(a, true), IB_OK);
	assert_int_equal(ibBody_SetTransform(b, ibV3(6, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK); /* nobody asleep */
	assert_true(ibBody_IsAwake(a));
	assert_int_equal(ibBody_SetAwake(a, false), IB_OK);
	assert_false(ibBody_IsAwake(a));
	assert_int_equal(ibBody_SetTransform(b, ibV3(6, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK); /* far: no wake */
	assert_false(ibBody_IsAwake(a));
	assert_int_equal(ibBody_SetTransform(b, ibV3(1.0 + EPSC / 2, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK);
	assert_true(ibBody_IsAwake(a));
	/* after a step the broadphase answers (sleep.c wake_candidate): the same decisions */
	assert_int_equal(ibBody_SetTransform(b, ibV3(6, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK);
	assert_int_equal(ibBody_SetAwake(a, false), IB_OK);
	step(w);
	assert_false(ibBody_IsAwake(a));
	assert_int_equal(ibBody_SetTransform(b, ibV3(1.0 + 3 * EPSC, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK);
	assert_false(ibBody_IsAwake(a)); /* 2 eps_c apart: beyond the wake margin eps_c */
	assert_int_equal(ibBody_SetTransform(b, ibV3(1.0 + EPSC / 2, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK);
	assert_true(ibBody_IsAwake(a));
	/* and destroying a static body next to a sleeping one wakes it */
	assert_int_equal(ibBody_SetTransform(b, ibV3(6, 0, 0.5 + EPSC / 2), IB_QUAT_IDENTITY), IB_OK);
	ibBodyDef sd = ibDefaultBodyDef();
	sd.type = IB_BODY_STATIC;
	sd.position = ibV3(0, -1.0 - EPSC / 2, 0.5 + EPSC / 2);
	ibBodyId c = ibCreateBody(w, &sd);
	ibShapeDef shd = ibDefaultShapeDef();
	ibBox box = {{0.5, 0.5, 0.5}};
	assert_true(ibShape_IsValid(ibCreateBoxShape(c, &shd, &box)));
	assert_int_equal(ibBody_SetAwake(a, false), IB_OK);
	step(w);
	assert_false(ibBody_IsAwake(a));
	assert_int_equal(ibDestroyBody(c), IB_OK);
	assert_true(ibBody_IsAwake(a));
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_box_falls_asleep),
	    cmocka_unit_test(test_second_box_wakes),
	    cmocka_unit_test(test_user_calls_wake),
	    cmocka_unit_test(test_pendulum),
	    cmocka_unit_test(test_sleep_disabled),
	    cmocka_unit_test(test_sleeping_stack_costs_nothing),
	    cmocka_unit_test(test_created_asleep),
	    cmocka_unit_test(test_kinematic_and_joint_wake),
	    cmocka_unit_test(test_teleport_wakes_after_all_awake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
