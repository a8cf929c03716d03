/* State of the world's collision pipeline (collision_world.c) shared with the public API, the queries
 * and the time-of-contact search of src/collision. Internal, not installed. */
#ifndef IBDYN_SRC_COLLISION_WORLD_INTERNAL_H
#define IBDYN_SRC_COLLISION_WORLD_INTERNAL_H

#include "collision/broadphase.h"
#include "collision/collision_world.h"

/* Per shape index: its broadphase proxy and the pose its AABB was computed at. */
typedef struct ibShapeSlot {
	int32_t proxy; /* IB_BP_NULL: none */
	uint16_t generation;
	bool poseValid;
	ibVec3 pos;
	ibQuat rot;
	/* additions for temporal coherence: the sync clock value at the last pose change (or proxy
	 * creation), and the shape's convex view at that pose (computed once per pose, not per pair) */
	uint64_t poseStamp;
	bool convexValid;
	ibConvex convex;
	/* drift-tolerant coherence (IB_COHERENCE_DRIFT): the sync clock value when the convex view (and
	 * the box) was last made; a convex shape whose pose stays within the drift bound of the view's
	 * keeps it (poseStamp moves, driftStamp does not). radius bounds the distance of the shape's
	 * points from its position. */
	uint64_t driftStamp;
	double radius;
	/* the shape's world pose at the last sync (cur; pos / rot above are the view's, which drift coherence
	 * keeps) and at the last detection (prevDet): a detection's manifolds are expressed at cur
	 * (ib_collision_detect moves the points of a manifold made at other poses there) */
	ibVec3 cur, prevDet;
	ibQuat curRot, prevDetRot;
	/* the proxy's box: the shape's AABB fattened by ε_c/2 (the margin) and by IB_PROXY_SLACK x the margin
	 * more; kept while it holds the AABB fattened by the margin and is not 2 slacks larger than it */
	ibAABB box;
	ibFilter filter; /* the filter the proxy has */
	uint32_t sleepSerial; /* the body's sleepSerial when its pose was last read while asleep (0: never) */
} ibShapeSlot;

/* Extra fattening of the proxy boxes, in units of the margin ε_c/2: a shape that moves less than that
 * keeps its proxy box (no broadphase move, no re-sorting when none moved); the candidate pairs are
 * then those within ε_c to ε_c (1 + 2 IB_PROXY_SLACK) of each other, the narrowphase decides. */
#define IB_PROXY_SLACK 1.0

/* Bound of the pose change (relative to 1 + the shape's radius) under which a convex shape keeps its
 * convex view, box and proxy, and a pair whose two shapes kept their views keeps its manifolds: a settled
 * body that moves by a solver's residual (a pile at rest drifts by ~1e-7 m per step within its tolerances)
 * or by rounding (a renormalised or negated quaternion) needs no narrowphase. Every manifold is moved to
 * the shapes' present poses (ib_collision_detect: its points ride with their shapes, the separations are
 * measured again), so gaps stay exact for the points found; what lags is where along the surfaces the
 * points are and the normal's direction, by at most the bound (times the curvature). The bound is the
 * smaller of IB_COHERENCE_DRIFT and IB_COHERENCE_DRIFT_EPS x eps_c (the contact tolerance). Session 30:
 * 1e-10 before (rounding only; pyramid20's detection then ran in every step, 15 % of the instructions). */
#define IB_COHERENCE_DRIFT 1e-6
#define IB_COHERENCE_DRIFT_EPS 0.01

/* Persistent data of one broadphase pair, kept sorted by key (the broadphase's pair order). */
typedef struct ibPairEntry {
	uint64_t key;          /* ib_pair_key(proxyA, proxyB) */
	ibShapeId idA, idB;    /* the shapes the proxies belonged to (detects reuse of proxy ids) */
	ibPairCache cache;     /* GJK warm start */
	bool touching;         /* touching at the last detection */
	/* manifold reuse: the narrowphase ran after the sync with clock value stamp and wrote
	 * contactCount records from contactFirst into the contact set of the last detection; valid only
	 * when reusable (a pair whose shapes kept bit-identical poses since then gets them copied) */
	bool reusable;
	uint64_t stamp;
	int32_t contactFirst, contactCount;
	uint64_t contactDetection; /* the detection (ibCollisionWorld.detections) that wrote them: only the
	                            * last one's contact set is kept, so entries carried over a detection
	                            * without being processed (a skipped pair) never reuse */
} ibPairEntry;

typedef struct ibExcludedPair {
	int32_t a, b;            /* body indices */
	uint16_t genA, genB;     /* their generations (the exclusion dies with a body) */
} ibExcludedPair;

typedef struct ibCollisionWorld {
	ibBpAllocator alloc;
	ibBroadphase* bp;
	ibBroadphaseMethod method;
	double aabbMargin; /* proxies' AABBs are fattened by this (eps_c / 2) */

	ibShapeSlot* slots;
	int32_t slotCapacity;

	ibPairEntry* entries[2];
	int32_t entryCapacity[2];
	int32_t entryCount, cur;
	uint64_t* entryKeys; /* entries[cur][k].key for k < entryCount, contiguous (the in-place test) */
	int32_t entryKeyCapacity;

	ibContactPair* contacts;
	int32_t contactCount, contactCapacity;
	ibContactPair* contactsPrev; /* the contact set of the detection before (manifold reuse) */
	int32_t contactPrevCount, contactPrevCapacity;
	uint64_t clock; /* incremented by every sync (pose stamps of the slots) */
	bool synced;               /* a sync completed */
	uint32_t syncedSleepStamp; /* w->sleepStamp at the end of the last completed sync */
	int32_t reusedPairs; /* candidate pairs of the last detection whose manifolds were copied */
	int32_t driftReusedPairs; /* those of them whose poses were not bit-identical (drift coherence) */
	uint64_t detections; /* number of ib_collision_detect runs that produced a contact set */

	ibPairKeySet jointPairs; /* body pairs joined by a joint without collideConnected (rebuilt per sync) */
	ibPairKeySet excluded;   /* body pairs excluded by ibWorld_SetPairCollision */
	ibExcludedPair* exclList;
	int32_t exclCount, exclCapacity;

	ibContactTouchEvent* beginEv;
	int32_t beginCount, beginCapacity;
	ibContactTouchEvent* endEv;
	int32_t endCount, endCapacity;

	ibCollisionStats stats;

	/* time of contact (toi.c): body states at the sub-step start, at its end and at the search's lower
	 * bound, joint warm-start impulses and step statistics at the sub-step start */
	ibRigidState *toiStart, *toiEnd, *toiLow;
	int32_t toiCapacity;
	ibVec3* toiWarm;
	int32_t toiWarmCapacity;
	ibStepStats toiStats;
	bool toiUnchecked; /* the running sub-step is not checked for a time of contact (sub-step cap reached) */
	bool toiChecked;   /* the running sub-step is checked for a time of contact (below the sub-step cap) */
	/* pairs (broadphase pair keys) that got speculative points at this sub-step's t0 and that the
	 * penetration tests leave to the contact solver (toi.c ib_toi_mark_speculative); sorted lazily */
	uint64_t* specKeys;
	int32_t specCount, specCapacity;
	bool specSorted;
	int32_t* caProxies;
	int32_t caProxyCount, caProxyCapacity;
	ibAABB* nearBoxes; /* ib_collision_near_pairs: one fattened box per moving shape */
	int32_t* nearShapes;
	int32_t nearBoxCapacity, nearShapeCapacity;
} ibCollisionWorld;

/* True if the pair (broadphase pair key) got speculative points at this sub-step's t0 (toi.c). */
bool ib_toi_is_speculative(ibCollisionWorld* cw, uint64_t key);

/* The world's collision state, created on first use (NULL when out of memory). */
ibCollisionWorld* ib_collision_world(ibWorld* w);
/* Public shape handle of a shape index. */
static inline ibShapeId ib_shape_handle(const ibWorld* w, int32_t index)
{
	return (ibShapeId){index + 1, w->slot, w->shapes[index].generation};
}

/* Ray p0 + t d, t in [0, maxT], against a convex shape (ray_convex.c): true on a hit with the entry
 * fraction (0 when p0 is inside) and the outward unit normal there. */
bool ib_ray_convex(const ibConvex* c, ibVec3 p0, ibVec3 d, double maxT, double* t, ibVec3* normal);

#endif
