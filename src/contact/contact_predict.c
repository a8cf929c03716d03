/* Predicted poses of the contact joints' bodies after a free step and the points, normals and static-friction
 * anchors measured there (eq. 5.11, digest item 11): exact (the world's integrator), linearised in the change of
 * the velocities while the rotation per step stays small, or as frames (E(t) R0 applied to vectors without
 * forming it). */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "dynamics/world.h"

void ib_contact_points_at(const ibContactRow* c, ibVec3 s1, const ibMat3* R1, ibVec3 s2, const ibMat3* R2, ibVec3 n, ibVec3* a, ibVec3* b)
{
	*a = c->rad1 > 0.0 ? ib_contact_round_at(s1, R1, c->lc1, -c->rad1, c->ax1, n) : ibAdd(s1, ibMat3_MulV(*R1, c->la));
	*b = c->rad2 > 0.0 ? ib_contact_round_at(s2, R2, c->lc2, c->rad2, c->ax2, n) : ibAdd(s2, ibMat3_MulV(*R2, c->lb));
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
		*a = ibMulAdd(c->a, h, ib_contact_point_velocity(&w->bodies[c->b1], c->a));
		*b = ibMulAdd(c->b, h, ib_contact_point_velocity(&w->bodies[c->b2], c->b));
	}
}

/* the anchors' offset of a fast-turning pair to first order from t0 */
static ibVec3 anchors_first_order(const ibWorld* w, const ibContactRow* c, double h)
{
	ibVec3 A, B;
	ib_contact_anchors_now(w, c, &A, &B);
	return ibMulAdd(ibSub(B, A), h, ibSub(ib_contact_point_velocity(&w->bodies[c->b2], B), ib_contact_point_velocity(&w->bodies[c->b1], A)));
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

void ib_contact_free_prediction(ibWorld* w, ibContactStore* cs)
{
	ib_free(w, cs->predS, (size_t)cs->predCapacity * sizeof(ibVec3));
	ib_free(w, cs->predR, (size_t)cs->predCapacity * sizeof(ibMat3));
	ib_free(w, cs->predVer, (size_t)cs->predCapacity * sizeof(uint32_t));
	ib_free(w, cs->baseS, (size_t)cs->predCapacity * 4 * sizeof(ibVec3));
	ib_free(w, cs->baseR, (size_t)cs->predCapacity * 2 * sizeof(ibMat3));
	ib_free(w, cs->baseOk, (size_t)cs->predCapacity * 2 * sizeof(uint8_t));
	ib_free(w, cs->baseWLen, (size_t)cs->predCapacity * sizeof(double));
}

bool ib_contact_grow_prediction(ibWorld* w, ibContactStore* cs)
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
	ib_contact_free_prediction(w, cs);
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

