/* The iterative method (§3.3.1): Algorithm 3.1 (joint correction at t0 on predicted errors) and
 * Algorithm 3.2 (velocity correction at t0+h), one impulse per basic joint per sweep, until every
 * joint is within tolerance or the sweep cap is hit (anytime behaviour, §3.3.3).
 * Impulse of one basic joint (eqs 3.15/3.16 and 3.20/3.21): x = (P K P^T)^-1 P r, applied as
 * +P^T x on body 1 (at a) and -P^T x on body 2 (at b); r = d(t0+h)/h or the velocity error. */
#include <math.h>
#include <string.h>

#include "joints/joint_internal.h"

static ibVec3 clamp_accumulated(ibVec3* acc, ibVec3 p, double maxImpulse)
{
	if (maxImpulse <= 0.0) {
		*acc = ibAdd(*acc, p);
		return p;
	}
	ibVec3 cand = ibAdd(*acc, p);
	double l = ibLength(cand);
	if (l > maxImpulse) cand = ibScale(maxImpulse / l, cand);
	p = ibSub(cand, *acc);
	*acc = cand;
	return p;
}

ibResult ib_iterative_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		c->iterations = 0;
		c->accPos = IB_VEC3_ZERO;
		if (c->type->velocityOnly) continue;
		ib_solver_prepare(w, c);
		if (s->warmStart && ibLengthSq(c->warmPos) > 0.0) ib_solver_apply(w, c, clamp_accumulated(&c->accPos, ib_solver_project(c, c->warmPos), s->maxCorrectionImpulse));
	}
	ib_soft_position_begin(w, h); /* particle/soft rows swept in the same loop (src/soft) */
	int it = 0;
	bool corrected = true, clamped = false;
	while (corrected && it < s->maxPositionIterations) {
		clamped = false;
		corrected = false;
		++it;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			ibBasic* c = &st->basics[k];
			if (c->type->velocityOnly) continue;
			const ibPose* q1 = ib_solver_predicted(w, st, c->b1, h);
			const ibPose* q2 = ib_solver_predicted(w, st, c->b2, h);
			ibVec3 d = ib_solver_excess(c, c->type->error(c, q1, q2));
			double tol = c->type->rotational ? s->angularTolerance : s->positionTolerance;
			if (ibLength(d) <= tol) continue;
			ibVec3 p = clamp_accumulated(&c->accPos, ib_solver_impulse(c, ibScale(1.0 / h, d)), s->maxCorrectionImpulse);
			if (s->maxCorrectionImpulse > 0.0 && ibLengthSq(p) <= 1e-24 * fmax(1.0, ibLengthSq(c->accPos))) {
				clamped = true; /* at the bound: finish over the next steps (§3.3.3) */
				continue;
			}
			ib_solver_apply(w, c, p);
			c->iterations++;
			corrected = true;
		}
		if (ib_soft_position_sweep(w, h)) corrected = true;
	}
	ib_soft_position_end(w);
	if (corrected || clamped) w->stats.converged = false;
	w->stats.positionIterations += it;
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].warmPos = st->basics[k].accPos;
	return IB_OK;
}


static void apply_all(ibWorld* w, const ibJointStore* st, double f)
{
	for (int32_t k = 0; k < st->basicCount; ++k)
		if (ibLengthSq(st->basics[k].accVel) > 0.0) ib_solver_apply(w, &st->basics[k], ibScale(f, st->basics[k].accVel));
}

/* Warm start of the velocity correction with an exact line search. The velocity correction is the
 * mass-metric projection of the velocities: its impulses x minimise the kinetic energy
 * KE(u + Mass^-1 G^T x) (quadratic in x, minimum where the velocity errors vanish). The warm
 * impulses x0 (last step's, projected onto the rows) are therefore applied as a x0 with the a in
 * [0, 1] that minimises KE(a) = KE0 + c1 a + c2 a^2 (three energy evaluations: a = 0, 1, 2), so a
 * warm start can never add energy. Unscaled, it did: where Alg. 3.2 stops at the sweep cap, the last
 * step's large opposing impulses (a 20-ary tree of 1000 bodies of very different masses: a hub
 * pulled by 20 children) or the impulses of the pre-step projection of inconsistent initial
 * velocities were re-applied at a new configuration, and the unconverged sweeps could not take the
 * energy out again: the kinetic energy grew 9e3 J -> 1e46 J in 10 steps (tests/test_joints_wide.c). */
static void warm_start_velocities(ibWorld* w, ibJointStore* st)
{
	double e0 = ib_bodies_kinetic_energy(w);
	apply_all(w, st, 1.0);
	double e1 = ib_bodies_kinetic_energy(w);
	apply_all(w, st, 1.0);
	double e2 = ib_bodies_kinetic_energy(w);
	double c2 = 0.5 * (e2 - 2.0 * e1 + e0), c1 = e1 - e0 - c2;
	double a = c2 > 0.0 ? -0.5 * c1 / c2 : (c1 < 0.0 ? 1.0 : 0.0);
	if (!(a > 0.0)) a = 0.0; /* also NaN */
	if (a > 1.0) a = 1.0;
	apply_all(w, st, a - 2.0);
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].accVel = ibScale(a, st->basics[k].accVel);
}

ibResult ib_iterative_velocity_correction(ibWorld* w, double h, bool warmStart)
{
	(void)h;
	ibJointStore* st = w->joints;
	const ibSolverSettings* s = &w->solver;
	bool anyWarm = false;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		ib_solver_prepare(w, c);
		c->accVel = IB_VEC3_ZERO;
		if (warmStart && s->warmStart && ibLengthSq(c->warmVel) > 0.0) {
			c->accVel = ib_solver_project(c, c->warmVel);
			anyWarm = true;
		}
	}
	if (anyWarm) warm_start_velocities(w, st);
	ib_soft_velocity_begin(w);
	int it = 0;
	bool corrected = true;
	while (corrected && it < s->maxVelocityIterations) {
		corrected = false;
		++it;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			ibBasic* c = &st->basics[k];
			ibVec3 du = ib_solver_velocity_error(w, c);
			if (ib_solver_projected_norm(c, du) <= s->velocityTolerance) continue;
			ibVec3 p = ib_solver_impulse(c, du);
			c->accVel = ibAdd(c->accVel, p);
			ib_solver_apply(w, c, p);
			c->iterations++;
			corrected = true;
		}
		if (ib_soft_velocity_sweep(w)) corrected = true;
	}
	ib_soft_velocity_end(w);
	if (corrected) w->stats.converged = false;
	w->stats.velocityIterations += it;
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].warmVel = st->basics[k].accVel;
	return IB_OK;
}

/* Errors after the step, measured from the body states alone (not from the loops' bookkeeping). */
/* fmax without the libm call (a NaN argument gives the other one, as fmax; the errors are norms, so
 * no signed zeros arise) */
static inline double max_of(double a, double b) { return (b > a || isnan(a)) ? b : a; }

void ib_joints_measure(ibWorld* w, ibStepStats* stats)
{
	ibJointStore* st = ib_joint_store(w, false);
	if (!st) return;
	for (int32_t j = 0; j < st->jointHigh; ++j) {
		ibJoint* jt = &st->joints[j];
		jt->posError = jt->angError = jt->velError = 0.0;
		jt->iterations = 0;
		if (jt->inUse) ib_motor_measure(w, jt); /* angle / position after the step, not before it */
	}
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		ib_solver_prepare_points(w, c); /* points and rows; the response inverse is not needed here */
		ibJoint* jt = &st->joints[c->joint];
		if (!c->type->velocityOnly) {
			c->posError = ib_solver_error_now(w, c);
			if (c->type->rotational) {
				jt->angError = max_of(jt->angError, c->posError);
				stats->maxAngularError = max_of(stats->maxAngularError, c->posError);
			} else {
				jt->posError = max_of(jt->posError, c->posError);
				stats->maxPositionError = max_of(stats->maxPositionError, c->posError);
			}
		}
		c->velError = ib_solver_projected_norm(c, ib_solver_velocity_error(w, c));
		jt->velError = max_of(jt->velError, c->velError);
		stats->maxVelocityError = max_of(stats->maxVelocityError, c->velError);
		jt->iterations += c->iterations;
	}
}

/* One sweep of Alg. 3.1 (contacts interleaved with the joints, §5.4.2): continues the accumulated
 * impulses of the preceding ib_joints_position_correction (same h, same prediction cache). */
bool ib_joints_position_sweep(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->basicCount == 0) return false;
	const ibSolverSettings* s = &w->solver;
	bool corrected = ib_limits_position_sweep(w, h);
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (ib_sweep_skips(st, c->b1, c->b2)) continue;
		if (c->type->velocityOnly) continue;
		ibVec3 d = ib_solver_excess(c, c->type->error(c, ib_solver_predicted(w, st, c->b1, h), ib_solver_predicted(w, st, c->b2, h)));
		double tol = c->type->rotational ? s->angularTolerance : s->positionTolerance;
		if (ibLength(d) <= tol) continue;
		/* after an LGS correction the rows' own (P K P^T)^-1 may not be prepared at this instant: in the
		 * first step it was zero and these sweeps did nothing (a table's legs were pushed alone) */
		ib_solver_prepare(w, c);
		ibVec3 p = clamp_accumulated(&c->accPos, ib_solver_impulse(c, ibScale(1.0 / h, d)), s->maxCorrectionImpulse);
		if (ibLengthSq(p) <= 1e-24 * fmax(1.0, ibLengthSq(c->accPos))) continue;
		ib_solver_apply(w, c, p);
		c->warmPos = c->accPos;
		c->iterations++;
		corrected = true;
	}
	return corrected;
}

/* The velocity sweep above without the one-sided limit rows (their accumulated impulses are state), for
 * the contacts' probes of the joint system's response (contact_joint_response.c): tol is the row
 * tolerance, relative to the probe's unit velocity change. */
bool ib_joints_response_sweep(ibWorld* w, double tol)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return false;
	bool corrected = false;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (ib_sweep_skips(st, c->b1, c->b2)) continue;
		ib_solver_prepare(w, c);
		ibVec3 du = ib_solver_velocity_error(w, c);
		if (ib_solver_projected_norm(c, du) <= tol) continue;
		ib_solver_apply(w, c, ib_solver_impulse(c, du));
		corrected = true;
	}
	return corrected;
}

/* One sweep of Alg. 3.2 at the current instant (collision impulses travel through joints, §5.4.1). */
bool ib_joints_velocity_sweep(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return false;
	bool corrected = ib_limits_velocity_sweep(w);
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (ib_sweep_skips(st, c->b1, c->b2)) continue;
		ib_solver_prepare(w, c);
		ibVec3 du = ib_solver_velocity_error(w, c);
		if (ib_solver_projected_norm(c, du) <= w->solver.velocityTolerance) continue;
		ib_solver_apply(w, c, ib_solver_impulse(c, du));
		corrected = true;
	}
	return corrected;
}
