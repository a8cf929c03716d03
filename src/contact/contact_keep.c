/* The resting points kept from step to step (cs->prev): matching this step's points to last step's (warm start,
 * static-friction anchors), the anchors of one face made consistent, and this step's points kept as compact
 * records for the next one. */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"

static uint32_t pair_hash(int32_t s1, int32_t s2)
{
	uint32_t h = (uint32_t)s1 * 0x9E3779B1u ^ ((uint32_t)s2 + 0x7F4A7C15u) * 0x85EBCA77u;
	return h ^ (h >> 15);
}

/* The same point in last step's set: same shapes; the same feature key, else the nearest local
 * point on body 1 within max(10 eps_c, 1 mm). Returns its index in cs->prev or -1. */
static int32_t match_prev(const ibWorld* w, const ibContactStore* cs, const ibContactRow* c)
{
	if (cs->prevCount == 0 || cs->prevHashCapacity == 0) return -1;
	double tol = ib_fmax(10.0 * w->collisionSettings.contactTolerance, 1e-3);
	uint32_t mask = (uint32_t)cs->prevHashCapacity - 1u;
	int32_t first = -1;
	for (uint32_t h = pair_hash(c->s1, c->s2) & mask;; h = (h + 1u) & mask) {
		int32_t j = cs->prevHash[h];
		if (j < 0) return -1;
		if (cs->prev[j].s1 == c->s1 && cs->prev[j].s2 == c->s2) {
			first = j;
			break;
		}
	}
	int32_t best = -1;
	double bestD = tol * tol;
	for (int32_t j = first; j < cs->prevCount && cs->prev[j].s1 == c->s1 && cs->prev[j].s2 == c->s2; ++j) {
		const ibContactPrev* o = &cs->prev[j];
		double d = ibLengthSq(ibSub(o->la, c->la));
		if (c->key != 0u && o->key == c->key && d <= 100.0 * tol * tol) return j;
		if (d <= bestD) {
			bestD = d;
			best = j;
		}
	}
	return best;
}

/* [IMPL] The anchors of a face's sticking points are set where each point started sticking; a body that settles
 * with some points sticking a step or two before the others keeps anchors of different poses. Their tangential
 * offsets then fit no rigid motion of the face (translation in its plane and rotation about n: the first-order
 * tangential motion of coplanar points), the position loop stalls at a least-squares compromise ~1e-5 m from
 * them, and the step is reported not converged while the body stands still: 30 of 100 boxes thrown onto the
 * ground (test_contact_drops), in up to 278 of their 300 steps. Here each manifold group's sticking points keep the part
 * of their offsets that one such motion explains (the body is still pulled back to where it stuck) and drop the
 * rest, where it exceeds eps_d / 10 (body B's anchors move). */
/* [IMPL] The m sticking points idx[0..m-1] of a group all took their anchors from last step's records of one group
 * whose anchors consistent_anchors checked (and fitted where needed) with the same m points: both bodies have moved
 * rigidly since, which changes the anchors' offsets by a rigid motion of the face to first order, so the check
 * would pass again (pyramid20: not one of 120,000 checks in 300 steps refitted; the checks were 3 % of its
 * instructions). */
static bool anchors_checked_before(const ibContactStore* cs, const int32_t* idx, int m)
{
	int32_t tag = -1;
	for (int i = 0; i < m; ++i) {
		const ibContactRow* c = &cs->pts[idx[i]];
		if (!c->anchorsKept) return false;
		const ibContactPrev* o = &cs->prev[c->warm];
		if (o->anchorM != m || o->anchorTag < 0 || (i > 0 && o->anchorTag != tag)) return false;
		tag = o->anchorTag;
		for (int j = 0; j < i; ++j)
			if (cs->pts[idx[j]].warm == c->warm) return false;
	}
	return true;
}

static void consistent_anchors(ibWorld* w, ibContactStore* cs, int32_t first, int32_t count)
{
	enum { MAXG = 64 };
	int32_t idx[MAXG];
	ibVec3 d[MAXG], x[MAXG];
	int m = 0;
	for (int32_t k = first; k < first + count && m < MAXG; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->kind == IB_CONTACT_RESTING && c->sticking && c->mus > 0.0 && !c->spec) idx[m++] = k;
	}
	if (m < 2) return;
	if (anchors_checked_before(cs, idx, m)) {
		for (int i = 0; i < m; ++i) cs->pts[idx[i]].anchorsChecked = (int16_t)m;
		return;
	}
	const ibVec3 n = cs->pts[idx[0]].n;
	ibVec3 dm = IB_VEC3_ZERO, xm = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		const ibContactRow* c = &cs->pts[idx[i]];
		if (ibDot(c->n, n) < 0.999999) return; /* not one face */
		ibVec3 A, B;
		ib_contact_anchors_now(w, c, &A, &B);
		d[i] = ib_contact_tangential(ibSub(B, A), n);
		x[i] = ib_contact_tangential(c->a, n);
		dm = ibAdd(dm, d[i]);
		xm = ibAdd(xm, x[i]);
	}
	dm = ibScale(1.0 / m, dm);
	xm = ibScale(1.0 / m, xm);
	double num = 0.0, den = 0.0;
	for (int i = 0; i < m; ++i) {
		ibVec3 y = ibSub(x[i], xm);
		num += ibDot(ibSub(d[i], dm), ibCross(n, y));
		den += ibDot(y, y);
	}
	const double theta = den > 1e-18 ? num / den : 0.0, tol = 0.1 * w->solver.contact.contactPositionTolerance;
	ibVec3 r[MAXG];
	double worst = 0.0;
	for (int i = 0; i < m; ++i) {
		r[i] = ibSub(d[i], ibMulAdd(dm, theta, ibCross(n, ibSub(x[i], xm))));
		worst = ib_fmax(worst, ibLength(r[i]));
	}
	for (int i = 0; i < m; ++i) {
		ibContactRow* c = &cs->pts[idx[i]];
		c->anchorsChecked = (int16_t)m;
		if (!(worst > tol)) continue;
		ibVec3 A, B;
		ib_contact_anchors_now(w, c, &A, &B);
		ib_contact_drop_anchor_offset(w, c, B, r[i]);
	}
}

/* cs->jointed: 1 for the dynamic bodies of basic joints, else 0 (per body); false if out of memory */
bool ib_contacts_mark_jointed(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow(w, (void**)&cs->jointed, &cs->jointedCapacity, w->bodyHigh + 1, 1)) return false;
	memset(cs->jointed, 0, (size_t)w->bodyHigh);
	const ibJointStore* st = w->joints;
	for (int32_t k = 0; st && k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (c->b1 >= 0 && c->b1 < w->bodyHigh && ib_is_dynamic(&w->bodies[c->b1])) cs->jointed[c->b1] = 1;
		if (c->b2 >= 0 && c->b2 < w->bodyHigh && ib_is_dynamic(&w->bodies[c->b2])) cs->jointed[c->b2] = 1;
	}
	return true;
}

/* the anchors of a matched sticking point c from last step's (cs->prev[c->warm]) where it persists; false if it keeps
 * the fresh ones of its build */
static inline bool inherit_anchors(const ibWorld* w, const ibContactStore* cs, ibContactRow* c, bool fresh)
{
	if (c->warm < 0 || !c->sticking) return false;
	if (fresh && (cs->jointed[c->b1] || cs->jointed[c->b2])) return false;
	/* sticking points that persist keep their static-friction anchors */
	const ibContactPrev* o = &cs->prev[c->warm];
	double tol = ib_fmax(10.0 * w->collisionSettings.contactTolerance, 1e-3);
	if (!o->sticking || ibLengthSq(ibSub(o->la, c->la)) > tol * tol) return false;
	/* on a round point the anchor's material point must still be where it touches: a slowly rolling
	 * sphere (less than tol per step) kept an anchor it had rolled away from */
	if ((c->rad1 > 0.0 && ibLengthSq(ibSub(o->ta, c->la)) > tol * tol) || (c->rad2 > 0.0 && ibLengthSq(ibSub(o->tb, c->lb)) > tol * tol))
		return false;
	c->ta = o->ta;
	c->tb = o->tb;
	return true;
}

void ib_contacts_inherit_anchors(ibWorld* w, ibContactStore* cs)
{
	/* [IMPL] After a position loop that stalled, the sticking points of jointed bodies start from fresh anchors
	 * (where their points are now). A jointed body's anchors, taken at several instants, need not agree with
	 * its joints: a ragdoll lying on the ground with 11 sticking points on 10 jointed bodies has more conditions
	 * than freedoms, and anchors a few um apart from any configuration its joints allow kept its position
	 * loop cycling at 2-4e-6 m in every step (the joint sweeps against the contact sweeps) until the stall
	 * rule ended it (tests/test_contact_ragdoll.c). Dropping the anchors lets the jointed bodies creep by the
	 * stalled residual once, not in every step. */
	const bool fresh = cs->positionStalled && w->joints && w->joints->basicCount > 0 && ib_contacts_mark_jointed(w, cs);
	int32_t kept = 0, anew = 0; /* sticking points (with friction, touching) that kept their anchors / got new ones */
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->warm = -1;
		c->anchorsKept = 0;
		c->anchorsChecked = 0;
		if (c->kind != IB_CONTACT_RESTING) continue;
		c->warm = match_prev(w, cs, c);
		if (!c->sticking) continue;
		const bool k1 = inherit_anchors(w, cs, c, fresh);
		c->anchorsKept = k1;
		if (c->mus > 0.0 && !c->spec) {
			if (k1) ++kept;
			else ++anew;
		}
	}
	for (int32_t k = 0; k < cs->count; ++k)
		if (cs->pts[k].gIdx == 0 && cs->pts[k].gCount >= 2 && k + cs->pts[k].gCount <= cs->count) consistent_anchors(w, cs, k, cs->pts[k].gCount);
	/* and across the cycles of body pairs (contact_anchors.c): anchors that all persist were made consistent in the
	 * step that set them (they are material points), and anchors set at one instant agree; only new anchors
	 * beside kept ones can disagree with them */
	if (kept > 0 && anew > 0) ib_contacts_island_anchors(w, cs);
}

/* Keep this step's resting points for the next step (anchors of sticking points, warm start) as
 * compact records (ibContactPrev: the fields the next step reads); they stay grouped by shape pair,
 * and a hash of the pairs finds each group. */
void ib_contacts_keep(ibWorld* w, ibContactStore* cs)
{
	cs->prevCount = 0;
	cs->prevH = cs->lastH;
	if (!ib_grow(w, (void**)&cs->prev, &cs->prevCapacity, cs->count, sizeof(ibContactPrev))) return;
	const bool factors = ib_contact_patch_keep_begin(w, cs, cs->count); /* (out of memory: the next step forms them anew) */
	int32_t groupRow = -1, tag = -1; /* the group's first row, the index of its first record */
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->kind != IB_CONTACT_RESTING) continue;
		if (factors) ib_contact_patch_keep(cs, k, cs->prevCount);
		if (k - c->gIdx != groupRow) groupRow = k - c->gIdx, tag = cs->prevCount;
		const bool checked = c->anchorsChecked > 0 && c->gCount >= 2; /* (rows appended later copy others: gCount 1) */
		cs->prev[cs->prevCount++] = (ibContactPrev){
			.a = c->a, .n = c->n, .la = c->la, .ta = c->ta, .tb = c->tb, .wT = c->wT, .wVT = c->wVT,
			.wN = c->wN, .wVN = c->wVN, .mus = c->mus, .s1 = c->s1, .s2 = c->s2, .key = c->key,
			.anchorTag = checked ? tag : -1, .anchorM = checked ? c->anchorsChecked : 0, .sticking = c->sticking,
		};
	}
	/* with the direct solve the loads of resting faces are its least-squares ones (no self-equilibrated
	 * part): they are kept as they are (contact_warm.c) */
	bool keepLoads = w->solver.contact.directSolve;
	for (int32_t j = 0, e; j < cs->prevCount; j = e) {
		const ibContactPrev* o = &cs->prev[j];
		for (e = j + 1; e < cs->prevCount && cs->prev[e].s1 == o->s1 && cs->prev[e].s2 == o->s2 && ibDot(cs->prev[e].n, o->n) > 0.999999; ++e) {}
		ib_contacts_balance_warm(&cs->prev[j], e - j, keepLoads); /* the group's net wrench (contact_warm.c) */
	}
	int32_t need = 16;
	while (need < 2 * cs->prevCount) need *= 2;
	if (need > cs->prevHashCapacity) {
		int32_t* hsh = ib_alloc(w, (size_t)need * sizeof(int32_t));
		if (!hsh) {
			cs->prevCount = 0;
			return;
		}
		ib_free(w, cs->prevHash, (size_t)cs->prevHashCapacity * sizeof(int32_t));
		cs->prevHash = hsh;
		cs->prevHashCapacity = need;
	}
	uint32_t mask = (uint32_t)cs->prevHashCapacity - 1u;
	memset(cs->prevHash, 0xff, (size_t)cs->prevHashCapacity * sizeof(int32_t));
	for (int32_t j = 0; j < cs->prevCount; ++j) {
		const ibContactPrev* o = &cs->prev[j];
		if (j > 0 && cs->prev[j - 1].s1 == o->s1 && cs->prev[j - 1].s2 == o->s2) continue;
		uint32_t h = pair_hash(o->s1, o->s2) & mask;
		while (cs->prevHash[h] >= 0) {
			const ibContactPrev* q = &cs->prev[cs->prevHash[h]];
			if (q->s1 == o->s1 && q->s2 == o->s2) break; /* a second group of the pair: the first one wins */
			h = (h + 1u) & mask;
		}
		if (cs->prevHash[h] < 0) cs->prevHash[h] = j;
	}
}

