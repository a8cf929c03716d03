/* The time-of-contact search of src/collision/toi.c when a re-simulation does not repeat the run that
 * found the penetration (in a pile the contact loops start from the state the last run left and end
 * by stalling, so the motion is not a continuous function of the sub-step length): the search must
 * give up once its interval is shorter than a millionth of the step, not bisect it to the iteration
 * cap with a re-simulation of the whole world per iteration (rain1000: 35 of 45 re-simulations), and it
 * gives up at once where the pair is farther apart than it can close before the penetrating end. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "collision/collision_world.h"
#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"

static int g_runs;
static ibBody* g_ball;

static void detect(ibWorld* w, double h)
{
	(void)h;
	assert_int_equal(ib_collision_detect(w), IB_OK);
}

/* the first run of the sub-step sinks the ball 5 cm into the ground; every re-simulation leaves it
 * 5 cm above (a jump of the separation across [-eps_c, eps_c] at no time in between) */
static void motion(ibWorld* w, double h)
{
	(void)h;
	g_ball->st.s.z = g_runs++ == 0 ? 0.45 : 0.55;
	g_ball->velVersion++;
	g_ball->userPoseExact = false;
	ib_body_update_derived(g_ball);
	w->poseEpoch++;
}

static void test_discontinuous_search(void** state)
{
	(void)state;
	for (int mode = 0; mode < 2; ++mode) {
		ibWorldDef wd = ibDefaultWorldDef();
		wd.gravity = ibV3(0, 0, 0);
		wd.collision.toiMode = mode ? IB_TOI_BISECTION : IB_TOI_INTERPOLATION;
		wd.collision.conservativeAdvancement = false;
		ibWorldId id = ibCreateWorld(&wd);
		ibBodyDef bd = ibDefaultBodyDef();
		bd.position = ibV3(0, 0, -0.5);
		ibBodyId ground = ibCreateBody(id, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		ibBox box = {ibV3(5, 5, 0.5)};
		assert_true(ibShape_IsValid(ibCreateBoxShape(ground, &sd, &box)));
		bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(0, 0, 0.55);
		ibBodyId ball = ibCreateBody(id, &bd);
		ibSphere sp = {0.5};
		assert_true(ibShape_IsValid(ibCreateSphereShape(ball, &sd, &sp)));
		ibWorld* w = NULL;
		g_ball = ib_body_get(ball, &w);
		assert_non_null(g_ball);
		g_runs = 0;
		const double h = 1.0 / 60.0;
		ib_toi_step(w, h, detect, motion);
		ibCollisionStats cs = ibWorld_GetCollisionStats(id);
		printf("%s: %d runs, %d re-simulations (cap %d), %d sub-steps, ball at z = %.3f\n", mode ? "bisection" : "interpolation", g_runs,
		       cs.toiIterations, wd.collision.maxToiIterations, cs.toiSubsteps, ibBody_GetPosition(ball).z);
		/* a millionth of the step is reached after ~20 halvings of the interval; the cap is 40. And
		 * since session 16: at the first separated time the ball is farther from its depth at the end
		 * than it can close in the rest of the bracket (ib_contacts_closing_bound), so the search gives
		 * up there (8 re-simulations with regula falsi and 20 with bisection under the bracket-length
		 * rule alone) */
		assert_true(cs.toiIterations <= 2);
		assert_true(cs.toiIterations < wd.collision.maxToiIterations);
		/* the sub-step ends at the last separated time, and the rest of the step runs from there */
		assert_true(fabs(ibBody_GetPosition(ball).z - 0.55) < 1e-12);
		ibDestroyWorld(id);
	}
}

static ibBodyId box_body(ibWorldId id, ibBodyType type, ibVec3 pos, ibVec3 half, double e)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = type;
	bd.position = pos;
	ibBodyId b = ibCreateBody(id, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material.restitution = e;
	ibBox box = {half};
	assert_true(ibShape_IsValid(ibCreateBoxShape(b, &sd, &box)));
	return b;
}

/* [IMPL] A search that starts where the conservative advancement of a fast body stopped, for another
 * pair that penetrates there, interpolates from that pair's distance at the bracket's start (the saved
 * states there): it was taken as unknown, and the search bisected. A unit cube falls at 10 m/s onto the
 * ground (0.033 m to go, contact at 0.2 of the step; too slow for the conservative advancement, which
 * takes bodies that move by more than half their inner size in a step); a 5 cm sphere at 30 m/s reaches
 * a wall at 0.6 of the step. At that time the cube is 0.067 m deep: the search brackets its contact
 * between 0 and 0.6 of the step. Measured: 5 re-simulations in the step with the distance unknown (the
 * first two bisect), 3 now (the conservative time, the interpolated contact, and the sphere's
 * conservative time in the second sub-step). */
static void test_search_from_known_distance(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	ibWorldId id = ibCreateWorld(&wd);
	const double h = 1.0 / 60.0;
	box_body(id, IB_BODY_STATIC, ibV3(0, 0, -0.5), ibV3(5, 5, 0.5), 0.5);            /* ground, top at z = 0 */
	box_body(id, IB_BODY_STATIC, ibV3(20.0 + 0.3 + 0.05 + 0.5, 0, 3), ibV3(0.5, 5, 5), 0.5); /* wall */
	ibBodyId cube = box_body(id, IB_BODY_DYNAMIC, ibV3(0, 0, 0.5 + 10.0 * 0.2 * h), ibV3(0.5, 0.5, 0.5), 0.5);
	assert_int_equal(ibBody_SetLinearVelocity(cube, ibV3(0, 0, -10)), IB_OK);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(20.0, 0, 3);
	ibBodyId ball = ibCreateBody(id, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material.restitution = 0.5;
	ibSphere sp = {0.05};
	assert_true(ibShape_IsValid(ibCreateSphereShape(ball, &sd, &sp)));
	assert_int_equal(ibBody_SetLinearVelocity(ball, ibV3(30, 0, 0)), IB_OK);
	assert_int_equal(ibWorld_Step(id, h), IB_OK);
	ibCollisionStats cs = ibWorld_GetCollisionStats(id);
	printf("%d re-simulations, %d sub-steps, %d conservative events, first time of contact %.4f of the step; cube v_z %.3f, "
	       "ball v_x %.3f\n",
	       cs.toiIterations, cs.toiSubsteps, cs.caEvents, cs.firstToi / h, ibBody_GetLinearVelocity(cube).z,
	       ibBody_GetLinearVelocity(ball).x);
	assert_true(cs.caEvents >= 1);
	assert_true(fabs(cs.firstToi / h - 0.2) < 0.01); /* the cube's contact, first */
	assert_true(cs.toiIterations <= 3);
	/* both bounce with e = 0.5 * 0.5 (the thesis' product rule) */
	assert_true(fabs(ibBody_GetLinearVelocity(cube).z - 2.5) < 1e-3);
	assert_true(fabs(ibBody_GetLinearVelocity(ball).x + 7.5) < 1e-3);
	ibDestroyWorld(id);
}

/* The window in which the search ends a sub-step early (ib_contacts_speculative_window): the
 * pair's reach times h for a slow inelastic pair with speculativeApproach on, 0 where the next
 * sub-step would not give the pair speculative points (setting off, elastic, fast). */
static void test_speculative_window(void** state)
{
	(void)state;
	for (int c = 0; c < 4; ++c) {
		ibWorldDef wd = ibDefaultWorldDef();
		wd.collision.speculativeApproach = c != 1;
		ibWorldId id = ibCreateWorld(&wd);
		ibBodyDef bd = ibDefaultBodyDef();
		bd.position = ibV3(0, 0, -0.5);
		ibBodyId ground = ibCreateBody(id, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		sd.material.restitution = c == 2 ? 0.5 : 0.0;
		ibBox box = {ibV3(5, 5, 0.5)};
		ibShapeId sg = ibCreateBoxShape(ground, &sd, &box);
		bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(0, 0, 0.6);
		bd.linearVelocity = ibV3(0, 0, c == 3 ? -100.0 : -1.0);
		ibBodyId cube = ibCreateBody(id, &bd);
		ibBox unit = {ibV3(0.5, 0.5, 0.5)};
		ibShapeId sc = ibCreateBoxShape(cube, &sd, &unit);
		assert_true(ibShape_IsValid(sg) && ibShape_IsValid(sc));
		ibWorld* w = NULL;
		assert_non_null(ib_body_get(cube, &w));
		const double h = 1.0 / 60.0;
		double win = ib_contacts_speculative_window(w, sg.index1 - 1, sc.index1 - 1, h);
		if (c == 0)
			assert_true(fabs(win - 1.0 * h) < 1e-12); /* reach: the relative speed, no rotation */
		else
			assert_true(win == 0.0);
		ibDestroyWorld(id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_discontinuous_search),
	    cmocka_unit_test(test_speculative_window),
	    cmocka_unit_test(test_search_from_known_distance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
