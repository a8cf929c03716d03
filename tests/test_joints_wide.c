/* The iterative method on a very wide tree (issue 4): 1000 boxes of very different masses
 * (0.3 .. 375 kg) where every inner body has 20 children (ball, hinge and universal joints, random
 * anchors, random initial velocities), h = 0.01, eps 1e-6, at most 1000 sweeps, warm start, no step
 * subdivision (anytime behaviour, §3.3.3). Gauss-Seidel converges slowly here (a light hub pulled by
 * 20 heavy children: ~ m_hub / m_child per sweep, 12000-19000 sweeps per step), so the sweeps stop
 * at the cap and the steps complete unconverged. It used to diverge even so: the warm start
 * re-applied the last step's opposing impulses of the unconverged velocity correction at the new
 * configuration (kinetic energy 9e3 J -> 1e46 J in 10 steps); the warm start now has an energy line
 * search (solver_iterative.c). Still open: with the default step subdivision the halves compound
 * their unconverged remainders (each half removes the other's as a velocity remainder/h) and the
 * state becomes non-finite in the first steps; use the LGS for such trees.
 * Checked every step: the step succeeds, the total energy stays within 3 % of the
 * first step's (measured: within 1.2 %, oscillating), the joint errors stay below 2 cm / 0.05 rad
 * (measured 4.3 mm / 0.013 rad). Slow builds also run 30 steps and check that with enough
 * sweeps the method does converge to eps every step. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"

enum { N = 1000, FANOUT = 20 };

static ibWorldId make_wide_tree(int cap)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: links overlap */
	wd.solver.method = IB_SOLVER_ITERATIVE;
	wd.solver.maxPositionIterations = wd.solver.maxVelocityIterations = cap;
	wd.solver.maxStepSubdivisions = 0; /* anytime: halving unconverged sweeps compounds (see the header) */
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	static ibBodyId bodies[N];
	static const ibJointType kinds[3] = {IB_JOINT_BALL, IB_JOINT_HINGE, IB_JOINT_UNIVERSAL};
	jtRng rng = {0x51ed2701u};
	ibBodyId ground = jt_static(w, IB_VEC3_ZERO);
	for (int i = 0; i < N; ++i) {
		int p = i == 0 ? -1 : (i - 1) / FANOUT;
		ibVec3 anchor = p < 0 ? IB_VEC3_ZERO
		                      : ibAdd(ibBody_GetWorldCenterOfMass(bodies[p]), ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 com = ibAdd(anchor, ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 half = ibV3(jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25));
		bodies[i] = jt_box(w, com, jt_rand_quat(&rng), half, jt_uniform(&rng, 300.0, 3000.0));
		ibJointType type = kinds[(int)jt_uniform(&rng, 0.0, 3.0) % 3];
		ibJointDef jd = ibDefaultJointDef(type);
		jd.bodyA = p < 0 ? ground : bodies[p];
		jd.bodyB = bodies[i];
		assert_int_equal(ibJointDef_SetWorldAnchors(&jd, anchor, anchor), IB_OK);
		ibVec3 ax = jt_rand_unit(&rng);
		ibVec3 bx = type == IB_JOINT_UNIVERSAL ? jt_rand_perp(&rng, ax) : ax;
		assert_int_equal(ibJointDef_SetWorldAxes(&jd, ax, bx), IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	}
	for (int i = 0; i < N; ++i) {
		assert_int_equal(ibBody_SetLinearVelocity(bodies[i], jt_rand_vec(&rng, 1.0)), IB_OK);
		assert_int_equal(ibBody_SetAngularVelocity(bodies[i], jt_rand_vec(&rng, 1.0)), IB_OK);
	}
	return w;
}

static double total_energy(ibWorldId w)
{
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	return inv.kineticEnergy + inv.potentialEnergy;
}

static void test_wide_tree_default_caps(void** state)
{
	(void)state;
#if IBDYN_SLOW_TESTS
	const int steps = 30;
#else
	const int steps = 3; /* ASan build: the warm-start blow-up needs ~10 steps, see the slow build */
#endif
	ibWorldId w = make_wide_tree(1000);
	double scale = 0.0, e0 = 0.0, drift = 0.0, worstP = 0.0, worstA = 0.0;
	for (int k = 0; k < steps; ++k) {
		ibResult r = ibWorld_Step(w, 0.01);
		if (r != IB_OK) fail_msg("step %d: %s", k, ibWorld_GetLastError(w));
		ibStepStats st = ibWorld_GetStepStats(w);
		if (k == 0) { /* after the first step's projection of the inconsistent initial velocities */
			ibWorldInvariants inv;
			assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
			scale = fabs(inv.potentialEnergy) + inv.kineticEnergy;
			e0 = total_energy(w);
		}
		drift = fmax(drift, fabs(total_energy(w) - e0));
		worstP = fmax(worstP, st.maxPositionError);
		worstA = fmax(worstA, st.maxAngularError);
		if (!(drift <= 0.03 * scale)) fail_msg("step %d: energy drift %.3e J (scale %.3e J)", k, drift, scale);
		if (!(st.maxPositionError <= 0.02 && st.maxAngularError <= 0.05))
			fail_msg("step %d: joint errors %.3e m, %.3e rad", k, st.maxPositionError, st.maxAngularError);
	}
	print_message("wide tree (%d bodies, %d children per inner body), %d steps at the default caps: energy drift "
	              "%.2e J of %.2e J, max errors %.2e m, %.2e rad\n",
	              N, FANOUT, steps, drift, scale, worstP, worstA);
	ibDestroyWorld(w);
}

#if IBDYN_SLOW_TESTS
static void test_wide_tree_converges(void** state)
{
	(void)state;
	ibWorldId w = make_wide_tree(100000);
	int maxPos = 0, maxVel = 0;
	for (int k = 0; k < 3; ++k) {
		assert_int_equal(ibWorld_Step(w, 0.01), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		if (!st.converged) fail_msg("step %d not converged", k);
		JT_LE(fmax(st.maxPositionError, st.maxAngularError), 1e-6);
		JT_LE(st.maxVelocityError, 1e-6);
		maxPos = st.positionIterations > maxPos ? st.positionIterations : maxPos;
		maxVel = st.velocityIterations > maxVel ? st.velocityIterations : maxVel;
	}
	print_message("wide tree converged to 1e-6 in at most %d / %d sweeps per step\n", maxPos, maxVel);
	ibDestroyWorld(w);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wide_tree_default_caps),
#if IBDYN_SLOW_TESTS
	    cmocka_unit_test(test_wide_tree_converges),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
