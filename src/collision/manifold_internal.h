/* Pieces of the contact regions (manifold.c) shared with the box-box path (box_box.c). Internal. */
#ifndef IBDYN_SRC_MANIFOLD_INTERNAL_H
#define IBDYN_SRC_MANIFOLD_INTERNAL_H

#include <stdint.h>

#include "collision/clip.h"
#include "collision/collision_world.h"

/* Height band of the support features: tolerance plus the penetration depth up to one more tolerance,
 * so a resting contact that has sunk by up to eps_c keeps the points whose separation is <= eps_c. */
static inline double ib_manifold_feature_band(double tolerance, double distance)
{
	double t = ib_fmax(tolerance, 0.0);
	return t + ib_fmin(ib_fmax(-distance, 0.0), t);
}

/* [IMPL] The lift of a region point x along dir (unit) onto a feature, where the line test (ib_feature_lift, or
 * box_box.c lift) missed the shape by rounding: a region vertex that is one of the feature's points p[0..count)
 * lies on the shape by construction; *s is the line's parameter at the first point within tol of the line, false
 * if there is none. The line through a corner of a slightly tilted box meets it only there; the box's side faces
 * are nearly parallel to the line, which leaves their slabs within ~1e-6 / |d| of the clip plane (the nudge of
 * support_feature.c slab_interval), while the corner is up to the feature band away. Without it the speculative
 * region of a cube tipping onto the ground (RAIN_SEED=3 of test_contact_rain, its falling face's far corners
 * 7.7 mm up and closing at 2.15 m/s) kept one of the two far corners; the cube landed on that one and pivoted,
 * and the other ended the step 1.35 cm deep. (A region point on an edge of such a box, where two faces' edges
 * cross, may miss the same way; no such case was found: 2e5 random tilted boxes on boxes lift every point.) */
static inline bool ib_manifold_vertex_lift(const ibVec3* p, int count, ibVec3 x, ibVec3 dir, double tol, double* s)
{
	for (int k = 0; k < count; ++k) {
		ibVec3 r = ibSub(p[k], x);
		double t = ibDot(r, dir);
		if (!(ibLength(ibMulAdd(r, -t, dir)) <= tol)) continue;
		*s = t;
		return true;
	}
	return false;
}

/* Order-independent code of a whole feature (vertex ids id[0..count)) for single-point contacts. */
uint32_t ib_manifold_feature_code(const uint32_t* id, int count, uint32_t salt);

/* ib_feature_code(salt, id, 0) of a box corner (id 0..7) of shape A (salt 1) or B (salt 2) of a pair,
 * the corner keys of the contact regions, from a table (tests/test_manifold_box.c checks it against the
 * hash). */
static inline uint32_t ib_box_corner_code(uint32_t salt, uint32_t id)
{
	static const uint32_t code[2][8] = {
	    {0xCCD06A44u, 0xA1EEADF6u, 0xD9176422u, 0xE3A80D80u, 0x7757BE70u, 0xB31E64EEu, 0xA92B6160u, 0xCB4D9253u},
	    {0x95406A44u, 0x773EADF6u, 0x0F476423u, 0x93D80D80u, 0x8E27BE71u, 0x2A8E64EEu, 0x73FB6160u, 0x01DD9253u}};
	return code[(salt - 1u) & 1u][id & 7u];
}

/* The contact normal of two boxes near a face contact (a face axis instead of the query's normal when
 * within rounding or, penetrating, a much larger box's; see manifold.c). */
void ib_manifold_box_face_normal(const ibConvex* a, const ibConvex* b, double tolerance, ibConvexDistance* q);
/* Its choice from the face axes' separations sep (A_0..2, B_0..2: |t| - projected radii) and centre
 * offsets t (dot(pA - pB, axis)). */
void ib_manifold_box_face_select(const ibConvex* a, const ibConvex* b, const double sep[6], const double t[6],
                                 double tolerance, ibConvexDistance* q);

/* The projected face feature of a box (4 corners with ids id[], points p[] in the contact plane) as the
 * convex CCW polygon ib_hull2d would make, in place; -1 when the general hull is needed. */
int ib_manifold_box_face_polygon(int count, const uint32_t* id, ibClipPoint* p, double eps, double width);

/* Region vertices (points pt, plane coordinates xy, separations sep; *count of them, in polygon order):
 * drop those within tol of the line through their neighbours while more than 4 remain. */
void ib_manifold_drop_collinear(ibManifoldPoint* pt, ibClipPoint* xy, double* sep, int* count, double tol);

/* The reduced region (at most IB_MANIFOLD_MAX_POINTS of the count points) into out; returns the count. */
int ib_manifold_emit(const ibManifoldPoint* pt, const ibClipPoint* xy, const double* sep, int count, ibManifold* out);

/* box_box.c: the contact region of two boxes with the box-specific path (the general path's contact
 * region within rounding: normal, points, separations, feature keys). satAxis: the pair's cached
 * separating axis (ibGjkCache.satAxis, may be NULL). Returns the point count, or -1 when the pair needs
 * the general path (apart by less than the tolerance: GJK distance; features that need the 2-D hull). */
int ib_box_box_manifold(const ibConvex* a, const ibConvex* b, double tolerance, int* satAxis, ibManifold* out);

#endif
