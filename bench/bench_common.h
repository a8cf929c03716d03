/* Engine-neutral benchmark models and reporting (joint benchmarks of Bender's dissertation §3.3.3.1).
 * A BenchModel lists rigid boxes and ball joints in world coordinates; every engine (ODE, Bullet, ibdyn)
 * builds its scene from the same description and reports through bench_print, so the lines compare
 * like with like. Units are SI. Quaternions are (w, x, y, z), body -> world. */
#ifndef IBDYN_BENCH_COMMON_H
#define IBDYN_BENCH_COMMON_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One rigid box. The body frame is the box's principal frame with its origin at the centre of mass. */
typedef struct BenchBody {
	int parent;                /**< body this one hangs from by its joint (-1 = the world); joint index = body index */
	int depth;                 /**< depth in the chain/tree (0 = attached to the world) */
	double center[3];          /**< centre of mass, world (m) */
	double rotation[4];        /**< orientation (w, x, y, z); identity for all current models */
	double halfExtents[3];     /**< box half extents along the body axes (m) */
	double mass;               /**< mass (kg) */
	double inertia[3];         /**< principal moments, box formula m/12 (b^2 + c^2) with full edge lengths (kg m^2) */
	double linearVelocity[3];  /**< initial COM velocity, world (m/s) */
	double angularVelocity[3]; /**< initial angular velocity, world (rad/s) */
	double firstStepTorque[3]; /**< external torque applied during the first step only, world (N m) */
} BenchBody;

/** Joint types of the neutral model (0 = ball, so zero-initialised joints are ball joints). */
typedef enum BenchJointType { BENCH_JOINT_BALL = 0, BENCH_JOINT_HINGE = 1 } BenchJointType;

/** One joint between body `parent` (or the world) and body `child`: a ball joint, or a hinge (ball joint plus a
 * common rotation axis). */
typedef struct BenchJoint {
	int parent;            /**< parent body index, -1 = world */
	int child;             /**< child body index */
	double anchor[3];      /**< joint point, world, at set-up (m) */
	double localParent[3]; /**< joint point in the parent's body frame (world point if parent == -1) */
	double localChild[3];  /**< joint point in the child's body frame */
	int type;              /**< BenchJointType */
	double axis[3];        /**< hinge: unit axis, world, at set-up (unused for ball joints) */
	double localAxisParent[3]; /**< hinge: axis in the parent's body frame (world axis if parent == -1) */
	double localAxisChild[3];  /**< hinge: axis in the child's body frame */
} BenchJoint;

/** A benchmark scene. */
typedef struct BenchModel {
	char name[32];      /**< scene name, e.g. "chain100", "tree127" */
	int bodyCount;      /**< number of bodies */
	int jointCount;     /**< number of joints (== bodyCount for chains and trees) */
	int isTree;         /**< 1: joint j is body j's joint to BenchBody.parent (chains, trees); 0: general graph (loops) */
	BenchBody* bodies;  /**< bodyCount bodies (malloc'ed; bench_model_free) */
	BenchJoint* joints; /**< jointCount joints */
	double gravity[3];  /**< gravitational acceleration (m/s^2) */
} BenchModel;

/** Result of one engine run. */
typedef struct BenchResult {
	double msPerStep;   /**< mean wall time of one step call (ms), stepping calls only */
	double maxError;    /**< max over steps and joints of |joint point on parent - joint point on child| (m) */
	double finalError;  /**< max joint error after the last step (m) */
	int steps;          /**< steps run */
	int iterations;     /**< solver iterations per step (0 = direct / not applicable) */
	int diverged;       /**< 1 if a body state became non-finite */
	double finalCom[3]; /**< centre of mass of the whole model after the last step (m; cross-engine sanity check) */
	double energyFirst; /**< mechanical energy after the first step (J; bench_energy) */
	double energyFinal; /**< mechanical energy after the last step (J); >> energyFirst flags an unstable run */
} BenchResult;

/** Parameters of the chain: box 1 m x 0.1 m x 0.1 m, 1 kg, initial COM speed 2 m/s. */
#define BENCH_CHAIN_LENGTH 1.0
#define BENCH_CHAIN_WIDTH 0.1
#define BENCH_CHAIN_MASS 1.0
#define BENCH_CHAIN_SPEED 2.0
/** Parameters of the tree: cross-section 4 cm x 4 cm, length 1.5^(maxDepth - depth) * 0.1 m, 600 kg/m^3. */
#define BENCH_TREE_WIDTH 0.04
#define BENCH_TREE_BASE_LENGTH 0.1
#define BENCH_TREE_LENGTH_FACTOR 1.5
#define BENCH_TREE_DENSITY 600.0
#define BENCH_TREE_TORQUE 10.0
/** Seed of the deterministic direction generator. */
#define BENCH_DIRECTION_SEED UINT64_C(0x1bd1a2c0ffee2024)

/** Unit direction number `index` of the fixed-seed sequence (uniform on the sphere; splitmix64 of
 * seed + index, so body i gets the same direction in every chain length and every engine). */
void bench_direction(uint64_t seed, int index, double out[3]);

/** Chain of n bodies hanging straight down from the world point (0,0,0): body i has its centre at
 * (0, 0, -(i + 1/2)), its long axis along z, joint i at (0, 0, -i) between body i-1 (world for i = 0)
 * and body i; COM velocity 2 m/s along bench_direction(BENCH_DIRECTION_SEED, i), zero angular velocity.
 * Returns 0, or -1 on allocation failure. */
int bench_make_chain(BenchModel* m, int n);

/** Binary tree of n = 2^depthCount - 1 bodies (heap order: parent of i is (i-1)/2, children 2i+1, 2i+2).
 * Body of depth d: 0.04 x 0.04 x l(d) box, l(d) = 1.5^(maxDepth - d) * 0.1 m, long axis along z (vertical),
 * mass 600 kg/m^3 * volume. Root joint at the world point (0,0,0) = top end of the root. The two children
 * of a body hang straight down from two points on its lower face offset by -/+ half the width (2 cm)
 * horizontally from the axis, along x for parents of even depth and along y for odd depth, so every
 * level fans out in a plane perpendicular to the previous one. The root gets the torque 10 N m about the
 * horizontal axis (0.6, 0.8, 0) during the first step; all initial velocities are zero.
 * Returns 0, or -1 on allocation failure / bad depthCount (1..12). */
int bench_make_tree(BenchModel* m, int depthCount);

/** Parameters of the three-loop model (reconstruction of Fig. 3.31): links 0.1 m x 0.1 m cross-section,
 * 500 kg/m^3. */
#define BENCH_LOOP_WIDTH 0.1
#define BENCH_LOOP_DENSITY 500.0

/** Three-loop model `loops3` (reconstruction of the lost Fig. 3.31, DIGEST §22.3 [R]; the same model as
 * three_loops in tests/test_joints_loops.c): three planar loops in the planes y = 0, 0.5, 1.0, each of 4 box links
 * between the vertices (-0.5,y,0), (0.5,y,0), (0.4,y,-1.0), (-0.6,y,-0.8) (link k from vertex k to k+1; link 1 is
 * the long one), long axis = body x axis, cross-section 0.1 m, 500 kg/m^3. Hinge k joins link k (parent) and link
 * k+1 mod 4 (child) at vertex k+1 with the axis (0,1,0); link 0 of each loop hangs from the world by a ball joint
 * at its centre (0,y,0). Link 2 of loop k starts with the angular velocity (0.5 k, 2.0, 0.3) rad/s (as the test),
 * all other velocities are zero. 12 bodies, 15 joints (12 hinges + 3 balls), isTree = 0 (bodies' parent = -1).
 * Returns 0, or -1 on allocation failure. */
int bench_make_loops3(BenchModel* m);

/** Free the arrays of a model. */
void bench_model_free(BenchModel* m);

/** Rotate v by the unit quaternion q (w, x, y, z). */
void bench_quat_rotate(const double q[4], const double v[3], double out[3]);

/** Joint error of joint j from body states: pos[3*i] and quat[4*i] (w, x, y, z) are body i's COM and
 * orientation. Distance between the two bodies' joint points in world coordinates (m). */
double bench_joint_error(const BenchModel* m, int j, const double* pos, const double* quat);

/** Angle (rad) between the two bodies' hinge axes of joint j (0 for ball joints). */
double bench_joint_axis_error(const BenchModel* m, int j, const double* quat);

/** Max of bench_joint_axis_error over all joints; NaN if any is non-finite. */
double bench_max_axis_error(const BenchModel* m, const double* quat);

/** Max of bench_joint_error over all joints; NaN if any state is non-finite. */
double bench_max_joint_error(const BenchModel* m, const double* pos, const double* quat);

/** Mass-weighted centre of all bodies from the COM positions pos[3*i] (m). */
void bench_system_com(const BenchModel* m, const double* pos, double out[3]);

/** Mechanical energy (J): kinetic energy 1/2 m v^2 + 1/2 w.J w of all bodies plus the potential energy
 * -m g.(c - c0) relative to the set-up pose. pos/quat as for bench_joint_error; lin[3*i], ang[3*i] are the
 * COM velocity and angular velocity of body i in world coordinates. */
double bench_energy(const BenchModel* m, const double* pos, const double* quat, const double* lin, const double* ang);

/** 1 if the run gained energy: energyFinal - energyFirst > max(|energyFirst|, 0.01 J) (the energy more than
 * doubled after the first step), or a non-finite energy. Printed as unstable=1. Joint error alone cannot
 * show this for reduced-coordinate engines, whose joints are exact by construction. */
int bench_energy_blowup(const BenchResult* r);

/** Monotonic wall clock (ms). */
double bench_now_ms(void);

/** Print `bench: scene=S engine=E ms_per_step=X max_error=Y` followed by a space and extraFmt (printf
 * format of further key=value pairs; NULL for none), then a newline. */
void bench_print(const char* scene, const char* engine, double ms, double maxErr, const char* extraFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/** Print a measurement with the standard extra keys steps, h, iterations, final_error, energy_first and
 * energy_final (+ diverged=1 / unstable=1 if so), followed by an optional extra format. */
void bench_print_result(const char* scene, const char* engine, const BenchResult* r, double h, const char* extraFmt,
                        ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/** Print `bench: scene=S ratio ours=O peer=P time_ratio=R`, R = oursMs / peerMs. */
void bench_ratio(const char* scene, const char* ours, double oursMs, const char* peer, double peerMs);

/** bench_ratio followed by a space and extraFmt (further key=value pairs, e.g. eps= and the two errors). */
void bench_ratio_ex(const char* scene, const char* ours, double oursMs, const char* peer, double peerMs,
                    const char* extraFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
