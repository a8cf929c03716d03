/* ibdyn joints, servo motors, springs and velocity-only constraints (§3.2, §3.3.1).
 * A joint connects body A ("body 1" of the thesis) and body B ("body 2"); at least one must be
 * dynamic. Anchors and axes are stored in the bodies' user frames (ibJointDef.local*), so a joint
 * can be created from any pose and deliberately offset anchors are pulled together (reassembly).
 * Every joint is a set of basic joints (§3.2.3) solved by the iterative method (Alg. 3.1/3.2): the
 * position error after each step is bounded by ibSolverSettings.positionTolerance (m) /
 * angularTolerance (rad), the velocity error by velocityTolerance, unless an iteration cap hits
 * (then ibStepStats.converged is false and the residual is reported). */
#ifndef IBDYN_JOINT_H
#define IBDYN_JOINT_H

#include "base.h"
#include "id.h"
#include "math.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Joint types. Basic joints remove the DOFs named; combined joints are sets of basic joints. */
typedef enum ibJointType {
	IB_JOINT_BALL = 0,            /**< point A = point B: 3 translational DOF (with distance > 0: |B - A| = distance, 1 DOF) */
	IB_JOINT_LINE = 1,            /**< point B on the line through A along axisA: 2 translational (distance > 0: on a cylinder of that radius, 1) */
	IB_JOINT_PLANE = 2,           /**< point B in the plane through A with normal axisA: 1 translational (distance: plane offset along the normal) */
	IB_JOINT_ROTATION_LOCK = 3,   /**< relative rotation fixed: 3 rotational */
	IB_JOINT_AXIS_ALIGN = 4,      /**< axisA = axisB (direction joint): 2 rotational */
	IB_JOINT_DOUBLE_ROTATION = 5, /**< angle between axisA and axisB constant: 1 rotational */
	IB_JOINT_HINGE = 6,           /**< ball + axis alignment: 3 + 2 (revolute) */
	IB_JOINT_CYLINDRICAL = 7,     /**< line + axis alignment along the rail: 2 + 2 */
	IB_JOINT_SLIDER = 8,          /**< line + rotation lock: 2 + 3 (prismatic) */
	IB_JOINT_UNIVERSAL = 9,       /**< ball + double rotation of axisA, axisB (cardan): 3 + 1 */
	IB_JOINT_FIXED = 10,          /**< ball + rotation lock: 3 + 3 */
	IB_JOINT_SPRING = 11,         /**< damped spring between anchor A and anchor B (no constraint, §3.2.7) */
	IB_JOINT_VELOCITY = 12,       /**< velocity-only constraint on chosen DOFs (§3.2.6), no position condition */
	IB_JOINT_TYPE_COUNT
} ibJointType;

/** Servo motor mode (hinge: angle/angular velocity; slider: position/velocity). */
typedef enum ibMotorMode {
	IB_MOTOR_OFF = 0,      /**< no motor */
	IB_MOTOR_POSITION = 1, /**< PID on the hinge angle (rad) or slider position (m) */
	IB_MOTOR_VELOCITY = 2, /**< PID on the relative angular velocity (rad/s) or velocity (m/s) */
} ibMotorMode;

/** Servo motor with PID control, eq. 3.23: u = K_r (e + h/T_N sum(window) + T_V/h (e - e_prev)),
 * clamped to +-maxForce; applied as +u on body B and -u on body A along the axis. */
typedef struct ibMotorDef {
	ibMotorMode mode;             /**< off, position or velocity */
	double target;                /**< set-point (rad, m, rad/s or m/s) when no schedule is given */
	double gain;                  /**< K_r (N m/rad, N/m, N m s/rad or N s/m), >= 0 */
	double resetTime;             /**< T_N of the integral part (s); 0 disables the integral part */
	double derivativeTime;        /**< T_V of the derivative part (s), >= 0 */
	int integralWindow;           /**< number of past errors summed by the integral part, >= 1 */
	double maxForce;              /**< torque (N m) or force (N) limit, > 0 (use a large value for "unlimited") */
	const double* scheduleTimes;  /**< optional set-point schedule: strictly increasing times (s) */
	const double* scheduleValues; /**< set-points at those times, interpolated linearly, held outside */
	int scheduleCount;            /**< number of schedule points (0 = constant target) */
} ibMotorDef;

/** Velocity-only DOF selection bits (axes of body A's user frame). */
typedef enum ibVelocityDof {
	IB_DOF_X = 1, /**< translation (or rotation) along body A's x axis */
	IB_DOF_Y = 2, /**< along y */
	IB_DOF_Z = 4, /**< along z */
} ibVelocityDof;

/** Joint definition. All local quantities are in the bodies' user frames. */
typedef struct ibJointDef {
	ibJointType type;       /**< joint type */
	ibBodyId bodyA;         /**< body A ("body 1"); may be static or kinematic */
	ibBodyId bodyB;         /**< body B ("body 2") */
	ibVec3 localAnchorA;    /**< joint point on A (m, A frame) */
	ibVec3 localAnchorB;    /**< joint point on B (m, B frame) */
	ibVec3 localAxisA;      /**< primary axis on A: hinge/alignment axis, rail direction, plane normal (unit) */
	ibVec3 localAxisB;      /**< primary axis on B (axis alignment, universal's second axis; unit) */
	ibVec3 localRefA;       /**< reference vector on A perpendicular to localAxisA (motor angle zero), unit */
	ibVec3 localRefB;       /**< reference vector on B, unit */
	ibQuat referenceRotation; /**< rotation lock (slider, fixed): rest value of qB^-1 qA (user frames); all zero = take the current poses */
	double referenceAngle;  /**< double rotation (universal): rest angle between the axes (rad); NaN = take the current poses */
	double distance;        /**< distance variant of ball/line/plane (m, >= 0; 0 = coincident); spring rest length */
	double stiffness;       /**< spring constant D (N/m), >= 0 */
	double damping;         /**< spring damping mu_F (N s/m), >= 0, on the full relative velocity of the anchors */
	unsigned linearDofs;    /**< velocity joint: ibVelocityDof bits of translational DOFs to lock */
	unsigned angularDofs;   /**< velocity joint: ibVelocityDof bits of rotational DOFs to lock */
	ibMotorDef motor;       /**< servo motor (hinge or slider only) */
	bool enableLimit;       /**< hinge angle / slider position limit (one-sided inequality rows, docs/joints.md) */
	double lowerLimit;      /**< lower limit: hinge angle (rad, >= -pi) or slider position (m) */
	double upperLimit;      /**< upper limit (rad, <= pi; or m), >= lowerLimit */
	double limitRestitution; /**< restitution e in [0, 1] of a limit stop (0 = inelastic); also the cone and twist limits */
	bool enableConeLimit;   /**< ball joint: swing cone, angle between axisA and axisB <= coneAngle (docs/joints.md) */
	double coneAngle;       /**< cone half-angle (rad, in (0, pi)); elliptic cone: the half-angle towards refA */
	double coneAngle2;      /**< elliptic cone: half-angle towards axisA x refA (rad, in (0, pi)); 0 = circular (coneAngle) */
	bool enableTwistLimit;  /**< ball joint: twist of refB about the axis relative to refA in [lowerTwist, upperTwist] */
	double lowerTwist;      /**< lower twist limit (rad, >= -pi) */
	double upperTwist;      /**< upper twist limit (rad, <= pi), >= lowerTwist */
	bool collideConnected;  /**< let the two bodies collide (collision issue) */
	const char* name;       /**< optional name (copied) */
	void* userData;         /**< user pointer */
	int internalValue;      /**< set by ibDefaultJointDef */
} ibJointDef;

/** Default joint definition of the given type: null bodies, zero anchors, axes along x, refs along y,
 * motor off (gain 0, window 10, maxForce 1e30). */
IB_API ibJointDef ibDefaultJointDef(ibJointType type);
/** Default (disabled) motor definition. */
IB_API ibMotorDef ibDefaultMotorDef(void);
/** Fill the local anchors, axes and reference vectors from a world anchor and a world axis using the
 * bodies' current poses (axisB = axis too; use ibJointDef_SetWorldAxes for the universal joint). */
IB_API ibResult ibJointDef_SetWorldFrame(ibJointDef* def, ibVec3 anchor, ibVec3 axis);
/** Set the local anchors from two world points (they may differ: distance variants, reassembly). */
IB_API ibResult ibJointDef_SetWorldAnchors(ibJointDef* def, ibVec3 anchorA, ibVec3 anchorB);
/** Set localAxisA and localAxisB from two world axes (universal / double-rotation joints). */
IB_API ibResult ibJointDef_SetWorldAxes(ibJointDef* def, ibVec3 axisA, ibVec3 axisB);

/** Create a joint; null handle and a world error on a bad definition (NaN, zero axis, same body twice,
 * two non-dynamic bodies, motor on a joint that has none, ...). */
IB_API ibJointId ibCreateJoint(ibWorldId world, const ibJointDef* def);
/** Destroy a joint. */
IB_API ibResult ibDestroyJoint(ibJointId joint);
/** True if the handle refers to a live joint. */
IB_API bool ibJoint_IsValid(ibJointId joint);
/** Joint type (IB_JOINT_TYPE_COUNT if stale). */
IB_API ibJointType ibJoint_GetType(ibJointId joint);
/** The definition the joint was created with (schedule pointers refer to the joint's own copy). */
IB_API ibResult ibJoint_GetDef(ibJointId joint, ibJointDef* out);
/** Body A. */
IB_API ibBodyId ibJoint_GetBodyA(ibJointId joint);
/** Body B. */
IB_API ibBodyId ibJoint_GetBodyB(ibJointId joint);
/** Joint name ("" if none). */
IB_API const char* ibJoint_GetName(ibJointId joint);
/** Translational position error after the last step, measured from the body states (m). */
IB_API double ibJoint_GetPositionError(ibJointId joint);
/** Rotational position error after the last step (rad). */
IB_API double ibJoint_GetAngularError(ibJointId joint);
/** Velocity error after the last step (m/s for translational, rad/s for rotational rows; the larger). */
IB_API double ibJoint_GetVelocityError(ibJointId joint);
/** Correction sweeps in which this joint applied an impulse in the last step (position + velocity). */
IB_API int ibJoint_GetIterations(ibJointId joint);
/** Hinge angle of B relative to A about the axis (rad, from the reference vectors, unwrapped over turns) or slider
 * position of B's anchor relative to A's along the rail (m), at the current poses (after the last step, or at
 * creation). 0 for other types. */
IB_API double ibJoint_GetMotorValue(ibJointId joint);
/** Relative angular velocity (rad/s) or velocity (m/s) along the axis, B relative to A. */
IB_API double ibJoint_GetMotorSpeed(ibJointId joint);
/** Torque (N m) or force (N) the motor applied in the last step. */
IB_API double ibJoint_GetMotorOutput(ibJointId joint);
/** Current motor set-point (schedule evaluated at the world time). */
IB_API double ibJoint_GetMotorTarget(ibJointId joint);
/** Replace the motor settings of a hinge or slider (schedule copied). */
IB_API ibResult ibJoint_SetMotor(ibJointId joint, const ibMotorDef* motor);
/** Enable/disable the limit of a hinge (angle, rad, -pi <= lower <= upper <= pi) or slider
 * (position, m, lower <= upper), measured like ibJoint_GetMotorValue. */
IB_API ibResult ibJoint_SetLimit(ibJointId joint, bool enable, double lower, double upper);
/** True if the limit is enabled; writes the range (either pointer may be NULL). */
IB_API bool ibJoint_GetLimit(ibJointId joint, double* lower, double* upper);
/** Restitution of the limit stops, in [0, 1]. */
IB_API ibResult ibJoint_SetLimitRestitution(ibJointId joint, double restitution);
/** Restitution of the limit stops (0 if stale). */
IB_API double ibJoint_GetLimitRestitution(ibJointId joint);
/** Accumulated limit impulse of the last step (position + velocity correction, including the contact loops'
 * joint sweeps; N s or N m s, >= 0; 0 while the joint is inside its range). */
IB_API double ibJoint_GetLimitImpulse(ibJointId joint);
/** Enable/disable the swing cone of a ball joint (half-angles in (0, pi); angle2 = 0: circular). */
IB_API ibResult ibJoint_SetConeLimit(ibJointId joint, bool enable, double angle, double angle2);
/** Enable/disable the twist limit of a ball joint (rad, -pi <= lower <= upper <= pi). */
IB_API ibResult ibJoint_SetTwistLimit(ibJointId joint, bool enable, double lower, double upper);
/** Swing angle (between axisA and axisB, rad in [0, pi]) and twist (rad, refB relative to refA about
 * the axis after the shortest swing) of a joint's frames; either pointer may be NULL. */
IB_API ibResult ibJoint_GetSwingTwist(ibJointId joint, double* swing, double* twist);
/** Accumulated cone and twist limit impulses of the last step (N m s, >= 0); either pointer may be NULL. */
IB_API ibResult ibJoint_GetBallLimitImpulses(ibJointId joint, double* cone, double* twist);
/** Number of live joints. */
IB_API int ibWorld_GetJointCount(ibWorldId world);
/** Write up to capacity joint handles (index order); returns the number of live joints. */
IB_API int ibWorld_GetJoints(ibWorldId world, ibJointId* out, int capacity);

/** Mouse-style dragging (§3.2.6): creates a kinematic helper body at worldPoint and a velocity-only
 * joint locking the translational DOFs of the grabbed point to it. Returns the joint (null on error). */
IB_API ibJointId ibWorld_BeginDrag(ibBodyId body, ibVec3 worldPoint);
/** Move the drag target: the helper gets the velocity (target - current)/h for the next step of length h. */
IB_API ibResult ibWorld_UpdateDrag(ibJointId drag, ibVec3 target, double h);
/** End a drag: destroys the joint and the helper body. */
IB_API ibResult ibWorld_EndDrag(ibJointId drag);

#ifdef __cplusplus
}
#endif
#endif
