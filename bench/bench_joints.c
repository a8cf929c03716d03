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
#include "bench_ibdyn.h"
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
	if (bench_run_ibdyn(m, h, steps, tol, e, 0.0, out, st) != 0) return -1;
	*repeats = 1;
	while (*repeats < g_repeats && st->wallSeconds * *repeats <= IBDYN_REPEAT_BUDGET_S) {
		BenchResult r;
		IbdynStats s;
		if (bench_run_ibdyn(m, h, steps, tol, e, 0.0, &r, &s) != 0) break;
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
