/* Convex hull shapes (qhull) and infinite planes:
 *  - the hull of random points contains every point, every face plane supports all points (brute
 *    force), every input point's support value in random directions is attained by a hull vertex,
 *    face loops are convex and counter-clockwise outward, and the face/edge/vertex adjacency is
 *    consistent (each edge in its two faces' loops in opposite directions, Euler V - E + F = 2);
 *  - the hull of a cube's 8 corners plus interior and face points is the cube: 8 vertices, 6 square
 *    faces, 12 edges, 12 triangles, mass properties equal to the box formula to 1e-12;
 *  - degenerate input (too few, NaN, coplanar, collinear, coincident points) is rejected with a
 *    message, and qhull writes nothing to stdout/stderr;
 *  - planes: only on static/kinematic bodies; plane-box and plane-sphere manifolds (both orders)
 *    against the exact depth, the plane's world AABB.
 * Random input: fixed-seed xorshift64*. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collision/collision_world.h"
#include "test_util.h"
#include "collision/hull.h"


/* Checks every structural property of a hull against its input points. */
static void checkHull(const ibHullData* h, const ibVec3* pts, int n, double tol)
{
	assert_true(h->vertexCount >= 4 && h->faceCount >= 4);
	assert_int_equal(h->vertexCount - h->edgeCount + h->faceCount, 2);
	/* every hull vertex is an input point (bit for bit) */
	for (int v = 0; v < h->vertexCount; ++v) {
		bool found = false;
		for (int i = 0; i < n && !found; ++i) found = memcmp(&h->vertices[v], &pts[i], sizeof(ibVec3)) == 0;
		assert_true(found);
	}
	int loopTotal = 0, tris = 0;
	for (int f = 0; f < h->faceCount; ++f) {
		const ibHullFace* F = &h->faces[f];
		assert_true(F->count >= 3);
		assert_true(fabs(ibLength(F->normal) - 1.0) < 1e-12);
		assert_int_equal(F->first, loopTotal);
		loopTotal += F->count;
		tris += F->count - 2;
		/* the plane supports all points (brute force) and contains the face's vertices */
		for (int i = 0; i < n; ++i) assert_true(ibDot(F->normal, pts[i]) <= F->offset + tol);
		for (int k = 0; k < F->count; ++k)
			assert_true(fabs(ibDot(F->normal, h->vertices[h->faceVertices[F->first + k]]) - F->offset) <= tol);
		/* convex, counter-clockwise seen from outside */
		for (int k = 0; k < F->count; ++k) {
			ibVec3 a = h->vertices[h->faceVertices[F->first + k]];
			ibVec3 b = h->vertices[h->faceVertices[F->first + (k + 1) % F->count]];
			ibVec3 c = h->vertices[h->faceVertices[F->first + (k + 2) % F->count]];
			assert_true(ibDot(ibCross(ibSub(b, a), ibSub(c, b)), F->normal) >= -tol);
		}
		/* edges of the loop */
		for (int k = 0; k < F->count; ++k) {
			int a = h->faceVertices[F->first + k], b = h->faceVertices[F->first + (k + 1) % F->count];
			int e = h->faceEdges[F->first + k];
			assert_true(e >= 0 && e < h->edgeCount);
			const ibHullEdge* E = &h->edges[e];
			bool fwd = E->vertex[0] == a && E->vertex[1] == b && E->face[0] == f;
			bool bwd = E->vertex[1] == a && E->vertex[0] == b && E->face[1] == f;
			assert_true(fwd || bwd);
		}
	}
	assert_int_equal(tris, h->triangleCount);
	assert_int_equal(2 * h->edgeCount, loopTotal);
	/* vertex -> edge lists */
	assert_int_equal(h->vertexEdgeStart[0], 0);
	assert_int_equal(h->vertexEdgeStart[h->vertexCount], 2 * h->edgeCount);
	for (int v = 0; v < h->vertexCount; ++v) {
		assert_true(h->vertexEdgeStart[v + 1] - h->vertexEdgeStart[v] >= 3);
		for (int k = h->vertexEdgeStart[v]; k < h->vertexEdgeStart[v + 1]; ++k) {
			const ibHullEdge* E = &h->edges[h->vertexEdges[k]];
			assert_true(E->vertex[0] == v || E->vertex[1] == v);
		}
	}
	/* the hull vertices attain every support value of the input */
	for (int r = 0; r < 200; ++r) {
		ibVec3 d = ibV3(srand1(), srand1(), srand1());
		double best = -INFINITY, bestHull = -INFINITY;
		for (int i = 0; i < n; ++i) best = fmax(best, ibDot(d, pts[i]));
		for (int v = 0; v < h->vertexCount; ++v) bestHull = fmax(bestHull, ibDot(d, h->vertices[v]));
		assert_true(bestHull >= best - tol);
	}
}

static void test_random_hulls(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibBodyId b = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibShapeDef sd = ibDefaultShapeDef();
	for (int trial = 0; trial < 30; ++trial) {
		int n = 4 + trial * 13;
		ibVec3 pts[4 + 29 * 13];
		for (int i = 0; i < n; ++i) {
			if (trial % 3 == 0) /* in a box */
				pts[i] = ibV3(srand1(), 2.0 * srand1(), 0.5 * srand1());
			else if (trial % 3 == 1) /* on a sphere: every point a vertex */
				pts[i] = ibNormalize(ibV3(srand1(), srand1(), srand1()));
			else /* in a ball, shifted far from the origin */
				pts[i] = ibAdd(ibV3(100.0, -50.0, 20.0),
				               ibScale(cbrt(urand01()), ibNormalize(ibV3(srand1(), srand1(), srand1()))));
		}
		ibHull g = {pts, n};
		ibShapeId s = ibCreateHullShape(b, &sd, &g);
		if (IB_IS_NULL(s)) fail_msg("trial %d: %s", trial, ibWorld_GetLastError(w));
		assert_int_equal(ibShape_GetType(s), IB_SHAPE_HULL);
		ibHullData h = ibShape_GetHull(s);
		checkHull(&h, pts, n, 1e-9 * (1.0 + 100.0 * (trial % 3 == 2)));
		if (trial % 3 == 1) assert_int_equal(h.vertexCount, n);
		/* mass: positive, centre inside */
		ibMassData md = ibShape_GetMassData(s);
		assert_true(md.mass > 0.0);
		for (int f = 0; f < h.faceCount; ++f) assert_true(ibDot(h.faces[f].normal, md.center) < h.faces[f].offset);
		/* the same vertex list gives the same hull data (canonical order) */
		ibVec3 verts[4 + 29 * 13];
		memcpy(verts, h.vertices, (size_t)h.vertexCount * sizeof(ibVec3));
		ibHull g2 = {verts, h.vertexCount};
		ibShapeId s2 = ibCreateHullShape(b, &sd, &g2);
		assert_false(IB_IS_NULL(s2));
		ibHullData h2 = ibShape_GetHull(s2);
		assert_int_equal(h2.vertexCount, h.vertexCount);
		assert_int_equal(h2.faceCount, h.faceCount);
		assert_memory_equal(h2.faceVertices, h.faceVertices, (size_t)(2 * h.edgeCount) * sizeof(int));
		assert_memory_equal(h2.faces, h.faces, (size_t)h.faceCount * sizeof(ibHullFace));
		assert_memory_equal(h2.edges, h.edges, (size_t)h.edgeCount * sizeof(ibHullEdge));
		ibMassData md2 = ibShape_GetMassData(s2);
		assert_memory_equal(&md2, &md, sizeof md);
		assert_int_equal(ibDestroyShape(s2), IB_OK);
		assert_int_equal(ibDestroyShape(s), IB_OK);
	}
	ibDestroyWorld(w);
}

static void test_cube_hull(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibBodyId b = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibVec3 h = {0.7, 1.3, 0.4}, c = {2.0, -1.0, 0.5};
	ibVec3 pts[8 + 40];
	int n = 0;
	for (int i = 0; i < 40; ++i) /* interior points and points on the faces, before the corners */
		pts[n++] = ibAdd(c, ibV3(h.x * (i % 5 == 0 ? 1.0 : srand1()), h.y * srand1() * 0.99, h.z * srand1() * 0.99));
	for (int i = 0; i < 8; ++i) pts[n++] = ibAdd(c, ibV3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z));
	ibShapeDef sd = ibDefaultShapeDef();
	sd.density = 2500.0;
	ibHull g = {pts, n};
	ibShapeId s = ibCreateHullShape(b, &sd, &g);
	assert_false(IB_IS_NULL(s));
	ibHullData d = ibShape_GetHull(s);
	checkHull(&d, pts, n, 1e-12);
	assert_int_equal(d.vertexCount, 8);
	assert_int_equal(d.faceCount, 6);
	assert_int_equal(d.edgeCount, 12);
	assert_int_equal(d.triangleCount, 12);
	for (int f = 0; f < 6; ++f) {
		assert_int_equal(d.faces[f].count, 4);
		/* axis-aligned unit normals, exact */
		ibVec3 nn = d.faces[f].normal;
		assert_true(fabs(nn.x) + fabs(nn.y) + fabs(nn.z) == 1.0);
	}
	for (int v = 0; v < 8; ++v) assert_int_equal(d.vertexEdgeStart[v + 1] - d.vertexEdgeStart[v], 3);
	ibMassData ref, md = ibShape_GetMassData(s);
	ibBox box = {h};
	assert_int_equal(ibComputeBoxMass(&box, sd.density, &ref), IB_OK);
	assert_true(fabs(md.mass - ref.mass) <= 1e-12 * ref.mass);
	for (int i = 0; i < 3; ++i) {
		assert_true(fabs(ibVec3_Get(md.center, i) - ibVec3_Get(c, i)) <= 1e-12 * ibLength(c));
		for (int j = 0; j < 3; ++j)
			assert_true(fabs(md.inertia.m[i][j] - ref.inertia.m[i][j]) <= 1e-12 * ref.inertia.m[2][2]);
	}
	assert_true(fabs(ibBody_GetMass(b) - ref.mass) <= 1e-12 * ref.mass);
	ibDestroyWorld(w);
}

/* Inputs with many coplanar and collinear points: a lattice (points on faces and edges) and a prism
 * over a regular 32-gon (large cap faces, coplanar side quads). */
static void test_structured_hulls(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibBodyId b = tu_new_body(w, IB_BODY_STATIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibShapeDef sd = ibDefaultShapeDef();
	ibVec3 pts[216];
	int n = 0;
	for (int i = 0; i < 6; ++i)
		for (int j = 0; j < 6; ++j)
			for (int k = 0; k < 6; ++k) pts[n++] = ibV3(0.2 * i, 0.3 * j - 1.0, 0.1 * k + 7.0);
	ibShapeId s = ibCreateHullShape(b, &sd, &(ibHull){pts, n});
	if (IB_IS_NULL(s)) fail_msg("lattice: %s", ibWorld_GetLastError(w));
	ibHullData h = ibShape_GetHull(s);
	checkHull(&h, pts, n, 1e-12);
	assert_int_equal(h.vertexCount, 8);
	assert_int_equal(h.faceCount, 6);
	assert_true(fabs(ibShape_GetMassData(s).mass - 1000.0 * 1.0 * 1.5 * 0.5) < 1e-9);
	n = 0;
	for (int ring = 0; ring < 2; ++ring)
		for (int k = 0; k < 32; ++k) {
			double a = 2.0 * 3.14159265358979323846 * k / 32.0;
			pts[n++] = ibV3(0.5 * cos(a), 0.5 * sin(a), ring ? 0.4 : -0.4);
		}
	pts[n++] = ibV3(0.0, 0.0, 0.4); /* cap centres: on the caps, not vertices */
	pts[n++] = ibV3(0.0, 0.0, -0.4);
	s = ibCreateHullShape(b, &sd, &(ibHull){pts, n});
	if (IB_IS_NULL(s)) fail_msg("prism: %s", ibWorld_GetLastError(w));
	h = ibShape_GetHull(s);
	checkHull(&h, pts, n, 1e-12);
	assert_int_equal(h.vertexCount, 64);
	assert_int_equal(h.faceCount, 34);
	int caps = 0;
	for (int f = 0; f < h.faceCount; ++f) caps += h.faces[f].count == 32;
	assert_int_equal(caps, 2);
	double area = 0.5 * 32 * 0.25 * sin(2.0 * 3.14159265358979323846 / 32.0); /* polygon area */
	assert_true(fabs(ibShape_GetMassData(s).mass - 1000.0 * area * 0.8) < 1e-9);
	ibDestroyWorld(w);
}

/* Runs fn with stdout and stderr sent to a temporary file; returns how many bytes were written. */
static long captureOutput(void (*fn)(void*), void* ctx)
{
	fflush(stdout);
	fflush(stderr);
	char path[] = "/tmp/ibdyn_hull_out_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	int o1 = dup(1), o2 = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	fn(ctx);
	fflush(stdout);
	fflush(stderr);
	dup2(o1, 1);
	dup2(o2, 2);
	close(o1);
	close(o2);
	long size = (long)lseek(fd, 0, SEEK_END);
	close(fd);
	unlink(path);
	return size;
}

typedef struct degenerateCase {
	ibBodyId body;
	ibResult results[8];
	char messages[8][512];
} degenerateCase;

static void runDegenerate(void* ctx)
{
	degenerateCase* dc = ctx;
	ibShapeDef sd = ibDefaultShapeDef();
	ibVec3 pts[32];
	ibWorldId w = ibBody_GetWorld(dc->body);
	int k = 0;
	for (int c = 0; c < 6; ++c) {
		int n = 20;
		for (int i = 0; i < n; ++i) {
			double u = srand1(), v = srand1();
			switch (c) {
			case 0:
				n = 3;
				pts[i] = ibV3(u, v, 0.3);
				break; /* too few */
			case 1:
				pts[i] = ibV3(u, v, i == 7 ? NAN : 1.0);
				break; /* NaN */
			case 2:
				pts[i] = ibAdd(ibV3(5, 5, 5), ibV3(u + v, u - v, 2.0 * u + 3.0 * v));
				break; /* coplanar */
			case 3:
				pts[i] = ibV3(u, 2.0 * u, -u);
				break; /* collinear */
			case 4:
				pts[i] = ibV3(1.5, -2.0, 0.25);
				break; /* coincident */
			default:
				pts[i] = ibV3(u, v, 1e-300 * u * v);
				break; /* flat to rounding */
			}
		}
		ibHull g = {pts, n};
		ibWorld_ClearError(w);
		ibShapeId s = ibCreateHullShape(dc->body, &sd, &g);
		dc->results[k] = IB_IS_NULL(s) ? (ibResult)-1 : IB_OK;
		snprintf(dc->messages[k], sizeof dc->messages[k], "%s", ibWorld_GetLastError(w));
		k++;
	}
}

static void test_degenerate_hulls(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	degenerateCase dc;
	memset(&dc, 0, sizeof dc);
	dc.body = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	long printed = captureOutput(runDegenerate, &dc);
	assert_int_equal(printed, 0); /* qhull is silent */
	const char* expect[6] = {"at least 4 points", "not finite", "coplanar", "coplanar", "coplanar", "coplanar"};
	for (int k = 0; k < 6; ++k) {
		if (dc.results[k] == IB_OK) fail_msg("case %d accepted", k);
		if (strstr(dc.messages[k], expect[k]) == NULL) fail_msg("case %d: message '%s'", k, dc.messages[k]);
	}
	assert_int_equal(ibBody_GetShapeCount(dc.body), 0);
	ibShapeDef sd = ibDefaultShapeDef();
	assert_true(IB_IS_NULL(ibCreateHullShape(dc.body, &sd, NULL)));
	ibHull none = {NULL, 10};
	assert_true(IB_IS_NULL(ibCreateHullShape(dc.body, &sd, &none)));
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- planes */

static const ibShape* internalShape(ibShapeId id, const ibBody** body)
{
	ibWorld* w;
	const ibShape* s = ib_shape_get(id, &w);
	assert_non_null(s);
	*body = &w->bodies[s->body];
	return s;
}

static void test_plane_shape(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	ibShapeDef sd = ibDefaultShapeDef();
	ibPlane pl = {{0, 0, 2.0}, 0.5}; /* z = 0.5, normalised on creation */
	ibBodyId dyn = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibWorld_ClearError(w);
	assert_true(IB_IS_NULL(ibCreatePlaneShape(dyn, &sd, &pl)));
	assert_non_null(strstr(ibWorld_GetLastError(w), "static and kinematic"));
	ibPlane zero = {{0, 0, 0}, 1.0};
	ibBodyId ground = tu_new_body(w, IB_BODY_STATIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	assert_true(IB_IS_NULL(ibCreatePlaneShape(ground, &sd, &zero)));
	ibBodyId kin = tu_new_body(w, IB_BODY_KINEMATIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	assert_false(IB_IS_NULL(ibCreatePlaneShape(kin, &sd, &pl)));
	ibShapeId ps = ibCreatePlaneShape(ground, &sd, &pl);
	assert_false(IB_IS_NULL(ps));
	ibPlane got = ibShape_GetPlane(ps);
	assert_true(got.normal.x == 0.0 && got.normal.y == 0.0 && got.normal.z == 1.0 && got.offset == 0.5);
	assert_true(ibShape_GetMassData(ps).mass == 0.0);

	const ibBody* bp;
	const ibShape* sp = internalShape(ps, &bp);
	ibAABB pb = ib_shape_world_aabb(bp, sp);
	assert_true(pb.hi.z == 0.5 && pb.lo.z <= -1e29 && pb.hi.x >= 1e29 && pb.lo.x <= -1e29);

	/* a tilted box resting into the plane: the deepest corner gives the depth */
	double tol = 1e-3;
	for (int trial = 0; trial < 200; ++trial) {
		ibQuat q = ibQuatNormalize(ibQ(srand1(), srand1(), srand1(), srand1()));
		ibVec3 he = {0.2 + urand01(), 0.2 + urand01(), 0.2 + urand01()};
		ibVec3 pos = ibV3(srand1(), srand1(), 0.5 + 1.5 * srand1());
		ibBodyId bb = tu_new_body(w, IB_BODY_DYNAMIC, pos, q);
		ibBox box = {he};
		ibShapeId bs = ibCreateBoxShape(bb, &sd, &box);
		const ibBody* bbb;
		const ibShape* sbs = internalShape(bs, &bbb);
		double lowest = INFINITY; /* exact: lowest corner height over the plane */
		for (int i = 0; i < 8; ++i) {
			ibVec3 c = ibBody_GetWorldPoint(bb, ibV3(i & 1 ? he.x : -he.x, i & 2 ? he.y : -he.y, i & 4 ? he.z : -he.z));
			lowest = fmin(lowest, c.z - 0.5);
		}
		for (int order = 0; order < 2; ++order) {
			ibManifold m[2];
			int k = order == 0 ? ib_shape_pair_collide(bbb, sbs, bp, sp, tol, NULL, m, 2)
			                   : ib_shape_pair_collide(bp, sp, bbb, sbs, tol, NULL, m, 2);
			if (lowest > tol) {
				assert_int_equal(k, 0);
				continue;
			}
			assert_int_equal(k, 1);
			double sign = order == 0 ? 1.0 : -1.0; /* normal from B to A */
			assert_true(fabs(m[0].normal.z - sign) < 1e-15 && m[0].normal.x == 0.0 && m[0].normal.y == 0.0);
			assert_true(m[0].pointCount >= 1 && m[0].pointCount <= IB_MANIFOLD_MAX_POINTS);
			double minSep = INFINITY;
			for (int i = 0; i < m[0].pointCount; ++i) {
				const ibManifoldPoint* p = &m[0].points[i];
				ibVec3 onPlane = order == 0 ? p->pointB : p->pointA, onBox = order == 0 ? p->pointA : p->pointB;
				assert_true(fabs(onPlane.z - 0.5) < 1e-12);
				assert_true(fabs(p->separation - ibDot(ibSub(p->pointA, p->pointB), m[0].normal)) < 1e-12);
				assert_true(p->separation <= tol + 1e-12 && p->separation >= lowest - 1e-12);
				ibVec3 local = ibBody_GetLocalPoint(bb, onBox); /* on the box surface */
				double inside = fmax(fmax(fabs(local.x) - he.x, fabs(local.y) - he.y), fabs(local.z) - he.z);
				assert_true(fabs(inside) < 1e-9);
				minSep = fmin(minSep, p->separation);
			}
			assert_true(fabs(minSep - lowest) < 1e-12);
		}
		/* the same box as a hull shape (its corners plus its centre) collides identically */
		ibVec3 corners[9];
		for (int i = 0; i < 8; ++i) corners[i] = ibV3(i & 1 ? he.x : -he.x, i & 2 ? he.y : -he.y, i & 4 ? he.z : -he.z);
		corners[8] = IB_VEC3_ZERO;
		ibBodyId hb = tu_new_body(w, IB_BODY_DYNAMIC, pos, q);
		ibShapeId hs = ibCreateHullShape(hb, &sd, &(ibHull){corners, 9});
		assert_false(IB_IS_NULL(hs));
		const ibBody* hbb;
		const ibShape* hss = internalShape(hs, &hbb);
		ibConvex hc;
		assert_true(ib_shape_convex(hbb, hss, &hc));
		assert_true(hc.type == IB_CONVEX_HULL && hc.hull != NULL && hc.vertexCount == 8);
		ibManifold hm;
		int hk = ib_shape_pair_collide(hbb, hss, bp, sp, tol, NULL, &hm, 1);
		assert_int_equal(hk, lowest <= tol ? 1 : 0);
		if (hk) {
			double minSep = INFINITY;
			for (int i = 0; i < hm.pointCount; ++i) minSep = fmin(minSep, hm.points[i].separation);
			assert_true(fabs(minSep - lowest) < 1e-12);
		}
		ibDestroyBody(hb);
		ibDestroyBody(bb);
	}

	/* spheres against a tilted plane on a moved static body */
	ibQuat tilt = ibQuatFromAxisAngle(ibNormalize(ibV3(1, 2, 0)), 0.4);
	ibBodyId tb = tu_new_body(w, IB_BODY_STATIC, ibV3(0.3, -0.2, 1.0), tilt);
	ibShapeDef tsd = ibDefaultShapeDef();
	tsd.localPosition = ibV3(0.1, 0.0, -0.2);
	ibShapeId tps = ibCreatePlaneShape(tb, &tsd, &(ibPlane){{0, 1, 1}, -0.1});
	assert_false(IB_IS_NULL(tps));
	const ibBody* tbp;
	const ibShape* tsp = internalShape(tps, &tbp);
	ibVec3 nW = ibRotate(tilt, ibNormalize(ibV3(0, 1, 1)));
	ibVec3 originW = ibBody_GetWorldPoint(tb, tsd.localPosition);
	double offW = -0.1 + ibDot(nW, originW);
	for (int trial = 0; trial < 200; ++trial) {
		double r = 0.1 + urand01();
		ibVec3 c = ibV3(3.0 * srand1(), 3.0 * srand1(), 3.0 * srand1());
		ibBodyId sb = tu_new_body(w, IB_BODY_DYNAMIC, c, IB_QUAT_IDENTITY);
		ibShapeId ss = ibCreateSphereShape(sb, &sd, &(ibSphere){r});
		const ibBody* sbb;
		const ibShape* sss = internalShape(ss, &sbb);
		double sep = ibDot(nW, c) - offW - r;
		ibManifold m;
		int k = ib_shape_pair_collide(sbb, sss, tbp, tsp, 0.0, NULL, &m, 1);
		assert_int_equal(k, sep <= 0.0 ? 1 : 0);
		if (k) {
			assert_true(ibLength(ibSub(m.normal, nW)) < 1e-12);
			assert_true(fabs(m.points[0].separation - sep) < 1e-12);
			assert_true(ibLength(ibSub(m.points[0].pointA, ibMulAdd(c, -r, nW))) < 1e-12);
		}
		ibDestroyBody(sb);
	}
	/* plane against plane: never */
	ibManifold m;
	const ibBody* kbp;
	ibShapeId kps = ibCreatePlaneShape(kin, &sd, &(ibPlane){{0, 0, -1}, 0.0});
	const ibShape* ksp = internalShape(kps, &kbp);
	assert_int_equal(ib_shape_pair_collide(bp, sp, kbp, ksp, 1.0, NULL, &m, 1), 0);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_hulls),     cmocka_unit_test(test_cube_hull),
	    cmocka_unit_test(test_structured_hulls), cmocka_unit_test(test_degenerate_hulls),
	    cmocka_unit_test(test_plane_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
