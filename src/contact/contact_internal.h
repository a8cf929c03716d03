/* Internal data of collision and resting-contact resolution (Chapter 5, digest Part V). Not installed.
 *
 * Per step (Part VI §21): ib_contacts_collide() takes the contact set of collision detection at t0
 * (src/collision/collision_world.h), turns every manifold point into an ibContactRow, classifies
 * it (eq. 5.1), resolves the collisions (§5.2, contact_collide.c) and marks the remaining
 * non-separating points as contact joints for this step (§5.3, contact_joint.c). The contact joints
 * are corrected after the joint correction, interleaved with joint sweeps (§5.4.2), and their static
 * friction once more at t0+h. The next step detects again; only the resting points survive the step,
 * as compact records for its warm start and static-friction anchors (cs->prev, ib_contacts_keep).
 *
 * Conventions (digest §0.5): point a on body 1, b on body 2, normal n towards body 1,
 * u_rel = u_a - u_b (u_rel·n < 0: approaching); impulses +p at a, -p at b. */
#ifndef IBDYN_SRC_CONTACT_INTERNAL_H
#define IBDYN_SRC_CONTACT_INTERNAL_H

#include "dynamics/world.h"
#include "math/fminmax.h"

/* a body's pose (principal frame) */
typedef struct ibContactPose {
	ibVec3 s;
	ibQuat q;
} ibContactPose;

typedef enum ibContactKind {
	IB_CONTACT_SEPARATING = 0,
	IB_CONTACT_RESTING = 1,
	IB_CONTACT_COLLIDING = 2,
} ibContactKind;

typedef struct ibContactRow {
	int32_t b1, b2;     /* body indices: b1 = first body (normal towards it) */
	ibVec3 a, b, n;     /* world points on body 1 / body 2 and unit normal at t0 */
	int32_t s1, s2;     /* shape indices (matching points of consecutive steps) */
	ibVec3 la, lb;      /* a, b in the principal frames of body 1 / body 2 (prediction) */
	ibVec3 ta, tb;      /* static-friction anchors in the same frames: la, lb of the step in which the
	                     * point started sticking (kept while it sticks, so residuals do not add up) */
	ibVec3 ln;          /* n in the principal frame of the body it rotates with (nBody) */
	int nBody;          /* 1 or 2: the normal rotates with this body ([R] digest §18.1); 3: the line of the two
	                     * round cores lc1 - lc2 (two spheres or capsules); 4: of core lc1 and carried point lb,
	                     * 5: of la and lc2 (a sphere on a box's edge); 6 / 7: of the cores across the axis of
	                     * a cylinder on body 2 / 1 (a sphere on its side); 8: of the cores across the axis of
	                     * body 2 (two cylinders side by side, parallel axes); 9: n at t0, held for the step
	                     * (two cylinders crossing: across both axes); 10 / 11: from the nearest point of a cylinder's rim on body 2 / 1
	                     * (centre lc, axis ax, radius rad) to the other's round core (a sphere on a rim);
	                     * contact_round.c normal_body */
	double e, mus, mud; /* mixed restitution and friction coefficients */
	ibMat3 K;           /* K_aa(body 1) + K_bb(body 2) at t0 (eq. 5.5) */
	double nKn;         /* n^T K n */
	double target;      /* collision: target normal velocity (eq. 5.2; 0 for Poisson's compression) */
	double accN;        /* accumulated normal impulse along n (>= 0, eq. 5.6) */
	ibVec3 accT;        /* accumulated friction impulse */
	double accVN;       /* normal impulse of the velocity correction at t0+h (>= 0) */
	double gap;         /* last predicted gap (a' - b')·n' (m); < 0 penetration */
	double allowN, allowT; /* penetration / static-friction offset allowed to remain at t0+h (recovery speed) */
	uint8_t kind;       /* ibContactKind */
	uint8_t lift;       /* separating at t0, but slower than the step's gravity can turn round (contact_collide.c):
	                     * a contact joint all the same (1); 2 = idle in this velocity loop (apart at t0+h without
	                     * a position impulse) */
	uint8_t spec;       /* speculative point (contact_speculative.c): apart by more than eps_c at t0; never a
	                     * collision, a contact joint only where it closes; 2 = idle in this velocity loop;
	                     * 3 = of an approaching pair: a collision only to the approach that closes its gap in h */
	bool sticking;      /* static friction (eq. 5.10) */
	uint8_t kj;         /* K (and nKn) is the joint system's response K_eff of this loop (contact_joint_response.c) */
	double rad1, rad2;  /* radius of a round point on body 1 / 2 (sphere, capsule, cylinder's side or rim; 0: a
	                     * carried material point): the point is its core point lc1 / lc2 (principal frame) moved
	                     * by the radius along n, or along n's part across the cylinder axis ax1 / ax2 (principal
	                     * frame; 0 for spheres and capsules); contact_round.c round_point */
	ibVec3 lc1, lc2;
	ibVec3 ax1, ax2;
	int32_t level;      /* contact-graph level: min of its bodies' levels (contact_graph.c) */
	uint8_t frozen;     /* shock propagation: 1 or 2 = that body is frozen (K, nKn swapped) */
	ibMat3 Ksave;
	double nKnSave;
	ibMat3 Kinv;        /* K^-1 while kinv == 1 (0: not computed for this K, 2: singular; IB_KINV_STALE: K and nKn
	                     * not formed yet at the present points, ib_contact_need_K) */
	uint8_t kinv;
	uint8_t carried;    /* 1: a, b, n carried to other poses than the build's (the velocity loop's t0+h; a
	                     * time-of-contact re-simulation runs the loops again on the same rows from t0) */
	uint32_t key;       /* feature key of the manifold point (0 = unknown) */
	int16_t gIdx, gCount; /* index of the point in its manifold's group (consecutive rows) and the group's size */
	bool patchOk;       /* first row of a group: the group was solved as one block in this sweep (contact_patch.c) */
	uint8_t coneHits;   /* position loop: sweeps in a row that held its static friction at the cone's boundary */
	uint8_t anchorsKept; /* ib_contacts_inherit_anchors took ta, tb from last step's record cs->prev[warm] */
	int16_t anchorsChecked; /* m > 0: consistent_anchors (contact_keep.c) checked the anchors of this point's group,
	                         * m sticking points, in this step */
	int32_t warm;       /* the same point in last step's set (cs->prev), -1 if none */
	double wN, wVN;     /* this step's normal impulses of the position / velocity loop (next warm start) */
	ibVec3 wT, wVT;     /* and their friction impulses */
	double twoN, twoVN; /* accN, accVN and accT when the shock-propagation pass began (or at the end without */
	ibVec3 twoT;        /* one): the part applied to both bodies, which alone may warm-start the next step */
} ibContactRow;

/* A point of last step's resting set (cs->prev, ib_contacts_keep): only what is read of it, copied
 * from its ibContactRow. Grouping by manifold (ib_contacts_keep): s1, s2, n; the group's net wrench
 * (contact_warm.c): a, n, mus, sticking and the impulses wN, wVN, wT, wVT, which it rewrites; matching
 * and anchors (contact_keep.c): s1, s2, la, key, sticking, ta, tb; the warm start (contact_joint.c):
 * the impulses. */
typedef struct ibContactPrev {
	ibVec3 a, n, la, ta, tb;
	ibVec3 wT, wVT;
	double wN, wVN, mus;
	int32_t s1, s2;
	uint32_t key;
	int32_t anchorTag;  /* the group's anchors were checked (consistent_anchors) with anchorM sticking points: */
	int16_t anchorM;    /* the index of the group's first record, else -1 and 0 */
	bool sticking;
} ibContactPrev;

/* ib_contacts_run's masked sweeps: a point in sweep order, compact (the scan reads only these) */
typedef struct ibContactMaskRow {
	int32_t b1, b2;
	int32_t seen; /* evaluation at which the point was last iterated (0 = not yet) */
	int32_t quiet; /* 1 = it was within its tolerance then */
} ibContactMaskRow;

/* systems of the direct solve: one per loop (position, velocity) and active-set pass (contact_direct.c) */
enum { IB_CONTACT_DIRECT_SYSTEMS = 6 };

typedef struct ibContactStore {
	ibContactRow* pts;
	int32_t count, capacity;
	ibContactPrev* prev; /* last step's resting points (anchors, warm start), grouped by shape pair */
	int32_t prevCount, prevCapacity;
	int32_t* prevHash;  /* open addressing: shape pair -> index of its first point in prev (-1 empty) */
	int32_t prevHashCapacity; /* power of two */
	double prevH;       /* step length of the position loop that produced prev's impulses */
	double lastH;       /* step length of this step's position loop */
	bool positionStalled; /* the last position loop ended with points still outside their tolerance */
	uint8_t* jointed;   /* per body: 1 = dynamic body of a basic joint (ib_contacts_mark_jointed) */
	int32_t jointedCapacity;
	uint8_t* touched;   /* per body: 1 = a body of a point that became a joint after a stalled position loop */
	int32_t touchedCapacity;
	int32_t restingCount;
	double sweepMax2; /* largest |impulse|^2 applied since ib_contacts_run last reset it (stall detection) */
	/* predicted poses at t0+h of the bodies (indexed like w->bodies), valid while ver == velVersion */
	ibVec3* predS;
	ibMat3* predR;
	uint32_t* predVer;
	/* the last exact prediction of each body (base of the linearised updates) and its velocities */
	ibVec3 *baseS, *baseV, *baseW;
	ibMat3* baseR;
	/* baseOk 2: a torque-free body of equal principal moments, predicted as exp(h w) R0; baseJ is the left
	 * Jacobian of exp at h baseW (contact_predict.c, predict_linear) */
	ibMat3* baseJ;
	uint8_t* baseOk;
	double* baseWLen; /* |baseW| */
	/* a linearised prediction as the frame (predS, predT, baseR): R' = E(predT) baseR, E(t) = I + [t]x + [t]x^2 / 2;
	 * predR holds R' where predRok (computed on demand: the contact points are found from the frame) */
	ibVec3* predT;
	uint8_t* predRok;
	int32_t predCapacity;
	double predH;
	/* contact graph (contact_graph.c), grow-only */
	int32_t *level, *queue, *adjStart, *adj, *order, *levelStart;
	int32_t levelCapacity, queueCapacity, adjStartCapacity, adjCapacity, orderCapacity, levelStartCapacity;
	int32_t levelCount; /* 0 = no graph this step */
	/* ib_contacts_run: per body, the evaluation at which a point of it last moved (grow-only) */
	int32_t* bodyMoved;
	int32_t bodyMovedCapacity;
	/* the bodies' poses when the set was built (ib_contacts_collide): a row's K is of these poses until a
	 * loop carries its points to others (contact_joint.c carry_points) */
	ibContactPose* built;
	int32_t builtCapacity;
	/* per body: impulse sum and its moment about the centre of mass, 2 per body (ib_contacts_sum_*) */
	ibVec3* sum;
	int32_t sumCapacity;
	ibContactMaskRow* maskRows;
	int32_t maskRowsCapacity;
	int32_t* active; /* ib_contacts_run: the points of the loop's kind, in sweep order */
	int32_t activeCapacity;
	int32_t* islandBody; /* ib_contacts_run per island: per body its union-find parent and island label, per island
	                      * the count and start of its points and bodies, and the bodies grouped by island */
	int32_t islandBodyCapacity;
	int32_t* islandPts; /* the active points grouped by island, then each active point's island */
	int32_t islandPtsCapacity;
	/* ib_contacts_run with keepBest: body velocities (v, w) and the active points' accN, accVN, accT at the
	 * sweep with the least kinetic energy, grow-only */
	ibVec3* bestVel;
	int32_t bestVelCapacity;
	double* bestAcc;
	int32_t bestAccCapacity;
	bool bestRestored; /* the last ib_contacts_run went back to its best sweep */
	bool startRestored; /* the last ib_contacts_run (a position loop) diverged and went back to its start */
	/* contact_patch.c: Cholesky factor of each group's 6x6 response with what it was formed from (IB_PATCH_ENTRY
	 * doubles, indexed by its first row), grow-only */
	double* patchL;
	uint8_t* patchOk;   /* 1 = factor valid for this velocity loop, 2 = not positive definite */
	int32_t patchCapacity;
	/* last step's factors by the index of their first row in cs->prev (ib_contact_patch_keep), grow-only */
	double* patchPrev;
	uint8_t* patchPrevOk;
	int32_t patchPrevCapacity;
	/* speculative points of approaching pairs (contact_speculative.c): motion bounds, grow-only */
	double* motion;
	int32_t motionCapacity;
	/* the pairs whose speculative region was queried in this (sub-)step: shapes s1, s2 and their rows' ranges
	 * (first, last, the region's own rows from, to), IB_END_PAIR ints each (ib_contacts_end_regions) */
	int32_t* endPairs;
	int32_t endPairCount, endPairCapacity;
	/* contact_anchors.c: per-body and per-row integers and the dense fit's matrix, grow-only */
	int32_t* fitInt;
	int32_t fitIntCapacity;
	double* fitDbl;
	int32_t fitDblCapacity;
	struct ibContactDirect* direct[IB_CONTACT_DIRECT_SYSTEMS]; /* contact_direct.c: systems of the direct solve (NULL until used) */
	struct ibContactDirectScratch* directScratch; /* contact_direct.c: their shared per-call arrays */
	struct ibContactJointResponse* jointResponse; /* contact_joint_response.c: probe scratch (NULL until used) */
} ibContactStore;

/* One of the iterative loops (collisions, contact joints, their velocity correction): point() does one
 * iteration at one point and returns true if it was outside its tolerance; extra() is the joint sweep. */
typedef struct ibContactLoop {
	bool (*point)(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx);
	bool (*extra)(ibWorld* w, void* ctx);
	void* ctx;
	int cap;  /* sweep cap */
	int kind; /* ibContactKind of the points the loop iterates: point() returns false for the others
	           * without side effects, so the sweeps skip them */
	double* residual; /* if set, zeroed before each sweep: point() records the sweep's largest error there */
	double keepBest;  /* > 0: a loop that ends not converged with more than keepBest times the least kinetic energy
	                   * after a sweep goes back to that sweep (ib_contacts_run; inelastic loops with K_eff points) */
} ibContactLoop;

/* contact_graph.c */
bool ib_contacts_graph(ibWorld* w, ibContactStore* cs);
/* the accumulated impulses so far as the part applied to both bodies (twoN, twoVN, twoT): the next
 * step's warm start (ib_contacts_run does it before its shock-propagation pass) */
void ib_contacts_mark_both(ibContactStore* cs);
/* Sweeps in contact-graph order until no point moves or the cap; shock propagation pass after
 * shockIterations sweeps. Returns the sweeps done; *moved: still outside tolerance at the end. */
int ib_contacts_run(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, bool* moved);
/* The same over the points of the loop's kind at a marked body (mark[body] != 0) only */
int ib_contacts_run_marked(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, const uint8_t* mark, bool* moved);

/* the velocity of the material point at p of body b */
static inline ibVec3 ib_contact_point_velocity(const ibBody* b, ibVec3 p) { return ibAdd(b->st.v, ibCross(b->st.w, ibSub(p, b->st.s))); }
/* the static-friction anchors of c (ta on body 1, tb on body 2) in the world at the bodies' present poses */
static inline void ib_contact_anchors_now(const ibWorld* w, const ibContactRow* c, ibVec3* A, ibVec3* B)
{
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	*A = ibAdd(x->st.s, ibMat3_MulV(x->R, c->ta));
	*B = ibAdd(y->st.s, ibMat3_MulV(y->R, c->tb));
}
/* body 2's anchor of c (now at the world point B) moved by -r: the part r of the anchors' offset that a rigid fit
 * does not explain dropped (contact_keep.c consistent_anchors, contact_anchors.c) */
static inline void ib_contact_drop_anchor_offset(const ibWorld* w, ibContactRow* c, ibVec3 B, ibVec3 r)
{
	const ibBody* y = &w->bodies[c->b2];
	c->tb = ibMat3_MulTV(y->R, ibSub(ibSub(B, r), y->st.s));
}

/* n without its part along a cylinder's axis (principal frame ax, 0 for spheres and capsules), normalised:
 * the direction from the core to the round point */
static inline ibVec3 ib_contact_radial(const ibMat3* R, ibVec3 ax, ibVec3 n)
{
	if (ax.x == 0.0 && ax.y == 0.0 && ax.z == 0.0) return n;
	ibVec3 z = ibMat3_MulV(*R, ax);
	ibVec3 u = ibMulAdd(n, -ibDot(n, z), z);
	double l = ibLength(u);
	return l > 1e-6 ? ibScale(1.0 / l, u) : n;
}

/* a round point at pose (s, R): its core lc moved by r along n's radial direction (r < 0 on body 1, whose
 * outward normal is -n) */
static inline ibVec3 ib_contact_round_at(ibVec3 s, const ibMat3* R, ibVec3 lc, double r, ibVec3 ax, ibVec3 n)
{
	return ibMulAdd(ibAdd(s, ibMat3_MulV(*R, lc)), r, ib_contact_radial(R, ax, n));
}

/* contact_set.c */
ibContactStore* ib_contact_store(ibWorld* w, bool create);
/* Contact points from the collision detection's contact set at the current poses; false on OOM. */
bool ib_contacts_build(ibWorld* w, ibContactStore* cs);
/* The points of one manifold (a pair of the contact set or a speculative one); false on OOM. */
struct ibContactPair;
bool ib_contacts_add_pair(ibWorld* w, ibContactStore* cs, const struct ibContactPair* pr);
double ib_contact_resting_speed(const ibWorld* w); /* eps_rc */
/* cs->jointed: 1 for the dynamic bodies of basic joints (per body); false if out of memory */
bool ib_contacts_mark_jointed(ibWorld* w, ibContactStore* cs);
/* Matches the points to last step's (warm, anchors of sticking points); call after classification. */
void ib_contacts_inherit_anchors(ibWorld* w, ibContactStore* cs);
void ib_contacts_keep(ibWorld* w, ibContactStore* cs);
/* contact_anchors.c: the sticking points' anchors of each island whose contact pairs form a cycle made consistent
 * with one small rigid motion of its dynamic bodies (least squares; the rest of their offsets dropped) */
void ib_contacts_island_anchors(ibWorld* w, ibContactStore* cs);
/* contact_warm.c: the kept impulses of the m points of one manifold (cs->prev) reduced to its net
 * force, spread over the points (uniform normal loads on a resting face unless keepLoads, friction
 * proportional to the loads) */
void ib_contacts_balance_warm(ibContactPrev* g, int32_t m, bool keepLoads);
ibVec3 ib_contact_rel_velocity(const ibWorld* w, const ibContactRow* c);
void ib_contact_apply(ibWorld* w, const ibContactRow* c, ibVec3 p);
/* the left Jacobian of exp on SO(3) at the rotation vector t: exp(t + d) = exp(J_l(t) d) exp(t) + O(|d|^2) */
ibMat3 ib_contact_left_jacobian(ibVec3 t);
/* p1 + p2 as one impulse; the stall measure (sweepMax2) sees |p1| and |p2| as two impulses */
void ib_contact_apply2(ibWorld* w, const ibContactRow* c, ibVec3 p1, ibVec3 p2);
/* K_aa + K_bb at given world points (zero blocks for non-dynamic bodies) */
ibMat3 ib_contact_response(const ibWorld* w, int32_t b1, ibVec3 a, int32_t b2, ibVec3 b);
/* contact_joint_response.c (§5.4.2): K (and nKn) of every resting point (and colliding point if
 * colliding) of a jointed body replaced by the joint system's response K_eff at the current poses
 * (ibContactSettings.jointResponse); sets the points' kj. Body velocities are left as they were. */
void ib_contacts_joint_response(ibWorld* w, ibContactStore* cs, bool colliding);
/* Sets rad1/2, lc1/2, ax1/2 of a row whose a, b, n, gap, shapes and bodies are set (round points of
 * spheres, capsules, cylinders: contact_round.c round_point), moves a / b onto the round surface and the
 * gap with them. true if either side is round. */
bool ib_contact_set_round(const ibWorld* w, ibContactRow* c);
/* Sets nBody and ln of a row whose bodies, shapes, points (a, b, la, lb), n and round points are set:
 * what its normal turns with (contact_round.c normal_body). */
void ib_contact_set_normal(const ibWorld* w, ibContactRow* c);
/* A rim sample of a cylinder (support_feature.c: carried points of the rim) in the end plane of a round point
 * of rows first .. last-1 of the same pair: that round point is the rim's deepest point at every pose, and the
 * sample a few degrees from it only doubles it. Without this, a cylinder rolling at 0.05 m/s on its side
 * rocked from rim to rim (the warm start gave the sample the round point's impulse), and at 2 m/s the
 * speculative samples ahead of the roll braked it (their sliding friction) and it sank by 0.5 mm. Also any
 * other point of a cylinder whose side (n across its axis) has a round point among those rows: carried with a
 * cylinder spinning about its axis beside another one, such points pushed the two apart (session 19). */
bool ib_contact_rim_sample(const ibWorld* w, const ibContactStore* cs, int32_t first, int32_t last, const ibContactRow* c);
/* [IMPL] A disc that can turn through lying flat within the step: if c is a round point of a cylinder's rim on a
 * flat face (a box or hull face, a cylinder's end face, a plane) and the rim's point across the end face is
 * within reach (m) above the face's plane beyond c, c becomes the carried material point it is at t0, and f the
 * rim's material points at 180 and +-90 degrees from it whose partners along n lie on the face (bodies,
 * materials and normal as c; not yet speculative: the caller's); returns their number (0 ... 3), or -1 and c is
 * unchanged. The round point is the rim's deepest point at the predicted pose: of a disc turning through flat
 * it jumped to the far side, where its response K (of the near side at t0) had the wrong sign, and the disc
 * was corrected further over from sweep to sweep (the built-in scene's disc at h = 0.005 s gained 2.1e4 J in
 * one step). */
int ib_contact_flat_rim(const ibWorld* w, ibContactRow* c, double reach, ibContactRow f[3]);
/* contact_predict.c: the predicted points a', b' and normal n' of contact joint c after h, as the position loop and
 * the direct solve measure them: at the predicted poses of its bodies (ib_contact_predicted), or, while one of
 * its dynamic bodies turns by more than maxRotationPerStep in h at its current angular velocity, to first order:
 * a + h u_a, b + h u_b (u: the velocities of the material points at t0) and n at t0. [IMPL] A body turning by a
 * large angle in the step (a light hull or a box spun up by an impact, or by the loop itself) moved its
 * predicted point and normal so far from t0's that K at t0 no longer described them (the predicted gap's
 * response shrank and changed sign from sweep to sweep): the position loop diverged to NaN or left the bodies
 * with thousands of J. To first order the gap is linear in the impulses, with the response K. */
void ib_contact_predicted_points(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* a, ibVec3* b, ibVec3* n);
/* ... and the static-friction offset of its anchors there (b's anchor - a's anchor, not yet tangential), n' in *n */
ibVec3 ib_contact_predicted_anchors(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* n);
/* both of the above from one evaluation of the poses and the normal (the same values) */
ibVec3 ib_contact_predicted_both(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* a, ibVec3* b, ibVec3* n);
/* contact_predict.c: the points of c for bodies at poses (s1, R1), (s2, R2) and the normal n there: carried
 * material points, but a round point found again on its surface along n (a rolling sphere's carried point
 * rose by r (1 - cos wh) in a step and hid its penetration) */
void ib_contact_points_at(const ibContactRow* c, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2, ibVec3 n, ibVec3* a, ibVec3* b);
/* the static-friction offset (b anchor - a anchor, not yet tangential) predicted at (s1, R1), (s2, R2) after h;
 * on a round side the anchor's motion linearised in the body's current w (rolling without slip keeps it) */
ibVec3 ib_contact_anchor_offset(const ibWorld* w, const ibContactRow* c, double h, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2);
/* a point's accumulated impulses and relative velocity before its correction (ib_contact_follow_checked) */
typedef struct ibContactAcc {
	double accN, accVN;
	ibVec3 accT, u;
} ibContactAcc;
static inline ibContactAcc ib_contact_acc(const ibWorld* w, const ibContactRow* c)
{
	return (ibContactAcc){c->accN, c->accVN, c->accT, ib_contact_rel_velocity(w, c)};
}
/* after an impulse at a point with K_eff (its accumulated impulses were *before): the joints' velocity sweeps
 * until they hold, at most IB_CONTACT_JOINT_SWEEPS (K_eff assumes they follow at once), the impulse scaled back
 * where the joints' response to it exceeded twice what K_eff predicted (a limit row let go); then, if position,
 * position sweeps at h */
void ib_contact_follow_checked(ibWorld* w, ibContactRow* c, const ibContactAcc* before, double h, bool position);
/* point(w, cs, c, ctx) of a velocity-level loop, then, if it applied an impulse, the joints' velocity
 * sweeps (ib_contact_follow_checked); returns point's result */
bool ib_contact_point_followed(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx,
                               bool (*point)(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx));
enum { IB_CONTACT_JOINT_SWEEPS = 100 };
void ib_contact_joint_response_destroy(ibWorld* w, ibContactStore* cs);
/* Predicted pose of body i after a free step h (cached per velocity version). */
void ib_contact_predicted(ibWorld* w, ibContactStore* cs, int32_t i, double h, ibVec3* s, ibMat3* R);
void ib_contact_invalidate_prediction(ibWorld* w, ibContactStore* cs, double h);
/* the prediction's per-body arrays grown to the world's bodies; false if out of memory */
bool ib_contact_grow_prediction(ibWorld* w, ibContactStore* cs);
/* frees the prediction's per-body arrays (pointers and predCapacity left for the caller to replace) */
void ib_contact_free_prediction(ibWorld* w, ibContactStore* cs);
/* Impulses of many points applied as one impulse and moment per body (a warm start: each point's impulse
 * otherwise updated both bodies' velocities): begin (false: out of memory, apply them singly), add with
 * ib_contact_apply's semantics (+p at a on body 1, -p at b on body 2, frozen sides left out), flush. */
bool ib_contacts_sum_begin(ibWorld* w, ibContactStore* cs);
/* impulses p[i] at the rows g[0..m-1] of one manifold (the same two bodies, none frozen), as one impulse and
 * moment per body */
void ib_contact_apply_group(ibWorld* w, const ibContactRow* g, int m, const ibVec3* p);
void ib_contacts_sum_add(ibWorld* w, ibContactStore* cs, const ibContactRow* c, ibVec3 p);
void ib_contacts_sum_flush(ibWorld* w, ibContactStore* cs);
/* records the bodies' poses of a freshly built set (cs->built); false if out of memory */
bool ib_contacts_note_poses(ibWorld* w, ibContactStore* cs);
/* both bodies of c are still at the poses of ib_contacts_note_poses */
static inline bool ib_contact_at_built_poses(const ibWorld* w, const ibContactStore* cs, const ibContactRow* c)
{
	const int32_t i[2] = {c->b1, c->b2};
	for (int k = 0; k < 2; ++k) {
		const ibBody* b = &w->bodies[i[k]];
		if (i[k] >= cs->builtCapacity) return false;
		const ibContactPose* p = &cs->built[i[k]];
		if (b->st.s.x != p->s.x || b->st.s.y != p->s.y || b->st.s.z != p->s.z || b->st.q.w != p->q.w ||
		    b->st.q.x != p->q.x || b->st.q.y != p->q.y || b->st.q.z != p->q.z)
			return false;
	}
	return true;
}

/* [IMPL] The velocity loop at t0+h forms a point's K (and nKn) where it is first read, not when its points are
 * carried: face contacts solved as blocks (contact_patch.c) and the direct solve never read it (pyramid20: ~2.5 %
 * of a step's instructions). The points and normal do not change in between: the same K as formed at once. */
#define IB_KINV_STALE 3
static inline void ib_contact_need_K(const ibWorld* w, ibContactRow* c)
{
	if (c->kinv != IB_KINV_STALE) return;
	c->K = ib_contact_response(w, c->b1, c->a, c->b2, c->b);
	c->kinv = 0;
	double nKn = ibDot(c->n, ibMat3_MulV(c->K, c->n));
	if (nKn > 0.0) c->nKn = nKn;
}

/* contact_patch.c: the rows g[0..m-1] of one manifold, all sticking, as one 6-dof block in the velocity
 * correction; false (nothing applied) if the block is not admissible, then the points are iterated singly. */
#define IB_CONTACT_PATCH_MAX 8
bool ib_contact_patch_velocity(ibWorld* w, ibContactStore* cs, ibContactRow* g, int m, double tol, bool* moved);
/* room for n records of last step's factors, none kept yet (false: out of memory, none can be kept) */
bool ib_contact_patch_keep_begin(ibWorld* w, ibContactStore* cs, int32_t n);
/* keeps the factor of row k's group (if k heads one with a valid factor) as last step's for cs->prev[j] */
void ib_contact_patch_keep(ibContactStore* cs, int32_t k, int32_t j);
/* Geometry of a face patch (points *g[0..m-1], 3 <= m <= IB_CONTACT_PATCH_MAX): centre c, plane basis,
 * tangential offsets r_i from c, second moments; false if the points are (nearly) collinear. */
typedef struct ibPatchGeom {
	ibVec3 n, c, t1, t2;
	ibVec3 r[IB_CONTACT_PATCH_MAX];
	double sxx, sxy, syy, det;
	int m;
} ibPatchGeom;
bool ib_contact_patch_geometry(const ibContactRow* const* g, int m, double minSpread, ibPatchGeom* pg);
/* The points' loads N_i (normal) and T_i (friction) of the patch wrench (F, M about c): least-squares
 * normal loads (moved into the points' hull when one is negative) and friction proportional to them.
 * 1 = admissible (N_i >= 0, |T_i| <= mu_s N_i), 0 = computed but not admissible, -1 = none. */
int ib_contact_patch_loads(const ibContactRow* const* g, const ibPatchGeom* pg, ibVec3 F, ibVec3 M, double* N, ibVec3* T);
/* before a velocity loop: grows the factor cache and invalidates it; false on OOM (no block solves then) */
bool ib_contact_patch_begin(ibWorld* w, ibContactStore* cs);
void ib_contact_patch_destroy(ibWorld* w, ibContactStore* cs);
/* contact_direct.c ([IMPL], docs/contacts.md): before the sweeps of a contact-joint loop, one sparse
 * linear system over the resting points (sticking face patches as 6-dof blocks, sticking points as
 * 3-dof, frictionless points 1-dof normal; sliding points are left to the sweeps), iterated with one factorisation until the predicted errors
 * (position) or relative velocities (velocity) are within tolerance; its impulses are distributed to
 * the points, projected onto their cones and left to the sweeps as a starting iterate. HELD: every
 * resting point is one the system would hold, and all are within DIR_HELD (2 %) of the tolerance
 * already (the warm start holds): nothing was solved, and a sweep would only confirm it. NONE: nothing
 * was solved (within a tenth of the tolerance, or the system could not help). */
typedef enum ibDirectResult { IB_DIRECT_NONE, IB_DIRECT_SOLVED, IB_DIRECT_HELD } ibDirectResult;
ibDirectResult ib_contacts_direct(ibWorld* w, ibContactStore* cs, double h, bool velocity);
void ib_contacts_direct_destroy(ibWorld* w, ibContactStore* cs);
/* contact_speculative.c: appends the speculative points of the touching pairs (rows 0..n0-1, those of
 * ib_contacts_build), and in a sub-step no time-of-contact test checks those of approaching pairs */
bool ib_contacts_speculative(ibWorld* w, ibContactStore* cs, double h, int32_t n0);
/* in a sub-step the time-of-contact test checks: the speculative points (spec = 3) of the approaching
 * slow inelastic pairs, before the collisions, which stop their approach at the contact */
bool ib_contacts_speculative_near(ibWorld* w, ibContactStore* cs, double h);
enum { IB_END_PAIR = 6 };
/* c becomes a lifting contact joint (contact_collide.c) without impulses yet: found after a position loop
 * (contact_joint.c, a separating point that closes; ib_contacts_end_regions, a new point) */
static inline void ib_contact_make_lifting(ibContactStore* cs, ibContactRow* c)
{
	c->kind = IB_CONTACT_RESTING;
	c->lift = 1;
	c->sticking = false;
	c->warm = -1;
	c->kj = 0;
	c->accN = c->accVN = 0.0;
	c->accT = IB_VEC3_ZERO;
	c->allowT = 0.0;
	c->coneHits = 0;
	c->twoN = c->twoVN = 0.0;
	c->twoT = IB_VEC3_ZERO;
	cs->restingCount++;
}
/* After a position loop: the speculative pairs' regions at their predicted poses at t0+h; a point deeper than
 * eps that no row of the pair covers (its own rows, and the rows appended since row `since`) becomes a lifting
 * contact joint (appended). Returns the number added, -1 when out of memory. */
int32_t ib_contacts_end_regions(ibWorld* w, ibContactStore* cs, double h, double eps, int32_t since);
/* Restitution of a shape pair under the world's mixing rule, clamped to [0, 1]. */
double ib_contact_pair_restitution(const ibWorld* w, const ibShape* a, const ibShape* b);

/* contact_collide.c: collision loop (§5.2) with friction (§5.2.5) */
void ib_contacts_resolve_collisions(ibWorld* w, ibContactStore* cs, double h);

/* friction impulse of one iteration (§5.2.5, used by collisions and dynamic friction of contact
 * joints): dN = this iteration's normal impulse; true if an impulse was applied or the state changed */
bool ib_contact_friction_velocity(ibWorld* w, ibContactRow* c, double dN, double tol);
/* the same with the normal impulse pN not yet applied (of a point with friction): applies pN with the
 * friction; u: the point's relative velocity before pN if the caller has it, else NULL */
bool ib_contact_friction_velocity_pending(ibWorld* w, ibContactRow* c, double dN, double tol, ibVec3 pN, const ibVec3* u);
bool ib_contact_friction_velocity_followed(ibWorld* w, ibContactRow* c, double dN, double tol, ibVec3 u); /* K_eff points */
/* a sliding point with friction, on no frozen body: its normal impulse is applied together with its
 * friction (ib_contact_friction_velocity_pending), one update per body */
static inline bool ib_contact_defers_normal(const ibContactRow* c)
{
	return (c->mus > 0.0 || c->mud > 0.0) && !c->sticking && c->frozen == 0;
}

/* [IMPL] Speed (m/s) at which a contact joint removes an error that exists at t0 (a penetration, an
 * offset from its static-friction anchors): at most IB_CONTACT_RECOVERY_SPEED * h per (sub-)step. */
#define IB_CONTACT_RECOVERY_SPEED 1.0
/* [IMPL] A resting point that slides slower than this times eps_rc may be held as sticking (its cone then
 * decides whether it holds): the direct solve's stickable points, and the classification at t0 of the
 * iterative method (contact_collide.c). */
#define IB_CONTACT_STICK_SPEED 0.01
/* [IMPL] sweeps in a row of the contact position loop after which a sticking point held at its friction
 * cone's boundary slides (contact_joint.c, correct_point): below the stall window (stallSweeps, 50 by
 * default), so that it acts only in loops that were about to stall. At 3 the standing 28-stone wall of
 * test_contact_wall (iterative method, warm start) kept 3.3e-6 J of motion after 200 steps (bound 1e-6 J);
 * at 10, 20 and 40 it came to 1.3e-10, 2.0e-10 and 7.8e-11 J (5.9e-10 J without the rule); at 20 ragdoll
 * seed 8 of test_contact_ragdoll ended one of its last 60 steps unconverged (0 at 10 and 40). The rocking
 * dumbbell of test_contact_rolling ended 8 of 200 steps unconverged at each (98 without the rule). */
#define IB_CONTACT_CONE_SWEEPS 40

static inline ibVec3 ib_contact_tangential(ibVec3 v, ibVec3 n) { return ibMulAdd(v, -ibDot(v, n), n); }

/* The normal n' of a row at poses (s1, R1), (s2, R2) of its bodies (nBody) */
static inline ibVec3 ib_contact_normal_at(const ibContactRow* c, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2)
{
	/* [IMPL] crossing axes: the normal at t0 (across both axes) for the whole step. z1 x z2 at the predicted
	 * poses (sessions 19-29) turned with both cylinders: a cylinder turning at 10-20 rad/s about the vertical
	 * on a lying one it crosses made the position loops diverge (frictionless, test_crossed_cylinders_turning:
	 * 5 of 6 runs gained, up to 122 J; 1.2e5 J in one step on a smaller ground), as did two spinning cylinders wedged in a mesh valley
	 * (+1.8 kJ, +21 kJ) and, through the velocity loop at t0+h, a cylinder on another on the ground with
	 * friction (test_contact_drops' seed 3498 at 60 Hz, +3.6 kJ); the fixed normal gains nothing there and
	 * holds test_crossed_cylinders_spinning as before */
	if (c->nBody == 9) return c->n;
	if (c->nBody >= 3) {
		ibVec3 p1 = ibMat3_MulV(*R1, c->nBody == 5 ? c->la : c->lc1), p2 = ibMat3_MulV(*R2, c->nBody == 4 ? c->lb : c->lc2);
		ibVec3 d = ibSub(ibAdd(s1, p1), ibAdd(s2, p2));
		if (c->nBody >= 10) { /* from a cylinder's rim (the nearest point of its circle) to a round core */
			bool rim2 = c->nBody == 10;
			ibVec3 z = rim2 ? ibMat3_MulV(*R2, c->ax2) : ibMat3_MulV(*R1, c->ax1);
			ibVec3 r = rim2 ? d : ibNeg(d); /* from the rim's centre to the core */
			ibVec3 u = ibMulAdd(r, -ibDot(r, z), z);
			double lu = ibLength(u), rad = rim2 ? c->rad2 : c->rad1;
			if (!(lu > rad)) return ibMat3_MulV(*R2, c->ln); /* the core inside the rim's radius: as at t0 */
			r = ibMulAdd(r, -rad / lu, u);
			d = rim2 ? r : ibNeg(r);
		} else if (c->nBody >= 6) { /* across a cylinder's axis */
			ibVec3 z = c->nBody == 7 ? ibMat3_MulV(*R1, c->ax1) : ibMat3_MulV(*R2, c->ax2);
			d = ibMulAdd(d, -ibDot(d, z), z);
		}
		double l = ibLength(d);
		if (l > 1e-12) return ibScale(1.0 / l, d);
	}
	return ibMat3_MulV(c->nBody == 1 || c->nBody == 4 ? *R1 : *R2, c->ln);
}

#endif
