/* Cubes falling onto each other at 60 Hz (issue 6, bench_contacts rain1000 in small;
 * docs/contacts.md "Box piles at 60 Hz"). Settings as the bench: eps_c 1e-4 m, eps_d 1e-5 m,
 * eps_v 1e-4 m/s, eps_v,c 1e-3 m/s, mu 0.25 + 0.25, e = 0, h = 1/60 s, unit cubes of 1 kg.
 * Penetration is measured exactly (GJK/EPA over all shape pairs), not by the solver.
 *  - a cube that lands tilted, touching the ground with one edge and turning fast onto its face:
 *    its other corners were not in the contact region at t0 and went 2-3 cm into the ground in one
 *    step; with the speculative points (src/contact/contact_speculative.c) they stay within
 *    eps_d + eps_c;
 *  - 20 cubes in 4 columns of 5, random orientations, falling onto each other from up to 9.5 m:
 *    they sank into each other by up to 0.6 m (a tilted cube deep in another one had 1 of its 4
 *    points); now the deepest penetration while they tumble is a few cm (impacts at ~13 m/s), and
 *    in the 4th second every pair of resting bodies is within eps_d + eps_c after steps that converged
 *    (a cube still tumbles off the pile then: 4e-4 m in its moving contact; and a single step at 2.5 s
 *    had 2.7e-4 m between two slow cubes with the RK4 rotation of cubes), within 10 (eps_d + eps_c) after
 *    steps whose loops stalled (anytime results, reported not converged: session 18's seed study found
 *    up to 1.5e-4 m there, and at most 1.3e-5 m after converged steps, over seeds 1, 3-16), the energy
 *    never grows and nothing is in the ground. A cube that would start inside a neighbour is drawn again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "collision/collision_world.h"
#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"

#define EPS_C 1e-4
#define EPS_D 1e-5
#define H (1.0 / 60.0)
#define MAX_CUBES 32

static uint64_t rng_state;
static double urand(void)
{
	rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static bool g_spec; /* ibCollisionSettings.speculativeApproach of the next world */
static int g_stall = -1; /* ibContactSettings.stallSweeps of the next world (-1: default) */
static long g_sweeps;    /* contact sweeps (collision, position, velocity) of the last rain_pile_ex */
static int g_velocityCut; /* its steps whose contact velocity loop ended with a residual */
static int g_stalled;    /* its steps whose loops ended early, reported not converged */

static ibWorldId bench_world_toi(int maxToiSubsteps)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.maxToiSubsteps = maxToiSubsteps;
	wd.collision.speculativeApproach = g_spec;
	wd.collision.contactTolerance = EPS_C;
	wd.solver.velocityTolerance = 1e-4;
	wd.solver.contact.collisionTolerance = 1e-3;
	wd.solver.contact.contactPositionTolerance = EPS_D;
	if (g_stall >= 0) wd.solver.contact.stallSweeps = g_stall;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = ibV3(0, 0, -0.5);
	ibBodyId g = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25};
	ibBox gb = {{50.0, 50.0, 0.5}};
	ibCreateBoxShape(g, &sd, &gb);
	return w;
}

static ibWorldId bench_world(void) { return bench_world_toi(8); }

static ibBodyId cube(ibWorldId w, ibVec3 p, ibQuat q, ibVec3 v, ibVec3 om)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.rotation = q;
	bd.linearVelocity = v;
	bd.angularVelocity = om;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25};
	sd.mass = 1.0;
	ibBox bb = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(b, &sd, &bb);
	return b;
}

/* deepest penetration over all shape pairs (brute force, exact for boxes) */
static bool slow(const ibBody* b)
{
	return b->type == IB_BODY_STATIC || (ibLength(b->st.v) < 0.1 && ibLength(b->st.w) < 0.1);
}

/* restingOnly: only pairs of bodies slower than 0.1 m/s and 0.1 rad/s */
static double deepest_of(ibWorldId id, bool restingOnly)
{
	ibWorld* w = ib_world_get(id);
	double worst = 0.0;
	for (int32_t i = 0; i < w->shapeHigh; ++i)
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			const ibShape *p = &w->shapes[i], *q = &w->shapes[j];
			if (!p->inUse || !q->inUse) continue;
			ibConvex ca, cb;
			if (!ib_shape_convex(&w->bodies[p->body], p, &ca) || !ib_shape_convex(&w->bodies[q->body], q, &cb)) continue;
			if (restingOnly && !(slow(&w->bodies[p->body]) && slow(&w->bodies[q->body]))) continue;
			worst = fmax(worst, -ib_convex_query(&ca, &cb, NULL).distance);
		}
	return worst;
}

static double deepest(ibWorldId id) { return deepest_of(id, false); }

/* kinetic + potential energy of unit cubes of 1 kg (I = m a^2 / 6) */
static double energy(const ibBodyId* b, int n)
{
	double e = 0.0;
	for (int i = 0; i < n; ++i) {
		ibVec3 v = ibBody_GetLinearVelocity(b[i]), om = ibBody_GetAngularVelocity(b[i]);
		e += 9.81 * ibBody_GetPosition(b[i]).z + 0.5 * ibDot(v, v) + 0.5 / 6.0 * ibDot(om, om);
	}
	return e;
}

/* A cube tilted by 0.05 rad about x with its lowest edge on the ground, turning at 4 rad/s onto its
 * face and falling at 1 m/s: the far edge (5 cm up) reaches the ground within the first step. */
static void test_tilted_landing(void** state)
{
	(void)state;
	ibWorldId w = bench_world();
	double a = 0.05;
	ibQuat q = ibQuatFromAxisAngle(ibV3(1, 0, 0), a);
	/* lowest edge: body corners (y, z) = (-0.5, -0.5) rotated: z = -0.5 cos a - 0.5 sin a (y -0.5 side) */
	double zc = 0.5 * cos(a) + 0.5 * sin(a);
	ibBodyId b = cube(w, ibV3(0, 0, zc), q, ibV3(0, 0, -1.0), ibV3(-4.0, 0, 0));
	double worst = 0.0;
	for (int k = 0; k < 60; ++k) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		double d = deepest(w);
		if (d > EPS_D + EPS_C) printf("step %d: penetration %.3e m\n", k + 1, d);
		worst = fmax(worst, d);
	}
	printf("tilted landing: deepest penetration %.3e m, final z %.6f m\n", worst, ibBody_GetPosition(b).z);
	assert_true(worst <= EPS_D + EPS_C);
	assert_true(fabs(ibBody_GetPosition(b).z - 0.5) <= EPS_D + EPS_C);
	ibDestroyWorld(w);
}

/* A cube flat on the ground, spun slowly about a horizontal axis: one edge comes down (a collision), the cube
 * then rocks on it, lifting the other edge at 0.05-0.1 m/s, between eps_rc (0.044 m/s) and |g| h (0.16 m/s),
 * and gravity brings that edge back within the step. Classified by velocity alone, the lifting edge was no
 * contact joint for that step and sank into the ground in steps whose loops all converged (4.5e-4 m at 0.18
 * rad/s; session 34: the lifting points, contact_collide.c; now ~2e-7 m). */
static void test_rocking_cube(void** state)
{
	(void)state;
	const double om[] = {0.18, 0.19, 0.20, 0.21};
	for (int i = 0; i < 4; ++i) {
		ibWorldId w = bench_world();
		ibBodyId b = cube(w, ibV3(0, 0, 0.5), IB_QUAT_IDENTITY, ibV3(0, 0, 0), ibV3(om[i], 0, 0));
		double worst = 0.0, worstConverged = 0.0;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(ibWorld_Step(w, H), IB_OK);
			double d = deepest(w);
			worst = fmax(worst, d);
			if (ibWorld_GetStepStats(w).converged) worstConverged = fmax(worstConverged, d);
		}
		printf("rocking cube, omega %.2f rad/s: deepest %.3e m, after converged steps %.3e m, final z %.6f m\n", om[i], worst,
		       worstConverged, ibBody_GetPosition(b).z);
		assert_true(worstConverged <= EPS_D + EPS_C);
		assert_true(worst <= EPS_D + EPS_C);
		ibDestroyWorld(w);
	}
}

static int rain_pile_ex(int maxToiSubsteps, double bound, double lateBound)
{
	ibWorldId w = bench_world_toi(maxToiSubsteps);
	ibBodyId b[MAX_CUBES];
	int n = 0;
	/* RAIN_SEED=N (N > 1) runs the piles from another random start (the seed study of docs/contacts.md,
	 * "Box piles at 60 Hz" item 11); without it, the seed of the bounds */
	const char* seed = getenv("RAIN_SEED");
	rng_state = 0x9e3779b97f4a7c15u * (seed ? strtoull(seed, NULL, 10) : 1u);
	for (int k = 0; k < 5; ++k)
		for (int c = 0; c < 4; ++c) {
			/* a cube that would start inside one of its neighbours is drawn again (seeds 2 and 12 of the seed
			 * study had two cubes 9.5 cm into each other at t = 0; the test's own seed has none) */
			for (int tries = 0;; ++tries) {
				assert_true(tries < 100);
				ibVec3 p = ibV3(1.9 * (c % 2) + 0.3 * (2 * urand() - 1), 1.9 * (c / 2) + 0.3 * (2 * urand() - 1), 1.5 + 2.0 * k);
				ibQuat q = {urand() - 0.5, urand() - 0.5, urand() - 0.5, urand() - 0.5};
				b[n] = cube(w, p, ibQuatNormalize(q), ibV3(0, 0, 0), ibV3(0, 0, 0));
				if (!(deepest(w) > 0.0)) break;
				assert_int_equal(ibDestroyBody(b[n]), IB_OK);
			}
			++n;
		}
	double worst = 0.0, worstLate = 0.0, worstResting = 0.0, worstRestingCut = 0.0, minZ = INFINITY, e0 = energy(b, n), gain = -INFINITY;
	int resims = 0;
	g_sweeps = 0;
	g_stalled = 0;
	g_velocityCut = 0;
	const ibContactSettings cset = ibWorld_GetSolverSettings(w).contact;
	for (int k = 0; k < 240; ++k) {
		assert_int_equal(ibWorld_Step(w, H), IB_OK);
		resims += ibWorld_GetCollisionStats(w).toiIterations;
		ibStepStats st = ibWorld_GetStepStats(w);
		g_sweeps += st.collisionIterations + st.contactIterations + st.contactVelocityIterations;
		if (st.converged) /* a converged step has no residual left; a loop that ended early reports its own */
			assert_true(st.collisionResidual == 0.0 && st.contactResidual == 0.0 && st.contactVelocityResidual == 0.0);
		else if (st.contactVelocityResidual > 0.0)
			++g_velocityCut;
		/* a loop that ended before its cap without converging stalled; the step says so */
		if (!st.converged && st.collisionIterations < cset.maxCollisionIterations &&
		    st.contactIterations < cset.maxContactIterations && st.contactVelocityIterations < cset.maxContactIterations)
			++g_stalled;
		double d = deepest(w);
		worst = fmax(worst, d);
		if (k >= 180) worstLate = fmax(worstLate, d);
		if (k >= 180) {
			double r = deepest_of(w, true);
			if (st.converged) worstResting = fmax(worstResting, r);
			else worstRestingCut = fmax(worstRestingCut, r);
		}
		gain = fmax(gain, energy(b, n) - e0);
	}
	for (int i = 0; i < n; ++i) minZ = fmin(minZ, ibBody_GetPosition(b[i]).z);
	printf("rain of %d cubes, maxToiSubsteps %d%s: deepest penetration %.3e m (all pairs, 4 s), %.3e m in the 4th second; between resting "
	       "bodies (< 0.1 m/s, 0.1 rad/s) in it %.3e m after converged steps, %.3e m after the others; largest energy gain %.3e J (of %.1f J); "
	       "lowest centre %.6f m; %d re-simulations\n",
	       n, maxToiSubsteps, g_spec ? ", speculative approach" : "", worst, worstLate, worstResting, worstRestingCut, gain, e0, minZ, resims);
	assert_true(worst <= bound);                     /* was 0.47 m */
	assert_true(worstLate <= lateBound);             /* cubes still slide off the pile at 4 s */
	assert_true(worstResting <= EPS_D + EPS_C);      /* the bound where bodies rest, after converged steps */
	assert_true(worstRestingCut <= 10.0 * (EPS_D + EPS_C)); /* after steps whose loops stalled (anytime results) */
	assert_true(gain <= 1e-6 * e0);                  /* e = 0: the cubes only lose energy */
	assert_true(minZ >= 0.5 - EPS_D - EPS_C);        /* no cube in the ground */
	ibDestroyWorld(w);
	return resims;
}

/* The 4th-second bound over all pairs (cubes still sliding off the pile) is chaotic: the same run
 * with eps_d scaled by 0.9 ... 1.1, or the regularisation of the direct solve changed by 1e-7
 * relative, gave 2.9e-5 ... 3.3e-3 m (docs/contacts.md, masked sweeps). 5e-3 m bounds that spread;
 * the bound, eps_d + eps_c between resting bodies, is asserted separately and is not. */
static int rain_pile(int maxToiSubsteps, double bound) { return rain_pile_ex(maxToiSubsteps, bound, 5e-3); }

static void test_rain_pile(void** state)
{
	(void)state;
	g_spec = false;
	rain_pile(8, 0.05);
}

/* ibCollisionSettings.speculativeApproach: the approaching slow inelastic pairs are speculative
 * contacts (collisions at t0 down to the approach that closes their gap) instead of time-of-contact
 * searches; deeper while tumbling (6.1 cm; over seeds 1.9-7.5 cm against 0.7-5 cm with the
 * search), as good at rest, and a fraction of the re-simulations of the whole world. */
static void test_rain_pile_speculative_approach(void** state)
{
	(void)state;
	g_spec = false;
	int withToi = rain_pile(8, 0.05);
	g_spec = true;
	int withSpec = rain_pile_ex(8, 0.1, 5e-3);
	g_spec = false;
	printf("re-simulations: %d with the time-of-contact search, %d with the speculative approach\n", withToi, withSpec);
	assert_true(4 * withSpec < withToi);
}

/* No time-of-contact sub-steps at all: the approaching pairs are speculative contacts in every step
 * (contact_speculative.c); deeper while tumbling (5.5 cm), as good at rest, about 3.5x faster. Cubes
 * still tumble at 4-5 m/s in the 4th second, and without the search they sink there as in the first
 * seconds: with eps_d scaled by 0.9 ... 1.1 the 4th second's deepest pair was 5.6e-4 ... 2.7e-2 m
 * (session 30, before and after the drift coherence's bound went from 1e-10 to 1e-6 m: 1.1e-3 ... 2.6e-2
 * m), so its bound is the tumbling one; between resting bodies the bound holds as above. */
static void test_rain_pile_speculative(void** state)
{
	(void)state;
	rain_pile_ex(0, 0.1, 0.05);
}

/* Stalled loops (ibContactSettings.stallSweeps, docs/contacts.md): in the tumbling pile some loops
 * cycle without converging (sliding friction); ending them when their largest impulse per sweep has
 * not halved for 50 sweeps keeps every bound of the pile (asserted in rain_pile_ex) with fewer sweeps
 * than running them to the cap, and each such step is reported not converged. */
static void test_rain_pile_stall(void** state)
{
	(void)state;
	g_spec = false;
	g_stall = 0;
	rain_pile(8, 0.05);
	long capped = g_sweeps;
	g_stall = 50;
	rain_pile(8, 0.05);
	long stalled = g_sweeps;
	int early = g_stalled;
	g_stall = -1;
	printf("contact sweeps over the pile: %ld run to the cap, %ld with stallSweeps 50 (%d steps ended early, not converged; "
	       "%d with a velocity residual)\n",
	       capped, stalled, early, g_velocityCut);
	assert_true(early > 0);
	assert_true(g_velocityCut > 0); /* some of them in the velocity loop at t0+h, which says how far it got */
	assert_true(stalled < capped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tilted_landing), cmocka_unit_test(test_rocking_cube),
	    cmocka_unit_test(test_rain_pile),
	    cmocka_unit_test(test_rain_pile_stall),
	    cmocka_unit_test(test_rain_pile_speculative),
	    cmocka_unit_test(test_rain_pile_speculative_approach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
