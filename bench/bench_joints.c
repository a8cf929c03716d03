/* Joint benchmark (Bender's dissertation §3.3.3.1, DIGEST §22): ball-jointed chains and binary trees of boxes,
 * run on the peer engines (ODE quickstep/worldstep, Bullet sequential impulses, Bullet Featherstone) and on ibdyn
 * (iterative method cold and warm-started, LGS method).
 * Output: one `bench: scene=... engine=... ms_per_step=... max_error=... key=value...` line per run, the
 * dissertation's reference figures as engine=thesis-* lines next to them, and ibdyn-lgs/peer time ratios.
 * Usage: bench_joints [--repeats=N] [--no-peers] [--max-ibdyn-steps=N] [scene...]
 *   (e.g. `bench_joints chain100 tree127`; default: all scenes; N = 2: each time is the fastest of N identical
 *   runs, ibdyn runs longer than a few seconds are not repeated). See bench/README.md. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "ibdyn/ibdyn.h"
#include "peers.h"

/* Dissertation figures (ms per step). Table 3.1: chains at h = 0.01, eps = 1e-6. */
static const int THESIS_CHAIN_N[5] = {10, 20, 30, 40, 50};
static const double THESIS_CHAIN_ITERATIVE[5] = {3.30, 23.20, 71.65, 157.69, 287.14};
static const double THESIS_CHAIN_LGS[5] = {2.11, 2.78, 3.63, 4.60, 6.28};
/* Table 3.3 (iterative) and Table 3.4 (LGS): trees at h = 1/30, eps = 1e-3, 1e-4, 1e-6. */
static const int THESIS_TREE_N[4] = {31, 63, 127, 255};
static const char* const THESIS_EPS[3] = {"1e-3", "1e-4", "1e-6"};
static const double TREE_TOL[3] = {1e-3, 1e-4, 1e-6};
static const double THESIS_TREE_ITERATIVE[4][3] = {
    {2.73, 7.07, 15.87}, {7.86, 21.87, 54.25}, {20.35, 63.77, 169.07}, {51.47, 176.96, 494.15}};
static const double THESIS_TREE_LGS[4][3] = {
    {3.51, 3.99, 4.53}, {6.95, 7.09, 7.89}, {18.38, 19.05, 19.66}, {57.72, 57.61, 59.48}};

/* Peer lines of the scene being run, for the ratios. */
#define MAX_PEERS 8
typedef struct PeerTime {
	const char* engine;
	double ms;
	double maxError;
	int steps;
} PeerTime;

static void print_thesis(const char* scene, const char* engine, double ms, const char* source, const char* eps)
{
	printf("bench: scene=%s engine=%s ms_per_step=%.2f max_error=nan source=%s", scene, engine, ms, source);
	if (eps) printf(" eps=%s", eps);
	putchar('\n');
}

static void print_thesis_lines(const BenchModel* m)
{
	for (int i = 0; i < 5; ++i) {
		char name[32];
		snprintf(name, sizeof name, "chain%d", THESIS_CHAIN_N[i]);
		if (strcmp(name, m->name) != 0) continue;
		print_thesis(m->name, "thesis-iterative", THESIS_CHAIN_ITERATIVE[i], "table3.1", "1e-6");
		print_thesis(m->name, "thesis-lgs", THESIS_CHAIN_LGS[i], "table3.1", "1e-6");
	}
	for (int i = 0; i < 4; ++i) {
		char name[32];
		snprintf(name, sizeof name, "tree%d", THESIS_TREE_N[i]);
		if (strcmp(name, m->name) != 0) continue;
		for (int e = 0; e < 3; ++e) {
			char engine[48];
			snprintf(engine, sizeof engine, "thesis-iterative-eps%s", THESIS_EPS[e]);
			print_thesis(m->name, engine, THESIS_TREE_ITERATIVE[i][e], "table3.3", THESIS_EPS[e]);
		}
		for (int e = 0; e < 3; ++e) {
			char engine[48];
			snprintf(engine, sizeof engine, "thesis-lgs-eps%s", THESIS_EPS[e]);
			print_thesis(m->name, engine, THESIS_TREE_LGS[i][e], "table3.4", THESIS_EPS[e]);
		}
	}
	fflush(stdout);
}

/* ==== ibdyn =================================================================================================== */

/** One ibdyn configuration. */
typedef struct IbdynEngine {
	const char* name;     /**< engine name in the bench lines */
	ibJointSolver method; /**< IB_SOLVER_ITERATIVE or IB_SOLVER_LGS */
	bool warmStart;       /**< ibSolverSettings.warmStart */
	int maxIterations;    /**< maxPositionIterations = maxVelocityIterations */
	int maxSteps;         /**< at most this many steps (0 = the scene's step count) */
	int subdivisions;     /**< ibSolverSettings.maxStepSubdivisions; -1 = the library default */
	bool ratios;          /**< print the ours/peer time ratios for this engine */
} IbdynEngine;

/** What the ibdyn run reports beyond BenchResult. */
typedef struct IbdynStats {
	double posIter, velIter;    /**< mean position / velocity sweeps per step (ibStepStats) */
	int posIterMax, velIterMax; /**< largest per step */
	int nonconverged;           /**< steps with ibStepStats.converged == false */
	int subdividedSteps;        /**< steps the library redid as sub-steps (ibStepStats.stepSubdivisions > 1) */
	int substepsMax;            /**< largest ibStepStats.stepSubdivisions (sub-steps of one step) */
	int stoppedAt;              /**< step after which the run was stopped because it blew up (0 = ran to the end) */
	int subdivCap;              /**< ibSolverSettings.maxStepSubdivisions used */
	int firstNonconverged;      /**< 1-based number of the first such step (0 = none) */
	double ownMaxError;         /**< max over steps of ibStepStats.maxPositionError (ibdyn's own measurement) */
	double worldPointError;     /**< max joint error from ibBody_GetWorldPoint of the set-up local anchors */
	double setupMismatch;       /**< max |ibBody_GetLocalPoint(anchor) - model local point| at set-up (m) */
	double inertiaMismatch;     /**< max relative deviation of ibdyn's box inertia from BenchBody.inertia */
	double wallSeconds;         /**< wall time of the whole run, set-up and measurements included (s) */
} IbdynStats;

/* A run is stopped once its energy exceeds the first step's by this factor times max(|E_first|, 0.01 J). */
#define IBDYN_BLOWUP_FACTOR 1000.0

static ibVec3 v3(const double* a) { return ibV3(a[0], a[1], a[2]); }

static void put3(ibVec3 v, double* out)
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

/* Build the model in a new ibdyn world: one dynamic body per BenchBody (frame = principal frame, origin at the
 * COM, one box shape with the model's half extents and explicit mass), one static body at the origin for the
 * world-fixed joints, one ball joint per BenchJoint (body A = parent, body B = child, both anchors at the world
 * joint point). Steps it `steps` times; the wall time is taken around ibWorld_Step only, the joint error after
 * every step from the body poses with bench_max_joint_error (as for the peers) and, as a cross-check, from
 * ibBody_GetWorldPoint of the local anchors ibBody_GetLocalPoint gave at set-up.
 * Returns 0, or -1 if the model could not be built. */
static int run_ibdyn(const BenchModel* m, double h, int steps, double tol, const IbdynEngine* e, BenchResult* out,
                     IbdynStats* st)
{
	double tStart = bench_now_ms();
	memset(out, 0, sizeof *out);
	memset(st, 0, sizeof *st);
	const int n = m->bodyCount, nj = m->jointCount;
	ibBodyId* bodies = calloc((size_t)n, sizeof *bodies);
	ibBodyId* jointA = calloc((size_t)nj, sizeof *jointA);
	ibBodyId* jointB = calloc((size_t)nj, sizeof *jointB);
	ibVec3* localA = calloc((size_t)nj, sizeof *localA);
	ibVec3* localB = calloc((size_t)nj, sizeof *localB);
	double* pos = malloc(sizeof(double) * 3 * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	double* lin = malloc(sizeof(double) * 3 * (size_t)n);
	double* ang = malloc(sizeof(double) * 3 * (size_t)n);
	int rc = -1;
	ibWorldId world = IB_NULL_WORLD;
	if (!bodies || !jointA || !jointB || !localA || !localB || !pos || !quat || !lin || !ang) goto done;

	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = v3(m->gravity);
	wd.solver.method = e->method;
	wd.solver.warmStart = e->warmStart;
	wd.solver.positionTolerance = tol;
	wd.solver.angularTolerance = tol;
	wd.solver.velocityTolerance = tol;
	wd.solver.maxPositionIterations = e->maxIterations;
	wd.solver.maxVelocityIterations = e->maxIterations;
	if (e->subdivisions >= 0) wd.solver.maxStepSubdivisions = e->subdivisions;
	st->subdivCap = wd.solver.maxStepSubdivisions;
	world = ibCreateWorld(&wd);
	if (!ibWorld_IsValid(world)) {
		fprintf(stderr, "bench: ibCreateWorld failed\n");
		goto done;
	}
	ibBodyDef gd = ibDefaultBodyDef(); /* static, at the origin, identity rotation */
	gd.name = "ground";
	ibBodyId ground = ibCreateBody(world, &gd);
	if (!ibBody_IsValid(ground)) goto fail;

	for (int i = 0; i < n; ++i) {
		const BenchBody* b = &m->bodies[i];
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = v3(b->center);
		bd.rotation = (ibQuat){b->rotation[0], b->rotation[1], b->rotation[2], b->rotation[3]};
		bd.linearVelocity = v3(b->linearVelocity);
		bd.angularVelocity = v3(b->angularVelocity);
		bodies[i] = ibCreateBody(world, &bd);
		if (!ibBody_IsValid(bodies[i])) goto fail;
		ibShapeDef sd = ibDefaultShapeDef();
		sd.mass = b->mass;
		ibBox box = {v3(b->halfExtents)};
		if (IB_IS_NULL(ibCreateBoxShape(bodies[i], &sd, &box))) goto fail;
		ibMassData md = ibBody_GetMassData(bodies[i]);
		for (int k = 0; k < 3; ++k) {
			double dev = fabs(md.inertia.m[k][k] - b->inertia[k]) / b->inertia[k];
			if (dev > st->inertiaMismatch) st->inertiaMismatch = dev;
		}
		double com = ibLength(md.center) + fabs(md.mass - b->mass);
		if (com > st->setupMismatch) st->setupMismatch = com;
	}
	for (int j = 0; j < nj; ++j) {
		const BenchJoint* jt = &m->joints[j];
		ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
		jd.bodyA = jt->parent >= 0 ? bodies[jt->parent] : ground;
		jd.bodyB = bodies[jt->child];
		ibVec3 anchor = v3(jt->anchor);
		if (ibJointDef_SetWorldAnchors(&jd, anchor, anchor) != IB_OK) goto fail;
		if (!ibJoint_IsValid(ibCreateJoint(world, &jd))) goto fail;
		jointA[j] = jd.bodyA;
		jointB[j] = jd.bodyB;
		localA[j] = ibBody_GetLocalPoint(jd.bodyA, anchor);
		localB[j] = ibBody_GetLocalPoint(jd.bodyB, anchor);
		double d = fmax(ibDistance(localA[j], v3(jt->localParent)), ibDistance(localB[j], v3(jt->localChild)));
		if (d > st->setupMismatch) st->setupMismatch = d;
	}

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	long posSum = 0, velSum = 0;
	int diverged = 0;
	for (int s = 0; s < steps; ++s) {
		if (s == 0)
			for (int i = 0; i < n; ++i) {
				const double* t = m->bodies[i].firstStepTorque;
				if (t[0] != 0.0 || t[1] != 0.0 || t[2] != 0.0) ibBody_ApplyTorque(bodies[i], v3(t));
			}
		double t0 = bench_now_ms();
		ibResult r = ibWorld_Step(world, h);
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		ibStepStats ss = ibWorld_GetStepStats(world);
		posSum += ss.positionIterations;
		velSum += ss.velocityIterations;
		if (ss.positionIterations > st->posIterMax) st->posIterMax = ss.positionIterations;
		if (ss.velocityIterations > st->velIterMax) st->velIterMax = ss.velocityIterations;
		if (!ss.converged) {
			if (st->nonconverged == 0) st->firstNonconverged = s + 1;
			st->nonconverged++;
		}
		if (ss.stepSubdivisions > 1) st->subdividedSteps++;
		if (ss.stepSubdivisions > st->substepsMax) st->substepsMax = ss.stepSubdivisions;
		if (r != IB_OK || ibWorld_HasDiverged(world)) {
			if (!ibWorld_HasDiverged(world))
				fprintf(stderr, "bench: %s %s: ibWorld_Step: %s\n", m->name, e->name, ibWorld_GetLastError(world));
			diverged = 1;
			err = NAN;
			break;
		}
		if (ss.maxPositionError > st->ownMaxError) st->ownMaxError = ss.maxPositionError;
		for (int i = 0; i < n; ++i) {
			ibQuat q = ibBody_GetRotation(bodies[i]);
			put3(ibBody_GetPosition(bodies[i]), &pos[3 * i]);
			quat[4 * i + 0] = q.w;
			quat[4 * i + 1] = q.x;
			quat[4 * i + 2] = q.y;
			quat[4 * i + 3] = q.z;
			put3(ibBody_GetLinearVelocity(bodies[i]), &lin[3 * i]);
			put3(ibBody_GetAngularVelocity(bodies[i]), &ang[3 * i]);
		}
		err = bench_max_joint_error(m, pos, quat);
		if (!isfinite(err)) {
			diverged = 1;
			break;
		}
		if (err > maxErr) maxErr = err;
		for (int j = 0; j < nj; ++j) {
			double d =
			    ibDistance(ibBody_GetWorldPoint(jointA[j], localA[j]), ibBody_GetWorldPoint(jointB[j], localB[j]));
			if (d > st->worldPointError) st->worldPointError = d;
		}
		if (s == 0) out->energyFirst = bench_energy(m, pos, quat, lin, ang);
		/* A run whose mechanical energy has grown by orders of magnitude has blown up; its next steps would
		 * only burn the iteration caps (up to maxStepSubdivisions levels of 100000 sweeps): stop it there. */
		if (s > 0 && s + 1 < steps &&
		    bench_energy(m, pos, quat, lin, ang) - out->energyFirst >
		        IBDYN_BLOWUP_FACTOR * fmax(fabs(out->energyFirst), 0.01)) {
			st->stoppedAt = s + 1;
			break;
		}
	}
	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->diverged = diverged;
	st->posIter = out->steps > 0 ? (double)posSum / out->steps : 0.0;
	st->velIter = out->steps > 0 ? (double)velSum / out->steps : 0.0;
	out->iterations = (int)lround(st->posIter + st->velIter);
	bench_system_com(m, pos, out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos, quat, lin, ang);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "bench: %s %s: building the ibdyn model failed: %s\n", m->name, e->name,
	        ibWorld_GetLastError(world));
done:
	if (ibWorld_IsValid(world)) ibDestroyWorld(world);
	free(bodies);
	free(jointA);
	free(jointB);
	free(localA);
	free(localB);
	free(pos);
	free(quat);
	free(lin);
	free(ang);
	st->wallSeconds = (bench_now_ms() - tStart) * 1e-3;
	return rc;
}
/* ==== end ibdyn =============================================================================================== */

static int wanted(const char* scene, int argc, char** argv)
{
	int any = 0;
	for (int i = 1; i < argc; ++i) {
		if (strncmp(argv[i], "--", 2) == 0) continue;
		any = 1;
		if (strcmp(argv[i], scene) == 0) return 1;
	}
	return !any;
}

/* Each measurement runs `g_repeats` times; the reported time is the fastest run (the machine is shared), the
 * errors and energies are those of the first run (the runs are deterministic). */
static int g_repeats = 2;
static int g_peers = 1;         /* --no-peers: ibdyn only (no ratio lines then) */
static int g_ibdynMaxSteps = 0; /* --max-ibdyn-steps=N: extra cap on every ibdyn run (quick checks) */
/* ibdyn runs are repeated only while the repeats add at most this much wall time (s). */
#define IBDYN_REPEAT_BUDGET_S 3.0

typedef enum Engine { ENGINE_ODE_QUICK, ENGINE_ODE_WORLD, ENGINE_BULLET, ENGINE_BULLET_MULTIBODY } Engine;

static int run_once(Engine e, const BenchModel* m, double h, int steps, BenchResult* out)
{
	switch (e) {
	case ENGINE_ODE_QUICK:
		return bench_ode_run(m, h, steps, 1, BENCH_ODE_QUICKSTEP_ITERATIONS, out);
	case ENGINE_ODE_WORLD:
		return bench_ode_run(m, h, steps, 0, 0, out);
	case ENGINE_BULLET:
		return bench_bullet_run(m, h, steps, BENCH_BULLET_ITERATIONS, out);
	case ENGINE_BULLET_MULTIBODY:
		return bench_bullet_multibody_run(m, h, steps, out);
	}
	return -1;
}

static int run_repeated(Engine e, const BenchModel* m, double h, int steps, BenchResult* out)
{
	int rc = run_once(e, m, h, steps, out);
	if (rc != 0) return rc;
	for (int k = 1; k < g_repeats; ++k) {
		BenchResult r;
		if (run_once(e, m, h, steps, &r) == 0 && r.msPerStep < out->msPerStep) out->msPerStep = r.msPerStep;
	}
	return 0;
}

/* Runs the ibdyn engine, repeats it while cheap; *repeats = runs done. */
static int run_ibdyn_repeated(const BenchModel* m, double h, int steps, double tol, const IbdynEngine* e,
                              BenchResult* out, IbdynStats* st, int* repeats)
{
	*repeats = 0;
	if (run_ibdyn(m, h, steps, tol, e, out, st) != 0) return -1;
	*repeats = 1;
	while (*repeats < g_repeats && st->wallSeconds * *repeats <= IBDYN_REPEAT_BUDGET_S) {
		BenchResult r;
		IbdynStats s;
		if (run_ibdyn(m, h, steps, tol, e, &r, &s) != 0) break;
		++*repeats;
		if (r.msPerStep < out->msPerStep) out->msPerStep = r.msPerStep;
	}
	return 0;
}

/* The scenes. */
typedef enum SceneKind {
	SCENE_CHAIN100, /* chain100 at h = 1/60 and at h = 0.01: LGS, plus the warm iterative method capped */
	SCENE_CHAIN,    /* chains of Table 3.1 */
	SCENE_TREE,     /* trees of Tables 3.3/3.4 */
} SceneKind;

/* Steps an ibdyn engine runs: the scene's, limited by the engine's maxSteps and --max-ibdyn-steps (steps= in
 * the line is the number actually run, steps_scene= the scene's). Only the warm iterative method on chain100
 * needs a limit (20 steps of up to 16 x 2000 sweeps); every other ibdyn run finished in under ~20 s when measured
 * (2-core x86-64 VM; cold iterative tree255 at 1e-6: ~35 ms/step), and runs that blow up are stopped. */
static int capped_steps(const IbdynEngine* e, int steps)
{
	if (e->maxSteps > 0 && steps > e->maxSteps) steps = e->maxSteps;
	if (g_ibdynMaxSteps > 0 && steps > g_ibdynMaxSteps) steps = g_ibdynMaxSteps;
	return steps;
}

static const char* eps_name(double tol)
{
	if (tol == 1e-3) return "1e-3";
	if (tol == 1e-4) return "1e-4";
	if (tol == 1e-6) return "1e-6";
	static char buf[32];
	snprintf(buf, sizeof buf, "%g", tol);
	return buf;
}

static void run_scene(const BenchModel* m, double h, int steps, SceneKind kind)
{
	PeerTime peers[MAX_PEERS];
	int peerCount = 0;
	BenchResult r;
	double erp = 0.0, cfm = 0.0;
	const char* precision = bench_bullet_real_size() == 8 ? "double" : "float";
	bench_ode_defaults(&erp, &cfm);

	if (g_peers) {
		if (run_repeated(ENGINE_ODE_QUICK, m, h, steps, &r) == 0) {
			bench_print_result(m->name, "ode-quickstep", &r, h, "repeats=%d erp=%.3g cfm=%.3g", g_repeats, erp, cfm);
			peers[peerCount++] = (PeerTime){"ode-quickstep", r.msPerStep, r.maxError, r.steps};
		}
		if (run_repeated(ENGINE_ODE_WORLD, m, h, steps, &r) == 0) {
			bench_print_result(m->name, "ode-worldstep", &r, h, "repeats=%d erp=%.3g cfm=%.3g solver=direct", g_repeats,
			                   erp, cfm);
			peers[peerCount++] = (PeerTime){"ode-worldstep", r.msPerStep, r.maxError, r.steps};
		}
		if (run_repeated(ENGINE_BULLET, m, h, steps, &r) == 0) {
			bench_print_result(m->name, "bullet", &r, h, "repeats=%d precision=%s", g_repeats, precision);
			peers[peerCount++] = (PeerTime){"bullet", r.msPerStep, r.maxError, r.steps};
		}
		int mbRc = run_repeated(ENGINE_BULLET_MULTIBODY, m, h, steps, &r);
		if (mbRc == 0) {
			bench_print_result(m->name, "bullet-multibody", &r, h, "repeats=%d precision=%s solver=featherstone",
			                   g_repeats, precision);
			peers[peerCount++] = (PeerTime){"bullet-multibody", r.msPerStep, r.maxError, r.steps};
		} else if (mbRc == -1) {
			printf("# %s: bullet-multibody failed to build the model\n", m->name);
		}
	}
	print_thesis_lines(m);

	/* ibdyn engines of this scene. The iterative engines must reach the tolerance (cap 100000 sweeps); on
	 * chain100 the warm iterative method is capped at 2000 sweeps and 20 steps (it cannot reach 1e-6 within
	 * 2000 sweeps there), the LGS method keeps the default cap of 1000 Newton + fallback sweeps. All engines use
	 * the library's step subdivision on non-convergence (maxStepSubdivisions, default 4) except
	 * ibdyn-lgs-nosubdiv (chain100 at 1/60 only): the LGS method on its own, which stalls when the tail whips. */
	IbdynEngine engines[4];
	int engineCount = 0;
	if (kind == SCENE_CHAIN100) {
		engines[engineCount++] = (IbdynEngine){"ibdyn-lgs", IB_SOLVER_LGS, false, 1000, 0, -1, true};
		if (h > 0.015)
			engines[engineCount++] = (IbdynEngine){"ibdyn-lgs-nosubdiv", IB_SOLVER_LGS, false, 1000, 0, 0, false};
		engines[engineCount++] = (IbdynEngine){"ibdyn-iterative-warm", IB_SOLVER_ITERATIVE, true, 2000, 20, -1, false};
	} else {
		engines[engineCount++] = (IbdynEngine){"ibdyn-iterative", IB_SOLVER_ITERATIVE, false, 100000, 0, -1, false};
		engines[engineCount++] = (IbdynEngine){"ibdyn-iterative-warm", IB_SOLVER_ITERATIVE, true, 100000, 0, -1, false};
		engines[engineCount++] = (IbdynEngine){"ibdyn-lgs", IB_SOLVER_LGS, false, 100000, 0, -1, true};
	}
	int tolCount = kind == SCENE_TREE ? 3 : 1;
	for (int t = 0; t < tolCount; ++t) {
		double tol = kind == SCENE_TREE ? TREE_TOL[t] : 1e-6;
		for (int k = 0; k < engineCount; ++k) {
			const IbdynEngine* e = &engines[k];
			IbdynStats st;
			int repeats = 0;
			int n = capped_steps(e, steps);
			if (run_ibdyn_repeated(m, h, n, tol, e, &r, &st, &repeats) != 0) {
				printf("# %s: %s eps=%s failed to build the model\n", m->name, e->name, eps_name(tol));
				continue;
			}
			bench_print_result(m->name, e->name, &r, h,
			                   "repeats=%d eps=%s pos_iter=%.2f vel_iter=%.2f pos_iter_max=%d vel_iter_max=%d "
			                   "nonconverged_steps=%d first_nonconverged_step=%d cap=%d warm_start=%d "
			                   "subdivided_steps=%d substeps_max=%d subdiv_cap=%d stopped_blowup_at_step=%d "
			                   "steps_scene=%d ibdyn_max_error=%.3e "
			                   "world_point_error=%.3e",
			                   repeats, eps_name(tol), st.posIter, st.velIter, st.posIterMax, st.velIterMax,
			                   st.nonconverged, st.firstNonconverged, e->maxIterations, e->warmStart ? 1 : 0,
			                   st.subdividedSteps, st.substepsMax, st.subdivCap, st.stoppedAt, steps, st.ownMaxError,
			                   st.worldPointError);
			if (st.setupMismatch > 1e-12 || st.inertiaMismatch > 1e-9)
				printf("# %s: %s: set-up differs from the model: anchors/COM/mass by %.3g, inertia by %.3g (rel)\n",
				       m->name, e->name, st.setupMismatch, st.inertiaMismatch);
			if (!e->ratios) continue;
			for (int p = 0; p < peerCount; ++p)
				bench_ratio_ex(m->name, e->name, r.msPerStep, peers[p].engine, peers[p].ms,
				               "eps=%s ours_max_error=%.3e peer_max_error=%.3e ours_steps=%d peer_steps=%d",
				               eps_name(tol), r.maxError, peers[p].maxError, r.steps, peers[p].steps);
		}
	}
	fflush(stdout);
}

int main(int argc, char** argv)
{
	double t0 = bench_now_ms();
	for (int i = 1; i < argc; ++i) {
		if (strncmp(argv[i], "--repeats=", 10) == 0) {
			g_repeats = atoi(argv[i] + 10);
			if (g_repeats < 1) g_repeats = 1;
		} else if (strcmp(argv[i], "--no-peers") == 0) {
			g_peers = 0;
		} else if (strncmp(argv[i], "--max-ibdyn-steps=", 18) == 0) {
			g_ibdynMaxSteps = atoi(argv[i] + 18);
		} else if (strncmp(argv[i], "--", 2) == 0) {
			fprintf(stderr, "usage: bench_joints [--repeats=N] [--no-peers] [--max-ibdyn-steps=N] [scene...]\n");
			return 2;
		}
	}
	bench_ode_init();

	/* Headline: chain of 100 bodies, h = 1/60 s, 10 s; and the same chain at h = 0.01 s, 10 s. */
	BenchModel m;
	if (wanted("chain100", argc, argv)) {
		if (bench_make_chain(&m, 100) != 0) return 1;
		run_scene(&m, 1.0 / 60.0, 600, SCENE_CHAIN100);
		bench_model_free(&m);
	}
	if (wanted("chain100-h0.01", argc, argv)) {
		if (bench_make_chain(&m, 100) != 0) return 1;
		snprintf(m.name, sizeof m.name, "chain100-h0.01");
		run_scene(&m, 0.01, 1000, SCENE_CHAIN100);
		bench_model_free(&m);
	}
	/* Chains of Table 3.1: h = 0.01 s, 200 steps (one 2-s interval of the thesis protocol). */
	for (int n = 10; n <= 50; n += 10) {
		char name[32];
		snprintf(name, sizeof name, "chain%d", n);
		if (!wanted(name, argc, argv)) continue;
		if (bench_make_chain(&m, n) != 0) return 1;
		run_scene(&m, 0.01, 200, SCENE_CHAIN);
		bench_model_free(&m);
	}
	/* Trees of Tables 3.2-3.5: h = 1/30 s, 500 steps, 10 N m on the root during the first step. */
	for (int d = 5; d <= 8; ++d) {
		char name[32];
		snprintf(name, sizeof name, "tree%d", (1 << d) - 1);
		if (!wanted(name, argc, argv)) continue;
		if (bench_make_tree(&m, d) != 0) return 1;
		run_scene(&m, 1.0 / 30.0, 500, SCENE_TREE);
		bench_model_free(&m);
	}

	bench_ode_close();
	printf("# bench_joints: total wall time %.1f s\n", (bench_now_ms() - t0) * 1e-3);
	return 0;
}
