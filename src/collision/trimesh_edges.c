/* Edges of a static triangle mesh: which triangle lies across each edge, and whether the edge is a
 * ridge (convex), flat or a valley (concave), or an outer edge. A convex shape touching a triangle
 * near one of its edges gets from the two-sided triangle test a normal tilted towards the edge (or
 * lying in the mesh's plane); on a flat or concave edge no such normal exists on the mesh's surface,
 * and a body sliding over a flat mesh was pushed sideways or down by it (trimesh_contact.c). Edges are
 * shared by vertex index: a soup with duplicated vertices has only outer edges. */
#include <math.h>
#include <stdlib.h>

#include "collision/trimesh.h"

/* A ridge must bend by more than this (rad) to count as one; below it the edge is flat. */
#define IB_TRI_RIDGE_ANGLE 1e-4

typedef struct edgeKey {
	int32_t lo, hi; /* vertex indices, lo < hi */
	int32_t tri, k; /* triangle and edge (vertices k, k + 1) */
} edgeKey;

_Static_assert(sizeof(edgeKey) == IB_TRIMESH_EDGE_TEMP_BYTES, "scratch size of ib_trimesh_classify_edges");

static int cmpEdge(const void* pa, const void* pb)
{
	const edgeKey *a = pa, *b = pb;
	if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
	if (a->tri != b->tri) return a->tri < b->tri ? -1 : 1;
	return (a->k > b->k) - (a->k < b->k);
}

static ibVec3 vertex(const ibTriMeshGeom* t, int tri, int k) { return t->vertices[t->indices[3 * tri + k % 3]]; }

/* Unit normal of a triangle (counter-clockwise: the front); zero if it is degenerate. */
static ibVec3 face_normal(const ibTriMeshGeom* t, int tri)
{
	ibVec3 n = ibCross(ibSub(vertex(t, tri, 1), vertex(t, tri, 0)), ibSub(vertex(t, tri, 2), vertex(t, tri, 0)));
	double l = ibLength(n);
	return l > 0.0 ? ibScale(1.0 / l, n) : IB_VEC3_ZERO;
}

/* Kind of edge k of triangle tri with triangle o across it; a ridge raises tri's bend. */
static uint8_t classify(ibTriMeshGeom* t, int tri, int k, int o)
{
	ibVec3 f = face_normal(t, tri), g = face_normal(t, o);
	if (ibLengthSq(f) == 0.0 || ibLengthSq(g) == 0.0) return IB_TRI_EDGE_BOUNDARY;
	/* the vertex of o off the edge: below tri's plane on a ridge, above it in a valley */
	ibVec3 p = vertex(t, tri, k);
	int32_t a = t->indices[3 * tri + k], b = t->indices[3 * tri + (k + 1) % 3];
	ibVec3 off = IB_VEC3_ZERO;
	for (int i = 0; i < 3; ++i) {
		int32_t v = t->indices[3 * o + i];
		if (v != a && v != b) off = t->vertices[v];
	}
	double bend = atan2(ibLength(ibCross(f, g)), ibDot(f, g));
	if (!(ibDot(f, ibSub(off, p)) < 0.0 && bend > IB_TRI_RIDGE_ANGLE)) return IB_TRI_EDGE_FLAT;
	if (bend > t->bend[tri]) t->bend[tri] = bend;
	return IB_TRI_EDGE_CONVEX;
}

void ib_trimesh_classify_edges(ibTriMeshGeom* t, void* temp)
{
	const int nt = t->triangleCount;
	edgeKey* e = temp;
	for (int i = 0; i < nt; ++i) t->bend[i] = 0.0;
	for (int i = 0; i < nt; ++i)
		for (int k = 0; k < 3; ++k) {
			int32_t a = t->indices[3 * i + k], b = t->indices[3 * i + (k + 1) % 3];
			e[3 * i + k] = (edgeKey){a < b ? a : b, a < b ? b : a, i, k};
			t->adjacent[3 * i + k] = -1;
			t->edgeKind[3 * i + k] = IB_TRI_EDGE_BOUNDARY;
		}
	qsort(e, (size_t)3 * nt, sizeof(edgeKey), cmpEdge);
	for (int i = 0; i < 3 * nt;) {
		int j = i + 1;
		while (j < 3 * nt && e[j].lo == e[i].lo && e[j].hi == e[i].hi) ++j;
		if (j - i == 2 && e[i].lo != e[i].hi) { /* a manifold edge: exactly two triangles */
			const edgeKey *x = &e[i], *y = &e[i + 1];
			t->adjacent[3 * x->tri + x->k] = y->tri;
			t->adjacent[3 * y->tri + y->k] = x->tri;
			t->edgeKind[3 * x->tri + x->k] = classify(t, x->tri, x->k, y->tri);
			t->edgeKind[3 * y->tri + y->k] = classify(t, y->tri, y->k, x->tri);
		}
		i = j;
	}
}
