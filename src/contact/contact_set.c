/* Contact points of a step: from the collision detection's contact set to ibContactRow with
 * mixed materials (§5.1.3, §5.1.4) and response matrices (eq. 3.9); the impulses applied at them. The predicted
 * poses of the contact joints (eq. 5.11) are in contact_predict.c, round points and what a normal turns with in
 * contact_round.c, the points kept from step to step in contact_keep.c. */
#include <math.h>
#include <string.h>

#include "collision/collision_world.h"
#include "contact/contact_internal.h"
#include "dynamics/sleep.h"
#include "joints/joint_internal.h"

ibContactStore* ib_contact_store(ibWorld* w, bool create)
{
	if (!w->contactStore && create) {
		w->contactStore = ib_alloc(w, sizeof(ibContactStore));
		if (w->contactStore) memset(w->contactStore, 0, sizeof(ibContactStore));
	}
	return w->contactStore;
}

void ib_contacts_destroy(ibWorld* w)
{
	ibContactStore* cs = w->contactStore;
	if (!cs) return;
	ib_free(w, cs->pts, (size_t)cs->capacity * sizeof(ibContactRow));
	ib_free(w, cs->prev, (size_t)cs->prevCapacity * sizeof(ibContactPrev));
	ib_free(w, cs->prevHash, (size_t)cs->prevHashCapacity * sizeof(int32_t));
	ib_free(w, cs->level, (size_t)cs->levelCapacity * sizeof(int32_t));
	ib_free(w, cs->queue, (size_t)cs->queueCapacity * sizeof(int32_t));
	ib_free(w, cs->adjStart, (size_t)cs->adjStartCapacity * sizeof(int32_t));
	ib_free(w, cs->adj, (size_t)cs->adjCapacity * sizeof(int32_t));
	ib_free(w, cs->order, (size_t)cs->orderCapacity * sizeof(int32_t));
	ib_free(w, cs->levelStart, (size_t)cs->levelStartCapacity * sizeof(int32_t));
	ib_free(w, cs->bodyMoved, (size_t)cs->bodyMovedCapacity * sizeof(int32_t));
	ib_free(w, cs->built, (size_t)cs->builtCapacity * sizeof(ibContactPose));
	ib_free(w, cs->sum, (size_t)cs->sumCapacity * sizeof(ibVec3));
	ib_free(w, cs->jointed, (size_t)cs->jointedCapacity);
	ib_free(w, cs->touched, (size_t)cs->touchedCapacity);
	ib_free(w, cs->maskRows, (size_t)cs->maskRowsCapacity * sizeof(ibContactMaskRow));
	ib_free(w, cs->active, (size_t)cs->activeCapacity * sizeof(int32_t));
	ib_free(w, cs->islandBody, (size_t)cs->islandBodyCapacity * sizeof(int32_t));
	ib_free(w, cs->islandPts, (size_t)cs->islandPtsCapacity * sizeof(int32_t));
	ib_free(w, cs->bestVel, (size_t)cs->bestVelCapacity * sizeof(ibVec3));
	ib_free(w, cs->bestAcc, (size_t)cs->bestAccCapacity * sizeof(double));
	ib_contact_free_prediction(w, cs);
	ib_contact_patch_destroy(w, cs);
	ib_contacts_direct_destroy(w, cs);
	ib_contact_joint_response_destroy(w, cs);
	ib_free(w, cs->motion, (size_t)cs->motionCapacity * sizeof(double));
	ib_free(w, cs->endPairs, (size_t)cs->endPairCapacity * sizeof(int32_t));
	ib_free(w, cs->fitInt, (size_t)cs->fitIntCapacity * sizeof(int32_t));
	ib_free(w, cs->fitDbl, (size_t)cs->fitDblCapacity * sizeof(double));
	ib_free(w, cs, sizeof *cs);
	w->contactStore = NULL;
}

static double mix(ibMixRule rule, double x, double y)
{
	switch (rule) {
	case IB_MIX_SUM: return x + y;
	case IB_MIX_MIN: return ib_fmin(x, y);
	case IB_MIX_MAX: return ib_fmax(x, y);
	case IB_MIX_MEAN: return 0.5 * (x + y);
	case IB_MIX_PRODUCT:
	default: return x * y;
	}
}

double ib_contact_pair_restitution(const ibWorld* w, const ibShape* a, const ibShape* b)
{
	return ib_fmin(1.0, ib_fmax(0.0, mix(w->solver.contact.restitutionMixing, a->material.restitution, b->material.restitution)));
}

double ib_contact_resting_speed(const ibWorld* w)
{
	const ibContactSettings* s = &w->solver.contact;
	if (s->restingSpeed > 0.0) return s->restingSpeed;
	double g = ibLength(w->gravity);
	if (!(g > 0.0)) g = 9.81; /* no gravity: the speed of a fall through eps_c under standard gravity */
	return sqrt(2.0 * g * w->collisionSettings.contactTolerance);
}

static ibMat3 point_response(const ibBody* b, ibVec3 r)
{
	if (!ib_is_dynamic(b)) return ibMat3_Zero();
	const ibVec3 P = b->invInertiaP;
	if (P.x == P.y && P.x == P.z) { /* equal principal moments (cubes, spheres): J^-1 = d E (R d E R^T to
		                             * rounding), K = E/m + d (|r|^2 E - r r^T), symmetric */
		const double d = P.x, g = b->invMass + d * ibDot(r, r);
		const double xy = -d * r.x * r.y, xz = -d * r.x * r.z, yz = -d * r.y * r.z;
		return (ibMat3){{{g - d * r.x * r.x, xy, xz}, {xy, g - d * r.y * r.y, yz}, {xz, yz, g - d * r.z * r.z}}};
	}
	/* K = E/m - [r]x J^-1 [r]x, the products of ibMat3_Mul without its terms with the zeros of [r]x (the
	 * same sums: x + 0 = x) */
	const ibMat3* J = &b->invInertiaW;
	ibMat3 T, K;
	for (int i = 0; i < 3; ++i) { /* T = J^-1 [r]x */
		T.m[i][0] = J->m[i][1] * r.z + J->m[i][2] * -r.y;
		T.m[i][1] = J->m[i][0] * -r.z + J->m[i][2] * r.x;
		T.m[i][2] = J->m[i][0] * r.y + J->m[i][1] * -r.x;
	}
	for (int j = 0; j < 3; ++j) { /* K = -[r]x T */
		K.m[0][j] = -(-r.z * T.m[1][j] + r.y * T.m[2][j]);
		K.m[1][j] = -(r.z * T.m[0][j] + -r.x * T.m[2][j]);
		K.m[2][j] = -(-r.y * T.m[0][j] + r.x * T.m[1][j]);
	}
	for (int i = 0; i < 3; ++i) K.m[i][i] += b->invMass;
	return K;
}

ibMat3 ib_contact_response(const ibWorld* w, int32_t b1, ibVec3 a, int32_t b2, ibVec3 b)
{
	const ibBody* x = &w->bodies[b1];
	const ibBody* y = &w->bodies[b2];
	return ibMat3_Add(point_response(x, ibSub(a, x->st.s)), point_response(y, ibSub(b, y->st.s)));
}

ibVec3 ib_contact_rel_velocity(const ibWorld* w, const ibContactRow* c)
{
	return ibSub(ib_contact_point_velocity(&w->bodies[c->b1], c->a), ib_contact_point_velocity(&w->bodies[c->b2], c->b));
}

/* p on body 1 at a, -p on body 2 at b (not on a frozen body) */
static inline void apply_bodies(ibWorld* w, const ibContactRow* c, ibVec3 p)
{
	if (c->frozen != 1) ib_body_apply_impulse(&w->bodies[c->b1], p, c->a);
	if (c->frozen != 2) ib_body_apply_impulse(&w->bodies[c->b2], ibNeg(p), c->b);
}

void ib_contact_apply(ibWorld* w, const ibContactRow* c, ibVec3 p)
{
	ibContactStore* cs = w->contactStore;
	double p2 = ibDot(p, p);
	if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
	apply_bodies(w, c, p);
}

void ib_contact_apply2(ibWorld* w, const ibContactRow* c, ibVec3 p1, ibVec3 p2)
{
	ibContactStore* cs = w->contactStore;
	double q1 = ibDot(p1, p1), q2 = ibDot(p2, p2), q = q1 > q2 ? q1 : q2; /* finite: no fmax call */
	if (q > cs->sweepMax2) cs->sweepMax2 = q;
	ibVec3 p = ibAdd(p1, p2);
	if (ibDot(p, p) > 0.0) apply_bodies(w, c, p);
}

bool ib_contacts_sum_begin(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow_raw(w, (void**)&cs->sum, &cs->sumCapacity, 2 * w->bodyHigh, sizeof(ibVec3))) return false;
	memset(cs->sum, 0, 2 * (size_t)w->bodyHigh * sizeof(ibVec3));
	return true;
}

void ib_contacts_sum_add(ibWorld* w, ibContactStore* cs, const ibContactRow* c, ibVec3 p)
{
	double p2 = ibDot(p, p);
	if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	if (c->frozen != 1 && ib_is_dynamic(x)) {
		cs->sum[2 * c->b1] = ibAdd(cs->sum[2 * c->b1], p);
		cs->sum[2 * c->b1 + 1] = ibAdd(cs->sum[2 * c->b1 + 1], ibCross(ibSub(c->a, x->st.s), p));
	}
	if (c->frozen != 2 && ib_is_dynamic(y)) {
		cs->sum[2 * c->b2] = ibSub(cs->sum[2 * c->b2], p);
		cs->sum[2 * c->b2 + 1] = ibSub(cs->sum[2 * c->b2 + 1], ibCross(ibSub(c->b, y->st.s), p));
	}
}

void ib_contact_apply_group(ibWorld* w, const ibContactRow* g, int m, const ibVec3* p)
{
	ibContactStore* cs = w->contactStore;
	ibBody *x = &w->bodies[g[0].b1], *y = &w->bodies[g[0].b2];
	ibVec3 P = IB_VEC3_ZERO, L1 = IB_VEC3_ZERO, L2 = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		double p2 = ibDot(p[i], p[i]);
		if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
		P = ibAdd(P, p[i]);
		L1 = ibAdd(L1, ibCross(ibSub(g[i].a, x->st.s), p[i]));
		L2 = ibSub(L2, ibCross(ibSub(g[i].b, y->st.s), p[i]));
	}
	ib_body_apply_impulse_moment(x, P, L1);
	ib_body_apply_impulse_moment(y, ibNeg(P), L2);
}

void ib_contacts_sum_flush(ibWorld* w, ibContactStore* cs)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibVec3 P = cs->sum[2 * i], L = cs->sum[2 * i + 1];
		if (P.x == 0.0 && P.y == 0.0 && P.z == 0.0 && L.x == 0.0 && L.y == 0.0 && L.z == 0.0) continue;
		ib_body_apply_impulse_moment(&w->bodies[i], P, L);
	}
}

bool ib_contacts_note_poses(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow_raw(w, (void**)&cs->built, &cs->builtCapacity, w->bodyHigh, sizeof(ibContactPose))) return false;
	for (int32_t i = 0; i < w->bodyHigh; ++i) cs->built[i] = (ibContactPose){w->bodies[i].st.s, w->bodies[i].st.q};
	return true;
}

/* Bodies joined by a joint do not touch each other unless the joint says collideConnected.
 * [IMPL] a linear scan over the basic joints per touching pair; the pipeline's filter should take over. */
static bool jointed(const ibWorld* w, int32_t x, int32_t y)
{
	const ibJointStore* st = w->joints;
	if (!st) return false;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (((c->b1 == x && c->b2 == y) || (c->b1 == y && c->b2 == x)) && !st->joints[c->joint].def.collideConnected)
			return true;
	}
	return false;
}

/* a shape whose contact points may be round points (round_point) or a cylinder's rim samples */
static bool round_shape(const ibShape* s) { return s->type == IB_SHAPE_SPHERE || s->type == IB_SHAPE_CAPSULE || s->type == IB_SHAPE_CYLINDER; }

/* a round point of this manifold (rows first .. count-1) with the same core and axis on both sides */
static bool same_round_point(const ibContactStore* cs, int32_t first, const ibContactRow* c)
{
	const double tol = 1e-9;
	for (int32_t q = first; q < cs->count; ++q) {
		const ibContactRow* o = &cs->pts[q];
		if (o->rad1 != c->rad1 || o->rad2 != c->rad2) continue;
		if (c->rad1 > 0.0 && (ibLengthSq(ibSub(o->lc1, c->lc1)) > tol * tol || ibLengthSq(ibSub(o->ax1, c->ax1)) > tol * tol)) continue;
		if (c->rad2 > 0.0 && (ibLengthSq(ibSub(o->lc2, c->lc2)) > tol * tol || ibLengthSq(ibSub(o->ax2, c->ax2)) > tol * tol)) continue;
		if (c->rad1 <= 0.0 && ibLengthSq(ibSub(o->a, c->a)) > tol * tol) continue;
		if (c->rad2 <= 0.0 && ibLengthSq(ibSub(o->b, c->b)) > tol * tol) continue;
		return true;
	}
	return false;
}

/* The points of one manifold of a pair (mixed materials, response, local points); skips pairs
 * without a dynamic body and sleeping or jointed pairs. false on OOM. */
bool ib_contacts_add_pair(ibWorld* w, ibContactStore* cs, const ibContactPair* pr)
{
	const ibContactSettings* set = &w->solver.contact;
	const ibBody* x = &w->bodies[pr->bodyA];
	const ibBody* y = &w->bodies[pr->bodyB];
	if (!ib_is_dynamic(x) && !ib_is_dynamic(y)) return true;
	if (ib_sleep_pair_inactive(w, pr->bodyA, pr->bodyB)) return true; /* sleeping (src/dynamics/sleep.h) */
	if (jointed(w, pr->bodyA, pr->bodyB)) return true;
	const ibMaterial* ma = &w->shapes[pr->shapeA].material;
	const ibMaterial* mb = &w->shapes[pr->shapeB].material;
	double e = ib_contact_pair_restitution(w, &w->shapes[pr->shapeA], &w->shapes[pr->shapeB]);
	double mus = ib_fmax(0.0, mix(set->frictionMixing, ma->staticFriction, mb->staticFriction));
	double mud = ib_fmax(0.0, mix(set->frictionMixing, ma->dynamicFriction, mb->dynamicFriction));
	const ibManifold* m = &pr->manifold;
	ibVec3 n = ibNormalize(m->normal);
	if (!ibVec3_IsFinite(n) || ibLengthSq(n) < 0.5) return true;
	if (!ib_grow(w, (void**)&cs->pts, &cs->capacity, cs->count + m->pointCount, sizeof(ibContactRow))) return false;
	int32_t first = cs->count;
	/* (no round point nor rim sample between other shapes: rad, lc and ax stay 0) */
	const bool round = round_shape(&w->shapes[pr->shapeA]) || round_shape(&w->shapes[pr->shapeB]);
	for (int i = 0; i < m->pointCount; ++i) {
		ibContactRow* c = &cs->pts[cs->count];
		memset(c, 0, sizeof *c);
		c->b1 = pr->bodyA;
		c->b2 = pr->bodyB;
		c->a = m->points[i].pointA;
		c->b = m->points[i].pointB;
		c->n = n;
		c->s1 = pr->shapeA;
		c->s2 = pr->shapeB;
		c->gap = m->points[i].separation;
		if (round && ib_contact_set_round(w, c) && same_round_point(cs, first, c)) continue; /* a point found twice */
		c->la = ibMat3_MulTV(x->R, ibSub(c->a, x->st.s));
		c->lb = ibMat3_MulTV(y->R, ibSub(c->b, y->st.s));
		c->ta = c->la;
		c->tb = c->lb;
		ib_contact_set_normal(w, c);
		c->e = e;
		c->mus = mus;
		c->mud = mud;
		c->K = ib_contact_response(w, c->b1, c->a, c->b2, c->b);
		c->nKn = ibDot(n, ibMat3_MulV(c->K, n));
		c->key = m->points[i].key;
		c->warm = -1;
		if (!(c->nKn > 0.0)) continue;
		cs->count++;
	}
	int32_t out = first;
	for (int32_t q = first; q < cs->count; ++q) {
		if (round && ib_contact_rim_sample(w, cs, first, cs->count, &cs->pts[q])) continue;
		if (out != q) cs->pts[out] = cs->pts[q]; /* (a row is 800 bytes: no copy onto itself) */
		++out;
	}
	cs->count = out;
	for (int32_t q = first; q < cs->count; ++q) { /* the manifold's group (contact_patch.c) */
		cs->pts[q].gIdx = (int16_t)(q - first);
		cs->pts[q].gCount = (int16_t)(cs->count - first);
	}
	return true;
}

bool ib_contacts_build(ibWorld* w, ibContactStore* cs)
{
	cs->count = 0;
	cs->restingCount = 0;
	if (!ib_contact_grow_prediction(w, cs)) return false;
	ibContactPair* pairs = NULL;
	int np = ib_collision_contacts(w, &pairs);
	for (int k = 0; k < np; ++k)
		if (!ib_contacts_add_pair(w, cs, &pairs[k])) return false;
	return true;
}
