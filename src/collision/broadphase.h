/* Broadphase of collision detection (§4.5.1.1; digest Part IV §15.3–15.5). Internal, not installed.
 *
 * Two interchangeable implementations behind one interface (ibBroadphase):
 *   - IB_BROADPHASE_SAP: sweep and prune on the three axes with temporal coherence. The sorted endpoint
 *     arrays are kept between steps and re-sorted by insertion sort; every swap of a lower past an upper
 *     endpoint reports the start or end of an overlap, so the pair set is maintained from overlap changes
 *     only (expected O(n + swaps) per step for coherent motion). Large batches of new proxies rebuild.
 *   - IB_BROADPHASE_TREE: dynamic AABB trees (one for dynamic, one for static proxies) with fattened
 *     leaf boxes, SAH insertion, AVL-style rotations (|h(l) - h(r)| <= 1 at every node, see
 *     dynamic_tree.c) and SAH-improving rotations. The maintained set is the pairs of overlapping fat
 *     boxes; only proxies whose fat box changed (reinserted) re-query, and the output keeps the fat
 *     pairs whose tight boxes overlap: O(reinserted queries + fat pairs) per step.
 *
 * Both report exactly the pairs of proxies whose (tight, user-given) AABBs overlap (closed boxes:
 * touching counts) and that the collision filter lets through, as a sorted, duplicate-free array of
 * ibPair (a < b, proxy ids). Filter rules (collision_filter.c), in order:
 *   1. static-static never;  2. an excluded pair (exclusion matrix) never;
 *   3. equal non-zero groupIndex: positive always, negative never;
 *   4. otherwise (catA & maskB) && (catB & maskA).
 *
 * Memory goes through the allocator hooks in the broadphase (ibBpAllocator; NULL = libc), so the world
 * allocator can be plugged in. All buffers are grow-only: update() does not allocate once the scene is
 * in a steady state (buffers sized by proxy count grow in add_proxy, the rest grows by doubling).
 *
 * Proxy ids are small non-negative integers, reused only after the update() following their removal.
 * Not thread-safe (queries use scratch buffers owned by the structure). */
#ifndef IBDYN_SRC_BROADPHASE_H
#define IBDYN_SRC_BROADPHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collision/convex.h"

#define IB_BP_NULL (-1)

/* ---------------------------------------------------------------- allocator hooks */

typedef struct ibBpAllocator {
	ibAllocFn* alloc;     /* NULL: malloc / realloc / free */
	ibReallocFn* realloc; /* NULL with alloc set: alloc + copy + free */
	ibFreeFn* free;
	void* ctx;
} ibBpAllocator;

void* ib_bp_alloc(const ibBpAllocator* a, size_t size);
void* ib_bp_realloc(const ibBpAllocator* a, void* p, size_t oldSize, size_t newSize);
void ib_bp_free(const ibBpAllocator* a, void* p, size_t size);
/* Grow *array (elements of elem bytes) to hold at least need; capacity at least doubles. */
bool ib_bp_reserve(const ibBpAllocator* a, void** array, int32_t* capacity, int32_t need, size_t elem);

/* ---------------------------------------------------------------- pairs, filter, exclusion matrix */

typedef struct ibPair {
	int32_t a, b; /* a < b */
} ibPair;

static inline uint64_t ib_pair_key(int32_t a, int32_t b)
{
	return a < b ? ((uint64_t)(uint32_t)a << 32) | (uint32_t)b : ((uint64_t)(uint32_t)b << 32) | (uint32_t)a;
}
static inline int32_t ib_pair_key_a(uint64_t k) { return (int32_t)(k >> 32); }
static inline int32_t ib_pair_key_b(uint64_t k) { return (int32_t)(uint32_t)k; }

typedef struct ibCollisionFilter {
	uint32_t categoryBits; /* the categories this proxy belongs to */
	uint32_t maskBits;     /* the categories it may collide with */
	int32_t groupIndex;    /* 0: none; equal positive: always collide; equal negative: never */
} ibCollisionFilter;

static inline ibCollisionFilter ib_collision_filter_default(void) { return (ibCollisionFilter){1u, 0xFFFFFFFFu, 0}; }

/* Rules 3 and 4 above (groups, then category/mask). Inline: it sits in the SAP swap loop. */
static inline bool ib_collision_filter_test(ibCollisionFilter a, ibCollisionFilter b)
{
	if (a.groupIndex == b.groupIndex && a.groupIndex != 0) return a.groupIndex > 0;
	return (a.categoryBits & b.maskBits) != 0 && (b.categoryBits & a.maskBits) != 0;
}

/* Set of pair keys (open addressing, linear probing, backward-shift deletion); key 0 is never a valid
 * pair key (a < b), so it marks empty slots. */
typedef struct ibPairKeySet {
	uint64_t* slots;
	int32_t capacity; /* 0 or a power of two */
	int32_t count;
} ibPairKeySet;

/* 1 inserted, 0 already present, -1 out of memory */
int ib_pairkeyset_insert(const ibBpAllocator* al, ibPairKeySet* s, uint64_t key);
bool ib_pairkeyset_remove(ibPairKeySet* s, uint64_t key);
bool ib_pairkeyset_contains(const ibPairKeySet* s, uint64_t key);
void ib_pairkeyset_free(const ibBpAllocator* al, ibPairKeySet* s);

/* Sort keys ascending (LSD radix over the bytes in which the keys differ; scratch holds n keys) and
 * drop duplicates; returns the new count. */
int32_t ib_sort_unique_keys(uint64_t* keys, int32_t n, uint64_t* scratch);

/* ---------------------------------------------------------------- segment vs AABB */

/* Slab test of the segment p0 + t d, t in [0, maxFraction], against the closed box. On a hit stores the
 * entry fraction (0 when p0 is inside). Monotone: a larger box is entered no later. */
bool ib_ray_aabb(ibVec3 p0, ibVec3 d, ibAABB box, double maxFraction, double* tEntry);

typedef struct ibRayHit {
	int32_t proxy; /* proxy id (tree level: user value) */
	double t;      /* entry fraction along the segment */
} ibRayHit;

/* ---------------------------------------------------------------- dynamic AABB tree */

#define IB_TREE_NULL (-1)

typedef struct ibTreeNode {
	ibAABB box;     /* fat box for leaves, union of the children for internal nodes */
	int32_t parent; /* next free node while on the free list */
	int32_t child1, child2;
	int32_t height; /* leaf 0, free -1 */
	int32_t user;   /* leaf: user value */
} ibTreeNode;

typedef struct ibTreeRayEntry {
	double t;
	int32_t node;
	int32_t tie; /* -1 internal node, user value for a leaf: pops in (t, tie) order */
} ibTreeRayEntry;

typedef struct ibDynamicTree {
	ibTreeNode* nodes;
	ibAABB* tight; /* per node: the user's box of a leaf */
	int32_t capacity, nodeCount, leafCount;
	int32_t root, freeList;
	ibTreeRayEntry* heap;    /* ray-cast scratch, capacity entries */
	double margin;           /* leaf box = user box fattened by margin ... */
	double predictionFactor; /* ... and extended by predictionFactor * displacement on a move */
	ibBpAllocator alloc;
	int64_t reinserts, rotations;
} ibDynamicTree;

void ib_dtree_init(ibDynamicTree* t, const ibBpAllocator* alloc, double margin, double predictionFactor);
void ib_dtree_destroy(ibDynamicTree* t);
/* Insert a leaf for the box; returns the leaf node or IB_TREE_NULL when out of memory. */
int32_t ib_dtree_insert(ibDynamicTree* t, ibAABB aabb, int32_t user);
void ib_dtree_remove(ibDynamicTree* t, int32_t leaf);
/* New user box (displacement: motion since the last move, for prediction; may be zero). Reinserts
 * the leaf when the box left its fat box or the fat box became much too large; returns true then. */
bool ib_dtree_move(ibDynamicTree* t, int32_t leaf, ibAABB aabb, ibVec3 displacement);
static inline ibAABB ib_dtree_fat_aabb(const ibDynamicTree* t, int32_t leaf) { return t->nodes[leaf].box; }
static inline ibAABB ib_dtree_aabb(const ibDynamicTree* t, int32_t leaf) { return t->tight[leaf]; }
static inline int32_t ib_dtree_user(const ibDynamicTree* t, int32_t leaf) { return t->nodes[leaf].user; }
int32_t ib_dtree_height(const ibDynamicTree* t);

/* Visit the leaves whose user box overlaps aabb; stop when fn returns false. Re-entrant. */
typedef bool ibTreeQueryFn(void* ctx, int32_t leaf, int32_t user);
void ib_dtree_query(const ibDynamicTree* t, ibAABB aabb, ibTreeQueryFn* fn, void* ctx);
/* The same against the leaves' fat boxes. */
void ib_dtree_query_fat(const ibDynamicTree* t, ibAABB aabb, ibTreeQueryFn* fn, void* ctx);

/* Visit the leaves whose user box the segment p0 -> p1 hits, in order of entry fraction t (ties by user
 * value), best-first over the nodes. fn returns the new maximum fraction: return maxFraction to see
 * every hit, t to clip to this one, a negative value to stop. Not re-entrant (uses t->heap). */
typedef double ibTreeRayFn(void* ctx, int32_t leaf, int32_t user, double t);
void ib_dtree_raycast(ibDynamicTree* t, ibVec3 p0, ibVec3 p1, double maxFraction, ibTreeRayFn* fn, void* ctx);

/* Check every invariant (parent links, heights, |h(l) - h(r)| <= 1, internal box == union of the
 * children, leaf fat box contains the user box, node accounting); NULL when fine, else a message. */
const char* ib_dtree_validate(const ibDynamicTree* t);

/* ---------------------------------------------------------------- sweep and prune (internal state) */

typedef struct ibSapEndpoint {
	double value;
	uint32_t data; /* proxy << 1 | isUpper */
} ibSapEndpoint;

typedef struct ibSweepAndPrune {
	ibSapEndpoint* axis[3]; /* sorted by (value, isUpper): a lower bound sorts before an equal upper one */
	int32_t count;          /* endpoints per axis (2 per proxy in the arrays) */
	int32_t capacity;       /* endpoints */
	ibSapEndpoint* scratch; /* merge sort, capacity */
	int32_t* index;         /* 6 per proxy id: position of lower/upper endpoint per axis; -1: not in */
	int32_t indexCapacity;  /* proxies */
	int32_t* active;        /* rebuild sweep: active proxies and their positions */
	int32_t* activePos;
	int32_t pendingRemovals; /* proxies removed since the last update that are still in the arrays */
	bool sorted;             /* no endpoint moved or was appended since the last sort (skip the pass) */
} ibSweepAndPrune;

/* ---------------------------------------------------------------- the broadphase */

typedef enum ibBroadphaseKind { IB_BROADPHASE_SAP, IB_BROADPHASE_TREE } ibBroadphaseKind;

typedef struct ibBroadphaseDef {
	ibBroadphaseKind kind;
	double margin;           /* tree: fat-box margin of dynamic proxies (default 0.05) */
	double predictionFactor; /* tree: fat box extended by factor * displacement (default 2) */
	ibBpAllocator allocator; /* zero: libc */
} ibBroadphaseDef;

typedef struct ibBroadphaseStats {
	int64_t updates;
	int64_t swaps;     /* SAP: endpoint swaps */
	int64_t rebuilds;  /* SAP: full re-sorts (large batches of new proxies) */
	int64_t addEvents; /* candidate pair additions fed to the pair set */
	int64_t removeEvents;
	int64_t queries; /* tree: proxies re-queried */
} ibBroadphaseStats;

enum { IB_PROXY_FREE = 0, IB_PROXY_ALIVE = 1, IB_PROXY_REMOVED = 2 };
/* F_DROP: the proxy's old pairs are void (removed, new filter or static flag, tree: new or reinserted)
 * and the implementation re-finds its current ones; F_NEW (SAP): not yet in the endpoint arrays. */
enum { IB_PROXY_F_DROP = 1, IB_PROXY_F_NEW = 2 };

typedef struct ibBpProxy {
	ibCollisionFilter filter;
	int32_t user;
	int32_t leaf;       /* tree: leaf node in trees[isStatic] */
	int32_t exclusions; /* number of excluded pairs naming this proxy */
	uint8_t isStatic, state, flags;
} ibBpProxy;

typedef struct ibBroadphase {
	ibBroadphaseKind kind;
	ibBpAllocator alloc;
	double margin, predictionFactor;

	/* proxies, indexed by id */
	ibAABB* aabbs;
	ibBpProxy* proxies;
	int32_t proxyCapacity, proxyHigh, proxyCount;
	int32_t *freeIds, freeCount, freeCapacity;
	int32_t *pendingFree, pendingFreeCount, pendingFreeCapacity; /* reusable after the next update */
	int32_t *dirty, dirtyCount, dirtyCapacity;                   /* ids flagged IB_PROXY_F_DROP */
	int32_t *added, addedCount, addedCapacity;                   /* ids flagged IB_PROXY_F_NEW */

	/* exclusion matrix and the pairs whose exclusion changed since the last update */
	ibPairKeySet excluded;
	uint64_t* exclChanged;
	int32_t exclChangedCount, exclChangedCapacity;

	/* pair set: current sorted pairs, and this update's events (statements about the final state) */
	ibPair* pairs[2];
	int32_t pairCapacity[2];
	int32_t pairCount, cur;
	uint64_t* addEv;
	int32_t addCount, addCapacity;
	uint64_t* remEv;
	int32_t remCount, remCapacity;
	uint64_t* keyScratch;
	int32_t keyScratchCapacity;
	ibPair* fat[2]; /* tree: sorted filtered pairs of overlapping fat boxes, the maintained set */
	int32_t fatCapacity[2];
	int32_t fatCount, fatCur;
	bool dropAll;   /* this update's add events are the whole maintained set */
	bool forceFull; /* recompute everything next update (after running out of memory) */
	bool oom;

	ibSweepAndPrune sap;
	ibDynamicTree trees[2]; /* [0] dynamic proxies, [1] static proxies */

	ibRayHit* rayHits;
	int32_t rayHitCount, rayHitCapacity;
	ibRayHit* rayScratch;
	int32_t rayScratchCapacity;

	/* scratch of ib_broadphase_query_batch */
	ibRayHit *batchQ, *batchP, *batchSort;
	int32_t batchQCapacity, batchPCapacity, batchSortCapacity;
	ibAABB *batchQBox, *batchPBox; /* the boxes of batchQ and batchP in their sorted order */
	int32_t batchQBoxCapacity, batchPBoxCapacity;
	uint64_t *batchHits, *batchHitScratch;
	int32_t batchHitCapacity, batchHitScratchCapacity;

	ibBroadphaseStats stats;
} ibBroadphase;

ibBroadphaseDef ib_broadphase_default_def(ibBroadphaseKind kind);
ibBroadphase* ib_broadphase_create(ibBroadphaseKind kind);
ibBroadphase* ib_broadphase_create_def(const ibBroadphaseDef* def);
void ib_broadphase_destroy(ibBroadphase* bp);

/* Returns the proxy id, IB_BP_NULL when out of memory. aabb must be finite with lo <= hi. */
int32_t ib_broadphase_add_proxy(ibBroadphase* bp, ibAABB aabb, ibCollisionFilter filter, bool isStatic, int32_t userId);
void ib_broadphase_remove_proxy(ibBroadphase* bp, int32_t id);
void ib_broadphase_move_proxy(ibBroadphase* bp, int32_t id, ibAABB aabb);
/* displacement: the proxy's motion over the coming step (tree: velocity-predicted fat box). */
void ib_broadphase_move_proxy_predicted(ibBroadphase* bp, int32_t id, ibAABB aabb, ibVec3 displacement);
void ib_broadphase_set_filter(ibBroadphase* bp, int32_t id, ibCollisionFilter filter);
bool ib_broadphase_set_static(ibBroadphase* bp, int32_t id, bool isStatic);

/* Exclusion matrix. An exclusion lasts until included again or one of the proxies is removed. */
bool ib_broadphase_exclude_pair(ibBroadphase* bp, int32_t a, int32_t b);
void ib_broadphase_include_pair(ibBroadphase* bp, int32_t a, int32_t b);
bool ib_broadphase_is_excluded(const ibBroadphase* bp, int32_t a, int32_t b);
/* All four filter rules for two live proxies. */
bool ib_broadphase_should_collide(const ibBroadphase* bp, int32_t a, int32_t b);

/* Bring the pair set up to date; false when out of memory (the pair set is then unchanged). */
bool ib_broadphase_update(ibBroadphase* bp);
/* The pair set of the last update: sorted by (a, b), a < b, no duplicates. */
const ibPair* ib_broadphase_pairs(const ibBroadphase* bp, int32_t* count);

static inline int32_t ib_broadphase_user_id(const ibBroadphase* bp, int32_t id) { return bp->proxies[id].user; }
static inline ibAABB ib_broadphase_aabb(const ibBroadphase* bp, int32_t id) { return bp->aabbs[id]; }
static inline bool ib_broadphase_is_static(const ibBroadphase* bp, int32_t id) { return bp->proxies[id].isStatic; }
static inline bool ib_broadphase_is_alive(const ibBroadphase* bp, int32_t id)
{
	return id >= 0 && id < bp->proxyHigh && bp->proxies[id].state == IB_PROXY_ALIVE;
}
static inline int32_t ib_broadphase_proxy_count(const ibBroadphase* bp) { return bp->proxyCount; }

/* Proxies whose current AABB overlaps aabb (SAP: linear scan). Stop when fn returns false. */
typedef bool ibBroadphaseQueryFn(void* ctx, int32_t proxy);
void ib_broadphase_query(ibBroadphase* bp, ibAABB aabb, ibBroadphaseQueryFn* fn, void* ctx);
/* n queries at once: fn(ctx, q, proxy) for every alive proxy whose AABB overlaps boxes[q], in ascending
 * q and, per query, in the order ib_broadphase_query reports them (the SAP: ascending proxy id; there
 * one sort and sweep on x, "box pruning", instead of n brute-force scans). Stops when fn returns false.
 * Returns false if fn stopped it or memory ran out (then nothing more is reported). */
typedef bool ibBroadphaseBatchFn(void* ctx, int32_t query, int32_t proxy);
bool ib_broadphase_query_batch(ibBroadphase* bp, const ibAABB* boxes, int32_t n, ibBroadphaseBatchFn* fn, void* ctx);
/* All proxies whose current AABB the segment p0 -> p1 hits, ordered by (t, proxy) (SAP: linear scan).
 * The array lives until the next ray cast; NULL with *count = -1 when out of memory. */
const ibRayHit* ib_broadphase_raycast(ibBroadphase* bp, ibVec3 p0, ibVec3 p1, int32_t* count);

/* Internal invariants of the implementation (SAP arrays sorted and indexed, tree invariants). */
const char* ib_broadphase_validate(const ibBroadphase* bp);

/* ---------------------------------------------------------------- implementation hooks */

/* shared by the implementations (collision_filter.c) */
bool ib_bp_push_add(ibBroadphase* bp, uint64_t key);
bool ib_bp_push_remove(ibBroadphase* bp, uint64_t key);
/* static-static, groups and category/mask, without the exclusion lookup */
static inline bool ib_bp_filter_quick(const ibBroadphase* bp, int32_t a, int32_t b)
{
	const ibBpProxy* pa = &bp->proxies[a];
	const ibBpProxy* pb = &bp->proxies[b];
	if (pa->isStatic && pb->isStatic) return false;
	return ib_collision_filter_test(pa->filter, pb->filter);
}

/* broadphase_sap.c */
void ib_sap_init(ibSweepAndPrune* s);
void ib_sap_destroy(ibBroadphase* bp);
bool ib_sap_reserve(ibBroadphase* bp, int32_t proxyHigh); /* called from add_proxy, never from update */
void ib_sap_move(ibBroadphase* bp, int32_t id);           /* endpoint values from bp->aabbs[id] */
void ib_sap_remove(ibBroadphase* bp, int32_t id);
bool ib_sap_update(ibBroadphase* bp); /* fills the events (or sets dropAll) */
const char* ib_sap_validate(const ibBroadphase* bp);

#endif
