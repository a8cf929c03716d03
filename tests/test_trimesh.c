/* Static triangle meshes (IB_SHAPE_TRIMESH) and their AABB tree:
 *  - box queries return exactly the triangles whose bounding boxes overlap (brute force) and ray
 *    queries the same closest hit parameter as testing every triangle, on random soups and grids;
 *  - creation rules (static/kinematic only, index and finiteness checks, data copied) and the world
 *    AABB (transformed bounds contain every vertex);
 *  - a box resting on a triangulated floor gets manifolds from the touching triangles (normal up,
 *    separation the box's depth), in both orders and through the world's collision detection.
 * Random input: fixed-seed xorshift64*. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collision_world.h"
#include "collision/trimesh.h"
#include "test_util.h"


static const ibShape* internalShape(ibShapeId id, const ibBody** body)
{
	ibWorld* w;
	const ibShape* s = ib_shape_get(id, &w);
	assert_non_null(s);
	*body = &w->bodies[s->body];
	return s;
}

/* A random soup (kind 0) or a bumpy grid with shared vertices (kind 1). */
typedef struct soup {
	ibVec3* v;
	int* idx;
	int nv, nt;
} soup;

static soup makeSoup(int kind, int n)
{
	soup s;
	if (kind == 0) {
		s.nt = n;
		s.nv = 3 * n;
		s.v = malloc((size_t)s.nv * sizeof(ibVec3));
		s.idx = malloc((size_t)3 * s.nt * sizeof(int));
		for (int t = 0; t < n; ++t) {
			ibVec3 c = ibV3(10.0 * srand1(), 10.0 * srand1(), 3.0 * srand1());
			double size = 0.05 + urand01() * (t % 10 == 0 ? 4.0 : 0.8);
			for (int k = 0; k < 3; ++k) {
				s.v[3 * t + k] = ibMulAdd(c, size, ibV3(srand1(), srand1(), srand1()));
				s.idx[3 * t + k] = 3 * t + k;
			}
		}
	} else {
		int g = n;
		s.nv = (g + 1) * (g + 1);
		s.nt = 2 * g * g;
		s.v = malloc((size_t)s.nv * sizeof(ibVec3));
		s.idx = malloc((size_t)3 * s.nt * sizeof(int));
		for (int j = 0; j <= g; ++j)
			for (int i = 0; i <= g; ++i)
				s.v[j * (g + 1) + i] = ibV3(i - 0.5 * g, j - 0.5 * g, 0.3 * sin(0.7 * i) * cos(0.5 * j));
		int t = 0;
		for (int j = 0; j < g; ++j)
			for (int i = 0; i < g; ++i) {
				int a = j * (g + 1) + i, b = a + 1, c = a + g + 1, d = c + 1;
				int tri[6] = {a, b, d, a, d, c};
				memcpy(s.idx + 3 * t, tri, sizeof tri);
				t += 2;
			}
	}
	return s;
}

static void freeSoup(soup* s)
{
	free(s->v);
	free(s->idx);
}

typedef struct collected {
	char* hit;
	int count;
} collected;

static bool collect(void* ctx, int tri)
{
	collected* c = ctx;
	assert_false(c->hit[tri]); /* each triangle once */
	c->hit[tri] = 1;
	c->count++;
	return true;
}

static bool stopAfterThree(void* ctx, int tri)
{
	(void)tri;
	return ++*(int*)ctx < 3;
}

static void test_bvh_queries(void** state)
{
	(void)state;
	ibWorldId wid = tu_new_world();
	ibWorld* w = ib_world_get(wid);
	for (int kind = 0; kind < 2; ++kind)
		for (int size = 0; size < 3; ++size) {
			int n = kind == 0 ? (int[]){1, 37, 2000}[size] : (int[]){1, 6, 40}[size];
			soup s = makeSoup(kind, n);
			ibMesh m = {s.v, s.nv, s.idx, s.nt};
			ibTriMeshGeom* t = NULL;
			assert_int_equal(ib_trimesh_build(w, &m, &t), IB_OK);
			assert_true(t->nodeCount <= 2 * s.nt - 1);
			/* root bounds contain every vertex */
			ibAABB root = ib_trimesh_bounds(t);
			for (int i = 0; i < s.nv; ++i) assert_true(ib_aabb_overlap(root, (ibAABB){s.v[i], s.v[i]}));
			char* hit = calloc((size_t)s.nt, 1);
			for (int q = 0; q < 300; ++q) {
				ibVec3 c = ibV3(11.0 * srand1(), 11.0 * srand1(), 3.5 * srand1());
				ibVec3 e = ibV3(3.0 * urand01(), 3.0 * urand01(), (q % 4 == 0 ? 0.0 : 2.0) * urand01());
				ibAABB box = {ibSub(c, e), ibAdd(c, e)};
				memset(hit, 0, (size_t)s.nt);
				collected got = {hit, 0};
				int calls = ib_trimesh_query_aabb(t, box, collect, &got);
				assert_int_equal(calls, got.count);
				int brute = 0;
				for (int k = 0; k < s.nt; ++k) {
					const int* ix = s.idx + 3 * k;
					ibAABB tb = {s.v[ix[0]], s.v[ix[0]]};
					tb = ib_aabb_union(tb, (ibAABB){s.v[ix[1]], s.v[ix[1]]});
					tb = ib_aabb_union(tb, (ibAABB){s.v[ix[2]], s.v[ix[2]]});
					bool overlaps = ib_aabb_overlap(tb, box);
					brute += overlaps;
					if (overlaps != (hit[k] != 0))
						fail_msg("kind %d n %d query %d: triangle %d differs", kind, n, q, k);
				}
				assert_int_equal(brute, got.count);
				if (brute >= 3) { /* early stop */
					int seen = 0;
					assert_int_equal(ib_trimesh_query_aabb(t, box, stopAfterThree, &seen), 3);
				}
			}
			for (int q = 0; q < 500; ++q) {
				ibVec3 o = ibV3(12.0 * srand1(), 12.0 * srand1(), 5.0 * srand1());
				ibVec3 d = ibV3(srand1(), srand1(), srand1());
				if (q % 5 == 0) d = ibV3(0.0, 0.0, -1.0); /* axis-parallel rays (infinite slopes) */
				if (q % 7 == 0) d.x = 0.0;
				double maxS = q % 3 == 0 ? 5.0 : 100.0;
				double best = INFINITY;
				for (int k = 0; k < s.nt; ++k) {
					const int* ix = s.idx + 3 * k;
					double sk;
					if (ib_ray_triangle(o, d, s.v[ix[0]], s.v[ix[1]], s.v[ix[2]], maxS, &sk) && sk < best) best = sk;
				}
				ibTriMeshHit h;
				bool any = ib_trimesh_raycast(t, o, d, maxS, &h);
				assert_int_equal(any, best < INFINITY);
				if (any) {
					if (h.s != best)
						fail_msg("kind %d n %d ray %d: s %.17g vs brute force %.17g", kind, n, q, h.s, best);
					const int* ix = s.idx + 3 * h.triangle;
					double sk;
					assert_true(ib_ray_triangle(o, d, s.v[ix[0]], s.v[ix[1]], s.v[ix[2]], maxS, &sk) && sk == best);
					assert_true(fabs(ibLength(h.normal) - 1.0) < 1e-12);
				}
			}
			free(hit);
			ib_trimesh_free(w, t);
			freeSoup(&s);
		}
	ibDestroyWorld(wid);
}

static void test_trimesh_shape(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibShapeDef sd = ibDefaultShapeDef();
	soup s = makeSoup(0, 50);
	ibMesh m = {s.v, s.nv, s.idx, s.nt};
	ibBodyId dyn = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibWorld_ClearError(w);
	assert_true(IB_IS_NULL(ibCreateTriMeshShape(dyn, &sd, &m)));
	assert_non_null(strstr(ibWorld_GetLastError(w), "static and kinematic"));
	ibQuat q = ibQuatNormalize(ibQ(0.9, 0.1, -0.3, 0.2));
	ibBodyId st = tu_new_body(w, IB_BODY_STATIC, ibV3(1, 2, 3), q);
	ibBodyId kin = tu_new_body(w, IB_BODY_KINEMATIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	s.idx[7] = s.nv; /* out of range */
	ibWorld_ClearError(w);
	assert_true(IB_IS_NULL(ibCreateTriMeshShape(st, &sd, &m)));
	assert_non_null(strstr(ibWorld_GetLastError(w), "out of range"));
	s.idx[7] = 7;
	s.v[4].y = NAN;
	assert_true(IB_IS_NULL(ibCreateTriMeshShape(st, &sd, &m)));
	s.v[4].y = 0.5;
	assert_true(IB_IS_NULL(ibCreateTriMeshShape(st, &sd, NULL)));
	assert_false(IB_IS_NULL(ibCreateTriMeshShape(kin, &sd, &m)));
	ibShapeId ts = ibCreateTriMeshShape(st, &sd, &m);
	assert_false(IB_IS_NULL(ts));
	assert_int_equal(ibShape_GetType(ts), IB_SHAPE_TRIMESH);
	ibMesh got = ibShape_GetMesh(ts);
	assert_int_equal(got.vertexCount, s.nv);
	assert_int_equal(got.triangleCount, s.nt);
	assert_true(got.vertices != s.v);
	assert_memory_equal(got.vertices, s.v, (size_t)s.nv * sizeof(ibVec3));
	assert_memory_equal(got.indices, s.idx, (size_t)3 * s.nt * sizeof(int));
	assert_true(ibShape_GetMassData(ts).mass == 0.0);
	const ibBody* bb;
	const ibShape* ss = internalShape(ts, &bb);
	ibAABB box = ib_shape_world_aabb(bb, ss);
	for (int i = 0; i < s.nv; ++i) {
		ibVec3 p = ibBody_GetWorldPoint(st, s.v[i]);
		assert_true(ib_aabb_overlap(box, (ibAABB){p, p}));
	}
	freeSoup(&s);
	assert_int_equal(ibDestroyShape(ts), IB_OK);
	ibDestroyWorld(w);
}

static void test_box_on_trimesh_floor(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibShapeDef sd = ibDefaultShapeDef();
	/* flat 8 x 8 grid of unit squares at z = 0, on a static body moved and turned about z */
	int g = 8;
	ibVec3 v[81];
	int idx[2 * 64 * 3];
	int t = 0;
	for (int j = 0; j <= g; ++j)
		for (int i = 0; i <= g; ++i) v[j * (g + 1) + i] = ibV3(i - 4.0, j - 4.0, 0.0);
	for (int j = 0; j < g; ++j)
		for (int i = 0; i < g; ++i) {
			int a = j * (g + 1) + i, b = a + 1, c = a + g + 1, d = c + 1;
			int tri[6] = {a, b, d, a, d, c};
			memcpy(idx + 3 * t, tri, sizeof tri);
			t += 2;
		}
	ibMesh m = {v, 81, idx, t};
	ibBodyId floor = tu_new_body(w, IB_BODY_STATIC, ibV3(0.2, 0.1, -1.0), ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.3));
	ibShapeId fs = ibCreateTriMeshShape(floor, &sd, &m);
	assert_false(IB_IS_NULL(fs));
	/* a 0.6 x 0.6 x 0.4 box sunk 1 mm into the floor, across grid lines */
	double depth = 1e-3;
	ibBodyId box = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.25, 0.35, -1.0 + 0.2 - depth), IB_QUAT_IDENTITY);
	ibShapeId bs = ibCreateBoxShape(box, &sd, &(ibBox){{0.3, 0.3, 0.2}});
	const ibBody *fb, *bb;
	const ibShape* fss = internalShape(fs, &fb);
	const ibShape* bss = internalShape(bs, &bb);
	for (int order = 0; order < 2; ++order) {
		ibManifold out[16];
		int k = order == 0 ? ib_shape_pair_collide(bb, bss, fb, fss, 1e-3, NULL, out, 16)
		                   : ib_shape_pair_collide(fb, fss, bb, bss, 1e-3, NULL, out, 16);
		assert_true(k >= 1 && k <= 16);
		double sign = order == 0 ? 1.0 : -1.0;
		double deepest = INFINITY;
		for (int i = 0; i < k; ++i) {
			assert_true(fabs(out[i].normal.z - sign) < 1e-9);
			assert_true(out[i].pointCount >= 1);
			for (int p = 0; p < out[i].pointCount; ++p) {
				const ibManifoldPoint* mp = &out[i].points[p];
				assert_true(mp->separation >= -depth - 1e-9 && mp->separation <= 1e-3 + 1e-12);
				ibVec3 onFloor = order == 0 ? mp->pointB : mp->pointA;
				assert_true(fabs(onFloor.z + 1.0) < 1e-9);
				deepest = fmin(deepest, mp->separation);
			}
		}
		assert_true(fabs(deepest + depth) < 1e-9);
		/* capacity is honoured */
		ibManifold one;
		assert_int_equal(ib_shape_pair_collide(bb, bss, fb, fss, 1e-3, NULL, &one, 1), 1);
	}
	/* lifted clear of the floor: nothing */
	assert_int_equal(ibBody_SetTransform(box, ibV3(0.25, 0.35, -0.5), IB_QUAT_IDENTITY), IB_OK);
	ibManifold out[4];
	assert_int_equal(ib_shape_pair_collide(bb, bss, fb, fss, 1e-3, NULL, out, 4), 0);
	/* through the world's pipeline */
	assert_int_equal(ibBody_SetTransform(box, ibV3(0.25, 0.35, -1.0 + 0.2 - depth), IB_QUAT_IDENTITY), IB_OK);
	ibWorld* iw = ib_world_get(w);
	assert_int_equal(ib_collision_detect(iw), IB_OK);
	ibContactPair* pairs;
	int n = ib_collision_contacts(iw, &pairs);
	assert_true(n >= 1);
	ibDestroyWorld(w);
}

int main(void)
{
	rng_seed(0x2545f4914f6cdd1dull); /* the sequence the tests were written with */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bvh_queries),
	    cmocka_unit_test(test_trimesh_shape),
	    cmocka_unit_test(test_box_on_trimesh_floor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
