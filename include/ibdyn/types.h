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
	IB_INTEGRATOR_RK4 = 0,       /**< classical 4th-order Runge-Kutta, one stage set per step (App. B.1.3) */
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
	double maxRotationPerStep;    /**< split a step into equal sub-steps (same forces) so that no jointed body turns by more than this (rad) per sub-step at its angular velocity at the step start (at most 8 sub-steps); 0 = off; default 0.5 */
} ibSolverSettings;

/** World definition. */
typedef struct ibWorldDef {
	ibVec3 gravity;            /**< gravitational acceleration (m/s^2) */
	ibSolverSettings solver;   /**< solver and integrator settings */
	ibAllocFn* allocFn;        /**< allocator hook (NULL = malloc) */
	ibReallocFn* reallocFn;    /**< reallocation hook (NULL = realloc); set together with allocFn/freeFn */
	ibFreeFn* freeFn;          /**< free hook (NULL = free) */
	void* allocContext;        /**< passed to the allocator hooks */
	ibLogFn* logFn;            /**< log hook (NULL = silent) */
	void* logContext;          /**< passed to logFn */
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

/** Triangle mesh geometry (copied on shape creation). Triangles are counter-clockwise seen from outside. */
typedef struct ibMesh {
	const ibVec3* vertices; /**< vertex positions in the shape frame (m) */
	int vertexCount;        /**< number of vertices, >= 4 */
	const int* indices;     /**< 3 vertex indices per triangle */
	int triangleCount;      /**< number of triangles, >= 4 */
} ibMesh;

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
	int iterativeIslands;     /**< islands (independent systems of joints) solved with the iterative method */
	int lgsIslands;           /**< islands solved with the O(n) LGS (IB_SOLVER_AUTO / IB_SOLVER_LGS) */
	int lgsSparseIslands;     /**< islands solved with the sparse LGS (IB_SOLVER_LGS_SPARSE) */
} ibStepStats;

/** Default world definition: gravity (0, 0, -9.81), RK4, eps_d = 1e-6 m, eps_v = 1e-6 m/s. */
IB_API ibWorldDef ibDefaultWorldDef(void);
/** Default solver settings (as in ibDefaultWorldDef). */
IB_API ibSolverSettings ibDefaultSolverSettings(void);
/** Default body definition: static at the origin, identity rotation, zero velocity, no damping, gravity scale 1. */
IB_API ibBodyDef ibDefaultBodyDef(void);
/** Default shape definition: identity local pose, density 1000 kg/m^3, e = 0, mu_s = mu_d = 0.5. */
IB_API ibShapeDef ibDefaultShapeDef(void);

#ifdef __cplusplus
}
#endif
#endif
