/* [IMPL] Contact of a convex shape with one triangle of a static mesh, one-sided.
 *
 * The two-sided test of the convex against the triangle as a thin convex (ib_manifold_build) takes the
 * axis of least penetration. Near a triangle's edge that can be a normal tilted towards the edge, or
 * lying in the triangle's plane, or the back of the face once the shape has sunk in by more than it
 * reaches past the edge. On a flat mesh such normals pushed bodies sideways and down, and the contact
 * solver squeezed them (random drops of three bodies onto a flat 10 m mesh: 10 of 1500 gained hundreds
 * to 1e6 J; none onto a box ground). A mesh is the surface of what lies behind its faces (triangles
 * counter-clockwise seen from outside), so only these normals are kept:
 * - the face's own normal (within 1e-3 rad);
 * - for a region that touches the triangle on a ridge (a convex edge, trimesh_edges.c) or at a vertex of
 *   one: normals within the triangle's bend of the face's (bend: the largest angle to a neighbour's
 *   normal across a ridge), those of a curved convex surface's edges and vertices (a terrain's crest
 *   poking into a box's face);
 * - for a region that touches an outer edge of the mesh (or a vertex of one): normals between the face's
 *   and the edge's outward direction in its plane.
 * Any other region is replaced by the convex against the face's plane (ib_manifold_plane), kept where
 * its points lie over the triangle: a body that has gone partly through the surface is pushed back
 * out along the face normal. */
#include <math.h>

#include "collision/trimesh.h"

/* slack (rad) of the normal tests: a normal within this of the face's is the face's */
#define IB_TRI_SLACK 1e-3

typedef struct Tri {
	ibVec3 v[3]; /* world vertices */
	ibVec3 f;    /* unit front normal */
	double tol;  /* distance within which a point is on an edge (m) */
} Tri;

/* Angle of the unit vector x in the plane of f and e from f towards e (x is assumed to lie in it). */
static double arc(ibVec3 x, ibVec3 f, ibVec3 e) { return atan2(ibDot(x, e), ibDot(x, f)); }

/* True if the normal N (unit, from the mesh to the shape) is real for a region touching edge k: at a ridge
 * (or a vertex of one) within the triangle's bend of the face's normal (the normals of a curved convex
 * surface's edges and vertices: a terrain's crest poking into a box's face); at an outer edge of the mesh
 * between the face's normal and the edge's outward direction. */
static bool edge_allows(const ibTriMeshGeom* t, int tri, const Tri* T, int k, ibVec3 N)
{
	uint8_t kind = t->edgeKind[3 * tri + k];
	if (kind == IB_TRI_EDGE_FLAT) return false;
	if (kind == IB_TRI_EDGE_CONVEX) return ibDot(N, T->f) >= cos(t->bend[tri] + IB_TRI_SLACK);
	ibVec3 d = ibNormalize(ibSub(T->v[(k + 1) % 3], T->v[k]));
	ibVec3 out = ibCross(d, T->f); /* in the face's plane, away from the triangle */
	ibVec3 np = ibMulAdd(N, -ibDot(N, d), d);
	double l = ibLength(np);
	if (!(l > 0.0)) return false;
	double a = arc(ibScale(1.0 / l, np), T->f, out);
	return a >= -IB_TRI_SLACK && a <= 0.5 * IB_PI + IB_TRI_SLACK;
}

/* Signed distance of q from edge k's line inside the face's plane (> 0: inside the triangle). */
static double inside_by(const Tri* T, int k, ibVec3 q)
{
	ibVec3 d = ibNormalize(ibSub(T->v[(k + 1) % 3], T->v[k]));
	return ibDot(ibSub(q, T->v[k]), ibCross(T->f, d));
}

/* True if every point of the region touches an edge (or a vertex of one) whose normal cone holds N. */
static bool region_allowed(const ibTriMeshGeom* t, int tri, const Tri* T, const ibManifold* m, ibVec3 N)
{
	if (!(ibDot(N, T->f) > 0.0)) return false; /* the back of the face */
	for (int i = 0; i < m->pointCount; ++i) {
		bool ok = false;
		for (int k = 0; k < 3 && !ok; ++k)
			ok = fabs(inside_by(T, k, m->points[i].pointB)) <= T->tol && edge_allows(t, tri, T, k, N);
		if (!ok) return false;
	}
	return true;
}

/* The convex against the face's plane, the points over the triangle. */
static int face_region(const Tri* T, const ibConvex* c, double tolerance, ibManifold* out)
{
	ibManifold m;
	if (ib_manifold_plane(c, T->f, ibDot(T->f, T->v[0]), tolerance, &m) <= 0) return 0;
	out->normal = m.normal;
	out->pointCount = 0;
	for (int i = 0; i < m.pointCount; ++i) {
		bool over = true;
		for (int k = 0; k < 3 && over; ++k) over = inside_by(T, k, m.points[i].pointB) >= -T->tol;
		if (over) out->points[out->pointCount++] = m.points[i];
	}
	return out->pointCount;
}

int ib_trimesh_triangle_contact(const ibTriMeshGeom* t, int tri, ibVec3 p, const ibMat3* R, const ibConvex* c,
                                double tolerance, ibManifold* out)
{
	out->pointCount = 0;
	Tri T;
	const int* ix = t->indices + 3 * tri;
	double size = 0.0;
	for (int i = 0; i < 3; ++i) T.v[i] = ibAdd(p, ibMat3_MulV(*R, t->vertices[ix[i]]));
	for (int i = 0; i < 3; ++i) size = fmax(size, ibLength(ibSub(T.v[(i + 1) % 3], T.v[i])));
	ibVec3 f = ibCross(ibSub(T.v[1], T.v[0]), ibSub(T.v[2], T.v[0]));
	double fl = ibLength(f);
	T.f = fl > 0.0 ? ibScale(1.0 / fl, f) : IB_VEC3_ZERO;
	/* in front of the face's plane by more than the tolerance: farther than that from the triangle (the
	 * valleys under a body resting on a terrain: a support point instead of a GJK run) */
	if (fl > 0.0 && ibDot(T.f, ib_convex_support(c, ibNeg(T.f))) - ibDot(T.f, T.v[0]) > tolerance) return 0;
	ibConvex tc = ib_convex_make(IB_CONVEX_HULL, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	tc.vertices = T.v;
	tc.vertexCount = 3;
	int n = ib_manifold_build(c, &tc, tolerance, NULL, out); /* normal from the triangle (B) to c (A) */
	if (n <= 0) return 0;
	if (!(fl > 0.0)) return n; /* degenerate triangle: no face to go by */
	T.tol = fmax(1e-9, 1e-7 * size);
	ibVec3 N = ibNormalize(out->normal);
	if (ibDot(N, T.f) >= cos(IB_TRI_SLACK) || region_allowed(t, tri, &T, out, N)) return n;
	return face_region(&T, c, tolerance, out);
}

typedef struct FaceQuery {
	const ibTriMeshGeom* t;
	ibVec3 l;
	double tol;
	bool found;
	ibVec3 n;
	double off;
} FaceQuery;

static bool face_visit(void* ctx, int tri)
{
	FaceQuery* q = ctx;
	const int* ix = q->t->indices + 3 * tri;
	Tri T;
	for (int i = 0; i < 3; ++i) T.v[i] = q->t->vertices[ix[i]];
	ibVec3 f = ibCross(ibSub(T.v[1], T.v[0]), ibSub(T.v[2], T.v[0]));
	double fl = ibLength(f);
	if (!(fl > 0.0)) return true;
	T.f = ibScale(1.0 / fl, f);
	double off = ibDot(T.f, T.v[0]);
	if (fabs(ibDot(T.f, q->l) - off) > q->tol) return true;
	for (int k = 0; k < 3; ++k)
		if (inside_by(&T, k, q->l) < -q->tol) return true;
	q->found = true;
	q->n = T.f;
	q->off = off;
	return false;
}

bool ib_trimesh_face_at(const ibTriMeshGeom* t, ibVec3 l, double tol, ibVec3* normal, double* offset)
{
	FaceQuery q = {t, l, tol, false, IB_VEC3_ZERO, 0.0};
	ib_trimesh_query_aabb(t, ib_aabb_fatten((ibAABB){l, l}, tol), face_visit, &q);
	if (q.found) {
		*normal = q.n;
		*offset = q.off;
	}
	return q.found;
}
