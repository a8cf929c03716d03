/* ibsim command line: exit codes, a small table-driven option parser shared by all subcommands,
 * strict number parsing, and the options of `ibsim run`.
 *
 * Adding a run option: add a field to ibsimRunOptions, a handler and a row in the table in
 * cli_args.c. Adding a subcommand: give it its own options struct and ibsimOption table and parse
 * its arguments with ibsimParseOptions; register it in main.c. */
#ifndef IBSIM_CLI_ARGS_H
#define IBSIM_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** Process exit codes of ibsim. */
enum {
	IBSIM_EXIT_OK = 0,      /**< success */
	IBSIM_EXIT_FAILURE = 1, /**< internal failure: divergence, write error, missing gnuplot, out of memory */
	IBSIM_EXIT_USAGE = 2,   /**< bad input: unknown option, bad number, unreadable or malformed scene */
};

/** Outcome of parsing a command line. */
typedef enum ibsimParseStatus {
	IBSIM_PARSE_OK = 0, /**< arguments accepted */
	IBSIM_PARSE_HELP,   /**< --help / -h seen: print the usage text and exit 0 */
	IBSIM_PARSE_ERROR,  /**< bad arguments: the message says why; exit 2 */
} ibsimParseStatus;

/** Applies an option's value (NULL for flags) to ctx; returns false and fills msg on a bad value. */
typedef bool ibsimOptionFn(void* ctx, const char* value, char* msg, size_t msgSize);
/** Accepts a positional argument; returns false and fills msg if it is not wanted. */
typedef bool ibsimPositionalFn(void* ctx, const char* arg, char* msg, size_t msgSize);

/** One long option of a subcommand. */
typedef struct ibsimOption {
	const char* name;    /**< "--time"; also accepted as "--time=VALUE" when it takes a value */
	const char* metavar; /**< value placeholder for the help text ("T"), NULL for a flag */
	const char* help;    /**< one-line description */
	ibsimOptionFn* apply;
} ibsimOption;

/** Parse argv[0..argc) (the subcommand's own arguments, no program name) against opts.
 * "--" ends the options; "-h"/"--help" returns IBSIM_PARSE_HELP; anything else starting with '-'
 * (except "-" itself) that is not in opts is an error. Each option may be given once. */
ibsimParseStatus ibsimParseOptions(int argc, char** argv, const ibsimOption* opts, int optCount,
                                   ibsimPositionalFn* positional, void* ctx, char* msg, size_t msgSize);
/** Print the option table as help lines ("  --time T   description"). */
void ibsimPrintOptions(FILE* out, const ibsimOption* opts, int optCount);

/** Parse a finite double; the whole string must be consumed. */
bool ibsimParseDouble(const char* s, double* out);
/** Parse a finite double > 0. */
bool ibsimParsePositiveDouble(const char* s, double* out);
/** Parse a decimal integer in [minValue, maxValue]; the whole string must be consumed. */
bool ibsimParseInteger(const char* s, long long minValue, long long maxValue, long long* out);

/** Parse three finite numbers separated by white space or commas ("6 8 0", "6,8,0"). */
bool ibsimParseVector3(const char* s, double out[3]);
/** Match s against names[0..count); stores the index. For options such as --solver iterative|lgs. */
bool ibsimParseChoice(const char* s, const char* const* names, int count, int* out);

/** Options of `ibsim run`. */
typedef struct ibsimRunOptions {
	const char* scenePath; /**< scene file, NULL = built-in default scene */
	bool hasTime;          /**< --time given */
	double time;           /**< simulated duration (s) */
	bool hasSteps;         /**< --steps given */
	long long steps;       /**< number of steps */
	bool hasDt;            /**< --dt given */
	double dt;             /**< step size (s) */
	const char* csvPath;   /**< --csv FILE or NULL */
	const char* plotPath;  /**< --plot FILE.png or NULL */
	bool quiet;            /**< --quiet: only the final line (and errors) */
	bool hasTolPos;        /**< --tol-pos given */
	double tolPos;         /**< overrides positionTolerance (m) and angularTolerance (rad) */
	bool hasTolVel;        /**< --tol-vel given */
	double tolVel;         /**< overrides velocityTolerance */
	bool hasMaxIter;       /**< --max-iter given */
	int maxIter;           /**< overrides maxPositionIterations and maxVelocityIterations */
	bool hasOrder;         /**< --order given */
	int order;             /**< 1, 2, 4 or 6 (higher-order method, §3.4) */
	bool hasSolver;        /**< --solver given */
	int solver;            /**< ibJointSolver */
	bool hasKick;          /**< --kick-torque given */
	double kickTorque[3];  /**< torque (N m, world) applied to kickBody during the first step */
	const char* kickBody;  /**< --kick-body NAME (default "root") */
} ibsimRunOptions;

/** Names of --solver values, indexed by ibJointSolver (auto, iterative, lgs). */
extern const char* const ibsimSolverNames[4];

/** Largest accepted number of steps (--steps, or duration / step size). */
#define IBSIM_MAX_STEPS 1000000000000LL

/** Parse the arguments of `ibsim run` (without "run" itself). */
ibsimParseStatus ibsimParseRunArgs(int argc, char** argv, ibsimRunOptions* out, char* msg, size_t msgSize);
/** Print the help text of `ibsim run`. */
void ibsimPrintRunUsage(FILE* out);

#endif
