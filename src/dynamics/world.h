/* Internal world, body and shape data. Not installed. */
#ifndef IBDYN_SRC_WORLD_H
#define IBDYN_SRC_WORLD_H

#include <stdarg.h>

#include "ibdyn/ibdyn.h"

#define IB_MAX_WORLDS 128
#define IB_DEF_MAGIC 0x1bd7a
#define IB_NULL_INDEX (-1)
/* joint errors (and limit violations) above this many tolerances at the start of a sub-step are removed at the
 * rate of a whole step (joint_internal.h ib_joints_recovery_slack); a step that leaves such errors is
 * reported not converged (step.c) */
#define IB_RECOVERY_MIN_ERRORS 10.0

typedef struct ibWorld ibWorld;

/* Per-step state integrated by the free motion (§3.1.2). The dynamics use the principal frame:
 * origin at the centre of mass, axes along the principal axes of inertia (§3.1.1). */
typedef struct ibRigidState {
	ibVec3 s;  /* centre of mass, world */
	ibVec3 v;  /* COM velocity, world */
	ibQuat q;  /* principal frame -> world */
	ibVec3 w;  /* angular velocity, world */
} ibRigidState;

typedef struct ibBody {
	ibRigidState st;
	ibMat3 R;            /* rotation matrix of st.q (derived) */
	ibMat3 invInertiaW;  /* world inverse inertia R diag(1/I) R^T (derived; zero for non-dynamic) */
	ibVec3 fext, text;   /* external force/torque held constant over the current step */
	ibVec3 userForce, userTorque; /* accumulated by ibBody_Apply*, cleared after each step */
	double mass, invMass;
	ibVec3 inertiaP, invInertiaP; /* principal moments and their inverses */
	int8_t inertiaClass; /* ib_inertia_class(inertiaP), set with it (0 = spherical, as for zero moments) */
	ibVec3 userPos;      /* exact user-frame pose as last set (valid while userPoseExact) */
	ibQuat userRot;
	bool userPoseExact;  /* cleared when the body moves; getters then derive the pose from st */
	ibVec3 localCom;     /* COM in the user body frame */
	ibQuat qPrincipal;   /* principal frame -> user body frame */
	double linearDamping, angularDamping, gravityScale;
	int32_t solverGroup; /* ibBodyDef.solverGroup */
	double substepHint;  /* adaptive integrator: last accepted sub-step (s), 0 = none */
	ibBodyType type;
	bool inUse;
	bool massOverride;
	uint16_t generation;
	int32_t nextFree;
	int32_t firstShape, lastShape;
	int shapeCount;
	uint32_t velVersion;    /* bumped by every impulse (joint prediction cache) */
	/* sleeping (sleep.c): a sleeping body belongs to the island list headed by sleepHead */
	bool sleeping;
	bool enableSleep;
	uint32_t sleepSerial; /* bumped whenever the body falls asleep (collision sync: pose seen asleep) */
	double sleepTime;       /* time the body has been below the sleep thresholds (s) */
	int32_t sleepHead, sleepNext; /* sleeping island: first body and next body (-1 = end) */
	ibMassData overrideData;
	char* name;
	void* userData;
} ibBody;

typedef struct ibShape {
	ibShapeType type;
	bool inUse;
	uint16_t generation;
	int32_t nextFree;
	int32_t body;
	int32_t nextInBody;
	union {
		ibSphere sphere;
		ibBox box;
		ibCapsule capsule;
		ibCylinder cylinder;
		ibPlane plane;
	} g;
	struct ibHullGeom* hull;       /* IB_SHAPE_HULL (src/collision/hull.h) */
	struct ibTriMeshGeom* trimesh; /* IB_SHAPE_TRIMESH (src/collision/trimesh.h) */
	ibVec3* meshVertices;
	int* meshIndices;
	int meshVertexCount, meshTriangleCount;
	ibVec3 localPosition;
	ibQuat localRotation;
	double density, explicitMass;
	ibMaterial material;
	ibFilter filter;     /* collision filter (src/collision) */
	ibMassData massData; /* in the body's user frame */
	void* userData;
} ibShape;

typedef struct ibAllocator {
	ibAllocFn* alloc;
	ibReallocFn* realloc;
	ibFreeFn* free;
	void* ctx;
} ibAllocator;

struct ibJointStore; /* joints module */
struct ibCollisionWorld; /* collision pipeline (src/collision/collision_world.h) */
struct ibSoftStore; /* particles, soft bodies, rigid-soft constraints (src/soft) */

struct ibWorld {
	uint16_t slot, generation;
	ibAllocator allocator;
	ibLogFn* logFn;
	void* logContext;
	void* userData;
	ibEnqueueTaskFn* enqueueTask; /* task hooks (NULL: serial), ibWorldDef */
	ibFinishTaskFn* finishTask;
	void* taskContext;
	int workerCount;
	int workerSubsteps[IB_MAX_WORKERS]; /* per worker: the largest integrator sub-step count of a task */
	ibVec3 gravity;
	ibSolverSettings solver;
	double time;
	uint32_t poseEpoch; /* bumped whenever any body pose changes (step, teleport, mass frame) */
	uint32_t massEpoch; /* bumped whenever a body's principal frame changes */
	bool diverged;
	char lastError[512];
	ibStepStats stats;

	ibBody* bodies;
	int32_t bodyCapacity, bodyHigh, bodyFree, bodyCount;
	bool maybeAsleep; /* sleep.c: false only when no body sleeps (set on falling asleep, cleared by a scan) */
	uint32_t sleepStamp; /* bumped when a body falls asleep and when a shape is created (sleep.c wake queries) */
	ibShape* shapes;
	int32_t shapeCapacity, shapeHigh, shapeFree, shapeCount;

	struct ibJointStore* joints; /* NULL until the first joint is created */
	struct ibCollisionWorld* collision; /* NULL until the first detection */
	ibCollisionSettings collisionSettings;
	struct ibContactStore* contactStore; /* contact solver (src/contact), NULL until the first contact */
	struct ibSoftStore* soft;           /* NULL until the first soft body or constraint */

	/* step subdivision (step.c): one snapshot per subdivision depth, reused across steps */
	ibRigidState* snapBodies;
	int32_t snapBodyCapacity; /* per level */
	ibVec3* snapWarm;
	int32_t snapWarmCapacity; /* per level, 2 vectors per basic joint */
	int snapLevels;
	ibRigidState* orderStates; /* higher-order methods: start state + results of the sub-step runs */
	int32_t orderCapacity;     /* bodies per state */
	bool canSubdivide;        /* a failed correction may return unconverged instead of falling back */
	bool jointsUnconverged;   /* step.c: the joints (or soft rows) missed a tolerance in this attempt; only
	                           * this redoes a step as halves, a stalled contact loop does not */
	/* step.c: the length of the step of ibWorld_Step, and the fraction of large errors present at t0 that the
	 * joint correction of the current (sub-)step removes: its length over the step's (ib_joints_recovery_slack) */
	double frameLength, recoveryFraction;
	double stepHint;          /* step.c: sub-step length that last converged after a failure (0 = none) */
	int stepHintRuns;         /* converged sub-steps at stepHint since it was set or probed */
	int stepHintProbe;        /* sub-steps before the double length is probed (0 = default); grows on failed probes */
	bool stepHintProbing;     /* stepHint was just doubled: the next attempt at it is a probe */
	/* per-group joint method overrides (joints/solver_groups.c): groupMethod[g] = ibJointSolver or -1 */
	int32_t* groupMethod;
	int32_t groupMethodCapacity;
	uint32_t solverGroupsVersion; /* bumped when an island's method may have changed (basics reordered) */
	struct ibSleepStore* sleep; /* islands and sleeping (sleep.c), NULL until the first step */
};

/* shape.c: free a shape's geometry data (mesh arrays, hull, triangle tree). */
void ib_shape_free_data(ibWorld* w, ibShape* s);

/* world.c */
ibWorld* ib_world_get(ibWorldId id);
ibWorld* ib_world_from_slot(uint16_t slot);
ibBody* ib_body_get(ibBodyId id, ibWorld** outWorld);
ibShape* ib_shape_get(ibShapeId id, ibWorld** outWorld);
ibBodyId ib_body_id(const ibWorld* w, int32_t index);

/* error.c */
ibResult ib_error(ibWorld* w, ibResult r, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void ib_log(ibWorld* w, ibLogLevel level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
ibResult ib_validate_solver(const ibSolverSettings* s, char* msg, size_t n);

/* alloc.c */
void* ib_alloc(ibWorld* w, size_t size);
void* ib_realloc(ibWorld* w, void* p, size_t oldSize, size_t newSize);
void ib_free(ibWorld* w, void* p, size_t size);
char* ib_strdup(ibWorld* w, const char* s);
void ib_strfree(ibWorld* w, char* s);
/* Grow *array (element size elem) to hold at least need elements; returns false on OOM. */
bool ib_grow(ibWorld* w, void** array, int32_t* capacity, int32_t need, size_t elem);
bool ib_grow_raw(ibWorld* w, void** array, int32_t* capacity, int32_t need, size_t elem);

/* body_mass.c */
void ib_body_update_derived(ibBody* b);
/* A copy of body b moved to state st, without touching the world (distances at saved or predicted states). */
ibBody ib_body_at_state(const ibBody* b, const ibRigidState* st);
void ib_body_update_inertia(ibBody* b); /* the part of ib_body_update_derived after b->R (R given) */
ibResult ib_body_update_mass(ibWorld* w, ibBody* b);
ibVec3 ib_body_user_position(const ibBody* b);
ibQuat ib_body_user_rotation(const ibBody* b);
ibResult ib_check_mass_data(ibWorld* w, const ibMassData* md);

/* Kinds of principal moments for the integrator: all equal, two equal (the unique axis x, y or z),
 * none equal (within 1e-12 of the largest). */
enum { IB_INERTIA_SPHERICAL = 0, IB_INERTIA_AXIS_X, IB_INERTIA_AXIS_Y, IB_INERTIA_AXIS_Z, IB_INERTIA_GENERAL };
int ib_inertia_class(ibVec3 I);
/* integrator.c: free motion of one body over h (§3.1.2), used by the step and by joint prediction. */
void ib_integrate_body(const ibWorld* w, const ibBody* b, double h, ibRigidState* out, double* substepHint,
                       int* substeps);
/* The same s and q (same arithmetic); v and w only where they cost nothing extra: false if they are
 * not set, then ib_integrate_velocities (same body state, out->q and *pc from here) completes them. */
typedef struct ibPrecession {
	ibVec3 wL; /* the axisymmetric closed form's w_L and nu (integrator.c) */
	double nu;
} ibPrecession;
/* Terms of the prediction that depend on the pose alone (the axisymmetric closed form's normalised
 * q(t0) and R(t0) e_u): filled by the first prediction at a pose and taken by the next ones while
 * valid; the caller clears valid when the pose may have changed. */
typedef struct ibPoseTerms {
	ibQuat q0;
	ibVec3 axis;
	bool valid;
} ibPoseTerms;
bool ib_integrate_pose(const ibWorld* w, const ibBody* b, double h, ibRigidState* out, double* substepHint, ibPrecession* pc,
                       ibPoseTerms* pt);
void ib_integrate_velocities(const ibBody* b, double h, const ibPrecession* pc, ibRigidState* out);
/* The pose terms of an axisymmetric body (its inertiaClass) at its current pose. */
void ib_pose_terms(const ibBody* b, ibPoseTerms* pt);
/* ib_integrate_pose of two dynamic, torque-free bodies of the same axisymmetric inertiaClass with
 * valid pose terms, lane by lane (the same arithmetic); false (nothing written) where the scalar
 * path must decide (a rotation of 0.5 rad or more in a step, a zero quaternion). */
bool ib_integrate_pose2(const ibBody* const b[2], double h, const ibPoseTerms* const pt[2], ibRigidState* const out[2],
                        ibPrecession* const pc[2]);
/* Velocity-independent part: advance only the pose of a body with the given state (prediction). */
void ib_predict_pose(const ibWorld* w, const ibBody* b, double h, ibVec3* s, ibQuat* q);

/* joints: warm-start impulses for the step snapshot (2 vectors per basic joint) */
int32_t ib_joints_warm_count(ibWorld* w);
void ib_joints_warm_save(ibWorld* w, ibVec3* out);
void ib_joints_warm_restore(ibWorld* w, const ibVec3* in, double scale);

/* forces.c: force modules run before each step (§6.2.1). */
void ib_apply_force_modules(ibWorld* w, double h);

/* q/|q|, but q itself when it is already unit to rounding (keeps round trips bit-exact) */
static inline ibQuat ib_quat_unit(ibQuat q)
{
	double n = ibQuatNormSq(q) - 1.0;
	return (n <= 4.5e-16 && n >= -4.5e-16) ? q : ibQuatNormalize(q);
}

/* impulses on bodies (body.c) */
static inline bool ib_is_dynamic(const ibBody* b) { return b->type == IB_BODY_DYNAMIC; }
void ib_body_apply_impulse(ibBody* b, ibVec3 p, ibVec3 worldPoint);
/* impulse p through the centre of mass and angular impulse l (the sum of impulses p_i at points x_i: p = sum p_i,
 * l = sum (x_i - s) x p_i); nothing on a body that is not dynamic */
void ib_body_apply_impulse_moment(ibBody* b, ibVec3 p, ibVec3 l);
void ib_body_apply_angular_impulse(ibBody* b, ibVec3 l);
/* Kinetic energy of the dynamic bodies (J). */
double ib_bodies_kinetic_energy(const ibWorld* w);
double ib_body_kinetic_energy(const ibBody* b); /* of one dynamic body */

/* joints module hooks (src/joints) */
void ib_joints_destroy_store(ibWorld* w);
void ib_joints_on_body_destroyed(ibWorld* w, int32_t bodyIndex);
ibResult ib_joints_before_step(ibWorld* w, double h);   /* force modules: springs, motors */
ibResult ib_joints_position_correction(ibWorld* w, double h);
ibResult ib_joints_velocity_correction(ibWorld* w, double h);
void ib_limits_report(ibWorld* w); /* the step's limit impulses, after the contacts' velocity loop (joint_limit.c) */
/* The state after free motion over h of body i as the joint correction last predicted it (RK4, same
 * state, forces and h: bit-identical to ib_integrate_body) and the rotation matrix of its q
 * (ibMat3_FromQuat's); false if there is none. */
bool ib_joints_predicted_state(const ibWorld* w, int32_t i, double h, ibRigidState* out, ibMat3* R);
int ib_joints_rotation_substeps(ibWorld* w, double h, double maxRotation);
bool ib_joints_velocity_inconsistent(ibWorld* w);
void ib_joints_measure(ibWorld* w, ibStepStats* stats);
/* One sweep of Alg. 3.1 / Alg. 3.2 over all basic joints (coupling with contacts, §5.4); true if some
 * joint was outside its tolerance and got an impulse. The position sweep must follow
 * ib_joints_position_correction with the same h. */
bool ib_joints_position_sweep(ibWorld* w, double h);
bool ib_joints_velocity_sweep(ibWorld* w);
bool ib_joints_response_sweep(ibWorld* w, double tol); /* without limit rows (contact_joint_response.c) */

/* contact module hooks (src/contact, Chapter 5; step placement Part VI §21 items 3-6 and 9) */
ibResult ib_contacts_collide(ibWorld* w, double h);         /* detect, classify, resolve collisions, make contact joints */
void ib_contacts_position_correction(ibWorld* w, double h); /* contact joints at t0 (after the joint correction) */
void ib_contacts_velocity_correction(ibWorld* w, double h); /* static-friction contacts at t0+h */
void ib_contacts_destroy(ibWorld* w);
double ib_joints_spring_energy(ibWorld* w);

/* soft module hooks (src/soft): particles integrated with the bodies, soft rows solved in the
 * joint loops (sweeps inside the iterative method, alternating with the LGS methods) */
void ib_soft_destroy_store(ibWorld* w);
void ib_soft_on_body_destroyed(ibWorld* w, int32_t bodyIndex);
void ib_soft_apply_forces(ibWorld* w);
void ib_soft_integrate(ibWorld* w, double h);
bool ib_soft_finite(const ibWorld* w);
bool ib_soft_too_fast(const ibWorld* w, double vmax); /* a moving particle faster than vmax (> 0) */
bool ib_soft_active(const ibWorld* w);
void ib_soft_snapshot_save(ibWorld* w, int depth);
void ib_soft_snapshot_restore(ibWorld* w, int depth);
void ib_soft_add_invariants(const ibWorld* w, ibWorldInvariants* out);
void ib_soft_measure(ibWorld* w);
void ib_soft_contacts_detect(ibWorld* w, double h); /* particle-shape contacts at t0 (src/soft/soft_contact.c) */
void ib_soft_position_begin(ibWorld* w, double h);
bool ib_soft_position_sweep(ibWorld* w, double h);
void ib_soft_position_end(ibWorld* w);
void ib_soft_velocity_begin(ibWorld* w);
bool ib_soft_velocity_sweep(ibWorld* w);
void ib_soft_velocity_end(ibWorld* w);
/* One more soft sweep continuing the last correction at this instant (the rigid contact loop). */
bool ib_soft_position_resume_sweep(ibWorld* w, double h);
bool ib_soft_velocity_resume_sweep(ibWorld* w);
ibResult ib_soft_position_correction(ibWorld* w, double h);
ibResult ib_soft_velocity_correction(ibWorld* w, double h);
ibResult ib_soft_position_hybrid(ibWorld* w, double h, ibResult (*rigid)(ibWorld*, double));
ibResult ib_soft_velocity_hybrid(ibWorld* w, double h, ibResult (*rigid)(ibWorld*, double));

#endif
