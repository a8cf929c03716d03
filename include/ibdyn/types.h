/* ibdyn definition structs (*Def) and the value types the API exchanges.
 * Always start from ibDefault*Def() and change what you need. Units are SI: m, kg, s, rad, N. */
#ifndef IBDYN_TYPES_H
#define IBDYN_TYPES_H

#include "base.h"
#include "id.h"
#include "math.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Integrator for the rotational equations of motion (translation is always exact, eqs 3.2/3.3). */
typedef enum ibIntegrator {
	IB_INTEGRATOR_RK4 = 0,       /**< classical 4th-order Runge-Kutta (App. B.1.3), in equal sub-steps of at most 0.1 rad of turn */
	IB_INTEGRATOR_CASH_KARP = 1, /**< embedded adaptive RK 5(4), Cash-Karp coefficients, sub-steps to a tolerance (App. B.1.4) */
} ibIntegrator;

/** Method for systems of joints (§3.3). */
typedef enum ibJointSolver {
	IB_SOLVER_AUTO = 0,      /**< LGS where the joint graph is a forest, otherwise the iterative method */
	IB_SOLVER_ITERATIVE = 1, /**< iterative method (Alg. 3.1 and 3.2) */
	IB_SOLVER_LGS = 2,       /**< linear-system method; O(n) block factorisation for acyclic joint graphs (loops: iterative) */
	IB_SOLVER_LGS_SPARSE = 3, /**< linear-system method on the whole joint graph with a sparse Cholesky factorisation
	                           *   (CHOLMOD): loops solved directly, redundant constraints handled by regularisation
	                           *   and iterative refinement; with maxCorrectionImpulse > 0 the iterative method */
} ibJointSolver;

/** Body type. */
typedef enum ibBodyType {
	IB_BODY_STATIC = 0,    /**< never moves, infinite mass */
	IB_BODY_KINEMATIC = 1, /**< moves with its set velocity, ignores forces, infinite mass */
	IB_BODY_DYNAMIC = 2,   /**< moved by forces, joints and contacts */
} ibBodyType;

/** Restitution law of collisions (§5.1.3). */
typedef enum ibRestitutionLaw {
	IB_RESTITUTION_NEWTON = 0,  /**< post-impact normal velocity -e times the pre-impact one (eq. 5.2) */
	IB_RESTITUTION_POISSON = 1, /**< total normal impulse (1 + e) times the compression impulse (eq. 5.3) */
} ibRestitutionLaw;

/** How the coefficients of two touching shapes combine into the pair's coefficient (§5.1.3, §5.1.4). */
typedef enum ibMixRule {
	IB_MIX_PRODUCT = 0, /**< c1 * c2 (the thesis' rule for restitution) */
	IB_MIX_SUM = 1,     /**< c1 + c2 (the thesis' rule for friction) */
	IB_MIX_MIN = 2,     /**< min(c1, c2) */
	IB_MIX_MAX = 3,     /**< max(c1, c2) */
	IB_MIX_MEAN = 4,    /**< (c1 + c2) / 2 */
} ibMixRule;

/** Settings of collision and resting-contact resolution (Chapter 5; see docs/contacts.md). */
typedef struct ibContactSettings {
	bool enabled;                     /**< resolve collisions and resting contacts between shapes (default true; needs collision detection on) */
	ibRestitutionLaw restitutionLaw;  /**< Newton (default) or Poisson */
	ibMixRule restitutionMixing;      /**< combination of the two restitution coefficients (default product) */
	ibMixRule frictionMixing;         /**< combination of the friction coefficients, mu_s and mu_d (default sum) */
	double restingSpeed;              /**< eps_rc (m/s) separating resting contacts from collisions (eq. 5.1);
	                                   *   0 = sqrt(2 |g| eps_c) (eps_c: ibCollisionSettings.contactTolerance), with |g| = 9.81 when gravity is zero */
	double collisionTolerance;        /**< eps_v,c (m/s): collision loop target tolerance, > 0 */
	double contactPositionTolerance;  /**< eps_d (m) of contact joints (predicted penetration and static-friction offset), > 0 */
	int maxCollisionIterations;       /**< cap on collision-loop sweeps per step (anytime), >= 1 */
	int maxContactIterations;         /**< cap on contact-joint correction sweeps per step (position and velocity), >= 1 */
	bool jointVelocitySweeps;         /**< one joint velocity-correction sweep after each collision sweep (§5.4.1) */
	bool contactGraph;                /**< sweep the points level by level from the static bodies up (§5.2.3) */
	int shockIterations;              /**< after this many sweeps one shock-propagation pass ends each loop
	                                   *   (§5.2.4, §5.3.2; 0 = off) */
	bool directSolve;                 /**< before the sweeps, one sparse direct solve of all resting contacts (face
	                                   *   contacts as 6-dof blocks) gives their starting impulses (default true; with
	                                   *   joints the points of jointed bodies are left to the sweeps; not used while soft
	                                   *   bodies exist; docs/contacts.md) */
	bool warmStart;                   /**< start the contact-joint loops from the previous step's impulses of the same
	                                   *   points (matched by shapes and feature key; default true, docs/contacts.md) */
	int stallSweeps;                  /**< end a contact loop (collisions, contact joints) early when the largest impulse of
	                                   *   its sweeps has not halved within this many sweeps (0 = never; default 50):
	                                   *   a cycling pile then stops with the step reported not converged instead of
	                                   *   running to the cap (docs/contacts.md "Stalled loops") */
	bool jointResponse;               /**< points on jointed bodies use the joint system's response K_eff, probed with unit
	                                   *   impulses before each loop, instead of the free bodies' K (§5.4.2, default true;
	                                   *   docs/contacts.md "Joint response") */
	bool directFollow;                /**< the joints' follow of such a point's impulse is solved as one dense system per
	                                   *   joint-connected group of bodies (up to 512 rows) before its sweeps (default
	                                   *   true; docs/contacts.md "Joint response") */
} ibContactSettings;

/** Sleeping of resting islands (docs/contacts.md, "Sleeping"). An island is a set of dynamic bodies
 * connected by contacts and joints (static and kinematic bodies do not connect). A body is a sleep
 * candidate while |v| <= linearThreshold and |w| <= angularThreshold; an island falls asleep when all
 * its bodies have been candidates for timeToSleep. Sleeping bodies are not integrated, have zero
 * velocities and their contacts with static or sleeping bodies are not resolved. */
typedef struct ibSleepSettings {
	bool enabled;            /**< let resting islands fall asleep (default false: opt-in) */
	double linearThreshold;  /**< speed of the centre of mass below which a body may sleep (m/s), >= 0 (default 0.05) */
	double angularThreshold; /**< angular speed below which a body may sleep (rad/s), >= 0 (default 0.05) */
	double timeToSleep;      /**< time all bodies of an island must stay below the thresholds (s), >= 0 (default 0.5) */
} ibSleepSettings;

/** Settings of the world's solver and integrator (changeable after creation). */
typedef struct ibSolverSettings {
	ibJointSolver method;         /**< method for systems of joints */
	ibIntegrator integrator;      /**< rotational integrator */
	double integratorTolerance;   /**< Cash-Karp local error tolerance per sub-step (rad, rad/s), > 0 */
	int integratorMaxSubsteps;    /**< Cash-Karp sub-step cap per step, >= 1 */
	double positionTolerance;     /**< eps_d: translational joint position tolerance (m), > 0 */
	double angularTolerance;      /**< eps_d for rotational joint conditions (rad), > 0 */
	double velocityTolerance;     /**< eps_v: velocity tolerance (m/s and rad/s), > 0 */
	int maxPositionIterations;    /**< cap on joint-correction sweeps per step (anytime behaviour), >= 1 */
	int maxVelocityIterations;    /**< cap on velocity-correction sweeps per step, >= 1 */
	double maxCorrectionImpulse;  /**< bound on the accumulated correction impulse per basic joint and step (N s, or N m s for rotational rows; 0 = unbounded) */
	bool warmStart;               /**< start both correction loops from the previous step's impulses (same tolerances, fewer sweeps) */
	int order;                    /**< 1 (default), 2 (midpoint step, §3.4.4), 4 or 6 (weighted combination of 1, 2, 3 midpoint sub-steps) */
	int maxStepSubdivisions;      /**< if the joint corrections do not converge, redo the step as 2 halves, up to this depth (0 = never) */
	ibContactSettings contact;    /**< collision and resting-contact resolution (Chapter 5) */
	ibSleepSettings sleep;        /**< sleeping of resting islands */
	double maxLinearSpeed;        /**< a dynamic body or particle faster than this (m/s) after a step marks the world diverged
	                               *   like a non-finite state (IB_ERR_DIVERGED, ibWorld_HasDiverged): a blow-up that stays
	                               *   finite is reported, not simulated on; 0 = no bound; default 1e4 */
	double maxAngularSpeed;       /**< the same for a dynamic body's angular speed (rad/s); 0 = no bound; default 1e5 */
	double maxRotationPerStep;    /**< split a step into equal sub-steps (same forces) so that no jointed body turns by more than this (rad) per sub-step at its angular velocity at the step start (at most 8 sub-steps); contact joints of a body turning by more than this in a (sub-)step predict their errors to first order (docs/contacts.md); 0 = off; default 0.5 */
} ibSolverSettings;

/** Broadphase algorithm (§4.5.1.1). Both give the same pair set. */
typedef enum ibBroadphaseMethod {
	IB_BROADPHASE_SWEEP_AND_PRUNE = 0, /**< sweep and prune on three axes with temporal coherence (default) */
	IB_BROADPHASE_DYNAMIC_TREE = 1,    /**< dynamic AABB trees (better for many static shapes and queries) */
} ibBroadphaseMethod;

/** Time-of-contact search after a step that produced a new penetration deeper than eps_c (§4.1). */
typedef enum ibToiMode {
	IB_TOI_OFF = 0,           /**< accept penetrations (the contact solver resolves them next step) */
	IB_TOI_INTERPOLATION = 1, /**< regula falsi on the signed distance, bisection when it stalls (default) */
	IB_TOI_BISECTION = 2,     /**< bisection only (does not need the penetration depth) */
} ibToiMode;

/** Collision settings of a world (ibWorldDef.collision, ibWorld_SetCollisionSettings). */
typedef struct ibCollisionSettings {
	double contactTolerance;      /**< eps_c (m), > 0: shapes closer than this are in contact (default 1e-4) */
	ibBroadphaseMethod broadphase; /**< broadphase algorithm */
	ibToiMode toiMode;            /**< time-of-contact search mode */
	bool conservativeAdvancement; /**< bound the motion of fast bodies against the distance so that they cannot
	                               *   pass thin shapes within one step (default true) */
	int maxToiSubsteps;           /**< time-of-contact sub-steps per step, >= 0 (default 8); the rest of the step
	                               *   is then simulated without TOI */
	int maxToiIterations;         /**< iterations of one time-of-contact search, >= 1 (default 40) */
	bool speculativeApproach;     /**< [IMPL] in the sub-steps the time-of-contact test checks, approaching inelastic
	                               *   pairs whose approach over the step is at most the smaller inner half size get
	                               *   speculative contact points instead of a time-of-contact search (which
	                               *   re-simulates the whole world); faster for many bodies, deeper while they
	                               *   tumble (default false) */
	bool enabled;                 /**< run collision detection in ibWorld_Step (default true) */
} ibCollisionSettings;

/** Per-shape collision filter (§4.5). Two shapes are tested if neither body pair rule forbids it and:
 * equal non-zero groupIndex: positive always, negative never; otherwise
 * (categoryA & maskB) != 0 && (categoryB & maskA) != 0. */
typedef struct ibFilter {
	uint32_t categoryBits; /**< categories the shape belongs to (default 1) */
	uint32_t maskBits;     /**< categories it collides with (default all) */
	int32_t groupIndex;    /**< 0: none */
} ibFilter;

/** World definition. */
typedef struct ibWorldDef {
	ibVec3 gravity;            /**< gravitational acceleration (m/s^2) */
	ibSolverSettings solver;   /**< solver and integrator settings */
	ibCollisionSettings collision; /**< collision detection settings */
	ibAllocFn* allocFn;        /**< allocator hook (NULL = malloc) */
	ibReallocFn* reallocFn;    /**< reallocation hook (NULL = realloc); set together with allocFn/freeFn */
	ibFreeFn* freeFn;          /**< free hook (NULL = free) */
	void* allocContext;        /**< passed to the allocator hooks */
	ibLogFn* logFn;            /**< log hook (NULL = silent) */
	void* logContext;          /**< passed to logFn */
	ibEnqueueTaskFn* enqueueTask; /**< task hook (NULL = everything on the calling thread); set with finishTask.
	                               *   Used by the free motion of the bodies (integration); the contact and joint
	                               *   loops are serial Gauss-Seidel sweeps (README "Task hooks") */
	ibFinishTaskFn* finishTask;   /**< waits for a task from enqueueTask */
	void* taskContext;            /**< passed to the task hooks */
	int workerCount;              /**< number of distinct worker indices the task hook uses, 1..IB_MAX_WORKERS (default 1) */
	void* userData;            /**< user pointer, returned by ibWorld_GetUserData */
	int internalValue;         /**< set by ibDefaultWorldDef; used to detect uninitialised defs */
} ibWorldDef;

/** Body definition. Pose is the pose of the user's body frame (shapes and anchors are given in it). */
typedef struct ibBodyDef {
	ibBodyType type;         /**< static, kinematic or dynamic */
	ibVec3 position;         /**< origin of the body frame in world coordinates (m) */
	ibQuat rotation;         /**< body frame to world rotation (unit quaternion; normalised on creation) */
	ibVec3 linearVelocity;   /**< velocity of the centre of mass (m/s, world) */
	ibVec3 angularVelocity;  /**< angular velocity (rad/s, world) */
	double linearDamping;    /**< linear damping rate c: force -c m v (1/s), >= 0 */
	double angularDamping;   /**< angular damping rate c: torque -c J w (1/s), >= 0 */
	double gravityScale;     /**< multiplies the world gravity for this body */
	int solverGroup;         /**< solver group (>= 0, default 0): the joint method of the body's island can be set per group (ibWorld_SetGroupSolver) */
	bool enableSleep;        /**< the body may fall asleep (default true; false also keeps its island awake) */
	bool isAwake;            /**< false: a dynamic body is created asleep (default true) */
	const char* name;        /**< optional name (copied; used by scene files and CSV headers) */
	void* userData;          /**< user pointer */
	int internalValue;       /**< set by ibDefaultBodyDef */
} ibBodyDef;

/** Shape type. */
typedef enum ibShapeType {
	IB_SHAPE_SPHERE = 0,   /**< sphere about the shape origin */
	IB_SHAPE_BOX = 1,      /**< box centred at the shape origin */
	IB_SHAPE_CAPSULE = 2,  /**< segment along the shape's z axis swept by a sphere */
	IB_SHAPE_CYLINDER = 3, /**< cylinder with its axis along the shape's z axis */
	IB_SHAPE_MESH = 4,     /**< closed, consistently oriented (counter-clockwise outward) triangle mesh */
	IB_SHAPE_HULL = 5,     /**< convex hull of a point set (faces, edges, vertices and their adjacency) */
	IB_SHAPE_PLANE = 6,    /**< infinite plane: the half-space below it is solid; static/kinematic bodies only */
	IB_SHAPE_TRIMESH = 7,  /**< triangle soup (open or closed) with a BVH; static/kinematic bodies only, no mass */
	IB_SHAPE_TYPE_COUNT
} ibShapeType;

/** Sphere geometry. */
typedef struct ibSphere {
	double radius; /**< radius (m), > 0 */
} ibSphere;

/** Box geometry. */
typedef struct ibBox {
	ibVec3 halfExtents; /**< half edge lengths along the shape's axes (m), each > 0 */
} ibBox;

/** Capsule geometry: the segment from (0,0,-halfLength) to (0,0,+halfLength) swept by a sphere. */
typedef struct ibCapsule {
	double radius;     /**< radius (m), > 0 */
	double halfLength; /**< half length of the inner segment (m), >= 0 */
} ibCapsule;

/** Cylinder geometry, axis along z from -halfLength to +halfLength. */
typedef struct ibCylinder {
	double radius;     /**< radius (m), > 0 */
	double halfLength; /**< half height (m), > 0 */
} ibCylinder;

/** Triangle mesh geometry (copied on shape creation). Triangles are counter-clockwise seen from outside.
 * Also the input of a static triangle mesh (ibCreateTriMeshShape: any soup, >= 3 vertices and >= 1 triangle),
 * whose contacts are one-sided: shapes are pushed out through the front of its faces (docs/shapes.md). */
typedef struct ibMesh {
	const ibVec3* vertices; /**< vertex positions in the shape frame (m) */
	int vertexCount;        /**< number of vertices, >= 4 */
	const int* indices;     /**< 3 vertex indices per triangle */
	int triangleCount;      /**< number of triangles, >= 4 */
} ibMesh;

/** Convex hull geometry: the hull of the given points is computed (qhull) on shape creation. Points
 * inside the hull or on its faces are dropped; coplanar hull facets are merged into polygons. */
typedef struct ibHull {
	const ibVec3* points; /**< input points in the shape frame (m), finite */
	int pointCount;       /**< number of points, >= 4, not all in one plane */
} ibHull;

/** One face of a hull: a convex polygon, its vertex loop counter-clockwise seen from outside. */
typedef struct ibHullFace {
	ibVec3 normal; /**< unit outward normal (shape frame) */
	double offset; /**< plane: dot(normal, x) = offset for points x of the face (m) */
	int first;     /**< start of the face's loop in ibHullData.faceVertices and .faceEdges */
	int count;     /**< number of vertices (= number of edges) of the face, >= 3 */
} ibHullFace;

/** One edge of a hull with its two vertices and two faces. */
typedef struct ibHullEdge {
	int vertex[2]; /**< end points; the loop of face[0] runs vertex[0] -> vertex[1] */
	int face[2];   /**< adjacent faces; the loop of face[1] runs vertex[1] -> vertex[0] */
} ibHullEdge;

/** Read-only view of a hull shape's data (shape frame); the pointers stay valid while the shape lives.
 * Adjacency: face -> vertices/edges (faceVertices, faceEdges), edge -> vertices/faces (edges),
 * vertex -> edges (vertexEdges[vertexEdgeStart[v] .. vertexEdgeStart[v + 1]]). */
typedef struct ibHullData {
	const ibVec3* vertices;       /**< hull vertices, in the order of the input points they come from */
	int vertexCount;              /**< number of vertices */
	const ibHullFace* faces;      /**< faces */
	int faceCount;                /**< number of faces */
	const int* faceVertices;      /**< all face loops back to back: vertex k of face f is faceVertices[faces[f].first + k] */
	const int* faceEdges;         /**< edge k of face f (from loop vertex k to k + 1) is faceEdges[faces[f].first + k] */
	const ibHullEdge* edges;      /**< edges */
	int edgeCount;                /**< number of edges (vertexCount - edgeCount + faceCount == 2) */
	const int* vertexEdgeStart;   /**< vertexCount + 1 offsets into vertexEdges */
	const int* vertexEdges;       /**< edges at each vertex */
	const int* triangles;         /**< fan triangulation of the faces, 3 vertex indices each, counter-clockwise outward */
	int triangleCount;            /**< number of triangles */
} ibHullData;

/** Infinite plane {x : dot(normal, x) = offset} in the shape frame; the side opposite the normal is solid. */
typedef struct ibPlane {
	ibVec3 normal; /**< outward normal (shape frame), non-zero; normalised on creation */
	double offset; /**< signed distance of the plane from the shape origin along the normal (m) */
} ibPlane;

/** Surface material of a shape (used by the contact solver). */
typedef struct ibMaterial {
	double restitution;     /**< coefficient of restitution e in [0, 1] */
	double staticFriction;  /**< static friction coefficient mu_s >= 0 */
	double dynamicFriction; /**< dynamic (sliding) friction coefficient mu_d >= 0 */
} ibMaterial;

/** Shape definition. Pose is relative to the body's user frame. */
typedef struct ibShapeDef {
	ibVec3 localPosition;  /**< shape origin in the body frame (m) */
	ibQuat localRotation;  /**< shape frame to body frame rotation */
	double density;        /**< density (kg/m^3), > 0; used when mass == 0 */
	double mass;           /**< explicit shape mass (kg); 0 = from density; otherwise > 0 */
	ibMaterial material;   /**< surface material */
	ibFilter filter;       /**< collision filter */
	void* userData;        /**< user pointer */
	int internalValue;     /**< set by ibDefaultShapeDef */
} ibShapeDef;

/** Mass properties: mass, centre of mass and inertia tensor about the centre of mass,
 * both expressed in a given frame (the body's user frame for ibBody_GetMassData). */
typedef struct ibMassData {
	double mass;     /**< mass (kg) */
	ibVec3 center;   /**< centre of mass (m) */
	ibMat3 inertia;  /**< inertia tensor about the centre of mass (kg m^2), symmetric positive definite */
} ibMassData;

/** Whole-world mechanical quantities (see ibWorld_ComputeInvariants). */
typedef struct ibWorldInvariants {
	double kineticEnergy;    /**< sum of translational and rotational kinetic energy (J) */
	double potentialEnergy;  /**< gravitational potential energy -m g.s relative to the world origin (J) */
	double springEnergy;     /**< elastic energy stored in springs (J) */
	ibVec3 linearMomentum;   /**< total linear momentum (kg m/s) */
	ibVec3 angularMomentum;  /**< total angular momentum about the world origin (kg m^2/s) */
} ibWorldInvariants;

/** Statistics of the last step. */
typedef struct ibStepStats {
	int positionIterations;   /**< joint-correction sweeps used */
	int velocityIterations;   /**< velocity-correction sweeps used */
	double maxPositionError;  /**< largest translational joint error after the step, measured from body states (m) */
	double maxAngularError;   /**< largest rotational joint error after the step (rad) */
	double maxVelocityError;  /**< largest joint velocity error after the step (m/s or rad/s) */
	int integratorSubsteps;   /**< largest number of adaptive sub-steps of any body */
	int stepSubdivisions;     /**< sub-steps the step was run as: after non-convergence or for maxRotationPerStep (1 = none) */
	bool converged;           /**< false if an iteration cap was hit before its tolerance */
	/* The contact fields cover all of the step's time-of-contact sub-steps: counts are the largest of any
	 * sub-step, sweeps are summed, residuals are the largest (a re-simulated attempt replaces its own). */
	int contactPoints;        /**< contact points found at the start of a (sub-)step */
	int collidingPoints;      /**< of these, classified as colliding (eq. 5.1) */
	int restingPoints;        /**< contact joints (resting contacts) of a (sub-)step */
	int collisionIterations;  /**< collision-loop sweeps (§5.2) */
	int contactIterations;    /**< contact-joint position sweeps (§5.3) */
	int contactVelocityIterations; /**< contact velocity sweeps at t0+h (static friction, §5.3.3) */
	double collisionResidual; /**< largest remaining |target - u_n| of the collision loop (m/s; 0 when converged) */
	double contactResidual;   /**< largest remaining predicted penetration or static-friction offset (m) */
	double contactVelocityResidual; /**< largest remaining velocity error of the contact velocity loop at t0+h (m/s; 0 when
	                                 * converged): an approach, a separation the step's normal impulse still holds, or the
	                                 * slip of a static-friction point inside its cone */
	int iterativeIslands;     /**< islands (independent systems of joints) solved with the iterative method */
	int lgsIslands;           /**< islands solved with the O(n) LGS (IB_SOLVER_AUTO / IB_SOLVER_LGS) */
	int lgsSparseIslands;     /**< islands solved with the sparse LGS (IB_SOLVER_LGS_SPARSE) */
	int awakeBodies;          /**< dynamic bodies awake after the step */
	int sleepingIslands;      /**< islands asleep after the step */
	double detectionMs;       /**< wall time of the collision detection at t0 (ms; all sub-steps and time-of-contact re-runs) */
	double collisionMs;       /**< wall time of the contact set-up and collision resolution (§5.2, ms) */
	double contactMs;         /**< wall time of the contact joints (§5.3: joint and velocity correction with their joint sweeps, ms) */
} ibStepStats;

/** Default world definition: gravity (0, 0, -9.81), RK4, eps_d = 1e-6 m, eps_v = 1e-6 m/s. */
IB_API ibWorldDef ibDefaultWorldDef(void);
/** Default collision settings: eps_c = 1e-4 m, sweep and prune, TOI by interpolation, conservative advancement on. */
IB_API ibCollisionSettings ibDefaultCollisionSettings(void);
/** Default filter: category 1, mask all, group 0. */
IB_API ibFilter ibDefaultFilter(void);
/** Default solver settings (as in ibDefaultWorldDef). */
IB_API ibSolverSettings ibDefaultSolverSettings(void);
/** Default body definition: static at the origin, identity rotation, zero velocity, no damping, gravity scale 1,
 * sleep enabled, awake. */
IB_API ibBodyDef ibDefaultBodyDef(void);
/** Default shape definition: identity local pose, density 1000 kg/m^3, e = 0, mu_s = mu_d = 0.5. */
IB_API ibShapeDef ibDefaultShapeDef(void);

#ifdef __cplusplus
}
#endif
#endif
