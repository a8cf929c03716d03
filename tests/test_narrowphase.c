/* Tests of the convex narrowphase (Chapter 4): support functions and AABBs, GJK distance and
 * closest points, EPA and the exact special cases for penetration, and the dispatcher
 * ib_convex_query, on 10^4 random poses per pair type (2000 under ASan) against references
 * written independently here:
 *  - sphere pairs: the exact signed point-to-shape distance of the centre minus the radius;
 *  - pairs whose cores are polytopes (sphere -> point, capsule -> segment, box, hull): the exact
 *    distance of the cores by enumerating vertex-triangle, triangle-vertex, vertex-edge and
 *    edge-edge feature pairs (point-triangle and segment-segment closest points solved directly
 *    here), and, when the cores overlap, the exact minimum translational distance (MTD) over all
 *    face normals and edge-edge cross products on vertex projections; radii added in both cases.
 *    Tolerance 1e-9 (distance, closest points where unique, depth; EPA depths 1e-7);
 *  - pairs with a cylinder and no closed form (curved: no finite enumeration): separated, the
 *    cylinder surface is sampled (64 x 9 lateral grid and 5 rings x 64 per cap: covering radius
 *    <= 0.25 m for the sizes used, so ref_coarse - d <= 0.25 m is a rigorous bound) with the
 *    exact point distance to the other shape, then refined by a pattern search down to 1e-10 m
 *    steps (tolerance 1e-9; d <= ref + 1e-9 holds rigorously since ref is attained by a surface
 *    point); penetrating, the overlap along the returned normal (an upper bound of the MTD) must
 *    match the depth (EPA gives a lower bound) and no sampled direction (600 Fibonacci
 *    directions, refined) may have less overlap. On curved surfaces normals are less accurate,
 *    so the support-plane consistency of the points is checked to TOL_CURVED = 1e-4;
 *  - libccd (Debian libccd-dev, double-precision build) as a second implementation of GJK
 *    intersection and EPA penetration, when available, on the same number of poses per pair type (500
 *    under ASan): intersection flags must agree (|d| > 1e-6)
 *    and our depth must lie in libccd's bracket [its EPA depth, overlap along its direction];
 *    where that bracket is tight (< 1e-9) the depths agree to 1e-9 (polytopes) / 1e-7.
 * Hulls are vertex sets in convex position by construction (regular octahedron, icosahedron, box
 * corners, random points on the unit sphere), rotated and anisotropically scaled.
 * All random input comes from a fixed-seed xorshift64* generator. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/convex.h"
#include "test_util.h"

#ifdef IBDYN_HAVE_CCD
#include <ccd/ccd.h>
#endif

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif
#define N_POSES (IBDYN_SLOW_TESTS ? 10000 : 2000)

#define TOL 1e-9        /* exact references */
#define TOL_EPA 1e-7    /* EPA depths against exact values */
#define TOL_SAMPLE 1e-9 /* refined surface sampling of cylinders (measured <= 2e-13) */
/* GJK/EPA on a curved surface (cylinder pairs without closed form): the normal is determined only
 * to ~sqrt(relative gap) (GJK) or by the polytope's facet size (EPA), so the support-plane
 * consistency of the points along the normal is checked to TOL_CURVED; EPA depths on curved
 * surfaces are lower bounds that converge slowly when the minimum is degenerate (a sphere centre
 * on a cylinder's axis: every radial direction is optimal), compared to TOL_CURVED_EPA. */
#define TOL_CURVED 1e-4
#define TOL_CURVED_EPA 1e-3

/* Fails with the values printed if !(a <= b). */
#define assert_le(a, b)                                                                          \
	do {                                                                                         \
		double a_ = (a), b_ = (b);                                                               \
		if (!(a_ <= b_)) {                                                                       \
			print_error("%s = %.17g > %s = %.17g (pose %d)\n", #a, a_, #b, b_, g_pose);          \
			fail();                                                                              \
		}                                                                                        \
	} while (0)

static int g_pose = -1;


/* ---- test-side shape model ------------------------------------------------------------------ */
#define MAXV 24
#define MAXT 64
#define MAXE 128

typedef struct TShape {
	ibConvex c;
	ibVec3 local[MAXV]; /* hull vertices, local frame (c.vertices points here) */
	int nlocal;
	/* world polytope of the core: sphere 1 vertex; capsule 2 vertices, 1 edge; box/hull full */
	int nv, ne, nt;
	ibVec3 v[MAXV];
	int e[MAXE][2];
	int t[MAXT][3];
	int tl[MAXT][3]; /* facets found on the local vertices */
	int ntl;
	ibVec3 tn[MAXT]; /* outward unit normals (world) */
	double td[MAXT]; /* plane offsets */
	double margin, bound;
	ibVec3 axis; /* world z axis (capsule, cylinder) */
} TShape;

static const char* type_name(ibConvexType t)
{
	switch (t) {
	case IB_CONVEX_SPHERE: return "sphere";
	case IB_CONVEX_BOX: return "box";
	case IB_CONVEX_CAPSULE: return "capsule";
	case IB_CONVEX_CYLINDER: return "cylinder";
	case IB_CONVEX_HULL: return "hull";
	}
	return "?";
}

/* Facets of a vertex set in convex position: every triple with all other points on one side
 * (coplanar faces give several, overlapping triangles: harmless for distances). */
static void find_facets(TShape* s)
{
	s->ntl = 0;
	int n = s->nlocal;
	double scale = 0.0;
	for (int i = 0; i < n; ++i) scale = fmax(scale, ibLength(s->local[i]));
	for (int i = 0; i < n; ++i)
		for (int j = i + 1; j < n; ++j)
			for (int k = j + 1; k < n; ++k) {
				ibVec3 nn = ibCross(ibSub(s->local[j], s->local[i]), ibSub(s->local[k], s->local[i]));
				double l = ibLength(nn);
				if (!(l > 1e-12 * scale * scale)) continue;
				nn = ibScale(1.0 / l, nn);
				int pos = 0, neg = 0;
				for (int m = 0; m < n; ++m) {
					double d = ibDot(nn, ibSub(s->local[m], s->local[i]));
					if (d > 1e-10 * scale) ++pos;
					if (d < -1e-10 * scale) ++neg;
				}
				if (pos && neg) continue;
				assert_true(s->ntl < MAXT);
				if (pos) { /* orient outward */
					s->tl[s->ntl][0] = i;
					s->tl[s->ntl][1] = k;
					s->tl[s->ntl][2] = j;
				} else {
					s->tl[s->ntl][0] = i;
					s->tl[s->ntl][1] = j;
					s->tl[s->ntl][2] = k;
				}
				++s->ntl;
			}
}

static void add_edge(TShape* s, int a, int b)
{
	for (int i = 0; i < s->ne; ++i)
		if ((s->e[i][0] == a && s->e[i][1] == b) || (s->e[i][0] == b && s->e[i][1] == a)) return;
	assert_true(s->ne < MAXE);
	s->e[s->ne][0] = a;
	s->e[s->ne][1] = b;
	++s->ne;
}

/* Set the pose and rebuild the world-side data. */
static void set_pose(TShape* s, ibVec3 pos, ibQuat q)
{
	ibConvexType type = s->c.type;
	ibConvex c = ib_convex_make(type, pos, q);
	c.radius = s->c.radius;
	c.halfLength = s->c.halfLength;
	c.halfExtents = s->c.halfExtents;
	c.vertices = s->local;
	c.vertexCount = (type == IB_CONVEX_HULL) ? s->nlocal : 0;
	s->c = c;
	s->axis = ibMat3_Column(c.R, 2);
	s->nv = s->ne = s->nt = 0;
	switch (type) {
	case IB_CONVEX_SPHERE:
		s->nv = 1;
		s->v[0] = pos;
		break;
	case IB_CONVEX_CAPSULE:
		s->nv = 2;
		s->v[0] = ibMulAdd(pos, -c.halfLength, s->axis);
		s->v[1] = ibMulAdd(pos, c.halfLength, s->axis);
		if (c.halfLength > 0.0) {
			s->ne = 1;
			s->e[0][0] = 0;
			s->e[0][1] = 1;
		} else {
			s->nv = 1;
		}
		break;
	case IB_CONVEX_CYLINDER: break;
	case IB_CONVEX_BOX:
	case IB_CONVEX_HULL:
		s->nv = s->nlocal;
		for (int i = 0; i < s->nlocal; ++i) s->v[i] = ibAdd(pos, ibMat3_MulV(c.R, s->local[i]));
		s->nt = s->ntl;
		for (int f = 0; f < s->ntl; ++f) {
			for (int k = 0; k < 3; ++k) s->t[f][k] = s->tl[f][k];
			ibVec3 n = ibCross(ibSub(s->v[s->t[f][1]], s->v[s->t[f][0]]), ibSub(s->v[s->t[f][2]], s->v[s->t[f][0]]));
			s->tn[f] = ibNormalize(n);
			s->td[f] = ibDot(s->tn[f], s->v[s->t[f][0]]);
			add_edge(s, s->t[f][0], s->t[f][1]);
			add_edge(s, s->t[f][1], s->t[f][2]);
			add_edge(s, s->t[f][2], s->t[f][0]);
		}
		break;
	}
}

static void base_hull(TShape* s, int kind)
{
	const double phi = 0.5 * (1.0 + sqrt(5.0));
	s->nlocal = 0;
	if (kind == 0) { /* regular octahedron */
		for (int a = 0; a < 3; ++a)
			for (int sg = -1; sg <= 1; sg += 2) {
				ibVec3 p = IB_VEC3_ZERO;
				if (a == 0) p.x = sg;
				else if (a == 1) p.y = sg;
				else p.z = sg;
				s->local[s->nlocal++] = p;
			}
	} else if (kind == 1) { /* regular icosahedron */
		for (int i = -1; i <= 1; i += 2)
			for (int j = -1; j <= 1; j += 2) {
				s->local[s->nlocal++] = ibScale(1.0 / phi, ibV3(0, i, j * phi));
				s->local[s->nlocal++] = ibScale(1.0 / phi, ibV3(i, j * phi, 0));
				s->local[s->nlocal++] = ibScale(1.0 / phi, ibV3(j * phi, 0, i));
			}
	} else if (kind == 2) { /* a box's 8 corners (sheared into a parallelepiped by the scaling) */
		for (int i = 0; i < 8; ++i) s->local[s->nlocal++] = ibV3(i & 1 ? 0.7 : -0.7, i & 2 ? 0.7 : -0.7, i & 4 ? 0.7 : -0.7);
	} else { /* random points on the unit sphere: all in convex position */
		int n = 8 + (int)(rng_next() % 7);
		for (int i = 0; i < n; ++i) s->local[s->nlocal++] = rand_unit_vec();
	}
	/* anisotropic scaling after a random rotation keeps the points in convex position */
	ibMat3 Q = ibMat3_FromQuat(rand_unit_quat());
	ibVec3 sc = rand_vec(0.3, 1.3);
	ibVec3 off = rand_vec(-0.2, 0.2); /* the local origin need not be the centroid */
	for (int i = 0; i < s->nlocal; ++i) s->local[i] = ibAdd(off, ibMulCW(sc, ibMat3_MulV(Q, s->local[i])));
}

static void random_shape(TShape* s, ibConvexType type)
{
	memset(s, 0, sizeof *s);
	s->c.type = type;
	switch (type) {
	case IB_CONVEX_SPHERE:
		s->c.radius = urand(0.2, 1.5);
		s->margin = s->c.radius;
		s->bound = s->c.radius;
		break;
	case IB_CONVEX_BOX: {
		ibVec3 h = rand_vec(0.1, 1.5);
		s->c.halfExtents = h;
		for (int i = 0; i < 8; ++i) s->local[i] = ibV3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
		s->nlocal = 8;
		find_facets(s);
		s->bound = ibLength(h);
		break;
	}
	case IB_CONVEX_CAPSULE:
		s->c.radius = urand(0.1, 1.0);
		s->c.halfLength = urand(0.0, 1.0) < 0.05 ? 0.0 : urand(0.05, 1.5);
		s->margin = s->c.radius;
		s->bound = s->c.radius + s->c.halfLength;
		break;
	case IB_CONVEX_CYLINDER:
		s->c.radius = urand(0.2, 1.2);
		s->c.halfLength = urand(0.1, 1.5);
		s->bound = hypot(s->c.radius, s->c.halfLength);
		break;
	case IB_CONVEX_HULL:
		base_hull(s, (int)(rng_next() % 4));
		find_facets(s);
		for (int i = 0; i < s->nlocal; ++i) s->bound = fmax(s->bound, ibLength(s->local[i]));
		break;
	}
	set_pose(s, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
}

/* ---- test-side geometry (independent of the library's code) -------------------------------- */
static ibVec3 t_support(const TShape* s, ibVec3 d)
{
	double l = ibLength(d);
	ibVec3 dn = l > 0.0 ? ibScale(1.0 / l, d) : ibV3(1, 0, 0);
	const ibConvex* c = &s->c;
	switch (c->type) {
	case IB_CONVEX_SPHERE: return ibMulAdd(c->position, c->radius, dn);
	case IB_CONVEX_CAPSULE: {
		ibVec3 e = ibDot(s->axis, dn) >= 0.0 ? ibMulAdd(c->position, c->halfLength, s->axis)
		                                     : ibMulAdd(c->position, -c->halfLength, s->axis);
		return ibMulAdd(e, c->radius, dn);
	}
	case IB_CONVEX_CYLINDER: {
		double z = ibDot(dn, s->axis);
		ibVec3 rad = ibMulAdd(dn, -z, s->axis);
		rad = ibMulAdd(rad, -ibDot(rad, s->axis), s->axis); /* second projection: no axial residue */
		double rl = ibLength(rad);
		ibVec3 p = ibMulAdd(c->position, z >= 0.0 ? c->halfLength : -c->halfLength, s->axis);
		return rl > 0.0 ? ibMulAdd(p, c->radius / rl, rad) : p;
	}
	case IB_CONVEX_BOX:
	case IB_CONVEX_HULL: {
		int best = 0;
		for (int i = 1; i < s->nv; ++i)
			if (ibDot(s->v[i], dn) > ibDot(s->v[best], dn)) best = i;
		return s->v[best];
	}
	}
	return IB_VEC3_ZERO;
}

static double t_h(const TShape* s, ibVec3 n) { return ibDot(n, t_support(s, n)); }

static ibVec3 t_closest_segment(ibVec3 p, ibVec3 a, ibVec3 b)
{
	ibVec3 ab = ibSub(b, a);
	double l2 = ibLengthSq(ab);
	if (!(l2 > 0.0)) return a;
	double t = ibDot(ibSub(p, a), ab) / l2;
	t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
	return ibMulAdd(a, t, ab);
}

/* Closest point of triangle abc: the plane projection if inside (Gram system), else an edge. */
static ibVec3 t_closest_triangle(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c)
{
	ibVec3 e1 = ibSub(b, a), e2 = ibSub(c, a), r = ibSub(p, a);
	double g11 = ibDot(e1, e1), g12 = ibDot(e1, e2), g22 = ibDot(e2, e2);
	double r1 = ibDot(e1, r), r2 = ibDot(e2, r);
	double det = g11 * g22 - g12 * g12;
	if (det > 1e-20 * g11 * g22) {
		double s = (r1 * g22 - r2 * g12) / det, t = (r2 * g11 - r1 * g12) / det;
		if (s >= 0.0 && t >= 0.0 && s + t <= 1.0) return ibAdd(a, ibAdd(ibScale(s, e1), ibScale(t, e2)));
	}
	ibVec3 q[3] = {t_closest_segment(p, a, b), t_closest_segment(p, b, c), t_closest_segment(p, c, a)};
	int best = 0;
	for (int i = 1; i < 3; ++i)
		if (ibDistance(p, q[i]) < ibDistance(p, q[best])) best = i;
	return q[best];
}

/* Closest points of two segments: the interior critical point of the two lines if both
 * parameters are inside, else the best of the four endpoint-to-segment projections. */
static void t_segment_segment(ibVec3 p0, ibVec3 p1, ibVec3 q0, ibVec3 q1, ibVec3* pa, ibVec3* pb)
{
	ibVec3 cand[5][2];
	int n = 0;
	cand[n][0] = p0, cand[n][1] = t_closest_segment(p0, q0, q1), ++n;
	cand[n][0] = p1, cand[n][1] = t_closest_segment(p1, q0, q1), ++n;
	cand[n][0] = t_closest_segment(q0, p0, p1), cand[n][1] = q0, ++n;
	cand[n][0] = t_closest_segment(q1, p0, p1), cand[n][1] = q1, ++n;
	ibVec3 u = ibSub(p1, p0), v = ibSub(q1, q0), w = ibSub(p0, q0);
	double a = ibDot(u, u), b = ibDot(u, v), c = ibDot(v, v), d = ibDot(u, w), e = ibDot(v, w);
	double det = a * c - b * b;
	if (det > 1e-20 * a * c) {
		double s = (b * e - c * d) / det, t = (a * e - b * d) / det;
		if (s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0) {
			cand[n][0] = ibMulAdd(p0, s, u);
			cand[n][1] = ibMulAdd(q0, t, v);
			++n;
		}
	}
	int best = 0;
	for (int i = 1; i < n; ++i)
		if (ibDistance(cand[i][0], cand[i][1]) < ibDistance(cand[best][0], cand[best][1])) best = i;
	*pa = cand[best][0];
	*pb = cand[best][1];
}

/* Signed distance of p to the shape (negative inside) and the closest boundary point. */
static double t_point_dist(const TShape* s, ibVec3 p, ibVec3* closest, ibVec3* nOut)
{
	const ibConvex* c = &s->c;
	ibVec3 q, n;
	double d;
	switch (c->type) {
	case IB_CONVEX_SPHERE:
	case IB_CONVEX_CAPSULE: {
		ibVec3 core = c->type == IB_CONVEX_SPHERE ? c->position : t_closest_segment(p, s->v[0], s->v[s->nv - 1]);
		ibVec3 r = ibSub(p, core);
		double l = ibLength(r);
		n = l > 0.0 ? ibScale(1.0 / l, r) : ibPerpendicular(s->axis);
		q = ibMulAdd(core, c->radius, n);
		d = l - c->radius;
		break;
	}
	case IB_CONVEX_CYLINDER: {
		ibVec3 r = ibSub(p, c->position);
		double z = ibDot(r, s->axis);
		ibVec3 rad = ibMulAdd(r, -z, s->axis);
		double rl = ibLength(rad);
		ibVec3 ru = rl > 0.0 ? ibScale(1.0 / rl, rad) : ibPerpendicular(s->axis);
		double h = c->halfLength, R = c->radius;
		if (rl <= R && fabs(z) <= h) { /* inside: nearest of lateral surface and caps */
			if (R - rl < h - fabs(z)) {
				d = rl - R;
				n = ru;
				q = ibAdd(ibMulAdd(c->position, z, s->axis), ibScale(R, ru));
			} else {
				d = fabs(z) - h;
				n = z >= 0.0 ? s->axis : ibNeg(s->axis);
				q = ibAdd(ibMulAdd(c->position, z >= 0.0 ? h : -h, s->axis), rad);
			}
		} else {
			double zc = z > h ? h : (z < -h ? -h : z);
			double rc = rl < R ? rl : R;
			q = ibAdd(ibMulAdd(c->position, zc, s->axis), ibScale(rc, ru));
			d = ibDistance(p, q);
			n = ibScale(1.0 / d, ibSub(p, q));
		}
		break;
	}
	default: { /* polytope */
		int fmaxI = 0;
		double pmax = -INFINITY;
		for (int f = 0; f < s->nt; ++f) {
			double pd = ibDot(s->tn[f], p) - s->td[f];
			if (pd > pmax) {
				pmax = pd;
				fmaxI = f;
			}
		}
		if (pmax <= 0.0) {
			d = pmax;
			n = s->tn[fmaxI];
			q = ibMulAdd(p, -pmax, n);
		} else {
			d = INFINITY;
			q = p;
			for (int f = 0; f < s->nt; ++f) {
				ibVec3 x = t_closest_triangle(p, s->v[s->t[f][0]], s->v[s->t[f][1]], s->v[s->t[f][2]]);
				double dx = ibDistance(p, x);
				if (dx < d) {
					d = dx;
					q = x;
				}
			}
			n = ibScale(1.0 / d, ibSub(p, q));
		}
		break;
	}
	}
	if (closest) *closest = q;
	if (nOut) *nOut = n;
	return d;
}

/* ---- references ------------------------------------------------------------------------------ */
typedef struct Ref {
	double d;       /* signed distance (negative: penetration depth) */
	ibVec3 pa, pb;  /* closest points (separated) */
	ibVec3 n;       /* normal B -> A */
	bool unique;    /* points (separated) / normal (penetrating) well defined */
	double second;  /* best value of a candidate with different points */
} Ref;

static void ref_consider(Ref* r, ibVec3 pa, ibVec3 pb)
{
	double d = ibDistance(pa, pb);
	bool differs = ibDistance(pa, r->pa) > 1e-7 || ibDistance(pb, r->pb) > 1e-7;
	if (d < r->d) {
		if (differs) r->second = r->d;
		r->d = d;
		r->pa = pa;
		r->pb = pb;
	} else if (differs && d < r->second) {
		r->second = d;
	}
}

/* Exact distance of two (core) polytopes by feature enumeration; 0 only if boundaries meet. */
static Ref ref_core_distance(const TShape* A, const TShape* B)
{
	Ref r = {INFINITY, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, false, INFINITY};
	for (int pass = 0; pass < 2; ++pass) {
		const TShape* P = pass ? B : A;
		const TShape* Q = pass ? A : B;
		for (int i = 0; i < P->nv; ++i) {
			ibVec3 p = P->v[i], q;
			if (Q->nt > 0) {
				for (int f = 0; f < Q->nt; ++f) {
					q = t_closest_triangle(p, Q->v[Q->t[f][0]], Q->v[Q->t[f][1]], Q->v[Q->t[f][2]]);
					if (pass) ref_consider(&r, q, p);
					else ref_consider(&r, p, q);
				}
			} else if (Q->ne > 0) {
				for (int e = 0; e < Q->ne; ++e) {
					q = t_closest_segment(p, Q->v[Q->e[e][0]], Q->v[Q->e[e][1]]);
					if (pass) ref_consider(&r, q, p);
					else ref_consider(&r, p, q);
				}
			} else if (!pass) {
				for (int j = 0; j < Q->nv; ++j) ref_consider(&r, p, Q->v[j]);
			}
		}
	}
	for (int i = 0; i < A->ne; ++i)
		for (int j = 0; j < B->ne; ++j) {
			ibVec3 pa, pb;
			t_segment_segment(A->v[A->e[i][0]], A->v[A->e[i][1]], B->v[B->e[j][0]], B->v[B->e[j][1]], &pa, &pb);
			ref_consider(&r, pa, pb);
		}
	r.unique = r.second - r.d > 1e-7;
	return r;
}

/* Minimum translational distance of two (core) polytopes, one with volume, by enumeration of
 * face normals and edge-edge cross products on vertex projections. False if an axis separates. */
static bool ref_core_mtd(const TShape* A, const TShape* B, double* depth, ibVec3* nOut, bool* unique)
{
	ibVec3 axes[MAXT * 2 + MAXE * MAXE];
	int na = 0;
	for (int f = 0; f < A->nt; ++f) axes[na++] = A->tn[f];
	for (int f = 0; f < B->nt; ++f) axes[na++] = B->tn[f];
	for (int i = 0; i < A->ne; ++i)
		for (int j = 0; j < B->ne; ++j) {
			ibVec3 L = ibCross(ibSub(A->v[A->e[i][1]], A->v[A->e[i][0]]), ibSub(B->v[B->e[j][1]], B->v[B->e[j][0]]));
			double l = ibLength(L);
			if (l > 1e-9) axes[na++] = ibScale(1.0 / l, L);
		}
	double best = INFINITY, second = INFINITY;
	ibVec3 bn = IB_VEC3_ZERO;
	for (int k = 0; k < na; ++k) {
		ibVec3 L = axes[k];
		double minA = INFINITY, maxA = -INFINITY, minB = INFINITY, maxB = -INFINITY;
		for (int i = 0; i < A->nv; ++i) {
			double x = ibDot(L, A->v[i]);
			minA = fmin(minA, x);
			maxA = fmax(maxA, x);
		}
		for (int i = 0; i < B->nv; ++i) {
			double x = ibDot(L, B->v[i]);
			minB = fmin(minB, x);
			maxB = fmax(maxB, x);
		}
		double up = maxB - minA, down = maxA - minB; /* translations of A along +L / -L */
		if (up < 0.0 || down < 0.0) return false;
		double ov = fmin(up, down);
		ibVec3 n = up <= down ? L : ibNeg(L);
		if (ov < best) {
			if (ibDot(n, bn) < 1.0 - 1e-9) second = best;
			best = ov;
			bn = n;
		} else if (ov < second && ibDot(n, bn) < 1.0 - 1e-9) {
			second = ov;
		}
	}
	*depth = best;
	*nOut = bn;
	*unique = second - best > 1e-7;
	return true;
}

/* The nearest boundary feature of a point inside (or on) the shape is unique (gap 1e-7). */
static bool inside_unique(const TShape* s, ibVec3 p)
{
	const ibConvex* c = &s->c;
	switch (c->type) {
	case IB_CONVEX_SPHERE:
	case IB_CONVEX_CAPSULE: {
		ibVec3 core = c->type == IB_CONVEX_SPHERE ? c->position : t_closest_segment(p, s->v[0], s->v[s->nv - 1]);
		return ibDistance(p, core) > 1e-7;
	}
	case IB_CONVEX_CYLINDER: {
		ibVec3 r = ibSub(p, c->position);
		double z = ibDot(r, s->axis);
		double rl = ibLength(ibMulAdd(r, -z, s->axis));
		return fabs((c->radius - rl) - (c->halfLength - fabs(z))) > 1e-7 && rl > 1e-7;
	}
	default: {
		double best = INFINITY, second = INFINITY;
		ibVec3 bn = IB_VEC3_ZERO;
		for (int f = 0; f < s->nt; ++f) {
			double g = s->td[f] - ibDot(s->tn[f], p); /* distance to the face plane (>= 0 inside) */
			if (g < best) {
				if (ibDot(s->tn[f], bn) < 1.0 - 1e-9) second = best;
				best = g;
				bn = s->tn[f];
			} else if (g < second && ibDot(s->tn[f], bn) < 1.0 - 1e-9) {
				second = g;
			}
		}
		return second - best > 1e-7;
	}
	}
}

/* Exact reference for pairs without cylinders (cores are polytopes). */
static Ref ref_exact(const TShape* A, const TShape* B)
{
	double ra = A->margin, rb = B->margin;
	Ref r;
	if (A->c.type == IB_CONVEX_SPHERE || B->c.type == IB_CONVEX_SPHERE) {
		/* centre against the other shape: exact signed distance */
		bool aIsSphere = A->c.type == IB_CONVEX_SPHERE;
		const TShape* S = aIsSphere ? A : B;
		const TShape* O = aIsSphere ? B : A;
		ibVec3 q, n;
		double sd = t_point_dist(O, S->c.position, &q, &n);
		r.d = sd - S->c.radius;
		r.n = aIsSphere ? n : ibNeg(n);
		ibVec3 ps = ibMulAdd(S->c.position, -S->c.radius, n);
		r.pa = aIsSphere ? ps : q;
		r.pb = aIsSphere ? q : ps;
		r.unique = sd > 1e-9 || inside_unique(O, S->c.position);
		r.second = INFINITY;
		return r;
	}
	r = ref_core_distance(A, B);
	double depth;
	ibVec3 n;
	bool uniq;
	bool volume = A->nt > 0 || B->nt > 0;
	if (volume && ref_core_mtd(A, B, &depth, &n, &uniq)) { /* cores overlap */
		r.d = -(depth + ra + rb);
		r.n = n;
		r.unique = uniq;
		return r;
	}
	double dc = r.d;
	r.n = dc > 0.0 ? ibScale(1.0 / dc, ibSub(r.pa, r.pb)) : IB_VEC3_ZERO;
	r.pa = ibMulAdd(r.pa, -ra, r.n);
	r.pb = ibMulAdd(r.pb, rb, r.n);
	r.d = dc - ra - rb;
	if (!(dc > 0.0)) r.unique = false;
	return r;
}

/* ---- cylinder references: surface sampling (distance) and direction sampling (MTD) ---------- */
/* Cylinder surface point: patch 0 lateral (u = angle, v = z), 1/2 top/bottom cap (u, v = x, y). */
static ibVec3 cyl_point(const TShape* C, int patch, double u, double v)
{
	double R = C->c.radius, h = C->c.halfLength;
	ibVec3 l;
	if (patch == 0) {
		l = ibV3(R * cos(u), R * sin(u), v < -h ? -h : (v > h ? h : v));
	} else {
		double rho = hypot(u, v);
		double s = rho > R ? R / rho : 1.0;
		l = ibV3(s * u, s * v, patch == 1 ? h : -h);
	}
	return ibAdd(C->c.position, ibMat3_MulV(C->c.R, l));
}

/* Distance from the cylinder surface point to O, with a cheap bounding-sphere lower bound. */
static double cyl_eval(const TShape* C, const TShape* O, int patch, double u, double v, double cutoff)
{
	ibVec3 p = cyl_point(C, patch, u, v);
	if (ibDistance(p, O->c.position) - O->bound > cutoff) return INFINITY;
	return t_point_dist(O, p, NULL, NULL);
}

/* min over the cylinder C's surface of the distance to O: coarse grid (returned in *coarse), then
 * an 8-direction pattern search from the best sample of each patch within the coarse covering
 * bound, down to 1e-10 m steps. */
static double sample_cylinder(const TShape* C, const TShape* O, double* coarse)
{
	const double R = C->c.radius, h = C->c.halfLength;
	const int NT = 64, NZ = 8, NR = 4;
	double bestU[3] = {0, 0, 0}, bestV[3] = {0, 0, 0}, bestD[3] = {INFINITY, INFINITY, INFINITY};
	double best = INFINITY;
	for (int k = 0; k < NT; ++k) {
		double th = 2.0 * IB_PI * k / NT;
		for (int j = 0; j <= NZ; ++j) {
			double z = -h + 2.0 * h * j / NZ;
			double d = cyl_eval(C, O, 0, th, z, best + 0.5);
			if (d < bestD[0]) bestD[0] = d, bestU[0] = th, bestV[0] = z;
			best = fmin(best, d);
		}
		for (int i = 0; i <= NR; ++i) {
			double x = R * i / NR * cos(th), y = R * i / NR * sin(th);
			for (int patch = 1; patch <= 2; ++patch) {
				double d = cyl_eval(C, O, patch, x, y, best + 0.5);
				if (d < bestD[patch]) bestD[patch] = d, bestU[patch] = x, bestV[patch] = y;
				best = fmin(best, d);
			}
		}
	}
	*coarse = best;
	/* covering radius of the grid: lateral cells (R 2pi/64) x (2h/8), cap rings R/4 apart with
	 * 64 spokes: half the cell diagonal, < 0.25 m for R <= 1.2, h <= 1.5 */
	double cover = 0.5 * fmax(hypot(R * 2.0 * IB_PI / NT, 2.0 * h / NZ), hypot(R / NR, R * 2.0 * IB_PI / NT));
	double refined = best;
	for (int patch = 0; patch < 3; ++patch) {
		if (!(bestD[patch] <= best + cover)) continue;
		double u = bestU[patch], v = bestV[patch], d = bestD[patch];
		double su = patch == 0 ? 2.0 * IB_PI / NT : R / NR, sv = patch == 0 ? 2.0 * h / NZ : R / NR;
		double lu = patch == 0 ? R : 1.0; /* length per unit of u */
		while (su * lu > 1e-10 || sv > 1e-10) {
			bool moved = false;
			for (int m = 0; m < 8; ++m) {
				static const int dx[8] = {1, -1, 0, 0, 1, 1, -1, -1}, dy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
				double nu = u + dx[m] * su, nv = v + dy[m] * sv;
				if (patch == 0) { /* keep the parameters on the surface (no drift outside) */
					nv = nv < -h ? -h : (nv > h ? h : nv);
				} else if (hypot(nu, nv) > R) {
					double sc = R / hypot(nu, nv);
					nu *= sc, nv *= sc;
				}
				double nd = cyl_eval(C, O, patch, nu, nv, INFINITY);
				if (nd < d) {
					d = nd, u = nu, v = nv, moved = true;
					break;
				}
			}
			if (!moved) su *= 0.5, sv *= 0.5;
		}
		refined = fmin(refined, d);
	}
	return refined;
}

/* Overlap of A and B along n (B -> A): how far A must move along n to separate. */
static double t_overlap(const TShape* A, const TShape* B, ibVec3 n) { return t_h(B, n) + t_h(A, ibNeg(n)); }

/* Upper bound of the MTD: minimum overlap over 600 Fibonacci directions, refined by pattern
 * search on the sphere of directions from the 4 best (the overlap is multimodal in n). */
static double sample_mtd(const TShape* A, const TShape* B)
{
	enum { N = 600, K = 4 };
	double bestO[K];
	ibVec3 bestN[K];
	for (int k = 0; k < K; ++k) bestO[k] = INFINITY, bestN[k] = ibV3(1, 0, 0);
	for (int i = 0; i < N; ++i) {
		double z = 1.0 - (2.0 * i + 1.0) / N, rho = sqrt(fmax(0.0, 1.0 - z * z));
		double ph = i * IB_PI * (3.0 - sqrt(5.0));
		ibVec3 n = ibV3(rho * cos(ph), rho * sin(ph), z);
		double o = t_overlap(A, B, n);
		if (o < bestO[K - 1]) { /* insert into the sorted list of the K best */
			int k = K - 1;
			while (k > 0 && bestO[k - 1] > o) {
				bestO[k] = bestO[k - 1];
				bestN[k] = bestN[k - 1];
				--k;
			}
			bestO[k] = o;
			bestN[k] = n;
		}
	}
	double result = INFINITY;
	for (int k = 0; k < K; ++k) {
		double best = bestO[k];
		ibVec3 bn = bestN[k];
		double step = 0.05;
		int evals = 0;
		while (step > 1e-9 && evals < 400) { /* bounded: the overlap has ridges (non-smooth) */
			evals += 8;
			ibVec3 t1 = ibPerpendicular(bn), t2 = ibCross(bn, t1);
			bool moved = false;
			for (int m = 0; m < 8 && !moved; ++m) {
				double a = m * IB_PI / 4.0;
				ibVec3 n = ibNormalize(ibAdd(bn, ibScale(step, ibAdd(ibScale(cos(a), t1), ibScale(sin(a), t2)))));
				double o = t_overlap(A, B, n);
				if (o < best) best = o, bn = n, moved = true;
			}
			if (!moved) step *= 0.5;
		}
		result = fmin(result, best);
	}
	return result;
}

/* ---- checks ---------------------------------------------------------------------------------- */
typedef struct Stats {
	int nSep, nPen, nPts, nNormal;
	double sepDist, sepPts, penDepth, penNormal, support, invariant, swap, gjkSep, gjkPen, sampleTight, sampleCoarse,
	    cert;
	int gjkIterMax, nLoose; /* nLoose: curved results with support error > TOL */
} Stats;

static void upd(double* m, double v) { *m = fmax(*m, v); }

/* Universal properties of a result: unit normal, pointA - pointB = distance normal, pointA is A's
 * extreme point along -n and pointB B's along +n (support check), both on the surfaces. */
static void check_result(const TShape* A, const TShape* B, const ibConvexDistance* r, double tolSupport, Stats* st)
{
	assert_true(isfinite(r->distance) && ibVec3_IsFinite(r->normal) && ibVec3_IsFinite(r->pointA) &&
	            ibVec3_IsFinite(r->pointB));
	assert_le(fabs(ibLength(r->normal) - 1.0), 1e-12);
	double inv = ibLength(ibSub(ibSub(r->pointA, r->pointB), ibScale(r->distance, r->normal)));
	if (!(inv <= TOL))
		print_message("result d=%.17g n=(%g %g %g) pA=(%g %g %g) pB=(%g %g %g) it=%d\n", r->distance, r->normal.x,
		              r->normal.y, r->normal.z, r->pointA.x, r->pointA.y, r->pointA.z, r->pointB.x, r->pointB.y,
		              r->pointB.z, r->iterations);
	assert_le(inv, TOL);
	upd(&st->invariant, inv);
	double eA = fabs(ibDot(r->normal, r->pointA) + t_h(A, ibNeg(r->normal)));
	double eB = fabs(t_h(B, r->normal) - ibDot(r->normal, r->pointB));
	double sA = fabs(t_point_dist(A, r->pointA, NULL, NULL)), sB = fabs(t_point_dist(B, r->pointB, NULL, NULL));
	double e = fmax(fmax(eA, eB), fmax(sA, sB));
	assert_le(e, tolSupport);
	upd(&st->support, e);
	if (e > TOL) ++st->nLoose;
}

static bool has_special(ibConvexType a, ibConvexType b)
{
	if (a > b) {
		ibConvexType t = a;
		a = b;
		b = t;
	}
	return (a == IB_CONVEX_SPHERE &&
	        (b == IB_CONVEX_SPHERE || b == IB_CONVEX_BOX || b == IB_CONVEX_CAPSULE || b == IB_CONVEX_CYLINDER)) ||
	       (a == IB_CONVEX_CAPSULE && b == IB_CONVEX_CAPSULE) || (a == IB_CONVEX_BOX && b == IB_CONVEX_BOX);
}

static void random_pose_pair(TShape* A, ibConvexType ta, TShape* B, ibConvexType tb, double smax)
{
	random_shape(A, ta);
	random_shape(B, tb);
	set_pose(A, rand_vec(-5.0, 5.0), rand_unit_quat());
	double s = urand(0.0, smax) * (A->bound + B->bound);
	set_pose(B, ibMulAdd(A->c.position, s, rand_unit_vec()), rand_unit_quat());
}

static void run_pair(ibConvexType ta, ibConvexType tb)
{
	rng_seed(0x1234567ull + 977ull * (uint64_t)ta + 31ull * (uint64_t)tb);
	Stats st;
	memset(&st, 0, sizeof st);
	static TShape A, B;
	ibGjkCache cache = {0};
	bool cyl = ta == IB_CONVEX_CYLINDER || tb == IB_CONVEX_CYLINDER;
	bool sphere = ta == IB_CONVEX_SPHERE || tb == IB_CONVEX_SPHERE;
	bool exact = !cyl || sphere;
	bool special = has_special(ta, tb);
	for (int i = 0; i < N_POSES; ++i) {
		g_pose = i;
		random_pose_pair(&A, ta, &B, tb, 1.2);
		ibConvexDistance r = ib_convex_query(&A.c, &B.c, (i & 1) ? &cache : NULL);
		st.gjkIterMax = r.iterations > st.gjkIterMax ? r.iterations : st.gjkIterMax;
		bool curved = cyl && !special; /* GJK/EPA on a cylinder */
		check_result(&A, &B, &r, curved ? TOL_CURVED : TOL, &st);

		ibConvexDistance rs = ib_convex_query(&B.c, &A.c, NULL);
		double sw = fabs(rs.distance - r.distance);
		assert_le(sw, curved && r.distance < 0.0 ? TOL_CURVED_EPA : TOL);
		upd(&st.swap, sw);

		/* penetration depths from EPA (not closed form) are compared with the looser tolerance */
		bool viaEpa = !special && r.distance < 0.0;
		if (exact) {
			Ref ref = ref_exact(&A, &B);
			double err = fabs(r.distance - ref.d);
			if (ref.d > 0.0) {
				++st.nSep;
				assert_le(err, TOL);
				upd(&st.sepDist, err);
				if (ref.unique && ref.d > 1e-6) {
					double pe = fmax(ibDistance(r.pointA, ref.pa), ibDistance(r.pointB, ref.pb));
					assert_le(pe, TOL);
					upd(&st.sepPts, pe);
					++st.nPts;
				}
			} else {
				++st.nPen;
				assert_le(err, viaEpa ? TOL_EPA : TOL);
				upd(&st.penDepth, err);
				if (ref.unique && ref.d < -1e-6) {
					double ne = ibDistance(r.normal, ref.n);
					assert_le(ne, 1e-6);
					upd(&st.penNormal, ne);
					++st.nNormal;
				}
			}
		} else if (r.distance > 0.0) {
			++st.nSep;
			/* certificate: separation along n (test supports) <= d <= |pA - pB| with both points on
			 * the shapes (checked above) */
			double lower = -t_h(&A, ibNeg(r.normal)) - t_h(&B, r.normal);
			double gap = r.distance - lower;
			assert_le(gap, TOL_CURVED);
			upd(&st.cert, gap);
			const TShape* C = ta == IB_CONVEX_CYLINDER ? &A : &B;
			const TShape* O = ta == IB_CONVEX_CYLINDER ? &B : &A;
			double coarse;
			double ref = sample_cylinder(C, O, &coarse);
			assert_le(r.distance, ref + TOL); /* no surface point is closer than the result */
			assert_le(coarse - r.distance, 0.25);
			assert_le(ref - r.distance, TOL_SAMPLE);
			upd(&st.sampleTight, ref - r.distance);
			upd(&st.sampleCoarse, coarse - r.distance);
		} else {
			++st.nPen;
			double depth = -r.distance;
			double along = t_overlap(&A, &B, r.normal); /* >= MTD >= EPA depth */
			assert_le(along - depth, TOL_CURVED);
			assert_le(depth - along, TOL);
			upd(&st.cert, along - depth);
			double ub = sample_mtd(&A, &B);
			assert_le(depth, ub + TOL); /* no sampled direction has less overlap than the result */
			/* coarse agreement: the overlap is Lipschitz in n with constant L (B - A lies in a ball of
			 * radius L around the origin) and every direction is within 0.2 rad of a sample */
			double L = ibDistance(A.c.position, B.c.position) + A.bound + B.bound;
			assert_le(ub - depth, 0.2 * L);
			upd(&st.penDepth, ub - depth);
		}

		if (special) { /* general path on the same pair */
			ibConvexDistance g = ib_convex_query_gjk(&A.c, &B.c, true, NULL);
			double e = fabs(g.distance - r.distance);
			if (r.distance > 0.0) {
				assert_le(e, TOL);
				upd(&st.gjkSep, e);
			} else if (cyl) { /* EPA on the point-cylinder core: a lower bound of the depth */
				assert_le(g.distance - r.distance, TOL_CURVED_EPA);
				assert_le(r.distance - g.distance, TOL);
				upd(&st.gjkPen, e);
			} else {
				assert_le(e, TOL_EPA);
				upd(&st.gjkPen, e);
			}
		}
	}
	print_message("%-8s-%-8s sep %5d: dist %.1e pts %.1e (%d) | pen %5d: depth %.1e normal %.1e (%d) | support %.1e "
	              "inv %.1e swap %.1e | gjk/epa vs special: sep %.1e pen %.1e | cyl: cert %.1e sample %.1e coarse "
	              "%.2g | max it %d | curved > 1e-9: %d\n",
	              type_name(ta), type_name(tb), st.nSep, st.sepDist, st.sepPts, st.nPts, st.nPen, st.penDepth,
	              st.penNormal, st.nNormal, st.support, st.invariant, st.swap, st.gjkSep, st.gjkPen, st.cert,
	              st.sampleTight, st.sampleCoarse, st.gjkIterMax, st.nLoose);
}

#define PAIR_TEST(A, B)                                                                          \
	static void test_##A##_##B(void** state)                                                     \
	{                                                                                            \
		(void)state;                                                                             \
		run_pair(IB_CONVEX_##A, IB_CONVEX_##B);                                                  \
	}
PAIR_TEST(SPHERE, SPHERE)
PAIR_TEST(SPHERE, BOX)
PAIR_TEST(SPHERE, CAPSULE)
PAIR_TEST(SPHERE, CYLINDER)
PAIR_TEST(SPHERE, HULL)
PAIR_TEST(BOX, BOX)
PAIR_TEST(BOX, CAPSULE)
PAIR_TEST(BOX, CYLINDER)
PAIR_TEST(BOX, HULL)
PAIR_TEST(CAPSULE, CAPSULE)
PAIR_TEST(CAPSULE, CYLINDER)
PAIR_TEST(CAPSULE, HULL)
PAIR_TEST(CYLINDER, CYLINDER)
PAIR_TEST(CYLINDER, HULL)
PAIR_TEST(HULL, HULL)

/* ---- support functions and bounding boxes ---------------------------------------------------- */
static void test_support_aabb(void** state)
{
	(void)state;
	rng_seed(77);
	static TShape S;
	double maxErr = 0.0;
	for (int type = 0; type <= (int)IB_CONVEX_HULL; ++type) {
		for (int i = 0; i < 500; ++i) {
			random_shape(&S, (ibConvexType)type);
			set_pose(&S, rand_vec(-10.0, 10.0), rand_unit_quat());
			for (int k = 0; k < 20; ++k) {
				ibVec3 d = ibScale(urand(0.1, 10.0), rand_unit_vec());
				if (k == 0) d = ibMat3_Column(S.c.R, 2); /* exactly along the local z axis */
				ibVec3 p = ib_convex_support(&S.c, d);
				double e = fabs(ibDot(d, p) - ibDot(d, t_support(&S, d))) / ibLength(d);
				double onSurface = fabs(t_point_dist(&S, p, NULL, NULL));
				/* the full support is the core's plus the margin along d */
				ibVec3 core = ib_convex_support_core(&S.c, d);
				double ec = fabs(ibDot(d, p) - ibDot(d, core) - ib_convex_margin(&S.c) * ibLength(d)) / ibLength(d);
				maxErr = fmax(maxErr, fmax(e, fmax(onSurface, ec)));
				assert_le(e, 1e-12);
				assert_le(onSurface, 1e-12);
				assert_le(ec, 1e-12);
			}
			/* the AABB is tight: its faces are the support planes along the axes */
			ibAABB box = ib_convex_aabb(&S.c);
			static const ibVec3 ax[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
			for (int k = 0; k < 3; ++k) {
				double hi = t_h(&S, ax[k]), lo = -t_h(&S, ibNeg(ax[k]));
				assert_le(fabs(ibVec3_Get(box.hi, k) - hi), 1e-12);
				assert_le(fabs(ibVec3_Get(box.lo, k) - lo), 1e-12);
				maxErr = fmax(maxErr, fmax(fabs(ibVec3_Get(box.hi, k) - hi), fabs(ibVec3_Get(box.lo, k) - lo)));
			}
		}
	}
	print_message("support/AABB: max error %.1e\n", maxErr);
}

/* ---- box-box penetration: SAT against EPA and a brute-force MTD over the 15 axes --------------- */
static void test_box_box_penetration(void** state)
{
	(void)state;
	rng_seed(4242);
	static TShape A, B;
	double eSat = 0.0, eEpa = 0.0, eN = 0.0;
	int n = 0;
	for (int i = 0; i < N_POSES; ++i) {
		g_pose = i;
		random_pose_pair(&A, IB_CONVEX_BOX, &B, IB_CONVEX_BOX, 0.6);
		/* brute force: the 3 + 3 face axes and 9 edge cross products, on the 8 + 8 vertices */
		ibVec3 axes[15];
		int na = 0;
		for (int k = 0; k < 3; ++k) axes[na++] = ibMat3_Column(A.c.R, k);
		for (int k = 0; k < 3; ++k) axes[na++] = ibMat3_Column(B.c.R, k);
		for (int j = 0; j < 3; ++j)
			for (int k = 0; k < 3; ++k) {
				ibVec3 L = ibCross(ibMat3_Column(A.c.R, j), ibMat3_Column(B.c.R, k));
				if (ibLength(L) > 1e-9) axes[na++] = ibNormalize(L);
			}
		double best = INFINITY, second = INFINITY;
		ibVec3 bn = IB_VEC3_ZERO;
		bool separated = false;
		for (int k = 0; k < na && !separated; ++k) {
			double minA = INFINITY, maxA = -INFINITY, minB = INFINITY, maxB = -INFINITY;
			for (int v = 0; v < 8; ++v) {
				double a = ibDot(axes[k], A.v[v]), b = ibDot(axes[k], B.v[v]);
				minA = fmin(minA, a), maxA = fmax(maxA, a), minB = fmin(minB, b), maxB = fmax(maxB, b);
			}
			double up = maxB - minA, down = maxA - minB;
			if (up < 0.0 || down < 0.0) separated = true;
			double ov = fmin(up, down);
			ibVec3 nn = up <= down ? axes[k] : ibNeg(axes[k]);
			if (ov < best) {
				if (ibDot(nn, bn) < 1.0 - 1e-9) second = best;
				best = ov, bn = nn;
			} else if (ov < second && ibDot(nn, bn) < 1.0 - 1e-9) {
				second = ov;
			}
		}
		ibConvexDistance sat;
		bool overlap = ib_collide_box_box_sat(&A.c, &B.c, &sat);
		assert_true(overlap == !separated || fabs(best) < 1e-12);
		if (separated || best < 1e-9) continue;
		++n;
		ibConvexDistance epa = ib_convex_query_gjk(&A.c, &B.c, true, NULL);
		double es = fabs(-sat.distance - best), ee = fabs(-epa.distance - best);
		assert_le(es, TOL);
		assert_le(ee, TOL_EPA);
		eSat = fmax(eSat, es), eEpa = fmax(eEpa, ee);
		if (second - best > 1e-7) {
			double en = fmax(ibDistance(sat.normal, bn), ibDistance(epa.normal, bn));
			assert_le(en, 1e-7);
			eN = fmax(eN, en);
		}
	}
	print_message("box-box penetration (%d overlapping): |SAT - brute| %.1e, |EPA - brute| %.1e, normals %.1e\n", n,
	              eSat, eEpa, eN);
}

/* ---- degenerate and hand-made configurations ------------------------------------------------ */
static ibConvex make_box(ibVec3 p, ibQuat q, ibVec3 h)
{
	ibConvex c = ib_convex_make(IB_CONVEX_BOX, p, q);
	c.halfExtents = h;
	return c;
}

static ibConvex make_round(ibConvexType t, ibVec3 p, ibQuat q, double r, double l)
{
	ibConvex c = ib_convex_make(t, p, q);
	c.radius = r;
	c.halfLength = l;
	return c;
}

#define check_basic(r) check_basic_at((r), __LINE__)
static void check_basic_at(const ibConvexDistance* r, int line)
{
	g_pose = line; /* reported by assert_le */
	assert_true(isfinite(r->distance) && ibVec3_IsFinite(r->normal) && ibVec3_IsFinite(r->pointA) &&
	            ibVec3_IsFinite(r->pointB));
	assert_le(fabs(ibLength(r->normal) - 1.0), 1e-12);
	assert_le(ibLength(ibSub(ibSub(r->pointA, r->pointB), ibScale(r->distance, r->normal))), 1e-9);
}

/* Signed distance-like measure of a point to a box's surface: max_k (|x_k| - h_k) in the box frame
 * (0 on the surface, < 0 inside, > 0 outside). */
static double box_surface_offset(const ibConvex* c, ibVec3 p)
{
	ibVec3 l = ib_convex_to_local(c, p);
	return fmax(fmax(fabs(l.x) - c->halfExtents.x, fabs(l.y) - c->halfExtents.y), fabs(l.z) - c->halfExtents.z);
}

/* The SAT box-box witness points lie on the surfaces (pointA on A, pointB on B) with
 * pointA - pointB == distance * normal: aligned face-face pairs of unequal boxes (a cube on a floor
 * slab, offset far from the slab's centre), deep aligned overlaps, nearly aligned frames (edge
 * axes tie with face axes) and random deep overlaps. Regression: the face case used B's face
 * centre, off A's face by up to the lateral offset, and the edge case a clamped parameter. */
static void test_box_box_sat_points(void** state)
{
	(void)state;
	rng_seed(4242);
	const ibQuat I = IB_QUAT_IDENTITY;
	double worst = 0.0;
	int n = 0;
	for (int it = 0; it < 20000; ++it) {
		int kind = it % 4;
		ibQuat qa = I, qb = I;
		if (kind == 1) qa = qb = rand_unit_quat(); /* aligned, common random frame */
		if (kind == 2) {                           /* nearly aligned */
			qa = rand_unit_quat();
			ibVec3 ax = rand_unit_vec();
			double ang = urand(-1e-7, 1e-7), s = sin(0.5 * ang);
			qb = ibQuatNormalize(ibQuatMul(qa, (ibQuat){ax.x * s, ax.y * s, ax.z * s, cos(0.5 * ang)}));
		}
		if (kind == 3) qa = rand_unit_quat(), qb = rand_unit_quat();
		ibVec3 ha = rand_vec(0.1, 1.0), hb = rand_vec(0.1, 1.0);
		if (it % 8 == 0) hb = ibV3(6.0, 6.0, 0.5); /* a slab */
		ibConvex b = make_box(IB_VEC3_ZERO, qb, hb);
		ibVec3 off = ibV3(urand(-1.0, 1.0) * (ha.x + hb.x), urand(-1.0, 1.0) * (ha.y + hb.y),
		                  urand(-1.0, 1.0) * (ha.z + hb.z));
		ibConvex a = make_box(ibMat3_MulV(b.R, off), qa, ha);
		ibConvexDistance r;
		if (!ib_collide_box_box_sat(&a, &b, &r)) continue;
		++n;
		g_pose = it;
		check_basic(&r);
		double ea = fabs(box_surface_offset(&a, r.pointA)), eb = fabs(box_surface_offset(&b, r.pointB));
		assert_le(ea, 1e-9);
		assert_le(eb, 1e-9);
		worst = fmax(worst, fmax(ea, eb));
	}
	/* the reported case: a cube sunk 0.1 m into a slab, 2 m off the slab's centre */
	ibConvex slab = make_box(IB_VEC3_ZERO, I, ibV3(5, 5, 0.5)), cube = make_box(ibV3(2, 1, 0.9), I, ibV3(0.5, 0.5, 0.5));
	ibConvexDistance r;
	assert_true(ib_collide_box_box_sat(&cube, &slab, &r));
	check_basic(&r);
	assert_le(fabs(r.distance + 0.1), 1e-12);
	assert_le(ibDistance(r.normal, ibV3(0, 0, 1)), 1e-12);
	assert_le(fabs(box_surface_offset(&cube, r.pointA)), 1e-12);
	assert_le(fabs(box_surface_offset(&slab, r.pointB)), 1e-12);
	print_message("box-box SAT witness points (%d overlapping): max surface offset %.1e\n", n, worst);
}

static void test_degenerate(void** state)
{
	(void)state;
	const ibQuat I = IB_QUAT_IDENTITY;
	ibVec3 h1 = ibV3(1, 1, 1);
	/* face to face, aligned, at gap 0.5: a continuum of closest points */
	ibConvex a = make_box(ibV3(0, 0, 0), I, h1), b = make_box(ibV3(2.5, 0.3, -0.2), I, h1);
	ibConvexDistance r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 0.5), 1e-12);
	assert_le(ibDistance(r.normal, ibV3(-1, 0, 0)), 1e-12);
	/* exactly touching, then resting with 1e-3 penetration (SAT and EPA) */
	b.position = ibV3(2.0, 0.3, -0.2);
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance), 1e-12);
	b.position = ibV3(1.999, 0.3, -0.2);
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1e-3), 1e-12);
	r = ib_convex_query_gjk(&a, &b, true, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1e-3), 1e-12);
	assert_le(ibDistance(r.normal, ibV3(-1, 0, 0)), 1e-9);
	/* edge on edge, exactly perpendicular, crossing */
	ibQuat q45 = ibQuatFromAxisAngle(ibV3(1, 0, 0), IB_PI / 4), q45y = ibQuatFromAxisAngle(ibV3(0, 1, 0), IB_PI / 4);
	a = make_box(ibV3(0, 0, 0), q45, h1);
	b = make_box(ibV3(0, 0, 2.0 * sqrt(2.0) + 0.1), q45y, h1);
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	/* a's top edge at z = sqrt2, b's lowest edge at z = c - sqrt2 */
	assert_le(fabs(r.distance - 0.1), 1e-12);
	b.position.z = 2.0 * sqrt(2.0) - 0.1;
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.1), 1e-12);
	assert_le(ibDistance(r.normal, ibV3(0, 0, -1)), 1e-12);
	r = ib_convex_query_gjk(&a, &b, true, NULL);
	assert_le(fabs(r.distance + 0.1), 1e-9);

	/* coincident shapes of each type: finite, depth = smallest width */
	ibVec3 p0 = ibV3(0.3, -0.2, 0.1);
	ibQuat q = ibQuatNormalize(ibQ(0.9, 0.1, -0.3, 0.2));
	ibConvex s = make_round(IB_CONVEX_SPHERE, p0, q, 0.7, 0.0);
	r = ib_convex_query(&s, &s, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1.4), 1e-12);
	ibConvex bx = make_box(p0, q, ibV3(0.5, 0.8, 1.1));
	r = ib_convex_query(&bx, &bx, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1.0), 1e-12);
	r = ib_convex_query_gjk(&bx, &bx, true, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1.0), 1e-9);
	ibConvex cp = make_round(IB_CONVEX_CAPSULE, p0, q, 0.4, 0.9);
	r = ib_convex_query(&cp, &cp, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.8), 1e-12);
	/* A - A of a cylinder is the cylinder of twice the radius and height: depth min(2R, 2h) */
	ibConvex cy = make_round(IB_CONVEX_CYLINDER, p0, q, 0.6, 0.3); /* 2h = 0.6 < 2R = 1.2 */
	r = ib_convex_query(&cy, &cy, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.6), 1e-9); /* along the axis: unique */
	/* 2R < 2h: every direction perpendicular to the axis is optimal, EPA has to inscribe polygons
	 * in both rim circles (error 2R (1 - cos(pi / N)) for N points per rim, ~1e-3 for the 160
	 * vertices it may use) */
	cy.halfLength = 2.0;
	r = ib_convex_query(&cy, &cy, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1.2), 2e-3);
	assert_le(-r.distance, 1.2 + 1e-9);

	/* sphere centre at the box centre (six equal faces), at a face, an edge and a corner */
	bx = make_box(p0, q, h1);
	s = make_round(IB_CONVEX_SPHERE, p0, I, 0.5, 0.0);
	r = ib_convex_query(&s, &bx, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 1.5), 1e-12);
	ibVec3 spots[3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
	for (int k = 0; k < 3; ++k) {
		s.position = ib_convex_to_world(&bx, spots[k]);
		r = ib_convex_query(&s, &bx, NULL);
		check_basic(&r);
		assert_le(fabs(r.distance + 0.5), 1e-12);
		ibConvexDistance g = ib_convex_query_gjk(&s, &bx, true, NULL);
		check_basic(&g);
		assert_le(fabs(g.distance + 0.5), 1e-9);
	}

	/* capsules: crossing cores (depth ra + rb along the cross product), parallel overlapping */
	ibConvex c1 = make_round(IB_CONVEX_CAPSULE, ibV3(0, 0, 0), I, 0.3, 1.0);
	ibConvex c2 = make_round(IB_CONVEX_CAPSULE, ibV3(0, 0, 0), ibQuatFromAxisAngle(ibV3(1, 0, 0), IB_PI / 2), 0.2, 1.0);
	r = ib_convex_query(&c1, &c2, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.5), 1e-12);
	assert_le(fabs(fabs(r.normal.x) - 1.0), 1e-12);
	c2 = make_round(IB_CONVEX_CAPSULE, ibV3(0.6, 0, 0.5), I, 0.2, 1.0);
	r = ib_convex_query(&c1, &c2, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 0.1), 1e-12);
	assert_le(ibDistance(r.normal, ibV3(-1, 0, 0)), 1e-12);
	assert_le(fabs(r.pointA.z - 0.25), 1e-12); /* middle of the overlap [-0.5, 1] */
	/* zero-length capsule = sphere */
	c1.halfLength = 0.0;
	r = ib_convex_query(&c1, &bx, NULL);
	s = make_round(IB_CONVEX_SPHERE, c1.position, I, c1.radius, 0.0);
	ibConvexDistance rs = ib_convex_query(&s, &bx, NULL);
	assert_le(fabs(r.distance - rs.distance), 1e-12);

	/* far from the origin: coordinates 1e4, gap 1e-3 */
	ibVec3 far = ibV3(1e4, -2e4, 3e4);
	a = make_box(far, q, h1);
	b = make_box(ib_convex_to_world(&a, ibV3(2.001, 0, 0)), q, h1);
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 1e-3), 1e-10);
	/* tiny shapes (1e-3) */
	a = make_box(ibV3(0, 0, 0), q, ibV3(1e-3, 1e-3, 1e-3));
	b = make_box(ib_convex_to_world(&a, ibV3(2.5e-3, 0, 0)), q, ibV3(1e-3, 1e-3, 1e-3));
	r = ib_convex_query(&a, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 0.5e-3), 1e-15);

	/* a flat hull (a square, no volume): distance exact, overlap finite with depth >= 0 */
	static const ibVec3 quad[4] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
	ibConvex hq = ib_convex_make(IB_CONVEX_HULL, ibV3(0, 0, 0), I);
	hq.vertices = quad;
	hq.vertexCount = 4;
	b = make_box(ibV3(0.2, 0.1, 1.5), I, h1);
	r = ib_convex_query(&hq, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 0.5), 1e-12);
	b.position.z = 0.7;
	r = ib_convex_query(&hq, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.3), 1e-9);
	ibConvex hq2 = hq;
	hq2.position = ibV3(0.5, 0.5, 0.0); /* two coplanar squares: A - B is flat */
	r = ib_convex_query(&hq, &hq2, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance), 1e-9);
	/* a point-like hull (all vertices equal) */
	static const ibVec3 pt[3] = {{0.1, 0.2, 0.3}, {0.1, 0.2, 0.3}, {0.1, 0.2, 0.3}};
	ibConvex hp = ib_convex_make(IB_CONVEX_HULL, ibV3(0, 0, 0), I);
	hp.vertices = pt;
	hp.vertexCount = 3;
	b = make_box(ibV3(0, 0, 3.3), I, h1);
	r = ib_convex_query(&hp, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance - 2.0), 1e-12);
	b.position.z = 0.3;
	r = ib_convex_query(&hp, &b, NULL);
	check_basic(&r);
	assert_le(fabs(r.distance + 0.8), 1e-9); /* faces at 0.9 (x), 0.8 (y), 1 (z) */
}

/* ---- warm start: coherent motion with a cache gives the same results in fewer iterations ------ */
static void test_warm_start(void** state)
{
	(void)state;
	rng_seed(99);
	static const ibConvexType pairs[4][2] = {{IB_CONVEX_BOX, IB_CONVEX_HULL},
	                                        {IB_CONVEX_CYLINDER, IB_CONVEX_BOX},
	                                        {IB_CONVEX_CAPSULE, IB_CONVEX_HULL},
	                                        {IB_CONVEX_HULL, IB_CONVEX_HULL}};
	static TShape A, B;
	for (int p = 0; p < 4; ++p) {
		random_shape(&A, pairs[p][0]);
		random_shape(&B, pairs[p][1]);
		ibGjkCache cache = {0};
		long itCold = 0, itWarm = 0;
		double maxErr = 0.0;
		ibVec3 axis = rand_unit_vec();
		for (int f = 0; f < 2000; ++f) {
			double t = 0.002 * f;
			/* B orbits A, spinning, passing in and out of contact */
			set_pose(&A, ibV3(1, 2, 3), ibQuatFromAxisAngle(axis, 0.3 * t));
			double rr = (A.bound + B.bound) * (0.8 + 0.5 * sin(3.0 * t));
			set_pose(&B, ibAdd(A.c.position, ibV3(rr * cos(t), rr * sin(t), 0.3 * sin(2.0 * t))),
			         ibQuatFromAxisAngle(ibNormalize(ibV3(1, 1, 0)), t));
			ibConvexDistance cold = ib_convex_query_gjk(&A.c, &B.c, true, NULL);
			ibConvexDistance warm = ib_convex_query_gjk(&A.c, &B.c, true, &cache);
			check_basic(&warm);
			bool curved = pairs[p][0] == IB_CONVEX_CYLINDER;
			double e = fabs(cold.distance - warm.distance);
			assert_le(e, cold.distance > 0.0 ? TOL : (curved ? TOL_CURVED_EPA : TOL_EPA));
			maxErr = fmax(maxErr, e);
			itCold += cold.iterations;
			itWarm += warm.iterations;
		}
		print_message("warm start %-8s-%-8s: iterations %ld cold, %ld warm; max |difference| %.1e\n",
		              type_name(pairs[p][0]), type_name(pairs[p][1]), itCold, itWarm, maxErr);
		assert_true(itWarm < itCold);
	}
}

/* ---- libccd (Debian libccd-dev) as a second implementation ---------------------------------- */
#ifdef IBDYN_HAVE_CCD
static void ccd_support_cb(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out)
{
	ibVec3 p = t_support((const TShape*)obj, ibV3(dir->v[0], dir->v[1], dir->v[2]));
	out->v[0] = p.x, out->v[1] = p.y, out->v[2] = p.z;
}

static void test_libccd(void** state)
{
	(void)state;
	const int n = IBDYN_SLOW_TESTS ? N_POSES : 500; /* >= 1e4 per pair type in the normal build (issue 5) */
	static TShape A, B;
	for (int ta = 0; ta <= (int)IB_CONVEX_HULL; ++ta)
		for (int tb = ta; tb <= (int)IB_CONVEX_HULL; ++tb) {
			rng_seed(0xCCDull + 16ull * (uint64_t)ta + (uint64_t)tb);
			bool curved = ta != IB_CONVEX_BOX && ta != IB_CONVEX_HULL;
			curved = curved || (tb != IB_CONVEX_BOX && tb != IB_CONVEX_HULL);
			ccd_t ccd;
			CCD_INIT(&ccd);
			ccd.support1 = ccd_support_cb;
			ccd.support2 = ccd_support_cb;
			ccd.max_iterations = 1000;
			ccd.epa_tolerance = 1e-10;
			int mismatch = 0, nPen = 0, nFail = 0, nCmp = 0;
			double maxDepth = 0.0, maxDir = 0.0;
			for (int i = 0; i < n; ++i) {
				g_pose = i;
				random_pose_pair(&A, (ibConvexType)ta, &B, (ibConvexType)tb, 1.2);
				ibConvexDistance r = ib_convex_query(&A.c, &B.c, NULL);
				if (fabs(r.distance) > 1e-6) {
					int hit = ccdGJKIntersect(&A, &B, &ccd);
					if ((hit != 0) != (r.distance < 0.0)) ++mismatch;
				}
				if (r.distance < -1e-3) {
					++nPen;
					ccd_real_t depth_ccd;
					ccd_vec3_t dir, pos;
					if (ccdGJKPenetration(&A, &B, &ccd, &depth_ccd, &dir, &pos) != 0) {
						++nFail;
						continue;
					}
					/* dir: direction to move B (by depth) to separate, i.e. -normal. libccd's EPA depth
					 * is a lower bound of the MTD and the overlap along its direction (supports written
					 * here) an upper bound: ours must lie in that bracket. libccd 2.1 returns zero depths
					 * on degenerate GJK simplices (danfis/libccd#25), a trivially true lower bound. */
					ibVec3 d = ibNormalize(ibV3(dir.v[0], dir.v[1], dir.v[2]));
					if (!(ibLength(d) > 0.5)) { /* degenerate libccd answer: zero direction */
						++nFail;
						continue;
					}
					double along = t_overlap(&A, &B, ibNeg(d)), depth = -r.distance;
					assert_le(depth, along + TOL);
					assert_le((double)depth_ccd, depth + (curved ? TOL_CURVED_EPA : TOL));
					if (!(isfinite((double)depth_ccd) && depth_ccd > 0.0 && along - (double)depth_ccd <= 1e-9)) {
						++nFail; /* bracket not tight: libccd did not converge (or hit the bug) */
						continue;
					}
					/* converged libccd answer: compare depth and direction */
					double ed = fabs((double)depth_ccd - depth);
					maxDepth = fmax(maxDepth, ed);
					++nCmp;
					if (ed < 1e-9) maxDir = fmax(maxDir, ibDistance(d, ibNeg(r.normal)));
					assert_le(ed, curved ? TOL_EPA : 1e-9);
				}
			}
			print_message("libccd %-8s-%-8s: intersect mismatches %d/%d | penetration %d, inside libccd's bracket; "
			              "bracket tight (< 1e-9) %d, not %d: max |depth diff| %.1e, max |dir diff| %.1e\n",
			              type_name((ibConvexType)ta), type_name((ibConvexType)tb), mismatch, n, nPen, nCmp, nFail,
			              maxDepth, maxDir);
			assert_int_equal(mismatch, 0);
		}
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_SPHERE_SPHERE),     cmocka_unit_test(test_SPHERE_BOX),
	    cmocka_unit_test(test_SPHERE_CAPSULE),    cmocka_unit_test(test_SPHERE_CYLINDER),
	    cmocka_unit_test(test_SPHERE_HULL),       cmocka_unit_test(test_BOX_BOX),
	    cmocka_unit_test(test_BOX_CAPSULE),       cmocka_unit_test(test_BOX_CYLINDER),
	    cmocka_unit_test(test_BOX_HULL),          cmocka_unit_test(test_CAPSULE_CAPSULE),
	    cmocka_unit_test(test_CAPSULE_CYLINDER),  cmocka_unit_test(test_CAPSULE_HULL),
	    cmocka_unit_test(test_CYLINDER_CYLINDER), cmocka_unit_test(test_CYLINDER_HULL),
	    cmocka_unit_test(test_HULL_HULL),         cmocka_unit_test(test_support_aabb),
	    cmocka_unit_test(test_box_box_penetration), cmocka_unit_test(test_box_box_sat_points),
	    cmocka_unit_test(test_degenerate),
	    cmocka_unit_test(test_warm_start),
#ifdef IBDYN_HAVE_CCD
	    cmocka_unit_test(test_libccd),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
