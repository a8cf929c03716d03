/* Static triangle mesh: a copy of the triangles and an AABB tree over them (top-down, split at the
 * median of the triangle centroids along the widest centroid axis, so the depth stays about
 * log2(n)). Box queries test each leaf triangle's own bounding box, so they return exactly the
 * triangles a brute-force box test returns; ray queries visit the nearer child first and prune by
 * the closest hit so far. Inner boxes are widened by a relative 1e-12 so that rounding in the slab
 * test never drops a hit. */
#include "collision/trimesh.h"
#include "math/fminmax.h"

#include <math.h>
#include <string.h>

typedef struct sortKey {
	double key;
	int tri;
} sortKey;

static int cmpKey(const void* pa, const void* pb)
{
	const sortKey *a = pa, *b = pb;
	if (a->key != b->key) return a->key < b->key ? -1 : 1;
	return (a->tri > b->tri) - (a->tri < b->tri);
}

static void swapKeys(sortKey* a, sortKey* b)
{
	sortKey t = *a;
	*a = *b;
	*b = t;
}

/* Partial sort of k[0..n): k[m] is the element a full sort (cmpKey) would put there, smaller ones
 * before it, larger ones after (quickselect, median-of-three pivots: expected linear time). */
static void selectNth(sortKey* k, int n, int m)
{
	int lo = 0, hi = n - 1;
	while (hi > lo) {
		int mid = lo + (hi - lo) / 2;
		if (cmpKey(&k[mid], &k[lo]) < 0) swapKeys(&k[mid], &k[lo]);
		if (cmpKey(&k[hi], &k[lo]) < 0) swapKeys(&k[hi], &k[lo]);
		if (cmpKey(&k[hi], &k[mid]) < 0) swapKeys(&k[hi], &k[mid]);
		sortKey pivot = k[mid];
		int i = lo, j = hi;
		while (i <= j) { /* Hoare partition; keys are distinct (ties broken by triangle index) */
			while (cmpKey(&k[i], &pivot) < 0) ++i;
			while (cmpKey(&k[j], &pivot) > 0) --j;
			if (i <= j) swapKeys(&k[i++], &k[j--]);
		}
		if (m <= j)
			hi = j;
		else if (m >= i)
			lo = i;
		else
			return;
	}
}

static double axisOf(ibVec3 v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

typedef struct builder {
	ibTriMeshGeom* t;
	sortKey* keys;
	ibVec3* centroid;
	int next; /* next free node */
} builder;

static void buildNode(builder* B, int node, int lo, int hi)
{
	ibTriMeshGeom* t = B->t;
	ibAABB box = t->triBox[t->order[lo]];
	ibAABB cbox = {B->centroid[t->order[lo]], B->centroid[t->order[lo]]};
	for (int i = lo + 1; i < hi; ++i) {
		int tri = t->order[i];
		box = ib_aabb_union(box, t->triBox[tri]);
		cbox = ib_aabb_union(cbox, (ibAABB){B->centroid[tri], B->centroid[tri]});
	}
	ibVec3 ext = ibSub(box.hi, box.lo);
	double size = ib_fmax(ib_fmax(fabs(box.lo.x), fabs(box.hi.x)),
	                   ib_fmax(ib_fmax(fabs(box.lo.y), fabs(box.hi.y)), ib_fmax(fabs(box.lo.z), fabs(box.hi.z))));
	t->nodes[node].box = ib_aabb_fatten(box, 1e-12 * (size + ext.x + ext.y + ext.z));
	if (hi - lo <= IB_TRIMESH_LEAF_SIZE) {
		t->nodes[node].first = lo;
		t->nodes[node].count = hi - lo;
		return;
	}
	ibVec3 ce = ibSub(cbox.hi, cbox.lo);
	int axis = ce.x >= ce.y && ce.x >= ce.z ? 0 : ce.y >= ce.z ? 1 : 2;
	for (int i = lo; i < hi; ++i) B->keys[i - lo] = (sortKey){axisOf(B->centroid[t->order[i]], axis), t->order[i]};
	int mid = lo + (hi - lo) / 2;
	selectNth(B->keys, hi - lo, mid - lo);
	for (int i = lo; i < hi; ++i) t->order[i] = B->keys[i - lo].tri;
	int left = B->next;
	B->next += 2;
	t->nodes[node].first = left;
	t->nodes[node].count = 0;
	buildNode(B, left, lo, mid);
	buildNode(B, left + 1, mid, hi);
}

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

ibResult ib_trimesh_build(ibWorld* w, const ibMesh* m, ibTriMeshGeom** out)
{
	*out = NULL;
	if (!m || !m->vertices || !m->indices || m->vertexCount < 3 || m->triangleCount < 1)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT,
		                "triangle mesh needs >= 3 vertices and >= 1 triangle with non-NULL arrays");
	const int nv = m->vertexCount, nt = m->triangleCount;
	for (int i = 0; i < nv; ++i)
		if (!ibVec3_IsFinite(m->vertices[i]))
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "triangle mesh vertex %d is not finite", i);
	for (int i = 0; i < 3 * nt; ++i)
		if (m->indices[i] < 0 || m->indices[i] >= nv)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT,
			                "triangle mesh index %d (triangle %d) is out of range: the mesh has %d vertices",
			                m->indices[i], i / 3, nv);
	int maxNodes = 2 * nt - 1;
	size_t sHead = align8(sizeof(ibTriMeshGeom)), sV = align8((size_t)nv * sizeof(ibVec3)),
	       sI = align8((size_t)3 * nt * sizeof(int)), sN = align8((size_t)maxNodes * sizeof(ibTriMeshNode)),
	       sO = align8((size_t)nt * sizeof(int)), sB = align8((size_t)nt * sizeof(ibAABB)),
	       sA = align8((size_t)3 * nt * sizeof(int32_t)), sE = align8((size_t)3 * nt), sD = align8((size_t)nt * sizeof(double));
	size_t bytes = sHead + sV + sI + sN + sO + sB + sA + sE + sD;
	char* block = ib_alloc(w, bytes);
	/* scratch: the tree's sort keys, then the edge classification's */
	const size_t sEdges = (size_t)3 * nt * IB_TRIMESH_EDGE_TEMP_BYTES, sTree = (size_t)nt * sizeof(sortKey);
	const size_t sKeys = sEdges > sTree ? sEdges : sTree;
	sortKey* keys = ib_alloc(w, sKeys);
	ibVec3* centroid = ib_alloc(w, (size_t)nt * sizeof(ibVec3));
	if (!block || !keys || !centroid) {
		ib_free(w, block, bytes);
		ib_free(w, keys, sKeys);
		ib_free(w, centroid, (size_t)nt * sizeof(ibVec3));
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory building a triangle mesh");
	}
	memset(block, 0, bytes);
	ibTriMeshGeom* t = (ibTriMeshGeom*)block;
	char* p = block + sHead;
	t->vertices = (ibVec3*)p;
	p += sV;
	t->indices = (int*)p;
	p += sI;
	t->nodes = (ibTriMeshNode*)p;
	p += sN;
	t->order = (int*)p;
	p += sO;
	t->triBox = (ibAABB*)p;
	p += sB;
	t->adjacent = (int32_t*)p;
	p += sA;
	t->edgeKind = (uint8_t*)p;
	p += sE;
	t->bend = (double*)p;
	t->vertexCount = nv;
	t->triangleCount = nt;
	t->bytes = bytes;
	memcpy(t->vertices, m->vertices, (size_t)nv * sizeof(ibVec3));
	memcpy(t->indices, m->indices, (size_t)3 * nt * sizeof(int));
	for (int i = 0; i < nt; ++i) {
		ibVec3 a = t->vertices[t->indices[3 * i]], b = t->vertices[t->indices[3 * i + 1]],
		       c = t->vertices[t->indices[3 * i + 2]];
		t->triBox[i] = ib_aabb_union(ib_aabb_union((ibAABB){a, a}, (ibAABB){b, b}), (ibAABB){c, c});
		centroid[i] = ibScale(1.0 / 3.0, ibAdd(ibAdd(a, b), c));
		t->order[i] = i;
	}
	builder B = {t, keys, centroid, 1};
	buildNode(&B, 0, 0, nt);
	t->nodeCount = B.next;
	ib_trimesh_classify_edges(t, keys);
	ib_free(w, keys, sKeys);
	ib_free(w, centroid, (size_t)nt * sizeof(ibVec3));
	*out = t;
	return IB_OK;
}

void ib_trimesh_free(ibWorld* w, ibTriMeshGeom* t)
{
	if (t) ib_free(w, t, t->bytes);
}

int ib_trimesh_query_aabb(const ibTriMeshGeom* t, ibAABB box, ibTriMeshVisitFn* fn, void* ctx)
{
	int stack[IB_TRIMESH_MAX_DEPTH + 2];
	int top = 0, calls = 0;
	stack[top++] = 0;
	while (top > 0) {
		const ibTriMeshNode* n = &t->nodes[stack[--top]];
		if (!ib_aabb_overlap(n->box, box)) continue;
		if (n->count == 0) {
			stack[top++] = n->first;
			stack[top++] = n->first + 1;
			continue;
		}
		for (int i = n->first; i < n->first + n->count; ++i) {
			int tri = t->order[i];
			if (!ib_aabb_overlap(t->triBox[tri], box)) continue;
			calls++;
			if (!fn(ctx, tri)) return calls;
		}
	}
	return calls;
}

bool ib_ray_triangle(ibVec3 o, ibVec3 d, ibVec3 a, ibVec3 b, ibVec3 c, double maxS, double* s)
{
	ibVec3 e1 = ibSub(b, a), e2 = ibSub(c, a);
	ibVec3 p = ibCross(d, e2);
	double det = ibDot(e1, p);
	if (det == 0.0 || !isfinite(det)) return false;
	double inv = 1.0 / det;
	ibVec3 tv = ibSub(o, a);
	double u = ibDot(tv, p) * inv;
	if (!(u >= 0.0 && u <= 1.0)) return false;
	ibVec3 q = ibCross(tv, e1);
	double v = ibDot(d, q) * inv;
	if (!(v >= 0.0 && u + v <= 1.0)) return false;
	double t = ibDot(e2, q) * inv;
	if (!(t >= 0.0 && t <= maxS)) return false;
	*s = t;
	return true;
}

/* Entry parameter of the ray into box within [0, maxS], or INFINITY if it misses. */
static double slab(ibAABB box, ibVec3 o, ibVec3 inv, double maxS)
{
	double lo = 0.0, hi = maxS;
	double os[3] = {o.x, o.y, o.z}, is[3] = {inv.x, inv.y, inv.z};
	double bl[3] = {box.lo.x, box.lo.y, box.lo.z}, bh[3] = {box.hi.x, box.hi.y, box.hi.z};
	for (int k = 0; k < 3; ++k) {
		if (isinf(is[k])) { /* parallel to this slab */
			if (os[k] < bl[k] || os[k] > bh[k]) return INFINITY;
			continue;
		}
		double t1 = (bl[k] - os[k]) * is[k], t2 = (bh[k] - os[k]) * is[k];
		lo = ib_fmax(lo, ib_fmin(t1, t2));
		hi = ib_fmin(hi, ib_fmax(t1, t2));
		if (lo > hi) return INFINITY;
	}
	return lo;
}

bool ib_trimesh_raycast(const ibTriMeshGeom* t, ibVec3 o, ibVec3 d, double maxS, ibTriMeshHit* hit)
{
	if (!ibVec3_IsFinite(o) || !ibVec3_IsFinite(d) || !(maxS >= 0.0) || ibLengthSq(d) == 0.0) return false;
	ibVec3 inv = ibV3(1.0 / d.x, 1.0 / d.y, 1.0 / d.z);
	double best = maxS;
	int bestTri = -1;
	int stack[IB_TRIMESH_MAX_DEPTH + 2];
	int top = 0;
	stack[top++] = 0;
	while (top > 0) {
		const ibTriMeshNode* n = &t->nodes[stack[--top]];
		if (slab(n->box, o, inv, best) == INFINITY) continue;
		if (n->count == 0) {
			int l = n->first, r = n->first + 1;
			double sl = slab(t->nodes[l].box, o, inv, best), sr = slab(t->nodes[r].box, o, inv, best);
			if (sl <= sr) { /* push the far child first: the near one is popped next */
				if (sr != INFINITY) stack[top++] = r;
				if (sl != INFINITY) stack[top++] = l;
			} else {
				if (sl != INFINITY) stack[top++] = l;
				stack[top++] = r;
			}
			continue;
		}
		for (int i = n->first; i < n->first + n->count; ++i) {
			int tri = t->order[i];
			const int* k = t->indices + 3 * tri;
			double s;
			if (ib_ray_triangle(o, d, t->vertices[k[0]], t->vertices[k[1]], t->vertices[k[2]], best, &s) &&
			    (bestTri < 0 || s < best || (s == best && tri < bestTri))) {
				best = s;
				bestTri = tri;
			}
		}
	}
	if (bestTri < 0) return false;
	const int* k = t->indices + 3 * bestTri;
	ibVec3 a = t->vertices[k[0]], b = t->vertices[k[1]], c = t->vertices[k[2]];
	ibVec3 n = ibCross(ibSub(b, a), ibSub(c, a));
	double len = ibLength(n);
	hit->s = best;
	hit->triangle = bestTri;
	hit->normal = len > 0.0 ? ibScale(1.0 / len, n) : IB_VEC3_ZERO;
	return true;
}
