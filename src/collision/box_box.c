/* Contact regions of two boxes (§4.5.1.3, §4.5.2.1; the box-specific path of manifold.c). The steps are
 * those of the general path for a box pair, each done the box way but with the general path's arithmetic
 * wherever it decides or computes a point, so that the region is the general path's
 * (ib_manifold_build_reference) bit for bit in practice (to rounding guaranteed; keys included):
 *   1. the separating-axis test on the 15 axes with C = A^T B computed once (face axes A_i, B_j; edge axes
 *      A_i x B_j; nearly parallel edges, |A_i x B_j| <= 1e-9, are covered by the face axes): rejection
 *      beyond the tolerance (a cached separating face axis first, from its row of C only; edge axes that a
 *      bound from C shows to overlap more than the best face axis are not evaluated), the penetration
 *      depth and normal (B -> A), the witness points (ib_box_box_sat_witness; pointB is the contact
 *      plane's origin as in the general path: the lifts start from that plane, and the nudge of points
 *      near the side of a box seen nearly edge-on depends on where they start);
 *   2. the face-normal choice of the general path (ib_manifold_box_face_select) from the face axes'
 *      separations, the search's face overlaps (to rounding the general path's sums);
 *   3. the support features: the corners within the height band along -n (A) and +n (B);
 *   4. their projections into the contact plane (face: the 4 corners in polygon order, edge: a segment,
 *      vertex) and the planar region: Sutherland–Hodgman of the two faces, a segment clipped by a face,
 *      two segments overlapping or crossing (clip.c, with the general path's feature keys);
 *   5. every region vertex lifted onto both boxes along n (line-box slabs), kept when the pair's
 *      separation there is <= tolerance; the deepest single point when no vertex is as deep (for a vertex
 *      feature only along the witness and vertex lines); the area-greedy reduction.
 * Pairs apart by less than the tolerance (their distance needs GJK) and features that need the general 2-D
 * hull (3 corners, a face seen edge-on or thinner than the hull's sliver width) go to the general path
 * (-1). [IMPL] (the dissertation's SOLID-based regions have no box special case). */
#include <math.h>

#include "collision/manifold_internal.h"
#include "math/fminmax.h"

#define SALT_A 1u
#define SALT_B 2u
#define CAP 24 /* region vertices: at most 8 from two quadrilaterals, + the deepest point */

static inline double len2(double x, double y) { return sqrt(x * x + y * y); }

/* ---- 1. separating axes ----------------------------------------------------------------------- */

typedef struct Sat {
	double C[3][3], X[3][3], tA[3], tB[3]; /* C[i][j] = A_i . B_j, X = |C|, T = pA - pB in both frames */
	double faceOv[6];                      /* overlaps of the face axes A_0..2, B_0..2 */
} Sat;

static const int NX[3] = {1, 2, 0}, PV[3] = {2, 0, 1}; /* (i + 1) % 3, (i + 2) % 3 */

static inline __attribute__((always_inline)) double face_overlap(const Sat* s, const double ha[3], const double hb[3],
                                                                 int k)
{
	if (k < 3) return ha[k] + (hb[0] * s->X[k][0] + hb[1] * s->X[k][1] + hb[2] * s->X[k][2]) - fabs(s->tA[k]);
	int j = k - 3;
	return (ha[0] * s->X[0][j] + ha[1] * s->X[1][j] + ha[2] * s->X[2][j]) + hb[j] - fabs(s->tB[j]);
}

/* Overlap along the edge axis A_i x B_j (t: the centre offset along it, r: the two radii) with the
 * arithmetic of the general path's search (sat_search in collide_special.c), so that its decisions are
 * the same; false for nearly parallel edges (no axis). */
static inline __attribute__((always_inline)) bool edge_overlap(const ibConvex* a, const ibConvex* b, const Sat* s,
                                                               const double ha[3], const double hb[3], int i, int j,
                                                               double* ov, double* t, double* r)
{
	int i1 = NX[i], i2 = PV[i], j1 = NX[j], j2 = PV[j];
	ibVec3 L = ibCross(ib_mat3_col(&a->R, i), ib_mat3_col(&b->R, j));
	double l = ibLength(L);
	if (!(l > 1e-9)) return false; /* parallel edges: covered by the face axes */
	double inv = 1.0 / l;
	double ra = (ha[i1] * s->X[i2][j] + ha[i2] * s->X[i1][j]) * inv;
	double rb = (hb[j1] * s->X[i][j2] + hb[j2] * s->X[i][j1]) * inv;
	*t = ibDot(ibSub(a->position, b->position), L) * inv;
	*r = ra + rb;
	*ov = ra + rb - fabs(*t);
	return true;
}

/* The search of ib_box_box_sat_search (same decisions: rejection beyond the tolerance, with the cached
 * axis (1 + code: 0..5 faces A_0..2, B_0..2, 6 + 3 i + j edges) first; apart; face axes preferred on
 * near ties) with st filled on 1. */
static int sat_search(const ibConvex* a, const ibConvex* b, const double ha[3], const double hb[3], double tolerance,
                      int* axis, Sat* s, ibBoxSat* st)
{
	const ibMat3 *RA = &a->R, *RB = &b->R;
	ibVec3 T = ibSub(a->position, b->position);
	if (axis && *axis >= 1 && *axis <= 6) { /* a cached face axis first, from its row / column of C only */
		int k = (*axis - 1) % 3;
		const ibMat3 *R1 = *axis <= 3 ? RA : RB, *R2 = *axis <= 3 ? RB : RA;
		const double *h1 = *axis <= 3 ? ha : hb, *h2 = *axis <= 3 ? hb : ha;
		double r = 0.0;
		for (int j = 0; j < 3; ++j)
			r += h2[j] * fabs(R1->m[0][k] * R2->m[0][j] + R1->m[1][k] * R2->m[1][j] + R1->m[2][k] * R2->m[2][j]);
		double t = T.x * R1->m[0][k] + T.y * R1->m[1][k] + T.z * R1->m[2][k];
		if (h1[k] + r - fabs(t) < -tolerance) return -1;
	}
	for (int i = 0; i < 3; ++i) {
		s->tA[i] = T.x * RA->m[0][i] + T.y * RA->m[1][i] + T.z * RA->m[2][i];
		s->tB[i] = T.x * RB->m[0][i] + T.y * RB->m[1][i] + T.z * RB->m[2][i];
		for (int j = 0; j < 3; ++j) {
			s->C[i][j] = RA->m[0][i] * RB->m[0][j] + RA->m[1][i] * RB->m[1][j] + RA->m[2][i] * RB->m[2][j];
			s->X[i][j] = fabs(s->C[i][j]);
		}
	}
	double ov, t, r;
	if (axis && *axis >= 7 && *axis <= 15) { /* a cached edge axis */
		int k = *axis - 7;
		if (edge_overlap(a, b, s, ha, hb, k / 3, k % 3, &ov, &t, &r) && ov < -tolerance) return -1;
	}
	bool apart = false;
	double best = INFINITY, bestFace = INFINITY, bestEdge = INFINITY, bestEdgeT = 0.0;
	int bestKind = -1, bestFaceK = 0, bestEdgeK = 6;
	for (int k = 0; k < 6; ++k) {
		ov = s->faceOv[k] = face_overlap(s, ha, hb, k);
		if (ov < -tolerance) { /* separated by more than the tolerance */
			if (axis) *axis = k + 1;
			return -1;
		}
		if (ov < 0.0) apart = true;
		/* the smallest overlap (without a branch: once apart, bestFace is not used) */
		bestFaceK = ov < bestFace ? k : bestFaceK;
		bestFace = ov < bestFace ? ov : bestFace;
	}
	if (!apart) best = bestFace, bestKind = bestFaceK / 3;
	/* An edge axis whose overlap (as edge_overlap computes it) exceeds thr = bestFace + 1e-9 scale changes
	 * nothing: no rejection, not apart, not the best axis, and edgeOk stays false when it would be the best
	 * edge. Such axes are skipped from a bound without the square root and divisions: in A's frame
	 * L = e_i x C_j (C_j the column j of C), |L|^2 = C[i1][j]^2 + C[i2][j]^2, and
	 * |L| ov = ra' + rb' - |t'| (ra', rb' the radii of edge_overlap before the division, the same
	 * products of X; t' = tA[i2] C[i1][j] - tA[i1] C[i2][j]). The two forms differ by rounding of
	 * ~1e-16 (scale + |T|) before the normalisation (edge_overlap's world cross product has an absolute
	 * error ~4e-16 in every component, so |L| there is within 4e-16 of this one) and ~1e-16 of the
	 * radii after it; m = 1e-12 (scale + |tA|_1) covers both many times over:
	 * ov > thr when ov' - m > 0 and (ov' - m)^2 > (thr + m)^2 (|L|^2 (1 + 1e-6) + 1e-24), the last
	 * factor bounding (|L| + 4e-16)^2. */
	const double scaleAll = ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2];
	const double m = 1e-12 * (scaleAll + fabs(s->tA[0]) + fabs(s->tA[1]) + fabs(s->tA[2]));
	const double thrM = bestFace + 1e-9 * scaleAll + m, thrM2 = thrM * thrM;
#pragma GCC unroll 3
	for (int i = 0; i < 3; ++i)
#pragma GCC unroll 3
		for (int j = 0; j < 3; ++j) {
			int i1 = NX[i], i2 = PV[i], j1 = NX[j], j2 = PV[j];
			if (!apart) {
				double u = ha[i1] * s->X[i2][j] + ha[i2] * s->X[i1][j] + hb[j1] * s->X[i][j2] +
				           hb[j2] * s->X[i][j1] - fabs(s->tA[i2] * s->C[i1][j] - s->tA[i1] * s->C[i2][j]) - m;
				double l2 = s->C[i1][j] * s->C[i1][j] + s->C[i2][j] * s->C[i2][j];
				if (u > 0.0 && u * u > thrM2 * (l2 * (1.0 + 1e-6) + 1e-24)) continue;
			}
			if (!edge_overlap(a, b, s, ha, hb, i, j, &ov, &t, &r)) continue;
			if (ov < -tolerance) {
				if (axis) *axis = 7 + 3 * i + j;
				return -1;
			}
			if (ov < 0.0) apart = true;
			if (apart) continue;
			if (ov < bestEdge) bestEdge = ov, bestEdgeK = 6 + 3 * i + j, bestEdgeT = t;
			/* prefer face axes on (near) ties: edge axes must be strictly better */
			if (ov < best - 1e-12 * r) best = ov, bestKind = 2;
		}
	if (axis) *axis = 0;
	if (apart) return 0;
	st->bestKind = bestKind;
	st->faceKind = bestFaceK / 3;
	st->faceI = bestFaceK % 3;
	st->edgeI = (bestEdgeK - 6) / 3;
	st->edgeJ = (bestEdgeK - 6) % 3;
	st->faceOverlap = bestFace;
	st->edgeOverlap = bestEdge;
	ibVec3 L = ib_mat3_col(bestFaceK < 3 ? RA : RB, bestFaceK % 3);
	const double tBest = bestFaceK < 3 ? s->tA[bestFaceK] : s->tB[bestFaceK - 3];
	const ibVec3 signedL[2] = {ibNeg(L), L}; /* a select by index: no branch */
	st->faceNormal = signedL[tBest >= 0.0];
	st->edgeNormal = IB_VEC3_ZERO;
	st->edgeOk = bestEdge <= bestFace + 1e-9 * scaleAll;
	if (st->edgeOk && bestEdge < INFINITY) { /* the edge normal only where the witness uses it */
		L = ibCross(ib_mat3_col(RA, st->edgeI), ib_mat3_col(RB, st->edgeJ));
		L = ibScale(1.0 / ibLength(L), L);
		const ibVec3 signedE[2] = {ibNeg(L), L};
		st->edgeNormal = signedE[bestEdgeT >= 0.0];
	}
	return 1;
}

/* ---- 3.-5. features, region, lifts ------------------------------------------------------------ */

typedef struct Feature {
	int count;
	const ibVec3* corner; /* the box's world corners (ibConvex.corner) */
	uint32_t id[8];       /* the corners in the band */
	ibVec3 dl;      /* the direction in the box's frame */
	double inv[3];  /* 1 / dl (1 where |dl| <= 1e-300: the slab test of lift() has no parameter there) */
	double eps;     /* the lift's rounding allowance 1e-9 (1 + size) */
	/* lift()'s per-axis constants, so that it has no branch on them: the slab's end planes in the order
	 * of their parameters (-h, h when dl > 0, else h, -h: (-h - x) / dl <= (h - x) / dl exactly when
	 * dl > 0), and the bounds h - nudge, h + eps of the move inside of points near a side seen nearly
	 * edge-on (|dl| < 1e-2, h > 2 nudge, nudge = 1e3 eps; infinite otherwise: no move). Where dl has no
	 * slab (|dl| <= 1e-300) the end planes are -inf, inf with inv 1 (parameters -inf, inf: no bound) and
	 * hFlat = h (a line outside |x| <= h misses the box), else hFlat = inf. */
	double lowH[3], highH[3], hIn[3], hOut[3], hFlat[3];
} Feature;

/* The box case of ib_support_feature: the corners within band of the support height along dir (world
 * corners p + R x as ib_convex_to_world sums them: R x = (+-R_0 h_x) + (+-R_1 h_y) + (+-R_2 h_z); the
 * view's corner[], computed once per pose). */
static inline __attribute__((always_inline)) void box_feature(const ibConvex* c, ibVec3 dir, double band, Feature* f)
{
	ibVec3 h = c->halfExtents, dl = ib_mat3_mul_tv(&c->R, dir);
	double size = c->boxSize;
	band = ib_fmax(band, 0.0) + 1e-12 * (1.0 + size);
	double top = fabs(dl.x) * h.x + fabs(dl.y) * h.y + fabs(dl.z) * h.z;
	double px = h.x * dl.x, py = h.y * dl.y, pz = h.z * dl.z, low = top - band;
	f->count = 0;
	f->corner = c->corner;
	f->dl = dl;
	f->eps = 1e-9 * (1.0 + size);
	/* without branches: copysign(h, -dl) is -h for dl > 0 and h for dl < 0 (dl = 0 has no slab); x + 0 == x
	 * for the positive h - nudge, h + eps */
	static const double pad[2] = {INFINITY, 0.0};
	const double hk[3] = {h.x, h.y, h.z}, dk[3] = {dl.x, dl.y, dl.z}, nudge = 1e3 * f->eps;
#pragma GCC unroll 3
	for (int k = 0; k < 3; ++k) {
		int near = (fabs(dk[k]) < 1e-2) & (hk[k] > 2.0 * nudge);
		int slab = fabs(dk[k]) > 1e-300;
		const double inv[2] = {1.0, 1.0 / dk[k]}, lowH[2] = {-INFINITY, copysign(hk[k], -dk[k])};
		const double highH[2] = {INFINITY, -lowH[1]}, hFlat[2] = {hk[k], INFINITY};
		f->inv[k] = inv[slab];
		f->lowH[k] = lowH[slab];
		f->highH[k] = highH[slab];
		f->hFlat[k] = hFlat[slab];
		f->hIn[k] = (hk[k] - nudge) + pad[near];
		f->hOut[k] = (hk[k] + f->eps) + pad[near];
	}
	const double dx[2] = {-px, px}, dy[2] = {-py, py}, dz[2] = {-pz, pz};
	/* every corner is written at the next free place, which advances when the corner is in the band (no
	 * branch on the band test; at corner k at most k places are taken, so the last write is at id[7]) */
	int n = 0;
#pragma GCC unroll 8
	for (uint32_t k = 0; k < 8; ++k) {
		uint32_t i = k & 1u, j = (k >> 1) & 1u, l = k >> 2;
		int in = !(dx[i] + dy[j] + dz[l] < low);
		f->id[n] = k;
		n += in;
	}
	f->count = n;
}

/* Projection into the contact plane (origin o, axes t1, t2) as a point (1), segment (2) or CCW polygon
 * (4), as ib_hull2d would make it; -1 when the general hull is needed. */
static inline __attribute__((always_inline)) int project(const Feature* f, uint32_t salt, ibVec3 o, ibVec3 t1, ibVec3 t2, ibClipPoint* p, double* scale)
{
	/* scale = ib_fmax(scale, ib_fmax(|x|, |y|)) over the points: a > b ? a : b is ib_fmax without NaNs (one
	 * instruction, no branch); with a NaN the ib_fmax sequence again */
	double sc = *scale;
	bool nan = false;
	for (int i = 0; i < f->count; ++i) {
		ibVec3 r = ibSub(f->corner[f->id[i]], o);
		p[i] = (ibClipPoint){ibDot(r, t1), ibDot(r, t2), ib_box_corner_code(salt, f->id[i])};
		double ax = fabs(p[i].x), ay = fabs(p[i].y), m = ax > ay ? ax : ay;
		sc = sc > m ? sc : m;
		nan |= (ax != ax) | (ay != ay);
	}
	if (nan) {
		for (int i = 0; i < f->count; ++i) *scale = ib_fmax(*scale, ib_fmax(fabs(p[i].x), fabs(p[i].y)));
		return f->count;
	}
	*scale = sc;
	return f->count;
}

/* ib_manifold_feature_code of the feature's corners, with the corner codes from the table. */
static uint32_t feature_code(const Feature* f, uint32_t salt)
{
	if (f->count == 1) return ib_box_corner_code(salt, f->id[0]);
	uint32_t x = 0u;
	for (int i = 0; i < f->count; ++i) x ^= ib_box_corner_code(salt, f->id[i]);
	return ib_feature_code(salt + 100u, x, (uint32_t)f->count);
}

static int polygon(const Feature* f, ibClipPoint* p, double eps, double width)
{
	if (f->count == 4) return ib_manifold_box_face_polygon(4, f->id, p, eps, width);
	if (f->count != 2) return f->count == 1 ? 1 : -1;
	/* ib_hull2d of two points: sorted by (x, y), merged when within eps */
	if (p[1].x < p[0].x || (p[1].x == p[0].x && p[1].y < p[0].y)) {
		ibClipPoint t = p[0];
		p[0] = p[1];
		p[1] = t;
	}
	return len2(p[1].x - p[0].x, p[1].y - p[0].y) <= eps ? 1 : 2;
}

/* lift() missed a region point by rounding: a corner of the feature on the line (ib_manifold_vertex_lift, the
 * general path's rule) */
static bool corner_lift(const Feature* f, ibVec3 x, ibVec3 dir, double* s)
{
	ibVec3 p[8];
	for (int k = 0; k < f->count; ++k) p[k] = f->corner[f->id[k]];
	return ib_manifold_vertex_lift(p, f->count, x, dir, f->eps, s);
}

/* The line x + s dir (dir = -n for A, n for B) against the box: the contact side's parameter. The box
 * case of ib_feature_lift (support_feature.c: slabs, points near a side moved inside for lines nearly
 * parallel to it, rounding allowed at the boundary) with its arithmetic, without the feature struct. */
static inline bool lift(const ibConvex* c, const Feature* f, ibVec3 x, double* sNear)
{
	ibVec3 xl = ib_convex_to_local(c, x);
	const double xs[3] = {xl.x, xl.y, xl.z};
	double lo = -INFINITY, hi = INFINITY;
	int miss = 0;
#pragma GCC unroll 3
	for (int k = 0; k < 3; ++k) {
		double xk = xs[k], in = f->hIn[k], ax = fabs(xk);
		/* near a side: moved inside (-h + nudge == -(h - nudge), -h - eps == -(h + eps): xk in (in, out]
		 * becomes in, xk in [-out, -in) becomes -in; the second move cannot follow the first,
		 * h - nudge > 0; a NaN stays) */
		xk = (ax > in) & (ax <= f->hOut[k]) ? copysign(in, xk) : xk;
		/* the original (-h - xk) inv, (h - xk) inv, the smaller first (1 rounding more than /); -inf, inf
		 * without a slab (no branch on the slab: neighbouring pairs of a pile differ) */
		double l1 = (f->lowH[k] - xk) * f->inv[k], h1 = (f->highH[k] - xk) * f->inv[k];
		lo = l1 > lo ? l1 : lo;
		hi = h1 < hi ? h1 : hi;
		miss |= fabs(xk) > f->hFlat[k];
	}
	if (miss) return false;
	if (lo > hi && lo - hi > f->eps) return false; /* the line passes beside the box */
	*sNear = hi;
	return true;
}

/* len2(s, |d|) > thr (s >= 0, not NaN), without the two square roots unless s^2 + |d|^2 is within 1e-12
 * of thr^2 (thr2Lo, thr2Hi: thr^2 (1 -+ 1e-12)): len2(s, ibLength(d)) is sqrt(s^2 + |d|^2) within a few
 * roundings (~1e-15 relative; where s^2 or |d|^2 underflow, within 1e-300 absolute, thr >= 1e-9), so
 * outside that margin the comparison is decided by the squares. Returns the same as
 * len2(s, ibLength(d)) > thr (both false for a NaN d: the exact form). */
static inline bool beyond(double s, ibVec3 d, double thr, double thr2Lo, double thr2Hi)
{
	double l2 = ibDot(d, d), v2 = s * s + l2;
	if (v2 < thr2Lo) return false;
	if (v2 > thr2Hi) return true;
	return len2(s, sqrt(l2)) > thr;
}

/* ibPerpendicular(n) with the axis chosen by index (the same arithmetic, no branch on n: the normals of
 * neighbouring pairs differ) */
static inline ibVec3 perpendicular(ibVec3 n)
{
	static const ibVec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	int k = !(fabs(n.x) < 0.57735) * (1 + !(fabs(n.y) < 0.57735));
	return ibNormalize(ibCross(n, axes[k]));
}

typedef struct Region {
	int count;
	ibManifoldPoint pt[CAP];
	ibClipPoint xy[CAP];
	double sep[CAP];
} Region;

static void push(Region* r, ibVec3 pa, ibVec3 pb, double sep, ibClipPoint xy)
{
	if (r->count >= CAP) return;
	r->pt[r->count] = (ibManifoldPoint){pa, pb, sep, xy.key};
	r->xy[r->count] = xy;
	r->sep[r->count] = sep;
	++r->count;
}

int ib_box_box_manifold(const ibConvex* a, const ibConvex* b, double tolerance, int* satAxis, ibManifold* out)
{
	out->pointCount = 0;
	ibConvex ac, bc; /* views without their corners (not the sync's): copies with them */
	if (!a->cornersValid) ac = *a, ib_convex_box_corners(&ac), a = &ac;
	if (!b->cornersValid) bc = *b, ib_convex_box_corners(&bc), b = &bc;
	double tol0 = ib_fmax(tolerance, 0.0);
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	Sat s;
	ibBoxSat st;
	int r = sat_search(a, b, ha, hb, tol0, satAxis, &s, &st);
	if (r < 0) return 0;
	if (r == 0) return -1; /* apart by at most the tolerance: the exact distance by GJK (general path) */
	/* the witness points: they decide between an edge axis and the face axis, and pointB is the origin of
	 * the contact plane, whose height along n the lifts start from (the nudge of points near a side of a
	 * box seen nearly edge-on depends on it) */
	ibConvexDistance q;
	ib_box_box_sat_witness(a, b, &st, &q);
	/* the face-normal choice of the general path from the separations of the face axes: those are the face
	 * axes' overlaps of the search, negated (the general path sums the frames' own dot products, 1 and 0
	 * up to rounding, where the search has ha[i] and hb[j]: a difference of ~1e-16 of the sizes) */
	double sepF[6], tf[6];
	for (int k = 0; k < 3; ++k) {
		sepF[k] = -s.faceOv[k], sepF[3 + k] = -s.faceOv[3 + k];
		tf[k] = s.tA[k], tf[3 + k] = s.tB[k];
	}
	ib_manifold_box_face_select(a, b, sepF, tf, tol0, &q);
	if (!(q.distance <= tolerance)) return 0;
	ibVec3 n = q.normal, dA = ibNeg(n);
	out->normal = n;
	double band = ib_manifold_feature_band(tolerance, q.distance);
	Feature fa, fb;
	box_feature(a, dA, band, &fa);
	box_feature(b, n, band, &fb);
	ibVec3 o = q.pointB;
	ibVec3 t1 = perpendicular(n), t2 = ibCross(n, t1);
	ibClipPoint pa[8], pb[8], clip[CAP], segB[2];
	double scale = 1.0;
	project(&fa, SALT_A, o, t1, t2, pa, &scale);
	project(&fb, SALT_B, o, t1, t2, pb, &scale);
	double eps = 1e-9 * scale;
	int na = polygon(&fa, pa, eps, 1e-6 * scale), nb = polygon(&fb, pb, eps, 1e-6 * scale);
	if (na < 0 || nb < 0) return -1;

	/* the planar region: clip[] on A's side, partner points on B's side where they differ */
	int nc = 0;
	const ibClipPoint* onB = clip;
	if (na == 2 && nb == 2) {
		nc = ib_overlap_segments(pa, pb, tol0 + eps, clip, segB);
		onB = segB;
	} else if (na == 2 && nb == 4) {
		nc = ib_clip_segment(pa, pb, nb, eps, clip);
	} else if (nb == 2 && na == 4) {
		nc = ib_clip_segment(pb, pa, na, eps, clip);
	} else if (na == 4 && nb == 4) {
		nc = ib_clip_polygon(pa, na, pb, nb, eps, clip);
	}
	Region reg;
	reg.count = 0;
	double minSep = INFINITY;
	const double thr = tol0 + eps, thr2Lo = thr * thr * (1.0 - 1e-12), thr2Hi = thr * thr * (1.0 + 1e-12);
	for (int i = 0; i < nc; ++i) {
		ibVec3 xa = ibAdd(o, ibAdd(ibScale(clip[i].x, t1), ibScale(clip[i].y, t2)));
		ibVec3 xb = onB == clip ? xa : ibAdd(o, ibAdd(ibScale(onB[i].x, t1), ibScale(onB[i].y, t2)));
		double nearA, nearB;
		if (!lift(a, &fa, xa, &nearA) && !corner_lift(&fa, xa, dA, &nearA)) continue;
		if (!lift(b, &fb, xb, &nearB) && !corner_lift(&fb, xb, n, &nearB)) continue;
		ibVec3 pA = ibMulAdd(xa, nearA, dA), pB = ibMulAdd(xb, nearB, n);
		double sep = ibDot(ibSub(pA, pB), n);
		if (!(sep <= tolerance) || beyond(ib_fmax(sep, 0.0), ibMulAdd(ibSub(pA, pB), -sep, n), thr, thr2Lo, thr2Hi))
			continue;
		push(&reg, pA, pB, sep, clip[i]);
		minSep = sep < minSep ? sep : minSep; /* ib_fmin(minSep, sep): sep is not NaN here; no branch */
	}
	if (nc > 4) ib_manifold_drop_collinear(reg.pt, reg.xy, reg.sep, &reg.count, tol0);
	/* the deepest pair when no region vertex is as deep (a vertex feature): the deepest of the lines along
	 * n through the witness points and the features' vertices, lifted onto both boxes */
	if (reg.count == 0 || q.distance < minSep - 1e-9 * scale) {
		uint32_t key = ib_feature_code(3u, feature_code(&fa, SALT_A), feature_code(&fb, SALT_B));
		ibVec3 cand[2 + 16];
		int ncand = 0;
		bool vertex = nc == 0 && (na == 1 || nb == 1);
		cand[ncand++] = q.pointA;
		cand[ncand++] = q.pointB;
		/* a vertex against a face or an edge: the deepest line is the vertex's (the witness line; the
		 * other feature is flat across n): the other feature's vertices, candidates of the general path
		 * too, are not deeper */
		for (int k = 0; k < nb && (!vertex || nb == 1); ++k)
			cand[ncand++] = ibAdd(o, ibAdd(ibScale(pb[k].x, t1), ibScale(pb[k].y, t2)));
		for (int k = 0; k < na && (!vertex || na == 1); ++k)
			cand[ncand++] = ibAdd(o, ibAdd(ibScale(pa[k].x, t1), ibScale(pa[k].y, t2)));
		ibVec3 pA = q.pointA, pB = q.pointB;
		ibVec3 rr = ibSub(q.pointA, o);
		ibClipPoint xy = {ibDot(rr, t1), ibDot(rr, t2), key};
		double best = INFINITY;
		for (int k = 0; k < ncand; ++k) {
			double nearA, nearB;
			if (!lift(a, &fa, cand[k], &nearA) || !lift(b, &fb, cand[k], &nearB)) continue;
			ibVec3 la = ibMulAdd(cand[k], nearA, dA), lb = ibMulAdd(cand[k], nearB, n);
			double sep = ibDot(ibSub(la, lb), n);
			if (sep <= tolerance && sep < best) {
				best = sep, pA = la, pB = lb;
				ibVec3 rc = ibSub(cand[k], o);
				xy.x = ibDot(rc, t1), xy.y = ibDot(rc, t2);
			}
		}
		push(&reg, pA, pB, ibDot(ibSub(pA, pB), n), xy);
	}
	return ib_manifold_emit(reg.pt, reg.xy, reg.sep, reg.count, out);
}
