/* Broadphase (src/collision/broadphase.h): sweep and prune and the dynamic AABB tree against brute
 * force. (1) pieces: filter rules, pair-key set (backward-shift deletion), key sort, segment/box slab
 * test; (2) the raw tree under random insert/remove/move with every invariant checked after every
 * operation (links, heights, |h(l) - h(r)| <= 1, boxes), AABB queries and ordered ray casts vs brute
 * force; (3) random scenes of 10^3 boxes (fixed seed; mixed sizes, thin plates, some static, some on a
 * grid so that boxes touch exactly) over 100 steps of small random displacements plus teleports, filter
 * changes, static toggles, exclusions, removals and re-insertions: after every update the pair set of
 * each broadphase equals the O(n^2) brute-force set under the same rules, exactly; ray casts equal
 * brute force in (t, id) order; (4) update() allocates nothing after warm-up (allocator hooks).
 * Timing is not tested here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/broadphase.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif

#if IBDYN_SLOW_TESTS
#define SCENE_N 1000
#define SCENE_STEPS 100
#define TREE_OPS 20000
#else
#define SCENE_N 250
#define SCENE_STEPS 30
#define TREE_OPS 4000
#endif

/* ---------------------------------------------------------------- helpers */

static uint64_t g_rng;
static uint64_t rnd_u64(void)
{
	uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
static double rnd(void) { return (double)(rnd_u64() >> 11) * (1.0 / 9007199254740992.0); }
static double rnd_range(double a, double b) { return a + (b - a) * rnd(); }
static int rnd_int(int n) { return (int)(rnd_u64() % (uint64_t)n); }

static ibAABB box_at(ibVec3 c, ibVec3 half) { return (ibAABB){ibSub(c, half), ibAdd(c, half)}; }

static ibVec3 box_center(ibAABB b) { return ibScale(0.5, ibAdd(b.lo, b.hi)); }

static ibAABB box_shift(ibAABB b, ibVec3 d) { return (ibAABB){ibAdd(b.lo, d), ibAdd(b.hi, d)}; }

static int cmp_hit(const void* pa, const void* pb)
{
	const ibRayHit* a = pa;
	const ibRayHit* b = pb;
	if (a->t != b->t) return a->t < b->t ? -1 : 1;
	return (a->proxy > b->proxy) - (a->proxy < b->proxy);
}

static int cmp_u64(const void* pa, const void* pb)
{
	uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
	return (a > b) - (a < b);
}

/* ---------------------------------------------------------------- (1) pieces */

static void test_filter_rules(void** state)
{
	(void)state;
	ibCollisionFilter d = ib_collision_filter_default();
	assert_true(ib_collision_filter_test(d, d));
	ibCollisionFilter a = {0x1, 0x2, 0}, b = {0x2, 0x1, 0}, c = {0x2, 0x2, 0};
	assert_true(ib_collision_filter_test(a, b));
	assert_false(ib_collision_filter_test(a, c)); /* c does not accept a's category */
	assert_false(ib_collision_filter_test(c, a));
	ibCollisionFilter gp1 = {0x1, 0x0, 3}, gp2 = {0x2, 0x0, 3};
	assert_true(ib_collision_filter_test(gp1, gp2)); /* same positive group beats the masks */
	ibCollisionFilter gn1 = {0x1, 0xF, -3}, gn2 = {0x1, 0xF, -3};
	assert_false(ib_collision_filter_test(gn1, gn2)); /* same negative group never */
	ibCollisionFilter gn3 = {0x1, 0xF, -4};
	assert_true(ib_collision_filter_test(gn1, gn3)); /* different groups: category/mask */

	/* front end: static-static and exclusions */
	ibBroadphase* bp = ib_broadphase_create(IB_BROADPHASE_SAP);
	ibAABB u = {{0, 0, 0}, {1, 1, 1}};
	int32_t s1 = ib_broadphase_add_proxy(bp, u, d, true, 10);
	int32_t s2 = ib_broadphase_add_proxy(bp, u, d, true, 11);
	int32_t x1 = ib_broadphase_add_proxy(bp, u, d, false, 12);
	int32_t x2 = ib_broadphase_add_proxy(bp, u, gp1, false, 13);
	assert_int_equal(ib_broadphase_user_id(bp, x2), 13);
	assert_false(ib_broadphase_should_collide(bp, s1, s2));
	assert_true(ib_broadphase_should_collide(bp, s1, x1));
	assert_true(ib_broadphase_exclude_pair(bp, x1, s1));
	assert_true(ib_broadphase_is_excluded(bp, s1, x1));
	assert_false(ib_broadphase_should_collide(bp, s1, x1));
	assert_true(ib_broadphase_update(bp));
	int32_t n;
	const ibPair* p = ib_broadphase_pairs(bp, &n);
	/* x1-s2 (x2 has mask 0 and no shared group) */
	assert_int_equal(n, 1);
	assert_int_equal(p[0].a, s2);
	assert_int_equal(p[0].b, x1);
	ib_broadphase_include_pair(bp, s1, x1);
	assert_true(ib_broadphase_update(bp));
	p = ib_broadphase_pairs(bp, &n);
	assert_int_equal(n, 2);
	ib_broadphase_destroy(bp);
}

static void test_pair_key_set(void** state)
{
	(void)state;
	g_rng = 7;
	ibBpAllocator al = {0};
	ibPairKeySet s = {0};
	enum { N = 4000 };
	static uint64_t keys[N];
	static bool in[N];
	for (int i = 0; i < N; ++i) {
		keys[i] = ib_pair_key(rnd_int(300), 300 + rnd_int(300));
		for (int j = 0; j < i; ++j)
			if (keys[j] == keys[i]) {
				--i;
				break;
			}
	}
	for (int round = 0; round < 20 * N; ++round) {
		int i = rnd_int(N);
		if (rnd() < 0.55) {
			assert_int_equal(ib_pairkeyset_insert(&al, &s, keys[i]), in[i] ? 0 : 1);
			in[i] = true;
		} else {
			assert_int_equal(ib_pairkeyset_remove(&s, keys[i]), in[i]);
			in[i] = false;
		}
		if (round % 997 == 0) {
			int count = 0;
			for (int j = 0; j < N; ++j) {
				assert_int_equal(ib_pairkeyset_contains(&s, keys[j]), in[j]);
				count += in[j];
			}
			assert_int_equal(count, s.count);
		}
	}
	ib_pairkeyset_free(&al, &s);
}

static void test_sort_keys(void** state)
{
	(void)state;
	g_rng = 11;
	for (int trial = 0; trial < 40; ++trial) {
		int n = trial < 10 ? trial : 10 + rnd_int(5000);
		uint64_t* k = malloc((size_t)(n + 1) * sizeof *k);
		uint64_t* ref = malloc((size_t)(n + 1) * sizeof *k);
		uint64_t* scratch = malloc((size_t)(n + 1) * sizeof *k);
		int range = trial % 3 == 0 ? 40 : 70000; /* many duplicates, or ids beyond 16 bits */
		for (int i = 0; i < n; ++i) {
			int a = rnd_int(range), b = rnd_int(range);
			if (a == b) b = a + 1;
			ref[i] = k[i] = ib_pair_key(a, b);
		}
		qsort(ref, (size_t)n, sizeof *ref, cmp_u64);
		int m = 0;
		for (int i = 0; i < n; ++i)
			if (m == 0 || ref[i] != ref[m - 1]) ref[m++] = ref[i];
		int32_t got = ib_sort_unique_keys(k, n, scratch);
		assert_int_equal(got, m);
		assert_memory_equal(k, ref, (size_t)m * sizeof *k);
		free(k);
		free(ref);
		free(scratch);
	}
}

static void test_ray_aabb(void** state)
{
	(void)state;
	ibAABB b = {{1, 1, 1}, {2, 2, 2}};
	double t = -1;
	assert_true(ib_ray_aabb(ibV3(0, 1.5, 1.5), ibV3(4, 0, 0), b, 1.0, &t));
	assert_true(t == 0.25);
	assert_false(ib_ray_aabb(ibV3(0, 1.5, 1.5), ibV3(4, 0, 0), b, 0.2, &t));  /* ends before the box */
	assert_true(ib_ray_aabb(ibV3(1.5, 1.5, 1.5), ibV3(4, 0, 0), b, 1.0, &t)); /* starts inside */
	assert_true(t == 0.0);
	assert_false(ib_ray_aabb(ibV3(0, 2.5, 1.5), ibV3(4, 0, 0), b, 1.0, &t)); /* parallel outside */
	assert_true(ib_ray_aabb(ibV3(0, 2.0, 1.5), ibV3(4, 0, 0), b, 1.0, &t));  /* grazing a face: closed */
	assert_true(ib_ray_aabb(ibV3(0, 0, 0), ibV3(3, 3, 3), b, 1.0, &t));      /* through the corners */
	assert_true(fabs(t - 1.0 / 3.0) < 1e-15);
	assert_false(ib_ray_aabb(ibV3(3, 3, 3), ibV3(1, 1, 1), b, 1.0, &t)); /* pointing away */
	assert_true(ib_ray_aabb(ibV3(3, 1.5, 1.5), ibV3(-1, 0, 0), b, 1.0, &t));
	assert_true(t == 1.0);                                                    /* reaches the face exactly at the end */
	assert_true(ib_ray_aabb(ibV3(1.5, 1.5, 1.5), ibV3(0, 0, 0), b, 1.0, &t)); /* a point inside */
	assert_false(ib_ray_aabb(ibV3(0.5, 1.5, 1.5), ibV3(0, 0, 0), b, 1.0, &t));
}

/* ---------------------------------------------------------------- (2) the raw tree */

typedef struct HitList {
	ibRayHit* h;
	int n, cap;
	bool clip;
} HitList;

static double collect_hit(void* ctx, int32_t leaf, int32_t user, double t)
{
	(void)leaf;
	HitList* l = ctx;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->h = realloc(l->h, (size_t)l->cap * sizeof *l->h);
	}
	l->h[l->n++] = (ibRayHit){user, t};
	return l->clip ? t : 1.0;
}

typedef struct IdList {
	int32_t* v;
	int n, cap;
} IdList;

static bool collect_id(void* ctx, int32_t leaf, int32_t user)
{
	(void)leaf;
	IdList* l = ctx;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
	}
	l->v[l->n++] = user;
	return true;
}

static int cmp_i32(const void* pa, const void* pb)
{
	int32_t a = *(const int32_t*)pa, b = *(const int32_t*)pb;
	return (a > b) - (a < b);
}

static ibAABB random_box(double world)
{
	double r = rnd();
	ibVec3 half;
	if (r < 0.8)
		half = ibV3(rnd_range(0.1, 0.5), rnd_range(0.1, 0.5), rnd_range(0.1, 0.5));
	else if (r < 0.95)
		half = ibV3(rnd_range(0.5, 1.2), rnd_range(0.5, 1.2), rnd_range(0.5, 1.2));
	else /* a big thin plate */
		half = ibV3(rnd_range(1.5, 3.0), rnd_range(0.02, 0.1), rnd_range(1.5, 3.0));
	ibVec3 c = ibV3(rnd_range(0, world), rnd_range(0, world), rnd_range(0, world));
	return box_at(c, half);
}

/* check AABB queries and ray casts of a tree against the brute force over its leaves */
static void check_tree_queries(ibDynamicTree* t, const ibAABB* boxes, const bool* alive, int n, double world)
{
	IdList got = {0};
	int32_t* ref = malloc((size_t)n * sizeof *ref);
	for (int q = 0; q < 20; ++q) {
		ibAABB qb = random_box(world);
		got.n = 0;
		ib_dtree_query(t, qb, collect_id, &got);
		int m = 0;
		for (int i = 0; i < n; ++i)
			if (alive[i] && ib_aabb_overlap(boxes[i], qb)) ref[m++] = i;
		if (got.n > 1) qsort(got.v, (size_t)got.n, sizeof *got.v, cmp_i32);
		assert_int_equal(got.n, m);
		if (m) assert_memory_equal(got.v, ref, (size_t)m * sizeof *ref);
	}
	free(ref);
	free(got.v);

	HitList hits = {0};
	ibRayHit* bf = malloc((size_t)n * sizeof *bf);
	for (int q = 0; q < 20; ++q) {
		ibVec3 p0 = ibV3(rnd_range(-1, world + 1), rnd_range(-1, world + 1), rnd_range(-1, world + 1));
		ibVec3 p1 = ibV3(rnd_range(-1, world + 1), rnd_range(-1, world + 1), rnd_range(-1, world + 1));
		if (q % 4 == 1) p1.y = p0.y; /* zero direction components */
		if (q % 4 == 2) p1.x = p0.x, p1.z = p0.z;
		int m = 0;
		double tt;
		for (int i = 0; i < n; ++i)
			if (alive[i] && ib_ray_aabb(p0, ibSub(p1, p0), boxes[i], 1.0, &tt)) bf[m++] = (ibRayHit){i, tt};
		qsort(bf, (size_t)m, sizeof *bf, cmp_hit);
		hits.n = 0;
		hits.clip = false;
		ib_dtree_raycast(t, p0, p1, 1.0, collect_hit, &hits);
		assert_int_equal(hits.n, m);
		for (int i = 0; i < m; ++i) {
			assert_int_equal(hits.h[i].proxy, bf[i].proxy);
			assert_true(hits.h[i].t == bf[i].t);
		}
		/* clipping to each hit: only the nearest (and exact ties) are reported */
		hits.n = 0;
		hits.clip = true;
		ib_dtree_raycast(t, p0, p1, 1.0, collect_hit, &hits);
		if (m == 0) {
			assert_int_equal(hits.n, 0);
		} else {
			assert_true(hits.n >= 1);
			assert_int_equal(hits.h[0].proxy, bf[0].proxy);
			for (int i = 0; i < hits.n; ++i) assert_true(hits.h[i].t == bf[0].t);
		}
	}
	free(bf);
	free(hits.h);
}

static void assert_tree_ok(const ibDynamicTree* t)
{
	const char* e = ib_dtree_validate(t);
	if (e) fail_msg("tree invariant: %s", e);
	/* AVL height bound: h <= 1.4405 log2(leaves + 2) */
	if (t->leafCount > 0) assert_true(ib_dtree_height(t) <= 1.4405 * log2((double)t->leafCount + 2.0));
}

static void test_tree_invariants(void** state)
{
	(void)state;
	g_rng = 1234;
	enum { CAP = 1200 };
	const double world = 15.0;
	static ibAABB boxes[CAP];
	static bool alive[CAP];
	static int32_t leaf[CAP];
	ibDynamicTree t;
	ib_dtree_init(&t, NULL, 0.1, 2.0);
	int live = 0;
	for (int op = 0; op < TREE_OPS; ++op) {
		int i = rnd_int(CAP);
		double r = rnd();
		if (!alive[i] && (live < 50 || r < 0.5)) {
			boxes[i] = random_box(world);
			leaf[i] = ib_dtree_insert(&t, boxes[i], i);
			assert_true(leaf[i] >= 0);
			alive[i] = true;
			++live;
		} else if (alive[i] && r < 0.15) {
			ib_dtree_remove(&t, leaf[i]);
			alive[i] = false;
			--live;
		} else if (alive[i]) {
			ibVec3 d = r < 0.9 ? ibV3(rnd_range(-0.2, 0.2), rnd_range(-0.2, 0.2), rnd_range(-0.2, 0.2))
			                   : ibSub(ibV3(rnd_range(0, world), rnd_range(0, world), rnd_range(0, world)),
			                           box_center(boxes[i]));
			boxes[i] = box_shift(boxes[i], d);
			ib_dtree_move(&t, leaf[i], boxes[i], d);
		} else {
			continue;
		}
		assert_tree_ok(&t);
		assert_int_equal(t.leafCount, live);
		for (int k = 0; k < 3; ++k) {
			int j = rnd_int(CAP);
			if (alive[j]) assert_int_equal(ib_dtree_user(&t, leaf[j]), j);
		}
		if (op % 500 == 0) check_tree_queries(&t, boxes, alive, CAP, world);
	}
	check_tree_queries(&t, boxes, alive, CAP, world);
	assert_true(t.rotations > 0);
	assert_true(t.reinserts > 0);
	/* remove everything: back to empty, nodes all on the free list */
	for (int i = 0; i < CAP; ++i)
		if (alive[i]) {
			ib_dtree_remove(&t, leaf[i]);
			alive[i] = false;
			assert_tree_ok(&t);
		}
	assert_int_equal(t.nodeCount, 0);
	assert_int_equal(ib_dtree_height(&t), -1);
	/* sorted insertion (worst case for a naive tree) stays balanced */
	for (int i = 0; i < 1024; ++i) {
		leaf[i] = ib_dtree_insert(&t, box_at(ibV3(i, 0, 0), ibV3(0.4, 0.4, 0.4)), i);
		assert_tree_ok(&t);
	}
	assert_true(ib_dtree_height(&t) <= 14); /* 1.44 log2(1026) ~ 14.4 */
	ib_dtree_destroy(&t);
}

/* ---------------------------------------------------------------- (3) scenes vs brute force */

typedef struct Scene {
	int cap;              /* id space */
	ibAABB* box;          /* by proxy id */
	ibCollisionFilter* f; /* by proxy id */
	bool* isStatic;
	bool* alive;
	bool* grid;  /* moves on the 0.25 grid (exact touching) */
	uint8_t* ex; /* cap x cap exclusion matrix (mirror) */
	double world;
} Scene;

static ibCollisionFilter random_filter(void)
{
	ibCollisionFilter f = {1u << rnd_int(4), 0xFFFFFFFFu, 0};
	if (rnd() < 0.25) f.maskBits &= ~(1u << rnd_int(4));
	double r = rnd();
	if (r < 0.08)
		f.groupIndex = 1 + rnd_int(2);
	else if (r < 0.16)
		f.groupIndex = -1 - rnd_int(2);
	return f;
}

static bool ref_collide(const Scene* s, int a, int b)
{
	if (s->isStatic[a] && s->isStatic[b]) return false;
	if (s->ex[(size_t)a * (size_t)s->cap + (size_t)b]) return false;
	ibCollisionFilter fa = s->f[a], fb = s->f[b];
	if (fa.groupIndex == fb.groupIndex && fa.groupIndex != 0) return fa.groupIndex > 0;
	return (fa.categoryBits & fb.maskBits) && (fb.categoryBits & fa.maskBits);
}

static ibAABB scene_box(bool grid, double world)
{
	if (!grid) return random_box(world);
	/* on a 0.25 grid with sizes in multiples of 0.25: faces coincide exactly */
	double q = 0.25;
	ibVec3 lo = ibV3(q * rnd_int((int)(world / q)), q * rnd_int((int)(world / q)), q * rnd_int((int)(world / q)));
	ibVec3 sz = ibV3(q * (1 + rnd_int(4)), q * (1 + rnd_int(4)), q * (1 + rnd_int(4)));
	return (ibAABB){lo, ibAdd(lo, sz)};
}

static void scene_set_exclusion(Scene* s, int a, int b, uint8_t v)
{
	s->ex[(size_t)a * (size_t)s->cap + (size_t)b] = v;
	s->ex[(size_t)b * (size_t)s->cap + (size_t)a] = v;
}

static void check_pairs(const Scene* s, ibBroadphase* bp, int step)
{
	int32_t n;
	const ibPair* p = ib_broadphase_pairs(bp, &n);
	int k = 0;
	for (int a = 0; a < s->cap; ++a) {
		if (!s->alive[a]) continue;
		for (int b = a + 1; b < s->cap; ++b) {
			if (!s->alive[b] || !ib_aabb_overlap(s->box[a], s->box[b]) || !ref_collide(s, a, b)) continue;
			if (k >= n || p[k].a != a || p[k].b != b)
				fail_msg("%s step %d: expected pair (%d, %d), got %s (%d, %d) [%d of %d]",
				         bp->kind == IB_BROADPHASE_SAP ? "SAP" : "tree", step, a, b, k < n ? "" : "end",
				         k < n ? p[k].a : -1, k < n ? p[k].b : -1, k, n);
			++k;
		}
	}
	if (k != n) fail_msg("step %d: %d extra pairs, first (%d, %d)", step, n - k, p[k].a, p[k].b);
	const char* e = ib_broadphase_validate(bp);
	if (e) fail_msg("step %d: invariant: %s", step, e);
}

static void check_rays(const Scene* s, ibBroadphase* bp)
{
	ibRayHit* bf = malloc((size_t)s->cap * sizeof *bf);
	for (int q = 0; q < 25; ++q) {
		double w = s->world;
		ibVec3 p0 = ibV3(rnd_range(-1, w + 1), rnd_range(-1, w + 1), rnd_range(-1, w + 1));
		ibVec3 p1 = q % 5 == 0 ? ibAdd(p0, ibV3(rnd_range(-1, 1), rnd_range(-1, 1), rnd_range(-1, 1)))
		                       : ibV3(rnd_range(-1, w + 1), rnd_range(-1, w + 1), rnd_range(-1, w + 1));
		if (q % 5 == 1) { /* axis-aligned along a grid line: ties and grazing faces */
			p0 = ibV3(0.25 * rnd_int((int)(w / 0.25)), 0.25 * rnd_int((int)(w / 0.25)), -1.0);
			p1 = ibV3(p0.x, p0.y, w + 1.0);
		}
		int m = 0;
		double tt;
		for (int i = 0; i < s->cap; ++i)
			if (s->alive[i] && ib_ray_aabb(p0, ibSub(p1, p0), s->box[i], 1.0, &tt)) bf[m++] = (ibRayHit){i, tt};
		qsort(bf, (size_t)m, sizeof *bf, cmp_hit);
		int32_t n;
		const ibRayHit* h = ib_broadphase_raycast(bp, p0, p1, &n);
		assert_int_equal(n, m);
		for (int i = 0; i < m; ++i) {
			assert_int_equal(h[i].proxy, bf[i].proxy);
			assert_true(h[i].t == bf[i].t);
		}
	}
	free(bf);
}

typedef struct BatchHits {
	uint64_t* keys;
	int n, cap;
} BatchHits;

static bool batch_cb(void* ctx, int32_t q, int32_t proxy)
{
	BatchHits* h = ctx;
	assert_true(h->n < h->cap);
	h->keys[h->n++] = ((uint64_t)(uint32_t)q << 32) | (uint32_t)proxy;
	return true;
}

/* ib_broadphase_query_batch reports, per query box in order, exactly the alive proxies overlapping it
 * (the SAP in ascending id, the tree in its own order: compared as sets there) */
static void check_batch(const Scene* s, ibBroadphase* bp)
{
	enum { NQ = 60 };
	ibAABB q[NQ];
	for (int i = 0; i < NQ; ++i) q[i] = scene_box(rnd() < 0.4, s->world);
	int cap = NQ * s->cap + 1, m = 0;
	uint64_t* ref = malloc((size_t)cap * sizeof *ref);
	BatchHits h = {malloc((size_t)cap * sizeof(uint64_t)), 0, cap};
	for (int i = 0; i < NQ; ++i)
		for (int id = 0; id < s->cap; ++id)
			if (s->alive[id] && ib_aabb_overlap(q[i], s->box[id])) ref[m++] = ((uint64_t)(uint32_t)i << 32) | (uint32_t)id;
	assert_true(ib_broadphase_query_batch(bp, q, NQ, batch_cb, &h));
	if (bp->kind == IB_BROADPHASE_TREE) qsort(h.keys, (size_t)h.n, sizeof *h.keys, cmp_u64);
	assert_int_equal(h.n, m);
	for (int i = 0; i < m; ++i) assert_true(h.keys[i] == ref[i]);
	free(ref), free(h.keys);
}

static int scene_add(Scene* s, ibBroadphase* bp, bool isStatic)
{
	bool grid = rnd() < 0.3;
	ibAABB b = scene_box(grid, s->world);
	ibCollisionFilter f = random_filter();
	int id = ib_broadphase_add_proxy(bp, b, f, isStatic, 1000 + rnd_int(1000));
	assert_true(id >= 0 && id < s->cap);
	assert_false(s->alive[id]);
	s->alive[id] = true;
	s->box[id] = b;
	s->f[id] = f;
	s->isStatic[id] = isStatic;
	s->grid[id] = grid;
	for (int o = 0; o < s->cap; ++o) scene_set_exclusion(s, id, o, 0);
	return id;
}

static int random_alive(const Scene* s)
{
	for (;;) {
		int i = rnd_int(s->cap);
		if (s->alive[i]) return i;
	}
}

static void run_scene(ibBroadphaseKind kind, uint64_t seed)
{
	g_rng = seed;
	Scene s = {0};
	const int n = SCENE_N;
	s.cap = n + 64; /* removed ids are reused only after an update, so a little slack suffices */
	s.world = 12.0 * cbrt((double)n / 1000.0);
	s.box = calloc((size_t)s.cap, sizeof *s.box);
	s.f = calloc((size_t)s.cap, sizeof *s.f);
	s.isStatic = calloc((size_t)s.cap, 1);
	s.alive = calloc((size_t)s.cap, 1);
	s.grid = calloc((size_t)s.cap, 1);
	s.ex = calloc((size_t)s.cap * (size_t)s.cap, 1);
	ibBroadphase* bp = ib_broadphase_create(kind);
	assert_non_null(bp);
	for (int i = 0; i < n; ++i) scene_add(&s, bp, rnd() < 0.1);
	/* exclusions, favouring pairs that overlap so they matter */
	for (int k = 0; k < n / 4; ++k) {
		int a = random_alive(&s), b = random_alive(&s);
		if (a == b) continue;
		assert_true(ib_broadphase_exclude_pair(bp, a, b));
		scene_set_exclusion(&s, a, b, 1);
	}
	assert_true(ib_broadphase_update(bp));
	check_pairs(&s, bp, -1);
	int32_t total = 0;

	for (int step = 0; step < SCENE_STEPS; ++step) {
		/* motion */
		for (int i = 0; i < s.cap; ++i) {
			if (!s.alive[i] || (s.isStatic[i] && rnd() > 0.01)) continue;
			ibVec3 d;
			if (rnd() < 0.01) { /* teleport */
				d = ibSub(ibV3(rnd_range(0, s.world), rnd_range(0, s.world), rnd_range(0, s.world)),
				          box_center(s.box[i]));
				if (s.grid[i]) d = ibV3(0.25 * round(4 * d.x), 0.25 * round(4 * d.y), 0.25 * round(4 * d.z));
			} else if (s.grid[i]) {
				if (rnd() < 0.5) continue;
				d = ibV3(0.25 * (rnd_int(3) - 1), 0.25 * (rnd_int(3) - 1), 0.25 * (rnd_int(3) - 1));
			} else {
				d = ibV3(rnd_range(-0.05, 0.05), rnd_range(-0.05, 0.05), rnd_range(-0.05, 0.05));
			}
			s.box[i] = box_shift(s.box[i], d);
			if (step % 2)
				ib_broadphase_move_proxy_predicted(bp, i, s.box[i], d);
			else
				ib_broadphase_move_proxy(bp, i, s.box[i]);
		}
		/* occasional changes of everything else */
		if (step % 7 == 3) {
			for (int k = 0; k < 6; ++k) {
				int i = random_alive(&s);
				s.f[i] = random_filter();
				ib_broadphase_set_filter(bp, i, s.f[i]);
			}
			for (int k = 0; k < 3; ++k) {
				int i = random_alive(&s);
				s.isStatic[i] = !s.isStatic[i];
				assert_true(ib_broadphase_set_static(bp, i, s.isStatic[i]));
			}
			for (int k = 0; k < 20; ++k) {
				int32_t np;
				const ibPair* p = ib_broadphase_pairs(bp, &np);
				int a, b;
				if (np > 0 && rnd() < 0.7) { /* exclude a current pair */
					ibPair q = p[rnd_int(np)];
					a = q.a;
					b = q.b;
				} else {
					a = random_alive(&s);
					b = random_alive(&s);
				}
				if (a == b || !s.alive[a] || !s.alive[b]) continue;
				assert_true(ib_broadphase_exclude_pair(bp, a, b));
				scene_set_exclusion(&s, a, b, 1);
			}
			for (int k = 0; k < 10; ++k) { /* include again an excluded pair */
				int a = random_alive(&s);
				for (int b = 0; b < s.cap; ++b)
					if (s.alive[b] && s.ex[(size_t)a * (size_t)s.cap + (size_t)b]) {
						ib_broadphase_include_pair(bp, a, b);
						scene_set_exclusion(&s, a, b, 0);
						break;
					}
			}
		}
		if (step % 5 == 2) { /* removal and re-insertion */
			int nr = 1 + rnd_int(12);
			for (int k = 0; k < nr; ++k) {
				int i = random_alive(&s);
				ib_broadphase_remove_proxy(bp, i);
				s.alive[i] = false;
				for (int o = 0; o < s.cap; ++o) scene_set_exclusion(&s, i, o, 0); /* they die with it */
			}
			if (step % 10 == 2) { /* some come back within the same update */
				for (int k = 0; k < nr / 2; ++k) scene_add(&s, bp, rnd() < 0.1);
			} else {
				assert_true(ib_broadphase_update(bp));
				check_pairs(&s, bp, step);
				for (int k = 0; k < nr; ++k) scene_add(&s, bp, rnd() < 0.1);
			}
			/* a moved-then-removed and an added-then-removed proxy within one update */
			int i = random_alive(&s);
			ib_broadphase_move_proxy(bp, i, box_shift(s.box[i], ibV3(0.1, 0, 0)));
			ib_broadphase_remove_proxy(bp, i);
			s.alive[i] = false;
			for (int o = 0; o < s.cap; ++o) scene_set_exclusion(&s, i, o, 0);
			int j = scene_add(&s, bp, false);
			ib_broadphase_remove_proxy(bp, j);
			s.alive[j] = false;
		}
		if (step == SCENE_STEPS / 2) { /* a big batch of new proxies: the SAP rebuild path */
			const int nb = SCENE_N * 3 / 10;
			for (int k = 0; k < nb; ++k) {
				int i = random_alive(&s);
				ib_broadphase_remove_proxy(bp, i);
				s.alive[i] = false;
				for (int o = 0; o < s.cap; ++o) scene_set_exclusion(&s, i, o, 0);
			}
			assert_true(ib_broadphase_update(bp));
			check_pairs(&s, bp, step);
			for (int k = 0; k < nb; ++k) scene_add(&s, bp, rnd() < 0.1);
		}
		assert_true(ib_broadphase_update(bp));
		check_pairs(&s, bp, step);
		int32_t np;
		ib_broadphase_pairs(bp, &np);
		total += np;
		if (step % 10 == 0) check_rays(&s, bp);
		if (step % 10 == 5) check_batch(&s, bp);
	}
	assert_true(total > 10 * SCENE_STEPS); /* the scenes are not trivially empty */
	if (kind == IB_BROADPHASE_SAP)
		assert_true(bp->stats.swaps > 0 && bp->stats.rebuilds >= 2);
	else
		assert_true(bp->trees[0].rotations > 0);
	ib_broadphase_destroy(bp);
	free(s.box);
	free(s.f);
	free(s.isStatic);
	free(s.alive);
	free(s.grid);
	free(s.ex);
}

static void test_scene_sap(void** state)
{
	(void)state;
	run_scene(IB_BROADPHASE_SAP, 42);
	run_scene(IB_BROADPHASE_SAP, 4242);
}

static void test_scene_tree(void** state)
{
	(void)state;
	run_scene(IB_BROADPHASE_TREE, 42);
	run_scene(IB_BROADPHASE_TREE, 4242);
}

/* Tree invariants after every single operation through the front end (smaller scene). */
static void test_tree_every_operation(void** state)
{
	(void)state;
	g_rng = 99;
	ibBroadphase* bp = ib_broadphase_create(IB_BROADPHASE_TREE);
	enum { N = 300 };
	int32_t id[N];
	ibAABB b[N];
	for (int i = 0; i < N; ++i) {
		b[i] = random_box(8.0);
		id[i] = ib_broadphase_add_proxy(bp, b[i], ib_collision_filter_default(), rnd() < 0.1, i);
		const char* e = ib_broadphase_validate(bp);
		if (e) fail_msg("add %d: %s", i, e);
	}
	for (int step = 0; step < 20; ++step) {
		for (int i = 0; i < N; ++i) {
			ibVec3 d = ibV3(rnd_range(-0.1, 0.1), rnd_range(-0.1, 0.1), rnd_range(-0.1, 0.1));
			b[i] = box_shift(b[i], d);
			ib_broadphase_move_proxy_predicted(bp, id[i], b[i], d);
			const char* e = ib_broadphase_validate(bp);
			if (e) fail_msg("move: %s", e);
		}
		for (int k = 0; k < 10; ++k) {
			int i = rnd_int(N);
			ib_broadphase_remove_proxy(bp, id[i]);
			const char* e = ib_broadphase_validate(bp);
			if (e) fail_msg("remove: %s", e);
			id[i] = ib_broadphase_add_proxy(bp, b[i], ib_collision_filter_default(), rnd() < 0.1, i);
			e = ib_broadphase_validate(bp);
			if (e) fail_msg("re-add: %s", e);
		}
		assert_true(ib_broadphase_update(bp));
	}
	ib_broadphase_destroy(bp);
}

/* Both implementations agree on a scene with only default filters, including SAP's rebuild path. */
static void test_sap_equals_tree(void** state)
{
	(void)state;
	g_rng = 5;
	ibBroadphase* a = ib_broadphase_create(IB_BROADPHASE_SAP);
	ibBroadphase* t = ib_broadphase_create(IB_BROADPHASE_TREE);
	enum { N = 500 };
	ibAABB b[N];
	for (int i = 0; i < N; ++i) {
		b[i] = random_box(9.0);
		assert_int_equal(ib_broadphase_add_proxy(a, b[i], ib_collision_filter_default(), false, i), i);
		assert_int_equal(ib_broadphase_add_proxy(t, b[i], ib_collision_filter_default(), false, i), i);
	}
	for (int step = 0; step < 30; ++step) {
		for (int i = 0; i < N; ++i) {
			b[i] = box_shift(b[i], ibV3(rnd_range(-0.1, 0.1), rnd_range(-0.1, 0.1), rnd_range(-0.1, 0.1)));
			ib_broadphase_move_proxy(a, i, b[i]);
			ib_broadphase_move_proxy(t, i, b[i]);
		}
		assert_true(ib_broadphase_update(a));
		assert_true(ib_broadphase_update(t));
		int32_t na, nt;
		const ibPair* pa = ib_broadphase_pairs(a, &na);
		const ibPair* pt = ib_broadphase_pairs(t, &nt);
		assert_int_equal(na, nt);
		assert_memory_equal(pa, pt, (size_t)na * sizeof *pa);
		assert_true(na > 0);
	}
	assert_int_equal(a->stats.rebuilds, 1);
	ib_broadphase_destroy(a);
	ib_broadphase_destroy(t);
}

/* ---------------------------------------------------------------- (4) no allocation in update */

typedef struct Counter {
	long allocs, reallocs, frees;
	size_t live;
} Counter;

static void* c_alloc(size_t size, void* ctx)
{
	Counter* c = ctx;
	++c->allocs;
	return malloc(size);
}
static void* c_realloc(void* p, size_t oldSize, size_t newSize, void* ctx)
{
	(void)oldSize;
	Counter* c = ctx;
	++c->reallocs;
	return realloc(p, newSize);
}
static void c_free(void* p, size_t size, void* ctx)
{
	(void)size;
	Counter* c = ctx;
	++c->frees;
	free(p);
}

static void run_no_alloc(ibBroadphaseKind kind, double density)
{
	g_rng = 77;
	Counter c = {0};
	ibBroadphaseDef def = ib_broadphase_default_def(kind);
	def.allocator = (ibBpAllocator){c_alloc, c_realloc, c_free, &c};
	ibBroadphase* bp = ib_broadphase_create_def(&def);
	const int n = SCENE_N;
	const double world = 12.0 * cbrt((double)n / 1000.0 / density);
	ibAABB* b = malloc((size_t)n * sizeof *b);
	ibAABB* b0 = malloc((size_t)n * sizeof *b0);
	ibVec3* amp = malloc((size_t)n * sizeof *amp);
	double* phase = malloc((size_t)n * sizeof *phase);
	for (int i = 0; i < n; ++i) {
		b0[i] = b[i] = random_box(world);
		amp[i] = ibV3(rnd_range(-0.3, 0.3), rnd_range(-0.3, 0.3), rnd_range(-0.3, 0.3));
		phase[i] = rnd_range(0, 6.283185307179586);
		assert_true(ib_broadphase_add_proxy(bp, b[i], random_filter(), i % 10 == 0, i) >= 0);
	}
	for (int i = 0; i < n / 8; ++i) ib_broadphase_exclude_pair(bp, rnd_int(n), (rnd_int(n - 1) + 1 + i) % n);
	long inUpdate = 0, inMove = 0, everUpdate = 0;
	/* A steady state: every dynamic box oscillates about its place with period 25 steps (the boxes
	 * repeat exactly each period). Warm-up: two periods, for the tree's fat boxes to settle. */
	const int period = 25, warmup = 2 * period;
	for (int step = 0; step < warmup + (IBDYN_SLOW_TESTS ? 4 : 2) * period; ++step) {
		long before = c.allocs + c.reallocs + c.frees;
		double ph = 6.283185307179586 * (double)(step % period) / (double)period;
		for (int i = 0; i < n; ++i) {
			if (i % 10 == 0) continue; /* static */
			ibAABB nb = box_shift(b0[i], ibScale(sin(ph + phase[i]), amp[i]));
			ibVec3 d = ibSub(nb.lo, b[i].lo);
			b[i] = nb;
			ib_broadphase_move_proxy_predicted(bp, i, b[i], d);
		}
		long mid = c.allocs + c.reallocs + c.frees;
		assert_true(ib_broadphase_update(bp));
		long after = c.allocs + c.reallocs + c.frees;
		everUpdate += after - mid;
		if (step >= warmup) {
			inMove += mid - before;
			inUpdate += after - mid;
		}
	}
	assert_true(c.allocs + c.reallocs > 0);
	/* dense: more pairs than the buffers pre-sized by add_proxy hold, so update() itself grew them
	 * (through the hooks) during warm-up */
	if (density > 4.0) assert_true(everUpdate > 0);
	assert_int_equal(inUpdate, 0);
	assert_int_equal(inMove, 0);
	long frees = c.frees, allocs = c.allocs;
	ib_broadphase_destroy(bp);
	assert_true(c.frees > frees);
	(void)allocs;
	free(b);
	free(b0);
	free(amp);
	free(phase);
}

static void test_no_alloc_after_warmup(void** state)
{
	(void)state;
	run_no_alloc(IB_BROADPHASE_SAP, 1.0);
	run_no_alloc(IB_BROADPHASE_TREE, 1.0);
	run_no_alloc(IB_BROADPHASE_SAP, 8.0);
	run_no_alloc(IB_BROADPHASE_TREE, 8.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filter_rules),    cmocka_unit_test(test_pair_key_set),
	    cmocka_unit_test(test_sort_keys),       cmocka_unit_test(test_ray_aabb),
	    cmocka_unit_test(test_tree_invariants), cmocka_unit_test(test_tree_every_operation),
	    cmocka_unit_test(test_sap_equals_tree), cmocka_unit_test(test_scene_sap),
	    cmocka_unit_test(test_scene_tree),      cmocka_unit_test(test_no_alloc_after_warmup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
