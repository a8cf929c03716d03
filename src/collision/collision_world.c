/* The world's collision pipeline (Chapter 4; step placement: digest §21 items 2 and 8): one broadphase
 * proxy per shape, synchronised lazily with the shape table and the poses at every detection (no hooks
 * in the dynamics; grow-only buffers, so no allocation in a steady state), the body-pair rules of the
 * filter (same body, joints without collideConnected, excluded pairs) on top of the broadphase's
 * (static-static, groups, categories/masks), a persistent per-pair cache (GJK warm start, touch state)
 * kept in the broadphase's pair order and merged with the new pair set in one linear pass, the
 * narrowphase per candidate pair and the touch events. */
#include <math.h>
#include <string.h>

#include "collision/collision_world_internal.h"
#include "dynamics/sleep.h"
#include "joints/joint_internal.h"

static ibCollisionWorld* cw_create(ibWorld* w)
{
	ibCollisionWorld* cw = ib_alloc(w, sizeof *cw);
	if (!cw) return NULL;
	memset(cw, 0, sizeof *cw);
	cw->alloc = (ibBpAllocator){w->allocator.alloc, w->allocator.realloc, w->allocator.free, w->allocator.ctx};
	cw->method = w->collisionSettings.broadphase;
	w->collision = cw;
	return cw;
}

ibCollisionWorld* ib_collision_world(ibWorld* w) { return w->collision ? w->collision : cw_create(w); }

struct ibBroadphase* ib_collision_broadphase(ibWorld* w) { return w->collision ? w->collision->bp : NULL; }

int32_t ib_collision_shape_proxy(ibWorld* w, int32_t shape)
{
	ibCollisionWorld* cw = w->collision;
	return cw && shape >= 0 && shape < cw->slotCapacity ? cw->slots[shape].proxy : IB_BP_NULL;
}

void ib_collision_destroy(ibWorld* w)
{
	ibCollisionWorld* cw = w->collision;
	if (!cw) return;
	if (cw->bp) ib_broadphase_destroy(cw->bp);
	ib_free(w, cw->slots, (size_t)cw->slotCapacity * sizeof(ibShapeSlot));
	for (int k = 0; k < 2; ++k) ib_free(w, cw->entries[k], (size_t)cw->entryCapacity[k] * sizeof(ibPairEntry));
	ib_free(w, cw->entryKeys, (size_t)cw->entryKeyCapacity * sizeof(uint64_t));
	ib_free(w, cw->contacts, (size_t)cw->contactCapacity * sizeof(ibContactPair));
	ib_free(w, cw->contactsPrev, (size_t)cw->contactPrevCapacity * sizeof(ibContactPair));
	ib_pairkeyset_free(&cw->alloc, &cw->jointPairs);
	ib_pairkeyset_free(&cw->alloc, &cw->excluded);
	ib_free(w, cw->exclList, (size_t)cw->exclCapacity * sizeof(ibExcludedPair));
	ib_free(w, cw->beginEv, (size_t)cw->beginCapacity * sizeof(ibContactTouchEvent));
	ib_free(w, cw->endEv, (size_t)cw->endCapacity * sizeof(ibContactTouchEvent));
	ib_free(w, cw->toiStart, (size_t)cw->toiCapacity * sizeof(ibRigidState));
	ib_free(w, cw->toiEnd, (size_t)cw->toiCapacity * sizeof(ibRigidState));
	ib_free(w, cw->toiLow, (size_t)cw->toiCapacity * sizeof(ibRigidState));
	ib_free(w, cw->toiWarm, (size_t)cw->toiWarmCapacity * sizeof(ibVec3));
	ib_free(w, cw->caProxies, (size_t)cw->caProxyCapacity * sizeof(int32_t));
	ib_free(w, cw->nearBoxes, (size_t)cw->nearBoxCapacity * sizeof(ibAABB));
	ib_free(w, cw->nearShapes, (size_t)cw->nearShapeCapacity * sizeof(int32_t));
	ib_free(w, cw->specKeys, (size_t)cw->specCapacity * sizeof(uint64_t));
	ib_free(w, cw, sizeof *cw);
	w->collision = NULL;
}

/* ---------------------------------------------------------------- synchronisation */

static ibShapeSlot empty_slot(void)
{
	ibShapeSlot sl;
	memset(&sl, 0, sizeof sl);
	sl.proxy = IB_BP_NULL;
	sl.rot = IB_QUAT_IDENTITY;
	sl.curRot = sl.prevDetRot = IB_QUAT_IDENTITY;
	return sl;
}

static bool aabb_finite(ibAABB a) { return ibVec3_IsFinite(a.lo) && ibVec3_IsFinite(a.hi); }

static bool aabb_contains(ibAABB outer, ibAABB inner)
{
	return outer.lo.x <= inner.lo.x && outer.lo.y <= inner.lo.y && outer.lo.z <= inner.lo.z &&
	       inner.hi.x <= outer.hi.x && inner.hi.y <= outer.hi.y && inner.hi.z <= outer.hi.z;
}

/* bit for bit the same pose */
static bool pose_same(ibVec3 a, ibQuat qa, ibVec3 b, ibQuat qb)
{
	return a.x == b.x && a.y == b.y && a.z == b.z && qa.w == qb.w && qa.x == qb.x && qa.y == qb.y && qa.z == qb.z;
}

/* The pose (p, q) within drift (IB_COHERENCE_DRIFT, relative to 1 + radius) of the pose of the slot's convex view. A point of the
 * shape (within radius of its position) moves by at most |dp| + radius theta, theta the angle between
 * the rotations, and theta = 4 asin(|dq| / 2) <= 4 |dq| for unit quaternions on the same side (q and
 * -q are the same rotation); L1 norms bound the Euclidean ones. */
static bool within_drift(const ibShapeSlot* sl, ibVec3 p, ibQuat q, double drift)
{
	const ibConvex* c = &sl->convex;
	double dp = fabs(p.x - c->position.x) + fabs(p.y - c->position.y) + fabs(p.z - c->position.z);
	const double bound = drift * (1.0 + sl->radius);
	if (!(dp <= bound)) return false; /* moved too far already (the rotation term is >= 0) */
	double n2 = ibQuatNormSq(q);
	if (!(n2 > 0.5 && n2 < 2.0)) return false; /* far from unit (or not finite): the full update */
	double inv = 1.0 / sqrt(n2);
	ibQuat r = c->rotation;
	double w = q.w * inv, x = q.x * inv, y = q.y * inv, z = q.z * inv;
	double dm = fabs(w - r.w) + fabs(x - r.x) + fabs(y - r.y) + fabs(z - r.z);
	double dpl = fabs(w + r.w) + fabs(x + r.x) + fabs(y + r.y) + fabs(z + r.z);
	double dq = dm < dpl ? dm : dpl;
	return dp + 4.0 * sl->radius * dq <= bound;
}

/* Drop the broadphase (new method): proxies and pair entries are rebuilt at the next sync. */
static void reset_broadphase(ibWorld* w, ibCollisionWorld* cw)
{
	if (cw->bp) ib_broadphase_destroy(cw->bp);
	cw->bp = NULL;
	for (int32_t i = 0; i < cw->slotCapacity; ++i) cw->slots[i] = empty_slot();
	cw->entryCount = 0;
	cw->contactCount = 0;
	cw->contactPrevCount = 0;
	(void)w;
}

static void keyset_clear(ibPairKeySet* s)
{
	if (s->slots) memset(s->slots, 0, (size_t)s->capacity * sizeof(uint64_t));
	s->count = 0;
}

/* Body pairs of joints that do not ask for collisions; exclusions of destroyed bodies die. */
static bool sync_body_rules(ibWorld* w, ibCollisionWorld* cw)
{
	keyset_clear(&cw->jointPairs);
	ibJointStore* st = w->joints;
	if (st)
		for (int32_t j = 0; j < st->jointHigh; ++j) {
			const ibJoint* jt = &st->joints[j];
			if (!jt->inUse || jt->def.collideConnected) continue;
			int32_t a = jt->def.bodyA.index1 - 1, b = jt->def.bodyB.index1 - 1;
			if (a < 0 || b < 0 || a == b) continue;
			if (ib_pairkeyset_insert(&cw->alloc, &cw->jointPairs, ib_pair_key(a, b)) < 0) return false;
		}
	for (int32_t k = 0; k < cw->exclCount;) {
		ibExcludedPair* e = &cw->exclList[k];
		const ibBody *ba = &w->bodies[e->a], *bb = &w->bodies[e->b];
		if (ba->inUse && bb->inUse && ba->generation == e->genA && bb->generation == e->genB) {
			++k;
			continue;
		}
		ib_pairkeyset_remove(&cw->excluded, ib_pair_key(e->a, e->b));
		cw->exclList[k] = cw->exclList[--cw->exclCount];
	}
	return true;
}

bool ib_collision_bodies_may_collide(ibWorld* w, int32_t a, int32_t b)
{
	if (a == b) return false;
	ibCollisionWorld* cw = w->collision;
	if (!cw) return true;
	uint64_t key = ib_pair_key(a, b);
	return !ib_pairkeyset_contains(&cw->jointPairs, key) && !ib_pairkeyset_contains(&cw->excluded, key);
}

static ibCollisionFilter to_bp_filter(ibFilter f) { return (ibCollisionFilter){f.categoryBits, f.maskBits, f.groupIndex}; }

typedef struct ShapeCandidates {
	ibWorld* w;
	ibShapeCandidateFn* fn;
	void* ctx;
} ShapeCandidates;

static bool shape_candidate(void* vctx, int32_t proxy)
{
	ShapeCandidates* c = vctx;
	int32_t s = ib_broadphase_user_id(c->w->collision->bp, proxy);
	if (s < 0 || s >= c->w->shapeHigh || !c->w->shapes[s].inUse) return true; /* destroyed since the sync */
	c->fn(c->ctx, s);
	return true;
}

ibResult ib_collision_sync(ibWorld* w)
{
	ibCollisionWorld* cw = ib_collision_world(w);
	if (!cw) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	if (cw->method != w->collisionSettings.broadphase) {
		reset_broadphase(w, cw);
		cw->method = w->collisionSettings.broadphase;
	}
	if (!cw->bp) {
		ibBroadphaseDef d = ib_broadphase_default_def(cw->method == IB_BROADPHASE_DYNAMIC_TREE ? IB_BROADPHASE_TREE
		                                                                                        : IB_BROADPHASE_SAP);
		d.allocator = cw->alloc;
		cw->bp = ib_broadphase_create_def(&d);
		if (!cw->bp) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating the broadphase");
	}
	uint64_t clock = ++cw->clock;
	double margin = 0.5 * w->collisionSettings.contactTolerance, slack = IB_PROXY_SLACK * margin;
	bool remargin = margin != cw->aabbMargin;
	const double drift = ib_fmin(IB_COHERENCE_DRIFT, IB_COHERENCE_DRIFT_EPS * w->collisionSettings.contactTolerance);
	cw->aabbMargin = margin;
	if (w->shapeHigh > cw->slotCapacity) {
		int32_t old = cw->slotCapacity;
		if (!ib_grow(w, (void**)&cw->slots, &cw->slotCapacity, w->shapeHigh, sizeof(ibShapeSlot)))
			return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
		for (int32_t i = old; i < cw->slotCapacity; ++i)
			cw->slots[i] = empty_slot();
	}
	ibBroadphase* bp = cw->bp;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		ibShapeSlot* sl = &cw->slots[i];
		const ibShape* s = &w->shapes[i];
		if (sl->proxy != IB_BP_NULL && (!s->inUse || sl->generation != s->generation)) {
			ib_broadphase_remove_proxy(bp, sl->proxy);
			sl->proxy = IB_BP_NULL;
		}
		if (!s->inUse) continue;
		const ibBody* b = &w->bodies[s->body];
		/* a sleeping body has not moved since its slot was synced while it slept: it is woken by every
		 * pose change (ibBody_SetTransform) and not integrated (sleep.c) */
		bool same = b->sleeping && sl->sleepSerial == b->sleepSerial && sl->proxy != IB_BP_NULL && sl->poseValid && !remargin;
		ibVec3 p = sl->pos;
		ibQuat q = sl->rot;
		if (!same) {
			ib_shape_world_pose(b, s, &p, &q);
			sl->cur = p;
			sl->curRot = q;
			sl->sleepSerial = b->sleeping ? b->sleepSerial : 0u;
			same = sl->proxy != IB_BP_NULL && sl->poseValid && !remargin && pose_same(p, q, sl->pos, sl->rot);
		}
		/* drift coherence: a convex shape whose pose stays within IB_COHERENCE_DRIFT of the pose of its
		 * view keeps the view, its box and its proxy (the pose changed: poseStamp, not driftStamp) */
		if (!same && sl->proxy != IB_BP_NULL && sl->poseValid && sl->convexValid && !remargin &&
		    within_drift(sl, p, q, drift)) {
			sl->poseStamp = clock;
			same = true;
		}
		if (!same) {
			sl->poseStamp = sl->driftStamp = clock;
			ibAABB box;
			if (s->type == IB_SHAPE_BOX) { /* ib_shape_convex_at and ib_convex_aabb of a box, without the calls */
				ib_convex_init(&sl->convex, IB_CONVEX_BOX, p, q);
				sl->convex.halfExtents = s->g.box.halfExtents;
				ib_convex_box_corners(&sl->convex); /* once per pose, not once per pair */
				sl->convexValid = true;
				box = ib_convex_box_aabb(&sl->convex);
			} else {
				sl->convexValid = ib_shape_convex_at(s, p, q, &sl->convex);
				box = sl->convexValid ? ib_convex_aabb(&sl->convex) : ib_shape_world_aabb(b, s);
			}
			if (aabb_finite(box)) {
				ibVec3 c = ibScale(0.5, ibAdd(box.lo, box.hi));
				sl->radius = ibDistance(p, c) + 0.5 * ibDistance(box.hi, box.lo);
				box = ib_aabb_fatten(box, margin);
				ibAABB fat = ib_aabb_fatten(box, slack);
				if (sl->proxy == IB_BP_NULL) {
					sl->proxy = ib_broadphase_add_proxy(bp, fat, to_bp_filter(s->filter), !ib_is_dynamic(b), i);
					if (sl->proxy == IB_BP_NULL)
						return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in the broadphase");
					sl->generation = s->generation;
					sl->box = fat;
					sl->filter = s->filter;
				} else if (!(aabb_contains(sl->box, box) && aabb_contains(ib_aabb_fatten(fat, slack), sl->box))) {
					ibVec3 disp = sl->poseValid ? ibSub(p, sl->pos) : IB_VEC3_ZERO;
					ib_broadphase_move_proxy_predicted(bp, sl->proxy, fat, disp);
					sl->box = fat;
				}
				sl->pos = p;
				sl->rot = q;
				sl->poseValid = true;
			} else {
				sl->poseValid = false; /* non-finite pose: keep the last box */
				sl->convexValid = false;
			}
		}
		if (sl->proxy != IB_BP_NULL &&
		    (sl->filter.categoryBits != s->filter.categoryBits || sl->filter.maskBits != s->filter.maskBits ||
		     sl->filter.groupIndex != s->filter.groupIndex)) {
			ib_broadphase_set_filter(bp, sl->proxy, to_bp_filter(s->filter));
			sl->filter = s->filter;
		}
	}
	if (!sync_body_rules(w, cw)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	if (!ib_broadphase_update(bp)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in the broadphase");
	cw->stats.proxyCount = ib_broadphase_proxy_count(bp);
	cw->synced = true;
	cw->syncedSleepStamp = w->sleepStamp;
	return IB_OK;
}

bool ib_collision_sleeping_candidates(ibWorld* w, ibAABB box, ibShapeCandidateFn* fn, void* ctx)
{
	ibCollisionWorld* cw = w->collision;
	/* every sleeping body fell asleep and every shape existed before the last sync: their proxies hold
	 * their present world boxes (sleeping bodies do not move, collision_world.c ib_collision_sync) */
	if (!cw || !cw->bp || !cw->synced || cw->syncedSleepStamp != w->sleepStamp) return false;
	ShapeCandidates c = {w, fn, ctx};
	ib_broadphase_query(cw->bp, box, shape_candidate, &c);
	return true;
}

/* ---------------------------------------------------------------- detection */

static bool push_event(ibWorld* w, ibContactTouchEvent** arr, int32_t* count, int32_t* cap, ibShapeId a, ibShapeId b)
{
	if (!ib_grow(w, (void**)arr, cap, *count + 1, sizeof(ibContactTouchEvent))) return false;
	(*arr)[(*count)++] = (ibContactTouchEvent){a, b};
	return true;
}

void ib_collision_begin_events(ibWorld* w)
{
	ibCollisionWorld* cw = w->collision;
	if (cw) cw->beginCount = cw->endCount = 0;
}

static bool entry_matches(const ibPairEntry* e, ibShapeId a, ibShapeId b)
{
	return IB_ID_EQUALS(e->idA, a) && IB_ID_EQUALS(e->idB, b);
}

/* The slot's convex view is the shape's at its current pose (or the shape is a plane / triangle mesh,
 * which has none). */
static bool view_ok(const ibShapeSlot* sl, const ibShape* s)
{
	if (!sl->poseValid) return false;
	return sl->convexValid || s->type == IB_SHAPE_PLANE || s->type == IB_SHAPE_TRIMESH;
}

/* The map of a point riding with a shape from the pose (p0, q0) to (p1, q1): x -> p1 + D (x - p0). */
typedef struct ibRide {
	ibMat3 D;
	ibVec3 p0, p1;
} ibRide;

static ibRide ride(ibVec3 p0, ibQuat q0, ibVec3 p1, ibQuat q1)
{
	ibRide r = {.p0 = p0, .p1 = p1};
	r.D = ibMat3_FromQuat(ibQuatNormalize(ibQuatMul(q1, ibQuatConj(q0))));
	return r;
}

static ibVec3 ride_point(const ibRide* r, ibVec3 x) { return ibAdd(r->p1, ibMat3_MulV(r->D, ibSub(x, r->p0))); }

/* Manifolds of shapes a and b computed with a at (pa, qa) and b at (pb, qb) are moved to the shapes'
 * present poses (cur, read by this detection's sync): each point rides with its shape and its separation is measured again
 * along the normal, which is kept (it turns by at most the drift bound). A settled body that drifts by
 * a solver's residual thus keeps exact gaps while its manifolds are reused or made from its kept view;
 * the points' places along the surfaces lag by at most the drift bound. */
static void move_manifolds(ibContactPair* cp, int32_t count, const ibShapeSlot* la, ibVec3 pa, ibQuat qa,
                           const ibShapeSlot* lb, ibVec3 pb, ibQuat qb)
{
	bool sameA = pose_same(pa, qa, la->cur, la->curRot), sameB = pose_same(pb, qb, lb->cur, lb->curRot);
	if (sameA && sameB) return;
	ibRide ra = ride(pa, qa, la->cur, la->curRot), rb = ride(pb, qb, lb->cur, lb->curRot);
	for (int32_t k = 0; k < count; ++k) {
		ibManifold* m = &cp[k].manifold;
		for (int i = 0; i < m->pointCount; ++i) {
			ibManifoldPoint* pt = &m->points[i];
			ibVec3 a = sameA ? pt->pointA : ride_point(&ra, pt->pointA);
			ibVec3 b = sameB ? pt->pointB : ride_point(&rb, pt->pointB);
			ibVec3 d0 = ibSub(pt->pointA, pt->pointB), d = ibSub(a, b);
			double sep = ibDot(d, m->normal);
			/* what the ride made the points slide apart along the surfaces is split between them, so
			 * that the pair keeps its offset across the normal (none for a face's points): a sticking
			 * point's tangential offset must not become a slip to correct */
			ibVec3 slid = ibSub(ibMulAdd(d, -sep, m->normal), ibMulAdd(d0, -ibDot(d0, m->normal), m->normal));
			pt->pointA = ibMulAdd(a, -0.5, slid);
			pt->pointB = ibMulAdd(b, 0.5, slid);
			pt->separation = sep;
		}
	}
}

/* Manifolds made from the slots' views: from the poses of the convex views (drift coherence may keep older
 * ones; a shape without a view is at its present pose) */
static void move_views(ibContactPair* cp, int32_t count, const ibShapeSlot* la, const ibShapeSlot* lb)
{
	move_manifolds(cp, count, la, la->convexValid ? la->pos : la->cur, la->convexValid ? la->rot : la->curRot, lb,
	               lb->convexValid ? lb->pos : lb->cur, lb->convexValid ? lb->rot : lb->curRot);
}

ibResult ib_collision_detect(ibWorld* w)
{
	ibResult r = ib_collision_sync(w);
	if (r != IB_OK) return r;
	ibCollisionWorld* cw = w->collision;
	int32_t n;
	const ibPair* pairs = ib_broadphase_pairs(cw->bp, &n);
	int32_t io = 0, oldCount = cw->entryCount, candidates = 0, reused = 0, driftReused = 0;
	/* the same pair keys as the last detection (a steady scene): the entries are updated in place (no
	 * copy into the other buffer, half the memory traffic); else merged into the other buffer */
	if (!ib_grow(w, (void**)&cw->entryKeys, &cw->entryKeyCapacity, n, sizeof(uint64_t)))
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	uint64_t* keys = cw->entryKeys; /* the entries' keys, contiguous: no pass over the entries themselves */
	bool inPlace = n == oldCount;
	for (int32_t k = 0; inPlace && k < n; ++k) inPlace = keys[k] == ib_pair_key(pairs[k].a, pairs[k].b);
	int nxt = inPlace ? cw->cur : 1 - cw->cur;
	if (!inPlace && !ib_grow(w, (void**)&cw->entries[nxt], &cw->entryCapacity[nxt], n, sizeof(ibPairEntry)))
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	const ibPairEntry* old = cw->entries[cw->cur];
	ibPairEntry* out = cw->entries[nxt];
	/* the last contact set becomes the previous one: pairs whose shapes did not move copy from it */
	ibContactPair* swap = cw->contactsPrev;
	int32_t swapCap = cw->contactPrevCapacity;
	cw->contactsPrev = cw->contacts;
	cw->contactPrevCapacity = cw->contactCapacity;
	cw->contactPrevCount = cw->contactCount;
	cw->contacts = swap;
	cw->contactCapacity = swapCap;
	cw->contactCount = 0;
	const uint64_t detection = ++cw->detections;
	bool oom = false;
	const double tol = w->collisionSettings.contactTolerance;
	/* no joint pairs and no exclusions (the common case): only shapes of one body never collide */
	const bool bodyRules = cw->jointPairs.count > 0 || cw->excluded.count > 0;
	for (int32_t k = 0; k < n; ++k) {
		uint64_t key = ib_pair_key(pairs[k].a, pairs[k].b);
		int32_t sa = ib_broadphase_user_id(cw->bp, pairs[k].a), sb = ib_broadphase_user_id(cw->bp, pairs[k].b);
		ibShapeId ida = ib_shape_handle(w, sa), idb = ib_shape_handle(w, sb);
		while (io < oldCount && old[io].key < key) {
			if (old[io].touching) oom |= !push_event(w, &cw->endEv, &cw->endCount, &cw->endCapacity, old[io].idA, old[io].idB);
			++io;
		}
		ibPairEntry* e = &out[k]; /* built in place: one copy of the entry, not two (none when inPlace) */
		keys[k] = key;
		if (io < oldCount && old[io].key == key && entry_matches(&old[io], ida, idb)) {
			if (!inPlace) *e = old[io];
			++io;
		} else {
			if (io < oldCount && old[io].key == key) { /* proxy ids reused by other shapes */
				if (old[io].touching)
					oom |= !push_event(w, &cw->endEv, &cw->endCount, &cw->endCapacity, old[io].idA, old[io].idB);
				++io;
			}
			memset(e, 0, sizeof *e);
			e->key = key;
			e->idA = ida;
			e->idB = idb;
		}
		const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
		/* sleeping (src/dynamics/sleep.h; nobody sleeps when !maybeAsleep): no narrowphase, touch state
		 * kept, no manifold in the set */
		if (w->maybeAsleep && ib_sleep_pair_inactive(w, pa->body, pb->body)) continue;
		bool touching = false;
		bool wasReusable = e->reusable;
		e->reusable = false;
		if (bodyRules ? ib_collision_bodies_may_collide(w, pa->body, pb->body) : pa->body != pb->body) {
			++candidates;
			const ibShapeSlot *la = &cw->slots[sa], *lb = &cw->slots[sb];
			int32_t first = cw->contactCount;
			/* temporal coherence: both shapes kept the convex views the pair's manifolds were computed
			 * with (their poses bit-identical or within IB_COHERENCE_DRIFT of the views'; the tolerance
			 * unchanged, which would have restamped every slot): the same manifolds, copied from the
			 * last contact set */
			bool reuse = wasReusable && e->contactDetection + 1 == detection && la->poseValid && lb->poseValid &&
			             la->driftStamp <= e->stamp && lb->driftStamp <= e->stamp &&
			             e->contactFirst + e->contactCount <= cw->contactPrevCount;
			if (cw->contactCount + IB_PAIR_MANIFOLDS > cw->contactCapacity &&
			    !ib_grow(w, (void**)&cw->contacts, &cw->contactCapacity, cw->contactCount + IB_PAIR_MANIFOLDS,
			             sizeof(ibContactPair))) {
				oom = true;
			} else if (reuse) {
				memcpy(&cw->contacts[first], &cw->contactsPrev[e->contactFirst],
				       (size_t)e->contactCount * sizeof(ibContactPair));
				move_manifolds(&cw->contacts[first], e->contactCount, la, la->prevDet, la->prevDetRot, lb, lb->prevDet,
				               lb->prevDetRot);
				cw->contactCount += e->contactCount;
				touching = e->touching;
				++reused;
				driftReused += !(la->poseStamp <= e->stamp && lb->poseStamp <= e->stamp);
				e->reusable = true;
			} else if (la->poseValid && lb->poseValid && la->convexValid && lb->convexValid) {
				/* two convex views (the common case): the manifold goes straight into the contact set
				 * (ib_shape_pair_collide_views' convex-convex case) */
				ibContactPair* cp = &cw->contacts[first];
				int np = ib_manifold_build(&la->convex, &lb->convex, tol, &e->cache.gjk, &cp->manifold);
				if (np > 0) {
					cp->shapeA = sa, cp->shapeB = sb, cp->bodyA = pa->body, cp->bodyB = pb->body;
					move_views(cp, 1, la, lb);
					++cw->contactCount;
				}
				touching = np > 0;
				e->reusable = true;
				e->stamp = cw->clock;
			} else {
				ibManifold m[IB_PAIR_MANIFOLDS];
				const ibBody *ba = &w->bodies[pa->body], *bb = &w->bodies[pb->body];
				/* the views made at the sync; a shape with a non-finite pose is made afresh */
				int mc = view_ok(la, pa) && view_ok(lb, pb)
				             ? ib_shape_pair_collide_views(ba, pa, la->convexValid ? &la->convex : NULL, bb, pb,
				                                           lb->convexValid ? &lb->convex : NULL, tol, &e->cache, m,
				                                           IB_PAIR_MANIFOLDS)
				             : ib_shape_pair_collide(ba, pa, bb, pb, tol, &e->cache, m, IB_PAIR_MANIFOLDS);
				int32_t from = cw->contactCount;
				for (int i = 0; i < mc; ++i)
					if (m[i].pointCount > 0)
						cw->contacts[cw->contactCount++] = (ibContactPair){sa, sb, pa->body, pb->body, m[i]};
				if (view_ok(la, pa) && view_ok(lb, pb)) move_views(&cw->contacts[from], cw->contactCount - from, la, lb);
				touching = mc > 0;
				e->reusable = la->poseValid && lb->poseValid;
				e->stamp = cw->clock;
			}
			e->contactFirst = first;
			e->contactCount = cw->contactCount - first;
			e->contactDetection = detection;
		}
		if (touching && !e->touching) oom |= !push_event(w, &cw->beginEv, &cw->beginCount, &cw->beginCapacity, ida, idb);
		if (!touching && e->touching) oom |= !push_event(w, &cw->endEv, &cw->endCount, &cw->endCapacity, ida, idb);
		e->touching = touching;
	}
	for (; io < oldCount; ++io)
		if (old[io].touching) oom |= !push_event(w, &cw->endEv, &cw->endCount, &cw->endCapacity, old[io].idA, old[io].idB);
	cw->cur = nxt;
	cw->entryCount = n;
	cw->stats.pairCount = candidates;
	cw->reusedPairs = reused;
	cw->driftReusedPairs = driftReused;
	cw->stats.contactCount = cw->contactCount;
	for (int32_t i = 0; i < w->shapeHigh; ++i) { /* the poses this detection's manifolds are expressed at */
		cw->slots[i].prevDet = cw->slots[i].cur;
		cw->slots[i].prevDetRot = cw->slots[i].curRot;
	}
	if (oom) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	return IB_OK;
}

int ib_collision_contacts(ibWorld* w, ibContactPair** out)
{
	ibCollisionWorld* cw = w->collision;
	*out = cw ? cw->contacts : NULL;
	return cw ? cw->contactCount : 0;
}

/* Entry of the last detection for a broadphase pair, NULL if none (binary search on the contiguous
 * keys, entryKeys[k] = entries[cur][k].key: 8 bytes per probe instead of an entry with its GJK cache;
 * the speculative near-pair queries ask this for every candidate) */
static const ibPairEntry* find_entry(const ibCollisionWorld* cw, uint64_t key)
{
	const uint64_t* keys = cw->entryKeys;
	int32_t lo = 0, hi = cw->entryCount;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cw->entryCount && keys[lo] == key ? &cw->entries[cw->cur][lo] : NULL;
}

bool ib_collision_was_touching(ibWorld* w, int32_t shapeA, int32_t shapeB)
{
	ibCollisionWorld* cw = w->collision;
	int32_t pa = ib_collision_shape_proxy(w, shapeA), pb = ib_collision_shape_proxy(w, shapeB);
	if (!cw || pa == IB_BP_NULL || pb == IB_BP_NULL) return false;
	const ibPairEntry* e = find_entry(cw, ib_pair_key(pa, pb));
	if (!e || !e->touching) return false;
	ibShapeId a = ib_shape_handle(w, shapeA), b = ib_shape_handle(w, shapeB);
	return entry_matches(e, a, b) || entry_matches(e, b, a);
}

/* ---------------------------------------------------------------- penetration tests (phases 1-2) */

/* Signed distance of a candidate pair (convex pairs exactly; others from their manifolds). */
static double pair_separation(ibWorld* w, const ibShape* pa, const ibShape* pb, ibPairCache* cache)
{
	const ibBody *ba = &w->bodies[pa->body], *bb = &w->bodies[pb->body];
	ibConvex ca, cb;
	if (ib_shape_convex(ba, pa, &ca) && ib_shape_convex(bb, pb, &cb))
		return ib_convex_query(&ca, &cb, cache ? &cache->gjk : NULL).distance;
	ibManifold m[IB_PAIR_MANIFOLDS];
	int mc = ib_shape_pair_collide(ba, pa, bb, pb, w->collisionSettings.contactTolerance, cache, m, IB_PAIR_MANIFOLDS);
	double d = INFINITY;
	for (int i = 0; i < mc; ++i)
		for (int k = 0; k < m[i].pointCount; ++k) d = ib_fmin(d, m[i].points[k].separation);
	return d;
}

static bool penetration_walk(ibWorld* w, bool onlyNew, ibPenetration* out)
{
	out->minSeparation = INFINITY;
	out->shapeA = out->shapeB = -1;
	if (ib_collision_sync(w) != IB_OK) return false;
	ibCollisionWorld* cw = w->collision;
	int32_t n;
	const ibPair* pairs = ib_broadphase_pairs(cw->bp, &n);
	ibPairEntry* old = cw->entries[cw->cur];
	int32_t io = 0;
	for (int32_t k = 0; k < n; ++k) {
		uint64_t key = ib_pair_key(pairs[k].a, pairs[k].b);
		int32_t sa = ib_broadphase_user_id(cw->bp, pairs[k].a), sb = ib_broadphase_user_id(cw->bp, pairs[k].b);
		while (io < cw->entryCount && old[io].key < key) ++io;
		ibPairEntry* e = NULL;
		if (io < cw->entryCount && old[io].key == key &&
		    entry_matches(&old[io], ib_shape_handle(w, sa), ib_shape_handle(w, sb)))
			e = &old[io];
		if (onlyNew && e && e->touching) continue;
		const ibShape *pa = &w->shapes[sa], *pb = &w->shapes[sb];
		if (!ib_collision_bodies_may_collide(w, pa->body, pb->body)) continue;
		double d = pair_separation(w, pa, pb, e ? &e->cache : NULL);
		/* a pair with speculative points of this sub-step's t0 is the contact solver's (toi.c) */
		if (onlyNew && d < out->minSeparation && ib_toi_is_speculative(cw, key)) continue;
		if (d < out->minSeparation) {
			out->minSeparation = d;
			out->shapeA = sa;
			out->shapeB = sb;
		}
	}
	return true;
}

bool ib_collision_penetration(ibWorld* w, ibPenetration* out) { return penetration_walk(w, true, out); }

double ib_collision_max_penetration(ibWorld* w)
{
	ibPenetration p;
	if (!penetration_walk(w, false, &p)) return 0.0;
	return p.minSeparation < 0.0 ? -p.minSeparation : 0.0;
}
