/* Error messages, logging, result names, version and validation of settings. */
#include <math.h>
#include <stdio.h>

#include "dynamics/world.h"

ibVersion ibGetVersion(void) { return (ibVersion){IBDYN_VERSION_MAJOR, IBDYN_VERSION_MINOR, IBDYN_VERSION_PATCH}; }

const char* ibResultString(ibResult r)
{
	switch (r) {
	case IB_OK: return "ok";
	case IB_ERR_INVALID_ARGUMENT: return "invalid argument";
	case IB_ERR_STALE_HANDLE: return "stale handle";
	case IB_ERR_WRONG_BODY_TYPE: return "wrong body type";
	case IB_ERR_DEGENERATE: return "degenerate";
	case IB_ERR_OUT_OF_MEMORY: return "out of memory";
	case IB_ERR_CAPACITY: return "capacity exceeded";
	case IB_ERR_DIVERGED: return "diverged";
	case IB_ERR_PARSE: return "parse error";
	case IB_ERR_IO: return "i/o error";
	case IB_ERR_NOT_CONVERGED: return "not converged";
	}
	return "unknown result";
}

static void vlog(ibWorld* w, ibLogLevel level, const char* fmt, va_list ap, char* buf, size_t n)
{
	vsnprintf(buf, n, fmt, ap);
	if (w && w->logFn) w->logFn(level, buf, w->logContext);
}

ibResult ib_error(ibWorld* w, ibResult r, const char* fmt, ...)
{
	char local[512];
	va_list ap;
	va_start(ap, fmt);
	vlog(w, IB_LOG_ERROR, fmt, ap, w ? w->lastError : local, w ? sizeof w->lastError : sizeof local);
	va_end(ap);
	return r;
}

void ib_log(ibWorld* w, ibLogLevel level, const char* fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vlog(w, level, fmt, ap, buf, sizeof buf);
	va_end(ap);
}

#define CHECK_POS(field, what)                                                                         \
	if (!(isfinite(s->field) && s->field > 0.0)) {                                                     \
		if (msg) snprintf(msg, n, "solver setting %s must be finite and > 0 (got %g)", what, s->field); \
		return IB_ERR_INVALID_ARGUMENT;                                                                \
	}

ibResult ib_validate_solver(const ibSolverSettings* s, char* msg, size_t n)
{
	if ((unsigned)s->method > (unsigned)IB_SOLVER_LGS_SPARSE) {
		if (msg) snprintf(msg, n, "unknown joint solver method %d", (int)s->method);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (s->integrator != IB_INTEGRATOR_RK4 && s->integrator != IB_INTEGRATOR_CASH_KARP) {
		if (msg) snprintf(msg, n, "unknown integrator %d", (int)s->integrator);
		return IB_ERR_INVALID_ARGUMENT;
	}
	CHECK_POS(integratorTolerance, "integratorTolerance")
	CHECK_POS(positionTolerance, "positionTolerance")
	CHECK_POS(angularTolerance, "angularTolerance")
	CHECK_POS(velocityTolerance, "velocityTolerance")
	if (s->order != 1 && s->order != 2 && s->order != 4 && s->order != 6) {
		if (msg) snprintf(msg, n, "order must be 1, 2, 4 or 6 (got %d)", s->order);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!(isfinite(s->maxRotationPerStep) && s->maxRotationPerStep >= 0.0)) {
		if (msg) snprintf(msg, n, "maxRotationPerStep must be finite and >= 0 (got %g)", s->maxRotationPerStep);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!(isfinite(s->maxLinearSpeed) && s->maxLinearSpeed >= 0.0 && isfinite(s->maxAngularSpeed) && s->maxAngularSpeed >= 0.0)) {
		if (msg) snprintf(msg, n, "maxLinearSpeed and maxAngularSpeed must be finite and >= 0 (got %g, %g)", s->maxLinearSpeed, s->maxAngularSpeed);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (s->maxStepSubdivisions < 0 || s->maxStepSubdivisions > 16) {
		if (msg) snprintf(msg, n, "maxStepSubdivisions must be in 0..16 (got %d)", s->maxStepSubdivisions);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (s->integratorMaxSubsteps < 1 || s->maxPositionIterations < 1 || s->maxVelocityIterations < 1) {
		if (msg) snprintf(msg, n, "solver iteration and sub-step caps must be >= 1");
		return IB_ERR_INVALID_ARGUMENT;
	}
	const ibContactSettings* c = &s->contact;
	if ((unsigned)c->restitutionLaw > (unsigned)IB_RESTITUTION_POISSON || (unsigned)c->restitutionMixing > (unsigned)IB_MIX_MEAN ||
	    (unsigned)c->frictionMixing > (unsigned)IB_MIX_MEAN) {
		if (msg) snprintf(msg, n, "unknown contact restitution law or mixing rule");
		return IB_ERR_INVALID_ARGUMENT;
	}
	CHECK_POS(contact.collisionTolerance, "contact.collisionTolerance")
	CHECK_POS(contact.contactPositionTolerance, "contact.contactPositionTolerance")
	if (!(isfinite(c->restingSpeed) && c->restingSpeed >= 0.0)) {
		if (msg) snprintf(msg, n, "contact.restingSpeed must be finite and >= 0 (got %g)", c->restingSpeed);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (c->maxCollisionIterations < 1 || c->maxContactIterations < 1 || c->shockIterations < 0 || c->stallSweeps < 0) {
		if (msg) snprintf(msg, n, "contact iteration caps must be >= 1, shockIterations and stallSweeps >= 0");
		return IB_ERR_INVALID_ARGUMENT;
	}
	const ibSleepSettings* z = &s->sleep;
	if (!(isfinite(z->linearThreshold) && z->linearThreshold >= 0.0 && isfinite(z->angularThreshold) &&
	      z->angularThreshold >= 0.0 && isfinite(z->timeToSleep) && z->timeToSleep >= 0.0)) {
		if (msg) snprintf(msg, n, "sleep thresholds and timeToSleep must be finite and >= 0");
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!(isfinite(s->maxCorrectionImpulse) && s->maxCorrectionImpulse >= 0.0)) {
		if (msg) snprintf(msg, n, "maxCorrectionImpulse must be finite and >= 0 (got %g)", s->maxCorrectionImpulse);
		return IB_ERR_INVALID_ARGUMENT;
	}
	return IB_OK;
}
