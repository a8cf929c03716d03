/* Sweep and prune with temporal coherence (§4.5.1.1, §2.2.2.1; Baraff; Cohen et al., I-COLLIDE).
 *
 * Each axis keeps the 2n interval endpoints sorted by (value, isUpper); a lower bound sorts before an
 * upper bound of equal value, so "lower(A) before upper(B)" is exactly lo_A <= hi_B and the order
 * encodes the closed-box overlap test. move() writes the new values in place; update() re-sorts each
 * axis by insertion sort. Insertion sort exchanges every inverted pair of endpoints exactly once, and
 * the exchange goes from the old relative order to the new one, so:
 *   - lower(A) moving below upper(B): A and B now overlap on this axis. They overlap in 3-D iff their
 *     final boxes overlap (all endpoint values are final), tested directly: add event if so.
 *   - upper(A) moving below lower(B): they are now apart on this axis, so apart: remove event.
 * A pair whose overlap state changed has changed on some axis and produced an exchange there, so the
 * events carry every change, and each event states the final truth (broadphase.h). Cost: O(n) for the
 * scan plus O(1) per exchange, i.e. expected linear for coherent motion.
 *
 * New proxies are appended as [lower, upper] per proxy at the array end (as if they came from beyond
 * +inf, separated from everything and from each other) and sorted in like moved ones. A batch of new
 * proxies that is large compared with the existing ones (or the first fill) instead rebuilds: merge
 * sort of every axis, then one sweep along the axis of largest spread with an active list. */
#include <assert.h>
#include <string.h>

#include "collision/broadphase.h"

static inline int32_t ep_proxy(uint32_t data) { return (int32_t)(data >> 1); }
static inline uint32_t ep_upper(uint32_t data) { return data & 1u; }

/* key(a) > key(b) for the key (value, isUpper) */
static inline bool ep_greater(ibSapEndpoint a, ibSapEndpoint b)
{
	return a.value > b.value || (a.value == b.value && ep_upper(a.data) > ep_upper(b.data));
}

static inline double lo_of(ibAABB b, int axis) { return axis == 0 ? b.lo.x : (axis == 1 ? b.lo.y : b.lo.z); }
static inline double hi_of(ibAABB b, int axis) { return axis == 0 ? b.hi.x : (axis == 1 ? b.hi.y : b.hi.z); }

void ib_sap_init(ibSweepAndPrune* s) { memset(s, 0, sizeof *s); }

void ib_sap_destroy(ibBroadphase* bp)
{
	ibSweepAndPrune* s = &bp->sap;
	size_t ec = (size_t)s->capacity, ic = (size_t)s->indexCapacity;
	for (int a = 0; a < 3; ++a) ib_bp_free(&bp->alloc, s->axis[a], ec * sizeof(ibSapEndpoint));
	ib_bp_free(&bp->alloc, s->scratch, ec * sizeof(ibSapEndpoint));
	ib_bp_free(&bp->alloc, s->index, 6 * ic * sizeof(int32_t));
	ib_bp_free(&bp->alloc, s->active, ic * sizeof(int32_t));
	ib_bp_free(&bp->alloc, s->activePos, ic * sizeof(int32_t));
	ib_sap_init(s);
}

static bool grow(ibBroadphase* bp, void* arrayPtr, size_t oldBytes, size_t newBytes)
{
	void* p;
	memcpy(&p, arrayPtr, sizeof p);
	void* q = ib_bp_realloc(&bp->alloc, p, oldBytes, newBytes);
	if (!q) return false;
	memcpy(arrayPtr, &q, sizeof q);
	return true;
}

bool ib_sap_reserve(ibBroadphase* bp, int32_t proxyHigh)
{
	ibSweepAndPrune* s = &bp->sap;
	int64_t needEp = 2 * (int64_t)proxyHigh;
	if (needEp > s->capacity) {
		int64_t cap = s->capacity > 0 ? 2 * (int64_t)s->capacity : 128;
		while (cap < needEp) cap *= 2;
		if (cap > INT32_MAX) return false;
		size_t ob = (size_t)s->capacity * sizeof(ibSapEndpoint), nb = (size_t)cap * sizeof(ibSapEndpoint);
		for (int a = 0; a < 3; ++a)
			if (!grow(bp, &s->axis[a], ob, nb)) return false;
		if (!grow(bp, &s->scratch, ob, nb)) return false;
		s->capacity = (int32_t)cap;
	}
	if (proxyHigh > s->indexCapacity) {
		int64_t cap = s->indexCapacity > 0 ? 2 * (int64_t)s->indexCapacity : 64;
		while (cap < proxyHigh) cap *= 2;
		if (cap > INT32_MAX / 6) return false;
		size_t oc = (size_t)s->indexCapacity, nc = (size_t)cap;
		if (!grow(bp, &s->index, 6 * oc * sizeof(int32_t), 6 * nc * sizeof(int32_t))) return false;
		if (!grow(bp, &s->active, oc * sizeof(int32_t), nc * sizeof(int32_t))) return false;
		if (!grow(bp, &s->activePos, oc * sizeof(int32_t), nc * sizeof(int32_t))) return false;
		for (size_t i = 6 * oc; i < 6 * nc; ++i) s->index[i] = -1;
		s->indexCapacity = (int32_t)cap;
	}
	return true;
}

void ib_sap_move(ibBroadphase* bp, int32_t id)
{
	ibSweepAndPrune* s = &bp->sap;
	const int32_t* ix = &s->index[6 * id];
	if (ix[0] < 0) return; /* not in the arrays yet: appended with its current box */
	ibAABB b = bp->aabbs[id];
	for (int a = 0; a < 3; ++a) {
		s->axis[a][ix[2 * a]].value = lo_of(b, a);
		s->axis[a][ix[2 * a + 1]].value = hi_of(b, a);
	}
	s->sorted = false;
}

void ib_sap_remove(ibBroadphase* bp, int32_t id)
{
	if (bp->sap.index[6 * id] >= 0) ++bp->sap.pendingRemovals;
}

/* ---------------------------------------------------------------- incremental update */

static void compact_removed(ibBroadphase* bp)
{
	ibSweepAndPrune* s = &bp->sap;
	int32_t w = 0;
	for (int a = 0; a < 3; ++a) {
		ibSapEndpoint* ep = s->axis[a];
		w = 0;
		for (int32_t r = 0; r < s->count; ++r) {
			int32_t p = ep_proxy(ep[r].data);
			if (bp->proxies[p].state == IB_PROXY_REMOVED) continue;
			ep[w] = ep[r];
			s->index[6 * p + 2 * a + (int32_t)ep_upper(ep[r].data)] = w;
			++w;
		}
	}
	s->count = w;
	for (int32_t k = 0; k < bp->pendingFreeCount; ++k)
		for (int i = 0; i < 6; ++i) s->index[6 * bp->pendingFree[k] + i] = -1;
	s->pendingRemovals = 0;
}

static void append_proxy(ibBroadphase* bp, int32_t id)
{
	ibSweepAndPrune* s = &bp->sap;
	ibAABB b = bp->aabbs[id];
	uint32_t d = (uint32_t)id << 1;
	for (int a = 0; a < 3; ++a) {
		s->axis[a][s->count] = (ibSapEndpoint){lo_of(b, a), d};
		s->axis[a][s->count + 1] = (ibSapEndpoint){hi_of(b, a), d | 1u};
		s->index[6 * id + 2 * a] = s->count;
		s->index[6 * id + 2 * a + 1] = s->count + 1;
	}
	s->count += 2;
	s->sorted = false;
}

static void sort_axis(ibBroadphase* bp, int a)
{
	ibSweepAndPrune* s = &bp->sap;
	ibSapEndpoint* ep = s->axis[a];
	int32_t* index = s->index;
	const ibAABB* boxes = bp->aabbs;
	int64_t swaps = 0;
	for (int32_t i = 1; i < s->count; ++i) {
		ibSapEndpoint e = ep[i];
		if (!ep_greater(ep[i - 1], e)) continue;
		const int32_t pe = ep_proxy(e.data);
		const uint32_t ue = ep_upper(e.data);
		int32_t j = i;
		do {
			ibSapEndpoint f = ep[j - 1];
			const uint32_t uf = ep_upper(f.data);
			if (ue != uf) {
				const int32_t pf = ep_proxy(f.data);
				if (pf != pe && ib_bp_filter_quick(bp, pe, pf)) {
					if (!ue) { /* lower(pe) passes below upper(pf): overlap begins on this axis */
						if (ib_aabb_overlap(boxes[pe], boxes[pf]) && !ib_broadphase_is_excluded(bp, pe, pf))
							ib_bp_push_add(bp, ib_pair_key(pe, pf));
					} else { /* upper(pe) passes below lower(pf): apart */
						ib_bp_push_remove(bp, ib_pair_key(pe, pf));
					}
				}
			}
			ep[j] = f;
			index[6 * ep_proxy(f.data) + 2 * a + (int32_t)uf] = j;
			--j;
			++swaps;
		} while (j > 0 && ep_greater(ep[j - 1], e));
		ep[j] = e;
		index[6 * pe + 2 * a + (int32_t)ue] = j;
	}
	bp->stats.swaps += swaps;
}

/* all partners of a proxy whose filter changed (rare: linear scan) */
static void requery(ibBroadphase* bp, int32_t id)
{
	ibAABB b = bp->aabbs[id];
	for (int32_t o = 0; o < bp->proxyHigh; ++o) {
		if (o == id || bp->proxies[o].state != IB_PROXY_ALIVE) continue;
		if (ib_aabb_overlap(b, bp->aabbs[o]) && ib_broadphase_should_collide(bp, id, o))
			ib_bp_push_add(bp, ib_pair_key(id, o));
	}
}

/* ---------------------------------------------------------------- rebuild */

static void merge_sort(ibSapEndpoint* a, ibSapEndpoint* tmp, int32_t n)
{
	ibSapEndpoint *src = a, *dst = tmp;
	for (int32_t width = 1; width < n; width *= 2) {
		for (int32_t lo = 0; lo < n; lo += 2 * width) {
			int32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			int32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) dst[k++] = ep_greater(src[i], src[j]) ? src[j++] : src[i++];
			while (i < mid) dst[k++] = src[i++];
			while (j < hi) dst[k++] = src[j++];
		}
		ibSapEndpoint* t = src;
		src = dst;
		dst = t;
	}
	if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

static void rebuild(ibBroadphase* bp)
{
	ibSweepAndPrune* s = &bp->sap;
	s->count = 0;
	double sum[3] = {0, 0, 0}, sum2[3] = {0, 0, 0};
	for (int32_t id = 0; id < bp->proxyHigh; ++id) {
		for (int i = 0; i < 6; ++i) s->index[6 * id + i] = -1;
		if (bp->proxies[id].state != IB_PROXY_ALIVE) continue;
		append_proxy(bp, id);
		for (int a = 0; a < 3; ++a) {
			double c = 0.5 * (lo_of(bp->aabbs[id], a) + hi_of(bp->aabbs[id], a));
			sum[a] += c;
			sum2[a] += c * c;
		}
	}
	for (int a = 0; a < 3; ++a) {
		merge_sort(s->axis[a], s->scratch, s->count);
		for (int32_t k = 0; k < s->count; ++k) {
			uint32_t d = s->axis[a][k].data;
			s->index[6 * ep_proxy(d) + 2 * a + (int32_t)ep_upper(d)] = k;
		}
	}
	s->pendingRemovals = 0;

	int best = 0;
	double n = (double)(s->count / 2), bestVar = -1.0;
	for (int a = 0; a < 3 && n > 0; ++a) {
		double var = sum2[a] / n - (sum[a] / n) * (sum[a] / n);
		if (var > bestVar) {
			bestVar = var;
			best = a;
		}
	}
	/* sweep: at a lower endpoint the active proxies are exactly those overlapping it on this axis */
	const ibSapEndpoint* ep = s->axis[best];
	int32_t nActive = 0;
	for (int32_t k = 0; k < s->count; ++k) {
		int32_t p = ep_proxy(ep[k].data);
		if (ep_upper(ep[k].data)) {
			int32_t pos = s->activePos[p], last = s->active[--nActive];
			s->active[pos] = last;
			s->activePos[last] = pos;
			continue;
		}
		ibAABB b = bp->aabbs[p];
		for (int32_t q = 0; q < nActive; ++q) {
			int32_t o = s->active[q];
			if (ib_aabb_overlap(b, bp->aabbs[o]) && ib_broadphase_should_collide(bp, p, o))
				ib_bp_push_add(bp, ib_pair_key(p, o));
		}
		s->activePos[p] = nActive;
		s->active[nActive++] = p;
	}
	bp->dropAll = true;
	++bp->stats.rebuilds;
}

bool ib_sap_update(ibBroadphase* bp)
{
	ibSweepAndPrune* s = &bp->sap;
	if (s->pendingRemovals > 0) compact_removed(bp);

	int32_t nNew = 0;
	for (int32_t k = 0; k < bp->addedCount; ++k) {
		int32_t id = bp->added[k];
		if (bp->proxies[id].state == IB_PROXY_ALIVE && s->index[6 * id] < 0) ++nNew;
	}
	int32_t existing = s->count / 2;
	if (bp->forceFull || (nNew > 0 && (existing == 0 || (nNew >= 32 && 4 * (int64_t)nNew > existing)))) {
		rebuild(bp);
		return !bp->oom;
	}
	for (int32_t k = 0; k < bp->addedCount; ++k) {
		int32_t id = bp->added[k];
		if (bp->proxies[id].state == IB_PROXY_ALIVE && s->index[6 * id] < 0) append_proxy(bp, id);
	}
	/* nothing moved since the last pass (resting or sleeping scenes): the arrays are sorted and no
	 * endpoint crossed another, so the pass would find no change */
	if (!s->sorted)
		for (int a = 0; a < 3; ++a) sort_axis(bp, a);
	s->sorted = !bp->oom;
	for (int32_t k = 0; k < bp->dirtyCount; ++k) {
		int32_t id = bp->dirty[k];
		const ibBpProxy* p = &bp->proxies[id];
		if (p->state == IB_PROXY_ALIVE && !(p->flags & IB_PROXY_F_NEW)) requery(bp, id);
	}
	return !bp->oom;
}

const char* ib_sap_validate(const ibBroadphase* bp)
{
	const ibSweepAndPrune* s = &bp->sap;
	int32_t inArrays = 0;
	for (int32_t id = 0; id < bp->proxyHigh; ++id) {
		const int32_t* ix = &s->index[6 * id];
		if (ix[0] < 0) continue;
		if (bp->proxies[id].state != IB_PROXY_ALIVE) return "dead proxy in the endpoint arrays";
		++inArrays;
		for (int i = 0; i < 6; ++i) {
			int a = i / 2;
			if (ix[i] < 0 || ix[i] >= s->count) return "endpoint index out of range";
			ibSapEndpoint e = s->axis[a][ix[i]];
			if (ep_proxy(e.data) != id || (int)ep_upper(e.data) != (i & 1)) return "endpoint index mismatch";
			double v = (i & 1) ? hi_of(bp->aabbs[id], a) : lo_of(bp->aabbs[id], a);
			if (e.value != v) return "endpoint value differs from the proxy box";
		}
	}
	if (2 * inArrays != s->count) return "endpoint count";
	for (int a = 0; a < 3; ++a)
		for (int32_t k = 1; k < s->count; ++k)
			if (ep_greater(s->axis[a][k - 1], s->axis[a][k])) return "endpoints not sorted";
	return NULL;
}
