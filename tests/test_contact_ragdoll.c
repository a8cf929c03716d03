/* A humanoid ragdoll (11 bodies, ball joints with swing cones and twist limits, limited hinges;
 * ragdoll_test_util.h) thrown onto a box ground at 60 Hz from random orientations, heights and spins: the
 * scene every user of a physics engine tries first. Found by a random probe in session 27, before the
 * fixes:
 *  - with friction (mu 0.5 each, summed), 3 of 10 drops gained 0.9 to 6.4 kJ and one went to NaN: a point
 *    with the joints' response K_eff took its friction from the transient velocity right after its normal
 *    impulse, before the joints followed it (a 92 m/s slip where the joints leave a few m/s; now
 *    ib_contact_friction_velocity_followed), and K_eff between two jointed bodies (the chest on its own
 *    thigh) made the position sweeps diverge (now such points keep the free K);
 *  - without friction, 2 of 10 gained 14 and 340 J: a joint correction with several cones at their stops
 *    left the pelvis at 1700 rad/s, a spurious solution 28 rad round (now the step is redone as halves,
 *    step.c spun_up).
 * Asserted: every step IB_OK, the energy never above its start by more than 1e-3 J (measured at most 6e-6 J),
 * no body through the ground, joint errors and limit excesses within their tolerances after every step (since
 * session 32). Not asserted (README "Known problems"): with friction many steps of a ragdoll lying on the ground
 * end unconverged, and a step after an unconverged impact can raise the energy by up to ~13 J (of ~300). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "contact_test_util.h"
#include "ragdoll_test_util.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

static double urand(unsigned* s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffffff) / 16777216.0;
}

static double energy(ibWorldId w)
{
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	return inv.kineticEnergy + inv.potentialEnergy;
}

typedef struct DropRun {
	double gain;   /* largest E(t) - E(0) (J) */
	double rise;   /* largest E(t) - min E(s <= t) (J), not asserted (README "Known problems") */
	double below;  /* deepest point of a body below the ground's top (m) */
	double joint;  /* largest joint position error (m) */
	double over;   /* largest excess over a limit (rad) */
	double speed;  /* largest body speed after the last step (m/s) */
	int unconverged, lastSecond; /* steps reported unconverged, in all / in the last 60 */
} DropRun;

/* seed: orientation, height, spin; mu: each shape's friction coefficients (the pair's is their sum) */
static DropRun drop(int seed, double mu, double seconds)
{
	unsigned s = (unsigned)seed * 7919u;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibBody_IsValid(ct_ground(w, 0.0, ct_mat(0.0, mu, mu))));
	Ragdoll r;
	ibQuat q = ibQuatNormalize(ibQ(urand(&s) - 0.5, urand(&s) - 0.5, urand(&s) - 0.5, urand(&s) - 0.5));
	ibVec3 p = ibV3(0.3 * (urand(&s) - 0.5), 0.3 * (urand(&s) - 0.5), 1.3 + 1.5 * urand(&s));
	rd_build(w, &r, q, p, (ibMaterial){0.0, mu, mu});
	ibVec3 om = ibV3(4 * (urand(&s) - 0.5), 4 * (urand(&s) - 0.5), 4 * (urand(&s) - 0.5));
	for (int i = 0; i < RD_BODIES; ++i) {
		assert_true(ibBody_IsValid(r.body[i]));
		assert_int_equal(ibBody_SetAngularVelocity(r.body[i], om), IB_OK);
		assert_int_equal(ibBody_SetLinearVelocity(r.body[i], ibCross(om, ibSub(ibBody_GetPosition(r.body[i]), p))), IB_OK);
	}
	for (int j = 0; j < RD_JOINTS; ++j) assert_true(ibJoint_IsValid(r.joint[j]));
	DropRun d = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0};
	const double e0 = energy(w);
	double emin = e0;
	const int steps = (int)(seconds * 60.0 + 0.5);
	for (int k = 0; k < steps; ++k) {
		ibResult res = ibWorld_Step(w, 1.0 / 60.0);
		if (res != IB_OK) printf("seed %d, mu %g, step %d: %s\n", seed, mu, k, ibWorld_GetLastError(w));
		assert_int_equal(res, IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		d.unconverged += !st.converged;
		d.lastSecond += !st.converged && k >= steps - 60;
		d.joint = fmax(d.joint, st.maxPositionError);
		const double e = energy(w);
		d.gain = fmax(d.gain, e - e0);
		emin = fmin(emin, e);
		d.rise = fmax(d.rise, e - emin);
		for (int i = 0; i < RD_BODIES; ++i) d.below = fmax(d.below, -rd_lowest(&r, i));
		for (int j = 0; j < RD_JOINTS; ++j) {
			if (r.ball[j]) {
				double sw, tw;
				assert_int_equal(ibJoint_GetSwingTwist(r.joint[j], &sw, &tw), IB_OK);
				d.over = fmax(d.over, fmax(sw - r.cone[j], fmax(tw - r.twHi[j], r.twLo[j] - tw)));
			} else {
				double a = ibJoint_GetMotorValue(r.joint[j]);
				d.over = fmax(d.over, fmax(a - r.hi[j], r.lo[j] - a));
			}
		}
	}
	for (int i = 0; i < RD_BODIES; ++i) d.speed = fmax(d.speed, ibLength(ibBody_GetLinearVelocity(r.body[i])));
	printf("ragdoll seed %2d, mu %.1f, %.1f s: energy gain %.3e J (E0 %.1f J, largest rise %.3e J), deepest %.2e m, joint "
	       "error %.2e m, limit excess %.2e rad, %d of %d steps unconverged (%d in the last second), speeds at the end <= %.2e m/s\n",
	       seed, mu, seconds, d.gain, e0, d.rise, d.below, d.joint, d.over, d.unconverged, steps, d.lastSecond, d.speed);
	ibDestroyWorld(w);
	return d;
}

static void check(const DropRun* d)
{
	assert_true(d->gain <= 1e-3);
	assert_true(d->below <= 0.05); /* measured at most 2.2e-2 m, in a landing */
	/* the joints hold after every step, also after contact loops that ended unconverged: each jointed group is
	 * brought back onto its joints directly after them (ib_joints_project_direct, session 32). Measured at most
	 * 1.0e-6 m and 9.4e-7 rad; before, landings left up to 5.2e-3 m and cones exceeded by up to 6.7e-2 rad */
	assert_true(d->joint <= 2.0 * ibDefaultSolverSettings().positionTolerance);
	assert_true(d->over <= 1e-5);
}

static void test_ragdoll_drops_with_friction(void** state)
{
	(void)state;
	/* 4, 6 and 10 gained 6.4, 4.6 and 0.96 kJ; 2 went to NaN at 3.1 s (10: 1.0e6 J once the friction was fixed
	 * alone, from the chest-on-thigh point). 40 (session 28) gained 40 kJ: a landing step ended unconverged
	 * with a shoulder 3.8 mm apart and its cone exceeded by 0.045 rad, and the next step's time-of-contact
	 * search removed both within each of its re-simulations, of down to 5e-7 s (now in proportion to the
	 * sub-step's share of the step: tests/test_joint_recovery.c). */
	const int slow[] = {1, 2, 4, 6, 10, 40}, quick[] = {4, 10, 40};
	const int n = IBDYN_SLOW_TESTS ? 6 : 3;
	for (int i = 0; i < n; ++i) {
		DropRun d = drop(IBDYN_SLOW_TESTS ? slow[i] : quick[i], 0.5, IBDYN_SLOW_TESTS ? 4.0 : 1.5);
		check(&d);
	}
}

static void test_ragdoll_drops_frictionless(void** state)
{
	(void)state;
	/* 1 and 6 gained 14 and 340 J (the pelvis spun to 1700 rad/s by one joint correction) */
	const int seeds[] = {1, 6};
	for (int i = 0; i < (IBDYN_SLOW_TESTS ? 2 : 1); ++i) {
		DropRun d = drop(seeds[IBDYN_SLOW_TESTS ? i : 1], 0.0, IBDYN_SLOW_TESTS ? 4.0 : 1.5);
		check(&d);
	}
}

/* Lying on the ground after the landing, with friction: the steps converge. A jointed body's static-friction
 * anchors, taken at several instants, need not agree with its joints (11 sticking points on 10 jointed
 * bodies); seed 8's position loop cycled at 2-4e-6 m until the stall rule ended it in every step after the
 * landing (202 of 240 steps unconverged, all of the last 60), at ~30 ms per step. After a stalled loop
 * jointed bodies now start from fresh anchors (contact_set.c): 0 of the last 60 in seeds 5, 7, 8 and 9. */
static void test_ragdoll_rests_converged(void** state)
{
	(void)state;
	const int seeds[] = {8, 5, 7};
	for (int i = 0; i < (IBDYN_SLOW_TESTS ? 3 : 1); ++i) {
		DropRun d = drop(seeds[i], 0.5, 4.0);
		check(&d);
		assert_int_equal(d.lastSecond, 0);
		assert_true(d.speed <= 1e-3);
	}
}

/* A step that raises the energy far above its lowest value so far (not a gain over the start: these ragdolls
 * lie on the ground, having lost most of it). Seed 35: lying still, one velocity loop of the contacts cycled
 * between 1.1 and 167 J of kinetic energy (a thigh's point with the joints' response K_eff pumping, the others
 * taking it out) and ended at 159 J when the stall rule cut it: +158 J (now the loop goes back to its sweep of
 * least energy, contact_graph.c). Seed 20: the time-of-contact search left a last sub-step of 1.6e-5 s, whose
 * joint correction removed the errors the first sub-step had left, at that rate: +31.6 J (now large errors go
 * at the rate of a whole step, tests/test_joint_recovery.c). Frictionless seed 53: landing, the collision
 * loop (inelastic, with K_eff points) stalled after 51 sweeps 6.6 J above its start: +7.3 J in the step (now
 * that loop too goes back to its sweep of least energy). Measured now: 0.07, 0.04 and 0.04 J. */
static void test_ragdoll_no_energy_kicks(void** state)
{
	(void)state;
	const int seeds[] = {35, 20, 53};
	const double mu[] = {0.5, 0.5, 0.0}, seconds[] = {2.1, 2.1, 1.0};
	for (int i = 0; i < 3; ++i) {
		DropRun d = drop(seeds[i], mu[i], seconds[i]);
		check(&d);
		assert_true(d.rise <= 1.0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ragdoll_drops_with_friction),
	    cmocka_unit_test(test_ragdoll_drops_frictionless),
	    cmocka_unit_test(test_ragdoll_rests_converged),
	    cmocka_unit_test(test_ragdoll_no_energy_kicks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
