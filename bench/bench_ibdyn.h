/* The ibdyn side of the benchmarks: builds a BenchModel in an ibdyn world and measures it exactly as
 * the peers are measured (errors from body poses after every step, time around ibWorld_Step only). */
#ifndef IBDYN_BENCH_IBDYN_H
#define IBDYN_BENCH_IBDYN_H

#include <stdbool.h>

#include "bench_common.h"
#include "ibdyn/ibdyn.h"

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
	int stoppedBudget;          /**< step after which the wall-time budget was used up (0 = no budget or not reached) */
	double ownMaxAngularError;  /**< max over steps of ibStepStats.maxAngularError (rad) */
	double maxAxisError;        /**< hinge axis misalignment from the body poses (rad) */
	int subdivCap;              /**< ibSolverSettings.maxStepSubdivisions used */
	int firstNonconverged;      /**< 1-based number of the first such step (0 = none) */
	double ownMaxError;         /**< max over steps of ibStepStats.maxPositionError (ibdyn's own measurement) */
	double worldPointError;     /**< max joint error from ibBody_GetWorldPoint of the set-up local anchors */
	double setupMismatch;       /**< max |ibBody_GetLocalPoint(anchor) - model local point| at set-up (m) */
	double inertiaMismatch;     /**< max relative deviation of ibdyn's box inertia from BenchBody.inertia */
	double wallSeconds;         /**< wall time of the whole run, set-up and measurements included (s) */
} IbdynStats;

/** Build and run the model: ball joints via ibJointDef_SetWorldAnchors, hinges via
 * ibJointDef_SetWorldFrame, one static ground body for world-fixed joints. Stops early when the energy
 * blows up, or after budgetS seconds of stepping (0 = no budget). Returns 0, or -1 if the model could
 * not be built. */
int bench_run_ibdyn(const BenchModel* m, double h, int steps, double tol, const IbdynEngine* e, double budgetS,
                    BenchResult* out, IbdynStats* st);

#endif
