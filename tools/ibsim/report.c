/* ibsim reporting: clock, progress, run statistics, summary and final line. */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <math.h>
#include <time.h>

double ibsimNow(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- progress */

void ibsimProgress_Start(ibsimProgress* p, bool enabled, long long totalSteps, FILE* out)
{
	p->enabled = enabled;
	p->start = ibsimNow();
	p->lastPrint = p->start;
	p->totalSteps = totalSteps;
	p->out = out;
}

void ibsimProgress_Update(ibsimProgress* p, long long step, double simTime)
{
	if (!p->enabled) return;
	double now = ibsimNow();
	if (now - p->lastPrint < 1.0) return;
	p->lastPrint = now;
	double elapsed = now - p->start;
	double fraction = p->totalSteps > 0 ? (double)step / (double)p->totalSteps : 1.0;
	double eta = fraction > 0.0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
	fprintf(p->out, "ibsim: progress %5.1f%%  step %lld/%lld  t = %.6g s  elapsed %.1f s  eta %.1f s\n",
	        100.0 * fraction, step, p->totalSteps, simTime, elapsed, eta);
	fflush(p->out);
}

/* ---------------------------------------------------------------- statistics */

double ibsimTotalEnergy(const ibWorldInvariants* inv)
{
	return inv->kineticEnergy + inv->potentialEnergy + inv->springEnergy;
}

void ibsimRunStats_Init(ibsimRunStats* s, const ibWorldInvariants* initial)
{
	*s = (ibsimRunStats){0};
	s->initial = *initial;
	s->last = *initial;
	s->energy0 = ibsimTotalEnergy(initial);
	s->maxKinetic = initial->kineticEnergy;
}

void ibsimRunStats_AddStep(ibsimRunStats* s, const ibWorldInvariants* inv, const ibStepStats* step)
{
	s->steps += 1;
	s->last = *inv;
	double dev = fabs(ibsimTotalEnergy(inv) - s->energy0);
	if (dev > s->maxEnergyDeviation) s->maxEnergyDeviation = dev;
	if (inv->kineticEnergy > s->maxKinetic) s->maxKinetic = inv->kineticEnergy;
	if (step->maxPositionError > s->maxPositionError) s->maxPositionError = step->maxPositionError;
	if (step->maxAngularError > s->maxAngularError) s->maxAngularError = step->maxAngularError;
	if (step->maxVelocityError > s->maxVelocityError) s->maxVelocityError = step->maxVelocityError;
	if (step->positionIterations > s->maxPositionIterations) s->maxPositionIterations = step->positionIterations;
	if (step->velocityIterations > s->maxVelocityIterations) s->maxVelocityIterations = step->velocityIterations;
	if (!step->converged) s->unconvergedSteps += 1;
}

double ibsimRunStats_EnergyScale(const ibsimRunStats* s)
{
	double scale = s->initial.kineticEnergy + fabs(s->initial.potentialEnergy) + fabs(s->initial.springEnergy);
	if (s->maxKinetic > scale) scale = s->maxKinetic;
	return scale > 1e-12 ? scale : 1e-12;
}

double ibsimRunStats_EnergyDrift(const ibsimRunStats* s)
{
	return s->maxEnergyDeviation / ibsimRunStats_EnergyScale(s);
}

/* ---------------------------------------------------------------- output */

static void printVec(FILE* out, ibVec3 v) { fprintf(out, "(%.6g, %.6g, %.6g)", v.x, v.y, v.z); }

void ibsimPrintSummary(FILE* out, const char* sceneName, int bodyCount, double dt, const ibsimRunStats* s)
{
	double msPerStep = s->steps > 0 ? 1e3 * s->stepWallSeconds / (double)s->steps : 0.0;
	fprintf(out, "scene:      %s (%d bodies)\n", sceneName, bodyCount);
	fprintf(out,
	        "run:        %lld steps of h = %.6g s, simulated %.6g s in %.3f s wall (%.4g ms/step in ibWorld_Step)\n",
	        s->steps, dt, s->simTime, s->totalWallSeconds, msPerStep);
	fprintf(out, "energy:     E(0) = %.10g J, E(end) = %.10g J, max |E - E(0)| = %.3e J (%.3e of scale %.6g J)\n",
	        s->energy0, ibsimTotalEnergy(&s->last), s->maxEnergyDeviation, ibsimRunStats_EnergyDrift(s),
	        ibsimRunStats_EnergyScale(s));
	fprintf(out, "momentum:   p(0) = ");
	printVec(out, s->initial.linearMomentum);
	fprintf(out, " kg m/s, p(end) = ");
	printVec(out, s->last.linearMomentum);
	fprintf(out, " kg m/s\n");
	fprintf(out, "ang. mom.:  L(0) = ");
	printVec(out, s->initial.angularMomentum);
	fprintf(out, " kg m^2/s, L(end) = ");
	printVec(out, s->last.angularMomentum);
	fprintf(out, " kg m^2/s (about the world origin)\n");
	fprintf(out,
	        "joints:     max position error %.3e m, angular %.3e rad, velocity %.3e; "
	        "max iterations %d (position) %d (velocity); %lld unconverged steps\n",
	        s->maxPositionError, s->maxAngularError, s->maxVelocityError, s->maxPositionIterations,
	        s->maxVelocityIterations, s->unconvergedSteps);
}

void ibsimPrintFinalLine(FILE* out, const ibsimRunStats* s)
{
	double msPerStep = s->steps > 0 ? 1e3 * s->stepWallSeconds / (double)s->steps : 0.0;
	fprintf(out,
	        "ibsim: steps=%lld sim_time=%.10g wall_ms_per_step=%.6g energy_rel_drift=%.6e max_pos_error=%.6e "
	        "max_vel_error=%.6e max_ang_error=%.6e\n",
	        s->steps, s->simTime, msPerStep, ibsimRunStats_EnergyDrift(s), s->maxPositionError, s->maxVelocityError,
	        s->maxAngularError);
	fflush(out);
}
