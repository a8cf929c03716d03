/* Regression: the 31-body tree of Table 3.4 at h = 1/30 s with a 10 N m kick on the root during the
 * first step used to gain energy and diverge after ~16 s with every solver. Cause: light leaf bodies
 * spin up about their ball joints until they turn by more than 1 rad per step; the joint
 * correction's prediction (free motion over h from t0) then no longer represents the motion and its
 * impulses add energy, which spins them up further. ibSolverSettings.maxRotationPerStep (default
 * 0.5 rad) splits such steps into equal sub-steps. Asserted: 500 steps with every solver, joints
 * within 1e-6 m after every step, total energy within 3 % of |E(0)|; and (slow builds) that
 * without the sub-steps the same run leaves that band, so the test can fail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/scene.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

static double energy(ibWorldId w)
{
	ibWorldInvariants v;
	assert_int_equal(ibWorld_ComputeInvariants(w, &v), IB_OK);
	return v.kineticEnergy + v.potentialEnergy + v.springEnergy;
}

/* Worst relative energy deviation over the run (1e9 if it diverged); max joint error via *maxErr. */
static double run_tree31(ibJointSolver method, double maxRotation, double* maxErr)
{
	ibWorldId w = IB_NULL_WORLD;
	char err[512] = "";
	if (ibLoadScene(IBDYN_SOURCE_DIR "/scenes/tree31.xml", NULL, &w, NULL, err, sizeof err) != IB_OK)
		fail_msg("load tree31: %s", err);
	ibSolverSettings s = ibWorld_GetSolverSettings(w);
	s.method = method;
	s.maxRotationPerStep = maxRotation;
	assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	ibBodyId root = ibWorld_FindBody(w, "root");
	assert_true(ibBody_IsValid(root));
	double e0 = energy(w), worst = 0.0;
	*maxErr = 0.0;
	for (int k = 0; k < 500; ++k) {
		if (k == 0) assert_int_equal(ibBody_ApplyTorque(root, ibV3(6, 8, 0)), IB_OK);
		if (ibWorld_Step(w, 1.0 / 30.0) != IB_OK) {
			worst = 1e9;
			break;
		}
		*maxErr = fmax(*maxErr, ibWorld_GetStepStats(w).maxPositionError);
		worst = fmax(worst, fabs(energy(w) - e0) / fabs(e0));
	}
	ibDestroyWorld(w);
	return worst;
}

static void test_tree31_kick(void** state)
{
	(void)state;
	static const ibJointSolver methods[] = {IB_SOLVER_AUTO, IB_SOLVER_LGS_SPARSE, IB_SOLVER_ITERATIVE};
	static const char* const names[] = {"auto", "lgs-sparse", "iterative"};
	double driftAuto = 0.0;
	for (int m = 0; m < (IBDYN_SLOW_TESTS ? 3 : 2); ++m) {
		double maxErr = 0.0;
		double drift = run_tree31(methods[m], ibDefaultSolverSettings().maxRotationPerStep, &maxErr);
		if (m == 0) driftAuto = drift;
		print_message("tree31 h = 1/30, kick 10 N m, %s: max energy deviation %.3e of |E(0)|, max joint error %.3e m\n",
		              names[m], drift, maxErr);
		if (!(drift <= 0.03)) fail_msg("%s: energy deviation %.3e of |E(0)| (want <= 0.03)", names[m], drift);
		if (!(maxErr <= 1e-6)) fail_msg("%s: joint error %.3e m (want <= 1e-6)", names[m], maxErr);
	}
	(void)driftAuto; /* used by the slow part only */
#if IBDYN_SLOW_TESTS
	double maxErr = 0.0;
	double drift = run_tree31(IB_SOLVER_AUTO, 0.0, &maxErr);
	print_message("without rotation sub-steps: energy deviation %.3e (1e9 = diverged)\n", drift);
	/* chaotic: 0.08-0.40 across rounding-level changes of the O(n) LGS (issue 4 chain work), always
	 * >= 6x the 0.013 with sub-steps; 0.1 sat inside that spread. Since failed probes of the full
	 * step length back off (step.c), the run without rotation sub-steps spends more steps halved,
	 * which alone damps it to ~0.04 (3x): asserted relative to the run with sub-steps */
	assert_true(drift > 2.0 * driftAuto);
#endif
}

static void test_setting(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	assert_true(wd.solver.maxRotationPerStep == 0.5);
	wd.solver.maxRotationPerStep = -1.0;
	char msg[256];
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_ERR_INVALID_ARGUMENT);
	wd.solver.maxRotationPerStep = NAN;
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_ERR_INVALID_ARGUMENT);
	/* a single hinge pendulum spinning at 40 rad/s: 4 sub-steps of h = 0.05 at 0.5 rad */
	wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	ibBodyId g = ibCreateBody(w, &bd);
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.5, 0, 0);
	bd.angularVelocity = ibV3(0, 40, 0);
	bd.linearVelocity = ibV3(0, 0, -20);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere sp = {0.1};
	assert_true(ibShape_IsValid(ibCreateSphereShape(b, &sd, &sp)));
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = g;
	jd.bodyB = b;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, ibV3(0, 0, 0), ibV3(0, 1, 0)), IB_OK);
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	assert_int_equal(ibWorld_Step(w, 0.05), IB_OK);
	assert_true(ibWorld_GetStepStats(w).stepSubdivisions >= 4);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tree31_kick),
	    cmocka_unit_test(test_setting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
