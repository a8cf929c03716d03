/* Internal joint data. A public joint (ibJointId) owns 0..2 basic constraints ("basic joints",
 * §3.2.3) that the solvers iterate over; springs and motors are force modules (§3.2.5, §3.2.7).
 *
 * A basic joint type is one file (joint_ball.c, joint_line.c, ...) providing an ibBasicType:
 *   prepare():  at a time instant, from the current poses, the world points a (on body 1) and b (on
 *               body 2) where impulses act and the orthonormal projection rows P (1..3 rows);
 *   error():    the position error d (world 3-vector, eqs in §3.2.3) from given poses — the solver
 *               passes predicted poses at t0+h, the measurement passes the current ones;
 * The velocity error is generic: translational u_b - u_a at (a, b), rotational w2 - w1. */
#ifndef IBDYN_SRC_JOINT_INTERNAL_H
#define IBDYN_SRC_JOINT_INTERNAL_H

#include "dynamics/world.h"

typedef enum ibBasicKind {
	IB_BASIC_BALL,
	IB_BASIC_DISTANCE,
	IB_BASIC_LINE,
	IB_BASIC_LINE_DISTANCE,
	IB_BASIC_PLANE,
	IB_BASIC_ROTATION_LOCK,
	IB_BASIC_AXIS_ALIGN,
	IB_BASIC_DOUBLE_ROTATION,
	IB_BASIC_VELOCITY_LINEAR,
	IB_BASIC_VELOCITY_ANGULAR,
	IB_BASIC_KIND_COUNT
} ibBasicKind;

/* Pose of a body as seen by a joint: principal-frame pose plus the user->principal mapping. */
typedef struct ibPose {
	ibVec3 s;
	ibQuat q;  /* principal -> world */
	ibMat3 R;  /* matrix of q */
} ibPose;

typedef struct ibBasic ibBasic;

/* Predicted pose of a body at t0+h with its current velocities; valid while version == velVersion. */
typedef struct ibPredicted {
	ibPose pose;
	uint32_t version;
	/* the whole state at t0+h and what it was integrated from, so that the free motion after the
	 * joint correction can take it instead of integrating again (ib_joints_predicted_state) */
	ibRigidState next, from;
	ibVec3 fext, text;
	double h;
	bool velocities; /* next.v and next.w are set (else ib_integrate_velocities completes them from pc) */
	ibPrecession pc;
	ibPoseTerms terms;   /* valid for the pose of w->poseEpoch == termsEpoch */
	uint32_t termsEpoch;
} ibPredicted;

typedef struct ibBasicType {
	const char* name;
	bool rotational;    /* corrected with angular impulses (L matrices) */
	bool velocityOnly;  /* no position condition (§3.2.6) */
	void (*prepare)(ibBasic* c, const ibPose* p1, const ibPose* p2);
	ibVec3 (*error)(const ibBasic* c, const ibPose* p1, const ibPose* p2);
} ibBasicType;

struct ibBasic {
	const ibBasicType* type;
	int32_t joint;     /* owning public joint */
	int32_t b1, b2;    /* body indices (body A = 1, body B = 2) */
	/* local data in the principal frames of the bodies (refreshed when a body's mass frame changes) */
	ibVec3 la, lb;     /* joint points on body 1 / body 2 */
	ibVec3 lx1, lx2;   /* joint vectors on body 1 / body 2 */
	ibQuat qrel0;      /* rotation lock: q2(0)^-1 q1(0) (principal frames) */
	double alpha0;     /* double rotation: initial angle */
	double dist;       /* distance variants */
	unsigned dofMask;  /* velocity-only rows (bits of body 1's user axes) */
	ibVec3 lu1[3];     /* velocity-only: body 1 user axes in the principal frame */
	/* per time instant */
	ibVec3 a, b;       /* world points where impulses act */
	ibVec3 P[3];       /* orthonormal projection rows */
	int rows;
	double Minv[3][3]; /* (P K P^T)^-1 or (P L P^T)^-1 */
	ibVec3 raResp, rbResp; /* LGS: lever arms at which the predicted error responds (predicted points) */
	double dEdu[2][3][6];  /* LGS: d(predicted error)/d(body velocity (v, w)) for body 1 and 2 (finite differences) */
	bool haveDEdu;
	bool cut;              /* LGS: joint closes a loop and is corrected iteratively (§3.3.2.3, option 1) */
	uint32_t cacheEpoch; /* w->poseEpoch at which a, b, P, Minv were computed (0 = never) */
	uint32_t pointEpoch; /* w->poseEpoch at which a, b, P alone were computed (ib_solver_prepare_points) */
	/* impulses */
	ibVec3 accPos, accVel;   /* accumulated this step (clamp, warm start) */
	double slack;            /* error the joint correction of this (sub-)step may leave (m or rad; ib_joints_recovery_slack) */
	ibVec3 warmPos, warmVel; /* last step's totals */
	/* measurements after the last step */
	double posError, velError;
	int iterations;
};

/* One one-sided angular limit row of a ball joint in this step (joint_limit_ball.c). */
typedef struct ibLimitRow {
	int8_t side;      /* cone: 1 active; twist: +1 lower, -1 upper; 0 inactive */
	double acc;       /* accumulated impulse of the joint correction (>= 0) */
	double accVel;    /* accumulated impulse of the velocity correction (>= 0) */
	double approach;  /* approach speed at t0 (restitution), >= 0 */
	double slack;     /* violation of side slackSide at t0 that the joint correction may leave (ib_limit_slack) */
	int8_t slackSide;
	double impulse;   /* reported: acc + accVel */
} ibLimitRow;

typedef struct ibJoint {
	ibJointDef def;     /* as created (schedule pointers -> sched arrays below) */
	bool inUse;
	uint16_t generation;
	int32_t nextFree;
	int32_t basic[2];   /* indices into store->basics, -1 unused */
	int basicCount;
	char* name;
	double* schedTimes;
	double* schedValues;
	int schedCount;
	/* motor state */
	double* window;     /* ring buffer of past errors, def.motor.integralWindow entries */
	int windowCap, windowLen, windowHead;
	double prevError;
	bool hasPrevError;
	double motorOutput, motorValue, motorSpeed, motorTarget;
	double unwrappedAngle;
	bool angleInit;
	/* measurements */
	double posError, angError, velError;
	int iterations;
	int32_t dragHelper; /* drag joints: index of the kinematic helper body, else -1 */
	/* limit row of this step (joint_limit.c) */
	int8_t limitSide;      /* +1 lower, -1 upper limit active, 0 inactive */
	double limitAcc;       /* accumulated impulse of the position correction (>= 0) */
	double limitAccVel;    /* accumulated impulse of the velocity correction (>= 0) */
	double limitApproach;  /* approach speed towards the active limit at t0 (>= 0) */
	double limitSlack;     /* violation of side limitSlackSide at t0 that the joint correction may leave (ib_limit_slack) */
	int8_t limitSlackSide;
	double limitImpulse;   /* reported: limitAcc + limitAccVel */
	ibLimitRow coneRow, twistRow; /* ball joint cone and twist limits (joint_limit_ball.c) */
	ibVec3 limLocal[4];           /* their axes and reference vectors in the principal frames (joint_limit_ball.c) */
	uint32_t limLocalEpoch;       /* w->massEpoch + 1 they were taken at (0: none) */
	ibVec3 limFrame[6];           /* their frame at the current poses (and the cone row's gradient) */
	double limFrameS[2];          /* the cone row's gap and the twist there */
	uint32_t limFrameEpoch;       /* w->poseEpoch it was taken at (0: none) */
} ibJoint;

/* Method classes; the basic joints are stored grouped by class in this order (solver_groups.c). */
typedef enum ibSolverClass { IB_CLASS_TREE, IB_CLASS_SPARSE, IB_CLASS_ITERATIVE, IB_CLASS_COUNT } ibSolverClass;

typedef struct ibJointStore {
	ibJoint* joints;
	int32_t jointCapacity, jointHigh, jointFree, jointCount;
	ibBasic* basics;
	int32_t basicCapacity, basicCount;
	bool basicsDirty; /* rebuild the basic list after create/destroy */
	uint32_t builtMassEpoch; /* w->massEpoch the basics were built at */
	uint32_t layoutVersion;  /* bumped whenever the basic list is rebuilt */
	bool hasVelocityOnly;    /* some basic joint is velocity-only */
	ibVec3* rhs;             /* per-basic right-hand sides (LGS) */
	int32_t rhsCapacity;
	struct LgsTree* lgs;     /* solver_lgs_tree.c */
	/* per-body prediction cache (indexed like w->bodies) */
	ibPredicted* pred;
	int32_t predCapacity;
	int32_t* predQueue; /* scratch of ib_solver_predicted_errors: bodies to predict (bodyHigh + 1) */
	int32_t predQueueCapacity;
	void* sparse;            /* solver_lgs_sparse.c (CHOLMOD state), NULL until used */
	struct ibFollow* follow; /* joint_follow.c, NULL until used */
	/* basics of class c are [classStart[c], classStart[c + 1]) (rebuilt with the basics) */
	int32_t classStart[IB_CLASS_COUNT + 1];
	int classIslands[IB_CLASS_COUNT];
	uint32_t builtGroupsVersion; /* w->solverGroupsVersion the order was built for */
	int32_t limitCount;   /* joints with an enabled limit */
	int limitPhase;       /* 0 none, 1 joint correction, 2 velocity correction of this step (joint_limit.c) */
	/* a contact loop run per island (contact_graph.c): while sweepIsland is set, the joint sweeps take only the
	 * rows with a body whose label sweepIsland[body] is sweepId */
	const int32_t* sweepIsland;
	int32_t sweepId;
} ibJointStore;

/* the row between bodies b1 and b2 is outside the island of a per-island contact loop (ibJointStore.sweepIsland) */
static inline bool ib_sweep_skips(const ibJointStore* st, int32_t b1, int32_t b2)
{
	return st->sweepIsland && st->sweepIsland[b1] != st->sweepId && st->sweepIsland[b2] != st->sweepId;
}
static inline bool ib_sweep_skips_joint(const ibJointStore* st, const ibJoint* j)
{
	if (!st->sweepIsland) return false;
	int32_t a = j->def.bodyA.index1 - 1, b = j->def.bodyB.index1 - 1;
	return !(a >= 0 && st->sweepIsland[a] == st->sweepId) && !(b >= 0 && st->sweepIsland[b] == st->sweepId);
}

extern const ibBasicType ib_basic_ball, ib_basic_distance, ib_basic_line, ib_basic_line_distance, ib_basic_plane,
    ib_basic_rotation_lock, ib_basic_axis_align, ib_basic_double_rotation, ib_basic_velocity_linear,
    ib_basic_velocity_angular;

/* helpers shared by the basic joint files (joint_frames.c) */
static inline ibVec3 ib_pose_point(const ibPose* p, ibVec3 local) { return ibAdd(p->s, ibMat3_MulV(p->R, local)); }
static inline ibVec3 ib_pose_vector(const ibPose* p, ibVec3 local) { return ibMat3_MulV(p->R, local); }
/* Two unit vectors completing the unit x to an orthonormal basis (§3.2.3: y = x × w, z = x × y). */
void ib_orthonormal_basis(ibVec3 x, ibVec3* y, ibVec3* z);
/* Principal-frame coordinates of a user-frame point / vector of body b. */
ibVec3 ib_user_to_principal_point(const ibBody* b, ibVec3 p);
ibVec3 ib_user_to_principal_vector(const ibBody* b, ibVec3 v);
ibPose ib_body_pose(const ibBody* b);

/* joint.c */
ibJointStore* ib_joint_store(ibWorld* w, bool create);
ibJoint* ib_joint_get(ibJointId id, ibWorld** outWorld);
bool ib_joints_rebuild_basics(ibWorld* w);
void ib_joint_free_data(ibWorld* w, ibJoint* j);
ibJointId ib_joint_id(const ibWorld* w, int32_t index);

/* solver_common.c */
ibMat3 ib_solver_point_response(const ibBody* b, ibVec3 r);
void ib_solver_invert_small(double M[3][3], int n, double out[3][3]);
void ib_solver_prepare(ibWorld* w, ibBasic* c);
/* Points and projection only (no Minv): what the LGS solvers need. */
void ib_solver_prepare_points(ibWorld* w, ibBasic* c);
ibVec3 ib_solver_impulse(const ibBasic* c, ibVec3 r);
/* |P r| (inline: the velocity correction's convergence test runs it for every basic) */
static inline double ib_solver_projected_norm(const ibBasic* c, ibVec3 r)
{
	double s = 0.0;
	for (int k = 0; k < c->rows; ++k) {
		double x = ibDot(c->P[k], r);
		s += x * x;
	}
	return sqrt(s);
}
void ib_solver_apply(ibWorld* w, const ibBasic* c, ibVec3 p);
const ibPose* ib_solver_predicted(ibWorld* w, ibJointStore* st, int32_t i, double h);
/* Relative velocity at the joint: u_b - u_a at (a, b), or w2 - w1 for rotational rows (inline, as above). */
static inline ibVec3 ib_solver_velocity_error(const ibWorld* w, const ibBasic* c)
{
	const ibBody* b1 = &w->bodies[c->b1];
	const ibBody* b2 = &w->bodies[c->b2];
	if (c->type->rotational) return ibSub(b2->st.w, b1->st.w);
	ibVec3 ua = ibAdd(b1->st.v, ibCross(b1->st.w, ibSub(c->a, b1->st.s)));
	ibVec3 ub = ibAdd(b2->st.v, ibCross(b2->st.w, ibSub(c->b, b2->st.s)));
	return ibSub(ub, ua);
}
/* Component of r in the rows of c (P^T P r): warm-start impulses must not act in free DOFs. */
ibVec3 ib_solver_project(const ibBasic* c, ibVec3 r);
/* The part of a predicted error d that the joint correction removes: d itself, or, in a sub-step with a large
 * error at its start (c->slack > 0, ib_joints_recovery_slack), only what lies beyond |d| = slack:
 * d (1 - slack / |d|), zero inside. */
static inline ibVec3 ib_solver_excess(const ibBasic* c, ibVec3 d)
{
	if (!(c->slack > 0.0)) return d;
	double l = ibLength(d);
	return l <= c->slack ? IB_VEC3_ZERO : ibScale(1.0 - c->slack / l, d);
}
/* Slack of every position row: the thesis removes the whole predicted error in every step. In a sub-step of
 * ibWorld_Step (time of contact, rotation sub-steps, halves of an unconverged step), an error e0 present at
 * its start and larger than IB_RECOVERY_MIN_ERRORS tolerances (left by an unconverged step) is removed only
 * in proportion f = w->recoveryFraction, the sub-step's length over the step's: slack = (1 - f) e0. It is
 * removed at the rate of a whole step, not within one time-of-contact sub-step of 2e-5 s at up to 190 m/s
 * (tests/test_joint_recovery.c); what is left goes in the next steps. Smaller errors go at once, as before. */
void ib_joints_recovery_slack(ibWorld* w, ibJointStore* st);
/* The same for a one-sided limit row violated by v (> 0) at the start of the sub-step; tol its tolerance. */
static inline double ib_limit_slack(const ibWorld* w, double v, double tol)
{
	return v > IB_RECOVERY_MIN_ERRORS * tol ? (1.0 - w->recoveryFraction) * v : 0.0;
}
/* |error| of a position row at the current poses (its points and rows prepared on the way) */
double ib_solver_error_now(ibWorld* w, ibBasic* c);
/* Predicted errors d(t0+h) of all position rows, stored as excess/h in st->rhs (ib_solver_excess);
 * returns max |excess| / tolerance. */
double ib_solver_predicted_errors(ibWorld* w, ibJointStore* st, double h);

/* solver_iterative.c (Alg. 3.1, 3.2) and solver_lgs_tree.c (O(n) LGS for acyclic joint graphs) */
ibResult ib_iterative_position_correction(ibWorld* w, double h);
ibResult ib_iterative_velocity_correction(ibWorld* w, double h, bool warmStart);
bool ib_lgs_applicable(ibWorld* w);
ibResult ib_lgs_position_correction(ibWorld* w, double h);
ibResult ib_lgs_velocity_correction(ibWorld* w, double h);
void ib_lgs_free(ibWorld* w);

/* solver_groups.c: class of each in-use joint's island; work holds 3 * (bodyHigh + 1) ints */
void ib_joints_island_classes(ibWorld* w, const ibJointStore* st, int8_t* cls, int32_t* work, int islands[IB_CLASS_COUNT]);

/* force modules: motor.c and spring.c */
void ib_motor_apply(ibWorld* w, ibJoint* j, double h);
/* The coordinate and its rate (ibJoint_GetMotorValue, GetMotorSpeed) of a hinge or slider at the current poses
 * (after each step, at creation, and before the motor acts) */
void ib_motor_measure(ibWorld* w, ibJoint* j);
void ib_spring_apply(ibWorld* w, ibJoint* j);
double ib_spring_energy(ibWorld* w, const ibJoint* j);
double ib_schedule_eval(const double* t, const double* v, int n, double time, double fallback);

/* joint_limit.c: hinge angle / slider position limits as one-sided rows (§5.4.3) */
ibResult ib_limit_validate(ibWorld* w, ibJointType type, bool enable, double lower, double upper, double e);
void ib_limits_count(ibJointStore* st);
void ib_limits_begin(ibWorld* w, double h);
void ib_limits_position_correction(ibWorld* w, double h);
void ib_limits_velocity_correction(ibWorld* w, double h);
bool ib_limits_position_sweep(ibWorld* w, double h);
bool ib_limits_velocity_sweep(ibWorld* w);
bool ib_limits_response_sweep(ibWorld* w, double tol);
bool ib_limits_follow_sweep(ibWorld* w, double h);
/* Hinges and sliders at their stop, each solved as one block (all its rows at once) in the follow sweeps */
bool ib_limits_block_follow_sweep(ibWorld* w, double h);
/* The same in the probes of K_eff (contact_joint_response.c): the limit row at its stop an equality, as
 * ib_limits_response_sweep holds it; impulses without accumulators (the probes' velocities are restored) */
bool ib_limits_block_response_sweep(ibWorld* w, double tol);
/* The same in the joint correction's limit loop: the predicted errors, one Newton step per joint and sweep */
bool ib_limits_block_position_sweep(ibWorld* w, double h);

/* joint_limit_ball.c: swing cone and twist limits of ball joints, the same one-sided rows */
ibResult ib_ball_limit_validate(ibWorld* w, const ibJointDef* d);
bool ib_ball_limited(const ibJoint* j);
void ib_ball_limits_begin(ibWorld* w, double h);
bool ib_ball_limits_position_sweep(ibWorld* w, double h);
void ib_ball_limits_velocity_begin(ibWorld* w);
bool ib_ball_limits_velocity_sweep(ibWorld* w);
void ib_ball_limits_end(ibWorld* w);
/* the cone and twist rows in the contact points' joint response and in the joint sweeps that follow a K_eff impulse
 * (as ib_limits_response_sweep / ib_limits_follow_sweep, which call them) */
bool ib_ball_limits_response_sweep(ibWorld* w, double tol);
bool ib_ball_limits_follow_sweep(ibWorld* w, double h);
/* One row of the joints' velocity system in the direct follow (joint_follow.c): J v is the row's rate; an impulse
 * x acts as x J^T on the two bodies; A x = rhs (A = J M^-1 J^T) makes the row hold. One-sided rows (limit rows) keep
 * *acc + base + x >= 0 and take x into *acc (and their side into *side); equality rows (acc NULL) take any x. */
typedef struct ibFollowRow {
	int32_t body[2];
	double J[2][6]; /* (linear, angular) per body */
	double rhs, base;
	double* acc;
	int8_t *side, sideValue;
} ibFollowRow;
/* The limit rows that the follow sweeps act on (ib_limits_follow_sweep in the joint correction's phase with h > 0,
 * ib_limits_velocity_sweep in the velocity correction's; probe: those of the probes' sweeps, ib_limits_response_sweep)
 * of the joints with a body marked in[], appended to out from *n on; false if more than cap rows */
bool ib_limits_follow_rows(ibWorld* w, double h, bool probe, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap);
bool ib_ball_limits_follow_rows(ibWorld* w, double h, bool probe, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap);
/* The limit rows of the joint correction's sweeps (ib_limits_position_sweep) at the predicted poses (rhs = -gap / h);
 * *worst is raised to the largest error they would correct, in tolerances */
bool ib_limits_position_rows(ibWorld* w, double h, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap, double* worst);
bool ib_ball_limits_position_rows(ibWorld* w, double h, const uint8_t* in, ibFollowRow* out, int32_t* n, int32_t cap, double* worst);
/* joint_follow.c: the follow of a contact impulse on bodies b1, b2 (contact_joint_response.c) solved directly on
 * their joint-connected bodies; false where it did nothing (the sweeps then follow alone) */
bool ib_joints_follow_direct(ibWorld* w, double h, int32_t b1, int32_t b2);
/* the same for the position sweeps that follow it in the contact position loop (ib_joints_position_sweep): Newton steps
 * on the predicted errors with the matrix at t0 */
bool ib_joints_follow_position_direct(ibWorld* w, double h, int32_t b1, int32_t b2);
/* every joint-connected group of dynamic bodies (up to 512 rows each) brought to its joints directly: the position rows
 * by Newton steps on their predicted errors (position, h > 0), else the velocity rows of the velocity correction's phase
 * (ib_limits_follow_rows); groups whose rows all hold are left alone */
bool ib_joints_project_direct(ibWorld* w, double h, bool position);
/* the same for the probes of K_eff (ib_joints_response_sweep and the limit rows at their stops as equalities) */
bool ib_joints_probe_direct(ibWorld* w, int32_t b1, int32_t b2);
void ib_joints_follow_free(ibWorld* w);
/* a row's Jacobian from its two bodies' (linear, angular) parts */
static inline void ib_follow_row_set(ibFollowRow* r, int32_t b1, ibVec3 l1, ibVec3 a1, int32_t b2, ibVec3 l2, ibVec3 a2)
{
	r->body[0] = b1, r->body[1] = b2;
	const ibVec3 v[4] = {l1, a1, l2, a2};
	for (int p = 0; p < 2; ++p)
		for (int q = 0; q < 2; ++q) {
			ibVec3 x = v[2 * p + q];
			r->J[p][3 * q] = x.x, r->J[p][3 * q + 1] = x.y, r->J[p][3 * q + 2] = x.z;
		}
	r->rhs = r->base = 0.0;
	r->acc = NULL;
	r->side = NULL;
	r->sideValue = 0;
}
/* row k of basic joint c (its direction P[k]; an impulse x acts as x P[k] on body 1, -x P[k] on body 2) */
static inline void ib_follow_basic_row(const ibWorld* w, const ibBasic* c, int k, ibFollowRow* o)
{
	const ibVec3 P = c->P[k];
	if (c->type->rotational)
		ib_follow_row_set(o, c->b1, IB_VEC3_ZERO, P, c->b2, IB_VEC3_ZERO, ibNeg(P));
	else
		ib_follow_row_set(o, c->b1, P, ibCross(ibSub(c->a, w->bodies[c->b1].st.s), P), c->b2, ibNeg(P),
		                  ibNeg(ibCross(ibSub(c->b, w->bodies[c->b2].st.s), P)));
}
/* J_x M^-1 J_y^T of two rows */
static inline double ib_follow_entry(const ibWorld* w, const ibFollowRow* x, const ibFollowRow* y)
{
	double a = 0.0;
	for (int p = 0; p < 2; ++p) {
		const ibBody* b = &w->bodies[x->body[p]];
		if (!ib_is_dynamic(b)) continue;
		for (int q = 0; q < 2; ++q) {
			if (y->body[q] != x->body[p]) continue;
			const double *u = x->J[p], *v = y->J[q];
			ibVec3 ang = ibMat3_MulV(b->invInertiaW, ibV3(v[3], v[4], v[5]));
			a += b->invMass * (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) + u[3] * ang.x + u[4] * ang.y + u[5] * ang.z;
		}
	}
	return a;
}
/* [IMPL] a limit within this many times its tolerance of its stop counts as at it for the contact points' joint
 * response (ib_limits_response_sweep, ib_limits_follow_sweep and their ball-joint rows) */
#define IB_LIMIT_NEAR 1e3
/* swing angle, twist of joint j at the current poses */
void ib_ball_swing_twist(const ibWorld* w, ibJoint* j, double* swing, double* twist);

/* solver_lgs_sparse.c: general sparse LGS (CHOLMOD) for joint graphs with loops and redundant rows */
ibResult ib_lgs_sparse_position_correction(ibWorld* w, double h);
ibResult ib_lgs_sparse_velocity_correction(ibWorld* w, double h);
void ib_lgs_sparse_free(ibWorld* w);

#endif
