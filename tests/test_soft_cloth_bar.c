/* A 20 x 20 cloth hangs from a rigid bar by two rigid–soft triangle joints while a hinge motor
 * swings the bar back and forth: the attachments hold to eps_d after every step (no lag of the
 * cloth behind the rigid body), nothing becomes NaN over 20 s (1 s without IBDYN_SLOW_TESTS); the
 * same with the LGS method for the rigid joints (soft rows alternating with the LGS solves). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "soft_bar_scene.h"

static void run(ibJointSolver method, double seconds)
{
	const double eps = 1e-6, h = 0.005;
	BarScene s;
	assert_true(bar_scene(&s, 20, method, eps, 1e-5, 0, 1e-3));
	double al, be, ga, de;
	ibConstraint_GetTriangleCoordinates(s.att[0], &al, &be, &ga, &de);
	assert_true(fabs(de - 0.01) < 1e-12);
	int steps = (int)lround(seconds / h);
	double worst = 0.0, maxAngle = 0.0, worstHinge = 0.0;
	for (int k = 0; k < steps; ++k) {
		ibResult r = ibWorld_Step(s.w, h);
		if (r != IB_OK) fail_msg("step %d: %s", k, ibWorld_GetLastError(s.w));
		double e = fmax(ibConstraint_GetError(s.att[0]), ibConstraint_GetError(s.att[1]));
		if (!(e <= eps)) fail_msg("step %d: attachment error %.3g > eps_d", k, e);
		worst = fmax(worst, e);
		worstHinge = fmax(worstHinge, ibJoint_GetPositionError(s.hinge));
		maxAngle = fmax(maxAngle, fabs(ibJoint_GetMotorValue(s.hinge)));
	}
	for (int i = 0; i < s.g.nv; ++i) assert_true(ibVec3_IsFinite(ibSoftBody_GetPosition(s.cloth, i)));
	ibSoftStepStats st = ibWorld_GetSoftStepStats(s.w);
	print_message("method %d, %.1f s: max attachment error %.3g m, hinge %.3g m, bar swung to %.2f rad, sweeps %d\n",
	              (int)method, seconds, worst, worstHinge, maxAngle, st.positionSweeps);
	assert_true(maxAngle > fmin(1.0, 0.8 * seconds * seconds)); /* servo ramps the bar at 2 rad/s^2 */
	assert_true(worstHinge <= eps);
	bar_scene_free(&s);
}

static void test_iterative(void** state)
{
	(void)state;
	run(IB_SOLVER_ITERATIVE, IBDYN_SLOW_TESTS ? 20.0 : 1.0);
}

static void test_lgs(void** state)
{
	(void)state;
	run(IB_SOLVER_LGS, IBDYN_SLOW_TESTS ? 2.0 : 0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_iterative), cmocka_unit_test(test_lgs)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
