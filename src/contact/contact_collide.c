/* Collision resolution (§5.2, digest §17): at t0, before the joint correction, iterative impulses at
 * all colliding contact points at once. Newton (eq. 5.2): each colliding point gets the target normal
 * velocity -e u_n (fixed when it is first found colliding); Poisson (eq. 5.3): target 0, then the
 * restitution impulse e p_n as the last iteration. The accumulated normal impulse of a point never
 * pulls (eqs 5.6/5.7), Coulomb friction is applied in the same loop (eqs 5.8-5.10), and with joints
 * one joint velocity-correction sweep follows every collision sweep (§5.4.1). The loop ends when
 * every point is within eps_v,c of its target (or released with zero impulse), or at the cap.
 * Propagation rounds ([R], next_round below): a point that impulses elsewhere make approach faster
 * than eps_rc becomes a new collision in the next round, not in the running loop. */
#include <math.h>

#include "collision/collision_world.h"
#include "contact/contact_internal.h"

/* The friction impulse of one iteration at relative velocity u (§5.2.5): *pT (0 if none), c->accT and
 * the friction state updated; true if the tangential velocity changed by more than tol. */
static bool friction_impulse(ibContactRow* c, ibVec3 u, double dN, double tol, ibVec3* pT)
{
	*pT = IB_VEC3_ZERO;
	ibVec3 ut = ib_contact_tangential(u, c->n);
	double s = ibLength(ut);
	if (s <= tol) { /* at rest tangentially: static if the impulse stays in the cone (eq. 5.10) */
		/* a change of state alone is no progress: at the cone's boundary the normal impulse's
		 * sub-tolerance corrections would flip it every sweep and the loop would never end */
		c->sticking = ibLength(c->accT) <= c->mus * c->accN * (1.0 + 1e-9);
		return false;
	}
	ibVec3 t = ibScale(1.0 / s, ut);
	double tKt = ibDot(t, ibMat3_MulV(c->K, t));
	if (!(tKt > 0.0)) return false;
	double stop = s / tKt; /* |p_t,max| of eq. 5.9 */
	if (c->sticking) {
		ibVec3 cand = ibMulAdd(c->accT, -stop, t);
		double lim = c->mus * c->accN, lc = ibLength(cand);
		if (lc > lim) cand = ibScale(lim / lc, cand); /* [R] held at the cone's boundary (see contact_joint.c) */
		*pT = ibSub(cand, c->accT);
		c->accT = cand;
		return lc <= lim; /* at the boundary nothing more can be done in this sweep */
	}
	/* eq. 5.8 with the signed normal increment ([R]): the friction follows mu_d times the accumulated
	 * normal impulse also when the clamp of eq. 5.7 takes some of it back */
	double dyn = c->mud * dN;
	if (dyn == 0.0) return false;
	if (dyn < 0.0) {
		/* [IMPL] what is taken back is friction already applied: along the accumulated friction, not
		 * against the current sliding direction. After friction has reversed a point's sliding, the
		 * sliding direction is opposite to the friction applied, and taking mu_d |dN| back along it
		 * pushed the point on instead (a cylinder landing on a triangle mesh kept 450 N s of friction
		 * with 3 N s of normal impulse and gained 1.6 kJ in one step) */
		double l = ibLength(c->accT);
		if (!(l > 0.0)) return false;
		double take = ib_fmin(-dyn, l);
		*pT = ibScale(-take / l, c->accT);
		c->accT = ibAdd(c->accT, *pT);
		return take * tKt > tol;
	}
	double mag = dyn;
	if (dyn >= stop) { /* friction stops the sliding: static from the next iteration on */
		mag = stop;
		c->sticking = true;
	}
	*pT = ibScale(-mag, t);
	c->accT = ibMulAdd(c->accT, -mag, t);
	return fabs(mag) * tKt > tol; /* the tangential velocity changed by more than the tolerance */
}

bool ib_contact_friction_velocity(ibWorld* w, ibContactRow* c, double dN, double tol)
{
	if (c->mus <= 0.0 && c->mud <= 0.0) return false;
	ibVec3 pT;
	bool progress = friction_impulse(c, ib_contact_rel_velocity(w, c), dN, tol, &pT);
	if (ibDot(pT, pT) > 0.0) ib_contact_apply(w, c, pT);
	return progress;
}

/* The friction at the velocities that result once the normal impulse pN, not yet applied, is: u + K pN
 * (the velocity response is linear); pN and the friction are then applied as one impulse (one update
 * per body instead of two), the stall measure seeing each part alone. */
bool ib_contact_friction_velocity_pending(ibWorld* w, ibContactRow* c, double dN, double tol, ibVec3 pN, const ibVec3* u)
{
	ibVec3 pT, u1 = ibAdd(u ? *u : ib_contact_rel_velocity(w, c), ibMat3_MulV(c->K, pN));
	bool progress = friction_impulse(c, u1, dN, tol, &pT);
	ib_contact_apply2(w, c, pN, pT);
	return progress;
}

/* [IMPL] A point with the joints' response K_eff (c->kj): its normal impulse dN is sized for the velocities
 * after the joints have followed it (ib_contact_point_followed), but right after it is applied the point
 * responds with the free bodies' K, which is much larger (a ragdoll's thigh landing: n^T K n = 1.0 against
 * n^T K_eff n = 0.032). Friction taken from that transient velocity met a slip of 92 m/s where the joints
 * would have left a few m/s, applied mu_d dN against it, and the ragdoll gained 800 J per collision sweep
 * (tests/test_contact_ragdoll.c). The friction is therefore taken at the velocities the normal impulse
 * leaves once followed, u + K_eff pN (the pending form below), and applied with it. u: the relative velocity
 * before the normal impulse. */
bool ib_contact_friction_velocity_followed(ibWorld* w, ibContactRow* c, double dN, double tol, ibVec3 u)
{
	return ib_contact_friction_velocity_pending(w, c, dN, tol, ibScale(dN, c->n), &u);
}

/* [IMPL] Approach speed (m/s) that closes the t0 gap of a speculative point of an approaching pair
 * (spec = 3) in h: as a collision its target normal velocity is minus this (inelastic, e = 0), so the
 * impact and what it passes on to the resting neighbours (propagation rounds) happen at t0, before
 * the speculative regions of the touching pairs are taken from the velocities after the collisions. */
static double spec_closing(const ibContactRow* c, double h) { return c->gap > 0.0 ? c->gap / h : 0.0; }

typedef struct CollideCtx {
	double tol, rest;
} CollideCtx;

/* One iteration at one colliding point; true if it applied an impulse. */
static bool collide_point_free(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx);

/* where the point uses the joints' response K_eff, the joints follow its impulse at once */
static bool collide_point(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	return c->kj ? ib_contact_point_followed(w, cs, c, ctx, collide_point_free) : collide_point_free(w, cs, c, ctx);
}

static bool collide_point_free(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	(void)cs;
	const CollideCtx* x = ctx;
	if (c->kind != IB_CONTACT_COLLIDING) return false; /* new collisions wait for the next round */
	ibVec3 u = ib_contact_rel_velocity(w, c);
	double un = ibDot(u, c->n);
	double delta = c->target - un;
	double dN = 0.0;
	bool pending = c->kj && (c->mus > 0.0 || c->mud > 0.0);
	if (fabs(delta) > x->tol && !(delta < 0.0 && c->accN <= 0.0)) {
		dN = delta / c->nKn; /* eq. 5.5 */
		if (c->accN + dN < 0.0) dN = -c->accN; /* eq. 5.7 */
		c->accN += dN;
		if (!pending) ib_contact_apply(w, c, ibScale(dN, c->n));
	}
	bool fr = pending ? ib_contact_friction_velocity_followed(w, c, dN, x->tol, u)
	                  : ib_contact_friction_velocity(w, c, dN, x->tol);
	return dN != 0.0 || fr;
}

/* Propagation rounds ([R], beyond the thesis' single loop): after a round has converged, the points
 * that its impulses made approach faster than eps_rc (a resting neighbour of a colliding point, e.g.
 * the touching balls of Newton's cradle) are the next round's collisions, with targets from their
 * approach speed now; the previous round's points leave the loop with their impulses applied
 * (a later round starts them at zero accumulated impulse, so nothing of an earlier round is pulled
 * back). Resolving these points inside the running loop instead makes them simultaneous with the
 * point that caused them: the struck ball then keeps pushing its neighbour after handing the
 * impulse on, and a cradle of touching balls gains energy (one ball released: +79 J). Returns the
 * number of new collisions. */
static int next_round(ibWorld* w, ibContactStore* cs, double rest, bool poisson, double h)
{
	int n = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		if (c->spec && c->spec != 3) continue; /* apart at t0: no collision */
		double un = ibDot(ib_contact_rel_velocity(w, c), c->n);
		if (c->spec == 3) un += spec_closing(c, h); /* may approach by its gap */
		if (un > -rest) {
			if (c->kind == IB_CONTACT_COLLIDING) c->kind = IB_CONTACT_RESTING; /* re-classified by the caller */
			continue;
		}
		c->kind = IB_CONTACT_COLLIDING;
		c->target = c->spec == 3 ? -spec_closing(c, h) : poisson ? 0.0 : -c->e * un;
		c->accN = 0.0;
		c->accT = IB_VEC3_ZERO;
		c->sticking = false;
		++n;
	}
	return n;
}

static bool joint_velocity_sweep(ibWorld* w, void* ctx)
{
	(void)ctx;
	return ib_joints_velocity_sweep(w);
}

/* [R] Poisson: static friction through the restitution phase. The restitution impulses e p_n are the
 * loop's last normal iteration (§5.2.2); the one static-friction impulse of eq. 5.9 that follows each
 * acts only along the slip t it finds, and where K t has a tangential part across t (a body of unequal
 * principal moments: a box corner 0.1 x 0.2 x 0.4 m, tests/test_contact_poisson.c) the point left the
 * impact slipping at 0.19 m/s while its friction impulse was inside the cone. The collision loop may
 * end only when every static-friction point has u_t = 0 (§5.2.5), so the sticking points get further
 * friction iterations (this point function, swept like the loop), with the normal impulses
 * (1 + e) p_n of eq. 5.3 unchanged; sliding points get nothing more (their friction follows the normal
 * increments, eq. 5.8), and a point pushed onto its cone's boundary is held there as in the loop. */
static bool restitution_friction_point(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx)
{
	(void)cs;
	const CollideCtx* x = ctx;
	if (c->kind != IB_CONTACT_COLLIDING || !c->sticking || c->accN <= 0.0) return false;
	return ib_contact_friction_velocity(w, c, 0.0, x->tol);
}

/* [IMPL] With K_eff points and no target above 0 (no Newton restitution: the loop is then an inelastic
 * projection, which zero velocity satisfies, so it cannot add energy), a collision loop that ends not converged
 * more than 1 % above its least kinetic energy goes back to that sweep (ib_contacts_run, keepBest). A frictionless ragdoll's
 * landing (tests/test_contact_ragdoll.c, seed 53) ended its collision loop, stalled after 51 sweeps, 6.6 J
 * above its start. */
#define IB_CONTACT_BEST_COLLIDE 1.01
static bool keep_best(const ibContactStore* cs)
{
	bool anyKj = false;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		anyKj = anyKj || c->kj;
		if (c->kind == IB_CONTACT_COLLIDING && c->target > 0.0) return false;
	}
	return anyKj;
}

void ib_contacts_resolve_collisions(ibWorld* w, ibContactStore* cs, double h)
{
	const ibContactSettings* set = &w->solver.contact;
	double rest = ib_contact_resting_speed(w);
	double tol = set->collisionTolerance;
	bool poisson = set->restitutionLaw == IB_RESTITUTION_POISSON;
	int colliding = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		double un = ibDot(ib_contact_rel_velocity(w, c), c->n);
		c->accN = 0.0;
		c->accT = IB_VEC3_ZERO;
		c->sticking = false;
		c->kind = un <= -rest ? IB_CONTACT_COLLIDING : un < rest ? IB_CONTACT_RESTING : IB_CONTACT_SEPARATING;
		c->target = poisson ? 0.0 : -c->e * un;
		if (c->spec == 3) { /* approaching pair: a collision if it would close more than its gap in h */
			double allow = spec_closing(c, h);
			c->kind = un + allow <= -rest ? IB_CONTACT_COLLIDING : un + allow < rest ? IB_CONTACT_RESTING : IB_CONTACT_SEPARATING;
			if (c->kind == IB_CONTACT_SEPARATING) c->kind = IB_CONTACT_RESTING; /* classified again after the loop */
			c->target = -allow;
		} else if (c->spec && c->kind == IB_CONTACT_COLLIDING) {
			c->kind = IB_CONTACT_RESTING; /* apart at t0: no collision */
		}
		if (c->kind == IB_CONTACT_COLLIDING) ++colliding;
	}
	/* over the step's time-of-contact sub-steps: the largest count, the summed sweeps, the largest residual */
	if (colliding > w->stats.collidingPoints) w->stats.collidingPoints = colliding;
	if (colliding == 0) return;
	bool joints = set->jointVelocitySweeps && w->joints;
	if (joints) ib_contacts_joint_response(w, cs, true); /* resting points too: a round may make them collide */
	CollideCtx x = {tol, rest};
	ibContactLoop loop = {collide_point, joints ? joint_velocity_sweep : NULL, &x, set->maxCollisionIterations, IB_CONTACT_COLLIDING, NULL, 0.0};
	bool active = false;
	int it = 0;
	do {
		loop.cap = set->maxCollisionIterations - it;
		loop.keepBest = joints && keep_best(cs) ? IB_CONTACT_BEST_COLLIDE : 0.0;
		it += ib_contacts_run(w, cs, &loop, &active);
		if (poisson) { /* restitution impulses as the last iteration (§5.2.2, §5.2.5) */
			for (int32_t k = 0; k < cs->count; ++k) {
				ibContactRow* c = &cs->pts[k];
				if (c->kind != IB_CONTACT_COLLIDING || c->accN <= 0.0 || c->e <= 0.0) continue;
				double dN = c->e * c->accN;
				c->accN += dN;
				if (c->kj && (c->mus > 0.0 || c->mud > 0.0)) {
					ib_contact_friction_velocity_followed(w, c, dN, tol, ib_contact_rel_velocity(w, c));
				} else {
					ib_contact_apply(w, c, ibScale(dN, c->n));
					ib_contact_friction_velocity(w, c, dN, tol);
				}
			}
			if (joints)
				for (int i = 0; i < set->maxCollisionIterations && ib_joints_velocity_sweep(w); ++i) {}
			if (it < set->maxCollisionIterations) { /* static friction through the restitution phase ([R], above) */
				ibContactLoop fl = {restitution_friction_point, joints ? joint_velocity_sweep : NULL, &x,
				                    set->maxCollisionIterations - it, IB_CONTACT_COLLIDING, NULL, 0.0};
				bool fa = false;
				it += ib_contacts_run(w, cs, &fl, &fa);
				if (fa) active = true;
			}
		}
		/* a loop that went back to its best sweep would only stall again in another round */
	} while (it < set->maxCollisionIterations && !cs->bestRestored && next_round(w, cs, rest, poisson, h) > 0);
	double res = 0.0;
	if (active)
		for (int32_t k = 0; k < cs->count; ++k) {
			const ibContactRow* c = &cs->pts[k];
			if (c->kind != IB_CONTACT_COLLIDING) continue;
			double d = c->target - ibDot(ib_contact_rel_velocity(w, c), c->n);
			if (d > 0.0 || c->accN > 0.0) res = ib_fmax(res, fabs(d));
		}
	w->stats.collisionIterations += it;
	w->stats.collisionResidual = ib_fmax(w->stats.collisionResidual, res);
	if (active) w->stats.converged = false;
}

/* Step items 3-5 of Part VI §21 after the detection at t0: classification, collisions, contact joints. */
ibResult ib_contacts_collide(ibWorld* w, double h)
{
	const ibContactSettings* set = &w->solver.contact;
	ibContactStore* cs = w->contactStore;
	if (cs) {
		ib_contacts_keep(w, cs);
		cs->count = cs->restingCount = 0;
		cs->endPairCount = 0;
	}
	if (!set->enabled || !w->collisionSettings.enabled || w->shapeCount < 2) return IB_OK;
	/* the contact set is the one the step's detection at t0 just produced (step.c collide_t0) */
	ibContactPair* pairs = NULL;
	/* no touching pair: in a checked sub-step approaching pairs may still get speculative points */
	if (ib_collision_contacts(w, &pairs) == 0 && !ib_toi_checked(w)) return IB_OK;
	cs = ib_contact_store(w, true);
	if (!cs || !ib_contacts_build(w, cs)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in contact resolution");
	if (cs->count > w->stats.contactPoints) w->stats.contactPoints = cs->count;
	int32_t built = cs->count;
	/* approaching pairs left to speculative points in a checked sub-step (contact_speculative.c) */
	if (!ib_contacts_speculative_near(w, cs, h)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in contact resolution");
	cs->levelCount = 0;
	if ((set->contactGraph || set->shockIterations > 0) && !ib_contacts_graph(w, cs))
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in the contact graph");
	ib_contacts_resolve_collisions(w, cs, h);
	/* speculative points from the velocities after the collisions (contact_speculative.c) */
	int32_t before = cs->count;
	if (!ib_contacts_speculative(w, cs, h, built)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in contact resolution");
	if (cs->count > before && cs->levelCount > 0 && !ib_contacts_graph(w, cs))
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in the contact graph");
	/* re-classify: every point that does not separate becomes a contact joint for this step (§5.3) */
	double rest = ib_contact_resting_speed(w), stick = w->solver.velocityTolerance;
	if (!w->solver.contact.directSolve) stick = ib_fmax(stick, IB_CONTACT_STICK_SPEED * rest);
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		ibVec3 u = ib_contact_rel_velocity(w, c);
		double un = ibDot(u, c->n);
		c->kind = un < rest ? IB_CONTACT_RESTING : IB_CONTACT_SEPARATING;
		/* [IMPL] a point separating slower than gravity can turn round within the step (eps_rc + |g| h) is a
		 * contact joint as well: an inequality, corrected only if its predicted gap closes. Classified by its
		 * velocity alone (eps_rc = 0.044 m/s at eps_c = 1e-4 m, where |g| h = 0.16 m/s at 60 Hz) a cube rocking
		 * on the ground lifted one edge, the impulses at the other edge and gravity turned it back within the
		 * step, and the unconstrained edge sank 2.4e-4 m into the ground in a step whose loops all converged
		 * (test_contact_rain, speculative approach). */
		c->lift = 0;
		if (c->kind == IB_CONTACT_SEPARATING && !c->spec && un < rest + ibLength(w->gravity) * h) {
			c->kind = IB_CONTACT_RESTING;
			c->lift = 1;
		}
		c->accN = 0.0;
		c->accT = IB_VEC3_ZERO;
		/* [IMPL] with the iterative method (no direct solve) sticking up to IB_CONTACT_STICK_SPEED eps_rc,
		 * not only up to eps_v: the velocity loop of a standing wall of 28 stones did not reach eps_v =
		 * 1e-6 m/s in its 1000 sweeps, half of the points then counted as sliding in the next step, lost
		 * their anchors, and the wall turned about the vertical with 0.15 J after 200 steps. With the
		 * direct solve the velocity loop converges, and the solve holds slow points itself (stickable);
		 * there the wider rule made wall252 slower (134 instead of 102 ms/step) and was not kept. */
		c->sticking = !c->lift && ibLength(ib_contact_tangential(u, c->n)) <= stick; /* a lifting point has no anchor */
		if (c->kind == IB_CONTACT_RESTING) cs->restingCount++;
	}
	ib_contacts_inherit_anchors(w, cs);
	for (int32_t k = 0; k < cs->count; ++k)
		if (cs->pts[k].spec || cs->pts[k].lift) cs->pts[k].warm = -1; /* apart at t0 or lifting: no impulse to start from */
	if (!ib_contacts_note_poses(w, cs)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in contact resolution");
	if (cs->restingCount > w->stats.restingPoints) w->stats.restingPoints = cs->restingCount;
	return IB_OK;
}
