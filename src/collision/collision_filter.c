/* Collision filter (§4.5 "collision filter matrix", digest §15.5), the exclusion matrix, the pair set
 * shared by both broadphases and the ibBroadphase front end (see broadphase.h).
 *
 * Pair set maintenance. The maintained set is the filtered pairs of overlapping boxes: the user's boxes
 * for SAP, the fat boxes for the tree (whose output then keeps the pairs whose user boxes overlap).
 * Every update the implementation emits events that are statements about the final state of this
 * update: "add (a, b)" only for a pair that overlaps now and passes the filter, "remove (a, b)" only
 * for a pair that no longer overlaps. Proxies flagged IB_PROXY_F_DROP (removed, new filter or static
 * flag, new, or for the tree reinserted with a new fat box) lose all their old pairs; the
 * implementation re-adds the valid ones. The new set is the merge of the old sorted array (minus
 * removals and dropped proxies) with the radix-sorted, de-duplicated additions: linear in the set and
 * the events. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/broadphase.h"

/* ---------------------------------------------------------------- allocator */

void* ib_bp_alloc(const ibBpAllocator* a, size_t size)
{
	if (size == 0) size = 1;
	if (a && a->alloc) return a->alloc(size, a->ctx);
	return malloc(size);
}

void ib_bp_free(const ibBpAllocator* a, void* p, size_t size)
{
	if (!p) return;
	if (a && a->alloc) {
		if (a->free) a->free(p, size, a->ctx);
		return;
	}
	free(p);
}

void* ib_bp_realloc(const ibBpAllocator* a, void* p, size_t oldSize, size_t newSize)
{
	if (newSize == 0) newSize = 1;
	if (a && a->alloc) {
		if (a->realloc) return a->realloc(p, oldSize, newSize, a->ctx);
		void* q = a->alloc(newSize, a->ctx);
		if (!q) return NULL;
		if (p) {
			memcpy(q, p, oldSize < newSize ? oldSize : newSize);
			ib_bp_free(a, p, oldSize);
		}
		return q;
	}
	return realloc(p, newSize);
}

bool ib_bp_reserve(const ibBpAllocator* a, void** array, int32_t* capacity, int32_t need, size_t elem)
{
	if (need <= *capacity) return true;
	int64_t cap = *capacity > 0 ? 2 * (int64_t)*capacity : 16;
	while (cap < need) cap *= 2;
	if (cap > INT32_MAX) cap = INT32_MAX;
	if (cap < need) return false;
	void* p = ib_bp_realloc(a, *array, (size_t)*capacity * elem, (size_t)cap * elem);
	if (!p) return false;
	*array = p;
	*capacity = (int32_t)cap;
	return true;
}

/* grow a T* through a pointer to it (copied through void* to stay clear of aliasing rules) */
static bool reserve_ptr(const ibBpAllocator* a, void* arrayPtr, int32_t* capacity, int32_t need, size_t elem)
{
	if (need <= *capacity) return true;
	void* p;
	memcpy(&p, arrayPtr, sizeof p);
	bool ok = ib_bp_reserve(a, &p, capacity, need, elem);
	memcpy(arrayPtr, &p, sizeof p);
	return ok;
}

#define RESERVE(bp, arr, cap, need) reserve_ptr(&(bp)->alloc, &(arr), &(cap), (need), sizeof *(arr))

/* ---------------------------------------------------------------- pair key set */

static inline uint32_t key_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static bool keyset_grow(const ibBpAllocator* al, ibPairKeySet* s)
{
	int32_t cap = s->capacity > 0 ? 2 * s->capacity : 64;
	uint64_t* slots = ib_bp_alloc(al, (size_t)cap * sizeof *slots);
	if (!slots) return false;
	memset(slots, 0, (size_t)cap * sizeof *slots);
	uint32_t mask = (uint32_t)cap - 1u;
	for (int32_t i = 0; i < s->capacity; ++i) {
		uint64_t k = s->slots[i];
		if (!k) continue;
		uint32_t j = key_hash(k) & mask;
		while (slots[j]) j = (j + 1u) & mask;
		slots[j] = k;
	}
	ib_bp_free(al, s->slots, (size_t)s->capacity * sizeof *s->slots);
	s->slots = slots;
	s->capacity = cap;
	return true;
}

int ib_pairkeyset_insert(const ibBpAllocator* al, ibPairKeySet* s, uint64_t key)
{
	assert(key != 0);
	if (ib_pairkeyset_contains(s, key)) return 0;
	if (2 * (s->count + 1) > s->capacity && !keyset_grow(al, s)) return -1;
	uint32_t mask = (uint32_t)s->capacity - 1u, j = key_hash(key) & mask;
	while (s->slots[j]) j = (j + 1u) & mask;
	s->slots[j] = key;
	++s->count;
	return 1;
}

bool ib_pairkeyset_contains(const ibPairKeySet* s, uint64_t key)
{
	if (s->count == 0) return false;
	uint32_t mask = (uint32_t)s->capacity - 1u;
	for (uint32_t j = key_hash(key) & mask;; j = (j + 1u) & mask) {
		if (s->slots[j] == key) return true;
		if (s->slots[j] == 0) return false;
	}
}

/* backward-shift deletion at slot j */
static void keyset_delete_slot(ibPairKeySet* s, uint32_t j)
{
	uint32_t mask = (uint32_t)s->capacity - 1u;
	uint32_t hole = j;
	for (uint32_t i = (j + 1u) & mask; s->slots[i]; i = (i + 1u) & mask) {
		uint32_t home = key_hash(s->slots[i]) & mask;
		/* move slot i into the hole unless its home lies cyclically in (hole, i] */
		bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
		if (!stays) {
			s->slots[hole] = s->slots[i];
			hole = i;
		}
	}
	s->slots[hole] = 0;
	--s->count;
}

bool ib_pairkeyset_remove(ibPairKeySet* s, uint64_t key)
{
	if (s->count == 0) return false;
	uint32_t mask = (uint32_t)s->capacity - 1u;
	for (uint32_t j = key_hash(key) & mask;; j = (j + 1u) & mask) {
		if (s->slots[j] == key) {
			keyset_delete_slot(s, j);
			return true;
		}
		if (s->slots[j] == 0) return false;
	}
}

void ib_pairkeyset_free(const ibBpAllocator* al, ibPairKeySet* s)
{
	ib_bp_free(al, s->slots, (size_t)s->capacity * sizeof *s->slots);
	memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- key sorting */

int32_t ib_sort_unique_keys(uint64_t* keys, int32_t n, uint64_t* scratch)
{
	if (n <= 1) return n;
	if (n <= 48) {
		for (int32_t i = 1; i < n; ++i) {
			uint64_t k = keys[i];
			int32_t j = i;
			while (j > 0 && keys[j - 1] > k) {
				keys[j] = keys[j - 1];
				--j;
			}
			keys[j] = k;
		}
	} else {
		uint64_t diff = 0;
		for (int32_t i = 1; i < n; ++i) diff |= keys[i] ^ keys[0];
		uint64_t *src = keys, *dst = scratch;
		for (int shift = 0; shift < 64; shift += 8) {
			if (((diff >> shift) & 0xFFu) == 0) continue;
			int32_t count[256] = {0};
			for (int32_t i = 0; i < n; ++i) ++count[(src[i] >> shift) & 0xFFu];
			int32_t sum = 0;
			for (int b = 0; b < 256; ++b) {
				int32_t c = count[b];
				count[b] = sum;
				sum += c;
			}
			for (int32_t i = 0; i < n; ++i) dst[count[(src[i] >> shift) & 0xFFu]++] = src[i];
			uint64_t* t = src;
			src = dst;
			dst = t;
		}
		if (src != keys) memcpy(keys, src, (size_t)n * sizeof *keys);
	}
	int32_t w = 1;
	for (int32_t i = 1; i < n; ++i)
		if (keys[i] != keys[w - 1]) keys[w++] = keys[i];
	return w;
}

/* ---------------------------------------------------------------- events and commit */

bool ib_bp_push_add(ibBroadphase* bp, uint64_t key)
{
	if (bp->addCount == bp->addCapacity && !RESERVE(bp, bp->addEv, bp->addCapacity, bp->addCount + 1)) {
		bp->oom = true;
		return false;
	}
	bp->addEv[bp->addCount++] = key;
	return true;
}

bool ib_bp_push_remove(ibBroadphase* bp, uint64_t key)
{
	if (bp->remCount == bp->remCapacity && !RESERVE(bp, bp->remEv, bp->remCapacity, bp->remCount + 1)) {
		bp->oom = true;
		return false;
	}
	bp->remEv[bp->remCount++] = key;
	return true;
}

/* Merge the events into the maintained set (SAP: the output pairs; tree: the fat pairs). */
static bool commit(ibBroadphase* bp, ibPair** bufs, int32_t* caps, int32_t* count, int* cur)
{
	int32_t scratchNeed = bp->addCount > bp->remCount ? bp->addCount : bp->remCount;
	if (!RESERVE(bp, bp->keyScratch, bp->keyScratchCapacity, scratchNeed)) return false;
	int32_t nAdd = ib_sort_unique_keys(bp->addEv, bp->addCount, bp->keyScratch);
	int32_t nRem = ib_sort_unique_keys(bp->remEv, bp->remCount, bp->keyScratch);
	bp->stats.addEvents += nAdd;
	bp->stats.removeEvents += nRem;

	int32_t nOld = bp->dropAll ? 0 : *count;
	int nxt = 1 - *cur;
	/* both buffers grow together, so that they do not take turns growing in later updates */
	if (!RESERVE(bp, bufs[nxt], caps[nxt], nOld + nAdd)) return false;
	if (!RESERVE(bp, bufs[*cur], caps[*cur], caps[nxt])) return false;
	const ibPair* old = bufs[*cur];
	ibPair* out = bufs[nxt];
	const uint64_t* add = bp->addEv;
	const uint64_t* rem = bp->remEv;
	const ibBpProxy* px = bp->proxies;
	int32_t i = 0, j = 0, r = 0, w = 0;
	while (i < nOld || j < nAdd) {
		uint64_t ko = i < nOld ? ib_pair_key(old[i].a, old[i].b) : UINT64_MAX;
		uint64_t ka = j < nAdd ? add[j] : UINT64_MAX;
		if (ka <= ko) {
			out[w++] = (ibPair){ib_pair_key_a(ka), ib_pair_key_b(ka)};
			++j;
			if (ka == ko) ++i;
			continue;
		}
		++i;
		if ((px[old[i - 1].a].flags | px[old[i - 1].b].flags) & IB_PROXY_F_DROP) continue;
		while (r < nRem && rem[r] < ko) ++r;
		if (r < nRem && rem[r] == ko) continue;
		out[w++] = old[i - 1];
	}
	*cur = nxt;
	*count = w;
	return true;
}

/* tree: the output is the fat pairs whose tight boxes overlap */
static bool output_tight_pairs(ibBroadphase* bp)
{
	if (!RESERVE(bp, bp->pairs[0], bp->pairCapacity[0], bp->fatCount)) return false;
	const ibPair* in = bp->fat[bp->fatCur];
	const ibAABB* box = bp->aabbs;
	ibPair* out = bp->pairs[0];
	int32_t w = 0;
	for (int32_t i = 0; i < bp->fatCount; ++i)
		if (ib_aabb_overlap(box[in[i].a], box[in[i].b])) out[w++] = in[i];
	bp->cur = 0;
	bp->pairCount = w;
	return true;
}

/* ---------------------------------------------------------------- front end */

ibBroadphaseDef ib_broadphase_default_def(ibBroadphaseKind kind)
{
	ibBroadphaseDef d;
	memset(&d, 0, sizeof d);
	d.kind = kind;
	d.margin = 0.05;
	d.predictionFactor = 2.0;
	return d;
}

ibBroadphase* ib_broadphase_create(ibBroadphaseKind kind)
{
	ibBroadphaseDef d = ib_broadphase_default_def(kind);
	return ib_broadphase_create_def(&d);
}

ibBroadphase* ib_broadphase_create_def(const ibBroadphaseDef* def)
{
	ibBpAllocator al = def->allocator;
	if (!al.alloc) al = (ibBpAllocator){0};
	ibBroadphase* bp = ib_bp_alloc(&al, sizeof *bp);
	if (!bp) return NULL;
	memset(bp, 0, sizeof *bp);
	bp->kind = def->kind;
	bp->alloc = al;
	bp->margin = def->margin > 0.0 ? def->margin : 0.0;
	bp->predictionFactor = def->predictionFactor > 0.0 ? def->predictionFactor : 0.0;
	ib_sap_init(&bp->sap);
	ib_dtree_init(&bp->trees[0], &bp->alloc, bp->margin, bp->predictionFactor);
	ib_dtree_init(&bp->trees[1], &bp->alloc, 0.0, 0.0); /* static proxies: exact boxes */
	return bp;
}

#define FREE_ARR(bp, arr, cap) ib_bp_free(&(bp)->alloc, (arr), (size_t)(cap) * sizeof *(arr))

void ib_broadphase_destroy(ibBroadphase* bp)
{
	if (!bp) return;
	ib_sap_destroy(bp);
	ib_dtree_destroy(&bp->trees[0]);
	ib_dtree_destroy(&bp->trees[1]);
	FREE_ARR(bp, bp->aabbs, bp->proxyCapacity);
	FREE_ARR(bp, bp->proxies, bp->proxyCapacity);
	FREE_ARR(bp, bp->freeIds, bp->freeCapacity);
	FREE_ARR(bp, bp->pendingFree, bp->pendingFreeCapacity);
	FREE_ARR(bp, bp->dirty, bp->dirtyCapacity);
	FREE_ARR(bp, bp->added, bp->addedCapacity);
	ib_pairkeyset_free(&bp->alloc, &bp->excluded);
	FREE_ARR(bp, bp->exclChanged, bp->exclChangedCapacity);
	FREE_ARR(bp, bp->pairs[0], bp->pairCapacity[0]);
	FREE_ARR(bp, bp->pairs[1], bp->pairCapacity[1]);
	FREE_ARR(bp, bp->fat[0], bp->fatCapacity[0]);
	FREE_ARR(bp, bp->fat[1], bp->fatCapacity[1]);
	FREE_ARR(bp, bp->addEv, bp->addCapacity);
	FREE_ARR(bp, bp->remEv, bp->remCapacity);
	FREE_ARR(bp, bp->keyScratch, bp->keyScratchCapacity);
	FREE_ARR(bp, bp->rayHits, bp->rayHitCapacity);
	FREE_ARR(bp, bp->rayScratch, bp->rayScratchCapacity);
	FREE_ARR(bp, bp->batchQ, bp->batchQCapacity);
	FREE_ARR(bp, bp->batchP, bp->batchPCapacity);
	FREE_ARR(bp, bp->batchSort, bp->batchSortCapacity);
	FREE_ARR(bp, bp->batchQBox, bp->batchQBoxCapacity);
	FREE_ARR(bp, bp->batchPBox, bp->batchPBoxCapacity);
	FREE_ARR(bp, bp->batchHits, bp->batchHitCapacity);
	FREE_ARR(bp, bp->batchHitScratch, bp->batchHitScratchCapacity);
	ibBpAllocator al = bp->alloc;
	ib_bp_free(&al, bp, sizeof *bp);
}

static inline bool aabb_valid(ibAABB b)
{
	return ibVec3_IsFinite(b.lo) && ibVec3_IsFinite(b.hi) && b.lo.x <= b.hi.x && b.lo.y <= b.hi.y && b.lo.z <= b.hi.z;
}

static inline bool aabb_same(ibAABB a, ibAABB b)
{
	return a.lo.x == b.lo.x && a.lo.y == b.lo.y && a.lo.z == b.lo.z && a.hi.x == b.hi.x && a.hi.y == b.hi.y &&
	       a.hi.z == b.hi.z;
}

/* Lists holding each id at most once are sized to proxyHigh here, so pushing never allocates. */
static bool reserve_proxies(ibBroadphase* bp, int32_t high)
{
	if (high > bp->proxyCapacity) {
		int64_t cap = bp->proxyCapacity > 0 ? 2 * (int64_t)bp->proxyCapacity : 64;
		while (cap < high) cap *= 2;
		if (cap > INT32_MAX) cap = INT32_MAX;
		size_t old = (size_t)bp->proxyCapacity;
		ibAABB* a = ib_bp_realloc(&bp->alloc, bp->aabbs, old * sizeof *a, (size_t)cap * sizeof *a);
		if (!a) return false;
		bp->aabbs = a;
		ibBpProxy* p = ib_bp_realloc(&bp->alloc, bp->proxies, old * sizeof *p, (size_t)cap * sizeof *p);
		if (!p) return false; /* aabbs is larger than recorded: harmless */
		bp->proxies = p;
		bp->proxyCapacity = (int32_t)cap;
	}
	if (!RESERVE(bp, bp->freeIds, bp->freeCapacity, high)) return false;
	if (!RESERVE(bp, bp->pendingFree, bp->pendingFreeCapacity, high)) return false;
	if (!RESERVE(bp, bp->dirty, bp->dirtyCapacity, high)) return false;
	if (!RESERVE(bp, bp->added, bp->addedCapacity, high)) return false;
	if (bp->kind == IB_BROADPHASE_SAP && !ib_sap_reserve(bp, high)) return false;
	/* headroom for the per-update buffers (grow-only): 2 pairs and events per proxy before they grow
	 * inside update() */
	int32_t room = high <= INT32_MAX / 2 ? 2 * high : INT32_MAX;
	if (!RESERVE(bp, bp->addEv, bp->addCapacity, room)) return false;
	if (!RESERVE(bp, bp->remEv, bp->remCapacity, room)) return false;
	if (!RESERVE(bp, bp->keyScratch, bp->keyScratchCapacity, room)) return false;
	if (!RESERVE(bp, bp->pairs[0], bp->pairCapacity[0], room)) return false;
	if (bp->kind == IB_BROADPHASE_SAP) {
		if (!RESERVE(bp, bp->pairs[1], bp->pairCapacity[1], room)) return false;
	} else {
		if (!RESERVE(bp, bp->fat[0], bp->fatCapacity[0], room)) return false;
		if (!RESERVE(bp, bp->fat[1], bp->fatCapacity[1], room)) return false;
	}
	return true;
}

static inline void mark_drop(ibBroadphase* bp, int32_t id)
{
	ibBpProxy* p = &bp->proxies[id];
	if (p->flags & IB_PROXY_F_DROP) return;
	p->flags |= IB_PROXY_F_DROP;
	bp->dirty[bp->dirtyCount++] = id;
}

int32_t ib_broadphase_add_proxy(ibBroadphase* bp, ibAABB aabb, ibCollisionFilter filter, bool isStatic, int32_t userId)
{
	assert(aabb_valid(aabb));
	if (!aabb_valid(aabb)) return IB_BP_NULL;
	int32_t id;
	if (bp->freeCount > 0) {
		id = bp->freeIds[--bp->freeCount];
	} else {
		if (bp->proxyHigh == INT32_MAX - 1) return IB_BP_NULL;
		if (!reserve_proxies(bp, bp->proxyHigh + 1)) return IB_BP_NULL;
		id = bp->proxyHigh++;
		bp->proxies[id] = (ibBpProxy){0};
	}
	ibBpProxy* p = &bp->proxies[id];
	*p = (ibBpProxy){
	    .filter = filter, .user = userId, .leaf = IB_TREE_NULL, .isStatic = isStatic ? 1 : 0, .state = IB_PROXY_ALIVE};
	bp->aabbs[id] = aabb;
	if (bp->kind == IB_BROADPHASE_TREE) {
		p->leaf = ib_dtree_insert(&bp->trees[p->isStatic], aabb, id);
		if (p->leaf == IB_TREE_NULL) {
			p->state = IB_PROXY_FREE;
			bp->freeIds[bp->freeCount++] = id;
			return IB_BP_NULL;
		}
		mark_drop(bp, id); /* queries next update */
	} else {
		p->flags |= IB_PROXY_F_NEW;
		bp->added[bp->addedCount++] = id;
	}
	++bp->proxyCount;
	return id;
}

static bool check_alive(const ibBroadphase* bp, int32_t id)
{
	bool ok = ib_broadphase_is_alive(bp, id);
	assert(ok);
	return ok;
}

static void drop_exclusions_of(ibBroadphase* bp, int32_t id)
{
	ibPairKeySet* s = &bp->excluded;
	for (int32_t i = 0; i < s->capacity && bp->proxies[id].exclusions > 0; ++i) {
		for (;;) {
			uint64_t k = s->slots[i];
			if (!k) break;
			int32_t a = ib_pair_key_a(k), b = ib_pair_key_b(k);
			if (a != id && b != id) break;
			keyset_delete_slot(s, (uint32_t)i); /* may shift a later key into slot i: look again */
			--bp->proxies[a].exclusions;
			--bp->proxies[b].exclusions;
		}
	}
	assert(bp->proxies[id].exclusions == 0);
}

void ib_broadphase_remove_proxy(ibBroadphase* bp, int32_t id)
{
	if (!check_alive(bp, id)) return;
	ibBpProxy* p = &bp->proxies[id];
	if (bp->kind == IB_BROADPHASE_TREE) {
		ib_dtree_remove(&bp->trees[p->isStatic], p->leaf);
		p->leaf = IB_TREE_NULL;
	} else {
		ib_sap_remove(bp, id);
	}
	if (p->exclusions > 0) drop_exclusions_of(bp, id);
	p->state = IB_PROXY_REMOVED;
	mark_drop(bp, id);
	bp->pendingFree[bp->pendingFreeCount++] = id;
	--bp->proxyCount;
}

void ib_broadphase_move_proxy_predicted(ibBroadphase* bp, int32_t id, ibAABB aabb, ibVec3 displacement)
{
	if (!check_alive(bp, id)) return;
	assert(aabb_valid(aabb));
	if (!aabb_valid(aabb) || aabb_same(aabb, bp->aabbs[id])) return;
	bp->aabbs[id] = aabb;
	ibBpProxy* p = &bp->proxies[id];
	if (bp->kind == IB_BROADPHASE_TREE) {
		/* the fat pairs change only when the fat box does */
		if (ib_dtree_move(&bp->trees[p->isStatic], p->leaf, aabb, displacement)) mark_drop(bp, id);
	} else {
		ib_sap_move(bp, id);
	}
}

void ib_broadphase_move_proxy(ibBroadphase* bp, int32_t id, ibAABB aabb)
{
	ib_broadphase_move_proxy_predicted(bp, id, aabb, (ibVec3){0.0, 0.0, 0.0});
}

void ib_broadphase_set_filter(ibBroadphase* bp, int32_t id, ibCollisionFilter filter)
{
	if (!check_alive(bp, id)) return;
	ibCollisionFilter* f = &bp->proxies[id].filter;
	if (f->categoryBits == filter.categoryBits && f->maskBits == filter.maskBits && f->groupIndex == filter.groupIndex)
		return;
	*f = filter;
	mark_drop(bp, id);
}

bool ib_broadphase_set_static(ibBroadphase* bp, int32_t id, bool isStatic)
{
	if (!check_alive(bp, id)) return false;
	ibBpProxy* p = &bp->proxies[id];
	uint8_t s = isStatic ? 1 : 0;
	if (p->isStatic == s) return true;
	if (bp->kind == IB_BROADPHASE_TREE) {
		int32_t leaf = ib_dtree_insert(&bp->trees[s], bp->aabbs[id], id);
		if (leaf == IB_TREE_NULL) return false;
		ib_dtree_remove(&bp->trees[p->isStatic], p->leaf);
		p->leaf = leaf;
	}
	p->isStatic = s;
	mark_drop(bp, id);
	return true;
}

static bool note_exclusion_change(ibBroadphase* bp, uint64_t key)
{
	if (!RESERVE(bp, bp->exclChanged, bp->exclChangedCapacity, bp->exclChangedCount + 1)) {
		bp->forceFull = true; /* cannot track it: recompute everything next update */
		return false;
	}
	bp->exclChanged[bp->exclChangedCount++] = key;
	return true;
}

bool ib_broadphase_exclude_pair(ibBroadphase* bp, int32_t a, int32_t b)
{
	if (!check_alive(bp, a) || !check_alive(bp, b) || a == b) return false;
	uint64_t k = ib_pair_key(a, b);
	int r = ib_pairkeyset_insert(&bp->alloc, &bp->excluded, k);
	if (r < 0) return false;
	if (r == 1) {
		++bp->proxies[a].exclusions;
		++bp->proxies[b].exclusions;
		note_exclusion_change(bp, k);
	}
	return true;
}

void ib_broadphase_include_pair(ibBroadphase* bp, int32_t a, int32_t b)
{
	if (!check_alive(bp, a) || !check_alive(bp, b) || a == b) return;
	uint64_t k = ib_pair_key(a, b);
	if (!ib_pairkeyset_remove(&bp->excluded, k)) return;
	--bp->proxies[a].exclusions;
	--bp->proxies[b].exclusions;
	note_exclusion_change(bp, k);
}

bool ib_broadphase_is_excluded(const ibBroadphase* bp, int32_t a, int32_t b)
{
	if (a == b || bp->proxies[a].exclusions == 0 || bp->proxies[b].exclusions == 0) return false;
	return ib_pairkeyset_contains(&bp->excluded, ib_pair_key(a, b));
}

bool ib_broadphase_should_collide(const ibBroadphase* bp, int32_t a, int32_t b)
{
	if (a == b || !ib_bp_filter_quick(bp, a, b)) return false;
	return !ib_broadphase_is_excluded(bp, a, b);
}

/* ---------------------------------------------------------------- tree kind: fat pairs */

static inline ibAABB fat_box(const ibBroadphase* bp, int32_t id)
{
	const ibBpProxy* p = &bp->proxies[id];
	return ib_dtree_fat_aabb(&bp->trees[p->isStatic], p->leaf);
}

typedef struct treeQueryCtx {
	ibBroadphase* bp;
	int32_t self;
	bool full;
} treeQueryCtx;

static bool tree_pair_cb(void* vctx, int32_t leaf, int32_t o)
{
	(void)leaf;
	treeQueryCtx* c = vctx;
	ibBroadphase* bp = c->bp;
	int32_t d = c->self;
	if (o == d) return true;
	/* a pair whose both proxies query is reported by the lower id */
	if (o < d && (c->full ? !bp->proxies[o].isStatic : (bp->proxies[o].flags & IB_PROXY_F_DROP) != 0)) return true;
	if (!ib_broadphase_should_collide(bp, d, o)) return true;
	return ib_bp_push_add(bp, ib_pair_key(d, o));
}

static void tree_query_proxy(ibBroadphase* bp, int32_t d, bool full)
{
	treeQueryCtx c = {bp, d, full};
	ibAABB box = fat_box(bp, d);
	ib_dtree_query_fat(&bp->trees[0], box, tree_pair_cb, &c);
	if (!bp->proxies[d].isStatic) ib_dtree_query_fat(&bp->trees[1], box, tree_pair_cb, &c);
	++bp->stats.queries;
}

static void tree_update(ibBroadphase* bp)
{
	if (bp->forceFull) {
		bp->dropAll = true;
		for (int32_t id = 0; id < bp->proxyHigh && !bp->oom; ++id)
			if (bp->proxies[id].state == IB_PROXY_ALIVE && !bp->proxies[id].isStatic) tree_query_proxy(bp, id, true);
		return;
	}
	for (int32_t k = 0; k < bp->dirtyCount && !bp->oom; ++k) {
		int32_t d = bp->dirty[k];
		if (bp->proxies[d].state == IB_PROXY_ALIVE) tree_query_proxy(bp, d, false);
	}
}

/* ---------------------------------------------------------------- update */

bool ib_broadphase_update(ibBroadphase* bp)
{
	bp->addCount = bp->remCount = 0;
	bp->dropAll = false;
	bp->oom = false;
	if (bp->kind == IB_BROADPHASE_SAP)
		ib_sap_update(bp);
	else
		tree_update(bp);

	if (!bp->dropAll && !bp->oom) {
		for (int32_t k = 0; k < bp->exclChangedCount; ++k) {
			uint64_t key = bp->exclChanged[k];
			int32_t a = ib_pair_key_a(key), b = ib_pair_key_b(key);
			if (!ib_broadphase_is_alive(bp, a) || !ib_broadphase_is_alive(bp, b)) continue;
			bool overlap = bp->kind == IB_BROADPHASE_TREE ? ib_aabb_overlap(fat_box(bp, a), fat_box(bp, b))
			                                              : ib_aabb_overlap(bp->aabbs[a], bp->aabbs[b]);
			if (overlap && ib_broadphase_should_collide(bp, a, b))
				ib_bp_push_add(bp, key);
			else
				ib_bp_push_remove(bp, key);
		}
	}
	bool ok = !bp->oom;
	/* no pair events and no dropped proxies: the pair set is the last one (no copy) */
	bool unchanged = bp->addCount == 0 && bp->remCount == 0 && !bp->dropAll && bp->dirtyCount == 0;
	if (ok && bp->kind == IB_BROADPHASE_SAP) {
		if (!unchanged) ok = commit(bp, bp->pairs, bp->pairCapacity, &bp->pairCount, &bp->cur);
	} else if (ok)
		ok = commit(bp, bp->fat, bp->fatCapacity, &bp->fatCount, &bp->fatCur) && output_tight_pairs(bp);
	bp->forceFull = !ok;

	for (int32_t k = 0; k < bp->dirtyCount; ++k) bp->proxies[bp->dirty[k]].flags = 0;
	for (int32_t k = 0; k < bp->addedCount; ++k) bp->proxies[bp->added[k]].flags = 0;
	bp->dirtyCount = bp->addedCount = bp->exclChangedCount = 0;
	for (int32_t k = 0; k < bp->pendingFreeCount; ++k) {
		int32_t id = bp->pendingFree[k];
		bp->proxies[id].state = IB_PROXY_FREE;
		bp->freeIds[bp->freeCount++] = id;
	}
	bp->pendingFreeCount = 0;
	++bp->stats.updates;
	return ok;
}

const ibPair* ib_broadphase_pairs(const ibBroadphase* bp, int32_t* count)
{
	*count = bp->pairCount;
	return bp->pairs[bp->cur];
}

/* ---------------------------------------------------------------- queries */

typedef struct frontQueryCtx {
	ibBroadphaseQueryFn* fn;
	void* ctx;
	bool stopped;
} frontQueryCtx;

static bool front_query_cb(void* vctx, int32_t leaf, int32_t user)
{
	(void)leaf;
	frontQueryCtx* c = vctx;
	if (!c->fn(c->ctx, user)) c->stopped = true;
	return !c->stopped;
}

void ib_broadphase_query(ibBroadphase* bp, ibAABB aabb, ibBroadphaseQueryFn* fn, void* ctx)
{
	if (bp->kind == IB_BROADPHASE_TREE) {
		frontQueryCtx c = {fn, ctx, false};
		ib_dtree_query(&bp->trees[0], aabb, front_query_cb, &c);
		if (!c.stopped) ib_dtree_query(&bp->trees[1], aabb, front_query_cb, &c);
		return;
	}
	for (int32_t id = 0; id < bp->proxyHigh; ++id)
		if (bp->proxies[id].state == IB_PROXY_ALIVE && ib_aabb_overlap(bp->aabbs[id], aabb) && !fn(ctx, id)) return;
}

static bool push_hit(ibBroadphase* bp, int32_t proxy, double t)
{
	if (!RESERVE(bp, bp->rayHits, bp->rayHitCapacity, bp->rayHitCount + 1)) {
		bp->oom = true;
		return false;
	}
	bp->rayHits[bp->rayHitCount++] = (ibRayHit){proxy, t};
	return true;
}

static double front_ray_cb(void* vctx, int32_t leaf, int32_t user, double t)
{
	(void)leaf;
	ibBroadphase* bp = vctx;
	return push_hit(bp, user, t) ? 1.0 : -1.0;
}

static inline bool hit_less(ibRayHit a, ibRayHit b) { return a.t < b.t || (a.t == b.t && a.proxy < b.proxy); }

/* bottom-up merge sort of the hits (stable, no allocation beyond the scratch) */
static void sort_hits(ibRayHit* a, ibRayHit* tmp, int32_t n)
{
	ibRayHit *src = a, *dst = tmp;
	for (int32_t width = 1; width < n; width *= 2) {
		for (int32_t lo = 0; lo < n; lo += 2 * width) {
			int32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			int32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) dst[k++] = hit_less(src[j], src[i]) ? src[j++] : src[i++];
			while (i < mid) dst[k++] = src[i++];
			while (j < hi) dst[k++] = src[j++];
		}
		ibRayHit* t = src;
		src = dst;
		dst = t;
	}
	if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* ---------------------------------------------------------------- batched box queries */

typedef struct batchOneCtx {
	ibBroadphaseBatchFn* fn;
	void* ctx;
	int32_t q;
	bool stopped;
} batchOneCtx;

static bool batch_one_cb(void* vctx, int32_t proxy)
{
	batchOneCtx* c = vctx;
	if (c->fn(c->ctx, c->q, proxy)) return true;
	c->stopped = true;
	return false;
}

static bool push_batch_hit(ibBroadphase* bp, int32_t* count, int32_t q, int32_t proxy)
{
	if (!RESERVE(bp, bp->batchHits, bp->batchHitCapacity, *count + 1)) return false;
	bp->batchHits[(*count)++] = ((uint64_t)(uint32_t)q << 32) | (uint32_t)proxy;
	return true;
}

static inline double axis_of(ibVec3 v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

/* the axis along which the proxies' centres spread most */
static int batch_axis(const ibBroadphase* bp)
{
	double sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
	int32_t m = 0;
	for (int32_t id = 0; id < bp->proxyHigh; ++id) {
		if (bp->proxies[id].state != IB_PROXY_ALIVE) continue;
		ibVec3 c = ibScale(0.5, ibAdd(bp->aabbs[id].lo, bp->aabbs[id].hi));
		for (int a = 0; a < 3; ++a) {
			double v = axis_of(c, a);
			if (!isfinite(v)) continue;
			sum[a] += v;
			sq[a] += v * v;
		}
		++m;
	}
	int best = 0;
	double bestVar = -1.0;
	for (int a = 0; a < 3 && m > 0; ++a) {
		double mean = sum[a] / m, var = sq[a] / m - mean * mean;
		if (var > bestVar) bestVar = var, best = a;
	}
	return best;
}

/* [IMPL] Box pruning: queries and proxies sorted by their lower bound on the axis of most spread; a
 * pair overlapping on that axis is found exactly once, from the query when the proxy starts within it
 * (p.lo >= q.lo) and from the proxy otherwise (q.lo > p.lo); the full overlap test then decides. */
static bool batch_sweep(ibBroadphase* bp, const ibAABB* boxes, int32_t n, int32_t* hitCount)
{
	int32_t np = 0;
	if (!RESERVE(bp, bp->batchQ, bp->batchQCapacity, n) || !RESERVE(bp, bp->batchP, bp->batchPCapacity, bp->proxyHigh + 1) ||
	    !RESERVE(bp, bp->batchSort, bp->batchSortCapacity, (n > bp->proxyHigh ? n : bp->proxyHigh) + 1))
		return false;
	const int a = batch_axis(bp);
	for (int32_t q = 0; q < n; ++q) bp->batchQ[q] = (ibRayHit){q, axis_of(boxes[q].lo, a)};
	for (int32_t id = 0; id < bp->proxyHigh; ++id)
		if (bp->proxies[id].state == IB_PROXY_ALIVE) bp->batchP[np++] = (ibRayHit){id, axis_of(bp->aabbs[id].lo, a)};
	sort_hits(bp->batchQ, bp->batchSort, n);
	sort_hits(bp->batchP, bp->batchSort, np);
	const ibRayHit *Q = bp->batchQ, *P = bp->batchP;
	/* the boxes in sweep order: the inner loops read memory in sequence (the same tests, the same hits) */
	if (!RESERVE(bp, bp->batchQBox, bp->batchQBoxCapacity, n + 1) || !RESERVE(bp, bp->batchPBox, bp->batchPBoxCapacity, np + 1))
		return false;
	ibAABB *QB = bp->batchQBox, *PB = bp->batchPBox;
	for (int32_t i = 0; i < n; ++i) QB[i] = boxes[Q[i].proxy];
	for (int32_t j = 0; j < np; ++j) PB[j] = bp->aabbs[P[j].proxy];
	int32_t j0 = 0;
	for (int32_t i = 0; i < n; ++i) {
		const ibAABB qb = QB[i];
		const double hi = axis_of(qb.hi, a);
		while (j0 < np && P[j0].t < Q[i].t) ++j0;
		for (int32_t j = j0; j < np && P[j].t <= hi; ++j)
			if (ib_aabb_overlap(qb, PB[j]) && !push_batch_hit(bp, hitCount, Q[i].proxy, P[j].proxy)) return false;
	}
	int32_t i0 = 0;
	for (int32_t j = 0; j < np; ++j) {
		const ibAABB pb = PB[j];
		const double hi = axis_of(pb.hi, a);
		while (i0 < n && Q[i0].t <= P[j].t) ++i0;
		for (int32_t i = i0; i < n && Q[i].t <= hi; ++i)
			if (ib_aabb_overlap(QB[i], pb) && !push_batch_hit(bp, hitCount, Q[i].proxy, P[j].proxy)) return false;
	}
	return true;
}

bool ib_broadphase_query_batch(ibBroadphase* bp, const ibAABB* boxes, int32_t n, ibBroadphaseBatchFn* fn, void* ctx)
{
	if (n <= 0) return true;
	if (bp->kind == IB_BROADPHASE_TREE) { /* the trees answer each query in logarithmic time already */
		for (int32_t q = 0; q < n; ++q) {
			batchOneCtx c = {fn, ctx, q, false};
			ib_broadphase_query(bp, boxes[q], batch_one_cb, &c);
			if (c.stopped) return false;
		}
		return true;
	}
	int32_t count = 0;
	if (!batch_sweep(bp, boxes, n, &count)) return false;
	if (!RESERVE(bp, bp->batchHitScratch, bp->batchHitScratchCapacity, count)) return false;
	count = ib_sort_unique_keys(bp->batchHits, count, bp->batchHitScratch);
	for (int32_t k = 0; k < count; ++k)
		if (!fn(ctx, ib_pair_key_a(bp->batchHits[k]), ib_pair_key_b(bp->batchHits[k]))) return false;
	return true;
}

const ibRayHit* ib_broadphase_raycast(ibBroadphase* bp, ibVec3 p0, ibVec3 p1, int32_t* count)
{
	bp->rayHitCount = 0;
	bool oomBefore = bp->oom;
	bp->oom = false;
	if (bp->kind == IB_BROADPHASE_TREE) {
		ib_dtree_raycast(&bp->trees[0], p0, p1, 1.0, front_ray_cb, bp);
		if (!bp->oom) ib_dtree_raycast(&bp->trees[1], p0, p1, 1.0, front_ray_cb, bp);
	} else {
		ibVec3 d = ibSub(p1, p0);
		double t;
		for (int32_t id = 0; id < bp->proxyHigh && !bp->oom; ++id)
			if (bp->proxies[id].state == IB_PROXY_ALIVE && ib_ray_aabb(p0, d, bp->aabbs[id], 1.0, &t))
				push_hit(bp, id, t);
	}
	bool failed = bp->oom || !RESERVE(bp, bp->rayScratch, bp->rayScratchCapacity, bp->rayHitCount);
	bp->oom = oomBefore;
	if (failed) {
		*count = -1;
		return NULL;
	}
	sort_hits(bp->rayHits, bp->rayScratch, bp->rayHitCount);
	*count = bp->rayHitCount;
	return bp->rayHits;
}

const char* ib_broadphase_validate(const ibBroadphase* bp)
{
	if (bp->kind == IB_BROADPHASE_SAP) return ib_sap_validate(bp);
	for (int k = 0; k < 2; ++k) {
		const char* e = ib_dtree_validate(&bp->trees[k]);
		if (e) return e;
	}
	int32_t alive = 0;
	for (int32_t id = 0; id < bp->proxyHigh; ++id) {
		const ibBpProxy* p = &bp->proxies[id];
		if (p->state != IB_PROXY_ALIVE) continue;
		++alive;
		const ibDynamicTree* t = &bp->trees[p->isStatic];
		if (p->leaf < 0 || p->leaf >= t->capacity || t->nodes[p->leaf].height != 0) return "proxy without a leaf";
		if (ib_dtree_user(t, p->leaf) != id) return "leaf names another proxy";
		if (!aabb_same(ib_dtree_aabb(t, p->leaf), bp->aabbs[id])) return "leaf box differs from the proxy box";
	}
	if (alive != bp->proxyCount || alive != bp->trees[0].leafCount + bp->trees[1].leafCount) return "proxy count";
	return NULL;
}
