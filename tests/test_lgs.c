/* The LGS method (src/joints/solver_lgs_tree.c) against the iterative method and against its own
 * claims: (1) on small systems at tight tolerances (1e-12) both methods give the same body states
 * over 20 steps (1e-9); (2) the velocity correction of an acyclic model is one exact solve; (3) the
 * O(n) block elimination on random trees (chains, 20-ary stars, binary, random parents; ball, hinge
 * and universal joints mixed) gives the same velocity correction, and the same whole step, as the
 * iterative method; (4) its memory grows linearly with the number of bodies and a step allocates
 * nothing after the first; (5) a subdivided first step snapshots all warm-start impulses.
 * Timing is not tested here (bench/). */
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
#include "joints/joint_internal.h" /* ib_world_get, ib_joints_rebuild_basics (test 5) */

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

static double now_s(void)
{
	struct timespec ts;
	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- models */

/* A tree of n dynamic boxes; parent[i] < i, or -1 for a body held by the (static) world. Geometry,
 * masses, poses and velocities are drawn from the seed only, so the same call builds the same world. */
#define MAX_BODIES 1000

typedef struct Model {
	int n;
	ibBodyId bodies[MAX_BODIES];
	ibBodyId ground;
} Model;

typedef struct ModelSpec {
	int n;
	const int* parent;
	const ibJointType* type;
	uint64_t seed;
	double velocity; /* random linear and angular velocities in [-velocity, velocity]^3 */
} ModelSpec;

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

/* Worlds created by a test; the teardown destroys those a failing assertion left behind. */
static ibWorldId g_worlds[16];
static int g_worldCount;

static ibWorldId track(ibWorldId w)
{
	assert_true(ibWorld_IsValid(w));
	if (g_worldCount < (int)(sizeof g_worlds / sizeof g_worlds[0])) g_worlds[g_worldCount++] = w;
	return w;
}

static int destroy_worlds(void** state)
{
	(void)state;
	for (int i = 0; i < g_worldCount; ++i)
		if (ibWorld_IsValid(g_worlds[i])) ibDestroyWorld(g_worlds[i]);
	g_worldCount = 0;
	return 0;
}

static ibWorldId make_world(const ibSolverSettings* s)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver = *s;
	return track(ibCreateWorld(&wd));
}

static void build_model(ibWorldId w, const ModelSpec* spec, Model* m)
{
	jtRng rng = {spec->seed * 0x9e3779b97f4a7c15ull + 12345u};
	assert_true(spec->n <= MAX_BODIES);
	m->n = spec->n;
	m->ground = jt_static(w, IB_VEC3_ZERO);
	for (int i = 0; i < spec->n; ++i) {
		int p = spec->parent[i];
		/* joint anchor: on the parent, at a random offset from its centre (world origin for roots) */
		ibVec3 anchor = p < 0 ? IB_VEC3_ZERO
		                      : ibAdd(ibBody_GetWorldCenterOfMass(m->bodies[p]), ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 com = ibAdd(anchor, ibScale(jt_uniform(&rng, 0.15, 0.4), jt_rand_unit(&rng)));
		ibVec3 half = ibV3(jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25), jt_uniform(&rng, 0.05, 0.25));
		m->bodies[i] = jt_box(w, com, jt_rand_quat(&rng), half, jt_uniform(&rng, 300.0, 3000.0));
		ibBodyId a = p < 0 ? m->ground : m->bodies[p];
		ibJointDef jd = ibDefaultJointDef(spec->type[i]);
		jd.bodyA = a;
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

/* Largest differences of COM position (m), velocity (m/s), angular velocity (rad/s) and
 * orientation (rad) between the same bodies of two worlds. */
typedef struct StateDiff {
	double s, v, w, q;
} StateDiff;

static StateDiff state_diff(const Model* a, const Model* b)
{
	StateDiff d = {0};
	for (int i = 0; i < a->n; ++i) {
		ibBodyId x = a->bodies[i], y = b->bodies[i];
		d.s = fmax(d.s, ibDistance(ibBody_GetWorldCenterOfMass(x), ibBody_GetWorldCenterOfMass(y)));
		d.v = fmax(d.v, ibDistance(ibBody_GetLinearVelocity(x), ibBody_GetLinearVelocity(y)));
		d.w = fmax(d.w, ibDistance(ibBody_GetAngularVelocity(x), ibBody_GetAngularVelocity(y)));
		d.q = fmax(d.q, jt_quat_angle(ibQuatMul(ibQuatConj(ibBody_GetRotation(x)), ibBody_GetRotation(y))));
	}
	return d;
}

static double velocity_scale(const Model* m)
{
	double s = 0.0;
	for (int i = 0; i < m->n; ++i)
		s = fmax(s, fmax(ibLength(ibBody_GetLinearVelocity(m->bodies[i])), ibLength(ibBody_GetAngularVelocity(m->bodies[i]))));
	return s;
}

/* The three small models of tests 1 and 2. */
static const int kChainParent[] = {-1, 0, 1};
static const ibJointType kChainType[] = {IB_JOINT_BALL, IB_JOINT_BALL, IB_JOINT_BALL};
static const int kPendulumParent[] = {-1, 0};
static const ibJointType kPendulumType[] = {IB_JOINT_HINGE, IB_JOINT_HINGE};
static const int kTreeParent[] = {-1, 0, 0, 1};
static const ibJointType kTreeType[] = {IB_JOINT_BALL, IB_JOINT_UNIVERSAL, IB_JOINT_FIXED, IB_JOINT_HINGE};

typedef struct SmallModel {
	const char* name;
	ModelSpec spec;
} SmallModel;

static const SmallModel kSmall[] = {
    {"3-link ball chain", {3, kChainParent, kChainType, 1, 1.0}},
    {"hinge double pendulum", {2, kPendulumParent, kPendulumType, 2, 1.0}},
    {"tree: ball, universal, fixed, hinge", {4, kTreeParent, kTreeType, 3, 1.0}},
};
#define SMALL_COUNT ((int)(sizeof kSmall / sizeof kSmall[0]))

/* ---------------------------------------------------------------- 1. LGS vs iterative, small systems */

static void test_agreement_small(void** state)
{
	(void)state;
	const double tol = 1e-12, h = 0.01;
	const int steps = 20, cap = 1000000;
	for (int mi = 0; mi < SMALL_COUNT; ++mi) {
		for (uint64_t seed = 0; seed < 3; ++seed) {
			ModelSpec spec = kSmall[mi].spec;
			spec.seed = spec.seed * 100 + seed;
			ibSolverSettings sl = settings(IB_SOLVER_LGS, tol, cap), si = settings(IB_SOLVER_ITERATIVE, tol, cap);
			ibWorldId wl = make_world(&sl), wi = make_world(&si);
			static Model ml, mit;
			build_model(wl, &spec, &ml);
			build_model(wi, &spec, &mit);
			StateDiff d0 = state_diff(&ml, &mit);
			assert_true(d0.s == 0.0 && d0.v == 0.0 && d0.w == 0.0); /* same world twice */
			StateDiff worst = {0};
			long itL = 0, itI = 0;
			double errL = 0.0, errI = 0.0;
			for (int k = 0; k < steps; ++k) {
				jt_step(wl, h);
				jt_step(wi, h);
				ibStepStats a = ibWorld_GetStepStats(wl), b = ibWorld_GetStepStats(wi);
				if (!a.converged || !b.converged)
					fail_msg("%s seed %d step %d: not converged (lgs %d after %d+%d solves: errors %.2e m %.2e rad %.2e m/s; "
					         "iterative %d after %d+%d sweeps of %d: errors %.2e m %.2e rad %.2e m/s)",
					         kSmall[mi].name, (int)seed, k, a.converged, a.positionIterations, a.velocityIterations,
					         a.maxPositionError, a.maxAngularError, a.maxVelocityError, b.converged, b.positionIterations,
					         b.velocityIterations, cap, b.maxPositionError, b.maxAngularError, b.maxVelocityError);
				itL += a.positionIterations;
				itI += b.positionIterations;
				errL = fmax(errL, fmax(a.maxPositionError, fmax(a.maxAngularError, a.maxVelocityError)));
				errI = fmax(errI, fmax(b.maxPositionError, fmax(b.maxAngularError, b.maxVelocityError)));
				StateDiff d = state_diff(&ml, &mit);
				worst.s = fmax(worst.s, d.s);
				worst.v = fmax(worst.v, d.v);
				worst.w = fmax(worst.w, d.w);
				worst.q = fmax(worst.q, d.q);
			}
			print_message("agreement %-36s seed %d: |ds| %.2e m, |dv| %.2e m/s, |dw| %.2e rad/s, |dq| %.2e rad; "
			              "position sweeps lgs %ld / iterative %ld; max joint error lgs %.1e, iterative %.1e\n",
			              kSmall[mi].name, (int)seed, worst.s, worst.v, worst.w, worst.q, itL, itI, errL, errI);
			JT_LE(worst.s, 1e-9);
			JT_LE(worst.v, 1e-9);
			JT_LE(worst.w, 1e-9);
			JT_LE(worst.q, 1e-9);
			ibDestroyWorld(wl);
			ibDestroyWorld(wi);
		}
	}
}

/* ---------------------------------------------------------------- 2. velocity correction: one exact solve */

static void check_velocity_exact(const char* name, const ModelSpec* spec, int steps)
{
	ibSolverSettings s = settings(IB_SOLVER_LGS, 1e-12, 1000000);
	ibWorldId w = make_world(&s);
	static Model m;
	build_model(w, spec, &m);
	double worst = 0.0;
	int maxIt = 0;
	for (int k = 0; k < steps; ++k) {
		jt_step(w, 0.01);
		ibStepStats st = ibWorld_GetStepStats(w);
		worst = fmax(worst, st.maxVelocityError);
		maxIt = st.velocityIterations > maxIt ? st.velocityIterations : maxIt;
		if (!(st.maxVelocityError <= 1e-12) || st.velocityIterations != 1)
			fail_msg("%s step %d: velocity error %.3e m/s after %d velocity iterations (want <= 1e-12 after 1)", name, k,
			         st.maxVelocityError, st.velocityIterations);
	}
	print_message("velocity exact %-36s (%4d joints, %d steps): max velocity error %.2e m/s, max velocity iterations %d\n",
	              name, spec->n, steps, worst, maxIt);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- random trees */

typedef enum TreeShape { TREE_CHAIN, TREE_STAR, TREE_BINARY, TREE_RANDOM, TREE_SHAPE_COUNT } TreeShape;
static const char* const kShapeName[] = {"chain", "20-ary star", "binary", "random parent"};

static void random_tree(TreeShape shape, int n, uint64_t seed, int* parent, ibJointType* type)
{
	jtRng rng = {seed * 0x2545f4914f6cdd1dull + 777u};
	static const ibJointType kinds[3] = {IB_JOINT_BALL, IB_JOINT_HINGE, IB_JOINT_UNIVERSAL};
	for (int i = 0; i < n; ++i) {
		switch (shape) {
		case TREE_CHAIN: parent[i] = i - 1; break;
		case TREE_STAR: parent[i] = i == 0 ? -1 : (i - 1) / 20; break; /* every inner body has 20 children */
		case TREE_BINARY: parent[i] = i == 0 ? -1 : (i - 1) / 2; break;
		default: parent[i] = i == 0 ? -1 : (int)jt_uniform(&rng, 0.0, (double)i); break;
		}
		if (parent[i] >= i) parent[i] = i - 1;
		type[i] = kinds[(int)jt_uniform(&rng, 0.0, 3.0) % 3];
	}
}

static void test_velocity_exact(void** state)
{
	(void)state;
	for (int mi = 0; mi < SMALL_COUNT; ++mi) check_velocity_exact(kSmall[mi].name, &kSmall[mi].spec, 100);
#if IBDYN_SLOW_TESTS
	enum { N = 1000 };
#else
	enum { N = 100 };
#endif
	static int parent[N];
	static ibJointType type[N];
	assert_true(N <= MAX_BODIES);
	for (int sh = 0; sh < TREE_SHAPE_COUNT; ++sh) {
		random_tree((TreeShape)sh, N, 40 + (uint64_t)sh, parent, type);
		ModelSpec spec = {N, parent, type, 40 + (uint64_t)sh, 1.0};
		check_velocity_exact(kShapeName[sh], &spec, 20);
	}
}

/* ---------------------------------------------------------------- 3. O(n) path vs iterative on random trees */

/* One step of the same random tree with both methods at velocity tolerance 1e-10. With
 * `jointCorrection` false the joint correction is switched off by a huge position tolerance (its
 * result would depend on that tolerance), so both worlds reach the velocity correction with
 * identical states: its solution is unique and the post-step velocities must agree to the
 * tolerance times the conditioning. With `jointCorrection` true the whole step is compared, the
 * joint correction at 1e-10 m / rad as well. Returns the relative velocity difference. */
static double compare_tree(TreeShape shape, int n, uint64_t seed, bool jointCorrection)
{
	static int parent[MAX_BODIES];
	static ibJointType type[MAX_BODIES];
	assert_true(n <= MAX_BODIES);
	random_tree(shape, n, seed, parent, type);
	ModelSpec spec = {n, parent, type, seed, 1.0};
	ibSolverSettings sl = settings(IB_SOLVER_LGS, 1e-10, 10000000), si = settings(IB_SOLVER_ITERATIVE, 1e-10, 10000000);
	if (!jointCorrection) sl.positionTolerance = sl.angularTolerance = si.positionTolerance = si.angularTolerance = 1e6;
	ibWorldId wl = make_world(&sl), wi = make_world(&si);
	static Model ml, mit;
	build_model(wl, &spec, &ml);
	build_model(wi, &spec, &mit);
	double t0 = now_s();
	jt_step(wl, 0.01);
	double t1 = now_s();
	jt_step(wi, 0.01);
	double t2 = now_s();
	ibStepStats a = ibWorld_GetStepStats(wl), b = ibWorld_GetStepStats(wi);
	StateDiff d = state_diff(&ml, &mit);
	double scale = velocity_scale(&mit);
	double rel = fmax(d.v, d.w) / scale;
	print_message("tree %-13s n %4d %s: rel |du| %.2e (|dv| %.1e m/s, |dw| %.1e rad/s, scale %5.2f); lgs %d+%d solves "
	              "%.3f s, velocity error %.1e; iterative %d+%d sweeps %.2f s, velocity error %.1e\n",
	              kShapeName[shape], n, jointCorrection ? "full step " : "velocity  ", rel, d.v, d.w, scale,
	              a.positionIterations, a.velocityIterations, t1 - t0, a.maxVelocityError, b.positionIterations,
	              b.velocityIterations, t2 - t1, b.maxVelocityError);
	if (!a.converged || !b.converged) fail_msg("not converged (lgs %d, iterative %d)", a.converged, b.converged);
	JT_LE(a.maxVelocityError, 1e-10);
	JT_LE(b.maxVelocityError, 1e-10);
	if (jointCorrection) {
		JT_LE(fmax(a.maxPositionError, a.maxAngularError), 1e-10);
		JT_LE(fmax(b.maxPositionError, b.maxAngularError), 1e-10);
	}
	JT_LE(rel, 1e-7);
	ibDestroyWorld(wl);
	ibDestroyWorld(wi);
	return rel;
}

static void test_tree_vs_iterative(void** state)
{
	(void)state;
#if IBDYN_SLOW_TESTS
	static const int sizes[] = {10, 50, 200, 1000}, fullSizes[] = {10, 50, 200};
#else
	static const int sizes[] = {10, 50, 150}, fullSizes[] = {10, 40}; /* ASan build: about 10 s */
#endif
	double worst = 0.0, worstFull = 0.0;
	for (int sh = 0; sh < TREE_SHAPE_COUNT; ++sh) {
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
			worst = fmax(worst, compare_tree((TreeShape)sh, sizes[k], 7 + (uint64_t)k, false));
		for (size_t k = 0; k < sizeof fullSizes / sizeof fullSizes[0]; ++k)
			worstFull = fmax(worstFull, compare_tree((TreeShape)sh, fullSizes[k], 17 + (uint64_t)k, true));
	}
	print_message("tree vs iterative: worst relative velocity difference %.2e (velocity correction), %.2e (full step)\n",
	              worst, worstFull);
}

/* ---------------------------------------------------------------- 4. memory of the O(n) path */

typedef struct Counter {
	long allocs, frees;
	size_t live, peak;
} Counter;

static void* count_alloc(size_t n, void* ctx)
{
	Counter* c = ctx;
	c->allocs++;
	c->live += n;
	if (c->live > c->peak) c->peak = c->live;
	return malloc(n);
}

static void* count_realloc(void* p, size_t o, size_t n, void* ctx)
{
	Counter* c = ctx;
	c->allocs++;
	c->live += n;
	c->live -= p ? o : 0;
	if (c->live > c->peak) c->peak = c->live;
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

/* Peak live bytes of building a ball-joint tree of n bodies and stepping it 3 times, and the live
 * bytes after the steps. Default settings (warm start, step subdivision) unless `plain` (no warm
 * start, no subdivision: no snapshots, so two worlds differ only by the solver's own data). Steps
 * 2 and 3 must not allocate. */
typedef struct MemUse {
	size_t peak, live;
} MemUse;

static MemUse mem_use(TreeShape shape, int n, ibJointSolver method, bool plain)
{
	static Counter c; /* static: the teardown may free into it after a failed assertion */
	memset(&c, 0, sizeof c);
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.solver.method = method;
	if (plain) { /* memory does not depend on the iteration counts: keep these worlds cheap */
		wd.solver.warmStart = false;
		wd.solver.maxStepSubdivisions = 0;
		wd.solver.maxPositionIterations = wd.solver.maxVelocityIterations = 1;
	}
	wd.allocFn = count_alloc;
	wd.reallocFn = count_realloc;
	wd.freeFn = count_free;
	wd.allocContext = &c;
	ibWorldId w = track(ibCreateWorld(&wd));
	static int parent[MAX_BODIES];
	static ibJointType type[MAX_BODIES];
	assert_true(n <= MAX_BODIES);
	random_tree(shape, n, 99, parent, type);
	for (int i = 0; i < n; ++i) type[i] = IB_JOINT_BALL;
	ModelSpec spec = {n, parent, type, 99, 0.5};
	static Model m;
	build_model(w, &spec, &m);
	jt_step(w, 0.01);
	long allocs1 = c.allocs, frees1 = c.frees;
	jt_step(w, 0.01);
	jt_step(w, 0.01);
	long allocs23 = c.allocs - allocs1, frees23 = c.frees - frees1;
	MemUse u = {c.peak, c.live};
	if (allocs23 != 0 || frees23 != 0)
		fail_msg("%s n %d (%s): %ld allocation and %ld free calls in steps 2..3 (want none)", kShapeName[shape], n,
		         method == IB_SOLVER_LGS ? "lgs" : "iterative", allocs23, frees23);
	ibDestroyWorld(w);
	if (c.live != 0) fail_msg("%zu bytes still live after ibDestroyWorld (sizes passed to freeFn do not match)", c.live);
	return u;
}

static void test_memory_linear(void** state)
{
	(void)state;
	static const int sizes[] = {125, 250, 500, 1000};
	static const TreeShape shapes[] = {TREE_CHAIN, TREE_STAR, TREE_BINARY, TREE_RANDOM};
	for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
		TreeShape sh = shapes[si];
		size_t prev = 0, prevExtra = 0;
		for (int k = 0; k < 4; ++k) {
			MemUse l = mem_use(sh, sizes[k], IB_SOLVER_LGS, false);
			MemUse lp = mem_use(sh, sizes[k], IB_SOLVER_LGS, true);
			MemUse ip = mem_use(sh, sizes[k], IB_SOLVER_ITERATIVE, true);
			assert_true(lp.live > ip.live);
			size_t p = l.peak, extra = lp.live - ip.live; /* what the LGS path keeps (its tree) */
			print_message("memory %-13s n %4d: peak %8zu bytes (%.0f B/body); LGS data after the steps %7zu (%.0f B/body)\n",
			              kShapeName[sh], sizes[k], p, (double)p / sizes[k], extra, (double)extra / sizes[k]);
			if (k > 0) {
				double ratio = (double)p / (double)prev, ratioExtra = (double)extra / (double)prevExtra;
				print_message("memory %-13s peak(%d)/peak(%d) = %.3f, LGS part %.3f\n", kShapeName[sh], sizes[k],
				              sizes[k - 1], ratio, ratioExtra);
				JT_LE(ratio, 2.3);
				JT_LE(1.7, ratio);
				JT_LE(ratioExtra, 2.3);
				JT_LE(1.7, ratioExtra);
			}
			prev = p;
			prevExtra = extra;
		}
	}
}

/* The first step after the joints were created is subdivided (joint correction capped at one solve
 * or sweep). The step snapshot of the warm-start impulses must cover all basic joints although they
 * are built only inside the step: the result must equal that of a world whose basic joints were
 * built before the step (its snapshot is sized correctly). Under ASan an undersized snapshot is a
 * heap-buffer-overflow in ib_joints_warm_restore; the iterative method also uses what it read. */
static void test_first_step_subdivision(void** state)
{
	(void)state;
	enum { N = 20 };
	static int parent[N];
	static ibJointType type[N];
	random_tree(TREE_CHAIN, N, 5, parent, type);
	ModelSpec spec = {N, parent, type, 5, 1.0};
	static const ibJointSolver methods[2] = {IB_SOLVER_LGS, IB_SOLVER_ITERATIVE};
	for (int mi = 0; mi < 2; ++mi) {
		ibSolverSettings s = settings(methods[mi], 1e-12, 1);
		s.warmStart = true;
		s.maxStepSubdivisions = 2;
		ibWorldId wa = make_world(&s), wb = make_world(&s);
		static Model ma, mb;
		build_model(wa, &spec, &ma);
		build_model(wb, &spec, &mb);
		assert_true(ib_joints_rebuild_basics(ib_world_get(wb)));
		jt_step(wa, 0.01);
		jt_step(wb, 0.01);
		ibStepStats sa = ibWorld_GetStepStats(wa), sb = ibWorld_GetStepStats(wb);
		StateDiff d = state_diff(&ma, &mb);
		print_message("first step (%s) subdivided into %d / %d sub-steps: |ds| %.2e m, |dv| %.2e m/s, |dw| %.2e rad/s\n",
		              mi == 0 ? "lgs" : "iterative", sa.stepSubdivisions, sb.stepSubdivisions, d.s, d.v, d.w);
		assert_int_equal(sb.stepSubdivisions, 4);
		assert_int_equal(sa.stepSubdivisions, sb.stepSubdivisions);
		assert_true(d.s == 0.0 && d.v == 0.0 && d.w == 0.0 && d.q == 0.0);
		ibDestroyWorld(wa);
		ibDestroyWorld(wb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_agreement_small, destroy_worlds),
	    cmocka_unit_test_teardown(test_velocity_exact, destroy_worlds),
	    cmocka_unit_test_teardown(test_tree_vs_iterative, destroy_worlds),
	    cmocka_unit_test_teardown(test_memory_linear, destroy_worlds),
	    cmocka_unit_test_teardown(test_first_step_subdivision, destroy_worlds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
