/* Shape construction and query costs: hull of N random points (qhull + polyhedron + mass), triangle
 * mesh tree build, box and ray queries on it, and a box against a triangulated floor through the
 * narrowphase dispatch. Prints one line per measurement: `bench_shapes: <what> ... us=<per call>`,
 * in process CPU time (robust on a shared machine). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collision/collision_world.h"
#include "collision/trimesh.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static double srand1(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return 2.0 * (double)(rng >> 11) * (1.0 / 9007199254740992.0) - 1.0;
}

static bool countTri(void* ctx, int tri)
{
	(void)tri;
	++*(long*)ctx;
	return true;
}

int main(void)
{
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId wid = ibCreateWorld(&wd);
	ibWorld* w = ib_world_get(wid);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	ibBodyId body = ibCreateBody(wid, &bd);
	ibShapeDef sd = ibDefaultShapeDef();

	for (int n = 100; n <= 100000; n *= 10) {
		ibVec3* p = malloc((size_t)n * sizeof *p);
		for (int i = 0; i < n; ++i) p[i] = ibV3(srand1(), srand1(), srand1());
		int reps = n <= 1000 ? 200 : n <= 10000 ? 20 : 3;
		double t0 = now();
		ibHullData h = {0};
		for (int r = 0; r < reps; ++r) {
			ibShapeId s = ibCreateHullShape(body, &sd, &(ibHull){p, n});
			h = ibShape_GetHull(s);
			if (r + 1 < reps) ibDestroyShape(s);
		}
		double us = 1e6 * (now() - t0) / reps;
		printf("bench_shapes: hull points=%d vertices=%d faces=%d us=%.1f\n", n, h.vertexCount, h.faceCount, us);
		free(p);
	}

	/* a bumpy 300 x 300 grid: 180000 triangles */
	int g = 300;
	int nv = (g + 1) * (g + 1), nt = 2 * g * g;
	ibVec3* v = malloc((size_t)nv * sizeof *v);
	int* idx = malloc((size_t)3 * nt * sizeof *idx);
	for (int j = 0; j <= g; ++j)
		for (int i = 0; i <= g; ++i) v[j * (g + 1) + i] = ibV3(0.1 * i, 0.1 * j, 0.05 * sin(0.3 * i) * cos(0.2 * j));
	for (int j = 0, t = 0; j < g; ++j)
		for (int i = 0; i < g; ++i, t += 2) {
			int a = j * (g + 1) + i, b = a + 1, c = a + g + 1, d = c + 1;
			int tri[6] = {a, b, d, a, d, c};
			for (int k = 0; k < 6; ++k) idx[3 * t + k] = tri[k];
		}
	ibMesh mesh = {v, nv, idx, nt};
	ibTriMeshGeom* tm = NULL;
	double t0 = now();
	ib_trimesh_build(w, &mesh, &tm);
	printf("bench_shapes: trimesh_build triangles=%d nodes=%d us=%.0f\n", nt, tm->nodeCount, 1e6 * (now() - t0));
	long found = 0;
	int q = 200000;
	t0 = now();
	for (int i = 0; i < q; ++i) {
		ibVec3 c = ibV3(15.0 + 14.0 * srand1(), 15.0 + 14.0 * srand1(), 0.0);
		ib_trimesh_query_aabb(tm, (ibAABB){ibSub(c, ibV3(0.3, 0.3, 0.3)), ibAdd(c, ibV3(0.3, 0.3, 0.3))}, countTri,
		                      &found);
	}
	printf("bench_shapes: trimesh_aabb_query box=0.6m triangles_per_query=%.1f us=%.3f\n", (double)found / q,
	       1e6 * (now() - t0) / q);
	int hits = 0;
	t0 = now();
	for (int i = 0; i < q; ++i) {
		ibTriMeshHit h;
		ibVec3 o = ibV3(15.0 + 14.0 * srand1(), 15.0 + 14.0 * srand1(), 2.0);
		hits += ib_trimesh_raycast(tm, o, ibV3(srand1(), srand1(), -1.0), 10.0, &h);
	}
	printf("bench_shapes: trimesh_raycast hits=%d/%d us=%.3f\n", hits, q, 1e6 * (now() - t0) / q);
	ib_trimesh_free(w, tm);

	/* a box resting on the grid through the dispatch (world poses, tree query, one manifold per triangle) */
	bd.type = IB_BODY_STATIC;
	ibBodyId ground = ibCreateBody(wid, &bd);
	ibShapeId floorShape = ibCreateTriMeshShape(ground, &sd, &mesh);
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(15.0, 15.0, 0.2);
	ibBodyId boxBody = ibCreateBody(wid, &bd);
	ibShapeId boxShape = ibCreateBoxShape(boxBody, &sd, &(ibBox){{0.5, 0.5, 0.2}});
	ibWorld* ww;
	const ibShape* fs = ib_shape_get(floorShape, &ww);
	const ibShape* bs = ib_shape_get(boxShape, &ww);
	ibManifold out[64];
	int reps = 2000, manifolds = 0;
	t0 = now();
	for (int r = 0; r < reps; ++r)
		manifolds = ib_shape_pair_collide(&w->bodies[bs->body], bs, &w->bodies[fs->body], fs, 0.01, NULL, out, 64);
	printf("bench_shapes: box_on_trimesh manifolds=%d us=%.1f\n", manifolds, 1e6 * (now() - t0) / reps);
	free(v);
	free(idx);
	ibDestroyWorld(wid);
	return 0;
}
