/* Contact points of a step: from the collision detection's contact set to ibContactRow with
 * mixed materials (§5.1.3, §5.1.4), response matrices (eq. 3.9) and the predicted poses used by
 * the contact joints (eq. 5.11). */
#include <math.h>
#include <string.h>

#include "collision/collision_world.h"
#include "collision/hull.h"
#include "collision/trimesh.h"
#include "contact/contact_internal.h"
#include "dynamics/sleep.h"
#include "joints/joint_internal.h"

ibContactStore* ib_contact_store(ibWorld* w, bool create)
{
	if (!w->contactStore && create) {
		w->contactStore = ib_alloc(w, sizeof(ibContactStore));
		if (w->contactStore) memset(w->contactStore, 0, sizeof(ibContactStore));
	}
	return w->contactStore;
}

void ib_contacts_destroy(ibWorld* w)
{
	ibContactStore* cs = w->contactStore;
	if (!cs) return;
	ib_free(w, cs->pts, (size_t)cs->capacity * sizeof(ibContactRow));
	ib_free(w, cs->prev, (size_t)cs->prevCapacity * sizeof(ibContactPrev));
	ib_free(w, cs->prevHash, (size_t)cs->prevHashCapacity * sizeof(int32_t));
	ib_free(w, cs->level, (size_t)cs->levelCapacity * sizeof(int32_t));
	ib_free(w, cs->queue, (size_t)cs->queueCapacity * sizeof(int32_t));
	ib_free(w, cs->adjStart, (size_t)cs->adjStartCapacity * sizeof(int32_t));
	ib_free(w, cs->adj, (size_t)cs->adjCapacity * sizeof(int32_t));
	ib_free(w, cs->order, (size_t)cs->orderCapacity * sizeof(int32_t));
	ib_free(w, cs->levelStart, (size_t)cs->levelStartCapacity * sizeof(int32_t));
	ib_free(w, cs->bodyMoved, (size_t)cs->bodyMovedCapacity * sizeof(int32_t));
	ib_free(w, cs->built, (size_t)cs->builtCapacity * sizeof(ibContactPose));
	ib_free(w, cs->sum, (size_t)cs->sumCapacity * sizeof(ibVec3));
	ib_free(w, cs->jointed, (size_t)cs->jointedCapacity);
	ib_free(w, cs->touched, (size_t)cs->touchedCapacity);
	ib_free(w, cs->maskRows, (size_t)cs->maskRowsCapacity * sizeof(ibContactMaskRow));
	ib_free(w, cs->active, (size_t)cs->activeCapacity * sizeof(int32_t));
	ib_free(w, cs->islandBody, (size_t)cs->islandBodyCapacity * sizeof(int32_t));
	ib_free(w, cs->islandPts, (size_t)cs->islandPtsCapacity * sizeof(int32_t));
	ib_free(w, cs->bestVel, (size_t)cs->bestVelCapacity * sizeof(ibVec3));
	ib_free(w, cs->bestAcc, (size_t)cs->bestAccCapacity * sizeof(double));
	ib_free(w, cs->predS, (size_t)cs->predCapacity * sizeof(ibVec3));
	ib_free(w, cs->predR, (size_t)cs->predCapacity * sizeof(ibMat3));
	ib_free(w, cs->predVer, (size_t)cs->predCapacity * sizeof(uint32_t));
	ib_free(w, cs->baseS, (size_t)cs->predCapacity * 4 * sizeof(ibVec3));
	ib_free(w, cs->baseR, (size_t)cs->predCapacity * 2 * sizeof(ibMat3));
	ib_free(w, cs->baseOk, (size_t)cs->predCapacity * 2 * sizeof(uint8_t));
	ib_free(w, cs->baseWLen, (size_t)cs->predCapacity * sizeof(double));
	ib_contact_patch_destroy(w, cs);
	ib_contacts_direct_destroy(w, cs);
	ib_contact_joint_response_destroy(w, cs);
	ib_free(w, cs->motion, (size_t)cs->motionCapacity * sizeof(double));
	ib_free(w, cs->endPairs, (size_t)cs->endPairCapacity * sizeof(int32_t));
	ib_free(w, cs->fitInt, (size_t)cs->fitIntCapacity * sizeof(int32_t));
	ib_free(w, cs->fitDbl, (size_t)cs->fitDblCapacity * sizeof(double));
	ib_free(w, cs, sizeof *cs);
	w->contactStore = NULL;
}

static double mix(ibMixRule rule, double x, double y)
{
	switch (rule) {
	case IB_MIX_SUM: return x + y;
	case IB_MIX_MIN: return ib_fmin(x, y);
	case IB_MIX_MAX: return ib_fmax(x, y);
	case IB_MIX_MEAN: return 0.5 * (x + y);
	case IB_MIX_PRODUCT:
	default: return x * y;
	}
}

double ib_contact_pair_restitution(const ibWorld* w, const ibShape* a, const ibShape* b)
{
	return ib_fmin(1.0, ib_fmax(0.0, mix(w->solver.contact.restitutionMixing, a->material.restitution, b->material.restitution)));
}

double ib_contact_resting_speed(const ibWorld* w)
{
	const ibContactSettings* s = &w->solver.contact;
	if (s->restingSpeed > 0.0) return s->restingSpeed;
	double g = ibLength(w->gravity);
	if (!(g > 0.0)) g = 9.81; /* no gravity: the speed of a fall through eps_c under standard gravity */
	return sqrt(2.0 * g * w->collisionSettings.contactTolerance);
}

static ibMat3 point_response(const ibBody* b, ibVec3 r)
{
	if (!ib_is_dynamic(b)) return ibMat3_Zero();
	const ibVec3 P = b->invInertiaP;
	if (P.x == P.y && P.x == P.z) { /* equal principal moments (cubes, spheres): J^-1 = d E (R d E R^T to
		                             * rounding), K = E/m + d (|r|^2 E - r r^T), symmetric */
		const double d = P.x, g = b->invMass + d * ibDot(r, r);
		const double xy = -d * r.x * r.y, xz = -d * r.x * r.z, yz = -d * r.y * r.z;
		return (ibMat3){{{g - d * r.x * r.x, xy, xz}, {xy, g - d * r.y * r.y, yz}, {xz, yz, g - d * r.z * r.z}}};
	}
	/* K = E/m - [r]x J^-1 [r]x, the products of ibMat3_Mul without its terms with the zeros of [r]x (the
	 * same sums: x + 0 = x) */
	const ibMat3* J = &b->invInertiaW;
	ibMat3 T, K;
	for (int i = 0; i < 3; ++i) { /* T = J^-1 [r]x */
		T.m[i][0] = J->m[i][1] * r.z + J->m[i][2] * -r.y;
		T.m[i][1] = J->m[i][0] * -r.z + J->m[i][2] * r.x;
		T.m[i][2] = J->m[i][0] * r.y + J->m[i][1] * -r.x;
	}
	for (int j = 0; j < 3; ++j) { /* K = -[r]x T */
		K.m[0][j] = -(-r.z * T.m[1][j] + r.y * T.m[2][j]);
		K.m[1][j] = -(r.z * T.m[0][j] + -r.x * T.m[2][j]);
		K.m[2][j] = -(-r.y * T.m[0][j] + r.x * T.m[1][j]);
	}
	for (int i = 0; i < 3; ++i) K.m[i][i] += b->invMass;
	return K;
}

ibMat3 ib_contact_response(const ibWorld* w, int32_t b1, ibVec3 a, int32_t b2, ibVec3 b)
{
	const ibBody* x = &w->bodies[b1];
	const ibBody* y = &w->bodies[b2];
	return ibMat3_Add(point_response(x, ibSub(a, x->st.s)), point_response(y, ibSub(b, y->st.s)));
}

static ibVec3 point_velocity(const ibBody* b, ibVec3 p) { return ibAdd(b->st.v, ibCross(b->st.w, ibSub(p, b->st.s))); }

/* n without its part along a cylinder's axis (principal frame ax, 0 for spheres and capsules), normalised:
 * the direction from the core to the round point */
static inline ibVec3 radial(const ibMat3* R, ibVec3 ax, ibVec3 n)
{
	if (ax.x == 0.0 && ax.y == 0.0 && ax.z == 0.0) return n;
	ibVec3 z = ibMat3_MulV(*R, ax);
	ibVec3 u = ibMulAdd(n, -ibDot(n, z), z);
	double l = ibLength(u);
	return l > 1e-6 ? ibScale(1.0 / l, u) : n;
}

/* a round point at pose (s, R): its core lc moved by r along n's radial direction (r < 0 on body 1, whose
 * outward normal is -n) */
static inline ibVec3 round_at(ibVec3 s, const ibMat3* R, ibVec3 lc, double r, ibVec3 ax, ibVec3 n)
{
	return ibMulAdd(ibAdd(s, ibMat3_MulV(*R, lc)), r, radial(R, ax, n));
}

void ib_contact_points_at(const ibContactRow* c, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2, ibVec3 n, ibVec3* a, ibVec3* b)
{
	*a = c->rad1 > 0.0 ? round_at(s1, R1, c->lc1, -c->rad1, c->ax1, n) : ibAdd(s1, ibMat3_MulV(*R1, c->la));
	*b = c->rad2 > 0.0 ? round_at(s2, R2, c->lc2, c->rad2, c->ax2, n) : ibAdd(s2, ibMat3_MulV(*R2, c->lb));
}

/* A dynamic body of contact joint c turns by more than maxRotationPerStep (rad, > 0) in h at its current angular
 * velocity: decided anew at every evaluation, so that a body spun up within the loop itself is caught */
static inline bool turns_fast(const ibWorld* w, const ibContactRow* c, double h)
{
	const double th = w->solver.maxRotationPerStep;
	if (!(th > 0.0)) return false;
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	const double t2 = th * th / (h * h);
	return (ib_is_dynamic(x) && ibLengthSq(x->st.w) > t2) || (ib_is_dynamic(y) && ibLengthSq(y->st.w) > t2);
}

static void predict_body_now(ibWorld* w, ibContactStore* cs, int32_t i, double h);

/* body i's predicted pose brought up to its velocities (predS; the rotation as predR, or as the frame
 * predT, baseR while !predRok); the check inline, the update (predict_body_now) not */
static inline void predict_body(ibWorld* w, ibContactStore* cs, int32_t i, double h)
{
	if (cs->predVer[i] != w->bodies[i].velVersion || cs->predH != h) predict_body_now(w, cs, i, h);
}

/* A predicted pose as a frame: a principal-frame vector l is at R0 l + t x (R0 l + t x R0 l / 2) (E(t) R0 l
 * without forming E(t) R0), a point at s + that */
typedef struct PredFrame {
	ibVec3 s, t;
	const ibMat3* R0;
	bool turn; /* t != 0 */
} PredFrame;

static inline PredFrame pred_frame(ibWorld* w, ibContactStore* cs, int32_t i, double h)
{
	predict_body(w, cs, i, h);
	bool turn = !cs->predRok[i];
	return (PredFrame){cs->predS[i], turn ? cs->predT[i] : IB_VEC3_ZERO, turn ? &cs->baseR[i] : &cs->predR[i], turn};
}

static inline ibVec3 frame_dir(const PredFrame* f, ibVec3 l)
{
	ibVec3 L = ibMat3_MulV(*f->R0, l);
	if (!f->turn) return L;
	return ibAdd(L, ibCross(f->t, ibMulAdd(L, 0.5, ibCross(f->t, L))));
}

static inline ibVec3 frame_point(const PredFrame* f, ibVec3 l) { return ibAdd(f->s, frame_dir(f, l)); }

/* [IMPL] a row of two carried material points whose normal turns with one body (box and hull faces, edges
 * and corners: nBody 1 or 2) is measured on the frames; others on the matrices R' (ib_contact_normal_at,
 * ib_contact_points_at). The position sweeps and the direct solve measure every point after every impulse:
 * forming R' = E(t) R0 of both bodies per measurement was ~60 % of a sweep's instructions (pyramid20). */
static inline bool frame_row(const ibContactRow* c) { return !(c->rad1 > 0.0) && !(c->rad2 > 0.0) && c->nBody < 3; }

/* The frame measurement of c where it applies (frame_row, neither body turning fast; false otherwise): n', and
 * a', b' where a is given, the anchors' offset (b's anchor - a's) where d is given */
static bool frame_measure(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* a, ibVec3* b, ibVec3* n,
                          ibVec3* d)
{
	if (!frame_row(c) || turns_fast(w, c, h)) return false;
	PredFrame f1 = pred_frame(w, cs, c->b1, h), f2 = pred_frame(w, cs, c->b2, h);
	*n = frame_dir(c->nBody == 1 ? &f1 : &f2, c->ln);
	if (a) {
		*a = frame_point(&f1, c->la);
		*b = frame_point(&f2, c->lb);
	}
	if (d) *d = ibSub(frame_point(&f2, c->tb), frame_point(&f1, c->ta));
	return true;
}

/* The bodies' predicted poses at t0+h and the normal there: false where a body turns fast (turns_fast),
 * which the callers take to first order from t0 instead */
typedef struct PredPoses {
	ibVec3 s1, s2;
	ibMat3 R1, R2;
} PredPoses;

static bool predicted_poses(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, PredPoses* p, ibVec3* n)
{
	if (turns_fast(w, c, h)) {
		*n = c->n;
		return false;
	}
	ib_contact_predicted(w, cs, c->b1, h, &p->s1, &p->R1);
	ib_contact_predicted(w, cs, c->b2, h, &p->s2, &p->R2);
	*n = ib_contact_normal_at(c, p->s1, &p->R1, p->s2, &p->R2);
	return true;
}

void ib_contact_predicted_points(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* a, ibVec3* b, ibVec3* n)
{
	if (frame_measure(w, cs, c, h, a, b, n, NULL)) return;
	PredPoses p;
	if (predicted_poses(w, cs, c, h, &p, n)) {
		ib_contact_points_at(c, p.s1, &p.R1, p.s2, &p.R2, *n, a, b);
	} else {
		*a = ibMulAdd(c->a, h, point_velocity(&w->bodies[c->b1], c->a));
		*b = ibMulAdd(c->b, h, point_velocity(&w->bodies[c->b2], c->b));
	}
}

/* the anchors' offset of a fast-turning pair to first order from t0 */
static ibVec3 anchors_first_order(const ibWorld* w, const ibContactRow* c, double h)
{
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	ibVec3 A = ibAdd(x->st.s, ibMat3_MulV(x->R, c->ta)), B = ibAdd(y->st.s, ibMat3_MulV(y->R, c->tb));
	return ibMulAdd(ibSub(B, A), h, ibSub(point_velocity(y, B), point_velocity(x, A)));
}

ibVec3 ib_contact_predicted_anchors(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* n)
{
	ibVec3 d;
	if (frame_measure(w, cs, c, h, NULL, NULL, n, &d)) return d;
	PredPoses p;
	return predicted_poses(w, cs, c, h, &p, n) ? ib_contact_anchor_offset(w, c, h, p.s1, &p.R1, p.s2, &p.R2)
	                                           : anchors_first_order(w, c, h);
}

/* ib_contact_predicted_points and ib_contact_predicted_anchors at once (the same poses and normal, one
 * evaluation of each): *a, *b, *n as the first, the anchors' offset as the second returns */
ibVec3 ib_contact_predicted_both(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, ibVec3* a, ibVec3* b, ibVec3* n)
{
	ibVec3 d;
	if (frame_measure(w, cs, c, h, a, b, n, &d)) return d;
	PredPoses p;
	if (!predicted_poses(w, cs, c, h, &p, n)) {
		ib_contact_predicted_points(w, cs, c, h, a, b, n);
		return anchors_first_order(w, c, h);
	}
	ib_contact_points_at(c, p.s1, &p.R1, p.s2, &p.R2, *n, a, b);
	return ib_contact_anchor_offset(w, c, h, p.s1, &p.R1, p.s2, &p.R2);
}

/* [IMPL] on a round point (sphere, capsule, cylinder) the static-friction anchor is moved with the body's
 * current v and w over h (first order): the exact carried material point of a rolling sphere runs on a cycloid, back by r (wh - sin wh)
 * and up by r (1 - cos wh) in a step, and holding it braked or drove the roll (a 0.1 m sphere rolling at
 * 2 m/s at 60 Hz was at 0.78 m/s after 2 s, one at 0.1 m/s at 0.29 m/s). Other shapes keep the exact
 * prediction (a resting box turns by ~1e-6 rad per step; a tipping one by its corner, which the exact path
 * follows). */
static ibVec3 anchor_at(const ibWorld* w, int32_t i, double rad, double h, ibVec3 s, const ibMat3* R, ibVec3 t)
{
	if (!(rad > 0.0)) return ibAdd(s, ibMat3_MulV(*R, t));
	const ibBody* b = &w->bodies[i];
	ibVec3 L = ibMat3_MulV(b->R, t);
	return ibAdd(s, ibMulAdd(L, h, ibCross(b->st.w, L)));
}

ibVec3 ib_contact_anchor_offset(const ibWorld* w, const ibContactRow* c, double h, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2)
{
	return ibSub(anchor_at(w, c->b2, c->rad2, h, s2, R2, c->tb), anchor_at(w, c->b1, c->rad1, h, s1, R1, c->ta));
}

ibVec3 ib_contact_rel_velocity(const ibWorld* w, const ibContactRow* c)
{
	return ibSub(point_velocity(&w->bodies[c->b1], c->a), point_velocity(&w->bodies[c->b2], c->b));
}

/* p on body 1 at a, -p on body 2 at b (not on a frozen body) */
static inline void apply_bodies(ibWorld* w, const ibContactRow* c, ibVec3 p)
{
	if (c->frozen != 1) ib_body_apply_impulse(&w->bodies[c->b1], p, c->a);
	if (c->frozen != 2) ib_body_apply_impulse(&w->bodies[c->b2], ibNeg(p), c->b);
}

void ib_contact_apply(ibWorld* w, const ibContactRow* c, ibVec3 p)
{
	ibContactStore* cs = w->contactStore;
	double p2 = ibDot(p, p);
	if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
	apply_bodies(w, c, p);
}

void ib_contact_apply2(ibWorld* w, const ibContactRow* c, ibVec3 p1, ibVec3 p2)
{
	ibContactStore* cs = w->contactStore;
	double q1 = ibDot(p1, p1), q2 = ibDot(p2, p2), q = q1 > q2 ? q1 : q2; /* finite: no fmax call */
	if (q > cs->sweepMax2) cs->sweepMax2 = q;
	ibVec3 p = ibAdd(p1, p2);
	if (ibDot(p, p) > 0.0) apply_bodies(w, c, p);
}

bool ib_contacts_sum_begin(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow_raw(w, (void**)&cs->sum, &cs->sumCapacity, 2 * w->bodyHigh, sizeof(ibVec3))) return false;
	memset(cs->sum, 0, 2 * (size_t)w->bodyHigh * sizeof(ibVec3));
	return true;
}

void ib_contacts_sum_add(ibWorld* w, ibContactStore* cs, const ibContactRow* c, ibVec3 p)
{
	double p2 = ibDot(p, p);
	if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	if (c->frozen != 1 && ib_is_dynamic(x)) {
		cs->sum[2 * c->b1] = ibAdd(cs->sum[2 * c->b1], p);
		cs->sum[2 * c->b1 + 1] = ibAdd(cs->sum[2 * c->b1 + 1], ibCross(ibSub(c->a, x->st.s), p));
	}
	if (c->frozen != 2 && ib_is_dynamic(y)) {
		cs->sum[2 * c->b2] = ibSub(cs->sum[2 * c->b2], p);
		cs->sum[2 * c->b2 + 1] = ibSub(cs->sum[2 * c->b2 + 1], ibCross(ibSub(c->b, y->st.s), p));
	}
}

void ib_contact_apply_group(ibWorld* w, const ibContactRow* g, int m, const ibVec3* p)
{
	ibContactStore* cs = w->contactStore;
	ibBody *x = &w->bodies[g[0].b1], *y = &w->bodies[g[0].b2];
	ibVec3 P = IB_VEC3_ZERO, L1 = IB_VEC3_ZERO, L2 = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		double p2 = ibDot(p[i], p[i]);
		if (p2 > cs->sweepMax2) cs->sweepMax2 = p2;
		P = ibAdd(P, p[i]);
		L1 = ibAdd(L1, ibCross(ibSub(g[i].a, x->st.s), p[i]));
		L2 = ibSub(L2, ibCross(ibSub(g[i].b, y->st.s), p[i]));
	}
	ib_body_apply_impulse_moment(x, P, L1);
	ib_body_apply_impulse_moment(y, ibNeg(P), L2);
}

void ib_contacts_sum_flush(ibWorld* w, ibContactStore* cs)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibVec3 P = cs->sum[2 * i], L = cs->sum[2 * i + 1];
		if (P.x == 0.0 && P.y == 0.0 && P.z == 0.0 && L.x == 0.0 && L.y == 0.0 && L.z == 0.0) continue;
		ib_body_apply_impulse_moment(&w->bodies[i], P, L);
	}
}

bool ib_contacts_note_poses(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow_raw(w, (void**)&cs->built, &cs->builtCapacity, w->bodyHigh, sizeof(ibContactPose))) return false;
	for (int32_t i = 0; i < w->bodyHigh; ++i) cs->built[i] = (ibContactPose){w->bodies[i].st.s, w->bodies[i].st.q};
	return true;
}

void ib_contact_invalidate_prediction(ibWorld* w, ibContactStore* cs, double h)
{
	for (int32_t i = 0; i < w->bodyHigh && i < cs->predCapacity; ++i) {
		cs->predVer[i] = ~w->bodies[i].velVersion;
		cs->baseOk[i] = 0;
	}
	cs->predH = h;
}

/* [IMPL] Linearised prediction: after an exact prediction (s0', R0') at velocities (v0, w0), a body
 * whose rotation per step stays small is predicted at (v, w) as s0' + h (v - v0) and
 * exp(h (w - w0)) R0'. The translation is exact (constant forces); the rotation misses the change of
 * the gyroscopic term and the non-commuting of the two rotations, both of the order of
 * h^2 |w0| |w - w0|, held below IB_LINEAR_PREDICTION_ERROR rad. Each impulse of a sweep changes the
 * velocities, and the exact prediction (the world's integrator) was most of the contact loop's cost.
 * [IMPL] The bound is on the product (it was |w0| h <= 3e-4 and |w - w0| h <= 3e-4, the same worst
 * case): a tumbling body (|w0| h = 0.1) is predicted linearly for the small changes of the late
 * sweeps (|w - w0| h <= 9e-7), not exactly after each of them (rain1000: 19% of the run). */
#define IB_LINEAR_PREDICTION_ANGLE 3e-4
#define IB_LINEAR_PREDICTION_ERROR (IB_LINEAR_PREDICTION_ANGLE * IB_LINEAR_PREDICTION_ANGLE)

/* [t]x [t]x without the products by the zeros of [t]x: the sums of ibMat3_Mul(S, S) in the same order
 * (adding an exact zero changes nothing but the sign of a zero, and E's entries then meet nonzero terms) */
static inline ibMat3 skew_square(ibVec3 t)
{
	return (ibMat3){{{-t.z * t.z - t.y * t.y, t.y * t.x, t.z * t.x},
	                 {t.x * t.y, -t.z * t.z - t.x * t.x, t.z * t.y},
	                 {t.x * t.z, t.y * t.z, -t.y * t.y - t.x * t.x}}};
}

/* [IMPL] A torque-free body of equal principal moments (cubes, spheres) turns by exactly exp(h w) over the
 * step (integrator.c). For it the linearised update uses the left Jacobian of exp at theta = h w0:
 * exp(theta + h dw) = exp(J_l(theta) h dw) exp(theta) + O(|theta| |h dw|^2), so the error no longer
 * grows with |w0| |dw| (the commutator of the two rotations) but only with |w0| |dw|^2: measured over
 * 1e5 random cases with |theta| <= 2 and |h dw| <= 3e-4, at most 0.086 |theta| |h dw|^2, bounded here
 * by IB_LINEAR_PREDICTION_JL |theta| |h dw|^2 <= IB_LINEAR_PREDICTION_ERROR. With the old bound a
 * tumbling cube was predicted exactly after almost every impulse: rain1000 made 19.3M exact predictions
 * in 42.9M updates over 150 steps. J_l(t) = I + (1 - cos a) / a^2 [t]x + (a - sin a) / a^3 [t]x^2, a = |t|. */
#define IB_LINEAR_PREDICTION_JL 0.1

ibMat3 ib_contact_left_jacobian(ibVec3 t)
{
	double a2 = ibDot(t, t), A, B;
	if (a2 < 0.0625) { /* |t| < 0.25: the series (to a^10; the next terms below 1e-15 of J), where the closed
	                    * form's a - sin a cancels */
		A = 0.5 + a2 * (-1.0 / 24 + a2 * (1.0 / 720 + a2 * (-1.0 / 40320 + a2 * (1.0 / 3628800 + a2 * (-1.0 / 479001600)))));
		B = 1.0 / 6 + a2 * (-1.0 / 120 + a2 * (1.0 / 5040 + a2 * (-1.0 / 362880 + a2 * (1.0 / 39916800 + a2 * (-1.0 / 6227020800)))));
	} else {
		double a = sqrt(a2), sh = sin(0.5 * a);
		A = 2.0 * sh * sh / a2; /* (1 - cos a) / a^2 without the cancellation */
		B = (a - sin(a)) / (a2 * a);
	}
	ibMat3 J = ibMat3_Add(ibMat3_Scale(A, ibMat3_Skew(t)), ibMat3_Scale(B, skew_square(t)));
	for (int k = 0; k < 3; ++k) J.m[k][k] += 1.0;
	return J;
}

/* the integrator's exp(h w) case (integrator.c: dynamic, torque-free, spherical inertia class) */
static bool spherical_rotation(const ibBody* b)
{
	return b->type == IB_BODY_DYNAMIC && b->inertiaClass == IB_INERTIA_SPHERICAL && b->text.x == 0.0 && b->text.y == 0.0 &&
	       b->text.z == 0.0;
}

static bool predict_linear(ibContactStore* cs, const ibBody* b, int32_t i, double h)
{
	if (!cs->baseOk[i]) return false;
	double a0 = cs->baseWLen[i] * h;
	ibVec3 dw = ibSub(b->st.w, cs->baseW[i]);
	double da2 = ibDot(dw, dw) * (h * h); /* (|w - w0| h)^2: the bounds squared, no square root */
	if (!(da2 <= IB_LINEAR_PREDICTION_ANGLE * IB_LINEAR_PREDICTION_ANGLE)) return false;
	bool jl = cs->baseOk[i] == 2;
	if (jl ? !(IB_LINEAR_PREDICTION_JL * a0 * da2 <= IB_LINEAR_PREDICTION_ERROR)
	       : !(a0 * a0 * da2 <= IB_LINEAR_PREDICTION_ERROR * IB_LINEAR_PREDICTION_ERROR))
		return false;
	cs->predS[i] = ibMulAdd(cs->baseS[i], h, ibSub(b->st.v, cs->baseV[i]));
	if (da2 > 0.0) { /* exp([t]x) = I + [t]x + [t]x^2 / 2 to |t|^3 / 6 < 5e-12 */
		ibVec3 t = ibScale(h, dw);
		if (jl) t = ibMat3_MulV(cs->baseJ[i], t); /* |J_l| <= 1 */
		cs->predT[i] = t;
		cs->predRok[i] = 0; /* R' on demand (ib_contact_predicted) */
	} else {
		cs->predR[i] = cs->baseR[i];
		cs->predRok[i] = 1;
	}
	return true;
}

static void predict_body_now(ibWorld* w, ibContactStore* cs, int32_t i, double h)
{
	const ibBody* b = &w->bodies[i];
	if (b->type == IB_BODY_STATIC) {
		cs->predS[i] = b->st.s;
		cs->predR[i] = b->R;
		cs->predRok[i] = 1;
	} else if (!predict_linear(cs, b, i, h)) {
		ibQuat q;
		ib_predict_pose(w, b, h, &cs->predS[i], &q);
		cs->predR[i] = ibMat3_FromQuat(q);
		cs->predRok[i] = 1;
		cs->baseS[i] = cs->predS[i];
		cs->baseR[i] = cs->predR[i];
		cs->baseV[i] = b->st.v;
		cs->baseW[i] = b->st.w;
		cs->baseWLen[i] = ibLength(b->st.w);
		cs->baseOk[i] = 1;
		if (spherical_rotation(b)) {
			cs->baseJ[i] = ib_contact_left_jacobian(ibScale(h, b->st.w));
			cs->baseOk[i] = 2;
		}
	}
	cs->predVer[i] = b->velVersion;
}

void ib_contact_predicted(ibWorld* w, ibContactStore* cs, int32_t i, double h, ibVec3* s, ibMat3* R)
{
	predict_body(w, cs, i, h);
	if (!cs->predRok[i]) {
		ibVec3 t = cs->predT[i];
		ibMat3 S = ibMat3_Skew(t), E = ibMat3_Add(S, ibMat3_Scale(0.5, skew_square(t)));
		for (int k = 0; k < 3; ++k) E.m[k][k] += 1.0;
		cs->predR[i] = ibMat3_Mul(E, cs->baseR[i]);
		cs->predRok[i] = 1;
	}
	*s = cs->predS[i];
	*R = cs->predR[i];
}

/* Bodies joined by a joint do not touch each other unless the joint says collideConnected.
 * [IMPL] a linear scan over the basic joints per touching pair; the pipeline's filter should take over. */
static bool jointed(const ibWorld* w, int32_t x, int32_t y)
{
	const ibJointStore* st = w->joints;
	if (!st) return false;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (((c->b1 == x && c->b2 == y) || (c->b1 == y && c->b2 == x)) && !st->joints[c->joint].def.collideConnected)
			return true;
	}
	return false;
}

static bool grow_prediction(ibWorld* w, ibContactStore* cs)
{
	int32_t need = w->bodyHigh;
	if (need <= cs->predCapacity) return true;
	int32_t cap = need + need / 2 + 8;
	ibVec3* s = ib_alloc(w, (size_t)cap * sizeof(ibVec3));
	ibMat3* R = ib_alloc(w, (size_t)cap * sizeof(ibMat3));
	uint32_t* v = ib_alloc(w, (size_t)cap * sizeof(uint32_t));
	ibVec3* bs = ib_alloc(w, (size_t)cap * 4 * sizeof(ibVec3)); /* baseS, baseV, baseW, predT */
	ibMat3* bR = ib_alloc(w, (size_t)cap * 2 * sizeof(ibMat3)); /* baseR, baseJ */
	uint8_t* ok = ib_alloc(w, (size_t)cap * 2 * sizeof(uint8_t)); /* baseOk, predRok */
	double* wl = ib_alloc(w, (size_t)cap * sizeof(double));
	if (!s || !R || !v || !bs || !bR || !ok || !wl) {
		ib_free(w, s, (size_t)cap * sizeof(ibVec3));
		ib_free(w, R, (size_t)cap * sizeof(ibMat3));
		ib_free(w, v, (size_t)cap * sizeof(uint32_t));
		ib_free(w, bs, (size_t)cap * 4 * sizeof(ibVec3));
		ib_free(w, bR, (size_t)cap * 2 * sizeof(ibMat3));
		ib_free(w, ok, (size_t)cap * 2 * sizeof(uint8_t));
		ib_free(w, wl, (size_t)cap * sizeof(double));
		return false;
	}
	ib_free(w, cs->predS, (size_t)cs->predCapacity * sizeof(ibVec3));
	ib_free(w, cs->predR, (size_t)cs->predCapacity * sizeof(ibMat3));
	ib_free(w, cs->predVer, (size_t)cs->predCapacity * sizeof(uint32_t));
	ib_free(w, cs->baseS, (size_t)cs->predCapacity * 4 * sizeof(ibVec3));
	ib_free(w, cs->baseR, (size_t)cs->predCapacity * 2 * sizeof(ibMat3));
	ib_free(w, cs->baseOk, (size_t)cs->predCapacity * 2 * sizeof(uint8_t));
	ib_free(w, cs->baseWLen, (size_t)cs->predCapacity * sizeof(double));
	memset(ok, 0, (size_t)cap * 2 * sizeof(uint8_t));
	memset(v, 0, (size_t)cap * sizeof(uint32_t));
	cs->predS = s;
	cs->predR = R;
	cs->predVer = v;
	cs->baseS = bs;
	cs->baseV = bs + cap;
	cs->baseW = bs + 2 * cap;
	cs->predT = bs + 3 * cap;
	cs->baseR = bR;
	cs->baseJ = bR + cap;
	cs->baseOk = ok;
	cs->predRok = ok + cap;
	cs->baseWLen = wl;
	cs->predCapacity = cap;
	return true;
}

static uint32_t pair_hash(int32_t s1, int32_t s2)
{
	uint32_t h = (uint32_t)s1 * 0x9E3779B1u ^ ((uint32_t)s2 + 0x7F4A7C15u) * 0x85EBCA77u;
	return h ^ (h >> 15);
}

/* The same point in last step's set: same shapes; the same feature key, else the nearest local
 * point on body 1 within max(10 eps_c, 1 mm). Returns its index in cs->prev or -1. */
static int32_t match_prev(const ibWorld* w, const ibContactStore* cs, const ibContactRow* c)
{
	if (cs->prevCount == 0 || cs->prevHashCapacity == 0) return -1;
	double tol = ib_fmax(10.0 * w->collisionSettings.contactTolerance, 1e-3);
	uint32_t mask = (uint32_t)cs->prevHashCapacity - 1u;
	int32_t first = -1;
	for (uint32_t h = pair_hash(c->s1, c->s2) & mask;; h = (h + 1u) & mask) {
		int32_t j = cs->prevHash[h];
		if (j < 0) return -1;
		if (cs->prev[j].s1 == c->s1 && cs->prev[j].s2 == c->s2) {
			first = j;
			break;
		}
	}
	int32_t best = -1;
	double bestD = tol * tol;
	for (int32_t j = first; j < cs->prevCount && cs->prev[j].s1 == c->s1 && cs->prev[j].s2 == c->s2; ++j) {
		const ibContactPrev* o = &cs->prev[j];
		double d = ibLengthSq(ibSub(o->la, c->la));
		if (c->key != 0u && o->key == c->key && d <= 100.0 * tol * tol) return j;
		if (d <= bestD) {
			bestD = d;
			best = j;
		}
	}
	return best;
}

/* [IMPL] The anchors of a face's sticking points are set where each point started sticking; a body that settles
 * with some points sticking a step or two before the others keeps anchors of different poses. Their tangential
 * offsets then fit no rigid motion of the face (translation in its plane and rotation about n: the first-order
 * tangential motion of coplanar points), the position loop stalls at a least-squares compromise ~1e-5 m from
 * them, and the step is reported not converged while the body stands still: 30 of 100 boxes thrown onto the
 * ground (test_contact_drops), in up to 278 of their 300 steps. Here each manifold group's sticking points keep the part
 * of their offsets that one such motion explains (the body is still pulled back to where it stuck) and drop the
 * rest, where it exceeds eps_d / 10 (body B's anchors move). */
/* [IMPL] The m sticking points idx[0..m-1] of a group all took their anchors from last step's records of one group
 * whose anchors consistent_anchors checked (and fitted where needed) with the same m points: both bodies have moved
 * rigidly since, which changes the anchors' offsets by a rigid motion of the face to first order, so the check
 * would pass again (pyramid20: not one of 120,000 checks in 300 steps refitted; the checks were 3 % of its
 * instructions). */
static bool anchors_checked_before(const ibContactStore* cs, const int32_t* idx, int m)
{
	int32_t tag = -1;
	for (int i = 0; i < m; ++i) {
		const ibContactRow* c = &cs->pts[idx[i]];
		if (!c->anchorsKept) return false;
		const ibContactPrev* o = &cs->prev[c->warm];
		if (o->anchorM != m || o->anchorTag < 0 || (i > 0 && o->anchorTag != tag)) return false;
		tag = o->anchorTag;
		for (int j = 0; j < i; ++j)
			if (cs->pts[idx[j]].warm == c->warm) return false;
	}
	return true;
}

static void consistent_anchors(ibWorld* w, ibContactStore* cs, int32_t first, int32_t count)
{
	enum { MAXG = 64 };
	int32_t idx[MAXG];
	ibVec3 d[MAXG], x[MAXG];
	int m = 0;
	for (int32_t k = first; k < first + count && m < MAXG; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->kind == IB_CONTACT_RESTING && c->sticking && c->mus > 0.0 && !c->spec) idx[m++] = k;
	}
	if (m < 2) return;
	if (anchors_checked_before(cs, idx, m)) {
		for (int i = 0; i < m; ++i) cs->pts[idx[i]].anchorsChecked = (int16_t)m;
		return;
	}
	const ibContactRow* c0 = &cs->pts[idx[0]];
	const ibBody *bx = &w->bodies[c0->b1], *by = &w->bodies[c0->b2];
	const ibVec3 n = c0->n;
	ibVec3 dm = IB_VEC3_ZERO, xm = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		const ibContactRow* c = &cs->pts[idx[i]];
		if (ibDot(c->n, n) < 0.999999) return; /* not one face */
		ibVec3 A = ibAdd(bx->st.s, ibMat3_MulV(bx->R, c->ta)), B = ibAdd(by->st.s, ibMat3_MulV(by->R, c->tb));
		d[i] = ib_contact_tangential(ibSub(B, A), n);
		x[i] = ib_contact_tangential(c->a, n);
		dm = ibAdd(dm, d[i]);
		xm = ibAdd(xm, x[i]);
	}
	dm = ibScale(1.0 / m, dm);
	xm = ibScale(1.0 / m, xm);
	double num = 0.0, den = 0.0;
	for (int i = 0; i < m; ++i) {
		ibVec3 y = ibSub(x[i], xm);
		num += ibDot(ibSub(d[i], dm), ibCross(n, y));
		den += ibDot(y, y);
	}
	const double theta = den > 1e-18 ? num / den : 0.0, tol = 0.1 * w->solver.contact.contactPositionTolerance;
	ibVec3 r[MAXG];
	double worst = 0.0;
	for (int i = 0; i < m; ++i) {
		r[i] = ibSub(d[i], ibMulAdd(dm, theta, ibCross(n, ibSub(x[i], xm))));
		worst = ib_fmax(worst, ibLength(r[i]));
	}
	for (int i = 0; i < m; ++i) {
		ibContactRow* c = &cs->pts[idx[i]];
		c->anchorsChecked = (int16_t)m;
		if (!(worst > tol)) continue;
		ibVec3 B = ibAdd(by->st.s, ibMat3_MulV(by->R, c->tb));
		c->tb = ibMat3_MulTV(by->R, ibSub(ibSub(B, r[i]), by->st.s));
	}
}

/* cs->jointed: 1 for the dynamic bodies of basic joints, else 0 (per body); false if out of memory */
bool ib_contacts_mark_jointed(ibWorld* w, ibContactStore* cs)
{
	if (!ib_grow(w, (void**)&cs->jointed, &cs->jointedCapacity, w->bodyHigh + 1, 1)) return false;
	memset(cs->jointed, 0, (size_t)w->bodyHigh);
	const ibJointStore* st = w->joints;
	for (int32_t k = 0; st && k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (c->b1 >= 0 && c->b1 < w->bodyHigh && ib_is_dynamic(&w->bodies[c->b1])) cs->jointed[c->b1] = 1;
		if (c->b2 >= 0 && c->b2 < w->bodyHigh && ib_is_dynamic(&w->bodies[c->b2])) cs->jointed[c->b2] = 1;
	}
	return true;
}

/* the anchors of a matched sticking point c from last step's (cs->prev[c->warm]) where it persists; false if it keeps
 * the fresh ones of its build */
static inline bool inherit_anchors(const ibWorld* w, const ibContactStore* cs, ibContactRow* c, bool fresh)
{
	if (c->warm < 0 || !c->sticking) return false;
	if (fresh && (cs->jointed[c->b1] || cs->jointed[c->b2])) return false;
	/* sticking points that persist keep their static-friction anchors */
	const ibContactPrev* o = &cs->prev[c->warm];
	double tol = ib_fmax(10.0 * w->collisionSettings.contactTolerance, 1e-3);
	if (!o->sticking || ibLengthSq(ibSub(o->la, c->la)) > tol * tol) return false;
	/* on a round point the anchor's material point must still be where it touches: a slowly rolling
	 * sphere (less than tol per step) kept an anchor it had rolled away from */
	if ((c->rad1 > 0.0 && ibLengthSq(ibSub(o->ta, c->la)) > tol * tol) || (c->rad2 > 0.0 && ibLengthSq(ibSub(o->tb, c->lb)) > tol * tol))
		return false;
	c->ta = o->ta;
	c->tb = o->tb;
	return true;
}

void ib_contacts_inherit_anchors(ibWorld* w, ibContactStore* cs)
{
	/* [IMPL] After a position loop that stalled, the sticking points of jointed bodies start from fresh anchors
	 * (where their points are now). A jointed body's anchors, taken at several instants, need not agree with
	 * its joints: a ragdoll lying on the ground with 11 sticking points on 10 jointed bodies has more conditions
	 * than freedoms, and anchors a few um apart from any configuration its joints allow kept its position
	 * loop cycling at 2-4e-6 m in every step (the joint sweeps against the contact sweeps) until the stall
	 * rule ended it (tests/test_contact_ragdoll.c). Dropping the anchors lets the jointed bodies creep by the
	 * stalled residual once, not in every step. */
	const bool fresh = cs->positionStalled && w->joints && w->joints->basicCount > 0 && ib_contacts_mark_jointed(w, cs);
	int32_t kept = 0, anew = 0; /* sticking points (with friction, touching) that kept their anchors / got new ones */
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->warm = -1;
		c->anchorsKept = 0;
		c->anchorsChecked = 0;
		if (c->kind != IB_CONTACT_RESTING) continue;
		c->warm = match_prev(w, cs, c);
		if (!c->sticking) continue;
		const bool k1 = inherit_anchors(w, cs, c, fresh);
		c->anchorsKept = k1;
		if (c->mus > 0.0 && !c->spec) {
			if (k1) ++kept;
			else ++anew;
		}
	}
	for (int32_t k = 0; k < cs->count; ++k)
		if (cs->pts[k].gIdx == 0 && cs->pts[k].gCount >= 2 && k + cs->pts[k].gCount <= cs->count) consistent_anchors(w, cs, k, cs->pts[k].gCount);
	/* and across the cycles of body pairs (contact_anchors.c): anchors that all persist were made consistent in the
	 * step that set them (they are material points), and anchors set at one instant agree; only new anchors
	 * beside kept ones can disagree with them */
	if (kept > 0 && anew > 0) ib_contacts_island_anchors(w, cs);
}

/* Keep this step's resting points for the next step (anchors of sticking points, warm start) as
 * compact records (ibContactPrev: the fields the next step reads); they stay grouped by shape pair,
 * and a hash of the pairs finds each group. */
void ib_contacts_keep(ibWorld* w, ibContactStore* cs)
{
	cs->prevCount = 0;
	cs->prevH = cs->lastH;
	if (!ib_grow(w, (void**)&cs->prev, &cs->prevCapacity, cs->count, sizeof(ibContactPrev))) return;
	const bool factors = ib_contact_patch_keep_begin(w, cs, cs->count); /* (out of memory: the next step forms them anew) */
	int32_t groupRow = -1, tag = -1; /* the group's first row, the index of its first record */
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (c->kind != IB_CONTACT_RESTING) continue;
		if (factors) ib_contact_patch_keep(cs, k, cs->prevCount);
		if (k - c->gIdx != groupRow) groupRow = k - c->gIdx, tag = cs->prevCount;
		const bool checked = c->anchorsChecked > 0 && c->gCount >= 2; /* (rows appended later copy others: gCount 1) */
		cs->prev[cs->prevCount++] = (ibContactPrev){
			.a = c->a, .n = c->n, .la = c->la, .ta = c->ta, .tb = c->tb, .wT = c->wT, .wVT = c->wVT,
			.wN = c->wN, .wVN = c->wVN, .mus = c->mus, .s1 = c->s1, .s2 = c->s2, .key = c->key,
			.anchorTag = checked ? tag : -1, .anchorM = checked ? c->anchorsChecked : 0, .sticking = c->sticking,
		};
	}
	/* with the direct solve the loads of resting faces are its least-squares ones (no self-equilibrated
	 * part): they are kept as they are (contact_warm.c) */
	bool keepLoads = w->solver.contact.directSolve;
	for (int32_t j = 0, e; j < cs->prevCount; j = e) {
		const ibContactPrev* o = &cs->prev[j];
		for (e = j + 1; e < cs->prevCount && cs->prev[e].s1 == o->s1 && cs->prev[e].s2 == o->s2 && ibDot(cs->prev[e].n, o->n) > 0.999999; ++e) {}
		ib_contacts_balance_warm(&cs->prev[j], e - j, keepLoads); /* the group's net wrench (contact_warm.c) */
	}
	int32_t need = 16;
	while (need < 2 * cs->prevCount) need *= 2;
	if (need > cs->prevHashCapacity) {
		int32_t* hsh = ib_alloc(w, (size_t)need * sizeof(int32_t));
		if (!hsh) {
			cs->prevCount = 0;
			return;
		}
		ib_free(w, cs->prevHash, (size_t)cs->prevHashCapacity * sizeof(int32_t));
		cs->prevHash = hsh;
		cs->prevHashCapacity = need;
	}
	uint32_t mask = (uint32_t)cs->prevHashCapacity - 1u;
	memset(cs->prevHash, 0xff, (size_t)cs->prevHashCapacity * sizeof(int32_t));
	for (int32_t j = 0; j < cs->prevCount; ++j) {
		const ibContactPrev* o = &cs->prev[j];
		if (j > 0 && cs->prev[j - 1].s1 == o->s1 && cs->prev[j - 1].s2 == o->s2) continue;
		uint32_t h = pair_hash(o->s1, o->s2) & mask;
		while (cs->prevHash[h] >= 0) {
			const ibContactPrev* q = &cs->prev[cs->prevHash[h]];
			if (q->s1 == o->s1 && q->s2 == o->s2) break; /* a second group of the pair: the first one wins */
			h = (h + 1u) & mask;
		}
		if (cs->prevHash[h] < 0) cs->prevHash[h] = j;
	}
}

/* Round contact points: a shape whose surface is a core carried with the body (a point, a segment, a
 * circle) swept by a radius. Its contact point is found anew on that surface at every predicted pose
 * (ib_contact_points_at), not carried as a material point of the surface, which runs on a cycloid when
 * the body rolls. Sphere: the centre; capsule: the point of its segment a + r o (o the shape's outward
 * normal at the point a); cylinder on its side or its rim: the point of its axis at the same height (side)
 * or the centre of the end face (rim), and the point is found again with the radial direction of n at the
 * predicted pose (*axis: the cylinder's axis in the principal frame). A cylinder standing on an end face
 * (n within ~6 degrees of the axis) or touching at a point that is not the rim's or side's deepest keeps
 * material points. Returns the radius, 0 where the point is not round. */
static double round_point(const ibShape* s, const ibBody* b, ibVec3 p, ibVec3 o, ibVec3* core, ibVec3* axis)
{
	*axis = ibV3(0, 0, 0);
	if (s->type == IB_SHAPE_SPHERE || s->type == IB_SHAPE_CAPSULE) {
		double r = s->type == IB_SHAPE_SPHERE ? s->g.sphere.radius : s->g.capsule.radius;
		*core = ibMat3_MulTV(b->R, ibSub(ibMulAdd(p, -r, o), b->st.s));
		return r;
	}
	if (s->type != IB_SHAPE_CYLINDER) return 0.0;
	const double r = s->g.cylinder.radius, hl = s->g.cylinder.halfLength;
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(b, s, &sp, &sq);
	ibVec3 z = ibRotate(sq, ibV3(0, 0, 1));
	ibVec3 u = ibMulAdd(o, -ibDot(o, z), z);
	double lu = ibLength(u);
	if (!(lu >= 0.1)) return 0.0;
	/* the point of the axis (side) or the end face's centre (rim); within 1e-3 r of it (the manifold's normal
	 * may lean by ~1e-4 rad from the exact one; a carried rim point 1e-3 rad away from the deepest is 5e-7 r
	 * above it), projected onto the axis */
	ibVec3 d = ibSub(ibMulAdd(p, -r / lu, u), sp);
	double along = ibDot(d, z), tol = 1e-3 * r;
	if (ibLengthSq(ibMulAdd(d, -along, z)) > tol * tol || fabs(along) > hl + tol) return 0.0;
	ibVec3 c = ibMulAdd(sp, ib_fmax(-hl, ib_fmin(hl, along)), z);
	*core = ibMat3_MulTV(b->R, ibSub(c, b->st.s));
	*axis = ibMat3_MulTV(b->R, z);
	return r;
}

bool ib_contact_set_round(const ibWorld* w, ibContactRow* c)
{
	const ibBody* x = &w->bodies[c->b1];
	const ibBody* y = &w->bodies[c->b2];
	c->rad1 = round_point(&w->shapes[c->s1], x, c->a, ibNeg(c->n), &c->lc1, &c->ax1); /* n: from body 2 to body 1 */
	c->rad2 = round_point(&w->shapes[c->s2], y, c->b, c->n, &c->lc2, &c->ax2);
	if (!(c->rad1 > 0.0) && !(c->rad2 > 0.0)) return false;
	ibVec3 a = c->rad1 > 0.0 ? round_at(x->st.s, &x->R, c->lc1, -c->rad1, c->ax1, c->n) : c->a;
	ibVec3 b = c->rad2 > 0.0 ? round_at(y->st.s, &y->R, c->lc2, c->rad2, c->ax2, c->n) : c->b;
	c->gap += ibDot(ibSub(ibSub(a, c->a), ibSub(b, c->b)), c->n);
	c->a = a;
	c->b = b;
	return true;
}

/* n lies across the axis ax (principal frame) of a cylinder on body i (within 1e-6): a point of its side */
static bool across_axis(const ibWorld* w, int32_t i, ibVec3 ax, ibVec3 n) { return fabs(ibDot(n, ibMat3_MulV(w->bodies[i].R, ax))) <= 1e-6; }

bool ib_contact_rim_sample(const ibWorld* w, const ibContactStore* cs, int32_t first, int32_t last, const ibContactRow* c)
{
	for (int side = 0; side < 2; ++side) {
		int32_t s = side ? c->s2 : c->s1;
		if (w->shapes[s].type != IB_SHAPE_CYLINDER || (side ? c->rad2 : c->rad1) > 0.0) continue;
		const ibBody* b = &w->bodies[side ? c->b2 : c->b1];
		ibVec3 l = ibMat3_MulTV(b->R, ibSub(side ? c->b : c->a, b->st.s));
		double tol = 1e-6 * w->shapes[s].g.cylinder.radius;
		for (int32_t k = first; k < last; ++k) { /* a round point in the sample's end plane */
			const ibContactRow* o = &cs->pts[k];
			if (o == c || !((side ? o->rad2 : o->rad1) > 0.0)) continue;
			ibVec3 ax = side ? o->ax2 : o->ax1;
			if (fabs(ibDot(ibSub(l, side ? o->lc2 : o->lc1), ax)) <= tol) return true;
			/* a round point of the side (n across the axis): the side's line of contact is the round points'
			 * segment, and any other point of that cylinder in the region (the speculative region's clipped
			 * points, carried with a cylinder spinning about its axis) only doubles it */
			if (across_axis(w, side ? c->b2 : c->b1, ax, o->n)) return true;
		}
	}
	return false;
}

/* A box or hull shape (flat faces) and, if so, whether its point p lies on exactly one face (within 1e-9 of
 * its size), not on an edge or a corner. */
static bool flat_shape(const ibShape* s) { return s->type == IB_SHAPE_BOX || (s->type == IB_SHAPE_HULL && s->hull); }

static bool on_one_face(const ibWorld* w, int32_t shape, ibVec3 p)
{
	const ibShape* s = &w->shapes[shape];
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(&w->bodies[s->body], s, &sp, &sq);
	ibVec3 q = ibInvRotate(sq, ibSub(p, sp));
	if (s->type == IB_SHAPE_BOX) {
		ibVec3 he = s->g.box.halfExtents;
		double tol = 1e-9 * (he.x + he.y + he.z);
		return (fabs(q.x) >= he.x - tol) + (fabs(q.y) >= he.y - tol) + (fabs(q.z) >= he.z - tol) == 1;
	}
	const ibHullData* h = &s->hull->view;
	double size = 0.0;
	for (int i = 0; i < h->vertexCount; ++i) size = ib_fmax(size, ibLength(h->vertices[i]));
	int faces = 0;
	for (int f = 0; f < h->faceCount && faces < 2; ++f) faces += fabs(ibDot(h->faces[f].normal, q) - h->faces[f].offset) <= 1e-9 * size;
	return faces == 1;
}

/* Whether q lies on a flat face of a shape (box or hull face, a cylinder's end face inside its rim, a plane,
 * a triangle of a mesh; within 1e-9 of the shape's size of exactly one face, and within its boundary), and if
 * so that face's plane (outward world normal *pn, offset *pd; either may be NULL). On a mesh any triangle
 * counts whose plane holds q: the rim points of ib_contact_flat_rim, projected onto the first one's plane,
 * stay only where a coplanar triangle lies under them. */
static bool flat_face_at(const ibWorld* w, int32_t shape, ibVec3 q, ibVec3* pn, double* pd)
{
	const ibShape* s = &w->shapes[shape];
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(&w->bodies[s->body], s, &sp, &sq);
	ibVec3 l = ibInvRotate(sq, ibSub(q, sp)), nl;
	double off;
	switch (s->type) {
	case IB_SHAPE_PLANE:
		nl = ibNormalize(s->g.plane.normal), off = s->g.plane.offset;
		break;
	case IB_SHAPE_BOX: {
		if (!on_one_face(w, shape, q)) return false;
		ibVec3 he = s->g.box.halfExtents;
		double tol = 1e-9 * (he.x + he.y + he.z);
		int k = fabs(l.x) >= he.x - tol ? 0 : fabs(l.y) >= he.y - tol ? 1 : 2;
		double c[3] = {l.x, l.y, l.z}, e[3] = {he.x, he.y, he.z}, m[3] = {0, 0, 0};
		m[k] = c[k] > 0.0 ? 1.0 : -1.0;
		nl = ibV3(m[0], m[1], m[2]), off = e[k];
		break;
	}
	case IB_SHAPE_CYLINDER: {
		double r = s->g.cylinder.radius, hl = s->g.cylinder.halfLength, tol = 1e-9 * (r + hl);
		if (!(fabs(fabs(l.z) - hl) <= tol) || !(l.x * l.x + l.y * l.y < (r - tol) * (r - tol))) return false;
		nl = ibV3(0, 0, l.z > 0.0 ? 1.0 : -1.0), off = hl;
		break;
	}
	case IB_SHAPE_HULL: {
		if (!s->hull) return false;
		const ibHullData* hd = &s->hull->view;
		double size = 0.0;
		for (int i = 0; i < hd->vertexCount; ++i) size = ib_fmax(size, ibLength(hd->vertices[i]));
		int face = -1, on = 0;
		for (int f = 0; f < hd->faceCount; ++f) {
			double d = ibDot(hd->faces[f].normal, l) - hd->faces[f].offset;
			if (d > 1e-9 * size) return false; /* outside */
			if (d >= -1e-9 * size) face = f, ++on;
		}
		if (on != 1) return false;
		nl = hd->faces[face].normal, off = hd->faces[face].offset;
		break;
	}
	case IB_SHAPE_TRIMESH: { /* a triangle's plane; the rim's points must lie on the same plane */
		ibAABB bb = ib_trimesh_bounds(s->trimesh);
		if (!ib_trimesh_face_at(s->trimesh, l, 1e-9 * (1.0 + ibLength(ibSub(bb.hi, bb.lo))), &nl, &off)) return false;
		break;
	}
	default: return false;
	}
	ibVec3 nw = ibRotate(sq, nl);
	if (pn) *pn = nw;
	if (pd) *pd = off + ibDot(nw, sp);
	return true;
}

/* a material point of the row's body side (0: body 1) at world point p, its partner fq on the flat face;
 * otherwise (bodies, materials, manifold group) as row c */
static void rim_material_point(const ibWorld* w, const ibContactRow* c, int side, ibVec3 p, ibVec3 fq, ibContactRow* f)
{
	*f = *c;
	f->a = side ? fq : p;
	f->b = side ? p : fq;
	f->gap = ibDot(ibSub(f->a, f->b), c->n);
	if (side) f->rad2 = 0.0;
	else f->rad1 = 0.0;
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	f->la = f->ta = ibMat3_MulTV(x->R, ibSub(f->a, x->st.s));
	f->lb = f->tb = ibMat3_MulTV(y->R, ibSub(f->b, y->st.s));
	ib_contact_set_normal(w, f);
	f->K = ib_contact_response(w, f->b1, f->a, f->b2, f->b);
	f->nKn = ibDot(f->n, ibMat3_MulV(f->K, f->n));
	f->kinv = 0;
	f->accN = f->accVN = 0.0;
	f->accT = IB_VEC3_ZERO;
}

int ib_contact_flat_rim(const ibWorld* w, ibContactRow* c, double reach, ibContactRow f[3])
{
	for (int side = 0; side < 2; ++side) {
		double rad = side ? c->rad2 : c->rad1;
		ibVec3 ax = side ? c->ax2 : c->ax1;
		int32_t bi = side ? c->b2 : c->b1, other = side ? c->s1 : c->s2;
		if (!(rad > 0.0) || ibLengthSq(ax) == 0.0 || across_axis(w, bi, ax, c->n)) continue; /* not a rim */
		ibVec3 p = side ? c->b : c->a, q = side ? c->a : c->b; /* the round point and its partner */
		ibVec3 pn;
		double pd;
		if (!flat_face_at(w, other, q, &pn, &pd)) continue;
		double pnn = ibDot(pn, c->n);
		if (!(fabs(pnn) > 0.5)) continue;
		const ibBody* b = &w->bodies[bi];
		ibVec3 core = ibAdd(b->st.s, ibMat3_MulV(b->R, side ? c->lc2 : c->lc1));
		ibVec3 r = ibSub(p, core), z = ibMat3_MulV(b->R, ax), t = ibCross(z, r);
		const ibVec3 pts[3] = {ibSub(core, r), ibAdd(core, t), ibSub(core, t)}; /* 180 and +-90 degrees round the rim */
		/* their height over the face's plane (the far one first), beyond the round point's */
		double h0 = ibDot(pn, p) - pd;
		if (!(ibDot(pn, pts[0]) - pd - h0 <= reach)) return -1;
		int k = 0;
		for (int i = 0; i < 3; ++i) {
			ibVec3 fq = ibMulAdd(pts[i], (pd - ibDot(pn, pts[i])) / pnn, c->n); /* along n onto the face's plane */
			if (!flat_face_at(w, other, fq, NULL, NULL)) continue; /* beyond the face's edge */
			rim_material_point(w, c, side, pts[i], fq, &f[k]);
			f[k].key = c->key ^ (0x9e3779b9u * (uint32_t)(i + 1));
			f[k].gIdx = 0; /* a point of its own, not of c's manifold group */
			f[k].gCount = 1;
			++k;
		}
		rim_material_point(w, c, side, p, q, c); /* the round point itself */
		return k;
	}
	return -1;
}

/* [IMPL] What the normal of a point between two dynamic bodies turns with (ibContactRow.nBody), where
 * either shape is round. Turning with a sphere, the normal spun with it: a ball rolling at 2 m/s on a
 * dynamic board slowed to 0.77 m/s in 2 s and sank 5.5 mm, a ball spinning at 20 rad/s pushed its
 * frictionless neighbour 4.4 cm away in 2 s.
 * - two spheres or capsules: the line of their cores (3);
 * - a sphere or capsule on a face of a box or hull, a cylinder's round point on anything not round: the
 *   other body;
 * - a sphere or capsule on an edge or corner of a box or hull: the line from its core to the other's
 *   carried point (4: core on body 1, 5: on body 2). Turning with the box there, the 10-course wall of test_contact_wall
 *   (a pendulum ball hitting stones that tumble) penetrated 3.9e-3 m at the impact;
 * - a sphere or capsule on a cylinder's side: the line of the cores across the cylinder's axis (6, 7);
 * - two cylinders side to side (n across both axes): with parallel axes (IB_CYLINDERS_CROSSING) the line of the
 *   cores across body 2's axis (8), else the direction across both axes at t0, held for the step (9; z1 x z2 at
 *   the predicted poses turned with a fast-turning cylinder and made the loops diverge). Turning with a
 *   cylinder spinning about its axis, the normal pushed a frictionless neighbour lying beside it 4.4 cm
 *   away in 2 s;
 * - a sphere or capsule on a cylinder's rim (a round point whose n is not across the axis): from the
 *   nearest point of the rim's circle to its core (10: the rim on body 2, 11: on body 1). Turning with a
 *   disc spinning about its axis, the normal pushed a frictionless ball touching its upper rim 0.18 m
 *   away in 2 s;
 * - else (meshes, a cylinder's rim on another cylinder) body 2, as between other shapes. */
static int normal_body(const ibWorld* w, const ibContactRow* c)
{
	const bool p1 = c->rad1 > 0.0 && ibLengthSq(c->ax1) == 0.0, p2 = c->rad2 > 0.0 && ibLengthSq(c->ax2) == 0.0;
	if (p1 && p2) return 3;
	if (p2 && !(c->rad1 > 0.0)) {
		if (!flat_shape(&w->shapes[c->s1])) return 2;
		return on_one_face(w, c->s1, c->a) ? 1 : 5;
	}
	if (p1 && !(c->rad2 > 0.0)) {
		if (!flat_shape(&w->shapes[c->s2])) return 2;
		return on_one_face(w, c->s2, c->b) ? 2 : 4;
	}
	/* a sphere or capsule on a cylinder's side (n across its axis): the line of the cores without its
	 * part along the cylinder's axis (6: the cylinder is body 2, 7: body 1) */
	if (p1 && c->rad2 > 0.0 && across_axis(w, c->b2, c->ax2, c->n)) return 6;
	if (p2 && c->rad1 > 0.0 && across_axis(w, c->b1, c->ax1, c->n)) return 7;
	if (p1 && c->rad2 > 0.0) return 10; /* on a rim: the core outside the rim's radius (round_point) */
	if (p2 && c->rad1 > 0.0) return 11;
	if (c->rad2 > 0.0 && !(c->rad1 > 0.0)) return 1; /* a cylinder's round point */
	if (c->rad1 > 0.0 && c->rad2 > 0.0 && across_axis(w, c->b1, c->ax1, c->n) && across_axis(w, c->b2, c->ax2, c->n)) {
		/* two cylinders, side to side: parallel or crossing axes (IB_CYLINDERS_CROSSING; it was 1e-6, and a
		 * 3-2-1 pile of logs gained 787 J in its first step, one log on two 248 J after 2 s) */
		ibVec3 z1 = ibMat3_MulV(w->bodies[c->b1].R, c->ax1), z2 = ibMat3_MulV(w->bodies[c->b2].R, c->ax2);
		return ibLength(ibCross(z1, z2)) <= IB_CYLINDERS_CROSSING ? 8 : 9;
	}
	return 2;
}

void ib_contact_set_normal(const ibWorld* w, ibContactRow* c)
{
	const ibBody* x = &w->bodies[c->b1];
	const ibBody* y = &w->bodies[c->b2];
	/* the normal rotates with body 2 unless body 2 moves and body 1 does not */
	c->nBody = (ib_is_dynamic(y) && !ib_is_dynamic(x)) ? 1 : 2;
	if (ib_is_dynamic(x) && ib_is_dynamic(y)) c->nBody = normal_body(w, c);
	c->ln = ibMat3_MulTV(c->nBody == 1 || c->nBody == 4 ? x->R : y->R, c->n);
}

/* a shape whose contact points may be round points (round_point) or a cylinder's rim samples */
static bool round_shape(const ibShape* s) { return s->type == IB_SHAPE_SPHERE || s->type == IB_SHAPE_CAPSULE || s->type == IB_SHAPE_CYLINDER; }

/* a round point of this manifold (rows first .. count-1) with the same core and axis on both sides */
static bool same_round_point(const ibContactStore* cs, int32_t first, const ibContactRow* c)
{
	const double tol = 1e-9;
	for (int32_t q = first; q < cs->count; ++q) {
		const ibContactRow* o = &cs->pts[q];
		if (o->rad1 != c->rad1 || o->rad2 != c->rad2) continue;
		if (c->rad1 > 0.0 && (ibLengthSq(ibSub(o->lc1, c->lc1)) > tol * tol || ibLengthSq(ibSub(o->ax1, c->ax1)) > tol * tol)) continue;
		if (c->rad2 > 0.0 && (ibLengthSq(ibSub(o->lc2, c->lc2)) > tol * tol || ibLengthSq(ibSub(o->ax2, c->ax2)) > tol * tol)) continue;
		if (c->rad1 <= 0.0 && ibLengthSq(ibSub(o->a, c->a)) > tol * tol) continue;
		if (c->rad2 <= 0.0 && ibLengthSq(ibSub(o->b, c->b)) > tol * tol) continue;
		return true;
	}
	return false;
}

/* The points of one manifold of a pair (mixed materials, response, local points); skips pairs
 * without a dynamic body and sleeping or jointed pairs. false on OOM. */
bool ib_contacts_add_pair(ibWorld* w, ibContactStore* cs, const ibContactPair* pr)
{
	const ibContactSettings* set = &w->solver.contact;
	const ibBody* x = &w->bodies[pr->bodyA];
	const ibBody* y = &w->bodies[pr->bodyB];
	if (!ib_is_dynamic(x) && !ib_is_dynamic(y)) return true;
	if (ib_sleep_pair_inactive(w, pr->bodyA, pr->bodyB)) return true; /* sleeping (src/dynamics/sleep.h) */
	if (jointed(w, pr->bodyA, pr->bodyB)) return true;
	const ibMaterial* ma = &w->shapes[pr->shapeA].material;
	const ibMaterial* mb = &w->shapes[pr->shapeB].material;
	double e = ib_contact_pair_restitution(w, &w->shapes[pr->shapeA], &w->shapes[pr->shapeB]);
	double mus = ib_fmax(0.0, mix(set->frictionMixing, ma->staticFriction, mb->staticFriction));
	double mud = ib_fmax(0.0, mix(set->frictionMixing, ma->dynamicFriction, mb->dynamicFriction));
	const ibManifold* m = &pr->manifold;
	ibVec3 n = ibNormalize(m->normal);
	if (!ibVec3_IsFinite(n) || ibLengthSq(n) < 0.5) return true;
	if (!ib_grow(w, (void**)&cs->pts, &cs->capacity, cs->count + m->pointCount, sizeof(ibContactRow))) return false;
	int32_t first = cs->count;
	/* (no round point nor rim sample between other shapes: rad, lc and ax stay 0) */
	const bool round = round_shape(&w->shapes[pr->shapeA]) || round_shape(&w->shapes[pr->shapeB]);
	for (int i = 0; i < m->pointCount; ++i) {
		ibContactRow* c = &cs->pts[cs->count];
		memset(c, 0, sizeof *c);
		c->b1 = pr->bodyA;
		c->b2 = pr->bodyB;
		c->a = m->points[i].pointA;
		c->b = m->points[i].pointB;
		c->n = n;
		c->s1 = pr->shapeA;
		c->s2 = pr->shapeB;
		c->gap = m->points[i].separation;
		if (round && ib_contact_set_round(w, c) && same_round_point(cs, first, c)) continue; /* a point found twice */
		c->la = ibMat3_MulTV(x->R, ibSub(c->a, x->st.s));
		c->lb = ibMat3_MulTV(y->R, ibSub(c->b, y->st.s));
		c->ta = c->la;
		c->tb = c->lb;
		ib_contact_set_normal(w, c);
		c->e = e;
		c->mus = mus;
		c->mud = mud;
		c->K = ib_contact_response(w, c->b1, c->a, c->b2, c->b);
		c->nKn = ibDot(n, ibMat3_MulV(c->K, n));
		c->key = m->points[i].key;
		c->warm = -1;
		if (!(c->nKn > 0.0)) continue;
		cs->count++;
	}
	int32_t out = first;
	for (int32_t q = first; q < cs->count; ++q) {
		if (round && ib_contact_rim_sample(w, cs, first, cs->count, &cs->pts[q])) continue;
		if (out != q) cs->pts[out] = cs->pts[q]; /* (a row is 800 bytes: no copy onto itself) */
		++out;
	}
	cs->count = out;
	for (int32_t q = first; q < cs->count; ++q) { /* the manifold's group (contact_patch.c) */
		cs->pts[q].gIdx = (int16_t)(q - first);
		cs->pts[q].gCount = (int16_t)(cs->count - first);
	}
	return true;
}

bool ib_contacts_build(ibWorld* w, ibContactStore* cs)
{
	cs->count = 0;
	cs->restingCount = 0;
	if (!grow_prediction(w, cs)) return false;
	ibContactPair* pairs = NULL;
	int np = ib_collision_contacts(w, &pairs);
	for (int k = 0; k < np; ++k)
		if (!ib_contacts_add_pair(w, cs, &pairs[k])) return false;
	return true;
}
