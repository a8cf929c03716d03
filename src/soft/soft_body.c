/* Soft bodies from meshes: particles with lumped masses, edge (stretch) rows, bending rows across
 * interior edges (distance of the opposite vertices or dihedral angle), volume rows (per
 * tetrahedron or for a closed surface), pinned vertices. Validation and the public getters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "soft/soft_internal.h"

ibSoftBodyDef ibDefaultSoftBodyDef(void)
{
	ibSoftBodyDef d;
	memset(&d, 0, sizeof d);
	d.density = 0.1;
	d.gravityScale = 1.0;
	d.bending = IB_SOFT_BENDING_NONE;
	d.solver = IB_SOFT_SOLVER_AUTO;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

static bool bad_index(const int* idx, int n, int per, int vc)
{
	for (int i = 0; i < n * per; ++i)
		if (idx[i] < 0 || idx[i] >= vc) return true;
	return false;
}

static bool nonneg(double x) { return isfinite(x) && x >= 0.0; }

static ibResult validate(ibWorld* w, const ibSoftBodyDef* d)
{
	if (!d) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft body definition is NULL");
	if (d->internalValue != IB_DEF_MAGIC)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft body definition not initialised with ibDefaultSoftBodyDef()");
	if (d->vertexCount < 1 || !d->vertices) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft body needs >= 1 vertex");
	for (int i = 0; i < d->vertexCount; ++i)
		if (!ibVec3_IsFinite(d->vertices[i])) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft body vertex %d is not finite", i);
	if (d->triangleCount < 0 || d->tetrahedronCount < 0 || d->edgeCount < 0 || d->pinnedCount < 0)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "negative element count");
	if ((d->triangleCount > 0 && !d->triangles) || (d->tetrahedronCount > 0 && !d->tetrahedra) ||
	    (d->edgeCount > 0 && !d->edges) || (d->pinnedCount > 0 && !d->pinned))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "element count > 0 with a NULL array");
	if ((d->triangles && bad_index(d->triangles, d->triangleCount, 3, d->vertexCount)) ||
	    (d->tetrahedra && bad_index(d->tetrahedra, d->tetrahedronCount, 4, d->vertexCount)) ||
	    (d->edges && bad_index(d->edges, d->edgeCount, 2, d->vertexCount)) ||
	    (d->pinned && bad_index(d->pinned, d->pinnedCount, 1, d->vertexCount)))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft body index out of range [0, %d)", d->vertexCount);
	if (!nonneg(d->stretchCompliance) || !nonneg(d->bendingCompliance) || !nonneg(d->volumeCompliance))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "compliances must be finite and >= 0");
	if (!nonneg(d->linearDamping)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "damping must be finite and >= 0");
	if (!isfinite(d->gravityScale)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "gravity scale must be finite");
	if (d->maxIterations < 0) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "maxIterations must be >= 0");
	if (d->solver != IB_SOFT_SOLVER_GAUSS_SEIDEL && d->solver != IB_SOFT_SOLVER_SPARSE && d->solver != IB_SOFT_SOLVER_AUTO)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown soft-body solver %d", (int)d->solver);
	if (!nonneg(d->positionTolerance)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "tolerance must be finite and >= 0");
	if (!ibVec3_IsFinite(d->linearVelocity)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "velocity must be finite");
	if (d->bending != IB_SOFT_BENDING_NONE && d->bending != IB_SOFT_BENDING_DISTANCE && d->bending != IB_SOFT_BENDING_DIHEDRAL)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown bending model %d", (int)d->bending);
	if (d->vertexMasses) {
		for (int i = 0; i < d->vertexCount; ++i)
			if (!nonneg(d->vertexMasses[i])) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "vertex mass %d must be finite and >= 0", i);
	} else {
		if (d->triangleCount == 0 && d->tetrahedronCount == 0)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "a soft body without triangles or tetrahedra needs vertexMasses");
		if (!(isfinite(d->density) && d->density > 0.0)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "density must be > 0");
	}
	if (d->preserveVolume && d->tetrahedronCount == 0 && d->triangleCount < 4)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "volume preservation needs tetrahedra or a closed triangle mesh");
	return IB_OK;
}

/* undirected edge key with the triangle/opposite vertex it came from */
typedef struct EdgeRec {
	int a, b;   /* a < b */
	int from, to, opp; /* directed edge as in the element, opposite vertex (-1: not a triangle edge) */
} EdgeRec;

static int cmp_edge(const void* x, const void* y)
{
	const EdgeRec* p = x;
	const EdgeRec* q = y;
	if (p->a != q->a) return p->a < q->a ? -1 : 1;
	if (p->b != q->b) return p->b < q->b ? -1 : 1;
	return 0;
}

static EdgeRec edge_rec(int u, int v, int opp)
{
	EdgeRec e = {u < v ? u : v, u < v ? v : u, u, v, opp};
	return e;
}

static double tri_area(ibVec3 a, ibVec3 b, ibVec3 c) { return 0.5 * ibLength(ibCross(ibSub(b, a), ibSub(c, a))); }

static double tet_area(const ibVec3* x, const int* t)
{
	return tri_area(x[t[0]], x[t[1]], x[t[2]]) + tri_area(x[t[0]], x[t[1]], x[t[3]]) +
	       tri_area(x[t[0]], x[t[2]], x[t[3]]) + tri_area(x[t[1]], x[t[2]], x[t[3]]);
}

static ibSoftRow* new_row(ibSoftStore* ss, int kind, double compliance, double tol)
{
	ibSoftRow* r = &ss->rows[ss->rowCount++];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->compliance = compliance;
	r->tol = tol;
	r->scale = 1.0;
	return r;
}

static ibSoftBodyId fail(ibWorld* w, void* a, size_t na, void* b, size_t nb, ibResult r, const char* msg)
{
	ib_free(w, a, na);
	ib_free(w, b, nb);
	if (msg) ib_error(w, r, "%s", msg);
	return IB_NULL_SOFT_BODY;
}

ibSoftBodyId ibCreateSoftBody(ibWorldId worldId, const ibSoftBodyDef* d)
{
	ibWorld* w = ib_world_get(worldId);
	if (!w) return IB_NULL_SOFT_BODY;
	if (validate(w, d) != IB_OK) return IB_NULL_SOFT_BODY;
	ibSoftStore* ss = ib_soft_store(w, true);
	if (!ss) return fail(w, NULL, 0, NULL, 0, IB_ERR_OUT_OF_MEMORY, "out of memory creating soft body");
	const ibVec3* X = d->vertices;
	int n = d->vertexCount;
	/* edges of all elements, sorted: stretch rows (unique) and interior-edge pairs (bending) */
	size_t ne = (size_t)(3 * d->triangleCount + 6 * d->tetrahedronCount + d->edgeCount);
	size_t neBytes = sizeof(EdgeRec) * (ne + 1);
	EdgeRec* E = ib_alloc(w, neBytes);
	size_t massBytes = sizeof(double) * (size_t)n;
	double* mass = ib_alloc(w, massBytes);
	if (!E || !mass) return fail(w, E, neBytes, mass, massBytes, IB_ERR_OUT_OF_MEMORY, "out of memory creating soft body");
	size_t k = 0;
	for (int t = 0; t < d->triangleCount; ++t) {
		const int* v = d->triangles + 3 * t;
		for (int e = 0; e < 3; ++e) E[k++] = edge_rec(v[e], v[(e + 1) % 3], v[(e + 2) % 3]);
	}
	static const int tetE[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
	for (int t = 0; t < d->tetrahedronCount; ++t)
		for (int e = 0; e < 6; ++e) E[k++] = edge_rec(d->tetrahedra[4 * t + tetE[e][0]], d->tetrahedra[4 * t + tetE[e][1]], -1);
	for (int e = 0; e < d->edgeCount; ++e) E[k++] = edge_rec(d->edges[2 * e], d->edges[2 * e + 1], -1);
	for (size_t i = 0; i < k; ++i)
		if (E[i].a == E[i].b) return fail(w, E, neBytes, mass, massBytes, IB_ERR_DEGENERATE, "soft body element with a repeated vertex");
	qsort(E, k, sizeof(EdgeRec), cmp_edge);
	/* masses */
	double totalArea = 0.0, volume0 = 0.0;
	ibVec3 centroid = IB_VEC3_ZERO;
	for (int i = 0; i < n; ++i) centroid = ibAdd(centroid, X[i]);
	centroid = ibScale(1.0 / n, centroid);
	for (int t = 0; t < d->triangleCount; ++t) {
		const int* v = d->triangles + 3 * t;
		totalArea += tri_area(X[v[0]], X[v[1]], X[v[2]]);
		volume0 += ibDot(X[v[0]], ibCross(X[v[1]], X[v[2]])) / 6.0;
	}
	bool closedVolume = d->preserveVolume && d->tetrahedronCount == 0;
	if (closedVolume) {
		for (size_t i = 0; i < k;) { /* every edge in exactly two triangles, once in each direction */
			size_t j = i;
			while (j < k && E[j].a == E[i].a && E[j].b == E[i].b) ++j;
			if (j - i != 2 || E[i].from == E[i + 1].from)
				return fail(w, E, neBytes, mass, massBytes, IB_ERR_DEGENERATE,
				            "volume preservation needs a closed, consistently oriented triangle mesh");
			i = j;
		}
		if (!(volume0 > 0.0))
			return fail(w, E, neBytes, mass, massBytes, IB_ERR_DEGENERATE,
			            "closed soft mesh has no positive volume (triangles must be counter-clockwise seen from outside)");
	}
	for (int i = 0; i < n; ++i) mass[i] = d->vertexMasses ? d->vertexMasses[i] : 0.0;
	if (!d->vertexMasses) {
		if (d->tetrahedronCount > 0) {
			for (int t = 0; t < d->tetrahedronCount; ++t) {
				const int* v = d->tetrahedra + 4 * t;
				double V = fabs(ibDot(ibSub(X[v[1]], X[v[0]]), ibCross(ibSub(X[v[2]], X[v[0]]), ibSub(X[v[3]], X[v[0]])))) / 6.0;
				for (int q = 0; q < 4; ++q) mass[v[q]] += d->density * V / 4.0;
			}
		} else {
			for (int t = 0; t < d->triangleCount; ++t) {
				const int* v = d->triangles + 3 * t;
				double share;
				if (closedVolume) /* volume of the tetrahedron (triangle, centroid) */
					share = fabs(ibDot(ibSub(X[v[0]], centroid), ibCross(ibSub(X[v[1]], centroid), ibSub(X[v[2]], centroid)))) / 6.0;
				else
					share = tri_area(X[v[0]], X[v[1]], X[v[2]]);
				for (int q = 0; q < 3; ++q) mass[v[q]] += d->density * share / 3.0;
			}
		}
	}
	for (int i = 0; i < n; ++i) {
		bool pinned = false;
		for (int p = 0; p < d->pinnedCount; ++p) pinned |= d->pinned[p] == i;
		if (!pinned && !(mass[i] > 0.0))
			return fail(w, E, neBytes, mass, massBytes, IB_ERR_DEGENERATE, "a free soft-body vertex has no mass (isolated vertex or degenerate element)");
	}
	/* count rows */
	int32_t nrows = 0;
	for (size_t i = 0; i < k; ++i)
		if (i == 0 || cmp_edge(&E[i], &E[i - 1]) != 0) ++nrows;
	if (d->bending != IB_SOFT_BENDING_NONE) nrows += (int32_t)k; /* upper bound */
	if (d->preserveVolume) nrows += d->tetrahedronCount > 0 ? d->tetrahedronCount : 1;
	int32_t si = ss->softFree;
	if (si == IB_NULL_INDEX) {
		if (!ib_grow(w, (void**)&ss->softs, &ss->softCapacity, ss->softHigh + 1, sizeof(ibSoftBody)))
			return fail(w, E, neBytes, mass, massBytes, IB_ERR_OUT_OF_MEMORY, "out of memory creating soft body");
		si = ss->softHigh;
	}
	size_t trisBytes = sizeof(int) * 3 * (size_t)d->triangleCount;
	int* tris = d->triangleCount ? ib_alloc(w, trisBytes) : NULL;
	double* volJ = closedVolume ? ib_alloc(w, sizeof(double) * 3 * (size_t)n) : NULL;
	char* name = ib_strdup(w, d->name);
	ibVec3* rest = ib_alloc(w, sizeof(ibVec3) * (size_t)n);
	double* mass0 = ib_alloc(w, sizeof(double) * (size_t)n);
	int* tets = d->tetrahedronCount ? ib_alloc(w, sizeof(int) * 4 * (size_t)d->tetrahedronCount) : NULL;
	int* edges = d->edgeCount ? ib_alloc(w, sizeof(int) * 2 * (size_t)d->edgeCount) : NULL;
	if (!rest || !mass0 || (d->tetrahedronCount && !tets) || (d->edgeCount && !edges)) {
		ib_free(w, rest, sizeof(ibVec3) * (size_t)n);
		ib_free(w, mass0, sizeof(double) * (size_t)n);
		ib_free(w, tets, sizeof(int) * 4 * (size_t)d->tetrahedronCount);
		ib_free(w, edges, sizeof(int) * 2 * (size_t)d->edgeCount);
		ib_free(w, tris, trisBytes);
		ib_free(w, volJ, sizeof(double) * 3 * (size_t)n);
		ib_strfree(w, name);
		return fail(w, E, neBytes, mass, massBytes, IB_ERR_OUT_OF_MEMORY, "out of memory creating soft body");
	}
	if (!ib_grow(w, (void**)&ss->particles, &ss->particleCapacity, ss->particleCount + n, sizeof(ibParticle)) ||
	    !ib_grow(w, (void**)&ss->rows, &ss->rowCapacity, ss->rowCount + nrows + 1, sizeof(ibSoftRow)) ||
	    !ib_soft_ensure_scratch(w, ss, n > 4 ? n : 4, 3 * n > 12 ? 3 * n : 12) || (d->triangleCount && !tris) ||
	    (closedVolume && !volJ) || (d->name && *d->name && !name)) {
		ib_free(w, tris, trisBytes);
		ib_free(w, volJ, sizeof(double) * 3 * (size_t)n);
		ib_free(w, rest, sizeof(ibVec3) * (size_t)n);
		ib_free(w, mass0, sizeof(double) * (size_t)n);
		ib_free(w, tets, sizeof(int) * 4 * (size_t)d->tetrahedronCount);
		ib_free(w, edges, sizeof(int) * 2 * (size_t)d->edgeCount);
		ib_strfree(w, name);
		return fail(w, E, neBytes, mass, massBytes, IB_ERR_OUT_OF_MEMORY, "out of memory creating soft body");
	}
	if (si == ss->softHigh) {
		ss->softHigh++;
		ss->softs[si].generation = 0;
	} else {
		ss->softFree = ss->softs[si].nextFree;
	}
	ibSoftBody* sb = &ss->softs[si];
	uint16_t gen = (uint16_t)(sb->generation + 1u);
	memset(sb, 0, sizeof *sb);
	sb->inUse = true;
	sb->generation = gen ? gen : 1;
	sb->nextFree = IB_NULL_INDEX;
	sb->first = ss->particleCount;
	sb->count = n;
	sb->firstRow = ss->rowCount;
	sb->tris = tris;
	sb->triCount = d->triangleCount;
	if (tris) memcpy(tris, d->triangles, trisBytes);
	sb->volJ = volJ;
	sb->tol = d->positionTolerance;
	sb->maxIter = d->maxIterations;
	sb->solver = d->solver;
	sb->rest = rest;
	memcpy(rest, X, sizeof(ibVec3) * (size_t)n);
	sb->mass0 = mass0;
	memcpy(mass0, mass, sizeof(double) * (size_t)n);
	sb->tets = tets;
	sb->tetCount = d->tetrahedronCount;
	if (tets) memcpy(tets, d->tetrahedra, sizeof(int) * 4 * (size_t)d->tetrahedronCount);
	sb->edges = edges;
	sb->edgeCount = d->edgeCount;
	if (edges) memcpy(edges, d->edges, sizeof(int) * 2 * (size_t)d->edgeCount);
	sb->density = d->density;
	sb->stretchCompliance = d->stretchCompliance;
	sb->bending = d->bending;
	sb->bendingCompliance = d->bendingCompliance;
	sb->preserveVolume = d->preserveVolume;
	sb->volumeCompliance = d->volumeCompliance;
	sb->name = name;
	sb->userData = d->userData;
	for (int i = 0; i < n; ++i) {
		ibParticle* p = &ss->particles[ss->particleCount + i];
		memset(p, 0, sizeof *p);
		p->x = X[i];
		p->v = d->linearVelocity;
		p->mass = mass[i];
		p->invMass = mass[i] > 0.0 ? 1.0 / mass[i] : 0.0;
		p->damping = d->linearDamping;
		p->gravityScale = d->gravityScale;
		p->soft = si;
	}
	for (int q = 0; q < d->pinnedCount; ++q) {
		ibParticle* p = &ss->particles[ss->particleCount + d->pinned[q]];
		p->invMass = 0.0;
		p->v = IB_VEC3_ZERO;
	}
	int32_t base = ss->particleCount;
	ss->particleCount += n;
	double tol = d->positionTolerance;
	/* stretch rows: one per unique edge */
	for (size_t i = 0; i < k; ++i) {
		if (i > 0 && cmp_edge(&E[i], &E[i - 1]) == 0) continue;
		ibSoftRow* r = new_row(ss, IB_ROW_DISTANCE, d->stretchCompliance, tol);
		r->count = 2;
		r->p[0] = base + E[i].a;
		r->p[1] = base + E[i].b;
		r->rest = ibDistance(X[E[i].a], X[E[i].b]);
	}
	/* bending rows: pairs of triangle edges on the same undirected edge */
	if (d->bending != IB_SOFT_BENDING_NONE)
		for (size_t i = 0; i + 1 < k; ++i) {
			const EdgeRec* e0 = &E[i];
			const EdgeRec* e1 = &E[i + 1];
			if (cmp_edge(e0, e1) != 0 || e0->opp < 0 || e1->opp < 0) continue;
			if (i + 2 < k && cmp_edge(e1, &E[i + 2]) == 0) continue; /* non-manifold edge: no bending */
			if (e0->opp == e1->opp) continue;
			if (d->bending == IB_SOFT_BENDING_DISTANCE) {
				ibSoftRow* r = new_row(ss, IB_ROW_DISTANCE, d->bendingCompliance, tol);
				r->count = 2;
				r->p[0] = base + e0->opp;
				r->p[1] = base + e1->opp;
				r->rest = ibDistance(X[e0->opp], X[e1->opp]);
			} else {
				ibSoftRow* r = new_row(ss, IB_ROW_DIHEDRAL, d->bendingCompliance, tol);
				int loc[4] = {e0->opp, e1->opp, e0->from, e0->to};
				ibVec3 x[4];
				for (int q = 0; q < 4; ++q) {
					r->p[q] = base + loc[q];
					x[q] = X[loc[q]];
				}
				r->count = 4;
				r->rest = ib_soft_dihedral(x, NULL);
				r->scale = ibDistance(x[2], x[3]);
			}
			++i;
		}
	/* volume rows, measured as (V - V0) / A0 */
	if (d->preserveVolume) {
		if (d->tetrahedronCount > 0) {
			for (int t = 0; t < d->tetrahedronCount; ++t) {
				const int* v = d->tetrahedra + 4 * t;
				ibSoftRow* r = new_row(ss, IB_ROW_TET_VOLUME, d->volumeCompliance, tol);
				r->count = 4;
				for (int q = 0; q < 4; ++q) r->p[q] = base + v[q];
				r->rest = ibDot(ibSub(X[v[1]], X[v[0]]), ibCross(ibSub(X[v[2]], X[v[0]]), ibSub(X[v[3]], X[v[0]]))) / 6.0;
				double A = tet_area(X, v);
				r->scale = A > 0.0 ? 1.0 / A : 0.0;
			}
		} else {
			ibSoftRow* r = new_row(ss, IB_ROW_SURFACE_VOLUME, d->volumeCompliance, tol);
			r->count = n;
			r->p[0] = si;
			r->rest = volume0;
			r->scale = 1.0 / totalArea;
		}
	}
	sb->rowCount = ss->rowCount - sb->firstRow;
	ib_free(w, E, neBytes);
	ib_free(w, mass, massBytes);
	ss->layout++;
	w->poseEpoch++;
	return (ibSoftBodyId){si + 1, w->slot, sb->generation};
}

ibResult ibDestroySoftBody(ibSoftBodyId id)
{
	ibWorld* w;
	ibSoftBody* s = ib_soft_get(id, &w);
	if (!s) return IB_ERR_STALE_HANDLE;
	ib_soft_body_remove(w, w->soft, id.index1 - 1);
	return IB_OK;
}

void ibSoftBodyDef_SetMesh(ibSoftBodyDef* def, const ibMesh* mesh)
{
	if (!def || !mesh) return;
	def->vertices = mesh->vertices;
	def->vertexCount = mesh->vertexCount;
	def->triangles = mesh->indices;
	def->triangleCount = mesh->triangleCount;
}

ibResult ibSoftBody_GetDef(ibSoftBodyId id, ibSoftBodyDef* out)
{
	ibWorld* w;
	ibSoftBody* s = ib_soft_get(id, &w);
	if (!s) return IB_ERR_STALE_HANDLE;
	if (!out) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "out is NULL");
	const ibParticle* p = &w->soft->particles[s->first];
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	d.vertices = s->rest;
	d.vertexCount = s->count;
	d.triangles = s->tris;
	d.triangleCount = s->triCount;
	d.tetrahedra = s->tets;
	d.tetrahedronCount = s->tetCount;
	d.edges = s->edges;
	d.edgeCount = s->edgeCount;
	d.vertexMasses = s->mass0;
	d.density = s->density;
	d.stretchCompliance = s->stretchCompliance;
	d.bending = (ibSoftBending)s->bending;
	d.bendingCompliance = s->bendingCompliance;
	d.preserveVolume = s->preserveVolume;
	d.volumeCompliance = s->volumeCompliance;
	d.linearDamping = p->damping;
	d.gravityScale = p->gravityScale;
	d.positionTolerance = s->tol;
	d.maxIterations = s->maxIter;
	d.solver = (ibSoftSolver)s->solver;
	d.name = s->name;
	d.userData = s->userData;
	*out = d;
	return IB_OK;
}

int ibWorld_GetSoftBodies(ibWorldId world, ibSoftBodyId* out, int capacity)
{
	ibWorld* w = ib_world_get(world);
	if (!w || !w->soft) return 0;
	int n = 0;
	for (int32_t i = 0; i < w->soft->softHigh; ++i) {
		const ibSoftBody* s = &w->soft->softs[i];
		if (!s->inUse) continue;
		if (out && n < capacity) out[n] = (ibSoftBodyId){i + 1, w->slot, s->generation};
		++n;
	}
	return n;
}
