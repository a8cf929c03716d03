/* ibsim run: the simulation driver. Output contract (docs/ibsim.md):
 *   stdout  human summary (unless --quiet), then always the final machine-readable line
 *   stderr  progress lines (unless --quiet), warnings and errors */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ibdyn/ibdyn.h>
#include <ibdyn/scene.h>

#include "csv_output.h"
#include "default_scene.h"
#include "plot.h"
#include "report.h"

enum { IBSIM_MSG_MAX = 1024 };

long long ibsimStepCount(double duration, double dt)
{
	if (!(duration > 0.0) || !(dt > 0.0) || !isfinite(duration) || !isfinite(dt)) return -1;
	double ratio = duration / dt;
	if (!(ratio <= (double)IBSIM_MAX_STEPS)) return -1;
	double nearest = nearbyint(ratio);
	double n = fabs(ratio - nearest) <= 1e-9 * fmax(1.0, nearest) ? nearest : ceil(ratio);
	if (n < 1.0) n = 1.0;
	if (n > (double)IBSIM_MAX_STEPS) return -1;
	return (long long)n;
}

/* World log hook: library warnings go to stderr (not with --quiet). Errors are not printed here:
 * every failing call is checked and reported with ibWorld_GetLastError (or the loader's message),
 * which would otherwise appear twice. */
static void logToStderr(ibLogLevel level, const char* message, void* ctx)
{
	const bool* quiet = ctx;
	if (level != IB_LOG_WARNING || *quiet) return;
	fprintf(stderr, "ibsim: ibdyn warning: %s\n", message);
}

/* Load the scene file or build the default scene. Returns an exit code. */
static int loadWorld(const ibsimRunOptions* o, const ibWorldDef* base, ibWorldId* world, ibSceneSettings* settings)
{
	char err[IBSIM_MSG_MAX] = "";
	if (o->scenePath == NULL) {
		ibResult r = ibsimCreateDefaultScene(base, world, settings, err, sizeof err);
		if (r == IB_OK) return IBSIM_EXIT_OK;
		fprintf(stderr, "ibsim: error: %s\n", err);
		return IBSIM_EXIT_FAILURE;
	}
	ibResult r = ibLoadScene(o->scenePath, base, world, settings, err, sizeof err);
	if (r == IB_OK && ibWorld_IsValid(*world)) return IBSIM_EXIT_OK;
	if (r == IB_OK) snprintf(err, sizeof err, "%s: the loader returned no world", o->scenePath);
	/* The loader's message already has the "file:line: message" form; print it as it is. */
	if (err[0] != '\0')
		fprintf(stderr, "%s\n", err);
	else
		fprintf(stderr, "%s: cannot load scene: %s\n", o->scenePath, ibResultString(r));
	return r == IB_ERR_OUT_OF_MEMORY || r == IB_OK ? IBSIM_EXIT_FAILURE : IBSIM_EXIT_USAGE;
}

/* Command-line overrides of the scene's solver settings. Returns an exit code. */
static int applySolverOptions(const ibsimRunOptions* o, ibWorldId world)
{
	if (!o->hasTolPos && !o->hasTolVel && !o->hasMaxIter && !o->hasSolver && !o->hasOrder) return IBSIM_EXIT_OK;
	ibSolverSettings s = ibWorld_GetSolverSettings(world);
	if (o->hasTolPos) s.positionTolerance = s.angularTolerance = o->tolPos;
	if (o->hasTolVel) s.velocityTolerance = o->tolVel;
	if (o->hasMaxIter) s.maxPositionIterations = s.maxVelocityIterations = o->maxIter;
	if (o->hasSolver) s.method = (ibJointSolver)o->solver;
	if (o->hasOrder) s.order = o->order;
	if (ibWorld_SetSolverSettings(world, &s) == IB_OK) return IBSIM_EXIT_OK;
	fprintf(stderr, "ibsim: error: invalid solver settings: %s\n", ibWorld_GetLastError(world));
	return IBSIM_EXIT_USAGE;
}

/* The body --kick-torque acts on (null after an error message). */
static ibBodyId findKickBody(const ibsimRunOptions* o, ibWorldId world)
{
	ibBodyId body = ibWorld_FindBody(world, o->kickBody);
	if (IB_IS_NULL(body)) {
		fprintf(stderr, "ibsim: error: --kick-torque: the scene has no body named '%s'%s\n", o->kickBody,
		        o->scenePath == NULL ? " (the built-in scene has none; try --kick-body ball)" : "");
	} else if (ibBody_GetType(body) != IB_BODY_DYNAMIC) {
		fprintf(stderr, "ibsim: error: --kick-torque: body '%s' is not dynamic\n", o->kickBody);
		body = IB_NULL_BODY;
	}
	return body;
}

static void printSolver(FILE* out, ibWorldId world)
{
	ibSolverSettings s = ibWorld_GetSolverSettings(world);
	const char* method = (unsigned)s.method < 4 ? ibsimSolverNames[s.method] : "?";
	fprintf(out,
	        "solver:     %d joints, method %s, warm start %s, tolerances %.3g m / %.3g rad / %.3g m/s, "
	        "caps %d / %d sweeps, order %d\n",
	        ibWorld_GetJointCount(world), method, s.warmStart ? "on" : "off", s.positionTolerance, s.angularTolerance,
	        s.velocityTolerance, s.maxPositionIterations, s.maxVelocityIterations, s.order);
}

/* Everything a run owns, released by cleanup(). */
typedef struct runState {
	ibWorldId world;
	ibBodyId* bodies;
	int bodyCount;
	ibsimCsv csv;
	bool plotting;
	ibsimPlotWorkspace plot;
	bool keepPlotDir;
} runState;

static void cleanup(runState* rs)
{
	char ignored[IBSIM_MSG_MAX];
	ibsimCsv_Close(&rs->csv, ignored, sizeof ignored);
	if (rs->plotting && !rs->keepPlotDir) ibsimPlot_Cleanup(&rs->plot);
	free(rs->bodies);
	if (!IB_IS_NULL(rs->world)) ibDestroyWorld(rs->world);
}

int ibsimRun(const ibsimRunOptions* o)
{
	static bool quiet;
	quiet = o->quiet;
	ibWorldDef base = ibDefaultWorldDef();
	base.logFn = logToStderr;
	base.logContext = &quiet;

	runState rs = {0};
	ibSceneSettings settings = {0};
	int code = loadWorld(o, &base, &rs.world, &settings);
	if (code != IBSIM_EXIT_OK) return code;
	const char* sceneName = o->scenePath != NULL ? o->scenePath : IBSIM_DEFAULT_SCENE_NAME;
	code = applySolverOptions(o, rs.world);
	ibBodyId kickBody = IB_NULL_BODY;
	if (code == IBSIM_EXIT_OK && o->hasKick) {
		kickBody = findKickBody(o, rs.world);
		if (IB_IS_NULL(kickBody)) code = IBSIM_EXIT_USAGE;
	}
	if (code != IBSIM_EXIT_OK) {
		cleanup(&rs);
		return code;
	}

	/* Step size and step count: command line first, then the scene's <run> settings. */
	double dt = o->hasDt ? o->dt : settings.timeStep;
	if (!(dt > 0.0) || !isfinite(dt)) {
		fprintf(stderr, "ibsim: error: invalid step size %g s\n", dt);
		cleanup(&rs);
		return IBSIM_EXIT_USAGE;
	}
	long long steps = 0;
	if (o->hasSteps) {
		steps = o->steps;
	} else {
		double duration = o->hasTime ? o->time : settings.duration;
		steps = ibsimStepCount(duration, dt);
		if (steps < 0) {
			fprintf(stderr, "ibsim: error: duration %g s with step %g s gives no valid step count (at most %lld)\n",
			        duration, dt, IBSIM_MAX_STEPS);
			cleanup(&rs);
			return IBSIM_EXIT_USAGE;
		}
	}

	rs.bodyCount = ibWorld_GetBodyCount(rs.world);
	rs.bodies = calloc(rs.bodyCount > 0 ? (size_t)rs.bodyCount : 1, sizeof *rs.bodies);
	if (rs.bodies == NULL) {
		fprintf(stderr, "ibsim: error: out of memory\n");
		cleanup(&rs);
		return IBSIM_EXIT_FAILURE;
	}
	rs.bodyCount = ibWorld_GetBodies(rs.world, rs.bodies, rs.bodyCount);

	char msg[IBSIM_MSG_MAX] = "";
	if (o->plotPath != NULL) {
		if (!ibsimPlot_Prepare(&rs.plot, msg, sizeof msg)) {
			fprintf(stderr, "ibsim: error: %s\n", msg);
			cleanup(&rs);
			return IBSIM_EXIT_FAILURE;
		}
		rs.plotting = true;
	}
	const char* csvPath = o->csvPath != NULL ? o->csvPath : (rs.plotting ? rs.plot.dataPath : NULL);
	if (csvPath != NULL && !ibsimCsv_Open(&rs.csv, csvPath, rs.bodies, rs.bodyCount, msg, sizeof msg)) {
		fprintf(stderr, "ibsim: error: %s\n", msg);
		cleanup(&rs);
		return o->csvPath != NULL ? IBSIM_EXIT_USAGE : IBSIM_EXIT_FAILURE;
	}

	ibWorldInvariants inv;
	if (ibWorld_ComputeInvariants(rs.world, &inv) != IB_OK) {
		fprintf(stderr, "ibsim: error: cannot compute the invariants: %s\n", ibWorld_GetLastError(rs.world));
		cleanup(&rs);
		return IBSIM_EXIT_FAILURE;
	}
	ibsimRunStats stats;
	ibsimRunStats_Init(&stats, &inv);
	stats.simTime = ibWorld_GetTime(rs.world);
	code = IBSIM_EXIT_OK;
	if (rs.csv.file != NULL && !ibsimCsv_WriteRow(&rs.csv, rs.world, &inv)) code = IBSIM_EXIT_FAILURE;

	ibsimProgress progress;
	ibsimProgress_Start(&progress, !o->quiet, steps, stderr);
	for (long long i = 0; i < steps && code == IBSIM_EXIT_OK; ++i) {
		if (i == 0 && o->hasKick) {
			ibVec3 torque = ibV3(o->kickTorque[0], o->kickTorque[1], o->kickTorque[2]);
			if (ibBody_ApplyTorque(kickBody, torque) != IB_OK) {
				fprintf(stderr, "ibsim: error: --kick-torque: %s\n", ibWorld_GetLastError(rs.world));
				code = IBSIM_EXIT_FAILURE;
				break;
			}
		}
		double t0 = ibsimNow();
		ibResult r = ibWorld_Step(rs.world, dt);
		stats.stepWallSeconds += ibsimNow() - t0;
		/* Not converged is the solver's anytime behaviour: the step happened; it is counted. */
		if (r != IB_OK && r != IB_ERR_NOT_CONVERGED) {
			fprintf(stderr, "ibsim: error: step %lld (t = %.10g s) failed: %s: %s\n", i + 1, ibWorld_GetTime(rs.world),
			        ibResultString(r), ibWorld_GetLastError(rs.world));
			code = IBSIM_EXIT_FAILURE;
			break;
		}
		if (ibWorld_ComputeInvariants(rs.world, &inv) != IB_OK) {
			fprintf(stderr, "ibsim: error: cannot compute the invariants after step %lld: %s\n", i + 1,
			        ibWorld_GetLastError(rs.world));
			code = IBSIM_EXIT_FAILURE;
			break;
		}
		ibStepStats st = ibWorld_GetStepStats(rs.world);
		ibsimRunStats_AddStep(&stats, &inv, &st);
		stats.simTime = ibWorld_GetTime(rs.world);
		if (rs.csv.file != NULL && !ibsimCsv_WriteRow(&rs.csv, rs.world, &inv)) code = IBSIM_EXIT_FAILURE;
		ibsimProgress_Update(&progress, i + 1, ibWorld_GetTime(rs.world));
	}
	stats.totalWallSeconds = ibsimNow() - progress.start;

	if (!ibsimCsv_Close(&rs.csv, msg, sizeof msg)) {
		fprintf(stderr, "ibsim: error: %s\n", msg);
		code = IBSIM_EXIT_FAILURE;
	} else if (code != IBSIM_EXIT_OK && o->csvPath != NULL) {
		fprintf(stderr, "ibsim: note: %s holds the rows up to the failure\n", o->csvPath);
	}

	if (!o->quiet) {
		ibsimPrintSummary(stdout, sceneName, rs.bodyCount, dt, &stats);
		printSolver(stdout, rs.world);
		if (o->csvPath != NULL) printf("csv:        %s\n", o->csvPath);
	}
	if (rs.plotting && code == IBSIM_EXIT_OK) {
		ibsimPlotRequest req = {
		    .csvPath = csvPath,
		    .pngPath = o->plotPath,
		    .title = sceneName,
		    .bodyCount = rs.bodyCount,
		    .energy0 = stats.energy0,
		    .energyScale = ibsimRunStats_EnergyScale(&stats),
		};
		if (ibsimPlot_Render(&rs.plot, &req, msg, sizeof msg)) {
			if (!o->quiet) printf("plot:       %s\n", o->plotPath);
		} else {
			fprintf(stderr, "ibsim: error: %s (temporary files kept in %s)\n", msg, rs.plot.dir);
			rs.keepPlotDir = true;
			code = IBSIM_EXIT_FAILURE;
		}
	}
	ibsimPrintFinalLine(stdout, &stats);
	if (fflush(stdout) != 0 || ferror(stdout)) code = IBSIM_EXIT_FAILURE;
	cleanup(&rs);
	return code;
}
