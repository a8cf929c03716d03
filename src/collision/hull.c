/* Convex hull of a point set with qhull (reentrant libqhull_r, Debian libqhull-dev), kept as a
 * polyhedron: vertices (in input order), faces as convex polygons with counter-clockwise outward
 * loops, edges with their two faces, and the vertex -> edge lists.
 *
 * qhull runs with its defaults for 3-d ("qhull": pre-merging C-0, so coplanar facets become one
 * polygon). Its messages go to a fixed memory buffer (fmemopen), never to stdout/stderr; a qhull
 * error returns through qh_new_qhull's own setjmp as a non-zero exit code. qhull allocates its
 * temporary structures with malloc (fixed in the Debian build); everything the hull keeps is one
 * block from the world allocator. Faces are put in a canonical order (by their loops, each started
 * at its smallest vertex index), so the same vertex list always gives the same hull data. */
#define _POSIX_C_SOURCE 200809L

#include "collision/hull.h"
#include "math/fminmax.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/libqhull_r.h>

typedef struct faceTmp {
	int a0, a1; /* first two loop vertices after rotating the loop to its smallest vertex */
	int first;  /* loop start in the scratch loop array */
	int count;
	ibVec3 normal; /* qhull's, then Newell's of the ordered loop */
} faceTmp;

typedef struct halfEdge {
	int lo, hi;  /* sorted end points */
	int face, k; /* face (canonical index) and loop position of the edge's start vertex */
	int forward; /* 1 if the loop runs lo -> hi */
} halfEdge;

static int cmpFace(const void* pa, const void* pb)
{
	const faceTmp *a = pa, *b = pb;
	if (a->a0 != b->a0) return a->a0 < b->a0 ? -1 : 1;
	return (a->a1 > b->a1) - (a->a1 < b->a1);
}

static int cmpHalfEdge(const void* pa, const void* pb)
{
	const halfEdge *a = pa, *b = pb;
	if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
	return (a->face > b->face) - (a->face < b->face);
}

static size_t align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* First line of qhull's message (without the trailing newline), at most n - 1 characters. */
static void firstLine(const char* text, char* out, size_t n)
{
	size_t k = 0;
	while (text[k] == '\n' || text[k] == ' ') ++k;
	const char* s = text + k;
	size_t len = strcspn(s, "\n");
	if (len >= n) len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

/* Sort loop[0..count) counter-clockwise about n (seen from outside), by angle about the centroid. */
static void sortLoop(int* loop, int count, const ibVec3* v, ibVec3 n)
{
	ibVec3 c = IB_VEC3_ZERO;
	for (int i = 0; i < count; ++i) c = ibAdd(c, v[loop[i]]);
	c = ibScale(1.0 / count, c);
	ibVec3 u = ibSub(v[loop[0]], c);
	u = ibSub(u, ibScale(ibDot(u, n), n));
	ibVec3 w = ibCross(n, u);
	double angle[64];
	double* ang = count <= 64 ? angle : NULL;
	/* insertion sort on angles computed on the fly for large faces */
	for (int i = 0; i < count && ang; ++i) {
		ibVec3 d = ibSub(v[loop[i]], c);
		ang[i] = atan2(ibDot(d, w), ibDot(d, u));
	}
	for (int i = 1; i < count; ++i) {
		int key = loop[i];
		ibVec3 d = ibSub(v[key], c);
		double a = ang ? ang[i] : atan2(ibDot(d, w), ibDot(d, u));
		int j = i - 1;
		for (; j >= 0; --j) {
			double aj;
			if (ang) {
				aj = ang[j];
			} else {
				ibVec3 dj = ibSub(v[loop[j]], c);
				aj = atan2(ibDot(dj, w), ibDot(dj, u));
			}
			if (aj <= a) break;
			loop[j + 1] = loop[j];
			if (ang) ang[j + 1] = ang[j];
		}
		loop[j + 1] = key;
		if (ang) ang[j + 1] = a;
	}
}

/* Scratch of one build (freed in every case). */
typedef struct buildTmp {
	double* coords;
	int* remap; /* input point -> hull vertex (-1: not a vertex) */
	int* loops; /* face loops in qhull's facet order */
	faceTmp* faces;
	halfEdge* half;
	qhT* qh;
	int n, loopLen, faceCount;
} buildTmp;

static void freeTmp(ibWorld* w, buildTmp* t)
{
	ib_free(w, t->coords, (size_t)t->n * 3 * sizeof(double));
	ib_free(w, t->remap, (size_t)t->n * sizeof(int));
	ib_free(w, t->loops, (size_t)t->loopLen * sizeof(int));
	ib_free(w, t->faces, (size_t)t->faceCount * sizeof(faceTmp));
	ib_free(w, t->half, (size_t)t->loopLen * sizeof(halfEdge));
	if (t->qh) {
		int curlong, totlong;
		qh_freeqhull(t->qh, !qh_ALL);
		qh_memfreeshort(t->qh, &curlong, &totlong);
		ib_free(w, t->qh, sizeof(qhT));
	}
}

/* Runs qhull and copies its facets into t (remap, loops, faces with qhull's normals); returns the
 * number of hull vertices, or -1 after recording an error. */
static int runQhull(ibWorld* w, buildTmp* t, ibResult* err)
{
	char msg[4096];
	memset(msg, 0, sizeof msg);
	FILE* ferr = fmemopen(msg, sizeof msg - 1, "w");
	if (!ferr) {
		*err = ib_error(w, IB_ERR_OUT_OF_MEMORY, "hull: cannot open qhull's message buffer");
		return -1;
	}
	t->qh = ib_alloc(w, sizeof(qhT));
	if (!t->qh) {
		fclose(ferr);
		*err = ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory computing a hull");
		return -1;
	}
	qh_zero(t->qh, ferr);
	char cmd[] = "qhull";
	int code = qh_new_qhull(t->qh, 3, t->n, t->coords, False, cmd, NULL, ferr);
	int vertexCount = -1;
	if (code != 0) {
		fflush(ferr);
		char line[200];
		firstLine(msg, line, sizeof line);
		*err = ib_error(w, IB_ERR_DEGENERATE,
		                "hull points are coplanar, collinear or coincident (no solid hull; qhull exit %d: %s)", code,
		                line);
	} else {
		qhT* qh = t->qh;
		facetT* facet;
		vertexT *vertex, **vertexp;
		int faces = 0, loopLen = 0;
		FORALLfacets
		{
			faces++;
			loopLen += qh_setsize(qh, facet->vertices);
		}
		for (int i = 0; i < t->n; ++i) t->remap[i] = -1;
		FORALLfacets { FOREACHvertex_(facet->vertices) t->remap[qh_pointid(qh, vertex->point)] = 0; }
		vertexCount = 0;
		for (int i = 0; i < t->n; ++i)
			if (t->remap[i] == 0) t->remap[i] = vertexCount++;
		t->loops = ib_alloc(w, (size_t)loopLen * sizeof(int));
		t->faces = ib_alloc(w, (size_t)faces * sizeof(faceTmp));
		t->half = ib_alloc(w, (size_t)loopLen * sizeof(halfEdge));
		if (!t->loops || !t->faces || !t->half) {
			ib_free(w, t->loops, (size_t)loopLen * sizeof(int));
			ib_free(w, t->faces, (size_t)faces * sizeof(faceTmp));
			ib_free(w, t->half, (size_t)loopLen * sizeof(halfEdge));
			t->loops = NULL, t->faces = NULL, t->half = NULL;
			*err = ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory computing a hull");
			vertexCount = -1;
		} else {
			t->loopLen = loopLen;
			t->faceCount = faces;
			int f = 0, at = 0;
			FORALLfacets
			{
				faceTmp* ft = &t->faces[f++];
				ft->first = at;
				ft->count = 0;
				ft->normal = ibV3(facet->normal[0], facet->normal[1], facet->normal[2]);
				FOREACHvertex_(facet->vertices) t->loops[at + ft->count++] = qh_pointid(qh, vertex->point);
				at += ft->count;
			}
		}
	}
	fclose(ferr);
	return vertexCount;
}

ibResult ib_hull_build(ibWorld* w, const ibVec3* points, int count, ibHullGeom** out)
{
	*out = NULL;
	if (!points || count < 4)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "hull needs at least 4 points (got %d)", points ? count : 0);
	for (int i = 0; i < count; ++i)
		if (!ibVec3_IsFinite(points[i]))
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "hull point %d is not finite (%g %g %g)", i, points[i].x,
			                points[i].y, points[i].z);
	buildTmp t = {0};
	t.n = count;
	t.coords = ib_alloc(w, (size_t)count * 3 * sizeof(double));
	t.remap = ib_alloc(w, (size_t)count * sizeof(int));
	if (!t.coords || !t.remap) {
		freeTmp(w, &t);
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory computing a hull");
	}
	for (int i = 0; i < count; ++i) {
		t.coords[3 * i] = points[i].x;
		t.coords[3 * i + 1] = points[i].y;
		t.coords[3 * i + 2] = points[i].z;
	}
	ibResult r = IB_OK;
	int nv = runQhull(w, &t, &r);
	if (nv < 0) {
		freeTmp(w, &t);
		return r;
	}
	const int nf = t.faceCount, L = t.loopLen, ne = L / 2;
	ibResult fail = IB_OK;
	/* loops in hull-vertex indices, ordered, with exact normals and offsets */
	for (int f = 0; f < nf && fail == IB_OK; ++f) {
		faceTmp* ft = &t.faces[f];
		int* loop = t.loops + ft->first;
		if (ft->count < 3) {
			fail = ib_error(w, IB_ERR_DEGENERATE, "hull: qhull returned a face with %d vertices", ft->count);
			break;
		}
		sortLoop(loop, ft->count, points, ft->normal);
		/* start the loop at its smallest input index (= smallest hull index: remap is increasing), so
		 * that the normal below, and everything after, depends only on the vertex list */
		int m = 0;
		for (int k = 1; k < ft->count; ++k)
			if (loop[k] < loop[m]) m = k;
		int* tmp = (int*)t.half; /* scratch: the half-edges are filled only later (L >= count ints) */
		for (int k = 0; k < ft->count; ++k) tmp[k] = loop[(m + k) % ft->count];
		memcpy(loop, tmp, (size_t)ft->count * sizeof(int));
		ibVec3 n = IB_VEC3_ZERO; /* twice the vector area of the ordered polygon, relative to its first vertex */
		for (int k = 1; k + 1 < ft->count; ++k)
			n = ibAdd(n, ibCross(ibSub(points[loop[k]], points[loop[0]]), ibSub(points[loop[k + 1]], points[loop[0]])));
		double len = ibLength(n);
		if (!(len > 0.0) || ibDot(n, ft->normal) <= 0.0) {
			fail = ib_error(w, IB_ERR_DEGENERATE, "hull: degenerate face (points too close together)");
			break;
		}
		ft->normal = ibScale(1.0 / len, n);
		for (int k = 0; k < ft->count; ++k) loop[k] = t.remap[loop[k]];
		ft->a0 = loop[0];
		ft->a1 = loop[1];
	}
	if (fail == IB_OK && (nf < 4 || nv < 4 || L % 2 != 0))
		fail = ib_error(w, IB_ERR_DEGENERATE, "hull: qhull returned an open or flat polyhedron");
	if (fail != IB_OK) {
		freeTmp(w, &t);
		return fail;
	}
	qsort(t.faces, (size_t)nf, sizeof(faceTmp), cmpFace);

	int triCount = L - 2 * nf;
	size_t sHead = align8(sizeof(ibHullGeom)), sV = align8((size_t)nv * sizeof(ibVec3)),
	       sF = align8((size_t)nf * sizeof(ibHullFace)), sE = align8((size_t)ne * sizeof(ibHullEdge)),
	       sL = align8((size_t)L * sizeof(int)), sS = align8((size_t)(nv + 1) * sizeof(int)),
	       sVE = align8((size_t)2 * ne * sizeof(int)), sT = align8((size_t)3 * triCount * sizeof(int));
	size_t bytes = sHead + sV + sF + sE + 2 * sL + sS + sVE + sT;
	char* block = ib_alloc(w, bytes);
	if (!block) {
		freeTmp(w, &t);
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory storing a hull");
	}
	memset(block, 0, bytes);
	ibHullGeom* h = (ibHullGeom*)block;
	char* p = block + sHead;
	ibVec3* V = (ibVec3*)p;
	p += sV;
	ibHullFace* F = (ibHullFace*)p;
	p += sF;
	ibHullEdge* E = (ibHullEdge*)p;
	p += sE;
	int* FV = (int*)p;
	p += sL;
	int* FE = (int*)p;
	p += sL;
	int* VS = (int*)p;
	p += sS;
	int* VE = (int*)p;
	p += sVE;
	int* T = (int*)p;
	h->bytes = bytes;
	for (int i = 0; i < count; ++i)
		if (t.remap[i] >= 0) V[t.remap[i]] = points[i];

	int at = 0, tri = 0;
	for (int f = 0; f < nf; ++f) {
		const faceTmp* ft = &t.faces[f];
		F[f] = (ibHullFace){ft->normal, -INFINITY, at, ft->count};
		memcpy(FV + at, t.loops + ft->first, (size_t)ft->count * sizeof(int));
		for (int k = 0; k < ft->count; ++k) F[f].offset = ib_fmax(F[f].offset, ibDot(ft->normal, V[FV[at + k]]));
		for (int k = 1; k + 1 < ft->count; ++k) {
			T[3 * tri] = FV[at];
			T[3 * tri + 1] = FV[at + k];
			T[3 * tri + 2] = FV[at + k + 1];
			tri++;
		}
		for (int k = 0; k < ft->count; ++k) {
			int a = FV[at + k], b = FV[at + (k + 1) % ft->count];
			t.half[at + k] = (halfEdge){a < b ? a : b, a < b ? b : a, f, k, a < b};
		}
		at += ft->count;
	}
	qsort(t.half, (size_t)L, sizeof(halfEdge), cmpHalfEdge);
	for (int e = 0; e < ne && fail == IB_OK; ++e) {
		const halfEdge *x = &t.half[2 * e], *y = &t.half[2 * e + 1];
		bool paired = x->lo == y->lo && x->hi == y->hi && x->forward != y->forward &&
		              (e == 0 || t.half[2 * e - 1].lo != x->lo || t.half[2 * e - 1].hi != x->hi) &&
		              (2 * e + 2 >= L || t.half[2 * e + 2].lo != x->lo || t.half[2 * e + 2].hi != x->hi);
		if (!paired) {
			fail = ib_error(w, IB_ERR_DEGENERATE, "hull: inconsistent topology from qhull (edge %d-%d)", x->lo, x->hi);
			break;
		}
		const halfEdge* fw = x->forward ? x : y; /* runs lo -> hi */
		const halfEdge* bw = x->forward ? y : x;
		E[e] = (ibHullEdge){{fw->lo, fw->hi}, {fw->face, bw->face}};
		FE[F[fw->face].first + fw->k] = e;
		FE[F[bw->face].first + bw->k] = e;
	}
	if (fail == IB_OK && nv - ne + nf != 2)
		fail = ib_error(w, IB_ERR_DEGENERATE, "hull: Euler characteristic %d != 2", nv - ne + nf);
	if (fail != IB_OK) {
		ib_free(w, block, bytes);
		freeTmp(w, &t);
		return fail;
	}
	for (int e = 0; e < ne; ++e) {
		VS[E[e].vertex[0] + 1]++;
		VS[E[e].vertex[1] + 1]++;
	}
	for (int v = 0; v < nv; ++v) VS[v + 1] += VS[v];
	for (int k = 0; k < 2 * ne; ++k) VE[k] = -1; /* edges at each vertex, in edge order */
	for (int e = 0; e < ne; ++e)
		for (int s = 0; s < 2; ++s) {
			int k = VS[E[e].vertex[s]];
			while (VE[k] != -1) ++k;
			VE[k] = e;
		}
	h->view = (ibHullData){V, nv, F, nf, FV, FE, E, ne, VS, VE, T, triCount};
	freeTmp(w, &t);
	*out = h;
	return IB_OK;
}

void ib_hull_free(ibWorld* w, ibHullGeom* h)
{
	if (h) ib_free(w, h, h->bytes);
}

ibResult ib_hull_mass(const ibHullGeom* h, double density, ibMassData* out)
{
	ibMesh m = {h->view.vertices, h->view.vertexCount, h->view.triangles, h->view.triangleCount};
	return ibComputeMeshMass(&m, density, out);
}
