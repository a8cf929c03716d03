/* LGS benchmark (Bender's dissertation §3.3.3.1, DIGEST §22, Tables 3.1, 3.4, 3.6, 3.7): ibdyn's iterative method
 * (IB_SOLVER_ITERATIVE), the O(n) tree LGS (IB_SOLVER_LGS, loops cut) and the sparse LGS (IB_SOLVER_LGS_SPARSE,
 * CHOLMOD) on the chains of Table 3.1, the trees of Tables 3.4/3.7 and the three-loop model of Table 3.6, with the
 * thesis figures as engine=thesis-* lines; the peers ODE (quickstep, worldstep), Bullet and MuJoCo on chain100 and
 * tree255 (MuJoCo: reduced coordinates), ODE and Bullet on loops3; ours/peer time ratios for ibdyn-lgs and
 * ibdyn-lgs-sparse; and the per-body cost of ibdyn-lgs over the trees (linear growth check).
 * Usage: bench_lgs [--repeats=N] [--no-peers] [--budget-s=S] [--engine=NAME] [--steps=N] [scene...]
 *   (see bench/README.md; --engine= runs only that ibdyn engine, --steps= caps the ibdyn runs, for profiling) */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_ibdyn.h"
#include "ibdyn/ibdyn.h"
#include "peers.h"

/* ==== dissertation figures (ms per step; DIGEST §22) ========================================================== */
/* Table 3.1: chains, h = 0.01, eps = 1e-6. */
static const double THESIS_CHAIN_ITERATIVE[5] = {3.30, 23.20, 71.65, 157.69, 287.14};
static const double THESIS_CHAIN_LGS[5] = {2.11, 2.78, 3.63, 4.60, 6.28};
/* Tables 3.3 (iterative), 3.4 (LGS) and 3.7 (LFM): trees 31, 63, 127, 255, h = 1/30, eps = 1e-3, 1e-4, 1e-6. */
static const char* const EPS_NAME[3] = {"1e-3", "1e-4", "1e-6"};
static const double EPS[3] = {1e-3, 1e-4, 1e-6};
static const double THESIS_TREE_ITERATIVE[4][3] = {
    {2.73, 7.07, 15.87}, {7.86, 21.87, 54.25}, {20.35, 63.77, 169.07}, {51.47, 176.96, 494.15}};
static const double THESIS_TREE_LGS[4][3] = {
    {3.51, 3.99, 4.53}, {6.95, 7.09, 7.89}, {18.38, 19.05, 19.66}, {57.72, 57.61, 59.48}};
static const double THESIS_LFM_STANDARD[4] = {212.12, 2190.0, 25200.0, 175450.0};
static const double THESIS_LFM_BARAFF[4] = {7.72, 16.84, 35.29, 82.05};
/* Table 3.6: three-loop model, h = 1/30. */
static const double THESIS_LOOPS_ITERATIVE[3] = {32.26, 88.86, 241.24};
static const double THESIS_LOOPS_CUT[3] = {41.19, 64.94, 114.70};
static const double THESIS_LOOPS_MODIFIED[3] = {3.51, 3.89, 4.85};

static void print_thesis(const char* scene, const char* engine, double ms, const char* source, const char* eps)
{
	printf("bench: scene=%s engine=%s ms_per_step=%.2f max_error=nan source=%s", scene, engine, ms, source);
	if (eps) printf(" eps=%s", eps);
	putchar('\n');
	fflush(stdout);
}

/* ==== options ================================================================================================= */
static int g_repeats = 1;        /* --repeats=N: each time is the fastest of N runs (ibdyn: only while cheap) */
static int g_peers = 1;          /* --no-peers */
static double g_budgetS = 5.0;   /* --budget-s=S: an ibdyn run stops after the step that exceeds S s of stepping */
static const char* g_engine = NULL; /* --engine=NAME: only this ibdyn engine (e.g. for callgrind) */
static int g_steps = 0;          /* --steps=N: at most N steps per ibdyn run (0 = the scene's) */
#define IBDYN_REPEAT_BUDGET_S 2.0 /* ibdyn runs are repeated only while the repeats add at most this (s) */

/* ==== ibdyn =================================================================================================== */
static const IbdynEngine ENGINE_ITERATIVE = {"ibdyn-iterative", IB_SOLVER_ITERATIVE, false, 100000, 0, -1, true};
static const IbdynEngine ENGINE_LGS = {"ibdyn-lgs", IB_SOLVER_LGS, false, 100000, 0, -1, true};
static const IbdynEngine ENGINE_LGS_SPARSE = {"ibdyn-lgs-sparse", IB_SOLVER_LGS_SPARSE, false, 100000, 0, -1, true};

/* Runs and prints one ibdyn measurement; returns 0 and the result, or -1. */
static int ibdyn_line(const BenchModel* m, double h, int steps, int cap, double tol, const char* epsName,
                      const IbdynEngine* e, BenchResult* r)
{
	IbdynStats st;
	IbdynEngine ec = *e;
	if (g_engine && strcmp(g_engine, e->name) != 0) return -1;
	ec.maxIterations = cap;
	if (g_steps > 0 && g_steps < steps) steps = g_steps;
	if (bench_run_ibdyn(m, h, steps, tol, &ec, g_budgetS, r, &st) != 0) {
		printf("# %s: %s eps=%s failed to build the model\n", m->name, e->name, epsName);
		return -1;
	}
	int repeats = 1;
	while (repeats < g_repeats && st.wallSeconds * repeats <= IBDYN_REPEAT_BUDGET_S && !st.stoppedBudget) {
		BenchResult r2;
		IbdynStats s2;
		if (bench_run_ibdyn(m, h, steps, tol, &ec, g_budgetS, &r2, &s2) != 0) break;
		++repeats;
		if (r2.msPerStep < r->msPerStep) r->msPerStep = r2.msPerStep;
	}
	bench_print_result(m->name, e->name, r, h,
	                   "repeats=%d eps=%s pos_iter=%.2f vel_iter=%.2f pos_iter_max=%d vel_iter_max=%d "
	                   "nonconverged_steps=%d first_nonconverged_step=%d cap=%d subdivided_steps=%d substeps_max=%d "
	                   "subdiv_cap=%d stopped_blowup_at_step=%d stopped_budget_at_step=%d budget_s=%g steps_scene=%d "
	                   "ibdyn_max_error=%.3e ibdyn_max_angular_error=%.3e max_axis_error=%.3e",
	                   repeats, epsName, st.posIter, st.velIter, st.posIterMax, st.velIterMax, st.nonconverged,
	                   st.firstNonconverged, cap, st.subdividedSteps, st.substepsMax, st.subdivCap, st.stoppedAt,
	                   st.stoppedBudget, g_budgetS, steps, st.ownMaxError, st.ownMaxAngularError, st.maxAxisError);
	return 0;
}

/* ==== peers =================================================================================================== */
#define MAX_PEERS 8
typedef struct PeerTime {
	const char* engine;
	double ms, maxError;
	int steps;
} PeerTime;

static void run_peers(const BenchModel* m, double h, int steps, bool withMujoco, PeerTime* peers, int* count)
{
	BenchResult r, r2;
	double erp = 0.0, cfm = 0.0;
	*count = 0;
	if (!g_peers) return;
	bench_ode_defaults(&erp, &cfm);
	for (int quick = 1; quick >= 0; --quick) {
		const char* name = quick ? "ode-quickstep" : "ode-worldstep";
		if (bench_ode_run(m, h, steps, quick, quick ? BENCH_ODE_QUICKSTEP_ITERATIONS : 0, &r) != 0) {
			printf("# %s: %s failed\n", m->name, name);
			continue;
		}
		for (int k = 1; k < g_repeats; ++k)
			if (bench_ode_run(m, h, steps, quick, quick ? BENCH_ODE_QUICKSTEP_ITERATIONS : 0, &r2) == 0 &&
			    r2.msPerStep < r.msPerStep)
				r.msPerStep = r2.msPerStep;
		bench_print_result(m->name, name, &r, h, "repeats=%d erp=%.3g cfm=%.3g%s", g_repeats, erp, cfm,
		                   quick ? "" : " solver=direct");
		peers[(*count)++] = (PeerTime){name, r.msPerStep, r.maxError, r.steps};
	}
	if (bench_bullet_run(m, h, steps, BENCH_BULLET_ITERATIONS, &r) == 0) {
		for (int k = 1; k < g_repeats; ++k)
			if (bench_bullet_run(m, h, steps, BENCH_BULLET_ITERATIONS, &r2) == 0 && r2.msPerStep < r.msPerStep)
				r.msPerStep = r2.msPerStep;
		bench_print_result(m->name, "bullet", &r, h, "repeats=%d precision=%s", g_repeats,
		                   bench_bullet_real_size() == 8 ? "double" : "float");
		peers[(*count)++] = (PeerTime){"bullet", r.msPerStep, r.maxError, r.steps};
	} else {
		printf("# %s: bullet failed\n", m->name);
	}
	if (!withMujoco) return;
#if defined(IBDYN_BENCH_HAVE_MUJOCO)
	/* Euler (MuJoCo's default, semi-implicit) is the "mujoco" peer of the ratios; RK4 is printed as mujoco-rk4. */
	for (int integ = 0; integ < 2; ++integ) {
		const char* name = integ == 0 ? "mujoco" : "mujoco-rk4";
		double e0 = NAN, e1 = NAN;
		int version = 0;
		int rc = bench_mujoco_run(m, h, steps, (BenchMujocoIntegrator)integ, &r, &e0, &e1, &version);
		if (rc != 0) {
			printf("bench: scene=%s engine=%s skipped=1 reason=%s\n", m->name, name,
			       rc == -2 ? "mjcf_nesting_too_deep_for_mujoco_xml_parser" : "model_failed");
			continue;
		}
		for (int k = 1; k < g_repeats; ++k)
			if (bench_mujoco_run(m, h, steps, (BenchMujocoIntegrator)integ, &r2, NULL, NULL, NULL) == 0 &&
			    r2.msPerStep < r.msPerStep)
				r.msPerStep = r2.msPerStep;
		bench_print_result(m->name, name, &r, h,
		                   "repeats=%d integrator=%s coordinates=reduced mj_energy_first=%.4g mj_energy_final=%.4g "
		                   "mj_version=%d",
		                   g_repeats, integ == 0 ? "euler" : "rk4", e0, e1, version);
		peers[(*count)++] = (PeerTime){name, r.msPerStep, r.maxError, r.steps};
	}
#else
	printf("bench: scene=%s engine=mujoco skipped=1 reason=not_built\n", m->name);
#endif
	fflush(stdout);
}

static void print_ratios(const BenchModel* m, const char* ours, const BenchResult* r, const char* epsName,
                         const PeerTime* peers, int count)
{
	for (int p = 0; p < count; ++p)
		bench_ratio_ex(m->name, ours, r->msPerStep, peers[p].engine, peers[p].ms,
		               "eps=%s ours_max_error=%.3e peer_max_error=%.3e ours_steps=%d peer_steps=%d", epsName,
		               r->maxError, peers[p].maxError, r->steps, peers[p].steps);
}

/* ==== scenes ================================================================================================== */
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

/* Table 3.1: chain10..50, h = 0.01, 200 steps (one 2-s interval of the thesis protocol), eps = 1e-6. */
static void scene_chain(int idx)
{
	BenchModel m;
	BenchResult r;
	if (bench_make_chain(&m, 10 * (idx + 1)) != 0) return;
	print_thesis(m.name, "thesis-iterative", THESIS_CHAIN_ITERATIVE[idx], "table3.1", "1e-6");
	print_thesis(m.name, "thesis-lgs", THESIS_CHAIN_LGS[idx], "table3.1", "1e-6");
	ibdyn_line(&m, 0.01, 200, 100000, 1e-6, "1e-6", &ENGINE_ITERATIVE, &r);
	ibdyn_line(&m, 0.01, 200, 100000, 1e-6, "1e-6", &ENGINE_LGS, &r);
	ibdyn_line(&m, 0.01, 200, 100000, 1e-6, "1e-6", &ENGINE_LGS_SPARSE, &r);
	bench_model_free(&m);
}

/* chain100 at h = 1/60, 600 steps, eps = 1e-6 (the headline of bench_joints): peers incl. MuJoCo, ratios. The
 * LGS engines keep the default cap of 1000 sweeps as in bench_joints; the iterative one is capped at 2000. */
static void scene_chain100(void)
{
	BenchModel m;
	BenchResult r;
	PeerTime peers[MAX_PEERS];
	int count = 0;
	const double h = 1.0 / 60.0;
	if (bench_make_chain(&m, 100) != 0) return;
	run_peers(&m, h, 600, true, peers, &count);
	ibdyn_line(&m, h, 600, 2000, 1e-6, "1e-6", &ENGINE_ITERATIVE, &r);
	if (ibdyn_line(&m, h, 600, 1000, 1e-6, "1e-6", &ENGINE_LGS, &r) == 0)
		print_ratios(&m, "ibdyn-lgs", &r, "1e-6", peers, count);
	if (ibdyn_line(&m, h, 600, 1000, 1e-6, "1e-6", &ENGINE_LGS_SPARSE, &r) == 0)
		print_ratios(&m, "ibdyn-lgs-sparse", &r, "1e-6", peers, count);
	bench_model_free(&m);
}

/* Per-body cost of ibdyn-lgs on the trees, per eps (linear growth check). */
static double g_treeLgsMs[4][3];
static int g_treeLgsStopped[4][3];
static int g_treeLgsDone[4];

/* Tables 3.4/3.7: tree31..255, h = 1/30, 500 steps, 10 N m on the root during the first step. */
static void scene_tree(int idx)
{
	BenchModel m;
	BenchResult r;
	PeerTime peers[MAX_PEERS];
	int count = 0;
	const double h = 1.0 / 30.0;
	if (bench_make_tree(&m, idx + 5) != 0) return;
	if (idx == 3) run_peers(&m, h, 500, true, peers, &count);
	static const char* const ITER_NAME[3] = {"thesis-iterative-eps1e-3", "thesis-iterative-eps1e-4",
	                                         "thesis-iterative-eps1e-6"};
	static const char* const LGS_NAME[3] = {"thesis-lgs-eps1e-3", "thesis-lgs-eps1e-4", "thesis-lgs-eps1e-6"};
	for (int e = 0; e < 3; ++e) {
		print_thesis(m.name, ITER_NAME[e], THESIS_TREE_ITERATIVE[idx][e], "table3.3/3.7", EPS_NAME[e]);
		print_thesis(m.name, LGS_NAME[e], THESIS_TREE_LGS[idx][e], "table3.4/3.7", EPS_NAME[e]);
	}
	print_thesis(m.name, "thesis-lfm-standard", THESIS_LFM_STANDARD[idx], "table3.7", NULL);
	print_thesis(m.name, "thesis-lfm-baraff", THESIS_LFM_BARAFF[idx], "table3.7", NULL);
	for (int e = 0; e < 3; ++e) {
		ibdyn_line(&m, h, 500, 100000, EPS[e], EPS_NAME[e], &ENGINE_ITERATIVE, &r);
		if (ibdyn_line(&m, h, 500, 100000, EPS[e], EPS_NAME[e], &ENGINE_LGS, &r) == 0) {
			g_treeLgsMs[idx][e] = r.msPerStep;
			g_treeLgsStopped[idx][e] = r.diverged || r.steps < 500;
			g_treeLgsDone[idx] = 1;
			if (idx == 3) print_ratios(&m, "ibdyn-lgs", &r, EPS_NAME[e], peers, count);
		}
		if (ibdyn_line(&m, h, 500, 100000, EPS[e], EPS_NAME[e], &ENGINE_LGS_SPARSE, &r) == 0 && idx == 3)
			print_ratios(&m, "ibdyn-lgs-sparse", &r, EPS_NAME[e], peers, count);
	}
	bench_model_free(&m);
}

static void print_linear_growth(void)
{
	static const int N[4] = {31, 63, 127, 255};
	for (int e = 0; e < 3; ++e) {
		char list[160] = "", stopped[64] = "";
		double lo = INFINITY, hi = 0.0;
		int any = 0;
		for (int i = 0; i < 4; ++i) {
			if (!g_treeLgsDone[i]) continue;
			double us = 1e3 * g_treeLgsMs[i][e] / N[i];
			size_t len = strlen(list);
			snprintf(list + len, sizeof list - len, "%s%d:%.3f", any ? "," : "", N[i], us);
			if (g_treeLgsStopped[i][e]) {
				len = strlen(stopped);
				snprintf(stopped + len, sizeof stopped - len, "%s%d", stopped[0] ? "," : "", N[i]);
			} else {
				if (us < lo) lo = us;
				if (us > hi) hi = us;
			}
			any = 1;
		}
		if (!any) continue;
		printf("bench: scene=trees linear_growth engine=ibdyn-lgs eps=%s per_body_us=%s max_over_min_completed=%.3f "
		       "stopped_or_diverged=%s\n",
		       EPS_NAME[e], list, hi > 0.0 ? hi / lo : NAN, stopped[0] ? stopped : "none");
	}
	fflush(stdout);
}

/* Table 3.6: loops3, h = 1/30, 300 steps (10 s), eps = 1e-3, 1e-4, 1e-6; peers ODE and Bullet (hinges). */
static void scene_loops3(void)
{
	BenchModel m;
	BenchResult r;
	PeerTime peers[MAX_PEERS];
	int count = 0;
	const double h = 1.0 / 30.0;
	if (bench_make_loops3(&m) != 0) return;
	run_peers(&m, h, 300, false, peers, &count);
	for (int e = 0; e < 3; ++e) {
		print_thesis(m.name, "thesis-iterative", THESIS_LOOPS_ITERATIVE[e], "table3.6", EPS_NAME[e]);
		print_thesis(m.name, "thesis-lgs-cut", THESIS_LOOPS_CUT[e], "table3.6", EPS_NAME[e]);
		print_thesis(m.name, "thesis-lgs-modified", THESIS_LOOPS_MODIFIED[e], "table3.6", EPS_NAME[e]);
	}
	for (int e = 0; e < 3; ++e) {
		ibdyn_line(&m, h, 300, 100000, EPS[e], EPS_NAME[e], &ENGINE_ITERATIVE, &r);
		ibdyn_line(&m, h, 300, 100000, EPS[e], EPS_NAME[e], &ENGINE_LGS, &r);
		ibdyn_line(&m, h, 300, 100000, EPS[e], EPS_NAME[e], &ENGINE_LGS_SPARSE, &r);
	}
	bench_model_free(&m);
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
		} else if (strncmp(argv[i], "--budget-s=", 11) == 0) {
			g_budgetS = atof(argv[i] + 11);
		} else if (strncmp(argv[i], "--engine=", 9) == 0) {
			g_engine = argv[i] + 9;
		} else if (strncmp(argv[i], "--steps=", 8) == 0) {
			g_steps = atoi(argv[i] + 8);
		} else if (strncmp(argv[i], "--", 2) == 0) {
			fprintf(stderr, "usage: bench_lgs [--repeats=N] [--no-peers] [--budget-s=S] [--engine=NAME] [--steps=N] "
			                "[scene...]\n");
			return 2;
		}
	}
	bench_ode_init();
	for (int i = 0; i < 5; ++i) {
		char name[32];
		snprintf(name, sizeof name, "chain%d", 10 * (i + 1));
		if (wanted(name, argc, argv)) scene_chain(i);
	}
	if (wanted("chain100", argc, argv)) scene_chain100();
	for (int i = 0; i < 4; ++i) {
		char name[32];
		snprintf(name, sizeof name, "tree%d", (1 << (i + 5)) - 1);
		if (wanted(name, argc, argv)) scene_tree(i);
	}
	print_linear_growth();
	if (wanted("loops3", argc, argv)) scene_loops3();
	bench_ode_close();
	printf("# bench_lgs: total wall time %.1f s\n", (bench_now_ms() - t0) * 1e-3);
	return 0;
}
