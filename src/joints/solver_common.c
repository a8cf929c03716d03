/* Shared pieces of the joint solvers: response matrices (eqs 3.9-3.12), per-instant preparation
 * of basic joints, impulses, prediction cache, velocity errors. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "joints/joint_internal.h"
#include "math/quat_inline.h"

/* K_{a,a} of one body (eq. 3.9): (1/m) E - [r]x J^-1 [r]x; zero for non-dynamic bodies. */
ibMat3 ib_solver_point_response(const ibBody* b, ibVec3 r)
{
	if (!ib_is_dynamic(b)) return ibMat3_Zero();
	ibMat3 S = ibMat3_Skew(r);
	ibMat3 K = ibMat3_Scale(-1.0, ibMat3_Mul(S, ibMat3_Mul(b->invInertiaW, S)));
	for (int i = 0; i < 3; ++i) K.m[i][i] += b->invMass;
	return K;
}

void ib_solver_invert_small(double M[3][3], int n, double out[3][3])
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
void ib_solver_prepare_points(ibWorld* w, ibBasic* c)
{
	if (c->cacheEpoch == w->poseEpoch || c->pointEpoch == w->poseEpoch) return;
	const ibBody* b1 = &w->bodies[c->b1];
	const ibBody* b2 = &w->bodies[c->b2];
	if (c->type == &ib_basic_ball) { /* ball_prepare written out (the chains' only joint): no pose copies */
		c->a = ibAdd(b1->st.s, ibMat3_MulV(b1->R, c->la));
		c->b = ibAdd(b2->st.s, ibMat3_MulV(b2->R, c->lb));
		c->rows = 3;
		c->P[0] = ibV3(1, 0, 0);
		c->P[1] = ibV3(0, 1, 0);
		c->P[2] = ibV3(0, 0, 1);
	} else {
		ibPose p1 = ib_body_pose(b1), p2 = ib_body_pose(b2);
		c->type->prepare(c, &p1, &p2);
	}
	c->pointEpoch = w->poseEpoch;
}

void ib_solver_prepare(ibWorld* w, ibBasic* c)
{
	if (c->cacheEpoch == w->poseEpoch) return;
	const ibBody* b1 = &w->bodies[c->b1];
	const ibBody* b2 = &w->bodies[c->b2];
	ib_solver_prepare_points(w, c);
	ibMat3 K;
	if (c->type->rotational)
		K = ibMat3_Add(b1->invInertiaW, b2->invInertiaW);
	else
		K = ibMat3_Add(ib_solver_point_response(b1, ibSub(c->a, b1->st.s)), ib_solver_point_response(b2, ibSub(c->b, b2->st.s)));
	double M[3][3] = {{0}};
	for (int k = 0; k < c->rows; ++k) {
		ibVec3 Kp = ibMat3_MulV(K, c->P[k]);
		for (int l = 0; l < c->rows; ++l) M[l][k] = ibDot(c->P[l], Kp);
	}
	ib_solver_invert_small(M, c->rows, c->Minv);
	c->cacheEpoch = w->poseEpoch;
}

/* World impulse P^T (P K P^T)^-1 P r. */
ibVec3 ib_solver_impulse(const ibBasic* c, ibVec3 r)
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

void ib_solver_apply(ibWorld* w, const ibBasic* c, ibVec3 p)
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

static inline void check_terms_epoch(const ibWorld* w, ibPredicted* pr)
{
	if (pr->termsEpoch != w->poseEpoch) { /* the pose changed: its terms are recomputed */
		pr->terms.valid = false;
		pr->termsEpoch = w->poseEpoch;
	}
}

/* The rest of a prediction of a non-static body once pr->next.s, .q (and pr->pc) are set; the
 * matrix too unless !matrix (the caller sets it). */
static inline __attribute__((always_inline)) void finish_prediction(ibPredicted* pr, const ibBody* b, double h, bool matrix)
{
	pr->pose.s = pr->next.s;
	pr->pose.q = pr->next.q;
	pr->from = b->st;
	pr->fext = b->fext;
	pr->text = b->text;
	pr->h = h;
	if (matrix) ib_mat3_from_quat(pr->pose.q, &pr->pose.R);
	pr->version = b->velVersion;
}

/* The prediction of body i at t0+h into st->pred[i] (its velocities changed since the last one). */
static __attribute__((noinline)) void predict_body(ibWorld* w, ibJointStore* st, int32_t i, double h)
{
	const ibBody* b = &w->bodies[i];
	ibPredicted* pr = &st->pred[i];
	if (b->type == IB_BODY_STATIC) {
		pr->h = 0.0; /* no full state */
		pr->pose.s = b->st.s;
		pr->pose.q = b->st.q;
		ib_mat3_from_quat(pr->pose.q, &pr->pose.R);
		pr->version = b->velVersion;
		return;
	}
	double hint = b->substepHint;
	check_terms_epoch(w, pr);
	pr->velocities = ib_integrate_pose(w, b, h, &pr->next, &hint, &pr->pc, &pr->terms);
	finish_prediction(pr, b, h, true);
}

/* Bodies ib_integrate_pose2 can take: the axisymmetric closed form (dynamic, torque-free). */
static inline bool pairable(const ibBody* b)
{
	return b->type == IB_BODY_DYNAMIC && b->inertiaClass >= IB_INERTIA_AXIS_X && b->inertiaClass <= IB_INERTIA_AXIS_Z &&
	       b->text.x == 0.0 && b->text.y == 0.0 && b->text.z == 0.0;
}

/* Two pairable bodies of the same class through ib_integrate_pose2 (one by one where it declines). */
static void predict_pair(ibWorld* w, ibJointStore* st, int32_t i0, int32_t i1, double h)
{
	const ibBody* const b[2] = {&w->bodies[i0], &w->bodies[i1]};
	ibPredicted* const pr[2] = {&st->pred[i0], &st->pred[i1]};
	const ibPoseTerms* const pt[2] = {&pr[0]->terms, &pr[1]->terms};
	ibRigidState* const out[2] = {&pr[0]->next, &pr[1]->next};
	ibPrecession* const pc[2] = {&pr[0]->pc, &pr[1]->pc};
	if (!ib_integrate_pose2(b, h, pt, out, pc)) {
		predict_body(w, st, i0, h);
		predict_body(w, st, i1, h);
		return;
	}
	for (int l = 0; l < 2; ++l) {
		pr[l]->velocities = false;
		finish_prediction(pr[l], b[l], h, false);
	}
	ib_mat3_from_quat2(pr[0]->pose.q, pr[1]->pose.q, &pr[0]->pose.R, &pr[1]->pose.R);
}

/* The stale predictions of the bodies of the position rows, before the rows read them: pairable
 * bodies two at a time (ib_integrate_pose2), the others one by one. Each prediction depends on its
 * body alone, so the order changes nothing. */
static void predict_stale(ibWorld* w, ibJointStore* st, double h)
{
	int32_t* queue = st->predQueue;
	int32_t n = 0, pending = -1; /* pending: a queued body waiting for a partner of its class */
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (c->type->velocityOnly) continue;
		const int32_t bs[2] = {c->b1, c->b2};
		for (int sd = 0; sd < 2; ++sd) {
			int32_t i = bs[sd];
			ibPredicted* pr = &st->pred[i];
			const ibBody* b = &w->bodies[i];
			if (pr->version == b->velVersion) continue; /* current, or queued below */
			if (!pairable(b)) {
				predict_body(w, st, i, h);
				continue;
			}
			check_terms_epoch(w, pr);
			if (!pr->terms.valid) ib_pose_terms(b, &pr->terms);
			pr->version = b->velVersion; /* queued (predicted before this function returns) */
			if (pending >= 0 && w->bodies[pending].inertiaClass == b->inertiaClass) {
				queue[n++] = pending;
				queue[n++] = i;
				pending = -1;
			} else {
				if (pending >= 0) predict_body(w, st, pending, h);
				pending = i;
			}
		}
	}
	if (pending >= 0) predict_body(w, st, pending, h);
	for (int32_t k = 0; k + 1 < n; k += 2) predict_pair(w, st, queue[k], queue[k + 1], h);
}

/* ib_solver_predicted with the check of the cache inline (called twice per joint and evaluation) */
static inline __attribute__((always_inline)) const ibPose* predicted(ibWorld* w, ibJointStore* st, int32_t i, double h)
{
	if (st->pred[i].version != w->bodies[i].velVersion) predict_body(w, st, i, h);
	return &st->pred[i].pose;
}

const ibPose* ib_solver_predicted(ibWorld* w, ibJointStore* st, int32_t i, double h) { return predicted(w, st, i, h); }

/* a[0..n) == b[0..n) element by element (IEEE ==: -0 == 0, NaN != NaN), two at a time (SSE2 pairs) */
static inline bool same_doubles(const void* a, const void* b, int n)
{
	const char* pa = a;
	const char* pb = b;
	ibV2m eq = {-1, -1};
	int k = 0;
	for (; k + 2 <= n; k += 2) {
		ibV2 x, y;
		memcpy(&x, pa + 8 * k, sizeof x);
		memcpy(&y, pb + 8 * k, sizeof y);
		eq &= (x == y);
	}
	bool same = eq[0] != 0 && eq[1] != 0;
	for (; k < n; ++k) {
		double x, y;
		memcpy(&x, pa + 8 * k, sizeof x);
		memcpy(&y, pb + 8 * k, sizeof y);
		same = same && x == y;
	}
	return same;
}

bool ib_joints_predicted_state(const ibWorld* w, int32_t i, double h, ibRigidState* out, ibMat3* R)
{
	const ibJointStore* st = w->joints;
	if (!st || i >= st->predCapacity || w->solver.integrator != IB_INTEGRATOR_RK4) return false;
	const ibPredicted* pr = &st->pred[i];
	const ibBody* b = &w->bodies[i];
	if (pr->version != b->velVersion || pr->h != h || b->type == IB_BODY_STATIC) return false;
	/* the state it was predicted from (13 doubles), and fext, text (adjacent in both) */
	_Static_assert(sizeof(ibRigidState) == 13 * sizeof(double), "ibRigidState: 13 doubles");
	_Static_assert(offsetof(ibPredicted, text) == offsetof(ibPredicted, fext) + sizeof(ibVec3), "fext, text adjacent");
	_Static_assert(offsetof(ibBody, text) == offsetof(ibBody, fext) + sizeof(ibVec3), "fext, text adjacent");
	if (!same_doubles(&pr->from, &b->st, 13) || !same_doubles(&pr->fext, &b->fext, 6)) return false;
	*out = pr->next;
	*R = pr->pose.R; /* of pose.q == next.q */
	if (!pr->velocities) ib_integrate_velocities(b, h, &pr->pc, out);
	return true;
}

ibVec3 ib_solver_project(const ibBasic* c, ibVec3 r)
{
	ibVec3 p = IB_VEC3_ZERO;
	for (int k = 0; k < c->rows; ++k) p = ibMulAdd(p, ibDot(c->P[k], r), c->P[k]);
	return p;
}

/* Predicted errors of the position rows, the part to remove (ib_solver_excess) over h into st->rhs;
 * returns max |excess| / tolerance. */
double ib_solver_predicted_errors(ibWorld* w, ibJointStore* st, double h)
{
	const ibSolverSettings* s = &w->solver;
	/* the largest squared length per kind: sqrt and the division are monotone (correctly rounded), so
	 * max sqrt(x_i) / tol = sqrt(max x_i) / tol exactly, with one square root per kind */
	double worstPos = 0.0, worstAng = 0.0;
	bool nan = false, anyPos = false, anyAng = false;
	const double ih = 1.0 / h;
	predict_stale(w, st, h);
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (c->type->velocityOnly) {
			st->rhs[k] = IB_VEC3_ZERO;
			continue;
		}
		const ibPose* p1 = predicted(w, st, c->b1, h);
		const ibPose* p2 = predicted(w, st, c->b2, h);
		/* ball_error written out (the chains' only joint: no indirect call) */
		ibVec3 d = ib_solver_excess(c, c->type == &ib_basic_ball ? ibSub(ib_pose_point(p2, c->lb), ib_pose_point(p1, c->la))
		                                                       : c->type->error(c, p1, p2));
		double x = ibDot(d, d);
		nan |= isnan(x);
		if (c->type->rotational) {
			worstAng = x > worstAng ? x : worstAng;
			anyAng = true;
		} else {
			worstPos = x > worstPos ? x : worstPos;
			anyPos = true;
		}
		st->rhs[k] = ibScale(ih, d);
	}
	if (nan) return NAN;
	double rp = anyPos ? sqrt(worstPos) / s->positionTolerance : 0.0;
	double ra = anyAng ? sqrt(worstAng) / s->angularTolerance : 0.0;
	if (isnan(rp) || isnan(ra)) return NAN;
	return ra > rp ? ra : rp;
}

double ib_solver_error_now(ibWorld* w, ibBasic* c)
{
	ib_solver_prepare_points(w, c);
	if (c->type == &ib_basic_ball) return ibLength(ibSub(c->b, c->a)); /* ball_error: the points just prepared */
	ibPose p1 = ib_body_pose(&w->bodies[c->b1]), p2 = ib_body_pose(&w->bodies[c->b2]);
	return ibLength(c->type->error(c, &p1, &p2));
}

void ib_joints_recovery_slack(ibWorld* w, ibJointStore* st)
{
	const double f = w->recoveryFraction;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		c->slack = 0.0;
		if (!(f < 1.0) || c->type->velocityOnly) continue;
		const double e0 = ib_solver_error_now(w, c);
		const double tol = c->type->rotational ? w->solver.angularTolerance : w->solver.positionTolerance;
		if (e0 > IB_RECOVERY_MIN_ERRORS * tol) c->slack = (1.0 - f) * e0;
	}
}
