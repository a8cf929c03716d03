/* ibdyn soft bodies: particles, soft bodies built from meshes, rigid–soft joints and generic
 * Jacobian-row constraints, all corrected by the impulse-based joint and velocity correction of
 * the rigid joints (§3.2.1) in the same loops. See docs/soft.md.
 *
 * A soft body is a set of particles (point masses integrated exactly like the rigid translation,
 * eqs 3.2/3.3) held together by internal constraint rows (edge distances, bending, volume). A
 * constraint row set C(x) = 0 with m rows (m <= IB_CONSTRAINT_MAX_ROWS) couples any number of
 * participants: a particle contributes 3 Jacobian columns (its velocity), a rigid body 6 (the
 * velocity of its centre of mass, then its world angular velocity). */
#ifndef IBDYN_SOFT_H
#define IBDYN_SOFT_H

#include "base.h"
#include "id.h"
#include "math.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of rows of one constraint. */
#define IB_CONSTRAINT_MAX_ROWS 6

/** Handle of a soft body (a set of particles with its internal constraints). */
typedef struct ibSoftBodyId {
	int32_t index1;      /**< soft body index + 1; 0 = null */
	uint16_t world0;     /**< world slot index */
	uint16_t generation; /**< generation */
} ibSoftBodyId;

/** Handle of a constraint on particles and rigid bodies (rigid–soft joints, user constraints). */
typedef struct ibConstraintId {
	int32_t index1;      /**< constraint index + 1; 0 = null */
	uint16_t world0;     /**< world slot index */
	uint16_t generation; /**< generation */
} ibConstraintId;

/** The null soft body handle. */
#define IB_NULL_SOFT_BODY ((ibSoftBodyId){0, 0, 0})
/** The null constraint handle. */
#define IB_NULL_CONSTRAINT ((ibConstraintId){0, 0, 0})

/** Bending model of a soft body made of triangles. */
typedef enum ibSoftBending {
	IB_SOFT_BENDING_NONE = 0,     /**< no bending rows */
	IB_SOFT_BENDING_DISTANCE = 1, /**< distance between the two vertices opposite each interior edge */
	IB_SOFT_BENDING_DIHEDRAL = 2, /**< dihedral angle across each interior edge, row L_e (theta - theta0) (m) */
} ibSoftBending;

/** How the internal rows of a soft body are solved in each sweep of the joint and velocity correction. */
typedef enum ibSoftSolver {
	IB_SOFT_SOLVER_GAUSS_SEIDEL = 0, /**< one pass over the rows (projected Gauss–Seidel); cheap, slow on fine stiff cloth */
	IB_SOFT_SOLVER_SPARSE = 1,       /**< one sparse Cholesky solve (CHOLMOD) of all rows and the constraints on the particles */
	IB_SOFT_SOLVER_AUTO = 2,         /**< SPARSE for bodies with rows, GAUSS_SEIDEL for bodies with a sweep cap (maxIterations > 0) (the default) */
} ibSoftSolver;

/** Soft body definition. Start from ibDefaultSoftBodyDef().
 * Kind: tetrahedra given -> volumetric body (edges of the tetrahedra, optional volume row per
 * tetrahedron); otherwise triangles -> cloth, or with preserveVolume a closed surface (one volume
 * row for the enclosed volume). Extra edges (e.g. a chain) may be given in every case. Masses: from
 * vertexMasses if given, else density times area (cloth, kg/m^2) or volume (kg/m^3), lumped to
 * the vertices. Every internal row is measured in metres (volume rows as (V - V0) / A0 with the
 * rest surface area A0, bending rows as L_e (theta - theta0)), so one tolerance applies to all; a
 * compliance alpha (m/N) makes a row a spring of stiffness 1/alpha (0 = rigid constraint). */
typedef struct ibSoftBodyDef {
	const ibVec3* vertices;    /**< rest/initial vertex positions, world (m) */
	int vertexCount;           /**< number of vertices (particles), >= 1 */
	const int* triangles;      /**< 3 indices per triangle (counter-clockwise seen from the front/outside), or NULL */
	int triangleCount;         /**< number of triangles */
	const int* tetrahedra;     /**< 4 indices per tetrahedron, or NULL */
	int tetrahedronCount;      /**< number of tetrahedra */
	const int* edges;          /**< 2 indices per extra distance row (chains, struts), or NULL */
	int edgeCount;             /**< number of extra edges */
	const double* vertexMasses; /**< optional explicit masses (kg, > 0 unless pinned), overrides density */
	double density;            /**< kg/m^2 for cloth, kg/m^3 for volumetric bodies, > 0 if no vertexMasses */
	double stretchCompliance;  /**< edge rows (m/N), >= 0; 0 = inextensible */
	ibSoftBending bending;     /**< bending model for triangle meshes */
	double bendingCompliance;  /**< bending rows (m/N), >= 0 */
	bool preserveVolume;       /**< volume row(s): per tetrahedron, or the enclosed volume of a closed surface */
	double volumeCompliance;   /**< volume rows (m/N), >= 0 */
	const int* pinned;         /**< indices of pinned vertices (infinite mass, never move), or NULL */
	int pinnedCount;           /**< number of pinned vertices */
	ibVec3 linearVelocity;     /**< initial velocity of every particle (m/s) */
	double linearDamping;      /**< damping rate c: force -c m v on each particle (1/s), >= 0 */
	double gravityScale;       /**< multiplies the world gravity */
	double positionTolerance;  /**< tolerance of the internal rows (m); 0 = the world's eps_d */
	int maxIterations;         /**< sweeps of the internal rows per correction (anytime cloth: after that only
	                            *   the joints are iterated and the step counts as converged); 0 = the world's caps;
	                            *   ignored by IB_SOFT_SOLVER_SPARSE */
	ibSoftSolver solver;       /**< row solver (default IB_SOFT_SOLVER_AUTO) */
	const char* name;          /**< optional name (copied) */
	void* userData;            /**< user pointer */
	int internalValue;         /**< set by ibDefaultSoftBodyDef */
} ibSoftBodyDef;

/** Kind of a constraint created with ibCreateSoftJoint. */
typedef enum ibSoftJointType {
	IB_SOFT_JOINT_TRIANGLE = 0, /**< rigid point to alpha A + beta B + gamma C + delta n(ABC) of a soft triangle */
	IB_SOFT_JOINT_VERTEX = 1,   /**< rigid point to one particle (rigid–vertex ball joint) */
} ibSoftJointType;

/** Rigid–soft ball joint. The attachment point is given in world coordinates at creation: the
 * rigid body's local anchor, and for IB_SOFT_JOINT_TRIANGLE the barycentric coordinates of its
 * projection onto the triangle's plane and its height delta along the unit normal
 * (B - A) x (C - A) / |.|, follow from it. For IB_SOFT_JOINT_VERTEX the point defaults to the
 * particle's position (useWorldPoint = false). */
typedef struct ibSoftJointDef {
	ibSoftJointType type;  /**< triangle or vertex */
	ibBodyId body;         /**< rigid body (any type; static = fixed in the world) */
	ibSoftBodyId soft;     /**< soft body */
	int triangle;          /**< triangle index of the soft body (IB_SOFT_JOINT_TRIANGLE) */
	int vertex;            /**< particle index (IB_SOFT_JOINT_VERTEX) */
	ibVec3 worldPoint;     /**< attachment point (m, world) */
	bool useWorldPoint;    /**< vertex joint: use worldPoint instead of the particle position as rigid anchor */
	bool useCoordinates;   /**< take coordinates and localAnchor as given instead of deriving them from worldPoint
	                        *   (exact re-creation, e.g. from a scene file; ibSoftJoint_GetDef sets this) */
	double coordinates[4]; /**< triangle joint: alpha, beta, gamma, delta (with useCoordinates) */
	ibVec3 localAnchor;    /**< rigid anchor in the body's frame (with useCoordinates) */
	const char* name;      /**< optional name (copied) */
	int internalValue;     /**< set by ibDefaultSoftJointDef */
} ibSoftJointDef;

/** One participant of a user constraint: a rigid body (body not null) or a particle of a soft body. */
typedef struct ibConstraintParticipant {
	ibBodyId body;      /**< rigid body, or null */
	ibSoftBodyId soft;  /**< soft body of the particle (when body is null) */
	int particle;       /**< particle index in soft */
} ibConstraintParticipant;

/** State of one participant handed to a constraint callback (current or predicted state). */
typedef struct ibConstraintState {
	bool isBody;        /**< rigid body (6 Jacobian columns) or particle (3 columns) */
	ibVec3 position;    /**< particle position, or the body's centre of mass (m, world) */
	ibVec3 origin;      /**< body frame origin (m, world); equals position for particles */
	ibQuat rotation;    /**< body frame to world rotation (identity for particles) */
} ibConstraintState;

/** User constraint callback: write the m row values C[0..m-1] at the given states and, if J is not
 * NULL, the m x n Jacobian in row-major order (n = sum of 3 per particle and 6 per body, in the
 * participants' order). A body's 6 columns are d(C)/d(v_com) and d(C)/d(omega_world): for a row
 * depending on a body point p with gradient g = dC/dp, they are g and (p - com) x g. */
typedef void ibConstraintFn(const ibConstraintState* states, int count, double* C, double* J, void* userData);

/** Generic constraint definition (Jacobian-row constraint). */
typedef struct ibConstraintDef {
	const ibConstraintParticipant* participants; /**< participants (copied) */
	int participantCount;  /**< >= 1 */
	int rows;              /**< 1..IB_CONSTRAINT_MAX_ROWS */
	ibConstraintFn* fn;    /**< callback evaluating C and J */
	void* userData;        /**< passed to fn */
	double compliance;     /**< m/N-like compliance alpha (>= 0; 0 = rigid): C + alpha lambda = 0 */
	bool velocityCorrection; /**< also enforce dC/dt = 0 at t0+h (rigid constraints; ignored if compliance > 0) */
	const char* name;      /**< optional name (copied) */
	int internalValue;     /**< set by ibDefaultConstraintDef */
} ibConstraintDef;

/** Statistics of the soft part of the last step. */
typedef struct ibSoftStepStats {
	int particleCount;           /**< live particles */
	int constraintRows;          /**< internal rows of all soft bodies */
	double maxJointError;        /**< largest |C| of rigid–soft joints and user constraints after the step (m) */
	double maxInternalError;     /**< largest internal row error after the step (m, rigid rows only) */
	double maxJointVelocityError; /**< largest |dC/dt| of the joints after the step (m/s) */
	int positionSweeps;          /**< sweeps of the soft rows in the joint correction */
	int velocitySweeps;          /**< sweeps in the velocity correction */
	bool internalConverged;      /**< false if internal rows stopped at their maxIterations above tolerance */
	int sparseSolves;            /**< linear solves of the sparse soft solver (joint and velocity correction) */
	int sparseFactorizations;    /**< numeric Cholesky factorisations of the sparse soft solver */
	int sparseRelinearisations;  /**< times the sparse rows' Jacobian was taken at the predicted state */
} ibSoftStepStats;

/** Default soft body: density 0.1 kg/m^2, inextensible edges, no bending, gravity scale 1. */
IB_API ibSoftBodyDef ibDefaultSoftBodyDef(void);
/** Default soft joint: triangle joint, null handles. */
IB_API ibSoftJointDef ibDefaultSoftJointDef(void);
/** Default user constraint: 1 row, rigid, with velocity correction. */
IB_API ibConstraintDef ibDefaultConstraintDef(void);

/** Let def use a triangle mesh (e.g. from ibLoadObj of the scene library): vertices, vertexCount,
 * triangles, triangleCount point into mesh (which must outlive ibCreateSoftBody). Cloth as is; set
 * preserveVolume for a closed surface (counter-clockwise seen from outside). */
IB_API void ibSoftBodyDef_SetMesh(ibSoftBodyDef* def, const ibMesh* mesh);
/** Create a soft body; null handle and an error on a bad definition. */
IB_API ibSoftBodyId ibCreateSoftBody(ibWorldId world, const ibSoftBodyDef* def);
/** Destroy a soft body and the constraints using its particles. */
IB_API ibResult ibDestroySoftBody(ibSoftBodyId soft);
/** True if the handle refers to a live soft body. */
IB_API bool ibSoftBody_IsValid(ibSoftBodyId soft);
/** Number of particles (0 if stale). */
IB_API int ibSoftBody_GetParticleCount(ibSoftBodyId soft);
/** Number of internal constraint rows. */
IB_API int ibSoftBody_GetConstraintCount(ibSoftBodyId soft);
/** Position of particle i (m, world). */
IB_API ibVec3 ibSoftBody_GetPosition(ibSoftBodyId soft, int i);
/** Velocity of particle i (m/s). */
IB_API ibVec3 ibSoftBody_GetVelocity(ibSoftBodyId soft, int i);
/** Copy up to capacity positions into out; returns the particle count. */
IB_API int ibSoftBody_GetPositions(ibSoftBodyId soft, ibVec3* out, int capacity);
/** Copy up to capacity velocities into out; returns the particle count. */
IB_API int ibSoftBody_GetVelocities(ibSoftBodyId soft, ibVec3* out, int capacity);
/** Teleport particle i (velocity kept). */
IB_API ibResult ibSoftBody_SetPosition(ibSoftBodyId soft, int i, ibVec3 position);
/** Set the velocity of particle i (not allowed for pinned particles). */
IB_API ibResult ibSoftBody_SetVelocity(ibSoftBodyId soft, int i, ibVec3 velocity);
/** Mass of particle i (kg; 0 if pinned). */
IB_API double ibSoftBody_GetParticleMass(ibSoftBodyId soft, int i);
/** Total mass of the non-pinned particles (kg). */
IB_API double ibSoftBody_GetMass(ibSoftBodyId soft);
/** Pin (infinite mass, velocity zeroed) or release particle i (its mass is restored). */
IB_API ibResult ibSoftBody_SetPinned(ibSoftBodyId soft, int i, bool pinned);
/** True if particle i is pinned. */
IB_API bool ibSoftBody_IsPinned(ibSoftBodyId soft, int i);
/** Accumulate a force (N) on particle i for the next step. */
IB_API ibResult ibSoftBody_ApplyForce(ibSoftBodyId soft, int i, ibVec3 force);
/** Set the damping rate (1/s, >= 0) of all particles. */
IB_API ibResult ibSoftBody_SetDamping(ibSoftBodyId soft, double linearDamping);
/** Set the sweep cap of the internal rows (0 = the world's caps); see ibSoftBodyDef.maxIterations. */
IB_API ibResult ibSoftBody_SetMaxIterations(ibSoftBodyId soft, int maxIterations);
/** Linear momentum of the particles (kg m/s). */
IB_API ibVec3 ibSoftBody_GetLinearMomentum(ibSoftBodyId soft);
/** Kinetic energy of the particles (J). */
IB_API double ibSoftBody_GetKineticEnergy(ibSoftBodyId soft);
/** Triangle count and (if out != NULL, capacity >= 3 * count) the triangle indices. */
IB_API int ibSoftBody_GetTriangles(ibSoftBodyId soft, int* out, int capacity);
/** Name ("" if none). */
IB_API const char* ibSoftBody_GetName(ibSoftBodyId soft);
/** The definition the soft body was created with, as far as it is stored: rest vertices, triangles,
 * tetrahedra, extra edges and the particle masses as created (pointers into the soft body, valid
 * until it is destroyed), the material and solver settings as they are now (damping, gravity scale,
 * tolerance, sweep cap); pinned = NULL (see ibSoftBody_IsPinned), linearVelocity zero. Creating a
 * soft body from it and setting the current positions and velocities reproduces the soft body. */
IB_API ibResult ibSoftBody_GetDef(ibSoftBodyId soft, ibSoftBodyDef* out);
/** Number of live soft bodies and (if out != NULL) up to capacity handles in creation-slot order. */
IB_API int ibWorld_GetSoftBodies(ibWorldId world, ibSoftBodyId* out, int capacity);
/** Number of live constraints (rigid–soft joints and user constraints) and up to capacity handles. */
IB_API int ibWorld_GetConstraints(ibWorldId world, ibConstraintId* out, int capacity);
/** Definition of a rigid–soft joint with useCoordinates set (exact re-creation);
 * IB_ERR_INVALID_ARGUMENT for user constraints. */
IB_API ibResult ibSoftJoint_GetDef(ibConstraintId c, ibSoftJointDef* out);
/** Find a soft body by name. */
IB_API ibSoftBodyId ibWorld_FindSoftBody(ibWorldId world, const char* name);
/** Statistics of the soft part of the last step. */
IB_API ibSoftStepStats ibWorld_GetSoftStepStats(ibWorldId world);

/** Create a rigid–soft ball joint (triangle or vertex); null handle and an error on bad input. */
IB_API ibConstraintId ibCreateSoftJoint(ibWorldId world, const ibSoftJointDef* def);
/** Create a user constraint from a callback. */
IB_API ibConstraintId ibCreateConstraint(ibWorldId world, const ibConstraintDef* def);
/** Destroy a constraint. */
IB_API ibResult ibDestroyConstraint(ibConstraintId c);
/** True if the handle refers to a live constraint. */
IB_API bool ibConstraint_IsValid(ibConstraintId c);
/** |C| measured after the last step (m). */
IB_API double ibConstraint_GetError(ibConstraintId c);
/** Number of rows. */
IB_API int ibConstraint_GetRows(ibConstraintId c);
/** Number of Jacobian columns (3 per particle, 6 per body). */
IB_API int ibConstraint_GetColumns(ibConstraintId c);
/** Evaluate C (rows values) and, if J != NULL, the Jacobian (rows x columns, row-major) at the
 * current state. */
IB_API ibResult ibConstraint_Evaluate(ibConstraintId c, double* C, double* J);
/** Triangle joint: barycentric coordinates (alpha, beta, gamma) and height delta computed at creation. */
IB_API ibResult ibConstraint_GetTriangleCoordinates(ibConstraintId c, double* alpha, double* beta, double* gamma,
                                                    double* delta);
/** Accumulated correction impulse of the last step's joint and velocity correction (N s, per row). */
IB_API ibResult ibConstraint_GetImpulse(ibConstraintId c, double* impulse);

#ifdef __cplusplus
}
#endif
#endif
