/* ibsim command line parsing: generic option table walker, strict numbers, `run` options. */
#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { IBSIM_MAX_OPTIONS = 64 };

static const ibsimOption* findOption(const ibsimOption* opts, int optCount, const char* name, size_t nameLen,
                                     int* index)
{
	for (int i = 0; i < optCount; ++i) {
		if (strlen(opts[i].name) == nameLen && strncmp(opts[i].name, name, nameLen) == 0) {
			*index = i;
			return &opts[i];
		}
	}
	return NULL;
}

ibsimParseStatus ibsimParseOptions(int argc, char** argv, const ibsimOption* opts, int optCount,
                                   ibsimPositionalFn* positional, void* ctx, char* msg, size_t msgSize)
{
	bool seen[IBSIM_MAX_OPTIONS] = {false};
	bool optionsEnded = false;
	if (optCount > IBSIM_MAX_OPTIONS) {
		snprintf(msg, msgSize, "internal: too many options in the table");
		return IBSIM_PARSE_ERROR;
	}
	for (int i = 0; i < argc; ++i) {
		const char* arg = argv[i];
		if (optionsEnded || arg[0] != '-' || strcmp(arg, "-") == 0) {
			char sub[256] = "";
			if (positional == NULL) {
				snprintf(msg, msgSize, "unexpected argument '%s'", arg);
				return IBSIM_PARSE_ERROR;
			}
			if (!positional(ctx, arg, sub, sizeof sub)) {
				snprintf(msg, msgSize, "%s", sub);
				return IBSIM_PARSE_ERROR;
			}
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			optionsEnded = true;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) return IBSIM_PARSE_HELP;

		const char* eq = strchr(arg, '=');
		size_t nameLen = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
		int index = -1;
		const ibsimOption* opt = findOption(opts, optCount, arg, nameLen, &index);
		if (opt == NULL) {
			snprintf(msg, msgSize, "unknown option '%.*s' (see --help)", (int)nameLen, arg);
			return IBSIM_PARSE_ERROR;
		}
		if (seen[index]) {
			snprintf(msg, msgSize, "option %s given more than once", opt->name);
			return IBSIM_PARSE_ERROR;
		}
		seen[index] = true;

		const char* value = NULL;
		if (opt->metavar != NULL) {
			if (eq != NULL) {
				value = eq + 1;
			} else if (i + 1 < argc) {
				value = argv[++i];
			} else {
				snprintf(msg, msgSize, "option %s needs a value %s", opt->name, opt->metavar);
				return IBSIM_PARSE_ERROR;
			}
		} else if (eq != NULL) {
			snprintf(msg, msgSize, "option %s takes no value", opt->name);
			return IBSIM_PARSE_ERROR;
		}
		char sub[256] = "";
		if (!opt->apply(ctx, value, sub, sizeof sub)) {
			if (value != NULL)
				snprintf(msg, msgSize, "%s '%s': %s", opt->name, value, sub);
			else
				snprintf(msg, msgSize, "%s: %s", opt->name, sub);
			return IBSIM_PARSE_ERROR;
		}
	}
	return IBSIM_PARSE_OK;
}

void ibsimPrintOptions(FILE* out, const ibsimOption* opts, int optCount)
{
	for (int i = 0; i < optCount; ++i) {
		char left[64];
		snprintf(left, sizeof left, "%s%s%s", opts[i].name, opts[i].metavar != NULL ? " " : "",
		         opts[i].metavar != NULL ? opts[i].metavar : "");
		fprintf(out, "  %-22s %s\n", left, opts[i].help);
	}
	fprintf(out, "  %-22s %s\n", "-h, --help", "show this help and exit");
}

/* ---------------------------------------------------------------- numbers */

bool ibsimParseDouble(const char* s, double* out)
{
	if (s == NULL || *s == '\0') return false;
	char* end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return false;
	*out = v;
	return true;
}

bool ibsimParsePositiveDouble(const char* s, double* out)
{
	double v = 0.0;
	if (!ibsimParseDouble(s, &v) || !(v > 0.0)) return false;
	*out = v;
	return true;
}

bool ibsimParseInteger(const char* s, long long minValue, long long maxValue, long long* out)
{
	if (s == NULL || *s == '\0') return false;
	/* strtoll skips leading white space and accepts '+'; insist on plain digits (optional '-'). */
	const char* p = s[0] == '-' ? s + 1 : s;
	if (*p < '0' || *p > '9') return false;
	char* end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end != '\0' || errno == ERANGE || v < minValue || v > maxValue) return false;
	*out = v;
	return true;
}

bool ibsimParseVector3(const char* s, double out[3])
{
	if (s == NULL) return false;
	double v[3];
	const char* p = s;
	for (int i = 0; i < 3; ++i) {
		while (*p == ' ' || *p == '\t' || (i > 0 && *p == ',')) ++p;
		if (*p == '\0') return false;
		char* end = NULL;
		errno = 0;
		v[i] = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(v[i])) return false;
		if (*end != '\0' && *end != ' ' && *end != '\t' && *end != ',') return false;
		p = end;
	}
	while (*p == ' ' || *p == '\t') ++p;
	if (*p != '\0') return false;
	for (int i = 0; i < 3; ++i) out[i] = v[i];
	return true;
}

bool ibsimParseChoice(const char* s, const char* const* names, int count, int* out)
{
	if (s == NULL) return false;
	for (int i = 0; i < count; ++i) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------- ibsim run */

static bool applyTime(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->time)) {
		snprintf(msg, msgSize, "expected a finite number of seconds > 0");
		return false;
	}
	o->hasTime = true;
	return true;
}

static bool applySteps(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParseInteger(value, 1, IBSIM_MAX_STEPS, &o->steps)) {
		snprintf(msg, msgSize, "expected an integer in [1, %lld]", IBSIM_MAX_STEPS);
		return false;
	}
	o->hasSteps = true;
	return true;
}

static bool applyDt(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->dt)) {
		snprintf(msg, msgSize, "expected a finite step size in seconds > 0");
		return false;
	}
	o->hasDt = true;
	return true;
}

static bool applyPath(const char** dst, const char* value, char* msg, size_t msgSize)
{
	if (value[0] == '\0') {
		snprintf(msg, msgSize, "expected a file name");
		return false;
	}
	if (strchr(value, '\n') != NULL || strchr(value, '\r') != NULL) {
		snprintf(msg, msgSize, "file names with line breaks are not supported");
		return false;
	}
	*dst = value;
	return true;
}

static bool applyCsv(void* ctx, const char* value, char* msg, size_t msgSize)
{
	return applyPath(&((ibsimRunOptions*)ctx)->csvPath, value, msg, msgSize);
}

static bool applyPlot(void* ctx, const char* value, char* msg, size_t msgSize)
{
	return applyPath(&((ibsimRunOptions*)ctx)->plotPath, value, msg, msgSize);
}

static bool applyQuiet(void* ctx, const char* value, char* msg, size_t msgSize)
{
	(void)value;
	(void)msg;
	(void)msgSize;
	((ibsimRunOptions*)ctx)->quiet = true;
	return true;
}

static bool applyTolPos(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->tolPos)) {
		snprintf(msg, msgSize, "expected a finite tolerance > 0 (m and rad)");
		return false;
	}
	o->hasTolPos = true;
	return true;
}

static bool applyTolVel(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->tolVel)) {
		snprintf(msg, msgSize, "expected a finite tolerance > 0 (m/s and rad/s)");
		return false;
	}
	o->hasTolVel = true;
	return true;
}

static bool applyMaxIter(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	long long n = 0;
	if (!ibsimParseInteger(value, 1, INT_MAX, &n)) {
		snprintf(msg, msgSize, "expected an integer in [1, %d]", INT_MAX);
		return false;
	}
	o->maxIter = (int)n;
	o->hasMaxIter = true;
	return true;
}

const char* const ibsimSolverNames[4] = {"auto", "iterative", "lgs", "lgs-sparse"};

static bool applySolver(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParseChoice(value, ibsimSolverNames, 4, &o->solver)) {
		snprintf(msg, msgSize, "expected auto, iterative, lgs or lgs-sparse");
		return false;
	}
	o->hasSolver = true;
	return true;
}

static bool applyKickTorque(void* ctx, const char* value, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (!ibsimParseVector3(value, o->kickTorque)) {
		snprintf(msg, msgSize, "expected three finite numbers \"x y z\" (N m)");
		return false;
	}
	o->hasKick = true;
	return true;
}

static bool applyKickBody(void* ctx, const char* value, char* msg, size_t msgSize)
{
	if (value[0] == '\0') {
		snprintf(msg, msgSize, "expected a body name");
		return false;
	}
	((ibsimRunOptions*)ctx)->kickBody = value;
	return true;
}

static bool applyOrder(void* ctx, const char* value, char* msg, size_t msgSize)
{
	static const char* const names[4] = {"1", "2", "4", "6"};
	static const int orders[4] = {1, 2, 4, 6};
	int i;
	if (!ibsimParseChoice(value, names, 4, &i)) {
		snprintf(msg, msgSize, "expected 1, 2, 4 or 6");
		return false;
	}
	ibsimRunOptions* o = ctx;
	o->order = orders[i];
	o->hasOrder = true;
	return true;
}

static const ibsimOption kRunOptions[] = {
    {"--time", "T", "simulated duration in seconds (default: the scene's <run> duration)", applyTime},
    {"--steps", "N", "number of steps instead of a duration", applySteps},
    {"--dt", "H", "step size in seconds (default: the scene's <run> time step)", applyDt},
    {"--csv", "FILE", "write a time series (one row per step, plus t = 0) to FILE", applyCsv},
    {"--plot", "FILE.png", "plot energy deviation and momentum with gnuplot into FILE.png", applyPlot},
    {"--quiet", NULL, "print only the final result line (and errors)", applyQuiet},
    {"--solver", "METHOD", "joint solver: auto, iterative, lgs or lgs-sparse (default: the scene's)", applySolver},
    {"--order", "1|2|4|6", "order of the time step: 1, 2 (midpoint), 4 or 6 (§3.4; default: the scene's)", applyOrder},
    {"--tol-pos", "E", "position tolerance in m and angular tolerance in rad (default: the scene's)", applyTolPos},
    {"--tol-vel", "E", "velocity tolerance in m/s and rad/s (default: the scene's)", applyTolVel},
    {"--max-iter", "N", "cap on position and on velocity correction sweeps per step", applyMaxIter},
    {"--kick-torque", "\"X Y Z\"", "torque in N m applied to the kick body during the first step", applyKickTorque},
    {"--kick-body", "NAME", "body that --kick-torque acts on (default: root)", applyKickBody},
};

static bool acceptScene(void* ctx, const char* arg, char* msg, size_t msgSize)
{
	ibsimRunOptions* o = ctx;
	if (o->scenePath != NULL) {
		snprintf(msg, msgSize, "more than one scene file given ('%s' and '%s')", o->scenePath, arg);
		return false;
	}
	if (arg[0] == '\0') {
		snprintf(msg, msgSize, "empty scene file name");
		return false;
	}
	o->scenePath = arg;
	return true;
}

ibsimParseStatus ibsimParseRunArgs(int argc, char** argv, ibsimRunOptions* out, char* msg, size_t msgSize)
{
	*out = (ibsimRunOptions){0};
	ibsimParseStatus st = ibsimParseOptions(argc, argv, kRunOptions, (int)(sizeof kRunOptions / sizeof kRunOptions[0]),
	                                        acceptScene, out, msg, msgSize);
	if (st != IBSIM_PARSE_OK) return st;
	if (out->hasTime && out->hasSteps) {
		snprintf(msg, msgSize, "--time and --steps exclude each other");
		return IBSIM_PARSE_ERROR;
	}
	if (out->kickBody != NULL && !out->hasKick) {
		snprintf(msg, msgSize, "--kick-body needs --kick-torque");
		return IBSIM_PARSE_ERROR;
	}
	if (out->kickBody == NULL) out->kickBody = "root";
	return IBSIM_PARSE_OK;
}

void ibsimPrintRunUsage(FILE* out)
{
	fprintf(out, "usage: ibsim [run] [SCENE.xml] [options]\n"
	             "\n"
	             "Simulate SCENE.xml (or the built-in default scene) and print a summary. The last line\n"
	             "on stdout is always machine-readable:\n"
	             "  ibsim: steps=N sim_time=S wall_ms_per_step=X energy_rel_drift=E max_pos_error=P "
	             "max_vel_error=V max_ang_error=A\n"
	             "Progress goes to stderr about once a second on runs longer than a second.\n"
	             "\n"
	             "options:\n");
	ibsimPrintOptions(out, kRunOptions, (int)(sizeof kRunOptions / sizeof kRunOptions[0]));
	fprintf(out, "\n"
	             "exit status: 0 success, 1 internal failure (e.g. the simulation diverged),\n"
	             "             2 bad input (bad option or number, unreadable or malformed scene).\n"
	             "See docs/ibsim.md for the CSV columns and the definition of every number.\n");
}
