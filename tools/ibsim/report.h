/* ibsim reporting: wall clock, progress lines (stderr), run statistics, the human summary and the
 * final machine-readable line (stdout). */
#ifndef IBSIM_REPORT_H
#define IBSIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <ibdyn/ibdyn.h>

/** Monotonic wall clock in seconds (arbitrary origin). */
double ibsimNow(void);

/** Progress printer: one line on stderr about once a second of wall time. */
typedef struct ibsimProgress {
	bool enabled;
	double start;     /**< wall clock at the start of the run */
	double lastPrint; /**< wall clock of the last line */
	long long totalSteps;
	FILE* out;
} ibsimProgress;

/** Start the progress clock; nothing is printed when enabled is false. */
void ibsimProgress_Start(ibsimProgress* p, bool enabled, long long totalSteps, FILE* out);
/** Called after each step; prints a line if at least a second passed since the last one (or the start). */
void ibsimProgress_Update(ibsimProgress* p, long long step, double simTime);

/** Quantities accumulated over a run. */
typedef struct ibsimRunStats {
	long long steps;            /**< steps completed successfully */
	long long unconvergedSteps; /**< steps whose stats said converged == false */
	double simTime;             /**< ibWorld_GetTime after the last completed step */
	double stepWallSeconds;     /**< wall time spent inside ibWorld_Step */
	double totalWallSeconds;    /**< wall time of the whole run loop (stepping, CSV, invariants) */
	ibWorldInvariants initial;  /**< invariants at t = 0 */
	ibWorldInvariants last;     /**< invariants after the last completed step */
	double energy0;             /**< total energy at t = 0 (kinetic + potential + spring) */
	double maxKinetic;          /**< largest kinetic energy seen (t = 0 included) */
	double maxEnergyDeviation;  /**< max |E(t) - E(0)| */
	double maxPositionError;    /**< max of ibStepStats.maxPositionError */
	double maxAngularError;     /**< max of ibStepStats.maxAngularError */
	double maxVelocityError;    /**< max of ibStepStats.maxVelocityError */
	int maxPositionIterations;  /**< max of ibStepStats.positionIterations */
	int maxVelocityIterations;  /**< max of ibStepStats.velocityIterations */
} ibsimRunStats;

/** Total mechanical energy of an invariants record. */
double ibsimTotalEnergy(const ibWorldInvariants* inv);
/** Begin accumulating from the invariants at t = 0. */
void ibsimRunStats_Init(ibsimRunStats* s, const ibWorldInvariants* initial);
/** Account one completed step. */
void ibsimRunStats_AddStep(ibsimRunStats* s, const ibWorldInvariants* inv, const ibStepStats* step);
/** Energy scale used to normalise the drift: max(K0 + |V0| + |S0|, max_t K(t), 1e-12). */
double ibsimRunStats_EnergyScale(const ibsimRunStats* s);
/** max_t |E(t) - E(0)| / ibsimRunStats_EnergyScale. */
double ibsimRunStats_EnergyDrift(const ibsimRunStats* s);

/** Human summary (several lines, none starting with "ibsim: steps="). */
void ibsimPrintSummary(FILE* out, const char* sceneName, int bodyCount, double dt, const ibsimRunStats* s);
/** The final machine-readable line. */
void ibsimPrintFinalLine(FILE* out, const ibsimRunStats* s);

#endif
