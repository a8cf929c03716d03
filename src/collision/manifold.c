/* Contact regions of convex pairs (§4.5.1.3, §4.5.2.1; digest §15.5 item 3), after the SOLID
 * extension of the thesis: the exact query (ib_convex_query: distance or penetration depth, normal
 * n, closest/deepest points) gives the contact plane; the support features of A along -n and of B
 * along +n (support_feature.c: vertex, edge or face, within a height band) are projected into
 * that plane and intersected there (clip.c): face-face by Sutherland–Hodgman, edge-face by
 * clipping the segment, parallel edge-edge by interval overlap, a vertex giving the single query
 * point. Every vertex of the planar region is lifted back onto both surfaces along n (exact
 * line-shape intersection) and kept if the separation of the pair is <= tolerance; this works as
 * well when the shapes interpenetrate (§4.2). At most IB_MANIFOLD_MAX_POINTS points remain after
 * the area-greedy reduction, which starts from the deepest point. See docs/collision.md. */
#include <math.h>

#include "collision/clip.h"
#include "math/fminmax.h"
#include "collision/collision_world.h"
#include "collision/manifold_internal.h"
#include "collision/support_feature.h"

static inline double len2(double x, double y) { return sqrt(x * x + y * y); }

#define SALT_A 1u
#define SALT_B 2u
#define REGION_CAP (2 * IB_FEATURE_MAX + 8)

static double feature_band(double tolerance, double distance) { return ib_manifold_feature_band(tolerance, distance); }

uint32_t ib_manifold_feature_code(const uint32_t* id, int count, uint32_t salt)
{
	if (count == 1) return ib_feature_code(salt, id[0], 0u);
	uint32_t x = 0u;
	for (int i = 0; i < count; ++i) x ^= ib_feature_code(salt, id[i], 0u);
	return ib_feature_code(salt + 100u, x, (uint32_t)count);
}

/* Order-independent code of a whole feature (for single-point contacts). */
static uint32_t feature_code_all(const ibSupportFeature* f, uint32_t salt)
{
	return ib_manifold_feature_code(f->id, f->count, salt);
}

static int project(const ibSupportFeature* f, uint32_t salt, ibVec3 o, ibVec3 t1, ibVec3 t2, ibClipPoint* p,
                   double* scale)
{
	for (int i = 0; i < f->count; ++i) {
		ibVec3 r = ibSub(f->p[i], o);
		p[i] = (ibClipPoint){ibDot(r, t1), ibDot(r, t2), ib_feature_code(salt, f->id[i], 0u)};
		*scale = ib_fmax(*scale, ib_fmax(fabs(p[i].x), fabs(p[i].y)));
	}
	return f->count;
}

typedef struct Region {
	int count;
	ibManifoldPoint pt[REGION_CAP];
	ibClipPoint xy[REGION_CAP];
	double sep[REGION_CAP];
} Region;

/* Drop the region vertices (in polygon order) that lie within tol of the line through their two
 * neighbours: two nearly parallel edges of aligned boxes cross at a point that wanders along the
 * edge from step to step; it adds nothing to the support polygon (less than tol) but is one more,
 * nearly redundant, contact point with a feature key that keeps changing. */
void ib_manifold_drop_collinear(ibManifoldPoint* pt, ibClipPoint* xy, double* sep, int* count, double tol)
{
	int c = *count;
	for (int i = 0; c > 4 && i < c;) {
		int p = i > 0 ? i - 1 : c - 1, n = i + 1 < c ? i + 1 : 0;
		double ex = xy[n].x - xy[p].x, ey = xy[n].y - xy[p].y;
		double l = sqrt(ex * ex + ey * ey);
		double d = l > 0.0 ? fabs(ex * (xy[i].y - xy[p].y) - ey * (xy[i].x - xy[p].x)) / l : 0.0;
		if (!(d < tol)) {
			++i;
			continue;
		}
		for (int k = i + 1; k < c; ++k) {
			pt[k - 1] = pt[k];
			xy[k - 1] = xy[k];
			sep[k - 1] = sep[k];
		}
		--c;
	}
	*count = c;
}

static void drop_collinear(Region* r, double tol) { ib_manifold_drop_collinear(r->pt, r->xy, r->sep, &r->count, tol); }

/* Keep the best points of the region in out (reduction when there are too many). */
int ib_manifold_emit(const ibManifoldPoint* pt, const ibClipPoint* xy, const double* sep, int count, ibManifold* out)
{
	int keep[REGION_CAP];
	int m = ib_reduce_region(xy, sep, count, IB_MANIFOLD_MAX_POINTS, keep);
	for (int i = 0; i < m; ++i) out->points[i] = pt[keep[i]];
	out->pointCount = m;
	return m;
}

static int emit(const Region* r, ibManifold* out) { return ib_manifold_emit(r->pt, r->xy, r->sep, r->count, out); }

static void push(Region* r, ibVec3 pa, ibVec3 pb, double sep, ibClipPoint xy)
{
	if (r->count >= REGION_CAP) return;
	r->pt[r->count] = (ibManifoldPoint){pa, pb, sep, xy.key};
	r->xy[r->count] = xy;
	r->sep[r->count] = sep;
	++r->count;
}

/* face_wide(...) == (lu > e && lv > e && fabs(area) / ib_fmax(lu, lv) > wd) with lu = sqrt(su), lv = sqrt(sv)
 * (su, sv the squared edge lengths as len2 sums them, e, wd > 0): the squares decide outside a margin
 * of 1e-12 (lu and the width are within ~2e-16 relative of sqrt(su) and |area| / sqrt(max(su, sv)); once
 * su, sv > e^2 >= 1.6e-17 the bounds are far from underflow), else the exact form; NaNs take the exact
 * form too. */
static inline bool face_wide(double su, double sv, double area, double e, double wd)
{
	const double lo = 1.0 - 1e-12, hi = 1.0 + 1e-12, e2 = e * e;
	if (!(su > e2 * hi && sv > e2 * hi)) { /* an edge not clearly longer than e (or NaN): exact */
		double lu = sqrt(su), lv = sqrt(sv);
		return lu > e && lv > e && fabs(area) / ib_fmax(lu, lv) > wd;
	}
	double a2 = area * area, b2 = wd * wd * (su > sv ? su : sv);
	if (a2 > b2 * hi) return true;
	if (a2 < b2 * lo) return false;
	return fabs(area) / ib_fmax(sqrt(su), sqrt(sv)) > wd;
}

/* The projected support feature of a box as a convex polygon without the general 2-D hull: a face (4
 * corners whose ids, in increasing order, differ in two bits: order 0 1 3 2 around the face), turned
 * counter-clockwise from its smallest (x, y) point like ib_hull2d. Returns the count, or -1 when the general hull is needed (a vertex or an edge,
 * 3 corners, a face so thin or seen so obliquely that ib_hull2d would merge or flatten it). */
int ib_manifold_box_face_polygon(int count, const uint32_t* id, ibClipPoint* p, double eps, double width)
{
	if (count != 4) return -1;
	uint32_t x1 = id[0] ^ id[1], x2 = id[0] ^ id[2];
	if ((x1 & (x1 - 1u)) != 0u || (x2 & (x2 - 1u)) != 0u || x1 == x2 || id[3] != (id[0] ^ x1 ^ x2)) return -1;
	ibClipPoint q[4] = {p[0], p[1], p[3], p[2]};
	/* a parallelogram: area and the two edge lengths */
	double ux = q[1].x - q[0].x, uy = q[1].y - q[0].y, vx = q[3].x - q[0].x, vy = q[3].y - q[0].y;
	double area = ux * vy - uy * vx;
	/* widths area / |edge|: the hull's near-duplicate merge (eps) and sliver test (width), with room:
	 * lu > 4 eps, lv > 4 eps, |area| / max(lu, lv) > 4 max(width, eps) (lu, lv = len2 of the edges),
	 * decided from the squares unless within 1e-12 of the bound (the square roots and the division
	 * are within a few roundings of the exact values; thin faces are rare) */
	if (!face_wide(ux * ux + uy * uy, vx * vx + vy * vy, area, 4.0 * eps, 4.0 * (width > eps ? width : eps)))
		return -1;
	/* clockwise (!(area > 0)): reversed, q[1] and q[3] swapped (an order table: no branch) */
	static const int order[2][4] = {{0, 1, 2, 3}, {0, 3, 2, 1}};
	const int* o = order[!(area > 0.0)];
	/* start at the smallest (x, y), as the monotone chain does: the same polygon as ib_hull2d's, so
	 * the clipping and everything after it are bit for bit those of the general path */
	int s0 = 0;
	for (int i = 1; i < 4; ++i) {
		const ibClipPoint *qi = &q[o[i]], *qs = &q[o[s0]];
		int lt = (qi->x < qs->x) | ((qi->x == qs->x) & (qi->y < qs->y));
		s0 = lt ? i : s0;
	}
	for (int i = 0; i < 4; ++i) p[i] = q[o[(s0 + i) & 3]];
	return 4;
}

static int manifold_build(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache, bool boxFaces,
                          ibManifold* out);

/* The contact normal of two boxes near a face contact. A normal off a face normal by an angle a
 * raises that face's far corners by a x its size: beyond the feature band (~eps_c) the face is no
 * longer a feature and the region shrinks to an edge or one point (a resting box on a 100 m ground
 * kept 1 or 2 of its 4 points). That happens with GJK's normal of boxes apart by less than eps_c
 * (off by ~1e-6 rad) and with the SAT's face axis of the small box when it is tilted by ~1e-6 rad
 * against the ground. So: when they penetrate, the face axis of a much larger box (4 x) if its depth
 * is within half the tolerance of the query's; else any face axis that separates them by the
 * query's distance. */
/* Face axis k (0..2: A's, 3..5: B's) as a normal from B to A, like the query's normal (t: the centre offset
 * along it). */
static inline ibVec3 face_axis_normal(const ibConvex* a, const ibConvex* b, const double t[6], int k)
{
	ibVec3 L = ib_mat3_col(k < 3 ? &a->R : &b->R, k % 3);
	const ibVec3 signedL[2] = {ibNeg(L), L}; /* t[k] >= 0 ? L : -L without a branch */
	return signedL[t[k] >= 0.0];
}

/* ibDistance(a, b) < r (r = 1e-2 or 1e-4), from the squared distance outside a margin of 1e-12 (the square
 * root is correctly rounded), else computed */
static inline bool distance_below(ibVec3 a, ibVec3 b, double r)
{
	double d2 = ibLengthSq(ibSub(a, b)), r2 = r * r;
	if (d2 < r2 * (1.0 - 1e-12)) return true;
	if (d2 > r2 * (1.0 + 1e-12)) return false;
	return ibDistance(a, b) < r;
}

void ib_manifold_box_face_select(const ibConvex* a, const ibConvex* b, const double sep[6], const double t[6],
                                 double tolerance, ibConvexDistance* q)
{
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	double scale = ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2];
	double ma = ib_fmax(ha[0], ib_fmax(ha[1], ha[2])), mb = ib_fmax(hb[0], ib_fmax(hb[1], hb[2]));
	int big = ma >= 4.0 * mb ? 0 : mb >= 4.0 * ma ? 1 : -1; /* -1: no box much larger */
	/* the first axis of the largest separation (of all, and of the big box's), then its normal: the axes'
	 * normals are made for those two only (fewer unpredictable branches than one per axis) */
	double best = -INFINITY, bestBig = -INFINITY;
	int bestK = -1, bigK = -1;
	for (int k = 0; k < 6; ++k) {
		bool up = sep[k] > best, upBig = k / 3 == big && sep[k] > bestBig;
		best = sep[k] > best ? sep[k] : best; /* = up ? sep[k] : best, without a branch */
		bestK = up ? k : bestK;
		bestBig = upBig ? sep[k] : bestBig;
		bigK = upBig ? k : bigK;
	}
	ibVec3 bestN = q->normal, bigN = q->normal;
	if (bestK >= 0) bestN = face_axis_normal(a, b, t, bestK);
	if (bigK >= 0) bigN = face_axis_normal(a, b, t, bigK);
	double rnd = 1e-9 * scale;
	/* only a small correction (at most 1e-4 rad, 1e-2 when touching to ~1e-7 of the size): other contacts keep the query's normal */
	if (big >= 0 && q->distance <= 0.0 && bestBig >= q->distance - 0.5 * tolerance - rnd &&
	    distance_below(bigN, q->normal, 1e-4)) {
		q->normal = bigN;
		q->distance = ib_fmin(q->distance, bestBig);
	} else if (best >= q->distance - rnd && distance_below(bestN, q->normal, fabs(q->distance) <= 1e-7 * scale ? 1e-2 : 1e-4)) {
		/* touching (|d| <= 1e-7 x size): GJK's normal of two faces closer than ~1e-11 m is
		 * ill-conditioned (a flat box 2e-10 m above the ground got one 2.7e-4 rad off, which lifted
		 * three of its four corners out of the band); a face axis that separates them by the query's
		 * distance is the contact plane */
		q->normal = bestN;
	}
}

void ib_manifold_box_face_normal(const ibConvex* a, const ibConvex* b, double tolerance, ibConvexDistance* q)
{
	ibVec3 T = ibSub(a->position, b->position);
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	double sep[6], t[6];
	for (int s = 0; s < 2; ++s)
		for (int i = 0; i < 3; ++i) {
			ibVec3 L = ibMat3_Column(s == 0 ? a->R : b->R, i);
			double r = 0.0;
			for (int k = 0; k < 3; ++k)
				r += ha[k] * fabs(ibDot(ibMat3_Column(a->R, k), L)) + hb[k] * fabs(ibDot(ibMat3_Column(b->R, k), L));
			t[3 * s + i] = ibDot(T, L);
			sep[3 * s + i] = fabs(t[3 * s + i]) - r;
		}
	ib_manifold_box_face_select(a, b, sep, t, tolerance, q);
}

/* how far apart the shapes are along the unit direction n (from B to A), by their support functions */
static double support_separation(const ibConvex* a, const ibConvex* b, ibVec3 n)
{
	return ibDot(ibSub(ib_convex_support(a, ibNeg(n)), ib_convex_support(b, n)), n);
}

/* An exact direction L (unit, oriented as q->normal: from B to A) along which the shapes are sep apart replaces
 * GJK's normal where it separates them by the query's distance (to rounding, 1e-9 of scale) and lies within
 * 1e-4 rad of it, 1e-2 when they touch to ~1e-7 of scale (box_face_normal_other, cylinder_pair_normal).
 * Where they touch, GJK's normal can point anywhere: its v, ~1e-10 m, is rounding in a simplex of the shapes'
 * size (two parallel logs side by side, 1 m long and touching to 6e-10 m, got a normal along their axes from a
 * warm-started GJK: the manifold's point was 8.5e-3 m deep along it, and a resting 3-2-1 pile gained 3e-3 J in
 * one step). Such a normal does not separate the shapes by the query's distance, measured with their support
 * functions; L, which does, replaces it however far it turns. */
static void exact_normal(const ibConvex* a, const ibConvex* b, ibConvexDistance* q, ibVec3 L, double sep, double scale)
{
	if (!(sep >= q->distance - 1e-9 * scale)) return;
	const bool touching = fabs(q->distance) <= 1e-7 * scale;
	if (distance_below(L, q->normal, touching ? 1e-2 : 1e-4)) {
		q->normal = L;
		return;
	}
	if (!touching) return;
	ibVec3 n = q->normal;
	double sepN = support_separation(a, b, n);
	if (sepN < q->distance - 1e-9 * scale) q->normal = L;
}

/* The same for a box against another convex shape (a cylinder or capsule lying on a box, a hull): GJK's
 * normal of a cylinder touching a face to ~1e-9 m was off by 1e-5 rad, and the band then held one of its
 * two rims (a cylinder rolling at 1 kHz dipped by 3e-6 m each time). The box's face axis nearest the
 * normal (within 1e-4 rad, 1e-2 when touching to ~1e-7 of the size) replaces it where it separates the
 * shapes by the query's distance (to rounding). */
static void box_face_normal_other(const ibConvex* a, const ibConvex* b, ibConvexDistance* q)
{
	const bool boxA = a->type == IB_CONVEX_BOX;
	const ibConvex* box = boxA ? a : b;
	const ibConvex* other = boxA ? b : a;
	ibVec3 m = boxA ? q->normal : ibNeg(q->normal); /* from the other shape to the box */
	double h[3] = {box->halfExtents.x, box->halfExtents.y, box->halfExtents.z};
	int k = 0;
	double best = -1.0;
	for (int i = 0; i < 3; ++i) {
		double c = fabs(ibDot(ib_mat3_col(&box->R, i), m));
		if (c > best) best = c, k = i;
	}
	ibVec3 L = ib_mat3_col(&box->R, k);
	if (ibDot(L, m) < 0.0) L = ibNeg(L);
	ibVec3 s = ib_convex_support(other, L);
	double dL = ibDot(ibSub(box->position, s), L) - h[k];
	exact_normal(a, b, q, boxA ? L : ibNeg(L), dL, 2.0 * (h[0] + h[1] + h[2]) + ibDistance(s, box->position));
}

/* [IMPL] Two cylinders side to side: GJK's normal between two parallel cylinders lying side by side leaned by
 * ~1e-3 rad (touching to ~1e-9 m), so that one of the region's points was no round point (contact_set.c
 * round_point wants n across the axis) and its carried point, on a cylinder spinning about its axis, pushed the
 * other away. The exact direction across both axes replaces it (exact_normal): for parallel axes
 * (IB_CYLINDERS_CROSSING) the line of the centres without its part along the axes, else z_a x z_b. */
static void cylinder_pair_normal(const ibConvex* a, const ibConvex* b, ibConvexDistance* q)
{
	ibVec3 za = ib_mat3_col(&a->R, 2), zb = ib_mat3_col(&b->R, 2), L = ibCross(za, zb);
	const bool parallel = ibLength(L) <= IB_CYLINDERS_CROSSING;
	if (parallel) {
		ibVec3 d = ibSub(a->position, b->position);
		L = ibMulAdd(d, -ibDot(d, za), za); /* from B to A */
	}
	double l = ibLength(L);
	if (!(l > 0.0)) return;
	L = ibScale(1.0 / l, L);
	/* z_a x z_b as q->normal: from B to A (the line of the centres is that already, also where GJK's normal of
	 * touching shapes points anywhere, see exact_normal) */
	if (!parallel && ibDot(L, q->normal) < 0.0) L = ibNeg(L);
	double sep = support_separation(a, b, L);
	exact_normal(a, b, q, L, sep, 2.0 * (a->radius + a->halfLength + b->radius + b->halfLength) + ibDistance(a->position, b->position));
}

int ib_manifold_build(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache, ibManifold* out)
{
	if (a->type == IB_CONVEX_BOX && b->type == IB_CONVEX_BOX) { /* the box-box path (box_box.c) */
		int k = ib_box_box_manifold(a, b, tolerance, cache ? &cache->satAxis : NULL, out);
		if (k >= 0) return k;
	}
	return manifold_build(a, b, tolerance, cache, true, out);
}

int ib_manifold_build_reference(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache,
                                ibManifold* out)
{
	return manifold_build(a, b, tolerance, cache, false, out);
}

static int manifold_build(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache, bool boxFaces,
                          ibManifold* out)
{
	out->pointCount = 0;
	ibConvexDistance q;
	if (a->type == IB_CONVEX_BOX && b->type == IB_CONVEX_BOX) {
		/* SAT first: most broadphase pairs of boxes are apart by more than the tolerance along an axis,
		 * and those need no GJK */
		int sat = ib_collide_box_box_sat_cached(a, b, ib_fmax(tolerance, 0.0), cache ? &cache->satAxis : NULL, &q);
		if (sat < 0) return 0;
		if (sat == 0) q = ib_convex_query_gjk(a, b, true, cache);
		ib_manifold_box_face_normal(a, b, ib_fmax(tolerance, 0.0), &q);
	} else {
		q = ib_convex_query(a, b, cache);
		if (boxFaces && (a->type == IB_CONVEX_BOX) != (b->type == IB_CONVEX_BOX) && q.distance <= tolerance)
			box_face_normal_other(a, b, &q);
		else if (boxFaces && a->type == IB_CONVEX_CYLINDER && b->type == IB_CONVEX_CYLINDER && q.distance <= tolerance)
			cylinder_pair_normal(a, b, &q);
	}
	if (!(q.distance <= tolerance)) return 0;
	ibVec3 n = q.normal;
	out->normal = n;
	double band = feature_band(tolerance, q.distance);
	ibSupportFeature fa, fb; /* ~2 kB each; with the region ~16 kB of stack */
	ib_support_feature(a, ibNeg(n), band, &fa);
	ib_support_feature(b, n, band, &fb);

	ibVec3 t1 = ibPerpendicular(n), t2 = ibCross(n, t1);
	ibVec3 o = q.pointB;
	ibClipPoint pa[IB_FEATURE_MAX], pb[IB_FEATURE_MAX], segB[2];
	ibClipPoint clip[REGION_CAP];
	double scale = 1.0;
	int na = project(&fa, SALT_A, o, t1, t2, pa, &scale);
	int nb = project(&fb, SALT_B, o, t1, t2, pb, &scale);
	double eps = 1e-9 * scale;
	/* slivers narrower than 1e-6 x size (e.g. a cylinder side plus a rim sample next to it) are
	 * segments: clipping against them would be ill-conditioned */
	int fa4 = boxFaces && a->type == IB_CONVEX_BOX ? ib_manifold_box_face_polygon(fa.count, fa.id, pa, eps, 1e-6 * scale) : -1;
	int fb4 = boxFaces && b->type == IB_CONVEX_BOX ? ib_manifold_box_face_polygon(fb.count, fb.id, pb, eps, 1e-6 * scale) : -1;
	na = fa4 > 0 ? fa4 : ib_hull2d(pa, na, eps, 1e-6 * scale);
	nb = fb4 > 0 ? fb4 : ib_hull2d(pb, nb, eps, 1e-6 * scale);

	/* the planar region: clip[] on A's side, partner points on B's side where they differ */
	int nc = 0;
	const ibClipPoint* onB = clip;
	if (na >= 2 && nb >= 2) {
		if (na == 2 && nb == 2) {
			nc = ib_overlap_segments(pa, pb, ib_fmax(tolerance, 0.0) + eps, clip, segB);
			onB = segB;
		} else if (na == 2) {
			nc = ib_clip_segment(pa, pb, nb, eps, clip);
		} else if (nb == 2) {
			nc = ib_clip_segment(pb, pa, na, eps, clip);
		} else {
			nc = ib_clip_polygon(pa, na, pb, nb, eps, clip);
		}
	}

	Region reg;
	reg.count = 0;
	double minSep = INFINITY;
	ibVec3 dA = ibNeg(n);
	for (int i = 0; i < nc; ++i) {
		ibVec3 xa = ibAdd(o, ibAdd(ibScale(clip[i].x, t1), ibScale(clip[i].y, t2)));
		ibVec3 xb = ibAdd(o, ibAdd(ibScale(onB[i].x, t1), ibScale(onB[i].y, t2)));
		double nearA, farA, nearB, farB; /* far ends unused: a thin shape may be passed through */
		if (!ib_feature_lift(a, &fa, xa, &nearA, &farA) &&
		    !ib_manifold_vertex_lift(fa.p, fa.count, xa, dA, 1e-9 * (1.0 + fa.size), &nearA))
			continue;
		if (!ib_feature_lift(b, &fb, xb, &nearB, &farB) &&
		    !ib_manifold_vertex_lift(fb.p, fb.count, xb, n, 1e-9 * (1.0 + fb.size), &nearB))
			continue;
		ibVec3 pA = ibMulAdd(xa, nearA, dA), pB = ibMulAdd(xb, nearB, n);
		double sep = ibDot(ibSub(pA, pB), n);
		double lateral = ibLength(ibMulAdd(ibSub(pA, pB), -sep, n));
		/* closer than the tolerance: |pA - pB| when apart, the lateral offset (parallel edges) when
		 * penetrating */
		if (!(sep <= tolerance) || len2(ib_fmax(sep, 0.0), lateral) > ib_fmax(tolerance, 0.0) + eps) continue;
		push(&reg, pA, pB, sep, clip[i]);
		minSep = ib_fmin(minSep, sep);
	}
	if (nc > 4) drop_collinear(&reg, ib_fmax(tolerance, 0.0));
	/* the query's deepest pair when no region vertex is as deep (vertex features, curved or
	 * non-planar features); for planar face pairs it is a region vertex already. Like the region's
	 * points it is lifted onto both surfaces along n. */
	if (reg.count == 0 || q.distance < minSep - 1e-9 * scale) {
		ibVec3 r = ibSub(q.pointA, o);
		uint32_t key = ib_feature_code(3u, feature_code_all(&fa, SALT_A), feature_code_all(&fb, SALT_B));
		ibClipPoint xy = {ibDot(r, t1), ibDot(r, t2), key};
		/* lifted along n through the deepest of: the query's points, the vertices of small features */
		ibVec3 cand[2 + 2 * IB_FEATURE_MAX];
		int ncand = 0;
		cand[ncand++] = q.pointA;
		cand[ncand++] = q.pointB;
		for (int k = 0; k < nb && nb <= 8; ++k) cand[ncand++] = ibAdd(o, ibAdd(ibScale(pb[k].x, t1), ibScale(pb[k].y, t2)));
		for (int k = 0; k < na && na <= 8; ++k) cand[ncand++] = ibAdd(o, ibAdd(ibScale(pa[k].x, t1), ibScale(pa[k].y, t2)));
		ibVec3 pA = q.pointA, pB = q.pointB;
		double best = INFINITY;
		for (int k = 0; k < ncand; ++k) {
			double nearA, farA, nearB, farB;
			if (!ib_feature_lift(a, &fa, cand[k], &nearA, &farA) || !ib_feature_lift(b, &fb, cand[k], &nearB, &farB))
				continue;
			ibVec3 la = ibMulAdd(cand[k], nearA, dA), lb = ibMulAdd(cand[k], nearB, n);
			double sep = ibDot(ibSub(la, lb), n);
			/* on both surfaces, unlike the query's points for curved shapes, whose GJK/EPA points can
			 * be off the surface by ~1e-5 (and far more when deeply penetrating) */
			if (sep <= tolerance && sep < best) {
				best = sep, pA = la, pB = lb;
				ibVec3 rr = ibSub(cand[k], o);
				xy.x = ibDot(rr, t1), xy.y = ibDot(rr, t2);
			}
		}
		push(&reg, pA, pB, ibDot(ibSub(pA, pB), n), xy);
	}
	return emit(&reg, out);
}

int ib_manifold_plane(const ibConvex* a, ibVec3 n, double offset, double tolerance, ibManifold* out)
{
	out->pointCount = 0;
	ibVec3 s = ib_convex_support(a, ibNeg(n));
	double sep0 = ibDot(n, s) - offset;
	if (!(sep0 <= tolerance)) return 0;
	out->normal = n;
	ibSupportFeature f;
	ib_support_feature(a, ibNeg(n), feature_band(tolerance, sep0), &f);
	ibVec3 t1 = ibPerpendicular(n), t2 = ibCross(n, t1);
	ibClipPoint p[IB_FEATURE_MAX];
	double scale = 1.0;
	int np = project(&f, SALT_A, s, t1, t2, p, &scale);
	for (int i = 0; i < np; ++i) p[i].key = (uint32_t)i; /* index into f, for the hull */
	np = ib_hull2d(p, np, 1e-9 * scale, 0.0);
	Region reg;
	reg.count = 0;
	double minSep = INFINITY;
	for (int i = 0; i < np; ++i) {
		int k = (int)p[i].key;
		double sep = ibDot(n, f.p[k]) - offset;
		if (!(sep <= tolerance)) continue;
		ibClipPoint xy = p[i];
		xy.key = ib_feature_code(SALT_A, f.id[k], 0u);
		push(&reg, f.p[k], ibMulAdd(f.p[k], -sep, n), sep, xy);
		minSep = ib_fmin(minSep, sep);
	}
	if (reg.count == 0 || sep0 < minSep - 1e-9 * scale)
		push(&reg, s, ibMulAdd(s, -sep0, n), sep0, (ibClipPoint){0.0, 0.0, feature_code_all(&f, SALT_A)});
	return emit(&reg, out);
}
