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
#include "math/fminmax.h"

/* slack (rad) of the normal tests: a normal within this of the face's is the face's */
#define IB_TRI_SLACK 1e-3

typedef struct Tri {
	ibVec3 v[3];   /* vertices */
	ibVec3 f;      /* unit front normal */
	ibVec3 d[3];   /* unit direction of edge k (vertex k to k + 1) */
	ibVec3 out[3]; /* in the face's plane, away from the triangle across edge k */
	double tol;    /* distance within which a point is on an edge (m) */
} Tri;

/* The frame of the triangle a, b, c; false if it is degenerate (no normal). */
static bool tri_init(Tri* T, ibVec3 a, ibVec3 b, ibVec3 c)
{
	T->v[0] = a, T->v[1] = b, T->v[2] = c;
	ibVec3 f = ibCross(ibSub(b, a), ibSub(c, a));
	double fl = ibLength(f), size = 0.0;
	if (!(fl > 0.0)) return false;
	T->f = ibScale(1.0 / fl, f);
	for (int k = 0; k < 3; ++k) {
		ibVec3 e = ibSub(T->v[(k + 1) % 3], T->v[k]);
		double l = ibLength(e);
		size = ib_fmax(size, l);
		T->d[k] = ibScale(1.0 / l, e);
		T->out[k] = ibCross(T->d[k], T->f);
	}
	T->tol = ib_fmax(1e-9, 1e-7 * size);
	return true;
}

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
	ibVec3 np = ibMulAdd(N, -ibDot(N, T->d[k]), T->d[k]);
	double l = ibLength(np);
	if (!(l > 0.0)) return false;
	double a = arc(ibScale(1.0 / l, np), T->f, T->out[k]);
	return a >= -IB_TRI_SLACK && a <= 0.5 * IB_PI + IB_TRI_SLACK;
}

/* Signed distance of q from edge k's line inside the face's plane (> 0: inside the triangle). */
static double inside_by(const Tri* T, int k, ibVec3 q) { return -ibDot(ibSub(q, T->v[k]), T->out[k]); }

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
	const int* ix = t->indices + 3 * tri;
	ibVec3 v[3];
	for (int i = 0; i < 3; ++i) v[i] = ibAdd(p, ibMat3_MulV(*R, t->vertices[ix[i]]));
	Tri T;
	const bool face = tri_init(&T, v[0], v[1], v[2]);
	/* in front of the face's plane by more than the tolerance: farther than that from the triangle (the
	 * valleys under a body resting on a terrain: a support point instead of a GJK run) */
	if (face && ibDot(T.f, ib_convex_support(c, ibNeg(T.f))) - ibDot(T.f, v[0]) > tolerance) return 0;
	ibConvex tc = ib_convex_make(IB_CONVEX_HULL, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	tc.vertices = v;
	tc.vertexCount = 3;
	int n = ib_manifold_build(c, &tc, tolerance, NULL, out); /* normal from the triangle (B) to c (A) */
	if (n <= 0) return 0;
	if (!face) return n; /* degenerate triangle: no face to go by */
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
	if (!tri_init(&T, q->t->vertices[ix[0]], q->t->vertices[ix[1]], q->t->vertices[ix[2]])) return true;
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
