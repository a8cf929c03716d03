/* Internal convex-shape view used by the narrowphase (Chapter 4): a shape's geometry plus its world
 * pose, queried through a support function. Not installed. */
#ifndef IBDYN_SRC_CONVEX_H
#define IBDYN_SRC_CONVEX_H

#include <stddef.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "math/fminmax.h"

typedef enum ibConvexType {
	IB_CONVEX_SPHERE,   /* radius */
	IB_CONVEX_BOX,      /* halfExtents */
	IB_CONVEX_CAPSULE,  /* radius, halfLength along local z */
	IB_CONVEX_CYLINDER, /* radius, halfLength along local z */
	IB_CONVEX_HULL,     /* vertices (local), convex */
} ibConvexType;

typedef struct ibConvex {
	ibConvexType type;
	double radius;
	double halfLength;
	ibVec3 halfExtents;
	const ibVec3* vertices; /* hull vertices in the local frame */
	int vertexCount;
	ibVec3 position; /* local -> world: x_w = position + R x_l */
	ibQuat rotation;
	ibMat3 R;
	const ibHullData* hull; /* IB_CONVEX_HULL of a hull shape: its faces, edges and adjacency (local frame;
	                         * vertices == hull->vertices); NULL for other hulls (mesh, triangle) */
	bool cornersValid; /* IB_CONVEX_BOX: corner[] and boxSize hold the world corners of this pose and
	                    * size (ib_convex_box_corners; the sync's views); false in every other view */
	double boxSize;    /* |halfExtents| */
	ibVec3 corner[8];  /* corner k = i + 2 j + 4 l: position + ((+-R_0 h_x + +-R_1 h_y) + +-R_2 h_z), + for 1;
	                    * the last member: ib_convex_init leaves it uninitialised */
} ibConvex;

/* Build a convex view with its world pose (R from the quaternion). */

static inline ibConvex ib_convex_make(ibConvexType type, ibVec3 position, ibQuat rotation)
{
	ibConvex c = {0};
	c.type = type;
	c.position = position;
	c.rotation = ibQuatNormalize(rotation);
	c.R = ibMat3_FromQuat(c.rotation);
	return c;
}

/* ib_convex_make in place (*c = ib_convex_make(...) without the temporaries: the copies of the matrix
 * stall on store forwarding). R as ibMat3_FromQuat computes it. */
static inline void ib_convex_init(ibConvex* c, ibConvexType type, ibVec3 position, ibQuat rotation)
{
	memset(c, 0, offsetof(ibConvex, corner));
	c->type = type;
	c->position = position;
	ibQuat q = ibQuatNormalize(rotation);
	c->rotation = q;
	double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
	double xy = q.x * q.y, yz = q.y * q.z, zx = q.z * q.x;
	double xw = q.x * q.w, yw = q.y * q.w, zw = q.z * q.w;
	c->R.m[0][0] = 1.0 - 2.0 * (yy + zz);
	c->R.m[0][1] = 2.0 * (xy - zw);
	c->R.m[0][2] = 2.0 * (zx + yw);
	c->R.m[1][0] = 2.0 * (xy + zw);
	c->R.m[1][1] = 1.0 - 2.0 * (zz + xx);
	c->R.m[1][2] = 2.0 * (yz - xw);
	c->R.m[2][0] = 2.0 * (zx - yw);
	c->R.m[2][1] = 2.0 * (yz + xw);
	c->R.m[2][2] = 1.0 - 2.0 * (xx + yy);
}

/* The box's world corners into c->corner (with the arithmetic of the box path's features: the
 * columns of R scaled by the half extents, summed in the order x, y, z, then added to the position). */
static inline void ib_convex_box_corners(ibConvex* c)
{
	const ibMat3* R = &c->R;
	ibVec3 h = c->halfExtents;
	ibVec3 u = {R->m[0][0] * h.x, R->m[1][0] * h.x, R->m[2][0] * h.x};
	ibVec3 v = {R->m[0][1] * h.y, R->m[1][1] * h.y, R->m[2][1] * h.y};
	ibVec3 w = {R->m[0][2] * h.z, R->m[1][2] * h.z, R->m[2][2] * h.z};
	const ibVec3 ux[2] = {ibNeg(u), u}, uy[2] = {ibNeg(v), v}, uz[2] = {ibNeg(w), w};
	for (int k = 0; k < 8; ++k)
		c->corner[k] = ibAdd(c->position, ibAdd(ibAdd(ux[k & 1], uy[(k >> 1) & 1]), uz[k >> 2]));
	c->boxSize = ibLength(h);
	c->cornersValid = true;
}

/* World-space support point: argmax over the shape of dot(x, dir) (dir need not be unit). */
ibVec3 ib_convex_support(const ibConvex* c, ibVec3 dir);

/* Axis-aligned bounding box in world space. */
typedef struct ibAABB {
	ibVec3 lo, hi;
} ibAABB;

ibAABB ib_convex_aabb(const ibConvex* c);

/* ib_convex_aabb of a box (the same arithmetic), inline: the sync builds a box's view and box in one
 * pass. */
static inline ibAABB ib_convex_box_aabb(const ibConvex* c)
{
	const ibMat3* R = &c->R;
	ibVec3 h = c->halfExtents, e;
	e.x = fabs(R->m[0][0]) * h.x + fabs(R->m[0][1]) * h.y + fabs(R->m[0][2]) * h.z;
	e.y = fabs(R->m[1][0]) * h.x + fabs(R->m[1][1]) * h.y + fabs(R->m[1][2]) * h.z;
	e.z = fabs(R->m[2][0]) * h.x + fabs(R->m[2][1]) * h.y + fabs(R->m[2][2]) * h.z;
	return (ibAABB){ibSub(c->position, e), ibAdd(c->position, e)};
}

static inline bool ib_aabb_overlap(ibAABB a, ibAABB b)
{
	return a.lo.x <= b.hi.x && b.lo.x <= a.hi.x && a.lo.y <= b.hi.y && b.lo.y <= a.hi.y && a.lo.z <= b.hi.z &&
	       b.lo.z <= a.hi.z;
}

static inline ibAABB ib_aabb_union(ibAABB a, ibAABB b)
{
	return (ibAABB){{ib_fmin(a.lo.x, b.lo.x), ib_fmin(a.lo.y, b.lo.y), ib_fmin(a.lo.z, b.lo.z)},
	                {ib_fmax(a.hi.x, b.hi.x), ib_fmax(a.hi.y, b.hi.y), ib_fmax(a.hi.z, b.hi.z)}};
}

static inline ibAABB ib_aabb_fatten(ibAABB a, double margin)
{
	ibVec3 m = {margin, margin, margin};
	return (ibAABB){ibSub(a.lo, m), ibAdd(a.hi, m)};
}

static inline double ib_aabb_surface(ibAABB a)
{
	ibVec3 d = ibSub(a.hi, a.lo);
	return 2.0 * (d.x * d.y + d.y * d.z + d.z * d.x);
}

/* Result of a distance / penetration query between two convex shapes (§4 intro, §4.5.1.2). The
 * normal points from B towards A (towards the first body). */
typedef struct ibConvexDistance {
	double distance;   /* > 0 separated; < 0 penetration depth (negated) */
	ibVec3 pointA;     /* closest (or deepest) point on A, world */
	ibVec3 pointB;     /* on B, world */
	ibVec3 normal;     /* unit, from B to A */
	int iterations;
} ibConvexDistance;

/* ---- narrowphase (convex.c, gjk.c, epa.c, collide_special.c, narrowphase.c) -------------------
 * Invariant of every ibConvexDistance produced below: pointA - pointB == distance * normal. When
 * separated, the points are the closest points; when penetrating, pointA is A's deepest point
 * (support of A along -normal), pointB B's (support along +normal), and translating A by
 * -distance * normal brings the shapes into touching contact (minimum translational distance). */

/* Support of the shape's core: sphere -> its centre, capsule -> its inner segment, others -> the
 * shape itself (= ib_convex_support). The shape is its core swept by a ball of ib_convex_margin. */
ibVec3 ib_convex_support_core(const ibConvex* c, ibVec3 dir);
/* Radius swept around the core: sphere/capsule radius, 0 for box, cylinder and hull. */
double ib_convex_margin(const ibConvex* c);
/* ibMat3_Column, ibMat3_MulTV and ibMat3_MulV (the same arithmetic) of a matrix in memory: those take
 * the matrix by value, and the copy GCC makes of it (16-byte stores read back by loads that straddle
 * two of them) stalls store forwarding on the hot paths of the narrowphase. */
static inline ibVec3 ib_mat3_col(const ibMat3* A, int j) { return (ibVec3){A->m[0][j], A->m[1][j], A->m[2][j]}; }
static inline ibVec3 ib_mat3_mul_tv(const ibMat3* A, ibVec3 v)
{
	return (ibVec3){A->m[0][0] * v.x + A->m[1][0] * v.y + A->m[2][0] * v.z,
	                A->m[0][1] * v.x + A->m[1][1] * v.y + A->m[2][1] * v.z,
	                A->m[0][2] * v.x + A->m[1][2] * v.y + A->m[2][2] * v.z};
}
static inline ibVec3 ib_mat3_mul_v(const ibMat3* A, ibVec3 v)
{
	return (ibVec3){A->m[0][0] * v.x + A->m[0][1] * v.y + A->m[0][2] * v.z,
	                A->m[1][0] * v.x + A->m[1][1] * v.y + A->m[1][2] * v.z,
	                A->m[2][0] * v.x + A->m[2][1] * v.y + A->m[2][2] * v.z};
}
/* World <-> local point transforms of the shape's pose. */
static inline ibVec3 ib_convex_to_local(const ibConvex* c, ibVec3 world)
{
	return ib_mat3_mul_tv(&c->R, ibSub(world, c->position));
}
static inline ibVec3 ib_convex_to_world(const ibConvex* c, ibVec3 local)
{
	return ibAdd(c->position, ib_mat3_mul_v(&c->R, local));
}

/* Warm-start cache of one shape pair (same order a, b across calls): the support directions of
 * the terminal GJK simplex, in A's local frame. The next query starts from the support points
 * along these directions at the current poses, so the cache is always valid (even if shapes
 * change) and saves iterations when the poses are coherent. Zero-initialise ({0}) for an empty
 * cache; a cache filled for other shape types or core settings is ignored. */
typedef struct ibGjkCache {
	int tag;   /* 0: empty; else identifies (type A, type B, cores) */
	int count; /* 0..4 */
	ibVec3 dir[4];
	int satAxis; /* box pairs: 1 + the separating axis (ib_collide_box_box_sat_cached) that last put them
	              * farther apart than the tolerance; 0: none */
} ibGjkCache;

/* A simplex of the Minkowski difference A - B: w[i] = a[i] - b[i], a/b world support points of A
 * along d[i] and of B along -d[i]. */
typedef struct ibGjkSimplex {
	int count;
	ibVec3 w[4], a[4], b[4], d[4];
} ibGjkSimplex;

typedef struct ibGjkResult {
	double distance; /* >= 0: distance between the shapes (or cores); 0 when overlapping */
	ibVec3 pointA;   /* closest points (world) when separated */
	ibVec3 pointB;
	bool overlap;    /* the origin is in A - B (|v| <= 1e-13 max|w|: touching counts as overlap) */
	int iterations;
	ibGjkSimplex simplex; /* terminal simplex (starts EPA when overlapping) */
} ibGjkResult;

/* GJK distance (van den Bergen's loop, signed-volume sub-algorithm), stopping when
 * |v|^2 - v.w <= 1e-12 |v|^2. cores: run on ib_convex_support_core instead of the full shapes.
 * cache may be NULL. */
ibGjkResult ib_gjk_distance(const ibConvex* a, const ibConvex* b, bool cores, ibGjkCache* cache);

/* EPA penetration depth from a GJK terminal simplex containing the origin (blown up to a
 * polytope when degenerate). Fills out (distance = -depth <= 0) for the shapes (or cores) and
 * returns true; false only if A - B is found to be flat (out then has depth 0 and the flat
 * direction as normal). Stops when the support plane along the closest face's normal is within
 * 1e-10 x (size of A - B) of the face, or at 160 polytope vertices; the depth is that of the
 * closest face, a lower bound of the true depth (exact for polytopes; on curved surfaces it
 * converges slowly where the optimum is degenerate, e.g. coaxial cylinders). Uses ~50 kB of stack. */
bool ib_epa_penetration(const ibConvex* a, const ibConvex* b, bool cores, const ibGjkSimplex* simplex,
                        ibConvexDistance* out);

/* Closest points of segments p0p1 and q0q1: parameters s, t in [0, 1] (parallel overlapping
 * segments: the middle of the overlap). */
void ib_segment_closest_params(ibVec3 p0, ibVec3 p1, ibVec3 q0, ibVec3 q1, double* s, double* t);

/* Exact special cases (collide_special.c); the first argument is A (normal points towards it). */
ibConvexDistance ib_collide_sphere_sphere(const ibConvex* a, const ibConvex* b);
ibConvexDistance ib_collide_sphere_box(const ibConvex* sphere, const ibConvex* box);
ibConvexDistance ib_collide_sphere_capsule(const ibConvex* sphere, const ibConvex* capsule);
ibConvexDistance ib_collide_sphere_cylinder(const ibConvex* sphere, const ibConvex* cylinder);
ibConvexDistance ib_collide_capsule_capsule(const ibConvex* a, const ibConvex* b);
/* Box-box separating-axis test on the 15 axes: false if some axis separates; else true and out
 * holds the exact penetration (minimum translational distance), normal and deepest points. */
bool ib_collide_box_box_sat(const ibConvex* a, const ibConvex* b, ibConvexDistance* out);
/* The same with a tolerance: 1 overlapping (out filled), 0 separated by at most tolerance along every
 * candidate axis (the exact distance needs GJK), -1 separated by more than tolerance (out untouched). */
int ib_collide_box_box_sat_tol(const ibConvex* a, const ibConvex* b, double tolerance, ibConvexDistance* out);
/* The two halves of ib_collide_box_box_sat_tol: the axis search (same return values; on 1 st holds the
 * best face and edge axes) and the witness points of its result (distance, normal, points on both
 * surfaces). The manifold needs the witness only when no region vertex is as deep. */
typedef struct ibBoxSat {
	int bestKind;           /* 0: face of A, 1: face of B, 2: edge pair */
	int faceKind, faceI;    /* best face axis (kind 0/1, index) */
	int edgeI, edgeJ;       /* best edge axis A_i x B_j */
	double faceOverlap, edgeOverlap;
	ibVec3 faceNormal, edgeNormal; /* B -> A */
	bool edgeOk;            /* the edge axis is within rounding of the face axis or better */
} ibBoxSat;
int ib_box_box_sat_search(const ibConvex* a, const ibConvex* b, double tolerance, ibBoxSat* st);
/* ib_collide_box_box_sat_tol with temporal coherence: *axis (1 + axis index, 0: none) is the axis that
 * separated the pair beyond the tolerance last time; it is tested first (the same arithmetic as the
 * search, so the same outcome), and updated when the search finds another. */
int ib_collide_box_box_sat_cached(const ibConvex* a, const ibConvex* b, double tolerance, int* axis,
                                  ibConvexDistance* out);
void ib_box_box_sat_witness(const ibConvex* a, const ibConvex* b, const ibBoxSat* st, ibConvexDistance* out);

/* Distance or penetration between two convex shapes: exact special case when one exists, else
 * GJK on the cores (+ EPA when the cores overlap) with the margins added. cache may be NULL. */
ibConvexDistance ib_convex_query(const ibConvex* a, const ibConvex* b, ibGjkCache* cache);
/* The general path only (no special cases): GJK + EPA on the cores (cores = true) or on the full
 * shapes (cores = false). For tests and comparisons. */
ibConvexDistance ib_convex_query_gjk(const ibConvex* a, const ibConvex* b, bool cores, ibGjkCache* cache);

#endif
