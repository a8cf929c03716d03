/* GJK distance between convex shapes given by support functions (Gilbert, Johnson, Keerthi 1988;
 * the iteration and stopping rule of van den Bergen 1999). The closest point of the current
 * simplex to the origin is found with a signed-volume sub-algorithm (after Montanari, Petrinic
 * and Barbieri 2017): barycentric coordinates come from signed areas/volumes in the projection
 * that maximises them, and degenerate (flat) simplices fall back to their boundary, so collinear
 * or coplanar support points do not break the iteration.
 * Termination: |v|^2 - v.w <= 1e-12 |v|^2 (v the current closest point of A - B, w the new
 * support point), a repeated support point, no decrease of |v| (rounding) or 128 iterations;
 * overlap when the simplex encloses the origin or |v| <= 1e-13 max|w|. For polytopes the loop
 * ends on the exact closest feature; on curved surfaces (cylinder) the distance is within
 * 1e-12 relative but the direction of v only within ~sqrt(1e-12) in the worst case.
 * Warm start: the cache keeps the support directions of the terminal simplex (A's frame). */
#include <math.h>
#include <string.h>

#include "collision/convex.h"

#define GJK_MAX_ITERATIONS 128
#define GJK_REL_TOL 1e-12     /* stop when |v|^2 - v.w <= GJK_REL_TOL |v|^2 */
#define GJK_OVERLAP_TOL 1e-13 /* |v| <= GJK_OVERLAP_TOL * max|w|: origin in A - B (touching) */

typedef struct Closest {
	double lambda[4]; /* barycentric weights of the simplex points (0 outside mask) */
	int mask;         /* bit i: point i is part of the closest sub-simplex */
	ibVec3 v;         /* closest point of the simplex to the origin */
} Closest;

static inline ibVec3 support_pair(const ibConvex* c, ibVec3 d, bool cores)
{
	return cores ? ib_convex_support_core(c, d) : ib_convex_support(c, d);
}

static void closest_vertex(const ibVec3* w, int i, Closest* out)
{
	memset(out->lambda, 0, sizeof out->lambda);
	out->lambda[i] = 1.0;
	out->mask = 1 << i;
	out->v = w[i];
}

/* Closest point of segment w[i] w[j]. */
static void closest_segment(const ibVec3* w, int i, int j, Closest* out)
{
	ibVec3 t = ibSub(w[j], w[i]);
	double tt = ibDot(t, t);
	if (!(tt > 0.0)) {
		closest_vertex(w, ibLengthSq(w[i]) <= ibLengthSq(w[j]) ? i : j, out);
		return;
	}
	double s = -ibDot(w[i], t) / tt;
	if (!(s > 0.0)) {
		closest_vertex(w, i, out);
		return;
	}
	if (s >= 1.0) {
		closest_vertex(w, j, out);
		return;
	}
	memset(out->lambda, 0, sizeof out->lambda);
	out->lambda[i] = 1.0 - s;
	out->lambda[j] = s;
	out->mask = (1 << i) | (1 << j);
	out->v = ibMulAdd(w[i], s, t);
}

static inline double area2(double ax, double ay, double bx, double by, double cx, double cy)
{
	return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* Keep the better of the candidate c and the current best (smaller |v|). */
static void keep_best(Closest* best, double* bestVV, const Closest* c)
{
	double vv = ibLengthSq(c->v);
	if (vv < *bestVV) {
		*best = *c;
		*bestVV = vv;
	}
}

/* Closest point of triangle w[i] w[j] w[k]. */
static void closest_triangle(const ibVec3* w, int i, int j, int k, Closest* out)
{
	ibVec3 e1 = ibSub(w[j], w[i]), e2 = ibSub(w[k], w[i]);
	ibVec3 n = ibCross(e1, e2);
	double nn = ibDot(n, n);
	bool flat = !(nn > 1e-24 * ibLengthSq(e1) * ibLengthSq(e2));
	double C[3] = {0, 0, 0}, mu = 0.0;
	ibVec3 p = IB_VEC3_ZERO;
	if (!flat) {
		p = ibScale(ibDot(w[i], n) / nn, n); /* projection of the origin onto the plane */
		/* drop the coordinate of the largest normal component; (x, y) cyclic after it, so the
		 * projected signed area has the sign of that normal component */
		double an[3] = {fabs(n.x), fabs(n.y), fabs(n.z)};
		int c = an[0] >= an[1] ? (an[0] >= an[2] ? 0 : 2) : (an[1] >= an[2] ? 1 : 2);
		int x = (c + 1) % 3, y = (c + 2) % 3;
		double ix = ibVec3_Get(w[i], x), iy = ibVec3_Get(w[i], y);
		double jx = ibVec3_Get(w[j], x), jy = ibVec3_Get(w[j], y);
		double kx = ibVec3_Get(w[k], x), ky = ibVec3_Get(w[k], y);
		double px = ibVec3_Get(p, x), py = ibVec3_Get(p, y);
		mu = area2(ix, iy, jx, jy, kx, ky);
		C[0] = area2(px, py, jx, jy, kx, ky);
		C[1] = area2(ix, iy, px, py, kx, ky);
		C[2] = area2(ix, iy, jx, jy, px, py);
		if (mu != 0.0 && C[0] * mu > 0.0 && C[1] * mu > 0.0 && C[2] * mu > 0.0) {
			double sum = C[0] + C[1] + C[2];
			memset(out->lambda, 0, sizeof out->lambda);
			out->lambda[i] = C[0] / sum;
			out->lambda[j] = C[1] / sum;
			out->lambda[k] = C[2] / sum;
			out->mask = (1 << i) | (1 << j) | (1 << k);
			out->v = p;
			return;
		}
	}
	/* projection outside (or flat triangle): the closest point is on an edge the projection is
	 * beyond (C <= 0 relative to mu), all edges if flat */
	int idx[3] = {i, j, k};
	double bestVV = INFINITY;
	Closest c;
	for (int m = 0; m < 3; ++m) {
		if (!flat && C[m] * mu > 0.0) continue;
		closest_segment(w, idx[(m + 1) % 3], idx[(m + 2) % 3], &c);
		keep_best(out, &bestVV, &c);
	}
}

/* Closest point of tetrahedron w[0..3]; mask 15 means the origin is inside. */
static void closest_tetrahedron(const ibVec3* w, Closest* out)
{
	ibVec3 e1 = ibSub(w[1], w[0]), e2 = ibSub(w[2], w[0]), e3 = ibSub(w[3], w[0]);
	double det = ibDot(e1, ibCross(e2, e3));
	double l = ib_fmax(ib_fmax(ibLengthSq(e1), ibLengthSq(e2)), ib_fmax(ibLengthSq(e3), ibLengthSq(ibSub(w[2], w[1]))));
	l = ib_fmax(l, ib_fmax(ibLengthSq(ibSub(w[3], w[1])), ibLengthSq(ibSub(w[3], w[2]))));
	bool flat = !(fabs(det) > 1e-13 * l * sqrt(l));
	/* C[m]: signed volume with vertex m replaced by the origin */
	double C[4] = {0, 0, 0, 0};
	if (!flat) {
		C[0] = ibDot(w[1], ibCross(w[2], w[3]));
		C[1] = -ibDot(w[0], ibCross(w[2], w[3]));
		C[2] = ibDot(w[0], ibCross(w[1], w[3]));
		C[3] = -ibDot(w[0], ibCross(w[1], w[2]));
		if (C[0] * det > 0.0 && C[1] * det > 0.0 && C[2] * det > 0.0 && C[3] * det > 0.0) {
			double sum = C[0] + C[1] + C[2] + C[3];
			for (int m = 0; m < 4; ++m) out->lambda[m] = C[m] / sum;
			out->mask = 15;
			out->v = IB_VEC3_ZERO;
			return;
		}
	}
	static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
	double bestVV = INFINITY;
	Closest c;
	for (int m = 0; m < 4; ++m) {
		if (!flat && C[m] * det > 0.0) continue;
		closest_triangle(w, face[m][0], face[m][1], face[m][2], &c);
		keep_best(out, &bestVV, &c);
	}
}

static void closest_simplex(const ibGjkSimplex* s, Closest* out)
{
	switch (s->count) {
	case 1: closest_vertex(s->w, 0, out); break;
	case 2: closest_segment(s->w, 0, 1, out); break;
	case 3: closest_triangle(s->w, 0, 1, 2, out); break;
	default: closest_tetrahedron(s->w, out); break;
	}
}

/* Keep only the points of the closest sub-simplex (and their weights). */
static void reduce(ibGjkSimplex* s, const Closest* c, double* lambda)
{
	int n = 0;
	for (int i = 0; i < s->count; ++i) {
		if (!(c->mask & (1 << i))) continue;
		s->w[n] = s->w[i];
		s->a[n] = s->a[i];
		s->b[n] = s->b[i];
		s->d[n] = s->d[i];
		lambda[n] = c->lambda[i];
		++n;
	}
	s->count = n;
}

static int cache_tag(const ibConvex* a, const ibConvex* b, bool cores)
{
	return 1 + (int)a->type + 8 * (int)b->type + (cores ? 64 : 0);
}

ibGjkResult ib_gjk_distance(const ibConvex* a, const ibConvex* b, bool cores, ibGjkCache* cache)
{
	ibGjkResult r;
	memset(&r, 0, sizeof r);
	ibGjkSimplex s;
	memset(&s, 0, sizeof s);
	double lambda[4] = {1, 0, 0, 0};
	int tag = cache_tag(a, b, cores);

	if (cache && cache->tag == tag && cache->count > 0 && cache->count <= 4) {
		for (int i = 0; i < cache->count; ++i) {
			s.d[i] = ibMat3_MulV(a->R, cache->dir[i]);
			s.a[i] = support_pair(a, s.d[i], cores);
			s.b[i] = support_pair(b, ibNeg(s.d[i]), cores);
			s.w[i] = ibSub(s.a[i], s.b[i]);
		}
		s.count = cache->count;
	} else {
		ibVec3 d = ibSub(a->position, b->position);
		if (!(ibLengthSq(d) > 0.0)) d = ibV3(1.0, 0.0, 0.0);
		s.d[0] = ibNeg(d);
		s.a[0] = support_pair(a, s.d[0], cores);
		s.b[0] = support_pair(b, d, cores);
		s.w[0] = ibSub(s.a[0], s.b[0]);
		s.count = 1;
	}

	double maxWW = 0.0;
	for (int i = 0; i < s.count; ++i) maxWW = ib_fmax(maxWW, ibLengthSq(s.w[i]));
	Closest c;
	closest_simplex(&s, &c);
	bool overlap = c.mask == 15;
	reduce(&s, &c, lambda);
	ibVec3 v = c.v;
	double vv = ibLengthSq(v);

	int it = 0;
	while (!overlap && it < GJK_MAX_ITERATIONS) {
		if (vv <= GJK_OVERLAP_TOL * GJK_OVERLAP_TOL * maxWW) {
			overlap = true;
			break;
		}
		++it;
		ibVec3 sa = support_pair(a, ibNeg(v), cores);
		ibVec3 sb = support_pair(b, v, cores);
		ibVec3 w = ibSub(sa, sb);
		if (vv - ibDot(v, w) <= GJK_REL_TOL * vv) break; /* converged */
		bool dup = false;
		for (int i = 0; i < s.count; ++i)
			if (s.w[i].x == w.x && s.w[i].y == w.y && s.w[i].z == w.z) dup = true;
		if (dup) break;

		ibGjkSimplex prev = s;
		double prevLambda[4];
		memcpy(prevLambda, lambda, sizeof prevLambda);
		s.a[s.count] = sa;
		s.b[s.count] = sb;
		s.w[s.count] = w;
		s.d[s.count] = ibNeg(v);
		++s.count;
		maxWW = ib_fmax(maxWW, ibLengthSq(w));
		closest_simplex(&s, &c);
		if (c.mask == 15) {
			overlap = true;
			reduce(&s, &c, lambda);
			break;
		}
		double nvv = ibLengthSq(c.v);
		if (!(nvv < vv)) { /* no progress (rounding): keep the previous simplex */
			s = prev;
			memcpy(lambda, prevLambda, sizeof prevLambda);
			break;
		}
		reduce(&s, &c, lambda);
		v = c.v;
		vv = nvv;
	}

	ibVec3 pa = IB_VEC3_ZERO, pb = IB_VEC3_ZERO;
	for (int i = 0; i < s.count; ++i) {
		pa = ibMulAdd(pa, lambda[i], s.a[i]);
		pb = ibMulAdd(pb, lambda[i], s.b[i]);
	}
	r.pointA = pa;
	r.pointB = pb;
	r.overlap = overlap;
	r.distance = overlap ? 0.0 : ibDistance(pa, pb);
	r.iterations = it;
	r.simplex = s;
	if (cache) {
		cache->tag = tag;
		cache->count = s.count;
		for (int i = 0; i < s.count; ++i) cache->dir[i] = ibMat3_MulTV(a->R, s.d[i]);
	}
	return r;
}
