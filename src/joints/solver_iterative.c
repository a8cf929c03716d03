/* The iterative method (§3.3.1): Algorithm 3.1 (joint correction at t0 on predicted errors) and
 * Algorithm 3.2 (velocity correction at t0+h), one impulse per basic joint per sweep, until every
 * joint is within tolerance or the sweep cap is hit (anytime behaviour, §3.3.3).
 * Impulse of one basic joint (eqs 3.15/3.16 and 3.20/3.21): x = (P K P^T)^-1 P r, applied as
 * +P^T x on body 1 (at a) and -P^T x on body 2 (at b); r = d(t0+h)/h or the velocity error. */
#include <math.h>
#include <string.h>

#include "joints/joint_internal.h"

/* K_{a,a} of one body (eq. 3.9): (1/m) E - [r]x J^-1 [r]x; zero for non-dynamic bodies. */
static ibMat3 point_response(const ibBody* b, ibVec3 r)
{
	if (!ib_is_dynamic(b)) return ibMat3_Zero();
	ibMat3 S = ibMat3_Skew(r);
	ibMat3 K = ibMat3_Scale(-1.0, ibMat3_Mul(S, ibMat3_Mul(b->invInertiaW, S)));
	for (int i = 0; i < 3; ++i) K.m[i][i] += b->invMass;
	return K;
}

static void invert_small(double M[3][3], int n, double out[3][3])
{
	memset(out, 0, sizeof(double) * 9);
	if (n == 1) {
		if (M[0][0] > 0.0) out[0][0] = 1.0 / M[0][0];
	} else if (n == 2) {
		double det = M[0][0] * M[1][1] - M[0][1] * M[1][0];
		if (det > 0.0) {
			out[0][0] = M[1][1] / det;
			out[1][1] = M[0][0] / det;
			out[0][1] = out[1][0] = -M[0][1] / det;
		}
	} else if (n == 3) {
		ibMat3 A, Ai;
		memcpy(A.m, M, sizeof A.m);
		if (ibMat3_InverseSym(A, &Ai)) memcpy(out, Ai.m, sizeof Ai.m);
	}
}

/* Points, projection and (P K P^T)^-1 at the current time instant; computed once per instant and
 * shared by the velocity correction at t0+h and the next step's joint correction. */
static void prepare(ibWorld* w, ibBasic* c)
{
	if (c->cacheEpoch == w->poseEpoch) return;
	const ibBody* b1 = &w->bodies[c->b1];
	const ibBody* b2 = &w->bodies[c->b2];
	ibPose p1 = ib_body_pose(b1), p2 = ib_body_pose(b2);
	c->type->prepare(c, &p1, &p2);
	ibMat3 K;
	if (c->type->rotational)
		K = ibMat3_Add(b1->invInertiaW, b2->invInertiaW);
	else
		K = ibMat3_Add(point_response(b1, ibSub(c->a, b1->st.s)), point_response(b2, ibSub(c->b, b2->st.s)));
	double M[3][3] = {{0}};
	for (int k = 0; k < c->rows; ++k) {
		ibVec3 Kp = ibMat3_MulV(K, c->P[k]);
		for (int l = 0; l < c->rows; ++l) M[l][k] = ibDot(c->P[l], Kp);
	}
	invert_small(M, c->rows, c->Minv);
	c->cacheEpoch = w->poseEpoch;
}

/* World impulse P^T (P K P^T)^-1 P r. */
static ibVec3 impulse(const ibBasic* c, ibVec3 r)
{
	double pr[3];
	for (int k = 0; k < c->rows; ++k) pr[k] = ibDot(c->P[k], r);
	ibVec3 p = IB_VEC3_ZERO;
	for (int k = 0; k < c->rows; ++k) {
		double x = 0.0;
		for (int l = 0; l < c->rows; ++l) x += c->Minv[k][l] * pr[l];
		p = ibMulAdd(p, x, c->P[k]);
	}
	return p;
}

static double projected_norm(const ibBasic* c, ibVec3 r)
{
	double s = 0.0;
	for (int k = 0; k < c->rows; ++k) {
		double x = ibDot(c->P[k], r);
		s += x * x;
	}
	return sqrt(s);
}

static void apply(ibWorld* w, const ibBasic* c, ibVec3 p)
{
	ibBody* b1 = &w->bodies[c->b1];
	ibBody* b2 = &w->bodies[c->b2];
	if (c->type->rotational) {
		ib_body_apply_angular_impulse(b1, p);
		ib_body_apply_angular_impulse(b2, ibNeg(p));
	} else {
		ib_body_apply_impulse(b1, p, c->a);
		ib_body_apply_impulse(b2, ibNeg(p), c->b);
	}
}

static const ibPose* predicted(ibWorld* w, ibJointStore* st, int32_t i, double h)
{
	const ibBody* b = &w->bodies[i];
	ibPredicted* pr = &st->pred[i];
	if (pr->version != b->velVersion) {
		if (b->type == IB_BODY_STATIC) {
			pr->pose.s = b->st.s;
			pr->pose.q = b->st.q;
		} else {
			ib_predict_pose(w, b, h, &pr->pose.s, &pr->pose.q);
		}
		pr->pose.R = ibMat3_FromQuat(pr->pose.q);
		pr->version = b->velVersion;
	}
	return &pr->pose;
}

static ibVec3 velocity_error(const ibWorld* w, const ibBasic* c)
{
	const ibBody* b1 = &w->bodies[c->b1];
	const ibBody* b2 = &w->bodies[c->b2];
	if (c->type->rotational) return ibSub(b2->st.w, b1->st.w);
	ibVec3 ua = ibAdd(b1->st.v, ibCross(b1->st.w, ibSub(c->a, b1->st.s)));
	ibVec3 ub = ibAdd(b2->st.v, ibCross(b2->st.w, ibSub(c->b, b2->st.s)));
	return ibSub(ub, ua);
}

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

ibResult ib_joints_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = ib_joint_store(w, false);
	if (!st) return IB_OK;
	if (!ib_joints_rebuild_basics(w)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in joint solver");
	if (st->basicCount == 0) return IB_OK;
	for (int32_t i = 0; i < w->bodyHigh; ++i) st->pred[i].version = ~w->bodies[i].velVersion;
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		c->iterations = 0;
		c->accPos = IB_VEC3_ZERO;
		if (c->type->velocityOnly) continue;
		prepare(w, c);
		if (s->warmStart && ibLengthSq(c->warmPos) > 0.0) apply(w, c, clamp_accumulated(&c->accPos, c->warmPos, s->maxCorrectionImpulse));
	}
	int it = 0;
	bool corrected = true;
	while (corrected && it < s->maxPositionIterations) {
		corrected = false;
		++it;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			ibBasic* c = &st->basics[k];
			if (c->type->velocityOnly) continue;
			const ibPose* q1 = predicted(w, st, c->b1, h);
			const ibPose* q2 = predicted(w, st, c->b2, h);
			ibVec3 d = c->type->error(c, q1, q2);
			double tol = c->type->rotational ? s->angularTolerance : s->positionTolerance;
			if (ibLength(d) <= tol) continue;
			ibVec3 p = clamp_accumulated(&c->accPos, impulse(c, ibScale(1.0 / h, d)), s->maxCorrectionImpulse);
			if (ibLengthSq(p) == 0.0) continue; /* clamped: finish over the next steps (§3.3.3) */
			apply(w, c, p);
			c->iterations++;
			corrected = true;
		}
	}
	if (corrected) w->stats.converged = false;
	w->stats.positionIterations = it;
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].warmPos = st->basics[k].accPos;
	return IB_OK;
}

ibResult ib_joints_velocity_correction(ibWorld* w, double h)
{
	(void)h;
	ibJointStore* st = ib_joint_store(w, false);
	if (!st || st->basicCount == 0) return IB_OK;
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		prepare(w, c);
		c->accVel = IB_VEC3_ZERO;
		if (s->warmStart && ibLengthSq(c->warmVel) > 0.0) {
			c->accVel = c->warmVel;
			apply(w, c, c->warmVel);
		}
	}
	int it = 0;
	bool corrected = true;
	while (corrected && it < s->maxVelocityIterations) {
		corrected = false;
		++it;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			ibBasic* c = &st->basics[k];
			ibVec3 du = velocity_error(w, c);
			if (projected_norm(c, du) <= s->velocityTolerance) continue;
			ibVec3 p = impulse(c, du);
			c->accVel = ibAdd(c->accVel, p);
			apply(w, c, p);
			c->iterations++;
			corrected = true;
		}
	}
	if (corrected) w->stats.converged = false;
	w->stats.velocityIterations = it;
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].warmVel = st->basics[k].accVel;
	return IB_OK;
}

/* Errors after the step, measured from the body states alone (not from the loops' bookkeeping). */
void ib_joints_measure(ibWorld* w, ibStepStats* stats)
{
	ibJointStore* st = ib_joint_store(w, false);
	if (!st) return;
	for (int32_t j = 0; j < st->jointHigh; ++j) {
		ibJoint* jt = &st->joints[j];
		jt->posError = jt->angError = jt->velError = 0.0;
		jt->iterations = 0;
	}
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		prepare(w, c);
		ibJoint* jt = &st->joints[c->joint];
		if (!c->type->velocityOnly) {
			ibPose p1 = ib_body_pose(&w->bodies[c->b1]), p2 = ib_body_pose(&w->bodies[c->b2]);
			c->posError = ibLength(c->type->error(c, &p1, &p2));
			if (c->type->rotational) {
				jt->angError = fmax(jt->angError, c->posError);
				stats->maxAngularError = fmax(stats->maxAngularError, c->posError);
			} else {
				jt->posError = fmax(jt->posError, c->posError);
				stats->maxPositionError = fmax(stats->maxPositionError, c->posError);
			}
		}
		c->velError = projected_norm(c, velocity_error(w, c));
		jt->velError = fmax(jt->velError, c->velError);
		stats->maxVelocityError = fmax(stats->maxVelocityError, c->velError);
		jt->iterations += c->iterations;
	}
}
