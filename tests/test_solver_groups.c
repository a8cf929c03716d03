/* Method per independent chain (§6.2.1): the world default and per-solver-group overrides
 * (ibWorld_SetGroupSolver, ibBodyDef.solverGroup, <solver_group> in scene files). Two separate
 * chains in one world, one forced iterative and one LGS: both hold the tolerance every step, the
 * step statistics count one island per method, the per-joint iteration counts show which method
 * ran (the LGS counts solves, a few per step; the iterative method counts impulses, many per step
 * on an 8-link chain), and each chain moves as it does alone in a world whose default is its
 * method. Mixed groups in one island: the lowest-numbered overridden group wins. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/scene.h"
#include "joint_test_util.h"

#define LINKS 8

typedef struct Chain {
	ibBodyId body[LINKS];
	ibJointId joint[LINKS];
} Chain;

/* A hanging chain of LINKS ball-jointed links along x at lateral offset y, bodies in solver group g,
 * with a sideways kick on the last link so the joints have work to do. */
static void build_chain(ibWorldId w, double y, int g, Chain* c)
{
	ibBodyId ground = jt_static(w, ibV3(0, y, 0));
	ibVec3 p = ibV3(0, y, 0);
	for (int i = 0; i < LINKS; ++i) {
		ibVec3 q = ibAdd(p, ibV3(0.3, 0, -0.05));
		c->body[i] = jt_link(w, p, q);
		assert_int_equal(ibBody_SetSolverGroup(c->body[i], g), IB_OK);
		ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
		jd.bodyA = i == 0 ? ground : c->body[i - 1];
		jd.bodyB = c->body[i];
		assert_int_equal(ibJointDef_SetWorldAnchors(&jd, p, p), IB_OK);
		c->joint[i] = ibCreateJoint(w, &jd);
		assert_true(ibJoint_IsValid(c->joint[i]));
		p = q;
	}
	ibBody_SetLinearVelocity(c->body[LINKS - 1], ibV3(0, 0, 2.0));
}

static ibWorldId make_world(ibJointSolver def)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.method = def;
	wd.solver.maxStepSubdivisions = 0; /* the chains must not influence each other through a shared subdivision */
	wd.solver.maxPositionIterations = wd.solver.maxVelocityIterations = 100000;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

static int chain_iterations(const Chain* c)
{
	int n = 0;
	for (int i = 0; i < LINKS; ++i) n += ibJoint_GetIterations(c->joint[i]);
	return n;
}

static double chain_diff(const Chain* a, const Chain* b)
{
	double d = 0.0;
	for (int i = 0; i < LINKS; ++i) {
		d = fmax(d, ibDistance(ibBody_GetPosition(a->body[i]), ibBody_GetPosition(b->body[i])));
		d = fmax(d, ibDistance(ibBody_GetLinearVelocity(a->body[i]), ibBody_GetLinearVelocity(b->body[i])));
	}
	return d;
}

static double chain_error(const Chain* c)
{
	double e = 0.0;
	for (int i = 0; i < LINKS; ++i) e = fmax(e, ibJoint_GetPositionError(c->joint[i]));
	return e;
}

static void test_mixed_world(void** state)
{
	(void)state;
	ibWorldId w = make_world(IB_SOLVER_LGS);
	assert_int_equal(ibWorld_SetGroupSolver(w, 1, IB_SOLVER_ITERATIVE), IB_OK);
	Chain it, lgs;
	build_chain(w, 0.0, 1, &it);
	build_chain(w, 2.0, 0, &lgs);
	/* references: each chain alone with its method as the world default */
	ibWorldId wi = make_world(IB_SOLVER_ITERATIVE), wl = make_world(IB_SOLVER_LGS);
	Chain refIt, refLgs;
	build_chain(wi, 0.0, 0, &refIt);
	build_chain(wl, 2.0, 0, &refLgs);
	const double h = 0.01, tol = ibWorld_GetSolverSettings(w).positionTolerance;
	int itSum = 0, lgsSum = 0;
	double diff = 0.0;
	for (int k = 0; k < 100; ++k) {
		jt_step(w, h);
		jt_step(wi, h);
		jt_step(wl, h);
		ibStepStats st = ibWorld_GetStepStats(w);
		if (!st.converged) fail_msg("step %d not converged: errors %.3e (iterative chain) %.3e (LGS chain), iterations %d %d", k, chain_error(&it), chain_error(&lgs), st.positionIterations, st.velocityIterations);
		assert_int_equal(st.iterativeIslands, 1);
		assert_int_equal(st.lgsIslands, 1);
		assert_int_equal(st.lgsSparseIslands, 0);
		JT_LE(chain_error(&it), tol);
		JT_LE(chain_error(&lgs), tol);
		itSum += chain_iterations(&it);
		lgsSum += chain_iterations(&lgs);
		diff = fmax(diff, fmax(chain_diff(&it, &refIt), chain_diff(&lgs, &refLgs)));
	}
	/* LGS: one count per solve and basic, a few solves per step; iterative: an order more */
	print_message("iterations over 100 steps: iterative chain %d, LGS chain %d; max deviation from the single-method worlds %.2e\n",
	              itSum, lgsSum, diff);
	assert_true(itSum > 3 * lgsSum);
	JT_LE(diff, 1e-12);
	/* clearing the override returns the chain to the default */
	assert_int_equal(ibWorld_ClearGroupSolver(w, 1), IB_OK);
	jt_step(w, h);
	assert_int_equal(ibWorld_GetStepStats(w).lgsIslands, 2);
	assert_int_equal(ibWorld_GetStepStats(w).iterativeIslands, 0);
	/* the world default still decides for groups without an override (ibsim --solver) */
	ibSolverSettings s = ibWorld_GetSolverSettings(w);
	s.method = IB_SOLVER_LGS_SPARSE;
	assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	assert_int_equal(ibWorld_SetGroupSolver(w, 1, IB_SOLVER_LGS), IB_OK);
	jt_step(w, h);
	assert_int_equal(ibWorld_GetStepStats(w).lgsIslands, 1);
	assert_int_equal(ibWorld_GetStepStats(w).lgsSparseIslands, 1);
	JT_LE(chain_error(&it), tol);
	JT_LE(chain_error(&lgs), tol);
	ibDestroyWorld(w);
	ibDestroyWorld(wi);
	ibDestroyWorld(wl);
}

/* One island whose bodies are in groups 3 (LGS) and 2 (iterative): group 2 decides. */
static void test_mixed_island_rule(void** state)
{
	(void)state;
	ibWorldId w = make_world(IB_SOLVER_LGS_SPARSE);
	assert_int_equal(ibWorld_SetGroupSolver(w, 3, IB_SOLVER_LGS), IB_OK);
	assert_int_equal(ibWorld_SetGroupSolver(w, 2, IB_SOLVER_ITERATIVE), IB_OK);
	Chain c;
	build_chain(w, 0.0, 3, &c);
	jt_step(w, 0.01);
	assert_int_equal(ibWorld_GetStepStats(w).lgsIslands, 1);
	assert_int_equal(ibBody_SetSolverGroup(c.body[7], 2), IB_OK);
	jt_step(w, 0.01);
	assert_int_equal(ibWorld_GetStepStats(w).iterativeIslands, 1);
	assert_int_equal(ibWorld_GetStepStats(w).lgsIslands, 0);
	assert_int_equal(ibBody_GetSolverGroup(c.body[7]), 2);
	/* group 0 without an override counts as "no override", not as the lowest group */
	assert_int_equal(ibBody_SetSolverGroup(c.body[0], 0), IB_OK);
	jt_step(w, 0.01);
	assert_int_equal(ibWorld_GetStepStats(w).iterativeIslands, 1);
	/* bad arguments are rejected */
	assert_int_equal(ibWorld_SetGroupSolver(w, -1, IB_SOLVER_LGS), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibWorld_SetGroupSolver(w, IB_MAX_SOLVER_GROUP + 1, IB_SOLVER_LGS), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibWorld_SetGroupSolver(w, 1, (ibJointSolver)17), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibBody_SetSolverGroup(c.body[0], -3), IB_ERR_INVALID_ARGUMENT);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.solverGroup = -1;
	assert_true(IB_IS_NULL(ibCreateBody(w, &bd)));
	assert_int_equal(ibWorld_GetMaxOverriddenGroup(w), 3);
	ibJointSolver m = IB_SOLVER_AUTO;
	assert_true(ibWorld_GetGroupSolver(w, 2, &m));
	assert_int_equal(m, IB_SOLVER_ITERATIVE);
	assert_false(ibWorld_GetGroupSolver(w, 1, &m));
	ibDestroyWorld(w);
}

/* Scene file: <solver_group> and the body attribute solver_group, written back unchanged. */
static void test_scene(void** state)
{
	(void)state;
	const char* xml = "<ibdyn version=\"1\">\n"
	                  "  <world solver=\"lgs\"/>\n"
	                  "  <solver_group id=\"4\" solver=\"iterative\"/>\n"
	                  "  <body name=\"g\" type=\"static\"/>\n"
	                  "  <body name=\"a\" type=\"dynamic\" position=\"0.5 0 0\" solver_group=\"4\"><box half_extents=\"0.5 0.05 0.05\"/></body>\n"
	                  "  <body name=\"b\" type=\"dynamic\" position=\"0.5 2 0\"><box half_extents=\"0.5 0.05 0.05\"/></body>\n"
	                  "  <joint type=\"ball\" body_a=\"g\" body_b=\"a\" anchor=\"0 0 0\"/>\n"
	                  "  <joint type=\"ball\" body_a=\"g\" body_b=\"b\" anchor=\"0 2 0\"/>\n"
	                  "</ibdyn>\n";
	ibWorldId w = IB_NULL_WORLD;
	char err[512] = "";
	ibResult r = ibLoadSceneFromMemory(xml, strlen(xml), "groups", NULL, &w, NULL, err, sizeof err);
	if (r != IB_OK) fail_msg("load: %s", err);
	jt_step(w, 0.01);
	assert_int_equal(ibWorld_GetStepStats(w).iterativeIslands, 1);
	assert_int_equal(ibWorld_GetStepStats(w).lgsIslands, 1);
	assert_int_equal(ibBody_GetSolverGroup(ibWorld_FindBody(w, "a")), 4);
	char* text = NULL;
	assert_int_equal(ibSaveSceneToMemory(w, NULL, &text, err, sizeof err), IB_OK);
	assert_non_null(strstr(text, "<solver_group id=\"4\" solver=\"iterative\"/>"));
	assert_non_null(strstr(text, "solver_group=\"4\""));
	ibWorldId w2 = IB_NULL_WORLD;
	r = ibLoadSceneFromMemory(text, strlen(text), "saved", NULL, &w2, NULL, err, sizeof err);
	if (r != IB_OK) fail_msg("reload: %s", err);
	free(text);
	jt_step(w2, 0.01);
	assert_int_equal(ibWorld_GetStepStats(w2).iterativeIslands, 1);
	/* errors: a duplicate group and an out-of-range id */
	const char* dup = "<ibdyn version=\"1\"><solver_group id=\"1\" solver=\"lgs\"/><solver_group id=\"1\" solver=\"lgs\"/></ibdyn>";
	ibWorldId w3 = IB_NULL_WORLD;
	assert_int_not_equal(ibLoadSceneFromMemory(dup, strlen(dup), "dup", NULL, &w3, NULL, err, sizeof err), IB_OK);
	assert_non_null(strstr(err, "duplicate"));
	const char* bad = "<ibdyn version=\"1\"><solver_group id=\"-2\" solver=\"lgs\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(bad, strlen(bad), "bad", NULL, &w3, NULL, err, sizeof err), IB_OK);
	ibDestroyWorld(w);
	ibDestroyWorld(w2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mixed_world),
	    cmocka_unit_test(test_mixed_island_rule),
	    cmocka_unit_test(test_scene),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
