/* Support features of convex shapes and lifting of contact-plane points onto their surfaces
 * (contact regions, §4.5.1.3 / §4.5.2.1; digest §15.5 item 3). Internal, not installed.
 *
 * The support feature of a shape along an outward direction d is the set of its "vertices" whose
 * height dot(x, d) lies within a band of the support height max dot(x, d): a vertex, an edge or a
 * face, possibly nearly (within the band) rather than exactly perpendicular to d:
 *   sphere:   its support point;
 *   box:      the corners in the band (face: 4, edge: 2, vertex: 1), exact;
 *   capsule:  the end points of its segment swept by the radius along d that are in the band
 *             (2 when the axis is parallel to the contact plane within the band, else 1);
 *   cylinder: IB_CYLINDER_RIM_POINTS points of the rim of the cap facing d plus the exact support
 *             points of both rims, those in the band (cap face: an inscribed polygon; side: the
 *             segment between the two rims; else the rim point);
 *   hull:     the vertices in the band (a face of a hull, or of a triangle of a static mesh).
 * Every feature point lies on the shape's surface. */
#ifndef IBDYN_SRC_SUPPORT_FEATURE_H
#define IBDYN_SRC_SUPPORT_FEATURE_H

#include <math.h>
#include <stdint.h>

#include "collision/convex.h"

/* Rim points per cylinder cap used for cap features (the cap face is replaced by the inscribed
 * regular polygon; the exact support point of the rim is added, so the deepest point is exact). */
#define IB_CYLINDER_RIM_POINTS 16
/* Capacity of a feature (hull faces with more vertices in the band are narrowed: see .c). */
#define IB_FEATURE_MAX 64

typedef struct ibSupportFeature {
	int count;                   /* 1..IB_FEATURE_MAX points, unordered, in the band */
	ibVec3 p[IB_FEATURE_MAX];    /* world points on the surface */
	uint32_t id[IB_FEATURE_MAX]; /* shape-local vertex ids, stable while the feature persists */
	ibVec3 dir;                  /* unit outward direction the feature was taken along */
	bool planar;                 /* hulls: all points lie (to rounding) in one plane with normal planeN */
	ibVec3 planeN;
	double planeD; /* dot(planeN, x) == planeD on the plane */
	ibVec3 dirLocal; /* dir in the shape's frame, and the shape's size (for the lifts' tolerances) */
	double size;
} ibSupportFeature;

/* Support feature of c along the unit outward direction dir with height band (>= 0). */
void ib_support_feature(const ibConvex* c, ibVec3 dir, double band, ibSupportFeature* out);

/* The line x + s dir through the world point x (dir = the feature's unit direction) meets the shape
 * in [sFar, sNear]; returns true and sets both if it does (lines passing within 1e-9 x size of the
 * surface count). sNear is the shape's boundary facing
 * along dir (the contact side). Exact for sphere, box, capsule and cylinder (line-shape
 * intersection); for hulls the line is intersected with the convex hull of the feature's points,
 * exact for a planar face and otherwise at most the band inside the true surface. */
bool ib_feature_lift(const ibConvex* c, const ibSupportFeature* f, ibVec3 x, double* sNear, double* sFar);

/* ---- line-box intersection (inline: the box-box contact regions lift several points per pair) ---- */

/* Interval of s with |x_i + s d_i| <= h (as ball_interval: nearly parallel lines within eps of the
 * boundary are moved eps inside). */
static inline __attribute__((always_inline)) bool ib_slab_interval(double x, double d, double h, double eps, double* lo,
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

static inline bool ib_interval_intersect(double* lo, double* hi, double l2, double h2)
{
	/* ib_fmax(*lo, l2) and ib_fmin(*hi, h2) without the libm calls (same results, NaN included) */
	*lo = (l2 > *lo || isnan(*lo)) ? l2 : *lo;
	*hi = (h2 < *hi || isnan(*hi)) ? h2 : *hi;
	return true;
}

/* The box case of ib_feature_lift in the box's frame: the local line xl + s dl against the box of half
 * extents h, with eps = 1e-9 (1 + |h|). */
static inline bool ib_box_lift_local(ibVec3 xl, ibVec3 dl, ibVec3 h, double eps, double* sNear, double* sFar)
{
	double lo, hi, l2, h2;
	bool hit = ib_slab_interval(xl.x, dl.x, h.x, eps, &lo, &hi);
	hit = hit && ib_slab_interval(xl.y, dl.y, h.y, eps, &l2, &h2) && ib_interval_intersect(&lo, &hi, l2, h2);
	hit = hit && ib_slab_interval(xl.z, dl.z, h.z, eps, &l2, &h2) && ib_interval_intersect(&lo, &hi, l2, h2);
	/* allow rounding at the boundary (points clipped exactly onto an edge of a face) */
	if (hit && lo > hi) {
		if (lo - hi > eps) hit = false;
		else lo = hi;
	}
	if (!hit) return false; /* the line passes beside the box */
	*sNear = hi, *sFar = lo;
	return true;
}

#endif
