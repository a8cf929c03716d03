/* Speculative contact points ([IMPL], beyond the thesis; docs/contacts.md "Box piles at 60 Hz").
 *
 * The contact region of a touching pair holds only the points within eps_c at t0. A box that lands
 * tilted on another box or on the ground touches it at one corner or one edge; in a 1/60 s step it
 * turns about that point and its other corners go into the other shape, unseen: the pair was
 * touching at t0, so the time-of-contact test (src/collision/toi.c) leaves it to the contact solver,
 * and the solver knew one point. rain1000 sank by 0.5 m this way (and a 20-cube rain by 0.6 m).
 *
 * So every touching pair of convex shapes, or of a convex shape and a triangle mesh (one region per
 * triangle; until session 23 mesh pairs had none, and a cylinder landing on its rim on a mesh was
 * thrown up with hundreds of J), is queried once more with a larger tolerance, the distance its points
 * can close in this step (relative speed plus angular speed times radius, times h, twice, at most a
 * quarter of the smaller shape's largest half size), and the region's points that are apart by more than
 * eps_c become speculative contact joints (ibContactRow.spec): never collisions, no warm start, and
 * a contact joint only acts on them where its predicted gap at t0+h is negative (eq. 5.11 does that
 * by itself: it pushes while g < 0 and takes back only what it pushed). In the velocity correction at
 * t0+h a speculative point that is still apart by more than eps_c is idle (contact_joint.c).
 * Points of a deep penetration that the eps_c region leaves out (it keeps the points within ~eps_c of
 * the deepest one) are added as ordinary points.
 *
 * In a sub-step that no time-of-contact test checks (toi.c's sub-step cap reached, or
 * maxToiSubsteps = 0), the pairs that are not touching yet but can meet within their motion bounds
 * (ib_collision_near_pairs) get speculative points as well.
 *
 * [IMPL] In a sub-step that the time-of-contact test checks (ib_contacts_speculative_near, before the
 * collisions), so do the approaching pairs with restitution 0 whose approach bound over the step
 * (relative speed, angular speeds times radii, the gravity and recovery speeds a step can add) is at
 * most the smaller shape's inner half size: the region at that tolerance holds the points that can
 * meet in the step. Their points (spec = 3) are collisions at t0 down to the approach that closes
 * their gap in h (contact_collide.c), so the impact and what the propagation rounds pass on to the
 * neighbours happen at t0, as after a time of contact, and then contact joints. The time of contact
 * (§4.1) instead re-simulates the whole world to end the sub-step at the contact: in rain1000 a cube
 * landed in nearly every sub-step, 8 sub-steps (the cap) and ~30 re-simulations of the 1000 bodies
 * per step. Such a pair is marked (ib_toi_mark_speculative): the penetration tests and the
 * conservative advancement of the sub-step leave it to the contact solver as a touching pair; what
 * the prediction misses (a corner that turns into the other shape) is a penetration of a touching
 * pair at the next t0, removed at the recovery speed. Elastic pairs, fast pairs (a bullet, a fast
 * tumbling box) and pairs the region did not find keep the time-of-contact search. */
#include <math.h>

#include "collision/collision_world.h"
#include "contact/contact_internal.h"

/* Smallest (lo) and largest (hi) half size of a shape (m); +inf for a plane and a triangle mesh. For other shapes from the
 * world AABB: a quarter of its smallest extent, half its largest. */
static void half_sizes(const ibWorld* w, const ibShape* s, double* lo, double* hi)
{
	switch (s->type) {
	case IB_SHAPE_SPHERE: *lo = *hi = s->g.sphere.radius; return;
	case IB_SHAPE_BOX: {
		ibVec3 e = s->g.box.halfExtents;
		*lo = ib_fmin(e.x, ib_fmin(e.y, e.z));
		*hi = ib_fmax(e.x, ib_fmax(e.y, e.z));
		return;
	}
	case IB_SHAPE_CAPSULE: *lo = s->g.capsule.radius, *hi = s->g.capsule.radius + s->g.capsule.halfLength; return;
	case IB_SHAPE_CYLINDER:
		*lo = ib_fmin(s->g.cylinder.radius, s->g.cylinder.halfLength);
		*hi = ib_fmax(s->g.cylinder.radius, s->g.cylinder.halfLength);
		return;
	case IB_SHAPE_PLANE:
	case IB_SHAPE_TRIMESH: *lo = *hi = INFINITY; return; /* a mesh: as a plane, the other shape decides */
	default: {
		ibAABB a = ib_shape_world_aabb(&w->bodies[s->body], s);
		ibVec3 d = ibSub(a.hi, a.lo);
		*lo = 0.25 * ib_fmin(d.x, ib_fmin(d.y, d.z));
		*hi = 0.5 * ib_fmax(d.x, ib_fmax(d.y, d.z));
		return;
	}
	}
}

static double inner_size(const ibWorld* w, const ibShape* s)
{
	double lo, hi;
	half_sizes(w, s, &lo, &hi);
	return lo;
}

static double outer_size(const ibWorld* w, const ibShape* s)
{
	double lo, hi;
	half_sizes(w, s, &lo, &hi);
	return hi;
}

/* Radius about the body's centre of mass that encloses the shape (m): the offset of the shape's
 * origin from the centre of mass plus the radius about that origin for the primitive shapes (a
 * turned box's world AABB overestimated it by up to 1.7 times: 1.5 m for a unit cube instead of
 * 0.87, which made a tumbling cube of rain1000 "fast", left to the time-of-contact search); the
 * world AABB's for the others. */
static double shape_radius(const ibWorld* w, const ibShape* s)
{
	const ibBody* b = &w->bodies[s->body];
	double off = ibLength(ibSub(s->localPosition, b->localCom));
	switch (s->type) {
	case IB_SHAPE_SPHERE: return off + s->g.sphere.radius;
	case IB_SHAPE_BOX: return off + ibLength(s->g.box.halfExtents);
	case IB_SHAPE_CAPSULE: return off + s->g.capsule.halfLength + s->g.capsule.radius;
	case IB_SHAPE_CYLINDER: return off + hypot(s->g.cylinder.halfLength, s->g.cylinder.radius);
	default: {
		ibAABB a = ib_shape_world_aabb(b, s);
		ibVec3 c = ibScale(0.5, ibAdd(a.lo, a.hi)), e = ibScale(0.5, ibSub(a.hi, a.lo));
		return ibLength(ibSub(c, b->st.s)) + ibLength(e);
	}
	}
}

/* Relative speed of the pair's bodies plus their angular speeds times radii (m/s): a bound of the
 * approach of any two of their points at the current velocities. */
static double body_reach(const ibWorld* w, const ibShape* pa, const ibShape* pb)
{
	const ibBody *x = &w->bodies[pa->body], *y = &w->bodies[pb->body];
	double s = ibLength(ibSub(x->st.v, y->st.v)), wa = ibLength(x->st.w), wb = ibLength(y->st.w);
	if (wa > 0.0) s += wa * shape_radius(w, pa);
	if (wb > 0.0) s += wb * shape_radius(w, pb);
	return s;
}

/* How far two points of the pair can approach each other in h (m), doubled; 0 if they cannot. */
static double closing_bound(const ibWorld* w, const ibShape* pa, const ibShape* pb, double h)
{
	const ibBody *x = &w->bodies[pa->body], *y = &w->bodies[pb->body];
	double s = ibLength(ibSub(x->st.v, y->st.v)) + ibLength(w->gravity) * h + IB_CONTACT_RECOVERY_SPEED;
	double wa = ibLength(x->st.w), wb = ibLength(y->st.w);
	if (wa > 0.0) s += wa * shape_radius(w, pa);
	if (wb > 0.0) s += wb * shape_radius(w, pb);
	return 2.0 * s * h;
}

/* [IMPL] A flat face contact: >= 3 points whose gaps agree within eps_c / 10 (parallel faces; a face
 * tilted by more keeps its far corners out of the eps_c region, and they are what the speculative
 * region adds), none deeper than eps_c, of two bodies at rest relative to each other after the
 * collisions (relative speed plus angular speeds times radii, times h, twice, within eps_c). Its
 * eps_c region is the whole region: the gap over the faces stays uniform, and the region at a larger
 * tolerance holds the same points. pyramid20 re-collided its ~400 face pairs with a 4 cm margin
 * (gravity and recovery slack) in every step for nothing. */
static bool flat_resting_face(const ibWorld* w, const ibContactStore* cs, int32_t first, int32_t last, const ibShape* pa,
                              const ibShape* pb, double h, double eps)
{
	if (last - first < 3) return false;
	double lo = INFINITY, hi = -INFINITY;
	for (int32_t k = first; k < last; ++k) lo = ib_fmin(lo, cs->pts[k].gap), hi = ib_fmax(hi, cs->pts[k].gap);
	if (lo < -eps || hi - lo > 0.1 * eps) return false;
	return 2.0 * body_reach(w, pa, pb) * h <= eps;
}

/* Per-body bounds over h (m) for the near-pair query, 0 for bodies that do not move.
 * - motion bound (reach = false): speed plus angular speed times radius, plus the gravity and recovery speeds
 *   a step can add to a dynamic body, times h, with a safety factor 1.5;
 * - [IMPL] reach (reach = true, the checked sub-step): (|v| + |w| r) h + (|g| h + recovery speed) h / 2.
 *   near_pair's margin there is half the closing bound, at most q_a + q_b + (|g| h + recovery) h with
 *   q = (|v| + |w| r) h, so the body of the larger reach, its box fattened by twice its reach, finds every
 *   pair that can have points within the margin. The motion bound fattened a resting cube's box by 5.8 cm
 *   at 60 Hz instead of 1.9. For dynamic bodies the order of the two bounds is the same (both grow with
 *   |v| + |w| r), so each pair is still found from the same body, in the same order. */
static bool body_bounds(ibWorld* w, ibContactStore* cs, double h, bool reach)
{
	if (!ib_grow(w, (void**)&cs->motion, &cs->motionCapacity, w->bodyHigh + 1, sizeof(double))) return false;
	const double add = (ibLength(w->gravity) * h + IB_CONTACT_RECOVERY_SPEED) * h;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		cs->motion[i] = 0.0;
		if (!b->inUse || b->type == IB_BODY_STATIC || b->sleeping) continue;
		double r = 0.0;
		for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) r = ib_fmax(r, shape_radius(w, &w->shapes[s]));
		double q = (ibLength(b->st.v) + ibLength(b->st.w) * r) * h;
		cs->motion[i] = reach ? q + 0.5 * add : 1.5 * (ib_is_dynamic(b) ? q + add : q);
	}
	return true;
}

/* [IMPL] True if the two shapes are farther apart than d: their bounding spheres (shape_radius about their
 * bodies' centres of mass) or their world boxes. A pair the batched query finds (fattened boxes overlap) is mostly
 * farther apart than its margin (rain1000: 537 000 of 645 000 over 150 steps), and for these the box-box
 * separating-axis test was the cost; these tests leave 3 of 8 of them to it. A pair they reject has no point
 * within d: the region at that tolerance is empty either way. */
static bool apart_by(const ibWorld* w, const ibShape* pa, const ibShape* pb, double d)
{
	const ibBody *x = &w->bodies[pa->body], *y = &w->bodies[pb->body];
	double reach = shape_radius(w, pa) + shape_radius(w, pb) + d; /* spheres about the centres of mass */
	if (ibLengthSq(ibSub(x->st.s, y->st.s)) > reach * reach) return true;
	return !ib_aabb_overlap(ib_aabb_fatten(ib_shape_world_aabb(x, pa), d), ib_shape_world_aabb(y, pb));
}

/* a pair whose speculative region was queried: its end region is checked after the position loop */
static bool note_end_pair(ibWorld* w, ibContactStore* cs, int32_t s1, int32_t s2, int32_t first, int32_t last, int32_t from, int32_t to)
{
	/* only polyhedra (boxes, hulls): their edges cross, and a crossing is no material point; round shapes' rows
	 * follow their cores (contact_round.c) */
	const ibShapeType t1 = w->shapes[s1].type, t2 = w->shapes[s2].type;
	if (!((t1 == IB_SHAPE_BOX || t1 == IB_SHAPE_HULL) && (t2 == IB_SHAPE_BOX || t2 == IB_SHAPE_HULL))) return true;
	if (!ib_grow(w, (void**)&cs->endPairs, &cs->endPairCapacity, IB_END_PAIR * (cs->endPairCount + 1), sizeof(int32_t))) return false;
	int32_t* e = cs->endPairs + IB_END_PAIR * cs->endPairCount++;
	e[0] = s1, e[1] = s2, e[2] = first, e[3] = last, e[4] = from, e[5] = to;
	return true;
}

typedef struct NearCtx {
	ibContactStore* cs;
	double eps;
	bool checked; /* the sub-step is checked for times of contact: slow inelastic pairs only, marked */
	double h;     /* step length (approach bound) */
} NearCtx;

/* A pair apart by more than eps_c at t0 that can meet within the step: its region at the tolerance of
 * the two motion bounds (at most half the smaller inner size) becomes speculative points; in a checked
 * sub-step at the tolerance of its approach bound, if that is at most the smaller inner size, marked. */
static bool near_pair(ibWorld* w, void* ctx, int32_t sa, int32_t sb)
{
	NearCtx* x = ctx;
	ibContactStore* cs = x->cs;
	const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
	double cap = 0.5 * ib_fmin(inner_size(w, pa), inner_size(w, pb));
	double margin = ib_fmin(cs->motion[pa->body] + cs->motion[pb->body], cap);
	if (x->checked) { /* only where the region holds every point that can meet in the step; the rest: TOI */
		margin = 0.5 * closing_bound(w, pa, pb, x->h);
		if (margin > 2.0 * cap) return true;
	}
	if (!(margin > x->eps) || apart_by(w, pa, pb, margin)) return true;
	ibContactPair pr;
	pr.shapeA = sa, pr.shapeB = sb, pr.bodyA = pa->body, pr.bodyB = pb->body;
	ibManifold m[IB_PAIR_MANIFOLDS];
	int mc = ib_shape_pair_collide(&w->bodies[pa->body], pa, &w->bodies[pb->body], pb, margin, NULL, m, IB_PAIR_MANIFOLDS);
	if (mc < 1) return true;
	int32_t first = cs->count;
	for (int q = 0; q < mc; ++q) { /* one per triangle of a mesh */
		pr.manifold = m[q];
		if (!ib_contacts_add_pair(w, cs, &pr)) return false;
	}
	if (x->checked) {
		if (cs->count > first && cs->pts[first].e > 0.0) cs->count = first; /* elastic: the TOI's collision */
		/* only a pair that closes its gap in the step at its t0 velocities, with the slack of gravity
		 * and of half the recovery speed (a neighbour's push): resting neighbours a little apart
		 * (pyramid20, 2 cm) get no rows (with them the pyramid moved by 1.3 cm instead of 0.9 mm); what
		 * approaches faster is the time-of-contact search's */
		bool closes = false;
		double slack = (0.5 * ibLength(w->gravity) * x->h + 0.5 * IB_CONTACT_RECOVERY_SPEED) * x->h + x->eps;
		double reach = body_reach(w, pa, pb) * x->h;
		for (int32_t k = first; k < cs->count && !closes; ++k) {
			const ibContactRow* c = &cs->pts[k];
			closes = c->gap + ibDot(ib_contact_rel_velocity(w, c), c->n) * x->h <= slack || c->gap <= reach + slack;
		}
		if (!closes) cs->count = first;
		if (cs->count == first) return true;
		if (!ib_toi_mark_speculative(w, sa, sb)) return false;
	}
	if (!note_end_pair(w, cs, sa, sb, first, cs->count, cs->count, cs->count)) return false;
	for (int32_t k = first; k < cs->count; ++k) cs->pts[k].spec = cs->pts[k].gap > x->eps ? (x->checked ? 3 : 1) : 0;
	for (int32_t k = first; k < cs->count; ++k) { /* speculative pairs: points solved singly, no face block */
		cs->pts[k].gIdx = 0;
		cs->pts[k].gCount = 1;
	}
	return true;
}

double ib_contacts_closing_bound(const ibWorld* w, int32_t sa, int32_t sb, double h)
{
	return closing_bound(w, &w->shapes[sa], &w->shapes[sb], h);
}

double ib_contacts_speculative_window(const ibWorld* w, int32_t sa, int32_t sb, double h)
{
	const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
	if (!w->collisionSettings.speculativeApproach || !(h > 0.0)) return 0.0;
	if (pa->type == IB_SHAPE_TRIMESH || pb->type == IB_SHAPE_TRIMESH) return 0.0;
	if (ib_contact_pair_restitution(w, pa, pb) > 0.0) return 0.0;
	double cap = 0.5 * ib_fmin(inner_size(w, pa), inner_size(w, pb));
	if (0.5 * closing_bound(w, pa, pb, h) > 2.0 * cap) return 0.0; /* fast: near_pair leaves it to the search */
	/* near_pair's "closes" by reach, without the slack: the window stays inside its region */
	return body_reach(w, pa, pb) * h;
}

bool ib_contacts_speculative_near(ibWorld* w, ibContactStore* cs, double h)
{
	if (!ib_toi_checked(w)) return true;
	if (!body_bounds(w, cs, h, true)) return false;
	NearCtx x = {cs, w->collisionSettings.contactTolerance, true, h};
	return ib_collision_near_pairs(w, cs->motion, near_pair, &x);
}

/* a new row's material points and anchors (in the principal frames of x, y), normal body and response at t0,
 * from its world points a, b and normal n */
static void row_frame(const ibWorld* w, ibContactRow* c, const ibBody* x, const ibBody* y)
{
	c->la = ibMat3_MulTV(x->R, ibSub(c->a, x->st.s));
	c->lb = ibMat3_MulTV(y->R, ibSub(c->b, y->st.s));
	c->ta = c->la;
	c->tb = c->lb;
	ib_contact_set_normal(w, c);
	c->K = ib_contact_response(w, c->b1, c->a, c->b2, c->b);
	c->nKn = ibDot(c->n, ibMat3_MulV(c->K, c->n));
	c->kinv = 0;
}

/* The points of one manifold of the speculative region of a touching pair (rows first..last, rows added
 * to the pair from mine on) that are not rows yet. */
static bool add_region(ibWorld* w, ibContactStore* cs, int32_t first, int32_t last, int32_t mine, const ibManifold* m,
                       double eps, double same2)
{
	ibVec3 n = ibNormalize(m->normal);
	if (!ibVec3_IsFinite(n) || ibLengthSq(n) < 0.5) return true;
	const ibContactRow* ref = &cs->pts[first];
	const ibBody *x = &w->bodies[ref->b1], *y = &w->bodies[ref->b2];
	for (int i = 0; i < m->pointCount; ++i) {
		const ibManifoldPoint* mp = &m->points[i];
		/* the points of the region at eps_c are rows already; a pair that penetrates by more than
		 * eps_c has there only the points within ~eps_c of its deepest one: the others are added
		 * as ordinary points (a tilted box sunk into another one by 10 cm had 1 of its 4) */
		bool known = false;
		for (int32_t j = first; j < last && !known; ++j) known = ibLengthSq(ibSub(cs->pts[j].a, mp->pointA)) <= same2;
		for (int32_t j = mine; j < cs->count && !known; ++j) known = ibLengthSq(ibSub(cs->pts[j].a, mp->pointA)) <= same2;
		if (known) continue;
		if (!ib_grow(w, (void**)&cs->pts, &cs->capacity, cs->count + 1, sizeof(ibContactRow))) return false;
		ref = &cs->pts[first];
		ibContactRow* c = &cs->pts[cs->count];
		*c = *ref; /* bodies, shapes, materials */
		c->gIdx = 0; /* a point of its own, not of ref's manifold group (contact_patch.c) */
		c->gCount = 1;
		c->a = mp->pointA;
		c->b = mp->pointB;
		c->n = n;
		c->gap = mp->separation;
		ib_contact_set_round(w, c); /* not ref's round points */
		if (ib_contact_rim_sample(w, cs, first, last, c)) continue;
		row_frame(w, c, x, y);
		c->key = mp->key ^ 0x5bd1e995u;
		c->warm = -1;
		c->spec = mp->separation > eps ? 1 : 0;
		c->accN = c->accVN = 0.0;
		c->accT = IB_VEC3_ZERO;
		if (c->nKn > 0.0) cs->count++;
	}
	return true;
}

bool ib_contacts_speculative(ibWorld* w, ibContactStore* cs, double h, int32_t n0)
{
	const double eps = w->collisionSettings.contactTolerance;
	const double same = ib_fmax(10.0 * eps, 1e-3), same2 = same * same; /* as contact_keep.c matches points */
	for (int32_t k = 0; k < n0;) {
		const int32_t first = k, s1 = cs->pts[k].s1, s2 = cs->pts[k].s2;
		while (k < n0 && cs->pts[k].s1 == s1 && cs->pts[k].s2 == s2) ++k;
		const int32_t last = k;
		const ibShape *pa = &w->shapes[s1], *pb = &w->shapes[s2];
		if (pa->type == IB_SHAPE_SPHERE && pb->type == IB_SHAPE_SPHERE) continue; /* one point whatever the pose */
		/* [IMPL] capped by a quarter of the smaller shape's largest half size: with its smallest (a coin's
		 * half thickness, 2.5 mm) the far rim of a coin or the far edge of a plate falling flat, closing by
		 * 4 cm in a step, was never in the region, went through the ground, and came out with 1.2 J
		 * (frictionless coin) to 31 J (mu 0.5) gained; a plate sank 6 mm and kept sliding */
		const double reach = closing_bound(w, pa, pb, h);
		const int32_t mine = cs->count; /* rows added to this pair from here on */
		for (int32_t j = first; j < last; ++j) { /* a disc that can turn through lying flat (contact_round.c) */
			ibContactRow rim[3];
			int nr = ib_contact_flat_rim(w, &cs->pts[j], reach, rim);
			if (nr <= 0) continue;
			if (!ib_grow(w, (void**)&cs->pts, &cs->capacity, cs->count + nr, sizeof(ibContactRow))) return false;
			for (int q = 0; q < nr; ++q) {
				rim[q].spec = rim[q].gap > eps ? 1 : 0;
				if (rim[q].nKn > 0.0) cs->pts[cs->count++] = rim[q];
			}
		}
		double margin = ib_fmin(reach, 0.25 * ib_fmin(outer_size(w, pa), outer_size(w, pb)));
		if (!(margin > 2.0 * eps)) continue;
		if (flat_resting_face(w, cs, first, last, pa, pb, h, eps)) continue;
		const ibBody *x = &w->bodies[pa->body], *y = &w->bodies[pb->body];
		ibManifold ms[IB_PAIR_MANIFOLDS];
		int mc = ib_shape_pair_collide(x, pa, y, pb, margin, NULL, ms, IB_PAIR_MANIFOLDS);
		for (int q = 0; q < mc; ++q) { /* one per triangle of a mesh */
			if (!add_region(w, cs, first, last, mine, &ms[q], eps, same2)) return false;
		}
		if (!note_end_pair(w, cs, s1, s2, first, last, mine, cs->count)) return false;
	}
	/* pairs that are not touching yet, in a sub-step that nothing checks for a time of contact (the
	 * sub-step cap of toi.c was reached): without them, cubes of rain1000 landing then went up to 0.2 m
	 * deep. Inelastic: a speculative point stops the approach without a bounce. */
	if (!ib_toi_unchecked(w)) return true;
	if (!body_bounds(w, cs, h, false)) return false;
	NearCtx x = {cs, eps, false, h};
	return ib_collision_near_pairs(w, cs->motion, near_pair, &x);
}

/* ---------------------------------------------------------------- regions at the end of the step */

/* body b at its predicted pose at t0+h (the integrator's, as the step will move it) */
static ibBody body_at_end(const ibWorld* w, const ibBody* b, double h)
{
	if (b->type == IB_BODY_STATIC) return *b;
	ibRigidState st = b->st;
	ib_predict_pose(w, b, h, &st.s, &st.q);
	return ib_body_at_state(b, &st);
}

/* does a row of shapes (s1, s2) in rows [from, to) have its predicted point a' within same of p? */
static bool covered(ibWorld* w, ibContactStore* cs, int32_t s1, int32_t s2, int32_t from, int32_t to, double h, ibVec3 p, double same2)
{
	for (int32_t k = from; k < to; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->s1 != s1 || c->s2 != s2) continue;
		ibVec3 a, b, n;
		ib_contact_predicted_points(w, cs, c, h, &a, &b, &n);
		if (ibLengthSq(ibSub(a, p)) <= same2) return true;
	}
	return false;
}

/* [IMPL] The region of a speculative pair at t0 holds its points at t0: a cube tumbling at 4 rad/s with an edge
 * across another cube's face edge slid that edge over the face in the step, the crossing moved 9 cm along it,
 * and the cube ended 5.5 mm deep in a converged step where the rows at the crossing of t0 were within eps_d
 * (test_contact_rain, RAIN_SEED=5, speculative approach). After the position loop the pair's region is found
 * again at the bodies' predicted poses at t0+h (the loop's velocities); a point deeper than eps there that no
 * row of the pair reaches (its predicted point within the matching distance) becomes a contact joint of its
 * own: its material points are the region's at t0+h carried back to t0, and it is a lifting point (an
 * inequality without anchor or warm start). The loop then goes on. */
int32_t ib_contacts_end_regions(ibWorld* w, ibContactStore* cs, double h, double eps, int32_t since)
{
	const double tol = w->collisionSettings.contactTolerance;
	const double same = ib_fmax(10.0 * tol, 1e-3), same2 = same * same;
	int32_t added = 0;
	for (int32_t e = 0; e < cs->endPairCount; ++e) {
		const int32_t* E = cs->endPairs + IB_END_PAIR * e;
		const int32_t s1 = E[0], s2 = E[1];
		if (E[3] <= E[2]) continue;
		const ibShape *pa = &w->shapes[s1], *pb = &w->shapes[s2];
		const ibBody *x = &w->bodies[pa->body], *y = &w->bodies[pb->body];
		const ibBody xe = body_at_end(w, x, h), ye = body_at_end(w, y, h);
		ibManifold ms[IB_PAIR_MANIFOLDS];
		int mc = ib_shape_pair_collide(&xe, pa, &ye, pb, tol, NULL, ms, IB_PAIR_MANIFOLDS);
		for (int q = 0; q < mc; ++q) {
			ibVec3 n1 = ibNormalize(ms[q].normal);
			if (!ibVec3_IsFinite(n1) || ibLengthSq(n1) < 0.5) continue;
			for (int i = 0; i < ms[q].pointCount; ++i) {
				const ibManifoldPoint* mp = &ms[q].points[i];
				if (!(mp->separation < -eps)) continue;
				if (covered(w, cs, s1, s2, E[2], E[3], h, mp->pointA, same2) || covered(w, cs, s1, s2, E[4], E[5], h, mp->pointA, same2) ||
				    covered(w, cs, s1, s2, since, cs->count, h, mp->pointA, same2))
					continue;
				if (!ib_grow(w, (void**)&cs->pts, &cs->capacity, cs->count + 1, sizeof(ibContactRow))) return -1;
				ibContactRow* c = &cs->pts[cs->count];
				*c = cs->pts[E[2]]; /* bodies, shapes, materials */
				c->gIdx = 0;
				c->gCount = 1;
				/* the material points of t0+h, at t0 (polyhedra: no round points) */
				c->a = ibAdd(x->st.s, ibMat3_MulV(x->R, ibMat3_MulTV(xe.R, ibSub(mp->pointA, xe.st.s))));
				c->b = ibAdd(y->st.s, ibMat3_MulV(y->R, ibMat3_MulTV(ye.R, ibSub(mp->pointB, ye.st.s))));
				c->n = ibMat3_MulV(y->R, ibMat3_MulTV(ye.R, n1)); /* back with body 2 (set_normal picks its body) */
				c->gap = ibDot(ibSub(c->a, c->b), c->n);
				c->rad1 = c->rad2 = 0.0;
				row_frame(w, c, x, y);
				if (!(c->nKn > 0.0)) continue;
				c->key = mp->key ^ 0x2f6b3c1du;
				c->spec = 0;
				c->frozen = 0;
				c->allowN = ib_fmax(0.0, -c->gap - IB_CONTACT_RECOVERY_SPEED * h);
				ib_contact_make_lifting(cs, c);
				cs->count++;
				++added;
			}
		}
	}
	return added;
}
