/* Internal soft-body data: particles, constraint rows and the generic row solver.
 *
 * Particles live in one flat array; a soft body owns a contiguous range (compacted when a soft
 * body is destroyed). Internal rows of soft bodies (edge distance, bending, volume) are 1-row
 * constraints on up to 4 particles stored compactly in `rows` (a closed surface's volume row spans
 * the whole particle range). Public constraints (rigid–soft joints, user constraints) live in a
 * handle table with generations, with up to IB_CONSTRAINT_MAX_ROWS rows and any participants.
 * Both kinds are solved by the same code through a View: Jacobian J (rows x cols, row-major; 3
 * columns per particle, 6 per rigid body: COM velocity then world angular velocity),
 * K = J M^-1 J^T once per time instant, impulse lambda = -(K + alpha/h^2)^-1 (C(t0+h) +
 * alpha acc/h)/h in the joint correction and lambda = -K^-1 J u in the velocity correction. */
#ifndef IBDYN_SRC_SOFT_INTERNAL_H
#define IBDYN_SRC_SOFT_INTERNAL_H

#include "dynamics/world.h"
#include "ibdyn/soft.h"

#define IB_SOFT_MAXR IB_CONSTRAINT_MAX_ROWS

typedef struct ibParticle {
	ibVec3 x, v;
	ibVec3 f;          /* force held constant over the current step */
	ibVec3 userForce;  /* accumulated by ibSoftBody_ApplyForce */
	double mass;       /* as created (kept while pinned) */
	double invMass;    /* 0 if pinned */
	double damping, gravityScale;
	int32_t soft;      /* owning soft body */
} ibParticle;

/* One participant: a particle or a rigid body (global index). */
typedef struct ibSoftPart {
	int32_t index;
	int32_t isBody;
} ibSoftPart;

/* State of a participant: particle position, or body COM and principal->world rotation. */
typedef struct ibPartState {
	ibVec3 x;
	ibQuat q;
	ibMat3 R;
} ibPartState;

typedef enum ibSoftRowKind {
	IB_ROW_DISTANCE,
	IB_ROW_DIHEDRAL,
	IB_ROW_TET_VOLUME,
	IB_ROW_SURFACE_VOLUME, /* all particles of soft body p[0] */
} ibSoftRowKind;

typedef struct ibSoftRow {
	int32_t kind;
	int32_t count;
	int32_t p[4];      /* particle indices (SURFACE_VOLUME: p[0] = soft body index) */
	double rest;       /* rest value (length, angle, volume) */
	double scale;      /* row = scale * (value - rest) */
	double compliance;
	double tol;
	double J[12];
	double K, Minv, acc, warm, accVel;
	double accJ[3];     /* edge rows: the impulse applied to p[1] in this joint correction (N s, world) */
	uint32_t epoch;
} ibSoftRow;

typedef enum ibSoftConKind { IB_CON_TRIANGLE, IB_CON_VERTEX, IB_CON_USER } ibSoftConKind;

typedef struct ibSoftCon {
	bool inUse;
	uint16_t generation;
	int32_t nextFree;
	int32_t kind;
	int rows, count, cols;
	ibSoftPart* parts;
	double* J;
	double K[IB_SOFT_MAXR * IB_SOFT_MAXR], Minv[IB_SOFT_MAXR * IB_SOFT_MAXR];
	double acc[IB_SOFT_MAXR], warm[IB_SOFT_MAXR], accVel[IB_SOFT_MAXR], warmVel[IB_SOFT_MAXR];
	double compliance;
	bool velocity;
	uint32_t epoch;
	ibVec3 localUser;  /* rigid anchor in the body's user frame */
	double bary[4];    /* alpha, beta, gamma, delta */
	ibConstraintFn* fn;
	void* userData;
	double err, verr;
	int32_t softIndex, element; /* rigid–soft joints: soft body and triangle / vertex index */
	bool inSparse;     /* solved in the sparse system of this step (soft_sparse.c) */
	char* name;
} ibSoftCon;

typedef struct ibSoftBody {
	bool inUse;
	uint16_t generation;
	int32_t nextFree;
	int32_t first, count;        /* particle range */
	int32_t firstRow, rowCount;  /* internal rows */
	int* tris;                   /* 3 local indices per triangle (copy) */
	int triCount;
	double* volJ;                /* Jacobian of the surface volume row (3 count) or NULL */
	double tol;
	int maxIter;                 /* 0 = world caps */
	int solver;                  /* ibSoftSolver */
	/* the definition as created (ibSoftBody_GetDef): */
	ibVec3* rest;                /* rest vertices */
	int* tets;
	int tetCount;
	int* edges;
	int edgeCount;
	double* mass0;               /* masses as created */
	double density, stretchCompliance, bendingCompliance, volumeCompliance;
	int bending;
	bool preserveVolume;
	char* name;
	void* userData;
} ibSoftBody;

/* Contact of soft material with a rigid shape for one step (soft_contact*.c): a vertex (np = 1,
 * weight 1) or a point sum_i wt_i x_i of a soft triangle (np = 3, barycentric weights; on an edge
 * one weight is 0) against the shape's closest point q with the outward normal n, both at t0 in
 * the body's principal frame (carried with it); one normal row with accumulated clamp accN >= 0
 * and a tangential row pair clamped to the Coulomb disc mu accN. */
typedef struct ibSoftContact {
	int32_t p[3];       /* particles */
	double wt[3];       /* their weights (sum 1) */
	int np;
	int32_t body, shape;
	ibVec3 lq, ln;      /* q - com, n in the principal frame */
	ibMat3 K;           /* sum wt_i^2/m_i I + K_body(q) at t0 */
	double kn;          /* n^T K n */
	double mus, mud;    /* the shape's friction coefficients */
	bool sticking;      /* tangential relative speed at t0 <= eps_v: static friction */
	double accN, accVN; /* normal impulses: joint correction at t0, velocity correction at t0+h */
	ibVec3 accT, accVT; /* friction impulses of the same */
	double gap;         /* last predicted gap (m) */
	bool sphere;        /* face contact with a sphere: re-projected on the predicted triangle */
	double radius;
	ibVec3 lc;          /* sphere centre - com in the principal frame */
} ibSoftContact;

typedef struct ibBodyPred {
	ibPartState st;
	uint32_t version;
} ibBodyPred;

typedef struct ibSoftSparse ibSoftSparse; /* soft_sparse.c */

typedef struct ibSoftStore {
	ibParticle* particles;
	int32_t particleCapacity, particleCount;
	ibSoftRow* rows;
	int32_t rowCapacity, rowCount;
	ibSoftBody* softs;
	int32_t softCapacity, softHigh, softFree;
	ibSoftCon* cons;
	int32_t conCapacity, conHigh, conFree, conCount;
	ibBodyPred* bpred;
	int32_t bpredCapacity;
	ibPartState* scratch;   /* gathered states, >= largest participant count */
	int32_t scratchCapacity;
	double* scratchJ;       /* scratch Jacobian (rows x cols of the largest constraint) */
	int32_t scratchJCapacity;
	ibConstraintState* ustates; /* user-constraint callback states */
	int32_t ustateCapacity;
	ibVec3* snap;           /* step subdivision: x, v per particle per level */
	int32_t snapCapacity;   /* particles per level */
	int snapLevels;
	int depth;              /* nesting of position / velocity begin-end */
	int sweep;              /* sweeps since begin */
	bool capped;            /* some soft body's rows hit their maxIterations this step */
	bool lastCorrected;     /* the last position sweep corrected something (the correction ended unconverged) */
	bool warmValid;         /* the last joint correction converged: its impulses may warm-start the next */
	ibSoftContact* contacts; /* particle-shape contacts of this step (grow-only) */
	int32_t contactCount, contactCapacity;
	int32_t faceContactCount; /* of which soft-triangle (face/edge) contacts */
	/* the corrections the rigid contact loop may resume (soft_contact_loop.c): instant and h */
	uint32_t resumePosEpoch, resumeVelEpoch;
	double resumeH;
	bool resumePos, resumeVel;
	ibSoftStepStats stats;
	uint32_t layout;         /* bumped when soft bodies or constraints are created or destroyed */
	ibSoftSparse* sparse;    /* sparse direct solver of IB_SOFT_SOLVER_SPARSE bodies, or NULL */
	bool sparsePosition, sparseVelocity; /* the sparse systems of the current corrections are factored */
} ibSoftStore;

/* A constraint as the solver sees it (built on the fly from a row or a public constraint). */
typedef struct ibSoftView {
	int rows, count;
	const ibSoftPart* parts; /* general participants, or */
	const int32_t* pidx;     /* particle indices, or (both NULL) the particles first + k */
	int32_t first;
	double* J;
	double* K;
	double* Minv;
	double* acc;
	double* accVel;
	double compliance, tol;
	bool velocity;
	const ibSoftRow* row;    /* evaluation data: one of row / con */
	const ibSoftCon* con;
} ibSoftView;

/* soft_store.c */
ibSoftStore* ib_soft_store(ibWorld* w, bool create);
ibSoftBody* ib_soft_get(ibSoftBodyId id, ibWorld** outWorld);
ibSoftCon* ib_soft_con_get(ibConstraintId id, ibWorld** outWorld);
bool ib_soft_ensure_scratch(ibWorld* w, ibSoftStore* ss, int32_t states, int32_t jdoubles);
void ib_soft_con_free(ibWorld* w, ibSoftStore* ss, int32_t i);
void ib_soft_body_remove(ibWorld* w, ibSoftStore* ss, int32_t si);

/* soft_rows.c: row values and Jacobians (J may be NULL) */
void ib_soft_eval_row(const ibSoftStore* ss, const ibSoftRow* r, const ibPartState* s, double* C, double* J);
void ib_soft_eval_con(const ibWorld* w, const ibSoftCon* c, const ibPartState* s, double* C, double* J);
/* The article's ball joint (digest §24, with the world-frame lever arm of §24.4): states A, B, C
 * (particles), then the rigid body; C = aA + bB + gC + d n^ - (s + R local); J is 3 x 15. */
void ib_soft_ball_triangle(const double bary[4], ibVec3 local, const ibPartState* s, double* C, double* J);
/* Rigid–vertex ball: C = x - (s + R local); J 3 x 9. */
void ib_soft_ball_vertex(ibVec3 local, const ibPartState* s, double* C, double* J);
/* Dihedral angle across the edge x2-x3 of triangles (x2, x3, x0) and (x3, x2, x1); gradient if g. */
double ib_soft_dihedral(const ibVec3 x[4], ibVec3 g[4]);

/* soft_contact.c: one sweep of the contact rows (joint correction at t0 / velocity correction at
 * t0+h); true if some row moved its point by more than its tolerance */
void ib_soft_contacts_position_begin(ibWorld* w, ibSoftStore* ss, double h);
bool ib_soft_contacts_position_sweep(ibWorld* w, ibSoftStore* ss, double h);
void ib_soft_contacts_velocity_begin(ibWorld* w, ibSoftStore* ss);
bool ib_soft_contacts_velocity_sweep(ibWorld* w, ibSoftStore* ss);
/* soft_contact.c: complete a new contact (K, kn, friction, sticking) from its points and normal at
 * t0; false if it can take no impulse (pinned particles on a static body) */
bool ib_soft_contact_finish(ibWorld* w, ibSoftStore* ss, ibSoftContact* k, ibVec3 q, ibVec3 n, double gap);
/* soft_contact_detect.c: signed distance of a point to a shape (plane, convex, trimesh), the
 * closest surface point q and the outward normal n there; false if not handled / too far */
bool ib_soft_point_shape(const ibBody* b, const ibShape* s, ibVec3 x, double reach, double* dist, ibVec3* q, ibVec3* n);
bool ib_soft_attached(const ibSoftStore* ss, int32_t soft, int32_t body);
/* Closest point of triangle abc to p; barycentric weights of a point of the triangle (clamped). */
ibVec3 ib_soft_closest_on_triangle(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c);
void ib_soft_barycentric(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c, double wt[3]);

/* soft_solver.c */
/* Predicted pose of rigid body i after a free step h (cached per velocity version). */
const ibPartState* ib_soft_body_predicted(ibWorld* w, ibSoftStore* ss, int32_t i, double h);
ibSoftView ib_soft_row_view(ibSoftStore* ss, ibSoftRow* r);
ibSoftView ib_soft_con_view(ibSoftCon* c);
/* Gather states (current, or predicted over h when predicted) of a view's participants. */
const ibPartState* ib_soft_gather(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, bool predicted, double h);
void ib_soft_view_eval(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, const ibPartState* s, double* C, double* J);
int ib_soft_view_cols(const ibSoftView* v);
/* Make J and K of a view current for this time instant (w->poseEpoch). */
void ib_soft_view_prepare(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, uint32_t* epoch);
/* Apply the impulse J^T lambda of a view; J u of a view. */
void ib_soft_apply(ibWorld* w, ibSoftStore* ss, const ibSoftView* v, const double* lam);
void ib_soft_rate(const ibWorld* w, const ibSoftStore* ss, const ibSoftView* v, double* out);
/* Inverse of a symmetric positive semi-definite n x n matrix (rows without a pivot get zeros). */
void ib_soft_inverse_spd(const double* A, int n, double* out);

/* soft_sparse.c: the sparse direct solve of IB_SOFT_SOLVER_SPARSE bodies and the constraints on
 * their particles (one solve per sweep) */
bool ib_soft_sparse_wanted(const ibSoftStore* ss);
/* The solver a body's rows use (IB_SOFT_SOLVER_AUTO resolved: sparse unless the body has a sweep cap). */
int ib_soft_solver_of(const ibSoftBody* sb);
bool ib_soft_sparse_begin(ibWorld* w, ibSoftStore* ss, bool velocity, double h);
bool ib_soft_sparse_position_sweep(ibWorld* w, ibSoftStore* ss, double h);
void ib_soft_sparse_position_end(ibWorld* w, ibSoftStore* ss, double h);
bool ib_soft_sparse_velocity_sweep(ibWorld* w, ibSoftStore* ss);
void ib_soft_sparse_free(ibWorld* w, ibSoftStore* ss);

#endif
