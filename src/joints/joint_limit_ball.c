/* Swing cone and twist limits of ball joints ([R] §5.4.3 extended): two one-sided angular rows per
 * joint, treated like the hinge/slider limits of joint_limit.c (and the contact joints of §5.3).
 *
 * Frames: a = A's joint axis (localAxisA), r1 = A's reference vector (localRefA, made orthogonal to
 * a), r2 = a x r1; b = B's joint axis (localAxisB), rb = B's reference vector (orthogonal to b).
 * Swing theta = angle(a, b) in [0, pi], azimuth psi = atan2(b.r2, b.r1) of b about a.
 * Twist tau = angle of S rb relative to r1 about a, S the shortest rotation taking b onto a.
 * Rows, each a gap C >= 0 with its gradient G in the relative angular velocity (dC/dt = G.(wB - wA)):
 *   cone:  C = theta_max(psi) - theta, theta_max = (cos^2 psi / t1^2 + sin^2 psi / t2^2)^(-1/2)
 *          (t1 = coneAngle, t2 = coneAngle2; circular: t1), G = theta_max'(psi) grad psi - n with
 *          n = a x b / |a x b| and grad psi = (b x e_psi) / sin theta, e_psi = -sin psi r1 + cos psi r2;
 *   twist: C = s (tau - limit) (s = +1 lower, -1 upper), G = s (a + b) / (1 + a.b).
 * (Both gradients were checked against central differences of C under small rotations.)
 * An angular impulse lambda G acts on B and -lambda G on A (lambda >= 0 accumulated), k = G^T (J_A^-1
 * + J_B^-1) G at t0; the joint correction drives the predicted C' (plus, in a sub-step shorter than
 * ibWorld_Step's step, the part of a large violation at t0 that it may leave: ib_limit_slack) to >= 0 (dL = -C' / (h k)) to within
 * angularTolerance, the velocity correction removes an approaching dC/dt (target e times the approach
 * speed at t0 when it exceeded eps_rc, the contacts' resting threshold) like joint_limit.c, with one
 * difference: the clamp is on the step's total impulse (acc + accVel >= 0), so the velocity
 * correction also takes back the separating velocity that the joint correction gave a row it pushed
 * (a body started outside its cone is put on the boundary without being shot back into the cone). */
#include <math.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"

typedef struct BallFrame {
	ibVec3 a, r1, r2, b, rb;
	ibVec3 cG;         /* the cone row's gradient and gap, where the cone is enabled (cone_calc) */
	double cgap, tau;  /* the twist, where the twist limit is enabled (twist_calc) */
} BallFrame;

static ibVec3 ortho_unit(ibVec3 v, ibVec3 axis)
{
	ibVec3 u = ibSub(v, ibScale(ibDot(v, axis), axis));
	double l = ibLength(u);
	return l > 1e-12 ? ibScale(1.0 / l, u) : ibPerpendicular(axis);
}

static double swing_of(const BallFrame* f) { return atan2(ibLength(ibCross(f->a, f->b)), ibDot(f->a, f->b)); }

/* Twist: rb carried by the shortest rotation b -> a (R = I + [k]x + [k]x^2 / (1 + c), k = b x a). */
static double twist_calc(const BallFrame* f)
{
	ibVec3 k = ibCross(f->b, f->a);
	double c = ibDot(f->b, f->a);
	if (!(c > -1.0 + 1e-12)) c = -1.0 + 1e-12; /* b = -a: twist undefined, any value is consistent */
	ibVec3 v = ibAdd(ibAdd(f->rb, ibCross(k, f->rb)), ibScale(1.0 / (1.0 + c), ibSub(ibScale(ibDot(k, f->rb), k), ibScale(ibDot(k, k), f->rb))));
	return atan2(ibDot(ibCross(f->r1, v), f->a), ibDot(f->r1, v));
}

/* Cone gap C and gradient G (for theta -> 0 the gap is positive and G is never used there). */
static double cone_calc(const ibJoint* j, const BallFrame* f, ibVec3* G)
{
	double theta = swing_of(f);
	double t1 = j->def.coneAngle, t2 = j->def.coneAngle2 > 0.0 ? j->def.coneAngle2 : t1;
	double x = ibDot(f->b, f->r1), y = ibDot(f->b, f->r2);
	double psi = atan2(y, x), cp = cos(psi), sp = sin(psi);
	double q = cp * cp / (t1 * t1) + sp * sp / (t2 * t2);
	double tmax = 1.0 / sqrt(q);
	if (G) {
		ibVec3 axb = ibCross(f->a, f->b);
		double s = ibLength(axb);
		ibVec3 n = s > 1e-12 ? ibScale(1.0 / s, axb) : f->r2;
		*G = ibNeg(n);
		if (t1 != t2 && s > 1e-12) {
			double dmax = -pow(q, -1.5) * sp * cp * (1.0 / (t2 * t2) - 1.0 / (t1 * t1));
			ibVec3 ep = ibAdd(ibScale(-sp, f->r1), ibScale(cp, f->r2));
			*G = ibAdd(*G, ibScale(dmax / s, ibCross(f->b, ep)));
		}
	}
	return tmax - theta;
}

/* the values a frame holds (frame()) */
static double twist_of(const BallFrame* f) { return f->tau; }
static double cone_row(const ibJoint* j, const BallFrame* f, ibVec3* G)
{
	(void)j;
	if (G) *G = f->cG;
	return f->cgap;
}

/* [IMPL] The joint's axes and reference vectors in the bodies' principal frames, and its frame at the current poses,
 * are kept per joint (ibJoint.limLocal, limFrame) while w->massEpoch and w->poseEpoch stay the same; both are
 * dropped at the start of every step (ib_ball_limits_begin). The contact loops' follows, probes and sweeps asked
 * for the same frames thousands of times per step at fixed poses (a ragdoll: a third of its step). */
static void local_vectors(const ibWorld* w, ibJoint* j)
{
	if (j->limLocalEpoch == w->massEpoch + 1u) return;
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	j->limLocal[0] = ib_user_to_principal_vector(A, j->def.localAxisA);
	j->limLocal[1] = ib_user_to_principal_vector(A, j->def.localRefA);
	j->limLocal[2] = ib_user_to_principal_vector(B, j->def.localAxisB);
	j->limLocal[3] = ib_user_to_principal_vector(B, j->def.localRefB);
	j->limLocalEpoch = w->massEpoch + 1u;
}

static BallFrame frame(const ibWorld* w, ibJoint* j, const ibPose* pA, const ibPose* pB)
{
	local_vectors(w, j);
	BallFrame f;
	f.a = ibNormalize(ib_pose_vector(pA, j->limLocal[0]));
	f.r1 = ortho_unit(ib_pose_vector(pA, j->limLocal[1]), f.a);
	f.r2 = ibCross(f.a, f.r1);
	f.b = ibNormalize(ib_pose_vector(pB, j->limLocal[2]));
	f.rb = ortho_unit(ib_pose_vector(pB, j->limLocal[3]), f.b);
	f.cG = IB_VEC3_ZERO;
	f.cgap = f.tau = 0.0;
	if (j->def.enableConeLimit) f.cgap = cone_calc(j, &f, &f.cG);
	if (j->def.enableTwistLimit) f.tau = twist_calc(&f);
	return f;
}

static ibPose pose_of(const ibWorld* w, ibBodyId id);

/* the frame at the current poses */
static BallFrame frame_now(const ibWorld* w, ibJoint* j)
{
	if (j->limFrameEpoch != w->poseEpoch) {
		ibPose pA = pose_of(w, j->def.bodyA), pB = pose_of(w, j->def.bodyB);
		BallFrame f = frame(w, j, &pA, &pB);
		j->limFrame[0] = f.a, j->limFrame[1] = f.r1, j->limFrame[2] = f.r2, j->limFrame[3] = f.b, j->limFrame[4] = f.rb;
		j->limFrame[5] = f.cG;
		j->limFrameS[0] = f.cgap, j->limFrameS[1] = f.tau;
		j->limFrameEpoch = w->poseEpoch;
	}
	return (BallFrame){j->limFrame[0], j->limFrame[1], j->limFrame[2], j->limFrame[3], j->limFrame[4], j->limFrame[5], j->limFrameS[0], j->limFrameS[1]};
}

/* Twist gap for side s and gradient G. */
static double twist_row(const ibJoint* j, const BallFrame* f, int8_t s, ibVec3* G)
{
	double tau = twist_of(f);
	if (G) *G = ibScale(s / fmax(1.0 + ibDot(f->a, f->b), 1e-12), ibAdd(f->a, f->b));
	return s > 0 ? tau - j->def.lowerTwist : j->def.upperTwist - tau;
}

/* Row 0 = cone, 1 = twist. */
static ibLimitRow* row_of(ibJoint* j, int r) { return r == 0 ? &j->coneRow : &j->twistRow; }
static bool row_enabled(const ibJoint* j, int r) { return r == 0 ? j->def.enableConeLimit : j->def.enableTwistLimit; }

static double gap(const ibJoint* j, int r, const BallFrame* f, int8_t side, ibVec3* G)
{
	return r == 0 ? cone_row(j, f, G) : twist_row(j, f, side, G);
}

/* Side that is violated or within tol at f (0 if none); *g = its gap. */
static int8_t side_at(const ibJoint* j, int r, const BallFrame* f, double tol, double* g)
{
	if (r == 0) {
		*g = cone_row(j, f, NULL);
		return *g <= tol ? 1 : 0;
	}
	double tau = twist_of(f), lo = tau - j->def.lowerTwist, up = j->def.upperTwist - tau;
	if (lo <= tol && lo <= up) return *g = lo, 1;
	if (up <= tol) return *g = up, -1;
	return *g = fmin(lo, up), 0;
}

static ibPose pose_of(const ibWorld* w, ibBodyId id) { return ib_body_pose(&w->bodies[id.index1 - 1]); }

static double response(const ibWorld* w, const ibJoint* j, ibVec3 G)
{
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	ibMat3 K = ibMat3_Zero();
	if (ib_is_dynamic(A)) K = ibMat3_Add(K, A->invInertiaW);
	if (ib_is_dynamic(B)) K = ibMat3_Add(K, B->invInertiaW);
	return ibDot(G, ibMat3_MulV(K, G));
}

static double rate(const ibWorld* w, const ibJoint* j, ibVec3 G)
{
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	return ibDot(G, ibSub(B->st.w, A->st.w));
}

static void apply(ibWorld* w, const ibJoint* j, ibVec3 G, double lambda)
{
	ibVec3 p = ibScale(lambda, G);
	ib_body_apply_angular_impulse(&w->bodies[j->def.bodyB.index1 - 1], p);
	ib_body_apply_angular_impulse(&w->bodies[j->def.bodyA.index1 - 1], ibNeg(p));
}

ibResult ib_ball_limit_validate(ibWorld* w, const ibJointDef* d)
{
	if (!d->enableConeLimit && !d->enableTwistLimit) return IB_OK;
	if (d->type != IB_JOINT_BALL) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "cone and twist limits exist only on ball joints");
	if (d->enableConeLimit && !(isfinite(d->coneAngle) && d->coneAngle > 0.0 && d->coneAngle < IB_PI &&
	                            isfinite(d->coneAngle2) && d->coneAngle2 >= 0.0 && d->coneAngle2 < IB_PI))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "cone half-angles must lie in (0, pi) (coneAngle2 = 0: circular)");
	if (d->enableTwistLimit && !(isfinite(d->lowerTwist) && isfinite(d->upperTwist) && d->lowerTwist <= d->upperTwist &&
	                             d->lowerTwist >= -IB_PI && d->upperTwist <= IB_PI))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "twist limits must satisfy -pi <= lowerTwist <= upperTwist <= pi");
	return IB_OK;
}

bool ib_ball_limited(const ibJoint* j) { return j->inUse && (j->def.enableConeLimit || j->def.enableTwistLimit); }

void ib_ball_swing_twist(const ibWorld* w, ibJoint* j, double* swing, double* twist)
{
	BallFrame f = frame_now(w, j);
	if (swing) *swing = swing_of(&f);
	if (twist) *twist = twist_calc(&f); /* (any joint: not only where the twist limit is enabled) */
}

/* Start of the joint correction: reset the rows, record approach speeds at t0 (before any impulse). */
void ib_ball_limits_begin(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	double eps_rc = ib_contact_resting_speed(w), tol = w->solver.angularTolerance;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!ib_ball_limited(j)) continue;
		j->limLocalEpoch = 0; /* (the joint's definition may have changed since the last step) */
		j->limFrameEpoch = 0;
		BallFrame f = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			*row = (ibLimitRow){0};
			if (!row_enabled(j, r)) continue;
			ibVec3 G;
			int8_t s = 1;
			if (r == 1) { /* twist: the side it moves towards */
				ibVec3 g1;
				twist_row(j, &f, 1, &g1);
				s = rate(w, j, g1) < 0.0 ? 1 : -1;
			}
			double c = gap(j, r, &f, s, &G), v = rate(w, j, G);
			if (v < 0.0 && c <= -v * h + tol && -v > eps_rc) row->approach = -v;
			double viol; /* a row violated at t0: its sub-step's slack (ib_limit_slack) */
			row->slackSide = side_at(j, r, &f, 0.0, &viol);
			if (row->slackSide != 0) row->slack = ib_limit_slack(w, -viol, tol);
		}
	}
}

/* One sweep of the rows in the joint correction; true if some row was corrected by more than eps_d. */
/* The joint correction's gap of row r at the predicted frame fp (its side chosen there on first use, plus the
 * sub-step's slack); false if the row is disabled or on no side */
static bool predicted_row_gap(ibJoint* j, int r, const BallFrame* fp, double* g)
{
	ibLimitRow* row = row_of(j, r);
	if (!row_enabled(j, r)) return false;
	if (row->side == 0) {
		row->side = side_at(j, r, fp, 0.0, g);
		if (row->side == 0) return false;
	}
	*g = gap(j, r, fp, row->side, NULL);
	if (row->side == row->slackSide) *g += row->slack;
	return true;
}

bool ib_ball_limits_position_sweep(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (!ib_ball_limited(j)) continue;
		const ibPose* qa = ib_solver_predicted(w, st, j->def.bodyA.index1 - 1, h);
		const ibPose* qb = ib_solver_predicted(w, st, j->def.bodyB.index1 - 1, h);
		BallFrame fp = frame(w, j, qa, qb);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			double g;
			if (!predicted_row_gap(j, r, &fp, &g) || !(g < 0.0 || (g > 0.0 && row->acc > 0.0))) continue;
			BallFrame f0 = frame_now(w, j);
			ibVec3 G;
			gap(j, r, &f0, row->side, &G);
			double k = response(w, j, G);
			if (!(k > 0.0)) continue;
			double dL = -g / (h * k);
			if (row->acc + dL < 0.0) dL = -row->acc;
			if (dL == 0.0) continue;
			row->acc += dL;
			apply(w, j, G, dL);
			if (fabs(g) > w->solver.angularTolerance) moved = true;
		}
	}
	return moved;
}

/* Start of the velocity correction: rows not pushed in the joint correction are active if at
 * (within eps_d of) their limit now. */
void ib_ball_limits_velocity_begin(ibWorld* w)
{
	ibJointStore* st = w->joints;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!ib_ball_limited(j)) continue;
		BallFrame f = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			row->accVel = 0.0;
			if (!row_enabled(j, r)) continue;
			double g;
			if (row->side == 0 || row->acc <= 0.0) row->side = side_at(j, r, &f, w->solver.angularTolerance, &g);
		}
	}
}

bool ib_ball_limits_velocity_sweep(ibWorld* w)
{
	ibJointStore* st = w->joints;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (!ib_ball_limited(j)) continue;
		BallFrame f = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			if (!row_enabled(j, r) || row->side == 0) continue;
			ibVec3 G;
			gap(j, r, &f, row->side, &G);
			double k = response(w, j, G), v = rate(w, j, G);
			double target = j->def.limitRestitution * row->approach;
			if (!(v < target || (v > target && row->acc + row->accVel > 0.0)) || !(k > 0.0)) continue;
			double dL = (target - v) / k;
			if (row->acc + row->accVel + dL < 0.0) dL = -row->acc - row->accVel; /* total impulse >= 0 */
			if (dL == 0.0) continue;
			row->accVel += dL;
			apply(w, j, G, dL);
			if (fabs(v - target) > w->solver.velocityTolerance) moved = true;
		}
	}
	return moved;
}

/* A cone or twist row at its stop for the contact points' joint response (as joint_limit.c's at_stop): its
 * active side in this step (gap 0), else the side whose stop the current poses are within IB_LIMIT_NEAR
 * angular tolerances of (gap: its distance, >= 0 inside the range); G its gradient, v = G.(wB - wA), k its
 * response. False if none. */
typedef struct BallStop {
	ibVec3 G;
	double gap, v, k;
	int8_t side;
} BallStop;

static bool ball_at_stop(const ibWorld* w, ibJoint* j, int r, const BallFrame* f, BallStop* s)
{
	const ibLimitRow* row = row_of(j, r);
	s->gap = 0.0;
	if (!row_enabled(j, r)) return false;
	s->side = row->side != 0 ? row->side : side_at(j, r, f, IB_LIMIT_NEAR * w->solver.angularTolerance, &s->gap);
	if (s->side == 0) return false;
	gap(j, r, f, s->side, &s->G);
	s->k = response(w, j, s->G);
	s->v = rate(w, j, s->G);
	return s->k > 0.0;
}

/* fn on every cone and twist row at its stop (ball_at_stop); true if some call returned true */
typedef bool StopFn(ibWorld* w, ibJoint* j, int r, const BallStop* s, double arg);

static bool each_stop(ibWorld* w, StopFn* fn, double arg)
{
	ibJointStore* st = w->joints;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (!ib_ball_limited(j)) continue;
		BallFrame f = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			BallStop s;
			if (ball_at_stop(w, j, r, &f, &s) && fn(w, j, r, &s, arg)) moved = true;
		}
	}
	return moved;
}

static bool response_row(ibWorld* w, ibJoint* j, int r, const BallStop* s, double tol)
{
	(void)r;
	if (!(fabs(s->v) > tol)) return false;
	apply(w, j, s->G, -s->v / s->k);
	return true;
}

/* The rows at their stop as equalities for the probes of a contact point's response K_eff
 * (contact_joint_response.c): each drives its rate to zero, without the clamp and without touching the
 * accumulated impulses. A leg hanging on a ball joint whose cone holds it passes a contact impulse on as a
 * rigid joint would; without these rows the probes saw a free ball joint (tests/test_contact_joint_response.c,
 * the table on ball-jointed legs). */
bool ib_ball_limits_response_sweep(ibWorld* w, double tol) { return each_stop(w, response_row, tol); }

static bool follow_row(ibWorld* w, ibJoint* j, int r, const BallStop* s, double h)
{
	ibLimitRow* row = row_of(j, r);
	double target = -fmax(s->gap, 0.0) / h;
	if (!(s->v < target || (s->v > target && row->acc > 0.0))) return false;
	double dL = (target - s->v) / s->k;
	if (row->acc + dL < 0.0) dL = -row->acc;
	if (dL == 0.0) return false;
	row->side = s->side;
	row->acc += dL;
	apply(w, j, s->G, dL);
	return fabs(dL) * s->k > w->solver.velocityTolerance;
}

/* The rows that K_eff held, in the joint sweeps after a K_eff impulse of the contact position loop: velocity
 * rows at t0, one-sided on the joint correction's accumulated impulse (acc); an active row to zero rate, a
 * near one to the rate that closes its gap in h (as ib_limits_follow_sweep). */
bool ib_ball_limits_follow_sweep(ibWorld* w, double h) { return each_stop(w, follow_row, h); }

/* The rows of ib_ball_limits_follow_sweep (phase 1, h > 0) and ib_ball_limits_velocity_sweep (phase 2) for the direct
 * follow (joint_follow.c) */
bool ib_ball_limits_follow_rows(ibWorld* w, double h, bool probe, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap)
{
	ibJointStore* st = w->joints;
	const bool one = !probe && st->limitPhase == 1 && h > 0.0, two = !probe && st->limitPhase == 2;
	if (!probe && !one && !two) return true;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!ib_ball_limited(j)) continue;
		int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
		if (!(in[ia] || in[ib])) continue;
		BallFrame f = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			BallStop s;
			double target;
			if (probe) { /* ib_ball_limits_response_sweep: at its stop, an equality to zero rate */
				if (!ball_at_stop(w, j, r, &f, &s)) continue;
				target = 0.0;
			} else if (one) {
				if (!ball_at_stop(w, j, r, &f, &s)) continue;
				target = -fmax(s.gap, 0.0) / h;
			} else {
				if (!row_enabled(j, r) || row->side == 0) continue;
				gap(j, r, &f, row->side, &s.G);
				s.k = response(w, j, s.G);
				s.v = rate(w, j, s.G);
				if (!(s.k > 0.0)) continue;
				target = j->def.limitRestitution * row->approach;
			}
			if (*n >= cap) return false;
			ibFollowRow* o = &out[(*n)++];
			ib_follow_row_set(o, ia, IB_VEC3_ZERO, ibNeg(s.G), ib, IB_VEC3_ZERO, s.G);
			o->rhs = target - s.v;
			if (probe) continue;
			if (one) {
				o->acc = &row->acc;
				o->side = &row->side;
				o->sideValue = s.side;
			} else {
				o->acc = &row->accVel;
				o->base = row->acc;
			}
		}
	}
	return true;
}

/* The rows of ib_ball_limits_position_sweep at the predicted poses, for the direct follow (joint_follow.c; as
 * ib_limits_position_rows) */
bool ib_ball_limits_position_rows(ibWorld* w, double h, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap, double* worst)
{
	ibJointStore* st = w->joints;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!ib_ball_limited(j)) continue;
		int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
		if (!(in[ia] || in[ib])) continue;
		const ibPose* qa = ib_solver_predicted(w, st, ia, h);
		const ibPose* qb = ib_solver_predicted(w, st, ib, h);
		BallFrame fp = frame(w, j, qa, qb);
		BallFrame f0 = frame_now(w, j);
		for (int r = 0; r < 2; ++r) {
			ibLimitRow* row = row_of(j, r);
			double g;
			if (!predicted_row_gap(j, r, &fp, &g)) continue;
			ibVec3 G;
			gap(j, r, &f0, row->side, &G);
			if (!(response(w, j, G) > 0.0)) continue;
			if (g < 0.0 || (g > 0.0 && row->acc > 0.0)) *worst = fmax(*worst, fabs(g) / w->solver.angularTolerance);
			if (*n >= cap) return false;
			ibFollowRow* o = &out[(*n)++];
			ib_follow_row_set(o, ia, IB_VEC3_ZERO, ibNeg(G), ib, IB_VEC3_ZERO, G);
			o->rhs = -g / h;
			o->acc = &row->acc;
		}
	}
	return true;
}

void ib_ball_limits_end(ibWorld* w)
{
	ibJointStore* st = w->joints;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!ib_ball_limited(j)) continue;
		j->coneRow.impulse = j->coneRow.acc + j->coneRow.accVel;
		j->twistRow.impulse = j->twistRow.acc + j->twistRow.accVel;
	}
}
