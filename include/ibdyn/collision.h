/* ibdyn collision detection: world settings, shape filters, contacts and touch events read after a
 * step (events, not callbacks), scene queries (ray casts, overlaps, closest points) and debug drawing.
 * Chapter 4 of the thesis; see docs/collision.md. The settings (ibCollisionSettings, ibWorldDef.collision)
 * and the shape filter (ibFilter, ibShapeDef.filter) are declared in types.h. Conventions: a contact's normal points from shape
 * B towards shape A (towards the first body), separation = dot(pointA - pointB, normal) is negative
 * when the shapes interpenetrate. */
#ifndef IBDYN_COLLISION_H
#define IBDYN_COLLISION_H

#include "base.h"
#include "id.h"
#include "math.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Filter of scene queries: a shape is reported if (shape.category & maskBits) && (categoryBits & shape.mask). */
typedef struct ibQueryFilter {
	uint32_t categoryBits; /**< categories of the query */
	uint32_t maskBits;     /**< categories the query reports */
} ibQueryFilter;

/** Query filter that reports every shape. */
IB_API ibQueryFilter ibDefaultQueryFilter(void);

/** Axis-aligned box. */
typedef struct ibBounds {
	ibVec3 lower; /**< minimum corner (m) */
	ibVec3 upper; /**< maximum corner (m) */
} ibBounds;

/** Maximum number of points of one contact (a contact region is reduced to at most this many vertices). */
#define IB_MAX_CONTACT_POINTS 8

/** One point of a contact: a pair of points on the two surfaces. */
typedef struct ibContactPoint {
	ibVec3 pointA;     /**< on shape A (world, m) */
	ibVec3 pointB;     /**< on shape B (world, m) */
	double separation; /**< dot(pointA - pointB, normal) (m); negative: penetration */
} ibContactPoint;

/** A touching shape pair (one contact plane). */
typedef struct ibContactData {
	ibShapeId shapeA;  /**< first shape (the normal points towards it) */
	ibShapeId shapeB;  /**< second shape */
	ibVec3 normal;     /**< unit, from B towards A */
	int pointCount;    /**< 1..IB_MAX_CONTACT_POINTS */
	ibContactPoint points[IB_MAX_CONTACT_POINTS]; /**< vertices of the contact region */
} ibContactData;

/** A pair of shapes that started or stopped touching (closer than eps_c). */
typedef struct ibContactTouchEvent {
	ibShapeId shapeA; /**< first shape (may be stale for end events of destroyed shapes) */
	ibShapeId shapeB; /**< second shape */
} ibContactTouchEvent;

/** Touch events since the start of the last ibWorld_Step or ibWorld_Collide. The arrays stay valid until
 * the next step, ibWorld_Collide or shape change. */
typedef struct ibContactEvents {
	const ibContactTouchEvent* beginEvents; /**< pairs that started touching */
	int beginCount;                         /**< number of begin events */
	const ibContactTouchEvent* endEvents;   /**< pairs that stopped touching (or whose shape was destroyed) */
	int endCount;                           /**< number of end events */
} ibContactEvents;

/** Counters of the last step's (or ibWorld_Collide's) collision detection. */
typedef struct ibCollisionStats {
	int proxyCount;        /**< broadphase proxies (one per shape) */
	int pairCount;         /**< broadphase candidate pairs (after the filter) of the last detection */
	int contactCount;      /**< touching pairs (contacts) of the last detection */
	int toiSubsteps;       /**< sub-steps ended at a time of contact in the last step */
	int toiIterations;     /**< re-simulations spent searching times of contact in the last step */
	int caEvents;          /**< times of contact found by conservative advancement in the last step */
	double firstToi;       /**< time from the step start to the first time of contact (s); -1 if none */
	double maxPenetration; /**< deepest new penetration seen by the penetration tests of the last step (m) */
} ibCollisionStats;

/** Result of a ray cast. */
typedef struct ibRayResult {
	ibShapeId shape; /**< shape hit (null if none) */
	ibVec3 point;    /**< hit point (world) */
	ibVec3 normal;   /**< outward surface normal at the hit point */
	double fraction; /**< hit = origin + fraction * translation, in [0, 1] */
	bool hit;        /**< false if nothing was hit */
} ibRayResult;

/** Closest points of a shape and another shape or a point. */
typedef struct ibDistanceOutput {
	ibVec3 pointA;   /**< on the first shape (deepest point when penetrating) */
	ibVec3 pointB;   /**< on the second shape, or the query point */
	ibVec3 normal;   /**< unit, from B towards A */
	double distance; /**< signed: > 0 separated, < 0 penetration depth (negated) */
} ibDistanceOutput;

/** Geometry of a query shape (for overlap tests of shapes not in the world). */
typedef struct ibQueryShape {
	ibShapeType type;     /**< sphere, box, capsule, cylinder or mesh (the convex hull of points) */
	ibSphere sphere;      /**< for IB_SHAPE_SPHERE */
	ibBox box;            /**< for IB_SHAPE_BOX */
	ibCapsule capsule;    /**< for IB_SHAPE_CAPSULE */
	ibCylinder cylinder;  /**< for IB_SHAPE_CYLINDER */
	const ibVec3* points; /**< for IB_SHAPE_MESH: hull points in the shape frame */
	int pointCount;       /**< number of points (>= 1) */
} ibQueryShape;

/** Debug-draw hooks implemented by tools; NULL hooks are skipped. Colours are 0xRRGGBB. */
typedef struct ibDebugDraw {
	void (*drawSegment)(ibVec3 p1, ibVec3 p2, uint32_t color, void* context);          /**< a line segment */
	void (*drawPoint)(ibVec3 p, double size, uint32_t color, void* context);           /**< a point (size in m) */
	void (*drawShape)(ibVec3 position, ibQuat rotation, ibShapeId shape, uint32_t color,
	                  void* context);                                                   /**< a shape at its world pose */
	void (*drawContact)(ibVec3 point, ibVec3 normal, double separation, void* context); /**< a contact point */
	bool drawShapes;   /**< call drawShape (or, without it, drawSegment wireframes) for every shape */
	bool drawBounds;   /**< draw the shapes' AABBs with drawSegment */
	bool drawContacts; /**< draw the current contact points (drawContact, or drawPoint + drawSegment) */
	void* context;     /**< passed to every hook */
} ibDebugDraw;

/** Debug draw with every category enabled and no hooks. */
IB_API ibDebugDraw ibDefaultDebugDraw(void);

/** Replace the collision settings (validated; a new broadphase method rebuilds the broadphase). */
IB_API ibResult ibWorld_SetCollisionSettings(ibWorldId world, const ibCollisionSettings* settings);
/** Current collision settings. */
IB_API ibCollisionSettings ibWorld_GetCollisionSettings(ibWorldId world);
/** Run collision detection at the current poses without stepping: refreshes contacts and touch events. */
IB_API ibResult ibWorld_Collide(ibWorldId world);
/** Number of contacts of the last detection (ibWorld_Step: at the start of its last sub-step). */
IB_API int ibWorld_GetContactCount(ibWorldId world);
/** Write up to capacity contacts into out; returns the number of contacts. */
IB_API int ibWorld_GetContacts(ibWorldId world, ibContactData* out, int capacity);
/** Touch events since the start of the last step or ibWorld_Collide. */
IB_API ibContactEvents ibWorld_GetContactEvents(ibWorldId world);
/** Counters of the last detection and step. */
IB_API ibCollisionStats ibWorld_GetCollisionStats(ibWorldId world);
/** Enable (true, default) or disable collisions between all shapes of two bodies. */
IB_API ibResult ibWorld_SetPairCollision(ibBodyId bodyA, ibBodyId bodyB, bool collide);
/** False if the two bodies' collisions were disabled with ibWorld_SetPairCollision. */
IB_API bool ibWorld_GetPairCollision(ibBodyId bodyA, ibBodyId bodyB);

/** Closest hit of the segment origin -> origin + translation with any shape passing the filter. */
IB_API ibRayResult ibWorld_CastRayClosest(ibWorldId world, ibVec3 origin, ibVec3 translation, ibQueryFilter filter);
/** All hits, ordered by fraction (one per shape); writes up to capacity, returns the number of hits (-1 on error). */
IB_API int ibWorld_CastRayAll(ibWorldId world, ibVec3 origin, ibVec3 translation, ibQueryFilter filter,
                              ibRayResult* out, int capacity);
/** Shapes whose bounding box overlaps bounds; writes up to capacity, returns the count (-1 on error). */
IB_API int ibWorld_OverlapBounds(ibWorldId world, ibBounds bounds, ibQueryFilter filter, ibShapeId* out, int capacity);
/** Shapes that overlap (or touch) a query shape at a pose; writes up to capacity, returns the count (-1 on error). */
IB_API int ibWorld_OverlapShape(ibWorldId world, const ibQueryShape* shape, ibVec3 position, ibQuat rotation,
                                ibQueryFilter filter, ibShapeId* out, int capacity);
/** Closest points (or penetration) of two shapes at their current poses. */
IB_API ibResult ibShape_Distance(ibShapeId shapeA, ibShapeId shapeB, ibDistanceOutput* out);
/** Closest point of a shape to a world point (pointB = the point; distance < 0 inside the shape). */
IB_API ibResult ibShape_ClosestPoint(ibShapeId shape, ibVec3 point, ibDistanceOutput* out);
/** World AABB of a shape at its body's current pose. */
IB_API ibBounds ibShape_GetBounds(ibShapeId shape);
/** Collision filter of a shape. */
IB_API ibFilter ibShape_GetFilter(ibShapeId shape);
/** Replace a shape's collision filter (takes effect at the next detection). */
IB_API ibResult ibShape_SetFilter(ibShapeId shape, ibFilter filter);
/** Draw shapes, bounds and contacts through the hooks. */
IB_API ibResult ibWorld_Draw(ibWorldId world, const ibDebugDraw* draw);

#ifdef __cplusplus
}
#endif
#endif
