/* Joint limits (§5.4.3 and beyond, [R]): the angle of a hinge and the position of a slider kept in
 * [lower, upper] by a one-sided basic row, treated like a contact joint (§5.3, contact_joint.c).
 *
 * Coordinate x: hinge angle theta = atan2((rA x rB).n, rA.rB) of B's reference vector relative to
 * A's about A's axis n (as the motor measures it, motor.c; limits within [-pi, pi]), slider position
 * (b - a).n of B's anchor relative to A's along A's rail n. Side s = +1 at the lower, -1 at the
 * upper limit; the row's gap C = s (x - limit) must stay >= 0.
 * Joint correction (at t0): C' from the predicted poses after a free step (as every basic joint), plus
 * in a sub-step shorter than ibWorld_Step's step the part of a large violation at t0 that it may leave (ib_limit_slack);
 * while C' < 0, or C' > 0 and the accumulated impulse L > 0, the impulse dL = -C' / (h k) with
 * L + dL >= 0 (eqs 5.6/5.7) acts as s dL n on B and -s dL n on A (angular for the hinge; linear at
 * B's anchor for the slider), k = n^T K n the response of the row at t0 (K = J_A^-1 + J_B^-1 or
 * K_bb(A) + K_bb(B)). Corrected to eps_d (angularTolerance / positionTolerance), interleaved with
 * sweeps of all basic joints until both hold (the joints' own rows are re-violated by the limit).
 * Velocity correction (at t0+h): a row that was active, or is within eps_d of its limit, removes an
 * approaching relative velocity v = s dx/dt < 0 with its own clamp (>= 0): inactive when separating.
 * Restitution e: if the row approached with a speed above eps_rc (digest §18, resting vs colliding)
 * at t0, the target of the velocity correction is v = e * that speed instead of 0.
 * With the LGS methods the limit rows are iterated after the LGS solve with iterative sweeps of
 * the joints, like contact joints ([R] §5.4.2). */
#include <math.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"

ibResult ib_limit_validate(ibWorld* w, ibJointType type, bool enable, double lower, double upper, double e)
{
	if (!(isfinite(e) && e >= 0.0 && e <= 1.0)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "limit restitution must be in [0, 1]");
	if (!enable) return IB_OK;
	if (type != IB_JOINT_HINGE && type != IB_JOINT_SLIDER)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "limits exist only on hinge and slider joints");
	if (!isfinite(lower) || !isfinite(upper) || !(lower <= upper))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "limits must be finite with lower <= upper");
	if (type == IB_JOINT_HINGE && (lower < -IB_PI || upper > IB_PI))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "hinge angle limits must lie in [-pi, pi]");
	return IB_OK;
}

void ib_limits_count(ibJointStore* st)
{
	st->limitCount = 0;
	for (int32_t i = 0; i < st->jointHigh; ++i)
		if (st->joints[i].inUse && (st->joints[i].def.enableLimit || ib_ball_limited(&st->joints[i]))) st->limitCount++;
}

static bool is_limited(const ibJoint* j) { return j->inUse && j->def.enableLimit; }

/* Coordinate of joint j at the poses pA, pB; *n = world axis, *pb = B's anchor (slider). */
static double coordinate(const ibWorld* w, const ibJoint* j, const ibPose* pA, const ibPose* pB, ibVec3* n, ibVec3* pb)
{
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	*n = ibNormalize(ib_pose_vector(pA, ib_user_to_principal_vector(A, j->def.localAxisA)));
	if (j->def.type == IB_JOINT_HINGE) {
		ibVec3 ra = ib_pose_vector(pA, ib_user_to_principal_vector(A, j->def.localRefA));
		ibVec3 rb = ib_pose_vector(pB, ib_user_to_principal_vector(B, j->def.localRefB));
		*pb = pB->s;
		return atan2(ibDot(ibCross(ra, rb), *n), ibDot(ra, rb));
	}
	ibVec3 a = ib_pose_point(pA, ib_user_to_principal_point(A, j->def.localAnchorA));
	*pb = ib_pose_point(pB, ib_user_to_principal_point(B, j->def.localAnchorB));
	return ibDot(ibSub(*pb, a), *n);
}

/* Relative velocity dx/dt of the coordinate at the current instant and the row's response k. */
static double rate(const ibWorld* w, const ibJoint* j, ibVec3 n, ibVec3 pb, double* k)
{
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	if (j->def.type == IB_JOINT_HINGE) {
		if (k) {
			ibMat3 K = ibMat3_Zero();
			if (ib_is_dynamic(A)) K = ibMat3_Add(K, A->invInertiaW);
			if (ib_is_dynamic(B)) K = ibMat3_Add(K, B->invInertiaW);
			*k = ibDot(n, ibMat3_MulV(K, n));
		}
		return ibDot(ibSub(B->st.w, A->st.w), n);
	}
	if (k) {
		ibMat3 K = ibMat3_Add(ib_solver_point_response(A, ibSub(pb, A->st.s)), ib_solver_point_response(B, ibSub(pb, B->st.s)));
		*k = ibDot(n, ibMat3_MulV(K, n));
	}
	ibVec3 ua = ibAdd(A->st.v, ibCross(A->st.w, ibSub(pb, A->st.s)));
	ibVec3 ub = ibAdd(B->st.v, ibCross(B->st.w, ibSub(pb, B->st.s)));
	return ibDot(ibSub(ub, ua), n);
}

/* The limit impulse lambda of the row on side (+1 lower, -1 upper) along the coordinate's axis n. */
static void apply(ibWorld* w, const ibJoint* j, int8_t side, ibVec3 n, ibVec3 pb, double lambda)
{
	ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	ibVec3 p = ibScale(lambda * side, n);
	if (j->def.type == IB_JOINT_HINGE) {
		ib_body_apply_angular_impulse(B, p);
		ib_body_apply_angular_impulse(A, ibNeg(p));
	} else {
		ib_body_apply_impulse(B, p, pb);
		ib_body_apply_impulse(A, ibNeg(p), pb);
	}
}

static ibPose current_pose(const ibWorld* w, int32_t index1) { return ib_body_pose(&w->bodies[index1 - 1]); }

/* Side whose limit x violates (or is within tol of), 0 if none; *gap = s (x - limit). */
static int8_t side_of(const ibJoint* j, double x, double tol, double* gap)
{
	double lo = x - j->def.lowerLimit, up = j->def.upperLimit - x;
	if (lo <= tol && lo <= up) return *gap = lo, 1;
	if (up <= tol) return *gap = up, -1;
	return *gap = fmin(lo, up), 0;
}

static double tolerance(const ibWorld* w, const ibJoint* j)
{
	return j->def.type == IB_JOINT_HINGE ? w->solver.angularTolerance : w->solver.positionTolerance;
}

/* The row's axis n, B's anchor pb and response k at the current poses (t0, or t0+h in the velocity correction);
 * returns the coordinate's rate dx/dt */
static double rate_now(const ibWorld* w, const ibJoint* j, ibVec3* n, ibVec3* pb, double* k)
{
	ibPose pA = current_pose(w, j->def.bodyA.index1), pB = current_pose(w, j->def.bodyB.index1);
	coordinate(w, j, &pA, &pB, n, pb);
	return rate(w, j, *n, *pb, k);
}

/* The joint correction's row: its side (the active one, else the one the predicted coordinate violates; 0 if
 * none) and its predicted gap, with the sub-step's slack (ib_limit_slack) */
static double predicted_gap(ibWorld* w, const ibJoint* j, double h, int8_t* side)
{
	ibJointStore* st = w->joints;
	ibVec3 n, pb;
	double g, x = coordinate(w, j, ib_solver_predicted(w, st, j->def.bodyA.index1 - 1, h),
	                         ib_solver_predicted(w, st, j->def.bodyB.index1 - 1, h), &n, &pb);
	*side = j->limitSide != 0 ? j->limitSide : side_of(j, x, 0.0, &g);
	if (*side == 0) return 0.0;
	g = *side > 0 ? x - j->def.lowerLimit : j->def.upperLimit - x;
	return *side == j->limitSlackSide ? g + j->limitSlack : g;
}

/* One sweep of the limit rows of the joint correction; true if some row was corrected by more than eps_d. */
bool ib_limits_position_sweep(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0 || st->limitPhase != 1) return false;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (!is_limited(j)) continue;
		double g = predicted_gap(w, j, h, &j->limitSide);
		if (j->limitSide == 0 || !(g < 0.0 || (g > 0.0 && j->limitAcc > 0.0))) continue;
		ibVec3 n, pb; /* response and direction at t0 */
		double k;
		rate_now(w, j, &n, &pb, &k);
		if (!(k > 0.0)) continue;
		double dL = -g / (h * k);
		if (j->limitAcc + dL < 0.0) dL = -j->limitAcc;
		if (dL == 0.0) continue;
		j->limitAcc += dL;
		apply(w, j, j->limitSide, n, pb, dL);
		if (fabs(g) > tolerance(w, j)) moved = true;
	}
	if (ib_ball_limits_position_sweep(w, h)) moved = true; /* cone and twist rows (joint_limit_ball.c) */
	return moved;
}

/* Before the joints' own correction: reset the rows; the approach speed (restitution) is taken from
 * the velocities at t0 before any correction impulse (the joint correction of a fast-turning link
 * changes its angular velocity by O(h^2) inside the step, which the velocity correction undoes). */
void ib_limits_begin(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0) return;
	st->limitPhase = 0;
	ib_ball_limits_begin(w, h);
	double eps_rc = ib_contact_resting_speed(w);
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!is_limited(j)) continue;
		j->limitSide = 0;
		j->limitAcc = j->limitAccVel = j->limitApproach = 0.0;
		ibPose pA = current_pose(w, j->def.bodyA.index1), pB = current_pose(w, j->def.bodyB.index1);
		ibVec3 n, pb;
		double x = coordinate(w, j, &pA, &pB, &n, &pb);
		double v = rate(w, j, n, pb, NULL);
		double lo = j->def.lowerLimit - x, up = x - j->def.upperLimit; /* violations at t0 */
		j->limitSlackSide = lo >= up ? 1 : -1;
		j->limitSlack = ib_limit_slack(w, fmax(lo, up), tolerance(w, j));
		/* speed towards the limit in the direction of motion, if it is reached within this step */
		double vin = fabs(v), gapTo = v < 0.0 ? x - j->def.lowerLimit : j->def.upperLimit - x;
		if (gapTo <= vin * h + tolerance(w, j) && vin > eps_rc) j->limitApproach = vin;
	}
}

/* Limit rows after the joints' own correction: sweeps of limits and joints until both hold. */
void ib_limits_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0) return;
	st->limitPhase = 1;
	int it = 0;
	bool moved = true;
	while (moved && it < w->solver.maxPositionIterations) {
		++it;
		/* hinges and sliders at their stop as blocks first (one by one their rows converge slowly: a 1 kg arm
		 * resting on its hinge's stop needed 144 sweeps per step, now 4) */
		bool block = ib_limits_block_position_sweep(w, h);
		moved = ib_joints_position_sweep(w, h) || block; /* limit rows first, then all basic joints */
	}
	if (moved) w->stats.converged = false;
	w->stats.positionIterations += it;
}

bool ib_limits_velocity_sweep(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0 || st->limitPhase != 2) return false;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (!is_limited(j) || j->limitSide == 0) continue;
		ibVec3 n, pb;
		double k, v = j->limitSide * rate_now(w, j, &n, &pb, &k);
		double target = j->def.limitRestitution * j->limitApproach;
		if (!(v < target || (v > target && j->limitAccVel > 0.0)) || !(k > 0.0)) continue;
		double dL = (target - v) / k;
		if (j->limitAccVel + dL < 0.0) dL = -j->limitAccVel;
		if (dL == 0.0) continue;
		j->limitAccVel += dL;
		apply(w, j, j->limitSide, n, pb, dL);
		if (fabs(v - target) > w->solver.velocityTolerance) moved = true;
	}
	if (ib_ball_limits_velocity_sweep(w)) moved = true;
	return moved;
}

/* A limit row at its stop for the contact points' joint response: its active side in this step (gap 0),
 * else the side whose stop the coordinate at the current poses is within IB_LIMIT_NEAR tolerances of (gap:
 * its distance, >= 0 inside the range); v = side * the coordinate's rate, k its response. False if none. */
typedef struct StopRow {
	ibVec3 n, pb;
	double gap, v, k;
	int8_t side;
} StopRow;

static bool at_stop(const ibWorld* w, const ibJoint* j, StopRow* r)
{
	r->gap = 0.0;
	if (!is_limited(j)) return false;
	ibPose pA = current_pose(w, j->def.bodyA.index1), pB = current_pose(w, j->def.bodyB.index1);
	double x = coordinate(w, j, &pA, &pB, &r->n, &r->pb);
	r->side = j->limitSide != 0 ? j->limitSide : side_of(j, x, IB_LIMIT_NEAR * tolerance(w, j), &r->gap);
	if (r->side == 0) return false;
	r->v = r->side * rate(w, j, r->n, r->pb, &r->k);
	return r->k > 0.0;
}

/* The limit rows at their stop (active in this step, or within IB_LIMIT_NEAR tolerances of it) as
 * equalities for the probes of a contact point's response K_eff (contact_joint_response.c): each drives
 * its coordinate's rate to zero, without the one-sided clamp and without touching the accumulated
 * impulses (the probes' velocities are restored). A hinge pressed against its stop passes a contact
 * impulse on as a rigid joint would; without these rows the probes measured the free hinge's response,
 * the points kept the free K, and a 1000 kg table on four hinged 1 kg legs at their stops collapsed
 * (tests/test_contact_joint_response.c). */
bool ib_limits_response_sweep(ibWorld* w, double tol)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0 || st->limitPhase == 0) return false;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		StopRow r;
		if (!at_stop(w, j, &r) || !(fabs(r.v) > tol)) continue;
		apply(w, j, r.side, r.n, r.pb, -r.v / r.k);
		moved = true;
	}
	if (ib_ball_limits_response_sweep(w, tol)) moved = true; /* cone and twist rows (joint_limit_ball.c) */
	return moved;
}

/* The joint sweeps that follow a K_eff impulse in the contact position loop (ib_contact_follow_checked,
 * phase 1): the limit rows that K_eff held (above) as velocity rows at t0, one-sided on the accumulated
 * impulse of the joint correction (limitAcc, which the position rows share), an active row to zero rate,
 * a near one to the rate that closes its gap in h (it becomes active when it pushes). Without them the
 * velocity sweeps passed a rigid table's impulse to a free hinge; with them but without the accumulator
 * their pushes could not be taken back, and the 100 kg table jumped by 7 mm. */
bool ib_limits_follow_sweep(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0 || st->limitPhase != 1 || !(h > 0.0)) return false;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		StopRow r;
		if (!at_stop(w, j, &r)) continue;
		double target = -fmax(r.gap, 0.0) / h; /* a near row may approach its stop by its gap in this step */
		if (!(r.v < target || (r.v > target && j->limitAcc > 0.0))) continue;
		double dL = (target - r.v) / r.k;
		if (j->limitAcc + dL < 0.0) dL = -j->limitAcc;
		if (dL == 0.0) continue;
		j->limitSide = r.side;
		j->limitAcc += dL;
		apply(w, j, r.side, r.n, r.pb, dL);
		if (fabs(dL) * r.k > w->solver.velocityTolerance) moved = true;
	}
	if (ib_ball_limits_follow_sweep(w, h)) moved = true;
	return moved;
}

/* The Jacobian of j's limit row on side (+1 lower, -1 upper) along the coordinate's axis n (B's anchor pb) */
static void limit_row(const ibWorld* w, const ibJoint* j, int8_t side, ibVec3 n, ibVec3 pb, ibFollowRow* o)
{
	int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
	ibVec3 sn = ibScale((double)side, n);
	if (j->def.type == IB_JOINT_HINGE)
		ib_follow_row_set(o, ia, IB_VEC3_ZERO, ibNeg(sn), ib, IB_VEC3_ZERO, sn);
	else
		ib_follow_row_set(o, ia, ibNeg(sn), ibNeg(ibCross(ibSub(pb, w->bodies[ia].st.s), sn)), ib, sn, ibCross(ibSub(pb, w->bodies[ib].st.s), sn));
}

/* The rows of ib_limits_follow_sweep (phase 1, h > 0) and ib_limits_velocity_sweep (phase 2) with their targets and
 * accumulators, for the direct follow (joint_follow.c) */
bool ib_limits_follow_rows(ibWorld* w, double h, bool probe, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap)
{
	ibJointStore* st = w->joints;
	if (probe) { /* the rows of ib_limits_response_sweep: at their stops, equalities to zero rate */
		if (st->limitCount == 0 || st->limitPhase == 0) return true;
		for (int32_t i = 0; i < st->jointHigh; ++i) {
			ibJoint* j = &st->joints[i];
			int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
			StopRow r;
			if (!is_limited(j) || !(in[ia] || in[ib]) || !at_stop(w, j, &r)) continue;
			if (*n >= cap) return false;
			ibFollowRow* o = &out[(*n)++];
			limit_row(w, j, r.side, r.n, r.pb, o);
			o->rhs = -r.v;
		}
		return ib_ball_limits_follow_rows(w, h, true, in, out, n, cap);
	}
	const bool one = st->limitPhase == 1 && h > 0.0, two = st->limitPhase == 2;
	if (st->limitCount > 0 && (one || two))
		for (int32_t i = 0; i < st->jointHigh; ++i) {
			ibJoint* j = &st->joints[i];
			int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
			if (!is_limited(j) || !(in[ia] || in[ib])) continue;
			StopRow r;
			double target;
			if (one) {
				if (!at_stop(w, j, &r)) continue;
				target = -fmax(r.gap, 0.0) / h;
			} else {
				if (j->limitSide == 0) continue;
				r.side = j->limitSide;
				r.v = r.side * rate_now(w, j, &r.n, &r.pb, &r.k);
				if (!(r.k > 0.0)) continue;
				target = j->def.limitRestitution * j->limitApproach;
			}
			if (*n >= cap) return false;
			ibFollowRow* o = &out[(*n)++];
			limit_row(w, j, r.side, r.n, r.pb, o);
			o->rhs = target - r.v;
			o->acc = one ? &j->limitAcc : &j->limitAccVel;
			if (one) {
				o->side = &j->limitSide;
				o->sideValue = r.side;
			}
		}
	return ib_ball_limits_follow_rows(w, h, false, in, out, n, cap);
}

/* The rows of ib_limits_position_sweep (the joint correction's phase, h > 0) at the predicted poses, for the direct
 * follow of the contact position loop (joint_follow.c): rhs = -gap / h, the direction and response at t0; *worst is
 * raised to the largest error the sweep would correct (relative to its tolerance) */
bool ib_limits_position_rows(ibWorld* w, double h, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap, double* worst)
{
	ibJointStore* st = w->joints;
	if (st->limitCount == 0 || st->limitPhase != 1 || !(h > 0.0)) return true;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		int32_t ia = j->def.bodyA.index1 - 1, ib = j->def.bodyB.index1 - 1;
		if (!is_limited(j) || !(in[ia] || in[ib])) continue;
		double g = predicted_gap(w, j, h, &j->limitSide);
		if (j->limitSide == 0) continue;
		ibVec3 n0, pb;
		double k;
		rate_now(w, j, &n0, &pb, &k);
		if (!(k > 0.0)) continue;
		if (g < 0.0 || (g > 0.0 && j->limitAcc > 0.0)) *worst = fmax(*worst, fabs(g) / tolerance(w, j));
		if (*n >= cap) return false;
		ibFollowRow* o = &out[(*n)++];
		limit_row(w, j, j->limitSide, n0, pb, o);
		o->rhs = -g / h;
		o->acc = &j->limitAcc;
	}
	return ib_ball_limits_position_rows(w, h, in, out, n, cap, worst);
}

/* [IMPL] The follow sweeps above take a hinge's or a slider's rows one at a time: its basic joints' rows
 * (ball point and axis rows of a hinge) and its limit row at the stop. On a light body hung from a heavy
 * one they are strongly coupled (a 1 kg leg on a 1000 kg table: the point row turns the leg about the limit's
 * axis), and the sweeps converged at 0.97 per sweep: every follow of scenes/hinged_table.xml ran its 100
 * sweeps (22 000 joint sweeps per step, 22 ms). Here every such joint at its stop is solved as one block:
 * all its rows at once (a small dense system A lambda = b, A = J M^-1 J^T), the limit row one-sided on the
 * joint correction's accumulated impulse like the sweep's (taken out and its impulse held at -limitAcc if it
 * would pull), the same targets (the basic rows' relative velocity to zero, the limit row to the rate that
 * closes its gap in h). */
enum { BLOCK_ROWS = 9 };


/* Solves A x = b for the rows in use[] (others: x = 0) by Cholesky; false if A is not positive definite. */
static bool block_solve(int n, double A[BLOCK_ROWS][BLOCK_ROWS], const double* b, const bool* use, double* x)
{
	double L[BLOCK_ROWS][BLOCK_ROWS];
	int idx[BLOCK_ROWS], m = 0;
	for (int i = 0; i < n; ++i) {
		x[i] = 0.0;
		if (use[i]) idx[m++] = i;
	}
	for (int i = 0; i < m; ++i)
		for (int k = 0; k <= i; ++k) {
			double s = A[idx[i]][idx[k]];
			for (int z = 0; z < k; ++z) s -= L[i][z] * L[k][z];
			if (i == k) {
				if (!(s > 1e-12 * A[idx[i]][idx[i]])) return false;
				L[i][i] = sqrt(s);
			} else {
				L[i][k] = s / L[k][k];
			}
		}
	double y[BLOCK_ROWS];
	for (int i = 0; i < m; ++i) {
		double s = b[idx[i]];
		for (int z = 0; z < i; ++z) s -= L[i][z] * y[z];
		y[i] = s / L[i][i];
	}
	for (int i = m - 1; i >= 0; --i) {
		double s = y[i];
		for (int z = i + 1; z < m; ++z) s -= L[z][i] * x[idx[z]];
		x[idx[i]] = s / L[i][i];
	}
	return true;
}

/* tol: the rows' velocity tolerance. BLOCK_POSITION: the joint correction's rows instead (ib_limits_position_sweep and
 * ib_joints_position_sweep): the predicted errors over h, the same matrix at t0 (a Newton step per sweep).
 * BLOCK_PROBE: the probes of K_eff (ib_limits_block_response_sweep) */
enum { BLOCK_FOLLOW, BLOCK_POSITION, BLOCK_PROBE };

static bool block_follow(ibWorld* w, ibJoint* j, double h, double tol, int mode)
{
	const bool position = mode == BLOCK_POSITION, probe = mode == BLOCK_PROBE;
	ibJointStore* st = w->joints;
	StopRow r;
	/* the limit row where the sweeps have it, with their target and accumulator: in the joint correction's
	 * follow sweeps (phase 1, ib_limits_follow_sweep) and in the velocity correction (phase 2,
	 * ib_limits_velocity_sweep); elsewhere the basic rows alone */
	bool limited = false;
	double target = 0.0, *acc = NULL, gap = 0.0, none = 0.0;
	if (probe) {
		/* as ib_limits_response_sweep: the limit row at its stop an equality (to zero rate), no accumulator */
		if (!is_limited(j) || ib_ball_limited(j) || st->limitPhase == 0 || !at_stop(w, j, &r)) return false;
		limited = true;
		acc = &none;
	} else if (position) {
		/* (a cap on the correction impulses is the row sweeps' clamp: no block then) */
		if (!is_limited(j) || ib_ball_limited(j) || !(h > 0.0) || st->limitPhase != 1 || w->solver.maxCorrectionImpulse > 0.0) return false;
		gap = predicted_gap(w, j, h, &r.side);
		if (r.side == 0) return false;
		rate_now(w, j, &r.n, &r.pb, &r.k);
		r.v = gap / h; /* the predicted gap as the rate that would close it in h */
		limited = r.k > 0.0;
		acc = &j->limitAcc;
	} else if (is_limited(j) && !ib_ball_limited(j)) {
		if (h > 0.0 && st->limitPhase == 1 && at_stop(w, j, &r)) {
			limited = true;
			target = -fmax(r.gap, 0.0) / h;
			acc = &j->limitAcc;
		} else if (st->limitPhase == 2 && j->limitSide != 0) {
			r.side = j->limitSide;
			r.v = r.side * rate_now(w, j, &r.n, &r.pb, &r.k);
			limited = r.k > 0.0;
			target = j->def.limitRestitution * j->limitApproach;
			acc = &j->limitAccVel;
		}
	}
	/* [IMPL] only a joint with its limit row in play: without it the row sweeps converge fast enough (a fixed
	 * joint's ball and lock rows: the table on fixed legs, heavy_table.xml, took 0.58 instead of 0.15 ms per
	 * step with blocks for every joint) */
	if (!limited) return false;
	ibFollowRow rows[BLOCK_ROWS];
	double b[BLOCK_ROWS], A[BLOCK_ROWS][BLOCK_ROWS], x[BLOCK_ROWS];
	bool use[BLOCK_ROWS];
	int n = 0;
	for (int q = 0; q < j->basicCount; ++q) {
		ibBasic* c = &st->basics[j->basic[q]];
		if (position && c->type->velocityOnly) continue;
		ib_solver_prepare(w, c);
		ibVec3 du = position ? ibScale(1.0 / h, ib_solver_excess(c, c->type->error(c, ib_solver_predicted(w, st, c->b1, h),
		                                                                           ib_solver_predicted(w, st, c->b2, h))))
		                     : ib_solver_velocity_error(w, c);
		for (int k = 0; k < c->rows; ++k) {
			if (n == BLOCK_ROWS - 1) return false;
			ib_follow_basic_row(w, c, k, &rows[n]);
			b[n] = ibDot(c->P[k], du);
			use[n] = true;
			++n;
		}
	}
	const int lim = n; /* the limit row, last */
	limit_row(w, j, r.side, r.n, r.pb, &rows[n]);
	b[n] = target - r.v;
	use[n] = probe || r.v < target || (r.v > target && *acc > 0.0);
	++n;
	for (int i = 0; i < n; ++i)
		for (int k = 0; k <= i; ++k) A[i][k] = A[k][i] = ib_follow_entry(w, &rows[i], &rows[k]);
	/* the limit row's active set: active (an equality) unless its total impulse would pull; then held at zero
	 * total (-acc) with the others solved around it, unless they then make it approach its stop */
	bool solved = false;
	for (int pass = 0; pass < 4 && !solved; ++pass) {
		double hold = !use[lim] && *acc > 0.0 ? -*acc : 0.0, bb[BLOCK_ROWS];
		for (int i = 0; i < n; ++i) bb[i] = b[i] - A[i][lim] * hold;
		if (!block_solve(n, A, bb, use, x)) return false;
		solved = true;
		if (probe) break; /* two-sided */
		if (use[lim] && *acc + x[lim] < 0.0) { /* it would pull */
			use[lim] = false;
			solved = false;
		} else if (!use[lim]) {
			x[lim] = hold;
			double after = r.v;
			for (int k = 0; k < n; ++k) after += A[lim][k] * x[k];
			if (after < target - tol) { /* the others' solution drives it into its stop */
				use[lim] = true;
				solved = false;
			}
		}
	}
	if (!solved) return false; /* no consistent active set: the row sweeps go on alone */
	bool moved = false;
	n = 0;
	for (int q = 0; q < j->basicCount; ++q) {
		ibBasic* c = &st->basics[j->basic[q]];
		if (position && c->type->velocityOnly) continue;
		ibVec3 p = IB_VEC3_ZERO;
		/* moved: the row's error (position: its predicted error; velocity: the change) above its tolerance */
		double rowTol = position ? (c->type->rotational ? w->solver.angularTolerance : w->solver.positionTolerance) / h : tol;
		for (int k = 0; k < c->rows; ++k, ++n) {
			p = ibMulAdd(p, x[n], c->P[k]);
			if ((position ? fabs(b[n]) : fabs(x[n]) * A[n][n]) > rowTol) moved = true;
		}
		if (ibLengthSq(p) > 0.0) {
			ib_solver_apply(w, c, p);
			if (position) c->warmPos = c->accPos = ibAdd(c->accPos, p); /* as ib_joints_position_sweep keeps them */
		}
	}
	if (probe) {
		if (x[lim] != 0.0) apply(w, j, r.side, r.n, r.pb, x[lim]);
		if (fabs(x[lim]) * r.k > tol) moved = true;
	} else if (x[lim] != 0.0) {
		j->limitSide = r.side;
		*acc += x[lim];
		apply(w, j, r.side, r.n, r.pb, x[lim]);
		if (position ? fabs(gap) > tolerance(w, j) && (gap < 0.0 || *acc > 0.0) : fabs(x[lim]) * r.k > tol) moved = true;
	}
	return moved;
}

static bool block_sweep(ibWorld* w, double h, int mode, double tol)
{
	ibJointStore* st = w->joints;
	if (!st || st->basicCount == 0 || st->limitCount == 0) return false;
	bool moved = false;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (ib_sweep_skips_joint(st, j)) continue;
		if (j->inUse && j->basicCount > 0 && block_follow(w, j, h, tol, mode)) moved = true;
	}
	return moved;
}

bool ib_limits_block_follow_sweep(ibWorld* w, double h) { return block_sweep(w, h, BLOCK_FOLLOW, w->solver.velocityTolerance); }

bool ib_limits_block_position_sweep(ibWorld* w, double h) { return block_sweep(w, h, BLOCK_POSITION, w->solver.velocityTolerance); }

bool ib_limits_block_response_sweep(ibWorld* w, double tol) { return block_sweep(w, 0.0, BLOCK_PROBE, tol); }

/* The impulses the limit rows applied in the step (ibJoint_GetLimitImpulse, ibJoint_GetBallLimitImpulses): the
 * joint correction's and the velocity correction's, including those of the contact loops' joint sweeps, which
 * run after the joints' own velocity correction (step.c calls this after the contacts' velocity loop) */
void ib_limits_report(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0) return;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (is_limited(j)) j->limitImpulse = j->limitAcc + j->limitAccVel;
	}
	ib_ball_limits_end(w);
}

void ib_limits_velocity_correction(ibWorld* w, double h)
{
	(void)h;
	ibJointStore* st = w->joints;
	if (!st || st->limitCount == 0) return;
	st->limitPhase = 2;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!is_limited(j)) continue;
		j->limitAccVel = 0.0;
		if (j->limitSide == 0 || j->limitAcc <= 0.0) { /* not pushed in the joint correction: at the limit now? */
			ibPose pA = current_pose(w, j->def.bodyA.index1), pB = current_pose(w, j->def.bodyB.index1);
			ibVec3 n, pb;
			double g;
			j->limitSide = side_of(j, coordinate(w, j, &pA, &pB, &n, &pb), tolerance(w, j), &g);
		}
	}
	ib_ball_limits_velocity_begin(w);
	int it = 0;
	bool moved = true;
	while (moved && it < w->solver.maxVelocityIterations) {
		++it;
		/* hinges and sliders with their limit row active as blocks first (ib_limits_block_follow_sweep): one by
		 * one their rows converge slowly (a 1 kg arm resting on its hinge's stop: 227 sweeps per step) */
		bool block = ib_limits_block_follow_sweep(w, 0.0);
		moved = ib_joints_velocity_sweep(w) || block; /* limit rows first, then all basic joints */
	}
	if (moved) w->stats.converged = false;
	w->stats.velocityIterations += it; /* the step's impulses are summed after the contacts' loop (ib_limits_report) */
}
