/* Support features (vertex / edge / face within a height band) of the convex primitives and the
 * intersection of a line along the feature direction with the shape (lifting a point of the
 * contact plane back onto the surface). See support_feature.h. */
#include <math.h>

#include "collision/support_feature.h"

static inline double len2(double x, double y) { return sqrt(x * x + y * y); }

static void add_point(ibSupportFeature* f, ibVec3 p, uint32_t id)
{
	if (f->count < IB_FEATURE_MAX) {
		f->p[f->count] = p;
		f->id[f->count] = id;
		++f->count;
	}
}

/* Size of the shape (for relative rounding tolerances). */
static double shape_size(const ibConvex* c)
{
	switch (c->type) {
	case IB_CONVEX_SPHERE: return c->radius;
	case IB_CONVEX_BOX: return ibLength(c->halfExtents);
	case IB_CONVEX_CAPSULE:
	case IB_CONVEX_CYLINDER: return c->radius + c->halfLength;
	case IB_CONVEX_HULL: {
		double s = 0.0;
		for (int i = 0; i < c->vertexCount; ++i) s = ib_fmax(s, ibLength(c->vertices[i]));
		return s;
	}
	}
	return 1.0;
}

/* Hull vertices within band of the support height along the local direction dl. */
static void hull_band(const ibConvex* c, ibVec3 dl, double band, ibSupportFeature* f)
{
	double top = -INFINITY;
	for (int i = 0; i < c->vertexCount; ++i) top = ib_fmax(top, ibDot(c->vertices[i], dl));
	f->count = 0;
	for (int i = 0; i < c->vertexCount; ++i)
		if (ibDot(c->vertices[i], dl) >= top - band) add_point(f, ib_convex_to_world(c, c->vertices[i]), (uint32_t)i);
}

/* Plane through the feature's points if they are coplanar to rounding (relative 1e-10). */
static void fit_plane(ibSupportFeature* f, double size)
{
	f->planar = false;
	if (f->count < 3) return;
	int i0 = 0, i1 = 0, i2 = 0;
	double best = -1.0;
	for (int i = 1; i < f->count; ++i) {
		double d = ibDistance(f->p[i], f->p[i0]);
		if (d > best) best = d, i1 = i;
	}
	ibVec3 u = ibSub(f->p[i1], f->p[i0]);
	best = -1.0;
	for (int i = 1; i < f->count; ++i) {
		double a = ibLength(ibCross(u, ibSub(f->p[i], f->p[i0])));
		if (a > best) best = a, i2 = i;
	}
	ibVec3 m = ibCross(u, ibSub(f->p[i2], f->p[i0]));
	double ml = ibLength(m);
	double eps = 1e-10 * (1.0 + size);
	if (!(ml > eps * ibLength(u))) return; /* collinear */
	m = ibScale(1.0 / ml, m);
	double d0 = ibDot(m, f->p[i0]);
	for (int i = 0; i < f->count; ++i)
		if (fabs(ibDot(m, f->p[i]) - d0) > eps) return;
	f->planar = true;
	f->planeN = m;
	f->planeD = d0;
}

void ib_support_feature(const ibConvex* c, ibVec3 dir, double band, ibSupportFeature* f)
{
	ibVec3 dl = ibMat3_MulTV(c->R, dir);
	double size = shape_size(c);
	band = ib_fmax(band, 0.0) + 1e-12 * (1.0 + size);
	f->count = 0;
	f->dir = dir;
	f->dirLocal = dl;
	f->size = size;
	switch (c->type) {
	case IB_CONVEX_SPHERE: add_point(f, ibMulAdd(c->position, c->radius, dir), 0u); break;
	case IB_CONVEX_BOX: {
		ibVec3 h = c->halfExtents;
		double top = fabs(dl.x) * h.x + fabs(dl.y) * h.y + fabs(dl.z) * h.z;
		/* dot(corner, dl) = (+-h.x dl.x) + (+-h.y dl.y) + (+-h.z dl.z): the products once (a negated
		 * factor negates a product exactly, so the sums are those of ibDot) */
		double px = h.x * dl.x, py = h.y * dl.y, pz = h.z * dl.z, low = top - band;
		for (uint32_t k = 0; k < 8; ++k) {
			double d = (k & 1 ? px : -px) + (k & 2 ? py : -py) + (k & 4 ? pz : -pz);
			if (d >= low) add_point(f, ib_convex_to_world(c, ibV3(k & 1 ? h.x : -h.x, k & 2 ? h.y : -h.y, k & 4 ? h.z : -h.z)), k);
		}
		break;
	}
	case IB_CONVEX_CAPSULE: {
		double hl = c->halfLength;
		double top = fabs(dl.z) * hl;
		for (uint32_t k = 0; k < 2; ++k) {
			double z = k ? hl : -hl;
			if (z * dl.z >= top - band && !(k == 1 && hl == 0.0))
				add_point(f, ibMulAdd(ib_convex_to_world(c, ibV3(0.0, 0.0, z)), c->radius, dir), k);
		}
		break;
	}
	case IB_CONVEX_CYLINDER: {
		double R = c->radius, hl = c->halfLength;
		double rho = sqrt(dl.x * dl.x + dl.y * dl.y);
		double top = R * rho + hl * fabs(dl.z);
		double zc = dl.z >= 0.0 ? hl : -hl;
		uint32_t cap = dl.z >= 0.0 ? 0u : 32u;
		for (uint32_t k = 0; k < IB_CYLINDER_RIM_POINTS; ++k) {
			double th = 2.0 * IB_PI * (double)k / IB_CYLINDER_RIM_POINTS;
			ibVec3 v = ibV3(R * cos(th), R * sin(th), zc);
			if (ibDot(v, dl) >= top - band) add_point(f, ib_convex_to_world(c, v), cap + k);
		}
		if (rho > 1e-12) { /* exact support points of both rims */
			for (uint32_t k = 0; k < 2; ++k) {
				ibVec3 v = ibV3(R * dl.x / rho, R * dl.y / rho, k ? -hl : hl);
				if (ibDot(v, dl) >= top - band) add_point(f, ib_convex_to_world(c, v), 32u * k + 31u);
			}
		}
		break;
	}
	case IB_CONVEX_HULL: {
		if (c->vertexCount <= 0 || !c->vertices) {
			add_point(f, c->position, 0u);
			break;
		}
		/* narrow the band while the feature overflows, or while it is a large non-planar set
		 * (whose lift enumerates triangles) */
		hull_band(c, dl, band, f);
		for (int it = 0; it < 40 && f->count > 1; ++it) {
			int total = 0;
			double top = -INFINITY;
			for (int i = 0; i < c->vertexCount; ++i) top = ib_fmax(top, ibDot(c->vertices[i], dl));
			for (int i = 0; i < c->vertexCount; ++i) total += ibDot(c->vertices[i], dl) >= top - band;
			bool overflow = total > IB_FEATURE_MAX;
			if (!overflow && f->count > 16) {
				fit_plane(f, size);
				if (f->planar) break;
			} else if (!overflow) {
				break;
			}
			band *= 0.5;
			hull_band(c, dl, band, f);
		}
		break;
	}
	}
	if (f->count == 0) add_point(f, ib_convex_support(c, dir), 0u); /* cannot happen; defensive */
	f->planar = false;
	if (c->type == IB_CONVEX_HULL) fit_plane(f, size); /* only hull lifts use the plane */
}

/* ---- line-shape intersection ---------------------------------------------------------------- */

/* Interval of s with |x + s d| <= r. For a line nearly parallel to the surface (|d| < 1e-6), a
 * point within eps of the boundary (clipped onto the boundary of a face) is first moved eps inside, so that a line nearly tangent to the surface
 * there is not cut short (or missed) by rounding. */
static bool ball_interval(ibVec3 x, ibVec3 d, double r, double eps, double* lo, double* hi)
{
	double xl = ibLength(x);
	if (ibLengthSq(d) < 1e-12 && xl > r - eps && xl <= r + eps && r > 2.0 * eps) x = ibScale((r - eps) / xl, x);
	double a = ibDot(d, d), b = ibDot(x, d), cc = ibDot(x, x) - r * r;
	double slack = 2.0 * r * eps + eps * eps + 1e-15 * r * r; /* a line passing within eps counts */
	if (!(a > 1e-300)) {
		if (cc > slack) return false;
		*lo = -INFINITY, *hi = INFINITY;
		return true;
	}
	double disc = b * b - a * cc;
	if (disc < -a * slack) return false;
	double sq = sqrt(ib_fmax(disc, 0.0));
	*lo = (-b - sq) / a;
	*hi = (-b + sq) / a;
	return true;
}

/* Interval of s with |x_i + s d_i| <= h (as ball_interval: nearly parallel lines within eps of the
 * boundary are moved eps inside). */
static inline __attribute__((always_inline)) bool slab_interval(double x, double d, double h, double eps, double* lo,
                                                                 double* hi)
{
	/* nearly parallel to the slab through a point on its boundary (a corner clipped onto a face of a
	 * slightly tilted box): rounding can put x just outside, and then the line leaves the slab after
	 * |s| ~ rounding/|d| while the lift needs |s| up to the feature band. Move such a point inside by
	 * 1e-6 x size: the line then stays inside for |s| <= nudge/|d| (>= 1e-4 x size for |d| < 1e-2), and
	 * the lifted height changes by nudge |d| <= 1e-8 x size. */
	double nudge = 1e3 * eps;
	if (fabs(d) < 1e-2 && h > 2.0 * nudge) {
		if (x > h - nudge && x <= h + eps) x = h - nudge;
		if (x < -h + nudge && x >= -h - eps) x = -h + nudge;
	}
	if (fabs(d) > 1e-300) {
		double t1 = (-h - x) / d, t2 = (h - x) / d;
		/* fmin/fmax of two numbers that are not NaN for finite inputs (libm calls otherwise) */
		bool le = t1 <= t2;
		*lo = le ? t1 : t2, *hi = le ? t2 : t1;
		if (isnan(t1) || isnan(t2)) *lo = ib_fmin(t1, t2), *hi = ib_fmax(t1, t2);
		return true;
	}
	if (fabs(x) > h) return false;
	*lo = -INFINITY, *hi = INFINITY;
	return true;
}

static inline bool intersect(double* lo, double* hi, double l2, double h2)
{
	/* ib_fmax(*lo, l2) and ib_fmin(*hi, h2) without the libm calls (same results, NaN included) */
	*lo = (l2 > *lo || isnan(*lo)) ? l2 : *lo;
	*hi = (h2 < *hi || isnan(*hi)) ? h2 : *hi;
	return true;
}

/* Capped cylinder of radius r, half length hl (local z) against the local line x + s d. */
static bool cylinder_interval(ibVec3 x, ibVec3 d, double r, double hl, double eps, double* lo, double* hi)
{
	double l1, h1, l2, h2;
	if (!slab_interval(x.z, d.z, hl, eps, &l1, &h1)) return false;
	if (!ball_interval(ibV3(x.x, x.y, 0.0), ibV3(d.x, d.y, 0.0), r, eps, &l2, &h2)) return false;
	intersect(&l1, &h1, l2, h2);
	*lo = l1, *hi = h1;
	return true;
}

/* Intersection with the convex hull of the feature points, in the plane perpendicular to dir. */
static bool envelope_lift(const ibSupportFeature* f, ibVec3 x, double eps, double* sNear, double* sFar)
{
	ibVec3 d = f->dir;
	/* large planar faces: the plane (callers pass points inside the face's projection); else the
	 * enumeration below, which also tells whether x is over the feature at all */
	if (f->planar && f->count > 16 && fabs(ibDot(f->planeN, d)) > 1e-9) {
		double s = (f->planeD - ibDot(f->planeN, x)) / ibDot(f->planeN, d);
		*sNear = *sFar = s;
		return true;
	}
	ibVec3 t1 = ibPerpendicular(d), t2 = ibCross(d, t1);
	double px[IB_FEATURE_MAX], py[IB_FEATURE_MAX], ph[IB_FEATURE_MAX];
	int n = f->count;
	for (int i = 0; i < n; ++i) {
		ibVec3 r = ibSub(f->p[i], x);
		px[i] = ibDot(r, t1), py[i] = ibDot(r, t2), ph[i] = ibDot(r, d);
	}
	double hiS = -INFINITY, loS = INFINITY;
	for (int i = 0; i < n; ++i) {
		if (len2(px[i], py[i]) <= eps) hiS = ib_fmax(hiS, ph[i]), loS = ib_fmin(loS, ph[i]);
		for (int j = i + 1; j < n; ++j) {
			double ux = px[j] - px[i], uy = py[j] - py[i], l2 = ux * ux + uy * uy;
			if (l2 > 0.0) {
				double t = -(px[i] * ux + py[i] * uy) / l2;
				double cx = px[i] + t * ux, cy = py[i] + t * uy;
				if (t >= 0.0 && t <= 1.0 && len2(cx, cy) <= eps) {
					double h = ph[i] + t * (ph[j] - ph[i]);
					hiS = ib_fmax(hiS, h), loS = ib_fmin(loS, h);
				}
			}
			for (int k = j + 1; k < n; ++k) {
				/* barycentric coordinates of the origin (= x) in triangle i j k */
				double ax = px[i], ay = py[i], bx = px[j], by = py[j], cx = px[k], cy = py[k];
				double det = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
				if (!(fabs(det) > 1e-300)) continue;
				double lb = ((-ax) * (cy - ay) - (-ay) * (cx - ax)) / det;
				double lc = ((bx - ax) * (-ay) - (by - ay) * (-ax)) / det;
				double la = 1.0 - lb - lc;
				if (la < -1e-12 || lb < -1e-12 || lc < -1e-12) continue;
				double h = la * ph[i] + lb * ph[j] + lc * ph[k];
				hiS = ib_fmax(hiS, h), loS = ib_fmin(loS, h);
			}
		}
	}
	if (!(hiS >= loS)) return false;
	*sNear = hiS, *sFar = loS;
	return true;
}

bool ib_feature_lift(const ibConvex* c, const ibSupportFeature* f, ibVec3 x, double* sNear, double* sFar)
{
	ibVec3 xl = ib_convex_to_local(c, x), dl = f->dirLocal; /* == ibMat3_MulTV(c->R, f->dir) */
	double size = f->size;
	double lo = -INFINITY, hi = INFINITY, l2, h2;
	double eps = 1e-9 * (1.0 + size);
	bool hit = false;
	switch (c->type) {
	case IB_CONVEX_SPHERE: hit = ball_interval(xl, dl, c->radius, eps, &lo, &hi); break;
	case IB_CONVEX_BOX: {
		hit = slab_interval(xl.x, dl.x, c->halfExtents.x, eps, &lo, &hi);
		hit = hit && slab_interval(xl.y, dl.y, c->halfExtents.y, eps, &l2, &h2) && intersect(&lo, &hi, l2, h2);
		hit = hit && slab_interval(xl.z, dl.z, c->halfExtents.z, eps, &l2, &h2) && intersect(&lo, &hi, l2, h2);
		break;
	}
	case IB_CONVEX_CYLINDER: hit = cylinder_interval(xl, dl, c->radius, c->halfLength, eps, &lo, &hi); break;
	case IB_CONVEX_CAPSULE: { /* union of the cylinder part and the two end balls (connected) */
		double hl = c->halfLength;
		lo = INFINITY, hi = -INFINITY;
		if (cylinder_interval(xl, dl, c->radius, hl, eps, &l2, &h2) && l2 <= h2) lo = ib_fmin(lo, l2), hi = ib_fmax(hi, h2);
		for (int k = 0; k < 2; ++k) {
			ibVec3 xe = ibV3(xl.x, xl.y, xl.z - (k ? hl : -hl));
			if (ball_interval(xe, dl, c->radius, eps, &l2, &h2)) lo = ib_fmin(lo, l2), hi = ib_fmax(hi, h2);
		}
		hit = lo <= hi;
		break;
	}
	case IB_CONVEX_HULL: return envelope_lift(f, x, 1e-9 * (1.0 + size), sNear, sFar);
	}
	/* allow rounding at the boundary (points clipped exactly onto an edge of a face) */
	if (hit && lo > hi) {
		if (lo - hi > eps) hit = false;
		else lo = hi;
	}
	if (!hit) return false; /* the line passes beside the shape */
	*sNear = hi, *sFar = lo;
	return true;
}
