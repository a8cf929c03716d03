/* Time of contact (§4.1, digest §15.1 find_toc; step items 2 and 8 of digest §21).
 *
 * A step of length H is run as sub-steps. Each starts with the detection at t0 (the contact solver's
 * input), saves the body states, and runs the motion over the rest of the step. Then:
 *  - penetration test (phases 1-2) over the pairs that were not touching at t0: if one penetrates
 *    deeper than eps_c, the time of contact is searched in [0, H] by re-simulating from the saved
 *    state: regula falsi (Illinois variant) on the signed distance of the deepest pair, with a
 *    bisection step when the interval does not shrink fast enough, or bisection only;
 *  - conservative advancement for fast bodies (motion bound |ds| + angle * radius larger than half
 *    their inscribed size): along the chord of the motion (centre of mass linear, orientation turning
 *    about one axis the way the angular velocity turns) the pair's distance d allows an advance of d / (bound of the approach speed) without
 *    contact; the time found is then checked on the real trajectory (re-simulated) and refined.
 * The sub-step ends at the time of contact with every new pair within [-eps_c, eps_c]; the pair is then
 * touching at the next sub-step's t0 and belongs to the contact solver.
 * [IMPL] A pair that got speculative points at the sub-step's t0 (slow, inelastic; marked by
 * src/contact/contact_speculative.c) belongs to the contact solver as well: the tests skip it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collision_world_internal.h"
#include "math/fminmax.h"

/* ---------------------------------------------------------------- state save / restore */

static bool reserve_states(ibWorld* w, ibCollisionWorld* cw)
{
	int32_t nb = w->bodyHigh, nw = ib_joints_warm_count(w);
	if (nb > cw->toiCapacity) {
		int32_t cap = nb + nb / 2 + 8;
		ibRigidState* p[3];
		for (int k = 0; k < 3; ++k) p[k] = ib_alloc(w, (size_t)cap * sizeof(ibRigidState));
		if (!p[0] || !p[1] || !p[2]) {
			for (int k = 0; k < 3; ++k) ib_free(w, p[k], (size_t)cap * sizeof(ibRigidState));
			return false;
		}
		ib_free(w, cw->toiStart, (size_t)cw->toiCapacity * sizeof(ibRigidState));
		ib_free(w, cw->toiEnd, (size_t)cw->toiCapacity * sizeof(ibRigidState));
		ib_free(w, cw->toiLow, (size_t)cw->toiCapacity * sizeof(ibRigidState));
		cw->toiStart = p[0];
		cw->toiEnd = p[1];
		cw->toiLow = p[2];
		cw->toiCapacity = cap;
	}
	if (nw > 0 && !ib_grow(w, (void**)&cw->toiWarm, &cw->toiWarmCapacity, nw, sizeof(ibVec3))) return false;
	return true;
}

static void save_states(ibWorld* w, ibRigidState* to)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) to[i] = w->bodies[i].st;
}

/* Restore the sub-step start and re-simulate tau: the state at t0 + tau. */
static void simulate_to(ibWorld* w, ibCollisionWorld* cw, ibStepPhaseFn* motion, double tau, double H)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse) continue;
		b->st = cw->toiStart[i];
		b->velVersion++;
		b->userPoseExact = false;
		ib_body_update_derived(b);
	}
	w->poseEpoch++;
	if (ib_joints_warm_count(w) > 0) ib_joints_warm_restore(w, cw->toiWarm, tau / H);
	w->stats = cw->toiStats;
	motion(w, tau);
	cw->stats.toiIterations++;
}


static double pair_distance(ibWorld* w, int32_t sa, int32_t sb, const ibRigidState* states)
{
	const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
	ibBody ba = states ? ib_body_at_state(&w->bodies[pa->body], &states[pa->body]) : w->bodies[pa->body];
	ibBody bb = states ? ib_body_at_state(&w->bodies[pb->body], &states[pb->body]) : w->bodies[pb->body];
	ibConvex ca, cb;
	if (!ib_shape_convex(&ba, pa, &ca) || !ib_shape_convex(&bb, pb, &cb)) return NAN;
	return ib_convex_query(&ca, &cb, NULL).distance;
}

/* ---------------------------------------------------------------- search on the real trajectory */

/* Time of contact in (lo, hi]: the state at lo has every new pair above -eps_c (distance of pair
 * (sa, sb) glo, NaN if unknown), at hi the pair penetrates (ghi < -eps_c). loStates: the saved states
 * at lo (NULL if none). Leaves the world at the returned time. */
static double search(ibWorld* w, ibCollisionWorld* cw, ibStepPhaseFn* motion, double H, double lo, double glo,
                     double hi, double ghi, int32_t sa, int32_t sb, const ibRigidState* loStates)
{
	const double eps = w->collisionSettings.contactTolerance;
	const bool interp = w->collisionSettings.toiMode == IB_TOI_INTERPOLATION;
	int lastSide = 0;
	double width = hi - lo, at = -1.0; /* at: the time the world was last re-simulated to */
	double depth = ghi;                /* the tracked pair's distance at hi (ghi is scaled by Illinois) */
	for (int it = 0; it < w->collisionSettings.maxToiIterations; ++it) {
		/* [IMPL] an interval shorter than a millionth of the step holds no time of contact: the
		 * separation jumps across [-eps_c, eps_c] there (a re-simulation does not repeat the run that
		 * found the penetration: the contact loops start from the state the last run left, and a pile's
		 * loops end by stalling). rain1000 bisected such an interval to the iteration cap, 35 of its 45
		 * re-simulations of the whole pile over 300 steps. */
		if (!(hi - lo > 1e-6 * H)) break;
		double tau = 0.5 * (lo + hi);
		if (interp && isfinite(glo) && isfinite(ghi) && glo > ghi) {
			double t = lo + (hi - lo) * glo / (glo - ghi);
			double m = 0.01 * (hi - lo);
			tau = ib_fmin(ib_fmax(t, lo + m), hi - m);
		}
		simulate_to(w, cw, motion, tau, H);
		at = tau;
		ibPenetration p;
		if (!ib_collision_penetration(w, &p)) break;
		if (p.minSeparation < -eps) {
			if (p.shapeA != sa || p.shapeB != sb) { /* another pair hits earlier: its distance at lo, where known */
				sa = p.shapeA;
				sb = p.shapeB;
				glo = loStates ? pair_distance(w, sa, sb, loStates) : NAN;
			} else if (lastSide == 1) {
				glo *= 0.5; /* Illinois: the other end was kept twice */
			}
			hi = tau;
			ghi = depth = p.minSeparation;
			lastSide = 1;
		} else if (p.minSeparation <= eps) {
			return tau;
		} else {
			double g = pair_distance(w, sa, sb, NULL);
			/* [IMPL] close enough for the next sub-step's speculative points (speculativeApproach): they
			 * stop the approach at its end, so the rest of the bracket need not be re-simulated */
			if (g <= ib_contacts_speculative_window(w, sa, sb, H - tau)) return tau;
			lo = tau;
			glo = g;
			loStates = NULL; /* (the states at the new lo are not saved) */
			/* [IMPL] farther apart than the pair can close before hi: the separation is not continuous
			 * in the time (a re-simulation does not repeat the run of hi: its contact loops start where
			 * the last run's ended, and a pile's loops end by stalling), the bracket holds no contact.
			 * rain1000: a cube on the ground at 1.1 cm re-simulated up to 1e-6 of the step short of
			 * the run that had it 1.1 cm deep, 7 re-simulations of the whole pile. */
			if (isfinite(g) && isfinite(depth) && g - depth > ib_contacts_closing_bound(w, sa, sb, hi - lo)) break;
			if (lastSide == -1 && isfinite(ghi)) ghi *= 0.5;
			lastSide = -1;
		}
		/* bisection when interpolation does not at least halve the interval every second iteration */
		if ((it & 1) && hi - lo > 0.5 * width) glo = NAN;
		if (it & 1) width = hi - lo;
	}
	/* not converged (iteration cap, or a bracket too short to hold a time of contact): end at the last
	 * separated time, re-simulated unless the world is already there */
	if (lo > 0.0) {
		if (at != lo) simulate_to(w, cw, motion, lo, H);
		return lo;
	}
	if (at != hi) simulate_to(w, cw, motion, hi, H);
	return hi;
}

/* ---------------------------------------------------------------- conservative advancement */

static double shape_bound_radius(const ibShape* s)
{
	switch (s->type) {
	case IB_SHAPE_SPHERE: return s->g.sphere.radius;
	case IB_SHAPE_BOX: return ibLength(s->g.box.halfExtents);
	case IB_SHAPE_CAPSULE: return s->g.capsule.halfLength + s->g.capsule.radius;
	case IB_SHAPE_CYLINDER: return hypot(s->g.cylinder.halfLength, s->g.cylinder.radius);
	default: {
		double r = 0.0;
		for (int i = 0; i < s->meshVertexCount; ++i) r = ib_fmax(r, ibLength(s->meshVertices[i]));
		return r;
	}
	}
}

static double shape_inner_size(const ibShape* s)
{
	switch (s->type) {
	case IB_SHAPE_SPHERE: return s->g.sphere.radius;
	case IB_SHAPE_BOX: return ib_fmin(s->g.box.halfExtents.x, ib_fmin(s->g.box.halfExtents.y, s->g.box.halfExtents.z));
	case IB_SHAPE_CAPSULE: return s->g.capsule.radius;
	case IB_SHAPE_CYLINDER: return ib_fmin(s->g.cylinder.radius, s->g.cylinder.halfLength);
	default: {
		ibVec3 lo = {INFINITY, INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY, -INFINITY};
		for (int i = 0; i < s->meshVertexCount; ++i) {
			ibVec3 v = s->meshVertices[i];
			lo = (ibVec3){ib_fmin(lo.x, v.x), ib_fmin(lo.y, v.y), ib_fmin(lo.z, v.z)};
			hi = (ibVec3){ib_fmax(hi.x, v.x), ib_fmax(hi.y, v.y), ib_fmax(hi.z, v.z)};
		}
		ibVec3 d = ibSub(hi, lo);
		return s->meshVertexCount > 0 ? 0.5 * ib_fmin(d.x, ib_fmin(d.y, d.z)) : 0.0;
	}
	}
}

/* Radius about the centre of mass enclosing all shapes of a body, and its smallest inscribed size. */
static void body_sizes(const ibWorld* w, const ibBody* b, double* radius, double* inner)
{
	*radius = 0.0;
	*inner = INFINITY;
	for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) {
		const ibShape* sh = &w->shapes[s];
		*radius = ib_fmax(*radius, ibLength(ibSub(sh->localPosition, b->localCom)) + shape_bound_radius(sh));
		*inner = ib_fmin(*inner, shape_inner_size(sh));
	}
}

/* Rotation of the chord from s0 to s1: axis and angle in [0, 2 pi) of q1 q0^-1, turning the way the
 * angular velocity at s0 turns (a slerp would take the short way round for more than pi per step). */
static void chord_rotation(const ibRigidState* s0, const ibRigidState* s1, double T, ibVec3* axis, double* angle)
{
	ibQuat d = ibQuatMul(s1->q, ibQuatConj(s0->q));
	if (d.w < 0.0) d = (ibQuat){-d.w, -d.x, -d.y, -d.z};
	ibVec3 v = {d.x, d.y, d.z};
	double sn = ibLength(v);
	if (sn < 1e-300) {
		*axis = (ibVec3){1, 0, 0};
		*angle = 0.0;
		return;
	}
	*axis = ibScale(1.0 / sn, v);
	*angle = 2.0 * atan2(sn, d.w);
	/* the same rotation the long way round, but only when the body can turn by more than pi over the
	 * chord: for a resting body the short way is right whatever the sign of its tiny angular velocity */
	if (ibLength(s0->w) * T > 3.14159265358979323846 && ibDot(*axis, s0->w) < 0.0) {
		*axis = ibNeg(*axis);
		*angle = 2.0 * 3.14159265358979323846 - *angle;
	}
}

static double chord_angle(const ibRigidState* s0, const ibRigidState* s1, double T)
{
	ibVec3 a;
	double t;
	chord_rotation(s0, s1, T, &a, &t);
	return t;
}

/* Body b on the chord from state s0 to s1 at the fraction u. */
static ibBody body_on_chord(const ibBody* b, const ibRigidState* s0, const ibRigidState* s1, double T, double u)
{
	ibRigidState st = *s0;
	st.s = ibMulAdd(s0->s, u, ibSub(s1->s, s0->s));
	ibVec3 a;
	double t;
	chord_rotation(s0, s1, T, &a, &t);
	double hs = sin(0.5 * u * t);
	st.q = ibQuatNormalize(ibQuatMul((ibQuat){cos(0.5 * u * t), hs * a.x, hs * a.y, hs * a.z}, s0->q));
	return ib_body_at_state(b, &st);
}

typedef struct Chord {
	const ibRigidState *s0, *s1; /* at times t0, t1 */
	double t0, t1;
} Chord;

static bool collect_proxy(void* ctx, int32_t proxy)
{
	ibWorld* w = ctx;
	ibCollisionWorld* cw = w->collision;
	if (!ib_grow(w, (void**)&cw->caProxies, &cw->caProxyCapacity, cw->caProxyCount + 1, sizeof(int32_t))) return false;
	cw->caProxies[cw->caProxyCount++] = proxy;
	return true;
}

/* First time on the chord at which shapes sa (body ia) and sb (body ib) come within eps_c; c->t1 if none. */
static double ca_pair(ibWorld* w, const Chord* c, int32_t sa, int32_t sb, double tMax)
{
	const double eps = w->collisionSettings.contactTolerance, T = c->t1 - c->t0;
	const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
	int32_t ia = pa->body, ib = pb->body;
	const ibBody *ba = &w->bodies[ia], *bb = &w->bodies[ib];
	double ra, rb, inner;
	body_sizes(w, ba, &ra, &inner);
	body_sizes(w, bb, &rb, &inner);
	ibVec3 dsa = ibSub(c->s1[ia].s, c->s0[ia].s), dsb = ibSub(c->s1[ib].s, c->s0[ib].s);
	double bound = ibLength(ibSub(dsa, dsb)) + chord_angle(&c->s0[ia], &c->s1[ia], T) * ra +
	               chord_angle(&c->s0[ib], &c->s1[ib], T) * rb; /* over the whole chord */
	if (!(bound > 0.0)) return c->t1;
	double u = 0.0, uMax = (tMax - c->t0) / T;
	ibGjkCache cache = {0};
	for (int it = 0; it < 100; ++it) {
		ibBody xa = body_on_chord(ba, &c->s0[ia], &c->s1[ia], T, u), xb = body_on_chord(bb, &c->s0[ib], &c->s1[ib], T, u);
		ibConvex ca, cb;
		if (!ib_shape_convex(&xa, pa, &ca) || !ib_shape_convex(&xb, pb, &cb)) return c->t1;
		double d = ib_convex_query(&ca, &cb, &cache).distance;
		if (!isfinite(d)) return c->t1;
		if (d <= eps) return it == 0 ? c->t1 : c->t0 + u * T; /* within eps at the start: the contact solver's */
		u += (d - 0.5 * eps) / bound;
		if (u >= uMax) return c->t1;
	}
	return c->t1;
}

/* Earliest conservative-advancement time of contact over the fast bodies on the chord. */
static double ca_earliest(ibWorld* w, const Chord* c, int32_t* outA, int32_t* outB)
{
	ibCollisionWorld* cw = w->collision;
	double best = c->t1;
	*outA = *outB = -1;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type == IB_BODY_STATIC || b->shapeCount == 0 || b->sleeping) continue; /* dynamic or kinematic, moving */
		double radius, inner;
		body_sizes(w, b, &radius, &inner);
		double rot = chord_angle(&c->s0[i], &c->s1[i], c->t1 - c->t0) * radius;
		double motion = ibLength(ibSub(c->s1[i].s, c->s0[i].s)) + rot;
		if (!(motion > 0.5 * inner)) continue; /* the discrete penetration test sees it */
		ibBody b0 = ib_body_at_state(b, &c->s0[i]), b1 = ib_body_at_state(b, &c->s1[i]);
		for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) {
			const ibShape* sh = &w->shapes[s];
			ibAABB sweep = ib_aabb_fatten(ib_aabb_union(ib_shape_world_aabb(&b0, sh), ib_shape_world_aabb(&b1, sh)),
			                              rot + w->collisionSettings.contactTolerance);
			if (!ibVec3_IsFinite(sweep.lo) || !ibVec3_IsFinite(sweep.hi)) continue;
			cw->caProxyCount = 0;
			ib_broadphase_query(cw->bp, sweep, collect_proxy, w);
			for (int32_t k = 0; k < cw->caProxyCount; ++k) {
				int32_t o = ib_broadphase_user_id(cw->bp, cw->caProxies[k]);
				const ibShape* os = &w->shapes[o];
				if (os->body == i || !ib_collision_bodies_may_collide(w, i, os->body)) continue;
				if (!ib_is_dynamic(b) && !ib_is_dynamic(&w->bodies[os->body])) continue;
				if (!ib_collision_filter_test((ibCollisionFilter){sh->filter.categoryBits, sh->filter.maskBits,
				                                                  sh->filter.groupIndex},
				                              (ibCollisionFilter){os->filter.categoryBits, os->filter.maskBits,
				                                                  os->filter.groupIndex}))
					continue;
				if (ib_collision_was_touching(w, s, o)) continue;
				if (cw->specCount > 0 && ib_toi_is_speculative(cw, ib_pair_key(ib_collision_shape_proxy(w, s), cw->caProxies[k])))
					continue; /* left to its speculative points, as a touching pair */
				double t = ca_pair(w, c, s, o, best);
				if (t < best) {
					best = t;
					*outA = s;
					*outB = o;
				}
			}
		}
	}
	return best;
}

/* ---------------------------------------------------------------- speculative candidates */

typedef struct NearCtx {
	ibWorld* w;
	const double* motion;
	ibNearPairFn* fn;
	void* ctx;
} NearCtx;

static bool near_candidate(void* vctx, int32_t query, int32_t proxy)
{
	NearCtx* x = vctx;
	ibWorld* w = x->w;
	int32_t s = w->collision->nearShapes[query];
	int32_t o = ib_broadphase_user_id(w->collision->bp, proxy);
	const ibShape *sh = &w->shapes[s], *os = &w->shapes[o];
	int32_t i = sh->body, j = os->body;
	if (j == i || !ib_collision_bodies_may_collide(w, i, j)) return true;
	const ibBody* ob = &w->bodies[j];
	double mj = ob->type == IB_BODY_STATIC || ob->sleeping ? 0.0 : x->motion[j];
	if (mj > x->motion[i] || (mj == x->motion[i] && j < i)) return true; /* found from body j */
	if (!ib_collision_filter_test((ibCollisionFilter){sh->filter.categoryBits, sh->filter.maskBits, sh->filter.groupIndex},
	                              (ibCollisionFilter){os->filter.categoryBits, os->filter.maskBits, os->filter.groupIndex}))
		return true;
	if (ib_collision_was_touching(w, s, o)) return true;
	return x->fn(w, x->ctx, s, o);
}

bool ib_collision_near_pairs(ibWorld* w, const double* motion, ibNearPairFn* fn, void* ctx)
{
	ibCollisionWorld* cw = w->collision;
	if (!cw || !cw->bp) return true;
	/* one query box per shape of a moving body; all answered by one batched query (a sweep on the SAP
	 * instead of one brute-force scan per box), in the order of the shapes */
	int32_t n = 0;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type == IB_BODY_STATIC || b->sleeping || b->shapeCount == 0 || !(motion[i] > 0.0)) continue;
		for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) {
			/* the pair's margin is motion[i] + motion[j] <= 2 max(motion[i], motion[j]): the body that
			 * moves more finds it with its box fattened by twice its own bound (ties: lower index) */
			ibAABB box = ib_aabb_fatten(ib_shape_world_aabb(b, &w->shapes[s]), 2.0 * motion[i]);
			if (!ibVec3_IsFinite(box.lo) || !ibVec3_IsFinite(box.hi)) continue;
			if (!ib_grow(w, (void**)&cw->nearBoxes, &cw->nearBoxCapacity, n + 1, sizeof(ibAABB)) ||
			    !ib_grow(w, (void**)&cw->nearShapes, &cw->nearShapeCapacity, n + 1, sizeof(int32_t)))
				return false;
			cw->nearBoxes[n] = box;
			cw->nearShapes[n++] = s;
		}
	}
	NearCtx x = {w, motion, fn, ctx};
	return ib_broadphase_query_batch(cw->bp, cw->nearBoxes, n, near_candidate, &x);
}

bool ib_toi_unchecked(const ibWorld* w) { return w->collision && w->collision->toiUnchecked; }

bool ib_toi_checked(const ibWorld* w) { return w->collision && w->collision->toiChecked; }

/* ---------------------------------------------------------------- pairs left to speculative points */

bool ib_toi_mark_speculative(ibWorld* w, int32_t shapeA, int32_t shapeB)
{
	ibCollisionWorld* cw = w->collision;
	if (!cw) return true;
	int32_t pa = ib_collision_shape_proxy(w, shapeA), pb = ib_collision_shape_proxy(w, shapeB);
	if (pa == IB_BP_NULL || pb == IB_BP_NULL) return true;
	if (!ib_grow(w, (void**)&cw->specKeys, &cw->specCapacity, cw->specCount + 1, sizeof(uint64_t))) return false;
	cw->specKeys[cw->specCount++] = ib_pair_key(pa, pb);
	cw->specSorted = false;
	return true;
}

static int cmp_key(const void* a, const void* b)
{
	uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

bool ib_toi_is_speculative(ibCollisionWorld* cw, uint64_t key)
{
	if (cw->specCount == 0) return false;
	if (!cw->specSorted) {
		qsort(cw->specKeys, (size_t)cw->specCount, sizeof(uint64_t), cmp_key);
		cw->specSorted = true;
	}
	int32_t lo = 0, hi = cw->specCount;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (cw->specKeys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cw->specCount && cw->specKeys[lo] == key;
}

/* ---------------------------------------------------------------- one sub-step */

/* The world is at t0 + H after the motion. Returns the end of the sub-step (H if no time of contact)
 * and leaves the world there. */
static double find_contact_time(ibWorld* w, ibCollisionWorld* cw, ibStepPhaseFn* motion, double H)
{
	const double eps = w->collisionSettings.contactTolerance;
	const ibCollisionSettings* cs = &w->collisionSettings;
	ibPenetration pen;
	if (!ib_collision_penetration(w, &pen)) return H;
	if (pen.minSeparation < 0.0) cw->stats.maxPenetration = ib_fmax(cw->stats.maxPenetration, -pen.minSeparation);
	bool deep = cs->toiMode != IB_TOI_OFF && pen.minSeparation < -eps;
	if (cs->conservativeAdvancement) {
		save_states(w, cw->toiEnd);
		Chord c = {cw->toiStart, cw->toiEnd, 0.0, H};
		double lo = 0.0, glo = NAN;
		int32_t la = -1, lb = -1;
		for (int it = 0; it < cs->maxToiIterations; ++it) {
			int32_t sa, sb;
			double t = ca_earliest(w, &c, &sa, &sb);
			if (t >= H) break;
			if (it == 0) cw->stats.caEvents++;
			simulate_to(w, cw, motion, t, H);
			ibPenetration p;
			if (!ib_collision_penetration(w, &p)) return t;
			if (p.minSeparation < -eps) {
				if (cs->toiMode == IB_TOI_OFF) return t;
				const ibRigidState* at = lo > 0.0 ? cw->toiLow : cw->toiStart;
				if (p.shapeA != la || p.shapeB != lb) glo = pair_distance(w, p.shapeA, p.shapeB, at);
				return search(w, cw, motion, H, lo, glo, t, p.minSeparation, p.shapeA, p.shapeB, at);
			}
			double d = pair_distance(w, sa, sb, NULL);
			if (!(d > eps)) return t; /* at contact on the real trajectory */
			/* the real trajectory lags the chord: continue along the chord from here */
			lo = t;
			glo = d;
			la = sa;
			lb = sb;
			save_states(w, cw->toiLow);
			c = (Chord){cw->toiLow, cw->toiEnd, t, H};
		}
		if (lo > 0.0) { /* the chord search ended short of H: the world is at lo */
			if (deep) {
				/* a slow pair penetrates at H: search between lo and H, interpolating from its distance at lo
				 * [IMPL] (bisected while that was left unknown: rain1000 re-simulated its 1000 cubes 6 times
				 * per such search to bracket a cube that hit another at 10 m/s) */
				simulate_to(w, cw, motion, H, H);
				double g = pair_distance(w, pen.shapeA, pen.shapeB, cw->toiLow);
				return search(w, cw, motion, H, lo, g, H, pen.minSeparation, pen.shapeA, pen.shapeB, cw->toiLow);
			}
			return lo;
		}
	}
	if (!deep) return H;
	double glo = pair_distance(w, pen.shapeA, pen.shapeB, cw->toiStart);
	return search(w, cw, motion, H, 0.0, glo, H, pen.minSeparation, pen.shapeA, pen.shapeB, cw->toiStart);
}

void ib_toi_step(ibWorld* w, double h, ibStepPhaseFn* atT0, ibStepPhaseFn* motion)
{
	ibCollisionWorld* cw = ib_collision_world(w);
	if (cw) {
		cw->stats.toiSubsteps = cw->stats.toiIterations = cw->stats.caEvents = 0;
		cw->stats.firstToi = -1.0;
		cw->stats.maxPenetration = 0.0;
	}
	const ibCollisionSettings* cs = &w->collisionSettings;
	double done = 0.0, remaining = h;
	bool searching = cs->toiMode != IB_TOI_OFF || cs->conservativeAdvancement;
	for (int sub = 0;; ++sub) {
		/* past the sub-step cap nothing checks the rest of the step: the contact solver then takes the
		 * pairs that can meet in it as speculative contacts (src/contact/contact_speculative.c) */
		if (cw) {
			cw->toiUnchecked = searching && sub >= cs->maxToiSubsteps;
			cw->toiChecked = searching && sub < cs->maxToiSubsteps && cs->speculativeApproach;
			cw->specCount = 0; /* the marks of the last sub-step's t0 */
		}
		atT0(w, remaining);
		if (cw) cw->toiUnchecked = cw->toiChecked = false;
		bool toi = searching && sub < cs->maxToiSubsteps && cw && cw->bp && w->shapeCount > 1 && reserve_states(w, cw);
		if (!toi) {
			motion(w, remaining);
			return;
		}
		save_states(w, cw->toiStart);
		if (ib_joints_warm_count(w) > 0) ib_joints_warm_save(w, cw->toiWarm);
		cw->toiStats = w->stats;
		motion(w, remaining);
		double tau = find_contact_time(w, cw, motion, remaining);
		if (!(tau < remaining)) return;
		cw->stats.toiSubsteps++;
		if (cw->stats.firstToi < 0.0) cw->stats.firstToi = done + tau;
		done += tau;
		remaining -= tau;
		if (remaining <= 1e-12 * h) return;
	}
}
