/* ibsim run: load (or build) a scene, step it, report, write CSV and plot. */
#ifndef IBSIM_RUN_H
#define IBSIM_RUN_H

#include "cli_args.h"

/** Number of steps of size dt that cover duration: duration / dt rounded up, except that a ratio
 * within a relative 1e-9 of an integer counts as that integer (0.5 / 0.01 gives 50). At least 1.
 * Returns -1 if the count exceeds IBSIM_MAX_STEPS or the inputs are not finite and positive. */
long long ibsimStepCount(double duration, double dt);

/** Run `ibsim run` with parsed options; returns the process exit code. */
int ibsimRun(const ibsimRunOptions* options);

#endif
