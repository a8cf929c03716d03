/* Helpers shared by the soft-body tests: grid cloth meshes and random numbers. */
#ifndef IBDYN_TESTS_SOFT_TEST_UTIL_H
#define IBDYN_TESTS_SOFT_TEST_UTIL_H

#include <stdlib.h>

#include "ibdyn/ibdyn.h"

/* Grid of (n+1) x (n+1) vertices spanning size x size in the plane through origin spanned by u and
 * v; 2 n^2 counter-clockwise triangles (normal u x v). Vertex (i, j) has index j (n+1) + i. */
typedef struct SoftGrid {
	ibVec3* v;
	int* t;
	int nv, nt, n;
} SoftGrid;

static inline SoftGrid soft_grid(int n, double size, ibVec3 origin, ibVec3 u, ibVec3 v)
{
	SoftGrid g;
	g.n = n;
	g.nv = (n + 1) * (n + 1);
	g.nt = 2 * n * n;
	g.v = malloc(sizeof(ibVec3) * (size_t)g.nv);
	g.t = malloc(sizeof(int) * 3 * (size_t)g.nt);
	for (int j = 0; j <= n; ++j)
		for (int i = 0; i <= n; ++i)
			g.v[j * (n + 1) + i] = ibAdd(origin, ibAdd(ibScale(size * i / n, u), ibScale(size * j / n, v)));
	int k = 0;
	for (int j = 0; j < n; ++j)
		for (int i = 0; i < n; ++i) {
			int a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
			g.t[k++] = a, g.t[k++] = b, g.t[k++] = d;
			g.t[k++] = a, g.t[k++] = d, g.t[k++] = c;
		}
	return g;
}

/* Default soft body definition with the grid's vertices and triangles (a cloth). */
static inline ibSoftBodyDef soft_grid_def(const SoftGrid* g)
{
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	d.vertices = g->v;
	d.vertexCount = g->nv;
	d.triangles = g->t;
	d.triangleCount = g->nt;
	return d;
}

static inline void soft_grid_free(SoftGrid* g)
{
	free(g->v);
	free(g->t);
}

/* xorshift in [-1, 1) */
static inline double soft_rand(unsigned long long* s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static inline ibVec3 soft_rand_vec(unsigned long long* s) { return ibV3(soft_rand(s), soft_rand(s), soft_rand(s)); }

#endif
