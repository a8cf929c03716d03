/* Contacts on jointed bodies with the joint system's response K_eff (§5.4.2, contact_joint_response.c,
 * ibContactSettings.jointResponse) against the free bodies' K alternated with joint sweeps. Points where
 * the joints change the normal response by less than a factor 4 keep the free K (here the 1 kg table).
 *
 * The model: a "table", a box chassis (2 x 1 x 0.2 m, mass M) with four legs, spheres of radius 0.1 m and
 * 1 kg, each held by a fixed joint at a corner 0.4 m below the chassis' centre; only the legs touch the
 * ground. Default solver settings (eps_d = 1e-6 m, eps_c = 1e-4 m, the LGS for the joints).
 *
 * Standing (60 Hz, 2 s): the legs' contacts must hold the chassis at its height (within 1e-5 m) with
 * every leg's penetration within eps_d + eps_c. Measured: the deepest leg below 1e-6 m for
 * M = 1 ... 100 000 kg, the chassis within 1e-6 m, the legs' spin below 2e-6 rad/s, 9360 (free K) / 982 /
 * 955 / 809 / 708 contact sweeps (M = 1, 100, 1000, 10 000, 100 000) over 120 steps, every step converged (before
 * session 30's check of K_eff impulses, ib_contact_follow_checked: 1635 / 3011 / 2238 / 2119, 0-3 unconverged). With the free K the loops ran into the stall rule every step (M = 100:
 * 69 820 sweeps) and the heavier tables sank: 8.8 mm at M = 1000, 0.4 m (through the ground) at
 * M = 10 000.
 *
 * Dropped (h = 1 ms, from 5 cm, e = 0.5 between legs and ground, no friction): the whole table bounces,
 * so the chassis' next peak is e^2 times the drop height (0.2494 measured at this step and sampling, for
 * every M; within 2e-3 asserted). With the free K the collision loop of the 1000 kg table stalled and
 * it did not bounce at all (peak 0); at M = 100 it bounced correctly but needed 1651 collision sweeps
 * against 32.
 *
 * On hinged legs (test_hinged_table): the legs' angle limits carry the load, and K_eff must hold a limit
 * at its stop (joint_limit.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "ibdyn/ibdyn.h"

#define G 9.81
#define CHASSIS_Z 0.5 /* rest height of the chassis' centre */
#define LEG_R 0.1

typedef struct Table {
	ibWorldId w;
	ibBodyId chassis, leg[4];
	ibJointId fix[4];
} Table;

/* legs: 0 fixed joints below the corners; 1 hinges (axis y) at the chassis' bottom corners, the legs'
 * centres 0.2 m outward, with an angle limit that the load presses them against (the chassis' weight
 * splays the legs; the stop is at the built pose) */
static int g_legs = 0;
static bool g_circular = false; /* ball-jointed legs: a circular swing cone instead of the elliptic one */

/* build() into g_into (a world with its ground) if valid, else into a new world; the table moved by g_dx along x */
static ibWorldId g_into = {0};
static double g_dx = 0.0;

static void build(Table* t, double mass, bool response, double lift, ibMaterial legMat)
{
	ibShapeDef sd = ibDefaultShapeDef();
	t->w = g_into;
	if (!ibWorld_IsValid(t->w)) {
		ibWorldDef wd = ibDefaultWorldDef();
		wd.gravity = ibV3(0, 0, -G);
		t->w = ibCreateWorld(&wd);
		assert_true(ibWorld_IsValid(t->w));
		ibSolverSettings ss = ibWorld_GetSolverSettings(t->w);
		assert_true(ss.contact.jointResponse); /* the default */
		ss.contact.jointResponse = response;
		assert_int_equal(ibWorld_SetSolverSettings(t->w, &ss), IB_OK);
		ibBodyDef gd = ibDefaultBodyDef();
		gd.type = IB_BODY_STATIC;
		gd.position = ibV3(0, 0, -0.5);
		ibBodyId g = ibCreateBody(t->w, &gd);
		sd.material = (ibMaterial){1.0, legMat.staticFriction, legMat.dynamicFriction};
		ibBox gb = {ibV3(20, 20, 0.5)};
		assert_true(ibShape_IsValid(ibCreateBoxShape(g, &sd, &gb)));
	}
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(g_dx, 0, CHASSIS_Z + lift);
	t->chassis = ibCreateBody(t->w, &bd);
	sd.mass = mass;
	sd.material = legMat;
	ibBox cb = {ibV3(1, 0.5, 0.1)};
	assert_true(ibShape_IsValid(ibCreateBoxShape(t->chassis, &sd, &cb)));
	for (int i = 0; i < 4; ++i) {
		double x = (i & 1) ? 0.9 : -0.9, y = (i & 2) ? 0.4 : -0.4;
		double out = g_legs ? ((i & 1) ? 0.2 : -0.2) : 0.0;
		bd.position = ibV3(g_dx + x + out, y, LEG_R + lift);
		t->leg[i] = ibCreateBody(t->w, &bd);
		sd.mass = 1.0;
		ibSphere s = {LEG_R};
		assert_true(ibShape_IsValid(ibCreateSphereShape(t->leg[i], &sd, &s)));
		ibJointDef jd = ibDefaultJointDef(g_legs == 2 ? IB_JOINT_BALL : g_legs ? IB_JOINT_HINGE : IB_JOINT_FIXED);
		jd.bodyA = t->chassis;
		jd.bodyB = t->leg[i];
		jd.localAnchorA = ibV3(x, y, LEG_R - CHASSIS_Z);
		jd.localAnchorB = ibV3(0, 0, 0);
		const double down = CHASSIS_Z - 0.1 - LEG_R; /* from a chassis' bottom corner to a leg's centre */
		if (g_legs) {
			jd.localAnchorA = ibV3(x, y, -0.1);
			jd.localAnchorB = ibV3(-out, 0, down);
		}
		if (g_legs == 2) { /* the cone's axis straight down, the leg on its long side (outward) */
			jd.localAxisA = ibV3(0, 0, -1);
			jd.localRefA = ibV3(out > 0.0 ? 1 : -1, 0, 0);
			jd.localAxisB = ibV3(out, 0, -down);
			jd.localRefB = ibV3(0, 1, 0);
			jd.enableConeLimit = true;
			jd.coneAngle = atan2(fabs(out), down);
			jd.coneAngle2 = g_circular ? jd.coneAngle : 0.3;
		} else if (g_legs) {
			jd.localAxisA = jd.localAxisB = ibV3(0, 1, 0);
			jd.localRefA = jd.localRefB = ibV3(1, 0, 0);
			jd.enableLimit = true;
			jd.lowerLimit = (i & 1) ? 0.0 : -0.5;
			jd.upperLimit = (i & 1) ? 0.5 : 0.0;
		}
		t->fix[i] = ibCreateJoint(t->w, &jd);
		assert_true(ibJoint_IsValid(t->fix[i]));
	}
}

typedef struct StandRun {
	long sweeps;      /* contact position + velocity sweeps */
	double pen;       /* deepest leg penetration (m) */
	double drift;     /* largest |chassis z - rest| (m) */
	double jointPos;  /* largest joint position error (m) */
	double jointAng;  /* largest joint angular error (rad) */
	double spin;      /* largest angular speed of a leg after the first step (rad/s) */
	int unconverged;  /* steps reported not converged */
	double limitMin;  /* hinged legs: smallest limit impulse of a leg in the last step (N m s) */
	double limitSum;  /* their sum */
	double rise;      /* largest rise of the total (kinetic + potential) energy above its start (J) */
} StandRun;

static double energy(ibWorldId w)
{
	ibWorldInvariants iv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &iv), IB_OK);
	return iv.kineticEnergy + iv.potentialEnergy;
}

static StandRun stand(double mass, bool response, ibMaterial mat)
{
	Table t;
	build(&t, mass, response, 0.0, mat);
	StandRun r = {0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0};
	const double e0 = energy(t.w);
	for (int k = 0; k < 120; ++k) {
		assert_int_equal(ibWorld_Step(t.w, 1.0 / 60.0), IB_OK);
		r.rise = fmax(r.rise, energy(t.w) - e0);
		ibStepStats st = ibWorld_GetStepStats(t.w);
		r.sweeps += st.contactIterations + st.contactVelocityIterations;
		if (!st.converged) ++r.unconverged;
		for (int i = 0; i < 4; ++i) {
			r.pen = fmax(r.pen, LEG_R - ibBody_GetPosition(t.leg[i]).z);
			r.jointPos = fmax(r.jointPos, ibJoint_GetPositionError(t.fix[i]));
			r.jointAng = fmax(r.jointAng, ibJoint_GetAngularError(t.fix[i]));
			ibVec3 av = ibBody_GetAngularVelocity(t.leg[i]);
			if (k > 0) r.spin = fmax(r.spin, sqrt(av.x * av.x + av.y * av.y + av.z * av.z));
		}
		r.drift = fmax(r.drift, fabs(ibBody_GetPosition(t.chassis).z - CHASSIS_Z));
	}
	r.limitMin = INFINITY;
	for (int i = 0; i < 4; ++i) {
		double cone = 0.0;
		if (g_legs == 2) assert_int_equal(ibJoint_GetBallLimitImpulses(t.fix[i], &cone, NULL), IB_OK);
		r.limitMin = fmin(r.limitMin, g_legs == 2 ? cone : ibJoint_GetLimitImpulse(t.fix[i]));
		r.limitSum += g_legs == 2 ? cone : ibJoint_GetLimitImpulse(t.fix[i]);
	}
	ibDestroyWorld(t.w);
	printf("table %g kg standing%s, mu %g, joint response %s: %ld contact sweeps, %d steps not converged, deepest leg %.3e m, "
	       "chassis drift %.3e m, joint errors %.3e m %.3e rad, leg spin %.3e rad/s, limit impulse >= %.3e N m s (sum %.6e), energy rise %.3e J\n",
	       mass, g_legs == 2 ? " on ball-jointed legs" : g_legs ? " on hinged legs" : "", mat.staticFriction, response ? "on" : "off", r.sweeps, r.unconverged, r.pen,
	       r.drift, r.jointPos, r.jointAng, r.spin, g_legs ? r.limitMin : 0.0, r.limitSum, r.rise);
	return r;
}

/* spinMax: the legs' largest angular speed (rad/s) */
static void assert_stands(const StandRun* r, double spinMax)
{
	const ibSolverSettings s = ibDefaultSolverSettings();
	const double epsC = ibDefaultWorldDef().collision.contactTolerance;
	assert_true(r->pen <= s.contact.contactPositionTolerance + epsC);
	assert_true(r->drift <= 1e-5);
	assert_true(r->jointPos <= s.positionTolerance && r->jointAng <= s.angularTolerance);
	/* a leg spinning inside its fixed joint (233 rad/s while the joint correction followed K_eff-sized
	 * impulses with position sweeps only) */
	assert_true(r->spin <= spinMax);
}

static void test_table_stands(void** state)
{
	(void)state;
	const double masses[] = {1.0, 100.0, 1000.0, 10000.0, 100000.0};
	for (int i = 0; i < 5; ++i) {
		StandRun on = stand(masses[i], true, ibDefaultShapeDef().material);
		assert_stands(&on, 1e-4);
		/* measured 6-8 per step with K_eff (13-25 before session 30), every step converged; the 1 kg
		 * table keeps the free K (78 sweeps per step) */
		if (masses[i] >= 100.0) {
			assert_true(on.sweeps <= 40 * 120);
			assert_true(on.unconverged <= 6);
		}
	}
}

/* the free K needs far more sweeps already where it still holds the table */
static void test_table_sweeps_against_free_k(void** state)
{
	(void)state;
	StandRun on = stand(100.0, true, ibDefaultShapeDef().material), off = stand(100.0, false, ibDefaultShapeDef().material);
	assert_stands(&on, 1e-4);
	assert_true(on.sweeps * 10 < off.sweeps); /* measured 1629 against 69 820 */
}

typedef struct DropRun {
	double ratio; /* next peak of the chassis / drop height */
	long sweeps;  /* collision sweeps */
} DropRun;

static DropRun drop(double mass, bool response)
{
	const double lift = 0.05, e = 0.5, h = 1e-3;
	Table t;
	build(&t, mass, response, lift, (ibMaterial){e, 0.0, 0.0});
	DropRun r = {0.0, 0};
	bool up = false;
	double peak = 0.0;
	for (int k = 0; k < 400; ++k) {
		assert_int_equal(ibWorld_Step(t.w, h), IB_OK);
		r.sweeps += ibWorld_GetStepStats(t.w).collisionIterations;
		double z = ibBody_GetPosition(t.chassis).z - CHASSIS_Z, vz = ibBody_GetLinearVelocity(t.chassis).z;
		if (vz > 0.0) up = true;
		if (up) peak = fmax(peak, z);
		assert_true(isfinite(z));
	}
	ibDestroyWorld(t.w);
	r.ratio = peak / lift;
	printf("table %g kg dropped from %g m, e = %g, joint response %s: peak ratio %.5f (e^2 = %.5f), %ld collision sweeps\n", mass,
	       lift, e, response ? "on" : "off", r.ratio, e * e, r.sweeps);
	return r;
}

static void test_table_bounces(void** state)
{
	(void)state;
	const double masses[] = {1.0, 100.0, 1000.0};
	for (int i = 0; i < 3; ++i) {
		DropRun on = drop(masses[i], true);
		assert_true(fabs(on.ratio - 0.25) <= 2e-3);
		if (masses[i] >= 100.0) assert_true(on.sweeps <= 100); /* measured 32-33 (the 1 kg table: free K, 178) */
	}
	DropRun off = drop(100.0, false);
	assert_true(fabs(off.ratio - 0.25) <= 2e-3); /* the same physics, more sweeps (1651) */
}

/* The table on hinged legs whose angle limits carry the load (the chassis' weight splays the legs). The
 * probes of K_eff hold a limit at its stop like the joint's other rows, and the joint sweeps after each
 * K_eff impulse hold it too (joint_limit.c, ib_limits_response_sweep and ib_limits_follow_sweep). Before,
 * the probes saw free hinges (ratio > 1/4: the free K): frictionless, the 100 kg table sank by 4.9 mm
 * and the 1000 kg one diverged; with friction 0.5 the 100 kg table stood only after 124 284 sweeps, none
 * of its steps converged, and the 1000 kg one collapsed by 0.27 m.
 * K_eff takes a limit row as two-sided, but it is one-sided: a friction impulse that turns a leg off its stop
 * meets the leg's response, not the table's. Up to session 29 the 10 000 kg table with friction flew off (40 m in
 * 120 steps, or a NaN in its second step, depending on the build), the frictionless one and the 1000 kg one
 * with friction ended 8-9 and 4-6 of their 120 steps unconverged. Now such an impulse is scaled back where the
 * followed joints' response to it exceeds twice K_eff's (ib_contact_follow_checked), and the probes solve each
 * hinge at its stop as one block (ib_limits_block_response_sweep; with the rows one by one every probe ran its
 * 100 sweeps and K_eff came out 2-3 times too small). Measured now: every step converged for 1 ... 10 000 kg,
 * frictionless and with friction 0.5, the chassis within 7e-7 m (1 kg: 5e-7), 909 / 921 sweeps at 10 000 kg
 * (frictionless / friction), the energy at most 0.04 J above its start at 10 000 kg (M g times 4e-7 m). */
static void test_hinged_table(void** state)
{
	(void)state;
	g_legs = 1;
	const ibMaterial frictionless = {0.0, 0.0, 0.0}, rough = {0.0, 0.5, 0.5};
	const double masses[] = {1.0, 100.0, 1000.0, 10000.0};
	for (int i = 0; i < 4; ++i) {
		StandRun r = stand(masses[i], true, frictionless);
		assert_stands(&r, 1e-4);
		assert_true(r.limitMin > 0.0); /* every leg hangs on its stop */
		/* the stops carry the whole moment of the load, 0.2 m times M g over the step: the step's limit impulses
		 * include those of the contact loops' joint sweeps (ib_limits_report; before, only the joints' own
		 * loops were counted, 0.44 of 8.18 N m s at 1000 kg) */
		assert_true(fabs(r.limitSum - 0.2 * masses[i] * G / 60.0) <= 1e-6 * masses[i]);
		assert_true(r.unconverged <= 2);
		if (masses[i] >= 100.0) assert_true(r.sweeps <= 150 * 120); /* measured 8-11 per step */
		/* no energy gained beyond the loops' tolerances (the chassis may stand eps_d higher) */
		assert_true(r.rise <= 2e-6 * (masses[i] + 4.0) * G);
	}
	for (int i = 0; i < 3; ++i) {
		StandRun r = stand(masses[i], true, rough);
		assert_stands(&r, 1e-4); /* (the 1 kg table's feet are held by friction, its stops carry nothing) */
		assert_true(r.unconverged <= 2);
		assert_true(r.rise <= 2e-6 * (masses[i] + 4.0) * G);
	}
	g_legs = 0;
}

/* The 10 000 kg table on hinged legs with friction 0.5 (test_hinged_table): it flew off up to session 29 (40 m
 * in 120 steps with 12 steps reported unconverged, or a non-finite state in its second step, depending on the
 * build). It must stand, gain no energy beyond the loops' tolerances, and converge. Measured: the chassis within
 * 6.9e-7 m, 0.04 J above the start energy at most (M g times 4e-7 m), every step converged, 921 sweeps. */
static void test_heavy_hinged_table_with_friction(void** state)
{
	(void)state;
	g_legs = 1;
	const double mass = 10000.0;
	StandRun r = stand(mass, true, (ibMaterial){0.0, 0.5, 0.5});
	assert_stands(&r, 1e-4);
	assert_true(r.drift <= 2e-6);
	assert_true(r.rise <= 2e-6 * (mass + 4.0) * G);
	assert_true(r.limitMin > 0.0); /* the stops still carry part of the load (measured >= 173 N m s per leg) */
	assert_true(r.unconverged <= 2);
	g_legs = 0;
}

/* On ball-jointed legs (the same table, the hinges replaced by ball joints): each leg's swing cone (axis straight
 * down, half-angles atan(0.2 / 0.3) outward and 0.3 rad sideways) holds it at the built pose, on the cone's long
 * side, and the load presses it there. K_eff holds a cone or twist row at its stop as an equality
 * (joint_limit_ball.c). The old code, whose probes saw a free ball joint, let the frictionless 100 kg table sink
 * by 5.1 mm (none of its 120 steps converged, joint errors 1e-4 m, the legs turning at 0.59 rad/s) and the
 * 1000 kg one diverge after 40 steps. Measured now: 1 / 100 kg 49 075 / 2168 sweeps, every step converged, the
 * chassis within 1.1e-6 m; with friction 0.5 5040 / 3552 sweeps, 0 / 1 steps unconverged. Not yet: 1000 kg diverges within 25 steps (the one-sided row taken as two-sided, as
 * for the hinged 10 000 kg table), and a cone of 0.1 rad sideways made the 100 kg table diverge as well. A leg
 * turns freely about its own axis (nothing holds its twist), so its spin is bounded more loosely than a hinged
 * or fixed leg's. */
static void test_ball_jointed_table(void** state)
{
	(void)state;
	g_legs = 2;
	const ibMaterial frictionless = {0.0, 0.0, 0.0}, rough = {0.0, 0.5, 0.5};
	const double masses[] = {1.0, 100.0};
	for (int i = 0; i < 2; ++i) {
		StandRun r = stand(masses[i], true, frictionless);
		assert_stands(&r, 1e-2); /* measured 2.6e-4 rad/s at 100 kg, about the legs' free axes */
		assert_true(r.limitMin > 0.0);
		/* without friction the cones carry the whole moment of the load: 0.2 m times M g, over the step */
		assert_true(fabs(r.limitSum - 0.2 * masses[i] * G / 60.0) <= 1e-6 * masses[i]);
		assert_true(r.unconverged <= 2);
		/* the joints' follow of a K_eff impulse solved directly (joint_follow.c), the probes of K_eff too: 1214
		 * contact sweeps over the 120 steps at 100 kg (2168 with the sweeps alone, whose follows often ran their 100) */
		if (masses[i] >= 100.0) assert_true(r.sweeps <= 15 * 120);
	}
	for (int i = 0; i < 2; ++i) {
		StandRun r = stand(masses[i], true, rough);
		assert_stands(&r, 1e-2); /* measured 5.1e-3 rad/s at 100 kg (2.8e-3 with the follow swept) */
		assert_true(r.unconverged <= 2);
		if (masses[i] >= 100.0) assert_true(r.sweeps <= 15 * 120); /* measured 1340 (3568 swept) */
	}
	/* 10 000 kg still fails (the elliptic cone's curvature under the load, met explicitly: see
	 * test_ball_jointed_table_circular below and README "Known problems"). It blew
	 * up while finite: chassis 1.4e5 m away, legs at 2.4e7 rad/s, every step IB_OK (session 26); then the speed
	 * bounds flagged it after 9 steps (session 27). Since large joint errors left by an unconverged step are
	 * removed at the rate of a whole step in sub-steps (session 28, tests/test_joint_recovery.c) it no longer
	 * flies off: it collapses onto the ground, with the legs turning at up to 500 rad/s, and the steps say so.
	 * Asserted: the table stands, or the world reports divergence, or no step whose joint errors exceed 10
	 * tolerances is reported converged (measured: 118 of the 120 steps unconverged). */
	Table t;
	build(&t, 10000.0, true, 0.0, frictionless);
	ibResult res = IB_OK;
	int k = 0, unconverged = 0;
	double vmax = 0.0;
	bool honest = true; /* no step with large joint errors claimed convergence */
	for (; k < 120 && res == IB_OK; ++k) {
		res = ibWorld_Step(t.w, 1.0 / 60.0);
		for (int i = 0; i < 4 && res == IB_OK; ++i) vmax = fmax(vmax, ibLength(ibBody_GetAngularVelocity(t.leg[i])));
		ibStepStats ss = ibWorld_GetStepStats(t.w);
		unconverged += !ss.converged;
		if (ss.converged && ss.maxPositionError > 1e-5) honest = false;
	}
	double z = ibBody_GetPosition(t.chassis).z;
	printf("table 10000 kg on ball-jointed legs: %s after %d steps (%d unconverged), legs up to %.3e rad/s, chassis z %.6g m (%s)\n",
	       res == IB_OK ? "IB_OK" : ibResultString(res), k, unconverged, vmax, z, ibWorld_GetLastError(t.w));
	if (res != IB_OK)
		assert_true(res == IB_ERR_DIVERGED && ibWorld_HasDiverged(t.w));
	else if (!(fabs(z - CHASSIS_Z) <= 1e-3 && vmax <= 1.0))
		assert_true(honest && isfinite(z) && unconverged >= 60);
	ibDestroyWorld(t.w);
	g_legs = 0;
}

/* The same tables on circular cones (the leg on the boundary anywhere): 1000 and 10 000 kg stand, every step converged.
 * With the follows and probes solved directly (joint_follow.c, session 32) in 1133 and 921 contact sweeps over the 120
 * steps; swept, 9761 and 71 244. The elliptic cone above fails at these loads: its boundary's curvature along the
 * azimuth, times the load, is a stiffness that the step's velocity rows (their direction at t0) meet explicitly; the
 * legs swing sideways with the sign alternating and growing ~3x per step from step 4 (docs/contacts.md "Joint
 * response"). */
static void test_ball_jointed_table_circular(void** state)
{
	(void)state;
	g_legs = 2;
	g_circular = true;
	const ibMaterial frictionless = {0.0, 0.0, 0.0};
	const double masses[] = {1000.0, 10000.0};
	for (int i = 0; i < 2; ++i) {
		StandRun r = stand(masses[i], true, frictionless);
		assert_stands(&r, 0.1); /* measured 4.5e-3 and 1.7e-2 rad/s */
		assert_true(r.unconverged <= 2);
		assert_true(r.sweeps <= 20 * 120);
	}
	g_circular = false;
	g_legs = 0;
}

/* Contact loops per island (contact_graph.c, session 33): two tables 8 m apart, each iterated on its own (its points,
 * its joint rows, the energy of its bodies where the loop keeps its best sweep), move exactly as each alone in its
 * own world, and the loops take no more sweeps than the slower table alone. Case 1: 1 and 100 kg on fixed legs with
 * the free K (joint response off; the 100 kg table's loops run into the stall rule, the 1 kg table's converge). As one
 * loop the 1 kg table, converged, was swept on with its joint rows until the other one stalled (its points and rows
 * visited 34 900 times instead of 4680 in 60 steps), and those sweeps moved it by 3.0e-15 m. Case 2: 100 and
 * 10 000 kg on hinged legs with K_eff (the velocity loop keeps its best sweep): as one loop 2.0e-14 m. */
static void islands_case(int legs, bool response, double m0, double m1)
{
	g_legs = legs;
	const ibMaterial rough = {0.0, 0.5, 0.5};
	const double masses[2] = {m0, m1};
	enum { STEPS = 60 };
	ibVec3 alone[2][5];
	long sweepsAlone[2] = {0, 0};
	for (int i = 0; i < 2; ++i) {
		Table t;
		g_dx = 8.0 * i;
		build(&t, masses[i], response, 0.0, rough);
		for (int k = 0; k < STEPS; ++k) {
			assert_int_equal(ibWorld_Step(t.w, 1.0 / 60.0), IB_OK);
			ibStepStats st = ibWorld_GetStepStats(t.w);
			sweepsAlone[i] += st.contactIterations + st.contactVelocityIterations;
		}
		alone[i][0] = ibBody_GetPosition(t.chassis);
		for (int j = 0; j < 4; ++j) alone[i][1 + j] = ibBody_GetPosition(t.leg[j]);
		ibDestroyWorld(t.w);
	}
	Table t[2];
	g_dx = 0.0;
	build(&t[0], masses[0], response, 0.0, rough);
	g_into = t[0].w;
	g_dx = 8.0;
	build(&t[1], masses[1], response, 0.0, rough);
	g_into = (ibWorldId){0};
	g_dx = 0.0;
	long sweeps = 0;
	for (int k = 0; k < STEPS; ++k) {
		assert_int_equal(ibWorld_Step(t[0].w, 1.0 / 60.0), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(t[0].w);
		sweeps += st.contactIterations + st.contactVelocityIterations;
	}
	double diff = 0.0;
	for (int i = 0; i < 2; ++i)
		for (int j = 0; j < 5; ++j) {
			ibVec3 p = ibBody_GetPosition(j == 0 ? t[i].chassis : t[i].leg[j - 1]), q = alone[i][j];
			diff = fmax(diff, fmax(fabs(p.x - q.x), fmax(fabs(p.y - q.y), fabs(p.z - q.z))));
		}
	ibDestroyWorld(t[0].w);
	printf("tables of %g and %g kg%s, joint response %s, 8 m apart, %d steps: %ld contact sweeps (alone %ld and %ld), largest "
	       "difference of a body's position from the table alone %.3e m\n", m0, m1, legs ? " on hinged legs" : "",
	       response ? "on" : "off", STEPS, sweeps, sweepsAlone[0], sweepsAlone[1], diff);
	/* exactly: the same operations on each table as alone */
	assert_true(diff == 0.0);
	if (!response) assert_true(sweeps <= (sweepsAlone[0] > sweepsAlone[1] ? sweepsAlone[0] : sweepsAlone[1]));
	g_legs = 0;
}

static void test_tables_per_island(void** state)
{
	(void)state;
	islands_case(0, false, 1.0, 100.0);
	islands_case(1, true, 100.0, 10000.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_stands),
		cmocka_unit_test(test_table_sweeps_against_free_k),
		cmocka_unit_test(test_table_bounces),
		cmocka_unit_test(test_hinged_table),
		cmocka_unit_test(test_heavy_hinged_table_with_friction),
		cmocka_unit_test(test_ball_jointed_table),
		cmocka_unit_test(test_ball_jointed_table_circular),
		cmocka_unit_test(test_tables_per_island),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
