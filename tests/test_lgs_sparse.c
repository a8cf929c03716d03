/* The general sparse LGS path (IB_SOLVER_LGS_SPARSE, src/joints/solver_lgs_sparse.c, CHOLMOD):
 * (1) on random trees (chains, binary, 20-ary stars, one hub with all joints, random parents; ball,
 *     hinge and universal joints) it gives the same post-step velocities as the O(n) tree solver
 *     (IB_SOLVER_LGS) at tolerances 1e-12;
 * (2) closed loops with redundant constraints — a four-bar linkage, the 6-hinge ring of Fig. 3.25
 *     (parallel axes: 30 rows of rank 27) and a slider-crank — run 20 s at h = 0.01 with every step
 *     converged and within the tolerances, and the mechanisms move; a loop driven where it cannot
 *     close reports converged = false, stays finite and recovers;
 * (3) the velocity correction of an acyclic model is one solve with a residual <= 1e-10 (also with
 *     velocity-only joints, which give the velocity correction its own system), and of the ring too;
 * (4) after the first steps a step calls the world allocator no more (CHOLMOD's own memory aside);
 *     invalid method values are still rejected; ms/step of a binary tree of 255 joints vs the tree solver. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

static double now_s(void)
{
	struct timespec ts;
	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ibSolverSettings settings(ibJointSolver method, double tol, int cap)
{
	ibSolverSettings s = ibDefaultSolverSettings();
	s.method = method;
	s.positionTolerance = s.angularTolerance = s.velocityTolerance = tol;
	s.maxPositionIterations = s.maxVelocityIterations = cap;
	s.warmStart = false;
	s.maxStepSubdivisions = 0;
	return s;
}

static ibWorldId make_world(const ibSolverSettings* s)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver = *s;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

/* ---------------------------------------------------------------- random trees (as in test_lgs.c) */

typedef struct Model {
	int n;
	ibBodyId* bodies;
	ibBodyId ground;
} Model;

typedef struct ModelSpec {
	int n;
	const int* parent; /* parent[i] < i, or -1: held by the static world */
	const ibJointType* type;
	uint64_t seed;
	double velocity; /* random linear and angular velocities in [-velocity, velocity]^3 */
} ModelSpec;

static void build_model(ibWorldId w, const ModelSpec* spec, Model* m)
{
	jtRng rng = {spec->seed * 0x9e3779b97f4a7c15ull + 12345u};
	m->n = spec->n;
	m->bodies = calloc((size_t)spec->n, sizeof(ibBodyId));
	assert_non_null(m->bodies);
	m->ground = jt_static(w, IB_VEC3_ZERO);
	for (int i = 0; i < spec->n; ++i) {
		int p = spec->parent[i];
		ibVec3 anchor = p < 0 ? IB_VEC3_ZERO
		                      : ibAdd(ibBody_GetWorldCenterOfMass(m->bodies[p]), ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 com = ibAdd(anchor, ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 half = ibV3(jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25));
		m->bodies[i] = jt_box(w, com, jt_rand_quat(&rng), half, jt_uniform(&rng, 300.0, 3000.0));
		ibJointDef jd = ibDefaultJointDef(spec->type[i]);
		jd.bodyA = p < 0 ? m->ground : m->bodies[p];
		jd.bodyB = m->bodies[i];
		assert_int_equal(ibJointDef_SetWorldAnchors(&jd, anchor, anchor), IB_OK);
		ibVec3 ax = jt_rand_unit(&rng);
		ibVec3 bx = spec->type[i] == IB_JOINT_UNIVERSAL ? jt_rand_perp(&rng, ax) : ax;
		assert_int_equal(ibJointDef_SetWorldAxes(&jd, ax, bx), IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	}
	for (int i = 0; i < spec->n; ++i) {
		assert_int_equal(ibBody_SetLinearVelocity(m->bodies[i], jt_rand_vec(&rng, spec->velocity)), IB_OK);
		assert_int_equal(ibBody_SetAngularVelocity(m->bodies[i], jt_rand_vec(&rng, spec->velocity)), IB_OK);
	}
}

static void free_model(Model* m)
{
	free(m->bodies);
	m->bodies = NULL;
}

typedef enum TreeShape { TREE_CHAIN, TREE_BINARY, TREE_STAR, TREE_HUB, TREE_RANDOM, TREE_SHAPE_COUNT } TreeShape;
static const char* const kShapeName[] = {"chain", "binary", "20-ary star", "hub", "random parent"};

static void random_tree(TreeShape shape, int n, uint64_t seed, int* parent, ibJointType* type)
{
	jtRng rng = {seed * 0x2545f4914f6cdd1dull + 777u};
	static const ibJointType kinds[3] = {IB_JOINT_BALL, IB_JOINT_HINGE, IB_JOINT_UNIVERSAL};
	for (int i = 0; i < n; ++i) {
		switch (shape) {
		case TREE_CHAIN: parent[i] = i - 1; break;
		case TREE_BINARY: parent[i] = i == 0 ? -1 : (i - 1) / 2; break;
		case TREE_STAR: parent[i] = i == 0 ? -1 : (i - 1) / 20; break;
		case TREE_HUB: parent[i] = i == 0 ? -1 : 0; break; /* every joint on body 0 */
		default: parent[i] = i == 0 ? -1 : (int)jt_uniform(&rng, 0.0, (double)i); break;
		}
		if (parent[i] >= i) parent[i] = i - 1;
		type[i] = kinds[(int)jt_uniform(&rng, 0.0, 3.0) % 3];
	}
}

/* Largest |dv|, |dw| between the same bodies of two worlds, relative to the largest speed. */
static double velocity_rel_diff(const Model* a, const Model* b)
{
	double d = 0.0, scale = 0.0;
	for (int i = 0; i < a->n; ++i) {
		ibBodyId x = a->bodies[i], y = b->bodies[i];
		d = fmax(d, ibDistance(ibBody_GetLinearVelocity(x), ibBody_GetLinearVelocity(y)));
		d = fmax(d, ibDistance(ibBody_GetAngularVelocity(x), ibBody_GetAngularVelocity(y)));
		scale = fmax(scale, fmax(ibLength(ibBody_GetLinearVelocity(y)), ibLength(ibBody_GetAngularVelocity(y))));
	}
	return d / fmax(scale, 1e-300);
}

/* ---------------------------------------------------------------- 1. sparse vs tree solver on random trees */

static void compare_tree(TreeShape shape, int n, uint64_t seed)
{
	int* parent = malloc((size_t)n * sizeof(int));
	ibJointType* type = malloc((size_t)n * sizeof(ibJointType));
	assert_non_null(parent);
	assert_non_null(type);
	random_tree(shape, n, seed, parent, type);
	ModelSpec spec = {n, parent, type, seed, 1.0};
	ibSolverSettings ss = settings(IB_SOLVER_LGS_SPARSE, 1e-12, 100000), st = settings(IB_SOLVER_LGS, 1e-12, 100000);
	ibWorldId ws = make_world(&ss), wt = make_world(&st);
	Model ms, mt;
	build_model(ws, &spec, &ms);
	build_model(wt, &spec, &mt);
	double t0 = now_s();
	jt_step(ws, 0.01);
	double t1 = now_s();
	jt_step(wt, 0.01);
	double t2 = now_s();
	ibStepStats a = ibWorld_GetStepStats(ws), b = ibWorld_GetStepStats(wt);
	double rel = velocity_rel_diff(&ms, &mt);
	print_message("tree %-13s n %4d: rel |du| %.2e; sparse: errors %.1e m %.1e rad %.1e m/s, %d+%d solves, %.1f ms; "
	              "tree: errors %.1e m %.1e rad %.1e m/s, %d+%d solves, %.1f ms\n",
	              kShapeName[shape], n, rel, a.maxPositionError, a.maxAngularError, a.maxVelocityError,
	              a.positionIterations, a.velocityIterations, 1e3 * (t1 - t0), b.maxPositionError, b.maxAngularError,
	              b.maxVelocityError, b.positionIterations, b.velocityIterations, 1e3 * (t2 - t1));
	if (!a.converged || !b.converged)
		fail_msg("%s n %d: not converged (sparse %d, tree %d)", kShapeName[shape], n, a.converged, b.converged);
	JT_LE(a.maxPositionError, 1e-12);
	JT_LE(a.maxAngularError, 1e-12);
	JT_LE(a.maxVelocityError, 1e-12);
	JT_LE(rel, 1e-9);
	free_model(&ms);
	free_model(&mt);
	ibDestroyWorld(ws);
	ibDestroyWorld(wt);
	free(parent);
	free(type);
}

static void test_trees_agree_with_tree_solver(void** state)
{
	(void)state;
	static const int sizes[] = {5, 40, 300};
	for (int sh = 0; sh < TREE_SHAPE_COUNT; ++sh)
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
			if (sh == TREE_HUB && sizes[k] > 100 && !IBDYN_SLOW_TESTS) continue; /* one dense 1500-row block */
			compare_tree((TreeShape)sh, sizes[k], 11 + (uint64_t)(10 * sh) + k);
		}
}

/* ---------------------------------------------------------------- 2. closed loops (models of test_joints_loops.c) */

static ibWorldId loop_world(void)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver.method = IB_SOLVER_LGS_SPARSE;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}


static ibBodyId ground(ibWorldId w)
{
	ibBodyDef bd = ibDefaultBodyDef();
	return ibCreateBody(w, &bd);
}

/* Step 20 s at h = 0.01; every step converged and within the tolerances; returns how far `probe` moved. */
static double run_checked(ibWorldId w, ibBodyId probe, const char* name, int* maxVelSolves)
{
	ibSolverSettings s = ibWorld_GetSolverSettings(w);
	assert_int_equal(s.method, IB_SOLVER_LGS_SPARSE);
	ibVec3 p0 = ibBody_GetWorldCenterOfMass(probe);
	double travel = 0.0, worstP = 0.0, worstA = 0.0, worstV = 0.0, t0 = now_s();
	long posIt = 0, velIt = 0, subdiv = 0;
	int maxPos = 0, maxVel = 0;
	for (int k = 0; k < 2000; ++k) {
		jt_step(w, 0.01);
		ibStepStats st = ibWorld_GetStepStats(w);
		if (!st.converged) fail_msg("%s: step %d not converged", name, k);
		if (!(st.maxPositionError <= s.positionTolerance) || !(st.maxAngularError <= s.angularTolerance) ||
		    !(st.maxVelocityError <= s.velocityTolerance))
			fail_msg("%s: step %d errors %.3e m, %.3e rad, %.3e m/s", name, k, st.maxPositionError, st.maxAngularError,
			         st.maxVelocityError);
		worstP = fmax(worstP, st.maxPositionError);
		worstA = fmax(worstA, st.maxAngularError);
		worstV = fmax(worstV, st.maxVelocityError);
		posIt += st.positionIterations;
		velIt += st.velocityIterations;
		subdiv += st.stepSubdivisions - 1;
		maxPos = st.positionIterations > maxPos ? st.positionIterations : maxPos;
		maxVel = st.velocityIterations > maxVel ? st.velocityIterations : maxVel;
		travel = fmax(travel, ibDistance(ibBody_GetWorldCenterOfMass(probe), p0));
	}
	print_message("%s (sparse): max errors %.2e m, %.2e rad, %.2e m/s; solves per step: position mean %.2f max %d, "
	              "velocity mean %.2f max %d; extra sub-steps %ld; travel %.3f m; %.3f ms/step\n",
	              name, worstP, worstA, worstV, posIt / 2000.0, maxPos, velIt / 2000.0, maxVel, subdiv, travel,
	              (now_s() - t0) / 2000.0 * 1e3);
	assert_false(ibWorld_HasDiverged(w));
	if (maxVelSolves) *maxVelSolves = maxVel;
	return travel;
}

/* Grashof four-bar (crank AB can turn fully), planar in x-z, hinge axes along y: 20 rows, 1 DOF. */
static void test_four_bar(void** state)
{
	(void)state;
	ibWorldId w = loop_world();
	ibVec3 A = {0, 0, 0}, B = {0.3, 0, 1.0}, C = {2.2, 0, 1.3}, D = {2, 0, 0}, y = {0, 1, 0};
	ibBodyId g = ground(w), crank = jt_link(w, A, B), coupler = jt_link(w, B, C), rocker = jt_link(w, D, C);
	jt_hinge(w, g, crank, A, y);
	jt_hinge(w, crank, coupler, B, y);
	jt_hinge(w, coupler, rocker, C, y);
	jt_hinge(w, rocker, g, D, y);
	ibBody_SetAngularVelocity(crank, ibV3(0, 3.0, 0));
	JT_LE(0.1, run_checked(w, coupler, "four-bar", NULL));
	ibDestroyWorld(w);
}

/* Ring of 6 hinged links, one static (Fig. 3.25), parallel axes: 30 rows of rank 27. */
static void test_hinge_ring(void** state)
{
	(void)state;
	ibWorldId w = loop_world();
	ibVec3 P[6];
	for (int i = 0; i < 6; ++i) {
		double a = IB_PI / 3.0 * i + 0.1 * (i == 2); /* one slightly irregular vertex: no collinear state */
		P[i] = ibV3(cos(a), 0.0, 1.0 + sin(a) * (i == 4 ? 1.2 : 1.0));
	}
	ibBodyId L[6];
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = ibScale(0.5, ibAdd(P[0], P[1]));
	L[0] = ibCreateBody(w, &gd);
	for (int i = 1; i < 6; ++i) L[i] = jt_link(w, P[i], P[(i + 1) % 6]);
	for (int i = 0; i < 6; ++i) jt_hinge(w, L[i], L[(i + 1) % 6], P[(i + 1) % 6], ibV3(0, 1, 0));
	ibBody_SetLinearVelocity(L[3], ibV3(0.5, 0, 0.5));
	int maxVel = 0;
	JT_LE(0.05, run_checked(w, L[3], "6-hinge ring", &maxVel));
	assert_int_equal(maxVel, 1); /* singular system, still one exact velocity solve */
	ibDestroyWorld(w);
}

/* Slider-crank: crank on the ground, connecting rod, piston on a slider along x. */
static void test_slider_crank(void** state)
{
	(void)state;
	ibWorldId w = loop_world();
	ibVec3 A = {0, 0, 0}, B = {0, 0, 0.5}, C = {1.5, 0, 0}, y = {0, 1, 0};
	ibBodyId g = ground(w), crank = jt_link(w, A, B), rod = jt_link(w, B, C);
	ibBodyDef pd = ibDefaultBodyDef();
	pd.type = IB_BODY_DYNAMIC;
	pd.position = C;
	ibBodyId piston = ibCreateBody(w, &pd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox box = {{0.1, 0.1, 0.1}};
	assert_true(ibShape_IsValid(ibCreateBoxShape(piston, &sd, &box)));
	jt_hinge(w, g, crank, A, y);
	jt_hinge(w, crank, rod, B, y);
	jt_hinge(w, rod, piston, C, y);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_SLIDER);
	jd.bodyA = g;
	jd.bodyB = piston;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, C, ibV3(1, 0, 0)), IB_OK);
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	ibBody_SetAngularVelocity(crank, ibV3(0, 6.0, 0));
	JT_LE(0.3, run_checked(w, piston, "slider-crank", NULL));
	ibDestroyWorld(w);
}

/* A non-Grashof four-bar whose crank is kinematic and keeps turning: past the rocker's limit the loop
 * cannot close (an inconsistent system). The step must stay finite, report converged = false while
 * the drive is impossible, and converge again once the crank is back in the feasible range. */
static void test_impossible_drive(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver.method = IB_SOLVER_LGS_SPARSE;
	wd.solver.maxPositionIterations = 50;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ibVec3 A = {0, 0, 0}, B = {1.5, 0, 0}, C = {1.11, 0, 0.456}, D = {2, 0, 0}, y = {0, 1, 0};
	ibBodyId g = ground(w), coupler = jt_link(w, B, C), rocker = jt_link(w, D, C);
	ibBodyDef kd = ibDefaultBodyDef(); /* the crank: kinematic, turning about A = its origin */
	kd.type = IB_BODY_KINEMATIC;
	kd.position = A;
	ibBodyId crank = ibCreateBody(w, &kd);
	assert_true(ibBody_IsValid(crank));
	jt_hinge(w, crank, coupler, B, y);
	jt_hinge(w, coupler, rocker, C, y);
	jt_hinge(w, rocker, g, D, y);
	assert_int_equal(ibBody_SetAngularVelocity(crank, ibV3(0, 2.0, 0)), IB_OK);
	int bad = 0, firstBad = -1, lastBad = -1, steps = 314; /* one turn of the crank */
	for (int k = 0; k < steps; ++k) {
		jt_step(w, 0.01);
		ibStepStats st = ibWorld_GetStepStats(w);
		if (!st.converged) {
			bad++;
			lastBad = k;
			if (firstBad < 0) firstBad = k;
		}
	}
	ibStepStats st = ibWorld_GetStepStats(w);
	print_message("impossible drive: %d of %d steps unconverged (steps %d..%d); last step errors %.1e m, %.1e m/s\n", bad,
	              steps, firstBad, lastBad, st.maxPositionError, st.maxVelocityError);
	assert_false(ibWorld_HasDiverged(w));
	assert_true(bad > 0);              /* the impossible phase is reported */
	assert_true(lastBad < steps - 10); /* and the mechanism recovers */
	assert_true(st.converged);
	JT_LE(st.maxPositionError, 1e-6);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- 3. velocity correction: one solve */

static void check_velocity_one_solve(const char* name, const ModelSpec* spec, bool velocityJoints, int steps)
{
	ibSolverSettings s = settings(IB_SOLVER_LGS_SPARSE, 1e-6, 1000);
	s.maxVelocityIterations = 1; /* exactly one solve */
	ibWorldId w = make_world(&s);
	Model m;
	build_model(w, spec, &m);
	if (velocityJoints) /* velocity-only joints between neighbours: rows only in the velocity system */
		for (int i = 1; i < m.n; i += 3) {
			ibJointDef jd = ibDefaultJointDef(IB_JOINT_VELOCITY);
			jd.bodyA = m.bodies[i - 1];
			jd.bodyB = m.bodies[i];
			jd.linearDofs = 0;
			jd.angularDofs = (i % 2) ? 4u : 3u;
			assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
		}
	double worst = 0.0;
	for (int k = 0; k < steps; ++k) {
		jt_step(w, 0.01);
		ibStepStats st = ibWorld_GetStepStats(w);
		worst = fmax(worst, st.maxVelocityError);
		if (st.velocityIterations != 1 || !(st.maxVelocityError <= 1e-10))
			fail_msg("%s step %d: velocity error %.3e after %d solves (want <= 1e-10 after 1)", name, k,
			         st.maxVelocityError, st.velocityIterations);
	}
	print_message("velocity one solve %-28s (%3d joints%s): max velocity error %.2e\n", name, spec->n,
	              velocityJoints ? " + velocity-only" : "", worst);
	free_model(&m);
	ibDestroyWorld(w);
}

static void test_velocity_one_solve(void** state)
{
	(void)state;
	enum { N = 60 };
	int parent[N];
	ibJointType type[N];
	for (int sh = 0; sh < TREE_SHAPE_COUNT; ++sh) {
		random_tree((TreeShape)sh, N, 70 + (uint64_t)sh, parent, type);
		ModelSpec spec = {N, parent, type, 70 + (uint64_t)sh, 1.0};
		check_velocity_one_solve(kShapeName[sh], &spec, false, 10);
		check_velocity_one_solve(kShapeName[sh], &spec, true, 10);
	}
}

/* ---------------------------------------------------------------- 4. allocations, validation, timing */

typedef struct Counter {
	long allocs, frees;
	size_t live;
} Counter;

static void* count_alloc(size_t n, void* ctx)
{
	Counter* c = ctx;
	c->allocs++;
	c->live += n;
	return malloc(n);
}

static void* count_realloc(void* p, size_t o, size_t n, void* ctx)
{
	Counter* c = ctx;
	c->allocs++;
	c->live += n;
	c->live -= p ? o : 0;
	return realloc(p, n);
}

static void count_free(void* p, size_t n, void* ctx)
{
	Counter* c = ctx;
	if (p) {
		c->frees++;
		c->live -= n;
	}
	free(p);
}

static void test_allocations(void** state)
{
	(void)state;
	Counter c = {0};
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver.method = IB_SOLVER_LGS_SPARSE;
	wd.allocFn = count_alloc;
	wd.reallocFn = count_realloc;
	wd.freeFn = count_free;
	wd.allocContext = &c;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	enum { N = 50 };
	int parent[N];
	ibJointType type[N];
	random_tree(TREE_RANDOM, N, 5, parent, type);
	ModelSpec spec = {N, parent, type, 5, 0.5};
	Model m;
	build_model(w, &spec, &m);
	jt_hinge(w, m.bodies[N - 1], m.ground, ibBody_GetWorldCenterOfMass(m.bodies[N - 1]), ibV3(0, 0, 1)); /* a loop */
	/* two steps first: step.c sizes its warm-start snapshot before the first step has built the basic joints */
	jt_step(w, 0.01);
	jt_step(w, 0.01);
	long a1 = c.allocs, f1 = c.frees;
	for (int k = 0; k < 3; ++k) jt_step(w, 0.01);
	print_message("allocations: first two steps %ld, steps 3-5: %ld allocations, %ld frees\n", a1, c.allocs - a1,
	              c.frees - f1);
	assert_int_equal(c.allocs - a1, 0);
	assert_int_equal(c.frees - f1, 0);
	free_model(&m);
	ibDestroyWorld(w);
	assert_int_equal(c.live, 0);
}

static void test_method_validation(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver.method = IB_SOLVER_LGS_SPARSE;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ibSolverSettings s = ibWorld_GetSolverSettings(w);
	assert_int_equal(s.method, IB_SOLVER_LGS_SPARSE);
	s.method = (ibJointSolver)(IB_SOLVER_LGS_SPARSE + 1);
	assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_ERR_INVALID_ARGUMENT);
	s.method = IB_SOLVER_LGS;
	assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	s.method = IB_SOLVER_LGS_SPARSE;
	assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	ibDestroyWorld(w);
}

/* ms/step of the benchmark's tree255 (bench/bench_common.c: binary tree of 255 boxes, width 0.04 m,
 * lengths 0.1 m x 1.5^(levels below), density 600, ball joints at the lower end of the parent, 10 N m
 * torque on the root during the first step; h = 1/30, eps = 1e-6 as in the thesis' Table 3.4). */
static double tree255_ms(ibJointSolver method, int steps, double* maxErr, double* posIt)
{
	enum { DEPTHS = 8, N = (1 << DEPTHS) - 1 };
	ibSolverSettings s = ibDefaultSolverSettings();
	s.method = method;
	ibWorldId w = make_world(&s);
	ibBodyId g = jt_static(w, IB_VEC3_ZERO), b[N];
	ibVec3 center[N], half[N];
	int depth[N];
	for (int i = 0; i < N; ++i) {
		int p = i == 0 ? -1 : (i - 1) / 2;
		depth[i] = p < 0 ? 0 : depth[p] + 1;
		double len = pow(1.5, (double)(DEPTHS - 1 - depth[i])) * 0.1;
		ibVec3 anchor = IB_VEC3_ZERO;
		if (p >= 0) {
			anchor = ibV3(center[p].x, center[p].y, center[p].z - half[p].z);
			double side = (i == 2 * p + 1) ? -1.0 : 1.0;
			if (depth[p] % 2 == 0)
				anchor.x += side * 0.02;
			else
				anchor.y += side * 0.02;
		}
		center[i] = ibV3(anchor.x, anchor.y, anchor.z - 0.5 * len);
		half[i] = ibV3(0.02, 0.02, 0.5 * len);
		b[i] = jt_box(w, center[i], IB_QUAT_IDENTITY, half[i], 600.0);
		ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
		jd.bodyA = p < 0 ? g : b[p];
		jd.bodyB = b[i];
		assert_int_equal(ibJointDef_SetWorldAnchors(&jd, anchor, anchor), IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	}
	*maxErr = 0.0;
	*posIt = 0.0;
	double t = 0.0;
	for (int k = 0; k < steps; ++k) {
		if (k == 0) assert_int_equal(ibBody_ApplyTorque(b[0], ibV3(6.0, 8.0, 0.0)), IB_OK);
		double t0 = now_s();
		jt_step(w, 1.0 / 30.0);
		t += now_s() - t0;
		ibStepStats st = ibWorld_GetStepStats(w);
		*maxErr = fmax(*maxErr, st.maxPositionError);
		*posIt += st.positionIterations / (double)steps;
	}
	ibDestroyWorld(w);
	return 1e3 * t / steps;
}

static void test_tree255_timing(void** state)
{
	(void)state;
	int steps = IBDYN_SLOW_TESTS ? 300 : 30;
	double es, et, is, it;
	double ms = tree255_ms(IB_SOLVER_LGS_SPARSE, steps, &es, &is), mt = tree255_ms(IB_SOLVER_LGS, steps, &et, &it);
	print_message("tree255 (h = 1/30, eps 1e-6, %d steps): sparse %.2f ms/step (%.2f position solves/step, max error "
	              "%.1e m), tree %.2f ms/step (%.2f position solves/step, max error %.1e m)\n",
	              steps, ms, is, es, mt, it, et);
	JT_LE(es, 1e-6);
	JT_LE(et, 1e-6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_method_validation),
	    cmocka_unit_test(test_trees_agree_with_tree_solver),
	    cmocka_unit_test(test_four_bar),
	    cmocka_unit_test(test_hinge_ring),
	    cmocka_unit_test(test_slider_crank),
	    cmocka_unit_test(test_impossible_drive),
	    cmocka_unit_test(test_velocity_one_solve),
	    cmocka_unit_test(test_allocations),
	    cmocka_unit_test(test_tree255_timing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
