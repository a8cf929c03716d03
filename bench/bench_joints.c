/* Joint benchmark (Bender's dissertation §3.3.3.1, DIGEST §22): ball-jointed chains and binary trees of boxes,
 * run on the peer engines (ODE quickstep/worldstep, Bullet sequential impulses, Bullet Featherstone) and on ibdyn.
 * Output: one `bench: scene=... engine=... ms_per_step=... max_error=... key=value...` line per run, the
 * dissertation's reference figures as engine=thesis-* lines next to them, and ours/peer time ratios.
 * Usage: bench_joints [--repeats=N] [scene...]   (e.g. `bench_joints chain100 tree127`; default: all scenes,
 * N = 2: each time is the fastest of N identical runs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "peers.h"

/* Dissertation figures (ms per step). Table 3.1: chains at h = 0.01, eps = 1e-6. */
static const int THESIS_CHAIN_N[5] = {10, 20, 30, 40, 50};
static const double THESIS_CHAIN_ITERATIVE[5] = {3.30, 23.20, 71.65, 157.69, 287.14};
static const double THESIS_CHAIN_LGS[5] = {2.11, 2.78, 3.63, 4.60, 6.28};
/* Table 3.3 (iterative) and Table 3.4 (LGS): trees at h = 1/30, eps = 1e-3, 1e-4, 1e-6. */
static const int THESIS_TREE_N[4] = {31, 63, 127, 255};
static const char* const THESIS_EPS[3] = {"1e-3", "1e-4", "1e-6"};
static const double THESIS_TREE_ITERATIVE[4][3] = {
    {2.73, 7.07, 15.87}, {7.86, 21.87, 54.25}, {20.35, 63.77, 169.07}, {51.47, 176.96, 494.15}};
static const double THESIS_TREE_LGS[4][3] = {
    {3.51, 3.99, 4.53}, {6.95, 7.09, 7.89}, {18.38, 19.05, 19.66}, {57.72, 57.61, 59.48}};

/* Peer lines of the scene being run, for the ratios. */
#define MAX_PEERS 8
typedef struct PeerTime {
	const char* engine;
	double ms;
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

/* ==== ibdyn ===================================================================================================
 * TODO(lead): build the model with ibdyn's joint API and step it; fill *out like the peers do:
 *   - msPerStep: wall time around ibWorld_Step only (bench_now_ms), mean over the steps;
 *   - maxError / finalError: bench_max_joint_error() from the body poses after each step
 *     (pos = ibBody_GetWorldCenterOfMass, quat = ibBody_GetRotation if the user frame is the principal frame);
 *   - iterations: e.g. the mean joint-correction + velocity-correction sweeps from ibWorld_GetStepStats;
 *   - diverged: non-finite state or ibWorld_HasDiverged.
 * Sketch (planned API, include/ibdyn/joint.h; not compiled):
 *   ibWorldDef wd = ibDefaultWorldDef(); wd.gravity = (m->gravity); wd.solver.positionTolerance = tol;
 *   wd.solver.velocityTolerance = tol; ibWorldId w = ibCreateWorld(&wd);
 *   per body: ibBodyDef bd = ibDefaultBodyDef(); bd.type = IB_BODY_DYNAMIC; bd.position = center;
 *     bd.rotation = rotation; bd.linearVelocity / angularVelocity; ibCreateBody + a box shape with
 *     halfExtents and ibShapeDef.mass = mass (inertia then equals BenchBody.inertia, the box formula);
 *   per joint: ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL); jd.bodyA = parent body (a static world body
 *     for parent == -1); jd.bodyB = child; jd.localAnchorA = localParent; jd.localAnchorB = localChild;
 *     ibCreateJoint(w, &jd);
 *   step 0: ibBody_ApplyTorque(body, firstStepTorque) for bodies with a non-zero torque.
 * Return 0 on success, -1 while not implemented (the run is then skipped). */
static int run_ibdyn(const BenchModel* m, double h, int steps, double tol, BenchResult* out)
{
	(void)m;
	(void)h;
	(void)steps;
	(void)tol;
	memset(out, 0, sizeof *out);
	return -1; /* not implemented */
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

typedef enum Engine { ENGINE_ODE_QUICK, ENGINE_ODE_WORLD, ENGINE_BULLET, ENGINE_BULLET_MULTIBODY, ENGINE_IBDYN } Engine;

static int run_once(Engine e, const BenchModel* m, double h, int steps, double tol, BenchResult* out)
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
	case ENGINE_IBDYN:
		return run_ibdyn(m, h, steps, tol, out);
	}
	return -1;
}

static int run_repeated(Engine e, const BenchModel* m, double h, int steps, double tol, BenchResult* out)
{
	int rc = run_once(e, m, h, steps, tol, out);
	if (rc != 0) return rc;
	for (int k = 1; k < g_repeats; ++k) {
		BenchResult r;
		if (run_once(e, m, h, steps, tol, &r) == 0 && r.msPerStep < out->msPerStep) out->msPerStep = r.msPerStep;
	}
	return 0;
}

static void run_scene(const BenchModel* m, double h, int steps, int isTree)
{
	PeerTime peers[MAX_PEERS];
	int peerCount = 0;
	BenchResult r;
	double erp = 0.0, cfm = 0.0;
	const char* precision = bench_bullet_real_size() == 8 ? "double" : "float";
	bench_ode_defaults(&erp, &cfm);

	if (run_repeated(ENGINE_ODE_QUICK, m, h, steps, 0.0, &r) == 0) {
		bench_print_result(m->name, "ode-quickstep", &r, h, "repeats=%d erp=%.3g cfm=%.3g", g_repeats, erp, cfm);
		peers[peerCount++] = (PeerTime){"ode-quickstep", r.msPerStep};
	}
	if (run_repeated(ENGINE_ODE_WORLD, m, h, steps, 0.0, &r) == 0) {
		bench_print_result(m->name, "ode-worldstep", &r, h, "repeats=%d erp=%.3g cfm=%.3g solver=direct", g_repeats,
		                   erp, cfm);
		peers[peerCount++] = (PeerTime){"ode-worldstep", r.msPerStep};
	}
	if (run_repeated(ENGINE_BULLET, m, h, steps, 0.0, &r) == 0) {
		bench_print_result(m->name, "bullet", &r, h, "repeats=%d precision=%s", g_repeats, precision);
		peers[peerCount++] = (PeerTime){"bullet", r.msPerStep};
	}
	int mbRc = run_repeated(ENGINE_BULLET_MULTIBODY, m, h, steps, 0.0, &r);
	if (mbRc == 0) {
		bench_print_result(m->name, "bullet-multibody", &r, h, "repeats=%d precision=%s solver=featherstone", g_repeats,
		                   precision);
		peers[peerCount++] = (PeerTime){"bullet-multibody", r.msPerStep};
	} else if (mbRc == -1) {
		printf("# %s: bullet-multibody failed to build the model\n", m->name);
	}
	print_thesis_lines(m);

	/* ibdyn: the chains at the thesis tolerance, the trees at the three tolerances of Table 3.3. */
	static const double TREE_TOL[3] = {1e-3, 1e-4, 1e-6};
	int tolCount = isTree ? 3 : 1;
	for (int t = 0; t < tolCount; ++t) {
		double tol = isTree ? TREE_TOL[t] : 1e-6;
		char engine[48];
		if (isTree)
			snprintf(engine, sizeof engine, "ibdyn-iterative-eps%s", THESIS_EPS[t]);
		else
			snprintf(engine, sizeof engine, "ibdyn-iterative");
		if (run_repeated(ENGINE_IBDYN, m, h, steps, tol, &r) != 0) {
			printf("# %s: %s skipped (run_ibdyn not implemented)\n", m->name, engine);
			continue;
		}
		bench_print_result(m->name, engine, &r, h, "repeats=%d eps=%g", g_repeats, tol);
		for (int p = 0; p < peerCount; ++p) bench_ratio(m->name, engine, r.msPerStep, peers[p].engine, peers[p].ms);
	}
	fflush(stdout);
}

int main(int argc, char** argv)
{
	double t0 = bench_now_ms();
	for (int i = 1; i < argc; ++i)
		if (strncmp(argv[i], "--repeats=", 10) == 0) {
			g_repeats = atoi(argv[i] + 10);
			if (g_repeats < 1) g_repeats = 1;
		}
	bench_ode_init();

	/* Headline: chain of 100 bodies, h = 1/60 s, 10 s. */
	BenchModel m;
	if (wanted("chain100", argc, argv)) {
		if (bench_make_chain(&m, 100) != 0) return 1;
		run_scene(&m, 1.0 / 60.0, 600, 0);
		bench_model_free(&m);
	}
	/* Chains of Table 3.1: h = 0.01 s, 200 steps (one 2-s interval of the thesis protocol). */
	for (int n = 10; n <= 50; n += 10) {
		char name[32];
		snprintf(name, sizeof name, "chain%d", n);
		if (!wanted(name, argc, argv)) continue;
		if (bench_make_chain(&m, n) != 0) return 1;
		run_scene(&m, 0.01, 200, 0);
		bench_model_free(&m);
	}
	/* Trees of Tables 3.2-3.5: h = 1/30 s, 500 steps, 10 N m on the root during the first step. */
	for (int d = 5; d <= 8; ++d) {
		char name[32];
		snprintf(name, sizeof name, "tree%d", (1 << d) - 1);
		if (!wanted(name, argc, argv)) continue;
		if (bench_make_tree(&m, d) != 0) return 1;
		run_scene(&m, 1.0 / 30.0, 500, 1);
		bench_model_free(&m);
	}

	bench_ode_close();
	printf("# bench_joints: total wall time %.1f s\n", (bench_now_ms() - t0) * 1e-3);
	return 0;
}
