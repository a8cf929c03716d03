/* Resting contacts as temporary contact joints (§5.3, digest §18; jointed systems §5.4.2).
 *
 * Joint correction (at t0, after the joints' own correction): per point the predicted gap
 * g = (a' - b')·n' after a free step (a', b', n' carried with the predicted poses of their bodies);
 * an impulse p_n = -g / (h n^T K n) n (eq. 5.11, K and n at t0) pushes while g < -eps_d and pulls
 * back while g > eps_d only as long as the accumulated impulse stays >= 0 (eqs 5.6/5.7). Static
 * friction corrects the predicted tangential offset d_t of the points (§5.3.3) as long as the
 * accumulated friction impulse stays in the cone (eq. 5.10), otherwise the point slides with the
 * dynamic-friction impulse of §5.2.5. With joints, every contact sweep is followed by one sweep of
 * the joint correction, until both hold (the iterative method of §5.4.2; after an LGS joint
 * correction the contact joints are iterated this way as well, [R]).
 * Velocity correction (at t0+h): the tangential relative velocity of static-friction points is
 * removed (§5.3.3), and — beyond the thesis, [R] — an approaching normal velocity as well (and a
 * separating one while the step's total normal impulse stays >= 0, velocity_normal_impulse) with
 * the dynamic friction of that impulse; without it, sub-tolerance
 * rocking (|omega r h| < eps_d) survives every step and a resting body creeps. Interleaved with joint
 * velocity sweeps like the joint correction. */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"

/* Points, normal and response of a contact joint at the current poses of its bodies. [IMPL] With keepK
 * (a position loop at the poses at which the set was built, in a world without joints, whose collision
 * phase may have left K_eff in K, and on no frozen body), the points, normal and K of the build (the same to
 * rounding: the build's material points and normal carried with the same poses) are kept: on pyramid20 the
 * position loop's carry cost ~5 % of a step's instructions, most of it K, and the points and normal ~3 %. */
static void carry_points(ibWorld* w, ibContactRow* c, bool keepK, bool lazyK)
{
	const ibBody* x = &w->bodies[c->b1];
	const ibBody* y = &w->bodies[c->b2];
	const bool atBuild = ib_contact_at_built_poses(w, w->contactStore, c);
	const bool built = keepK && !c->kj && !c->frozen && atBuild;
	/* the points and normal of the build where they were not carried elsewhere since (c->carried; K, the loops'
	 * step matrix, may be of the other poses: the errors are measured at the points), and only material points
	 * with a normal that turns with a body: round points and normals between cores are found anew from their
	 * shapes, which the build's manifold point and normal need not be to rounding */
	const bool keepPoints = built && !c->carried && !(c->rad1 > 0.0) && !(c->rad2 > 0.0) && c->nBody < 3;
	c->carried = !atBuild;
	if (!keepPoints) {
		c->n = ib_contact_normal_at(c, x->st.s, &x->R, y->st.s, &y->R);
		ib_contact_points_at(c, x->st.s, &x->R, y->st.s, &y->R, c->n, &c->a, &c->b);
	}
	if (!built) { /* K at the points; with lazyK formed where first read */
		c->kinv = IB_KINV_STALE;
		if (!lazyK) ib_contact_need_K(w, c);
		return;
	}
	c->kinv = 0;
	double nKn = ibDot(c->n, ibMat3_MulV(c->K, c->n));
	if (nKn > 0.0) c->nKn = nKn;
}

/* The static-friction offset d_t (from the anchors, tangential to n') of a sticking point at the
 * predicted poses, before the allowance allowT */
static ibVec3 sticking_offset(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h)
{
	ibVec3 n;
	ibVec3 d = ib_contact_predicted_anchors(w, cs, c, h, &n);
	return ib_contact_tangential(d, n);
}

/* correct_point for a point with the joint system's response K_eff (contact_joint_response.c): only
 * errors above eps_d are corrected (a sub-tolerance correction, scaled up by the joints' response,
 * opened the joints beyond theirs and the two loops kept each other going), and a sticking point's
 * normal and tangential errors are removed by one 3x3 solve h K_eff p = d_t - g n while p stays in
 * the cone: K_eff couples the normal and tangential directions strongly, and the separate 1D
 * corrections along n and along d_t grew the error (a 1000 kg table on four legs rocked apart). */
static double correct_point_jointed_impulse(ibWorld* w, ibContactRow* c, double h, double g, ibVec3 dt, double lt, bool stick, bool push,
                                            double err);

static double correct_point_jointed(ibWorld* w, ibContactStore* cs, ibContactRow* c, double h, double eps, double g, bool* moved)
{
	bool stick = c->sticking && c->mus > 0.0;
	ibVec3 dt = IB_VEC3_ZERO;
	if (stick) { /* shortened by the allowance */
		dt = sticking_offset(w, cs, c, h);
		double l = ibLength(dt);
		dt = l > c->allowT ? ibScale((l - c->allowT) / l, dt) : IB_VEC3_ZERO;
	}
	double lt = ibLength(dt);
	bool push = g < 0.0 || (g > 0.0 && c->accN > 0.0);
	double err = ib_fmax(push ? fabs(g) : 0.0, lt);
	if (err <= eps) return 0.0;
	*moved = true;
	ibContactAcc before = ib_contact_acc(w, c);
	double r = correct_point_jointed_impulse(w, c, h, g, dt, lt, stick, push, err);
	ib_contact_follow_checked(w, c, &before, h, true);
	return r;
}

static double correct_point_jointed_impulse(ibWorld* w, ibContactRow* c, double h, double g, ibVec3 dt, double lt, bool stick, bool push, double err)
{
	if (stick) {
		if (c->kinv == 0) c->kinv = ibMat3_InverseSym(c->K, &c->Kinv) ? 1 : 2;
		if (c->kinv == 1) {
			ibVec3 p = ibScale(1.0 / h, ibMat3_MulV(c->Kinv, ibMulAdd(dt, -g, c->n)));
			double dN = ibDot(p, c->n);
			ibVec3 cand = ibAdd(c->accT, ib_contact_tangential(p, c->n));
			if (c->accN + dN >= 0.0 && ibLength(cand) <= c->mus * (c->accN + dN)) {
				ib_contact_apply(w, c, ibMulAdd(ibSub(cand, c->accT), dN, c->n));
				c->accN += dN;
				c->accT = cand;
				return err;
			}
		}
	}
	double dN = 0.0;
	/* a sliding point's friction at the velocities the normal impulse leaves once the joints follow it
	 * (ib_contact_friction_velocity_followed): both are applied together below */
	bool followed = !stick && (c->mus > 0.0 || c->mud > 0.0);
	ibVec3 u = followed ? ib_contact_rel_velocity(w, c) : IB_VEC3_ZERO;
	if (push) { /* eq. 5.11 with K_eff */
		dN = -g / (h * c->nKn);
		if (c->accN + dN < 0.0) dN = -c->accN;
		c->accN += dN;
		if (!followed) ib_contact_apply(w, c, ibScale(dN, c->n));
	}
	if (stick && lt > 0.0) { /* along d_t, held on the cone's boundary */
		ibVec3 t = ibScale(1.0 / lt, dt);
		double tKt = ibDot(t, ibMat3_MulV(c->K, t));
		if (tKt > 0.0) {
			ibVec3 cand = ibMulAdd(c->accT, lt / (h * tKt), t);
			double lim = c->mus * c->accN, lc = ibLength(cand);
			if (lc > lim) cand = lim > 0.0 ? ibScale(lim / lc, cand) : IB_VEC3_ZERO;
			ib_contact_apply(w, c, ibSub(cand, c->accT));
			c->accT = cand;
		}
	} else if (followed) {
		ib_contact_friction_velocity_followed(w, c, dN, w->solver.velocityTolerance, u);
	}
	return err;
}

enum { IB_CONTACT_LINEAR_ANCHOR = 10 };

/* One correction of one contact joint; returns the remaining error measure (m) before the impulse
 * (0 if within tolerance) and sets *moved if an impulse was applied. */
static double correct_point(ibWorld* w, ibContactStore* cs, ibContactRow* c, double h, double eps, bool* moved)
{
	ibVec3 a, b, n, d = IB_VEC3_ZERO;
	bool fric = c->mus > 0.0 || c->mud > 0.0, stick = fric && c->sticking && !c->kj;
	if (stick)
		d = ib_contact_predicted_both(w, cs, c, h, &a, &b, &n);
	else
		ib_contact_predicted_points(w, cs, c, h, &a, &b, &n);
	double g = ibDot(ibSub(a, b), n);
	c->gap = g;
	g += c->allowN; /* an old penetration is removed at the recovery speed only */
	if (c->kj) return correct_point_jointed(w, cs, c, h, eps, g, moved);
	double err = 0.0, dN = 0.0;
	bool defer = ib_contact_defers_normal(c);
	ibVec3 pN = IB_VEC3_ZERO;
	/* every point is corrected on every sweep (also below eps_d, so that no sub-tolerance bias of the
	 * sweep order survives the step); the loop ends when no correction exceeded eps_d */
	if (g < 0.0 || (g > 0.0 && c->accN > 0.0)) {
		dN = -g / (h * c->nKn); /* eq. 5.11 */
		if (c->accN + dN < 0.0) dN = -c->accN;
		if (dN != 0.0) {
			c->accN += dN;
			pN = ibScale(dN, c->n);
			if (!defer && !stick) ib_contact_apply(w, c, pN);
			if (fabs(g) > eps) {
				*moved = true;
				err = fabs(g);
			}
		}
	}
	if (!fric) return err;
	if (c->sticking) { /* static friction: tangential position correction (§5.3.3), to the anchors */
		/* [IMPL] the anchors' offset after this sweep's normal impulse pN (applied below, with the friction):
		 * for a small correction (|g| <= IB_CONTACT_LINEAR_ANCHOR eps_d) from the poses measured before it,
		 * moved by the impulse's first-order effect -h K pN (K at t0; the anchors are the contact points'
		 * material points up to their drift since they stuck). The neglected turn is of the order of g^2 / r
		 * (2e-8 m at g = 10 eps_d = 1e-4 m, r = 0.5 m). Measuring the offset again after pN took a second
		 * prediction of both bodies per point (~1/3 of a position sweep's instructions on pyramid20). A larger
		 * correction (a landing) is measured again: always linear, a tilted cube landing at 5 m/s sank
		 * 4.8e-4 m instead of 1e-5 (test_contact_rain). */
		if (dN != 0.0 && !(fabs(g) <= IB_CONTACT_LINEAR_ANCHOR * eps)) {
			ib_contact_apply(w, c, pN);
			pN = IB_VEC3_ZERO;
			d = ib_contact_predicted_anchors(w, cs, c, h, &n);
		}
		ibVec3 dt = ib_contact_tangential(ibMulAdd(d, -h, ibMat3_MulV(c->K, pN)), n);
		double l = ibLength(dt), tKt = 0.0;
		ibVec3 t = IB_VEC3_ZERO;
		if (l > c->allowT) {
			t = ibScale(1.0 / l, dt);
			tKt = ibDot(t, ibMat3_MulV(c->K, t));
		}
		if (!(tKt > 0.0)) {
			if (ibDot(pN, pN) > 0.0) ib_contact_apply(w, c, pN);
			return err;
		}
		l -= c->allowT;
		double mag = l / (h * tKt);
		ibVec3 cand = ibMulAdd(c->accT, mag, t);
		double lim = c->mus * c->accN, lc = ibLength(cand);
		if (lc > lim) { /* [R] outside the cone (eq. 5.10): hold at its boundary; the load of the point may
		                 * still grow in later sweeps. A point still at the boundary after the step slides
		                 * from the next step on (its tangential velocity is then not zero). */
			cand = ibScale(lim / lc, cand);
			l = 0.0;
			/* [IMPL] held there for IB_CONTACT_CONE_SWEEPS sweeps in a row, it slides from now on: its
			 * anchor is given up (dynamic friction in the later sweeps; a fresh anchor in the next step).
			 * A body on such a point and a sticking one cycled between the two: the held friction's
			 * direction followed the anchor offset, which the other point's corrections turned, and the
			 * loop stalled at 1-4e-6 m in every step (a dumbbell rocking on its sphere and its bar's
			 * corner: 98 of 200 steps unconverged, 8 now; test_contact_rolling) */
			if (++c->coneHits >= IB_CONTACT_CONE_SWEEPS) c->sticking = false;
		} else {
			c->coneHits = 0;
		}
		ib_contact_apply2(w, c, pN, ibSub(cand, c->accT));
		c->accT = cand;
		if (l <= eps) return err;
		*moved = true;
		return ib_fmax(err, l);
	}
	/* dynamic friction from this iteration's normal impulse (§5.2.5 at t0) */
	if (defer ? ib_contact_friction_velocity_pending(w, c, dN, w->solver.velocityTolerance, ibScale(dN, c->n), NULL)
	          : ib_contact_friction_velocity(w, c, dN, w->solver.velocityTolerance))
		*moved = true;
	return err;
}

/* Friction part of a warm-start impulse: a sticking point keeps last step's impulse inside the cone;
 * a sliding one gets mu_d times the warm normal impulse against its sliding velocity, so that its
 * friction stays mu_d times the accumulated normal impulse (the sweeps add mu_d dN, contact_collide.c). */
static ibVec3 warm_friction(const ibWorld* w, ibContactRow* c, ibVec3 prev, double scale, double accN, double dN)
{
	if (!c->sticking) { /* as one iteration of eq. 5.8: at most the impulse that stops the sliding */
		ib_contact_need_K(w, c);
		ibVec3 ut = ib_contact_tangential(ib_contact_rel_velocity(w, c), c->n);
		double s = ibLength(ut);
		if (!(s > 0.0) || dN == 0.0) return IB_VEC3_ZERO;
		ibVec3 t = ibScale(1.0 / s, ut);
		double tKt = ibDot(t, ibMat3_MulV(c->K, t)), mag = c->mud * dN;
		if (tKt > 0.0 && mag >= s / tKt) {
			mag = s / tKt;
			c->sticking = true;
		}
		return ibScale(-mag, t);
	}
	ibVec3 t = ibScale(scale, ib_contact_tangential(prev, c->n));
	double l = ibLength(t);
	if (!(l > 0.0)) return IB_VEC3_ZERO;
	double lim = c->mus * accN;
	return l > lim ? ibScale(lim / l, t) : t;
}

/* Warm start of a loop ([IMPL], docs/contacts.md): the matched point's impulses of last step's loop
 * (scaled to this step length) are applied before the sweeps and become the accumulated impulses;
 * the sweeps then correct them like any other iterate (same clamps, same tolerances). */
static void warm_start(ibWorld* w, ibContactStore* cs, double h, bool velocity)
{
	if (!w->solver.contact.warmStart || !(cs->prevH > 0.0)) return;
	/* impulses scale with the step length; after a much shorter or longer (sub-)step (time of contact,
	 * step subdivision) they say little: no warm start then */
	double scale = h / cs->prevH;
	if (!(scale >= 0.5 && scale <= 2.0)) return;
	/* [IMPL] applied as one impulse per body at the end (ib_contacts_sum_*): a sliding point's friction
	 * (warm_friction) is then measured at the loop's starting velocities, not after the warm impulses of the
	 * points before it */
	const bool batch = ib_contacts_sum_begin(w, cs);
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		if (c->kind != IB_CONTACT_RESTING || c->warm < 0) continue;
		const ibContactPrev* o = &cs->prev[c->warm];
		double dN;
		ibVec3 pT;
		if (!velocity) {
			dN = ib_fmax(0.0, scale * o->wN);
			c->accN = dN;
			pT = warm_friction(w, c, o->wT, scale, c->accN, dN);
			c->accT = pT;
		} else {
			dN = ib_fmax(scale * o->wVN, -c->accN);
			c->accN += dN;
			c->accVN = dN;
			pT = warm_friction(w, c, o->wVT, scale, c->accN, dN);
			if (c->sticking) { /* the sum stays in the cone */
				ibVec3 sum = ibAdd(c->accT, pT);
				double ls = ibLength(sum), lim = c->mus * c->accN;
				if (ls > lim) pT = ibSub(ibScale(lim / ls, sum), c->accT);
			}
			c->accT = ibAdd(c->accT, pT);
		}
		if (c->mus <= 0.0 && c->mud <= 0.0) pT = IB_VEC3_ZERO, c->accT = IB_VEC3_ZERO;
		if (batch)
			ib_contacts_sum_add(w, cs, c, ibMulAdd(pT, dN, c->n));
		else
			ib_contact_apply(w, c, ibMulAdd(pT, dN, c->n));
	}
	if (batch) ib_contacts_sum_flush(w, cs);
}

typedef struct RestCtx {
	double h, eps, tol, res;
	bool patch; /* block solves of face contacts (velocity loop) */
} RestCtx;

static bool position_point(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	RestCtx* x = ctx;
	if (c->kind != IB_CONTACT_RESTING) return false;
	bool moved = false;
	x->res = ib_fmax(x->res, correct_point(w, cs, c, x->h, x->eps, &moved));
	return moved;
}

static bool joint_position_sweep(ibWorld* w, void* ctx)
{
	RestCtx* x = ctx;
	bool moved = ib_joints_position_sweep(w, x->h);
	return ib_soft_position_resume_sweep(w, x->h) || moved; /* soft rows, particle contacts (src/soft) */
}

static bool joint_velocity_sweep(ibWorld* w, void* ctx)
{
	(void)ctx;
	bool moved = ib_joints_velocity_sweep(w);
	return ib_soft_velocity_resume_sweep(w) || moved;
}

enum { IB_CONTACT_MARKED_SWEEPS = 10 };

/* marks the dynamic bodies of point c (mark may be NULL) */
static void mark_bodies(const ibWorld* w, const ibContactRow* c, uint8_t* mark)
{
	if (!mark) return;
	if (ib_is_dynamic(&w->bodies[c->b1])) mark[c->b1] = 1;
	if (ib_is_dynamic(&w->bodies[c->b2])) mark[c->b2] = 1;
}

/* [IMPL] The active set of the separating points: after the loop, a point classified separating at t0 whose
 * predicted gap at t0+h (at the loop's velocities) now closes by more than eps_d becomes a lifting contact
 * joint (contact_collide.c: an inequality without anchor or warm start, outside the direct solve), and the
 * loop goes on. Classified by its velocity at t0 alone, a cube lifting an edge at 0.41 m/s was no joint
 * there; its landing on another cube turned it back within the step, and the edge ended 8.5 mm inside the
 * cube below in a step whose loops had converged (test_contact_rain, RAIN_SEED=6, speculative approach).
 * Returns the number of points that became joints. */
static int32_t activate_closing(ibWorld* w, ibContactStore* cs, double h, double eps, bool keepK, uint8_t* mark)
{
	int32_t added = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		if (c->kind != IB_CONTACT_SEPARATING) continue;
		ibVec3 a, b, n;
		ib_contact_predicted_points(w, cs, c, h, &a, &b, &n);
		double g = ibDot(ibSub(a, b), n);
		if (!(g < -eps)) continue;
		carry_points(w, c, keepK, false);
		c->allowN = ib_fmax(0.0, -ibDot(ibSub(c->a, c->b), c->n) - IB_CONTACT_RECOVERY_SPEED * h);
		if (!(g + c->allowN < -eps)) continue;
		ib_contact_make_lifting(cs, c);
		++added;
		mark_bodies(w, c, mark);
	}
	return added;
}

void ib_contacts_position_correction(ibWorld* w, double h)
{
	ibContactStore* cs = w->contactStore;
	if (!cs) return;
	cs->positionStalled = false;
	if (cs->restingCount == 0) return;
	const ibContactSettings* set = &w->solver.contact;
	ib_contact_invalidate_prediction(w, cs, h);
	const bool keepK = !(w->joints && w->joints->basicCount > 0);
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->accN = 0.0;
		c->accT = IB_VEC3_ZERO;
		c->coneHits = 0;
		if (c->kind != IB_CONTACT_RESTING) continue;
		carry_points(w, c, keepK, false); /* the points at the current instant (a redone or midpoint step moved them) */
		/* errors present at t0 are removed at IB_CONTACT_RECOVERY_SPEED at most: corrected within a
		 * tiny (time-of-contact) sub-step they would become huge velocities */
		double rec = IB_CONTACT_RECOVERY_SPEED * h;
		c->allowN = ib_fmax(0.0, -ibDot(ibSub(c->a, c->b), c->n) - rec);
		c->allowT = 0.0;
		if (c->sticking) {
			ibVec3 A, B;
			ib_contact_anchors_now(w, c, &A, &B);
			ibVec3 d0 = ibSub(B, A);
			c->allowT = ib_fmax(0.0, ibLength(ib_contact_tangential(d0, c->n)) - rec);
		}
	}
	cs->lastH = h;
	ib_contacts_joint_response(w, cs, false); /* K of the points of jointed bodies: the joint system's response */
	warm_start(w, cs, h, false);
	/* a starting iterate for the sweeps (contact_direct.c); where the warm start already holds every
	 * resting point within 2 % of the tolerance (IB_DIRECT_HELD), the sweep would only confirm it */
	bool held = ib_contacts_direct(w, cs, h, false) == IB_DIRECT_HELD;
	RestCtx x = {h, set->contactPositionTolerance, 0.0, 0.0, false};
	ibContactLoop loop = {position_point, w->joints || w->soft ? joint_position_sweep : NULL, &x, set->maxContactIterations, IB_CONTACT_RESTING, &x.res, 0.0};
	bool moved = false;
	if (!held) w->stats.contactIterations += ib_contacts_run(w, cs, &loop, &moved);
	/* separating points that the loop's velocities now close, and points of the speculative pairs' regions at t0+h
	 * that no row holds, become joints, and the loop goes on (a few rounds) */
	const int32_t since = cs->count; /* rows appended by the rounds from here on */
	/* [IMPL] after a loop that stalled or reached its cap, one round of at most IB_CONTACT_MARKED_SWEEPS sweeps
	 * over the points at the bodies of the new joints only: rain1000's loops seldom converge, and there the whole
	 * loop run again after every round doubled its position sweeps; the marked points to their own stall rule
	 * took 74 instead of 58 ms/step (docs/contacts.md, "Box piles at 60 Hz" item 21) */
	const bool stalled = moved;
	uint8_t* mark = NULL;
	if (stalled && ib_grow(w, (void**)&cs->touched, &cs->touchedCapacity, w->bodyHigh + 1, 1)) {
		mark = cs->touched;
		memset(mark, 0, (size_t)w->bodyHigh);
	}
	const int rounds = !stalled ? 4 : mark ? 1 : 0;
	for (int round = 0; round < rounds && (stalled || !moved); ++round) {
		const int32_t before = cs->count;
		int32_t more = activate_closing(w, cs, h, x.eps, keepK, mark);
		int32_t rows = ib_contacts_end_regions(w, cs, h, x.eps, since);
		/* (out of memory: the step ends with the loop as it is, reported not converged) */
		if (rows < 0 || (rows > 0 && cs->levelCount > 0 && !ib_contacts_graph(w, cs))) {
			ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in contact resolution");
			w->stats.converged = false;
			break;
		}
		if (more + rows == 0) break;
		held = false;
		if (mark) { /* (moved stays true: the loop as a whole stalled) */
			for (int32_t k = before; k < cs->count; ++k) mark_bodies(w, &cs->pts[k], mark);
			bool localMoved = false;
			ibContactLoop few = loop;
			few.cap = IB_CONTACT_MARKED_SWEEPS;
			w->stats.contactIterations += ib_contacts_run_marked(w, cs, &few, mark, &localMoved);
		} else {
			w->stats.contactIterations += ib_contacts_run(w, cs, &loop, &moved);
		}
	}
	/* a loop that ended unconverged may leave the joints open (its joint sweeps stopped with it): each jointed group is
	 * brought back onto its joints directly, the contacts as they are (joint_follow.c) */
	if (!held && moved && set->directFollow) ib_joints_project_direct(w, h, true);
	else ib_contacts_mark_both(cs);
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->wN = c->twoN;
		c->wT = c->twoT;
		c->wVN = 0.0;
		c->wVT = IB_VEC3_ZERO;
	}
	cs->positionStalled = moved;
	if (moved) {
		w->stats.converged = false;
		w->stats.contactResidual = ib_fmax(w->stats.contactResidual, x.res);
	}
}

/* Normal impulse of the velocity correction at a contact joint ([R]): removes an approaching u_n,
 * and also a separating one as long as the step's total normal impulse (joint correction +
 * velocity correction, c->accN) stays >= 0. The joint correction pushes a penetrating point (say
 * 1.8e-6 m, within the joints' own eps_d) out with the velocity g/h; clamping only this correction's
 * own impulse (>= 0) kept that velocity, so resting neighbours drifted apart and gained energy (two
 * touching balls of Newton's cradle leaving at 4.0619 and 4.0637 m/s instead of 4.0628 each). */
static double velocity_normal_impulse(const ibContactRow* c, double un)
{
	if (!(un < 0.0 || (un > 0.0 && c->accN > 0.0))) return 0.0;
	double dN = -un / c->nKn;
	if (c->accN + dN < 0.0) dN = -c->accN;
	return dN;
}

static bool velocity_point_free(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx);

/* where the point uses the joints' response K_eff, the joints follow its impulse at once */
static bool velocity_point(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	return c->kj ? ib_contact_point_followed(w, cs, c, ctx, velocity_point_free) : velocity_point_free(w, cs, c, ctx);
}

static bool velocity_point_free(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	const RestCtx* x = ctx;
	if (c->kind != IB_CONTACT_RESTING || c->spec == 2 || c->lift == 2) return false;
	bool moved = false;
	if (c->gIdx == 0 && c->gCount >= 3 && !c->kj) { /* the whole face contact as one block (contact_patch.c;
		                                                * not with a joint system's response) */
		c->patchOk = x->patch && ib_contact_patch_velocity(w, cs, c, c->gCount, x->tol, &moved);
		if (c->patchOk) return moved;
	} else if (c->gIdx > 0 && (c - c->gIdx)->patchOk) {
		return false;
	}
	ib_contact_need_K(w, c);
	ibVec3 u = ib_contact_rel_velocity(w, c);
	double un = ibDot(u, c->n);
	double dN = 0.0;
	/* with the joints' response only errors above the tolerance (see correct_point_jointed) */
	if (c->kj && (c->sticking && c->mus > 0.0 ? ibLength(u) : (un < 0.0 || c->accN > 0.0) ? fabs(un) : 0.0) <= x->tol) return false;
	if (c->sticking && c->mus > 0.0 && c->kinv == 0) c->kinv = ibMat3_InverseSym(c->K, &c->Kinv) ? 1 : 2;
	if (c->sticking && c->mus > 0.0 && c->kinv == 1) {
		const ibMat3 Ki = c->Kinv;
		/* [IMPL] a sticking point is a ball joint for this instant: one 3x3 solve removes its whole
		 * relative velocity. Separate 1D normal and friction projections (along the changing sliding
		 * direction, with an anisotropic K) converge very slowly on boxes resting on several boxes. */
		ibVec3 p = ibNeg(ibMat3_MulV(Ki, u));
		dN = ibDot(p, c->n);
		ibVec3 cand = ibAdd(c->accT, ib_contact_tangential(p, c->n));
		/* only inside the cone; at its boundary (or when the normal impulse would pull) the 1D
		 * projections below hold the friction on the boundary and correct the normal alone */
		if (c->accN + dN >= 0.0 && ibLength(cand) <= c->mus * (c->accN + dN)) {
			ibVec3 pt = ibSub(cand, c->accT);
			c->accVN += dN;
			c->accN += dN;
			c->accT = cand;
			ib_contact_apply(w, c, ibMulAdd(pt, dN, c->n));
			return ibLength(u) > x->tol;
		}
	}
	dN = velocity_normal_impulse(c, un); /* the step's total normal impulse never pulls */
	bool defer = ib_contact_defers_normal(c);
	if (dN != 0.0) {
		c->accVN += dN;
		c->accN += dN;
		if (!defer) ib_contact_apply(w, c, ibScale(dN, c->n));
		if (fabs(un) > x->tol && dN != 0.0) moved = true;
	}
	if (c->sticking && c->mus > 0.0) {
		/* [IMPL] a point that sticks stays sticking for the rest of this loop: where the friction it
		 * needs leaves the cone it is held on the cone's boundary (and projected back onto it when the
		 * normal impulse shrinks). Letting it flip to sliding here left it with the friction it had and
		 * only mu_d dN more per sweep: its sliding never ended within the loop, and the neighbours'
		 * corrections kept the sweeps going until the cap (pyramid20). */
		ibVec3 ut = ib_contact_tangential(ib_contact_rel_velocity(w, c), c->n);
		double sl = ibLength(ut), lim = c->mus * c->accN;
		ibVec3 cand = c->accT;
		bool clamp = false;
		if (sl > 0.0) {
			ibVec3 t = ibScale(1.0 / sl, ut);
			double tKt = ibDot(t, ibMat3_MulV(c->K, t));
			if (tKt > 0.0) cand = ibMulAdd(cand, -sl / tKt, t);
		}
		double lc = ibLength(cand);
		if (lc > lim) {
			cand = lim > 0.0 ? ibScale(lim / lc, cand) : IB_VEC3_ZERO;
			clamp = true;
		}
		ib_contact_apply(w, c, ibSub(cand, c->accT));
		c->accT = cand;
		if (sl > x->tol && !clamp) moved = true;
		return moved;
	}
	if (defer ? ib_contact_friction_velocity_pending(w, c, dN, x->tol, ibScale(dN, c->n), &u) : ib_contact_friction_velocity(w, c, dN, x->tol))
		moved = true;
	return moved;
}

/* The largest velocity error the velocity loop would still correct, after it ended not converged (stalled or
 * capped; ibStepStats.contactVelocityResidual): an approach (u_n < 0), a separation while the step's normal
 * impulse is positive (velocity_normal_impulse), the slip of a static-friction point strictly inside its cone
 * (one held on the boundary slides from the next step on). */
static double velocity_residual(const ibWorld* w, const ibContactStore* cs)
{
	double r = 0.0;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->kind != IB_CONTACT_RESTING || c->spec == 2 || c->lift == 2) continue;
		ibVec3 u = ib_contact_rel_velocity(w, c);
		double un = ibDot(u, c->n), e = un < 0.0 ? -un : c->accN > 0.0 ? un : 0.0;
		if (c->sticking && c->mus > 0.0 && ibLength(c->accT) < c->mus * c->accN * (1.0 - 1e-9))
			e = ib_fmax(e, ibLength(ib_contact_tangential(u, c->n)));
		r = ib_fmax(r, e);
	}
	return r;
}

void ib_contacts_velocity_correction(ibWorld* w, double h)
{
	ibContactStore* cs = w->contactStore;
	if (!cs || cs->restingCount == 0) return;
	const ibContactSettings* set = &w->solver.contact;
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->patchOk = false;
		if (c->kind != IB_CONTACT_RESTING) continue;
		carry_points(w, c, false, true); /* contact points at t0+h, carried with their bodies */
		/* a speculative point still apart at t0+h is no contact (contact_speculative.c), nor a lifting one
		 * (contact_collide.c) apart at t0+h that took no position impulse */
		if (c->spec)
			c->spec = ibDot(ibSub(c->a, c->b), c->n) > w->collisionSettings.contactTolerance ? 2 : 1;
		if (c->lift)
			c->lift = c->accN == 0.0 && ibDot(ibSub(c->a, c->b), c->n) > w->collisionSettings.contactTolerance ? 2 : 1;
		c->accVN = 0.0;
		c->wVT = c->accT; /* the friction impulse before this loop */
	}
	ib_contacts_joint_response(w, cs, false);
	warm_start(w, cs, cs->lastH > 0.0 ? cs->lastH : h, true);
	/* [IMPL] the velocity loop's confirming sweep stays even where the warm start holds: without its
	 * sub-tolerance corrections the velocity warm start drifted, and pyramid20 needed a direct solve with
	 * active-set passes in 9 of its first 31 steps instead of 4 */
	ib_contacts_direct(w, cs, h, true);
	RestCtx x = {h, set->contactPositionTolerance, w->solver.velocityTolerance, 0.0, ib_contact_patch_begin(w, cs)};
	ibContactLoop loop = {velocity_point, w->joints || w->soft ? joint_velocity_sweep : NULL, &x, set->maxContactIterations, IB_CONTACT_RESTING, NULL, 0.0};
	/* with K_eff points: back to the best sweep above 1.5 times its energy (ib_contacts_run; 1.01 left the same
	 * rises on the ragdoll probe and seemed ~8 % slower, within the probe's noise) */
	for (int32_t k = 0; k < cs->count && loop.keepBest == 0.0; ++k)
		if (cs->pts[k].kj) loop.keepBest = 1.5;
	bool moved = false;
	w->stats.contactVelocityIterations += ib_contacts_run(w, cs, &loop, &moved);
	if (moved && set->directFollow) ib_joints_project_direct(w, 0.0, false); /* (as in the position loop) */
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->wVN = c->twoVN;
		c->wVT = ibSub(c->twoT, c->wVT);
	}
	if (moved) {
		w->stats.converged = false;
		w->stats.contactVelocityResidual = ib_fmax(w->stats.contactVelocityResidual, velocity_residual(w, cs));
	}
}
