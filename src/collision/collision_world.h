/* The world's collision pipeline (Chapter 4, digest Part IV; step placement: Part VI §21 items 2 and 8)
 * and the contact set it hands to the contact solver (Chapter 5). Internal, not installed.
 *
 * Ownership (so that parallel work does not collide):
 *   manifold.c          ib_manifold_build / ib_manifold_plane   (contact regions, §4.5.1.3)
 *   shape_pair.c        ib_shape_world_aabb / ib_shape_pair_collide (shape-type dispatch)
 *   collision_world.c   ib_collision_* (broadphase over shapes, pair cache, contact set, TOI test)
 *   src/contact/        consumes ib_collision_contacts() (classification, impulses, contact joints)
 *
 * Conventions: normal points from B towards A (towards the first body, §4 intro);
 * separation = dot(pointA - pointB, normal), negative when penetrating. */
#ifndef IBDYN_SRC_COLLISION_WORLD_H
#define IBDYN_SRC_COLLISION_WORLD_H

#include <stdint.h>

#include "collision/convex.h"
#include "dynamics/world.h"

/* [IMPL] Two cylinders side by side count as crossing where |z_a x z_b| (the sine of the angle between
 * their axes) exceeds this; below it they count as parallel. The normal across both axes, z_a x z_b, of
 * nearly parallel axes points wherever their tiny deviation turns it, not across the pair: logs lying
 * 1e-5..1e-3 rad out of parallel in a pile got normals tens of degrees off (contact_set.c normal_body).
 * For parallel ones the line of the centres (cores) without its part along the axis is the common
 * perpendicular. Used by manifold.c (cylinder_pair_normal) and contact_set.c (normal_body). */
#define IB_CYLINDERS_CROSSING 0.1

/* Upper bound of points kept per manifold after reduction (the reduction keeps the support polygon). */
#define IB_MANIFOLD_MAX_POINTS 8

typedef struct ibManifoldPoint {
	ibVec3 pointA;     /* on A's surface, world */
	ibVec3 pointB;     /* on B's surface, world */
	double separation; /* dot(pointA - pointB, normal) (m); < 0: penetration */
	uint32_t key;      /* feature key, stable while the same features touch (warm start); 0 = unknown */
} ibManifoldPoint;

typedef struct ibManifold {
	ibVec3 normal; /* unit, from B to A; shared by all points (convex pair: one contact plane) */
	int pointCount;
	ibManifoldPoint points[IB_MANIFOLD_MAX_POINTS];
} ibManifold;

/* Contact region of two convex shapes at their poses: every vertex of the region where the shapes are
 * closer than tolerance (eps_c), also when they interpenetrate. Returns pointCount (0 if farther apart
 * than tolerance). cache may be NULL. */
int ib_manifold_build(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache, ibManifold* out);
/* The same without the box shortcuts (box faces ordered directly instead of by the 2-D hull): the
 * reference the tests compare the shortcuts with. */
int ib_manifold_build_reference(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache,
                                ibManifold* out);
/* Contact region of a convex shape A and the half-space {x : dot(normal, x) <= offset} (B). */
int ib_manifold_plane(const ibConvex* a, ibVec3 planeNormal, double planeOffset, double tolerance, ibManifold* out);

/* ---- shape_pair.c */

/* World pose of a shape (from its body's pose and the shape's local pose). */
void ib_shape_world_pose(const ibBody* b, const ibShape* s, ibVec3* pos, ibQuat* rot);
/* Convex view of a convex shape at its world pose; false for shapes that are not convex. */
bool ib_shape_convex(const ibBody* b, const ibShape* s, ibConvex* out);
/* The same at a given world pose of the shape (ib_shape_world_pose's). */
bool ib_shape_convex_at(const ibShape* s, ibVec3 pos, ibQuat rot, ibConvex* out);
/* World AABB of a shape (tight; infinite shapes give a huge box). */
ibAABB ib_shape_world_aabb(const ibBody* b, const ibShape* s);
/* Per-pair persistent data of the narrowphase (temporal coherence). Zero-initialise. */
typedef struct ibPairCache {
	ibGjkCache gjk;
} ibPairCache;
/* Most manifolds the pipeline takes of one shape pair (a triangle mesh: one per touching triangle). */
#define IB_PAIR_MANIFOLDS 16
/* Contact manifolds of a shape pair (phases 2-3): writes up to capacity manifolds (convex pairs 0 or 1;
 * a triangle mesh one per touching triangle) and returns how many. */
int ib_shape_pair_collide(const ibBody* ba, const ibShape* sa, const ibBody* bb, const ibShape* sb, double tolerance,
                          ibPairCache* cache, ibManifold* out, int capacity);
/* The same with the shapes' convex views already made (ib_shape_convex at the current poses; NULL
 * for a shape that is not convex): the pipeline makes them once per pose, not once per pair. */
int ib_shape_pair_collide_views(const ibBody* ba, const ibShape* sa, const ibConvex* ca, const ibBody* bb,
                                const ibShape* sb, const ibConvex* cb, double tolerance, ibPairCache* cache,
                                ibManifold* out, int capacity);

/* ---- collision_world.c */

/* One touching shape pair after ib_collision_detect: bodyA/shapeA is the first body (normal towards it). */
typedef struct ibContactPair {
	int32_t shapeA, shapeB; /* shape indices in w->shapes */
	int32_t bodyA, bodyB;   /* body indices in w->bodies */
	ibManifold manifold;
} ibContactPair;

/* Settings of collision detection: the public ibCollisionSettings (include/ibdyn/types.h; its first
 * field is contactTolerance = eps_c), kept in w->collisionSettings. */

/* Phases 1-3 at the current body states: refreshes the world's contact set. */
ibResult ib_collision_detect(ibWorld* w);
/* The contact set of the last ib_collision_detect (valid until the next call or a shape change). */
int ib_collision_contacts(ibWorld* w, ibContactPair** out);
/* Penetration test only (phases 1-2, §4.1 step 4): the largest penetration depth (>= 0) over all pairs. */
double ib_collision_max_penetration(ibWorld* w);
/* Free the world's collision data (world destruction). */
void ib_collision_destroy(ibWorld* w);

/* ---- additions of the pipeline (collision_world.c, collision_api.c, toi.c) */

/* Check public collision settings; message into msg. */
ibResult ib_validate_collision(const ibCollisionSettings* s, char* msg, size_t n);
/* Result of a penetration test (phases 1-2 only): the pairs not touching at the last detection. */
typedef struct ibPenetration {
	double minSeparation; /* smallest signed distance of such a pair within eps_c of its AABB (+inf: none) */
	int32_t shapeA, shapeB; /* that pair (shape indices), -1 if none */
} ibPenetration;
/* Penetration test at the current poses over the pairs that were not touching at the last
 * ib_collision_detect (new contacts); touching pairs and the pairs marked speculative at t0
 * (ib_toi_mark_speculative) belong to the contact solver. false: out of memory. */
bool ib_collision_penetration(ibWorld* w, ibPenetration* out);
/* Bring the broadphase up to the current shape table and poses (no narrowphase). */
ibResult ib_collision_sync(ibWorld* w);
/* The shapes whose broadphase boxes overlap box, for waking sleeping bodies by box overlap (sleep.c): fn
 * gets a superset of the shapes of sleeping bodies whose world boxes overlap box (and other shapes).
 * false (fn not called) when the broadphase cannot answer: no sync yet, or a body fell asleep or a
 * shape was created since the last one; the caller then scans. */
typedef void ibShapeCandidateFn(void* ctx, int32_t shape);
bool ib_collision_sleeping_candidates(ibWorld* w, ibAABB box, ibShapeCandidateFn* fn, void* ctx);
/* The filter rules for two shapes of different bodies beyond the broadphase's (same body, joints
 * without collideConnected, excluded body pairs); valid after ib_collision_sync. */
bool ib_collision_bodies_may_collide(ibWorld* w, int32_t bodyA, int32_t bodyB);
/* True if the shape pair (indices) was touching at the last ib_collision_detect. */
bool ib_collision_was_touching(ibWorld* w, int32_t shapeA, int32_t shapeB);
/* Clear the touch events (start of a step / ibWorld_Collide); detections then append. */
void ib_collision_begin_events(ibWorld* w);
/* The world's broadphase (NULL before the first sync). */
struct ibBroadphase* ib_collision_broadphase(ibWorld* w);
/* Proxy of a shape index (IB_BP_NULL if none). */
int32_t ib_collision_shape_proxy(ibWorld* w, int32_t shape);

/* ---- toi.c: the time step with collision detection (§4.1, digest §21 items 2 and 8) */

/* A phase of the step over length h (step.c): the detection at t0 (+ contact resolution), and the
 * motion (joint correction, free motion, velocity correction). */
typedef void ibStepPhaseFn(ibWorld* w, double h);
/* Run a step of length h as sub-steps: at each sub-step start atT0 (collision detection at t0), then
 * motion; if the motion makes a pair that was not touching at t0 penetrate deeper than eps_c, or a fast
 * body would pass a shape (conservative advancement), undo it, search the time of contact and end the
 * sub-step there; the rest of the step follows (at most maxToiSubsteps times). */
void ib_toi_step(ibWorld* w, double h, ibStepPhaseFn* atT0, ibStepPhaseFn* motion);
/* True during the last sub-step of ib_toi_step once maxToiSubsteps is reached: nothing checks it for
 * new penetrations (the contact solver then adds speculative points of approaching pairs). */
bool ib_toi_unchecked(const ibWorld* w);
/* True during the detection at t0 of a sub-step that ib_toi_step checks for times of contact, with
 * ibCollisionSettings.speculativeApproach (approaching pairs may then be left to speculative points). */
bool ib_toi_checked(const ibWorld* w);
/* [IMPL] The pair (shape indices) got speculative points at this sub-step's t0 (contact_speculative.c):
 * the penetration tests of the sub-step leave it to the contact solver, as a touching pair. false on OOM. */
bool ib_toi_mark_speculative(ibWorld* w, int32_t shapeA, int32_t shapeB);
/* [IMPL] The gap (m) up to which the pair (shape indices), at the world's current state, would get
 * speculative points at the start of a checked sub-step of length h (contact_speculative.c's
 * near_pair: speculativeApproach on, restitution 0, not fast, closing within its reach); 0 if it
 * would not. The time-of-contact search ends a sub-step once the pair it tracks is that close. */
double ib_contacts_speculative_window(const ibWorld* w, int32_t shapeA, int32_t shapeB, double h);
/* How far two points of the pair (shape indices) can approach each other in h at the current
 * velocities, with the gravity and recovery speeds a step can add, doubled (m). */
double ib_contacts_closing_bound(const ibWorld* w, int32_t shapeA, int32_t shapeB, double h);
/* Candidates of speculative contacts (src/contact/contact_speculative.c): every shape pair that may
 * collide, was not touching at the last detection and whose AABBs overlap when fattened by the motion
 * bounds motion[body] (m; indexed like w->bodies, 0 for bodies that do not move) of its two bodies;
 * each pair once, fn(w, ctx, shapeA, shapeB). false on OOM. */
typedef bool ibNearPairFn(ibWorld* w, void* ctx, int32_t shapeA, int32_t shapeB);
bool ib_collision_near_pairs(ibWorld* w, const double* motion, ibNearPairFn* fn, void* ctx);

#endif
