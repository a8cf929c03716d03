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

#endif
