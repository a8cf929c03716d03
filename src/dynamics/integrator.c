/* Free motion of one rigid body over h (§3.1.2).
 * Translation is exact for the constant external force (eqs 3.2, 3.3). Rotation integrates the
 * Euler equation in the principal (body) frame together with the quaternion (eqs 3.4, 3.7):
 *   dw_l/dt = J_l^-1 (tau_l - w_l x J_l w_l),   dq/dt = 1/2 q (0, w_l),   tau_l = q* tau q,
 * with the world torque held constant over the step (re-rotated into the body frame at every
 * stage). Integrators: RK4 (App. B.1.3; in sub-steps of at most 0.1 rad) or embedded Cash-Karp RK5(4) with
 * step control (B.1.4).
 * Kinematic bodies turn exactly with their constant world angular velocity. */
#include <math.h>

#include "dynamics/world.h"
#include "math/v2.h"

/* largest turn (rad) of one RK4 step of the rotation integral, and the sub-step cap per step */
#define IB_RK4_MAX_TURN 0.1
#define IB_RK4_MAX_SUBSTEPS 256

typedef struct RotState {
	ibQuat q;
	ibVec3 wl;
} RotState;

typedef struct RotParams {
	ibVec3 I, invI, tau; /* principal moments, inverses, world torque */
	bool torque;         /* tau != 0 */
} RotParams;

static inline __attribute__((always_inline)) RotState deriv(const RotParams* p, const RotState* x)
{
	RotState d;
	ibVec3 Lw = ibMulCW(p->I, x->wl);
	ibVec3 gyro = ibCross(x->wl, Lw);
	if (p->torque) /* torque-free (the common case): skip the stage's normalisation and rotation */
		d.wl = ibMulCW(p->invI, ibSub(ibInvRotate(ibQuatNormalize(x->q), p->tau), gyro));
	else
		d.wl = ibMulCW(p->invI, ibNeg(gyro));
	ibQuat wq = {0.0, x->wl.x, x->wl.y, x->wl.z};
	ibQuat qd = ibQuatMul(x->q, wq);
	d.q = (ibQuat){0.5 * qd.w, 0.5 * qd.x, 0.5 * qd.y, 0.5 * qd.z};
	return d;
}

/* x + s * d */
static inline __attribute__((always_inline)) RotState axpy(const RotState* x, double s, const RotState* d)
{
	RotState r;
	r.q = (ibQuat){x->q.w + s * d->q.w, x->q.x + s * d->q.x, x->q.y + s * d->q.y, x->q.z + s * d->q.z};
	r.wl = ibMulAdd(x->wl, s, d->wl);
	return r;
}

static void rk4(const RotParams* p, RotState* x, double h)
{
	RotState k1 = deriv(p, x);
	RotState t = axpy(x, 0.5 * h, &k1);
	RotState k2 = deriv(p, &t);
	t = axpy(x, 0.5 * h, &k2);
	RotState k3 = deriv(p, &t);
	t = axpy(x, h, &k3);
	RotState k4 = deriv(p, &t);
	RotState r = axpy(x, h / 6.0, &k1);
	r = axpy(&r, h / 3.0, &k2);
	r = axpy(&r, h / 3.0, &k3);
	r = axpy(&r, h / 6.0, &k4);
	r.q = ibQuatNormalize(r.q);
	*x = r;
}

/* Cash-Karp coefficients (Table B.1). */
static const double CK_B[6][5] = {
    {0, 0, 0, 0, 0},
    {1.0 / 5.0, 0, 0, 0, 0},
    {3.0 / 40.0, 9.0 / 40.0, 0, 0, 0},
    {3.0 / 10.0, -9.0 / 10.0, 6.0 / 5.0, 0, 0},
    {-11.0 / 54.0, 5.0 / 2.0, -70.0 / 27.0, 35.0 / 27.0, 0},
    {1631.0 / 55296.0, 175.0 / 512.0, 575.0 / 13824.0, 44275.0 / 110592.0, 253.0 / 4096.0},
};
static const double CK_C[6] = {37.0 / 378.0, 0.0, 250.0 / 621.0, 125.0 / 594.0, 0.0, 512.0 / 1771.0};
static const double CK_CS[6] = {2825.0 / 27648.0, 0.0, 18575.0 / 48384.0, 13525.0 / 55296.0, 277.0 / 14336.0, 0.25};

/* One Cash-Karp trial step; returns the scaled error estimate, result in *out. */
static double ck_step(const RotParams* p, const RotState* x, double h, RotState* out)
{
	RotState k[6];
	k[0] = deriv(p, x);
	for (int j = 1; j < 6; ++j) {
		RotState t = *x;
		for (int l = 0; l < j; ++l) t = axpy(&t, h * CK_B[j][l], &k[l]);
		k[j] = deriv(p, &t);
	}
	RotState r = *x, e = {{0, 0, 0, 0}, {0, 0, 0}};
	for (int j = 0; j < 6; ++j) {
		r = axpy(&r, h * CK_C[j], &k[j]);
		e = axpy(&e, h * (CK_C[j] - CK_CS[j]), &k[j]);
	}
	*out = r;
	/* error relative to the magnitude of each state component (quaternion components are O(1)) */
	double wscale = 1.0 + ibLength(x->wl);
	double eq = fmax(fmax(fabs(e.q.w), fabs(e.q.x)), fmax(fabs(e.q.y), fabs(e.q.z)));
	double ew = fmax(fmax(fabs(e.wl.x), fabs(e.wl.y)), fabs(e.wl.z)) / wscale;
	return fmax(eq, ew);
}

static int cash_karp(const RotParams* p, RotState* x, double h, double tol, int maxSub, double* hint)
{
	double t = 0.0;
	double hs = (*hint > 0.0 && *hint < h) ? *hint : h;
	int accepted = 0, trials = 0;
	while (t < h) {
		double step = fmin(hs, h - t);
		bool last = step >= h - t;
		if (accepted + 1 >= maxSub || trials > 4 * maxSub) { /* cap: finish with one RK4 step */
			rk4(p, x, h - t);
			++accepted;
			break;
		}
		RotState trial;
		double err = ck_step(p, x, step, &trial);
		++trials;
		if (!isfinite(err)) err = 1e300;
		double factor = err > 0.0 ? 0.9 * pow(tol / err, 0.2) : 5.0;
		if (err <= tol) {
			trial.q = ibQuatNormalize(trial.q);
			*x = trial;
			t = last ? h : t + step;
			++accepted;
			if (!last || step == hs) hs = step * fmin(5.0, fmax(0.2, factor));
		} else {
			hs = step * fmax(0.1, factor);
		}
	}
	*hint = hs;
	return accepted;
}

/* [IMPL] Torque-free body with two equal principal moments A (the third C about the principal axis
 * e_u): the Euler equation has the closed-form solution (regular precession)
 *     R(t) = exp(t [w_L]x) R0 exp(t nu [e_u]x),   w_L = L / A,   nu = w_u (A - C) / A,
 * with L the constant world angular momentum and w_u the body-frame spin about e_u, which is
 * constant: the angular velocity in the body frame is R^T w_L + nu e_u (check: J^-1 R^T L). In the
 * world w(t) = w_L + nu R(t) e_u, so w_L = w(0) - nu R0 e_u. Exact, and ~3x cheaper than RK4 (the
 * links of chains and trees are such boxes; the joint correction predicts them several times per
 * step). False if the moments are not of this kind. */
static inline ibVec3 quat_column(ibQuat q, int u) /* R(q) e_u */
{
	if (u == 0) return ibV3(1.0 - 2.0 * (q.y * q.y + q.z * q.z), 2.0 * (q.x * q.y + q.w * q.z), 2.0 * (q.x * q.z - q.w * q.y));
	if (u == 1) return ibV3(2.0 * (q.x * q.y - q.w * q.z), 1.0 - 2.0 * (q.x * q.x + q.z * q.z), 2.0 * (q.y * q.z + q.w * q.x));
	return ibV3(2.0 * (q.x * q.z + q.w * q.y), 2.0 * (q.y * q.z - q.w * q.x), 1.0 - 2.0 * (q.x * q.x + q.y * q.y));
}


/* Taylor series at x2 = (|r|/2)^2 of cos (lane 0) and sin(x)/x (lane 1):
 * 1 + x2 (k[0] + x2 (k[1] + ... + x2 k[5])), truncation < 1e-19 below 0.5 rad */
static const ibV2 COS_SINC[6] = {{-1.0 / 2.0, -1.0 / 6.0},           {1.0 / 24.0, 1.0 / 120.0},
                                 {-1.0 / 720.0, -1.0 / 5040.0},      {1.0 / 40320.0, 1.0 / 362880.0},
                                 {-1.0 / 3628800.0, -1.0 / 39916800.0}, {1.0 / 479001600.0, 1.0 / 6227020800.0}};

/* The series by Horner lane by lane: lane < 0 both series (cos, sinc) at X; lane 0 or 1 that series in
 * both lanes (two bodies' X). The same operations in every use, so the same bits. */
static inline __attribute__((always_inline)) ibV2 cos_sinc(ibV2 X, int lane)
{
	ibV2 p = X * (lane < 0 ? COS_SINC[5] : (ibV2){COS_SINC[5][lane], COS_SINC[5][lane]});
#pragma GCC unroll 5
	for (int k = 4; k >= 0; --k) p = X * ((lane < 0 ? COS_SINC[k] : (ibV2){COS_SINC[k][lane], COS_SINC[k][lane]}) + p);
	return (ibV2){1.0, 1.0} + p;
}

/* exp of a rotation vector as a quaternion; below 0.5 rad by the Taylor series of cos(x) and
 * sin(x)/x at x = |r|/2 (no libm call), else ibQuat_FromRotationVector */
static inline ibQuat rotation_quat(ibVec3 r)
{
	double t2 = ibLengthSq(r);
	if (!(t2 < 0.25)) return ibQuat_FromRotationVector(r);
	double x2 = 0.25 * t2;
	ibV2 p = cos_sinc((ibV2){x2, x2}, -1);
	double c = p[0], sx = p[1];
	double f = 0.5 * sx; /* sin(|r|/2) / |r| */
	return (ibQuat){c, f * r.x, f * r.y, f * r.z};
}

/* w_L and nu of the regular precession from the state at t0 (see below); pt: the pose's terms
 * (q(t0) normalised, R0 e_u), valid */
static inline __attribute__((always_inline)) void precession(const ibBody* b, double A, double C, ibVec3* wL, double* nu,
                                                             ibPoseTerms* pt)
{
	*nu = ibDot(pt->axis, b->st.w) * (A - C) / A;
	*wL = ibMulAdd(b->st.w, -*nu, pt->axis);
}

/* A and C of an axisymmetric body about its principal axis u (ib_inertia_class' choice) */
static inline __attribute__((always_inline)) void axis_moments(ibVec3 I, int u, double* A, double* C)
{
	if (u == 2)
		*A = I.x, *C = I.z;
	else if (u == 1)
		*A = I.x, *C = I.y;
	else
		*A = I.y, *C = I.x;
}

/* out->q over h of an axisymmetric body about its principal axis u; out->w too unless !withW (a
 * prediction of the pose only) */
static inline __attribute__((always_inline)) void axisymmetric_rotation(const ibBody* b, double h, int u, ibRigidState* out, bool withW,
                                                                        ibPrecession* pc, ibPoseTerms* pt)
{
	double A, C;
	axis_moments(b->inertiaP, u, &A, &C);
	ibPoseTerms local = {.valid = false};
	if (!pt) pt = &local;
	if (!pt->valid) ib_pose_terms(b, pt); /* the same pose: the same q0 and axis */
	const ibQuat q0 = pt->q0;
	ibVec3 wL;
	double nu;
	precession(b, A, C, &wL, &nu, pt);
	ibQuat spin = rotation_quat(ibScale(h * nu, ibV3(u == 0, u == 1, u == 2)));
	ibQuat q = ibQuatMul(rotation_quat(ibScale(h, wL)), ibQuatMul(q0, spin));
	out->q = ibQuatNormalize(q);
	if (withW) {
		out->w = ibMulAdd(wL, nu, quat_column(out->q, u));
	} else {
		pc->wL = wL;
		pc->nu = nu;
	}
}

/* 1e-12 of the largest principal moment: the tolerance of "equal moments" */
static inline double moment_tolerance(ibVec3 I)
{
	double Iyz = I.y > I.z ? I.y : I.z; /* fmax without the libm call: the moments are finite and >= 0 */
	return 1e-12 * (I.x > Iyz ? I.x : Iyz);
}

static inline bool torque_free(const ibBody* b) { return b->text.x == 0.0 && b->text.y == 0.0 && b->text.z == 0.0; }

int ib_inertia_class(ibVec3 I)
{
	double tolI = moment_tolerance(I);
	if (fabs(I.x - I.y) <= tolI && fabs(I.x - I.z) <= tolI) return IB_INERTIA_SPHERICAL;
	/* the unique principal axis of an axisymmetric body (axis_moments gives its A and C) */
	if (fabs(I.x - I.y) <= tolI) return IB_INERTIA_AXIS_Z;
	if (fabs(I.x - I.z) <= tolI) return IB_INERTIA_AXIS_Y;
	if (fabs(I.y - I.z) <= tolI) return IB_INERTIA_AXIS_X;
	return IB_INERTIA_GENERAL;
}

/* ib_integrate_body, or with pose only the position and orientation (the same arithmetic) and the
 * velocities where they cost nothing extra; returns whether out->v and out->w are set. */
static inline __attribute__((always_inline)) bool integrate(const ibWorld* w, const ibBody* b, double h, ibRigidState* out,
                                                            double* hint, int* substeps, bool pose, ibPrecession* pc,
                                                            ibPoseTerms* pt)
{
	if (substeps) *substeps = 1;
	if (b->type == IB_BODY_STATIC) {
		*out = b->st;
		return true;
	}
	if (b->type == IB_BODY_KINEMATIC) {
		*out = b->st;
		out->s = ibMulAdd(b->st.s, h, b->st.v);
		out->q = ibQuatNormalize(ibQuatMul(ibQuat_FromRotationVector(ibScale(h, b->st.w)), b->st.q));
		return true;
	}
	/* eqs 3.3 and 3.2 (uses the old velocity for the position) */
	out->s = ibAdd(b->st.s, ibAdd(ibScale(h, b->st.v), ibScale(0.5 * h * h * b->invMass, b->fext)));
	if (!pose) out->v = ibMulAdd(b->st.v, h * b->invMass, b->fext);

	/* [IMPL] no torque and equal principal moments (cubes, spheres): the Euler equation gives a
	 * constant angular velocity, and the rotation over h is exactly exp(h w)
	 * (b->inertiaClass: ib_inertia_class of the moments, kept with them) */
	int cls = b->inertiaClass;
	bool noTorque = torque_free(b);
	if (noTorque && cls == IB_INERTIA_SPHERICAL) {
		out->q = ibQuatNormalize(ibQuatMul(ibQuat_FromRotationVector(ibScale(h, b->st.w)), b->st.q));
		out->w = b->st.w;
		if (pose) out->v = ibMulAdd(b->st.v, h * b->invMass, b->fext);
		return true;
	}
	if (noTorque && cls != IB_INERTIA_GENERAL) {
		axisymmetric_rotation(b, h, cls - IB_INERTIA_AXIS_X, out, !pose, pc, pt);
		return !pose;
	}
	if (pose) out->v = ibMulAdd(b->st.v, h * b->invMass, b->fext);
	RotParams p = {b->inertiaP, b->invInertiaP, b->text, !noTorque};
	RotState x = {b->st.q, ibInvRotate(b->st.q, b->st.w)};
	if (w->solver.integrator == IB_INTEGRATOR_CASH_KARP) {
		double localHint = hint ? *hint : 0.0;
		int n = cash_karp(&p, &x, h, w->solver.integratorTolerance, w->solver.integratorMaxSubsteps, &localHint);
		if (hint) *hint = localHint;
		if (substeps) *substeps = n;
	} else {
		/* [IMPL] RK4 in sub-steps of at most IB_RK4_MAX_TURN: one RK4 step over a turn of ~1 rad lost energy
		 * (a box 0.12 x 0.04 x 0.38 m spinning at 52 rad/s, 60 Hz: 4.4 % in 2 s) and over ~2 rad went to NaN
		 * within the second (found in session 21 by random drops: such bodies, spun up by impacts, took whole
		 * scenes to NaN). At 0.1 rad the drift of the same box is 5e-7 in 2 s; bodies turning slower are
		 * integrated as before. */
		double turn = ibLength(x.wl) * h;
		int n = turn > IB_RK4_MAX_TURN ? (int)fmin(ceil(turn / IB_RK4_MAX_TURN), IB_RK4_MAX_SUBSTEPS) : 1;
		for (int i = 0; i < n; ++i) rk4(&p, &x, h / n);
		if (substeps) *substeps = n;
	}
	out->q = x.q;
	out->w = ibRotate(x.q, x.wl);
	return true;
}

void ib_integrate_body(const ibWorld* w, const ibBody* b, double h, ibRigidState* out, double* hint, int* substeps)
{
	integrate(w, b, h, out, hint, substeps, false, NULL, NULL);
}

bool ib_integrate_pose(const ibWorld* w, const ibBody* b, double h, ibRigidState* out, double* hint, ibPrecession* pc,
                       ibPoseTerms* pt)
{
	return integrate(w, b, h, out, hint, NULL, true, pc, pt);
}

void ib_integrate_velocities(const ibBody* b, double h, const ibPrecession* pc, ibRigidState* out)
{
	out->v = ibMulAdd(b->st.v, h * b->invMass, b->fext);
	int u = b->inertiaClass - IB_INERTIA_AXIS_X; /* axisymmetric: ib_integrate_pose returned false */
	out->w = ibMulAdd(pc->wL, pc->nu, quat_column(out->q, u));
}

void ib_pose_terms(const ibBody* b, ibPoseTerms* pt)
{
	pt->q0 = ibQuatNormalize(b->st.q);
	pt->axis = quat_column(pt->q0, b->inertiaClass - IB_INERTIA_AXIS_X);
	pt->valid = true;
}

/* ---- two bodies at once: the axisymmetric pose-only prediction lane by lane (SSE2 pairs) ---- */
typedef struct Q2 {
	ibV2 w, x, y, z;
} Q2;

/* rotation_quat of (rx, ry, rz) in both lanes; false if a lane is not below 0.5 rad (the libm path) */
static inline __attribute__((always_inline)) bool rotation_quat2(ibV2 rx, ibV2 ry, ibV2 rz, Q2* q)
{
	ibV2 t2 = rx * rx + ry * ry + rz * rz;
	if (!(t2[0] < 0.25 && t2[1] < 0.25)) return false;
	ibV2 x2 = ib_v2_bc(0.25) * t2;
	ibV2 f = ib_v2_bc(0.5) * cos_sinc(x2, 1);
	*q = (Q2){cos_sinc(x2, 0), f * rx, f * ry, f * rz};
	return true;
}

/* ibQuatMul lane by lane */
static inline __attribute__((always_inline)) Q2 quat_mul2(Q2 a, Q2 b)
{
	return (Q2){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
	            a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z, a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x};
}

bool ib_integrate_pose2(const ibBody* const b[2], double h, const ibPoseTerms* const pt[2], ibRigidState* const out[2],
                        ibPrecession* const pc[2])
{
	int u = b[0]->inertiaClass - IB_INERTIA_AXIS_X;
	double A[2], C[2];
	for (int l = 0; l < 2; ++l) axis_moments(b[l]->inertiaP, u, &A[l], &C[l]);
#define IB_P2(expr0, expr1) ((ibV2){(expr0), (expr1)})
#define IB_F2(field) IB_P2(b[0]->field, b[1]->field)
	const ibV2 H = ib_v2_bc(h);
	const ibV2 wx = IB_F2(st.w.x), wy = IB_F2(st.w.y), wz = IB_F2(st.w.z);
	const ibV2 ax = IB_P2(pt[0]->axis.x, pt[1]->axis.x), ay = IB_P2(pt[0]->axis.y, pt[1]->axis.y),
	           az = IB_P2(pt[0]->axis.z, pt[1]->axis.z);
	const ibV2 vA = IB_P2(A[0], A[1]), vC = IB_P2(C[0], C[1]);
	/* precession: nu = (axis . w) (A - C) / A, w_L = w + (-nu) axis */
	const ibV2 nu = (ax * wx + ay * wy + az * wz) * (vA - vC) / vA;
	const ibV2 mnu = -nu;
	const ibV2 wLx = wx + mnu * ax, wLy = wy + mnu * ay, wLz = wz + mnu * az;
	/* spin = rotation_quat((h nu) e_u), then rotation_quat(h w_L) */
	const ibV2 hn = H * nu;
	Q2 spin, rw;
	if (!rotation_quat2(hn * ib_v2_bc(u == 0), hn * ib_v2_bc(u == 1), hn * ib_v2_bc(u == 2), &spin)) return false;
	if (!rotation_quat2(H * wLx, H * wLy, H * wLz, &rw)) return false;
	const Q2 q0 = {IB_P2(pt[0]->q0.w, pt[1]->q0.w), IB_P2(pt[0]->q0.x, pt[1]->q0.x), IB_P2(pt[0]->q0.y, pt[1]->q0.y),
	               IB_P2(pt[0]->q0.z, pt[1]->q0.z)};
	const Q2 q = quat_mul2(rw, quat_mul2(q0, spin));
	/* ibQuatNormalize */
	const ibV2 n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
	const ibV2 n = IB_P2(sqrt(n2[0]), sqrt(n2[1]));
	if (n[0] == 0.0 || n[1] == 0.0) return false;
	const ibV2 sc = ib_v2_bc(1.0) / n;
	const Q2 qn = {q.w * sc, q.x * sc, q.y * sc, q.z * sc};
	/* eq. 3.3: s + (h v + (0.5 h h / m) f) */
	const ibV2 k = ib_v2_bc(0.5) * H * H * IB_F2(invMass);
	const ibV2 sx = IB_F2(st.s.x) + (H * IB_F2(st.v.x) + k * IB_F2(fext.x));
	const ibV2 sy = IB_F2(st.s.y) + (H * IB_F2(st.v.y) + k * IB_F2(fext.y));
	const ibV2 sz = IB_F2(st.s.z) + (H * IB_F2(st.v.z) + k * IB_F2(fext.z));
#undef IB_F2
#undef IB_P2
	for (int l = 0; l < 2; ++l) {
		out[l]->s = ibV3(sx[l], sy[l], sz[l]);
		out[l]->q = (ibQuat){qn.w[l], qn.x[l], qn.y[l], qn.z[l]};
		pc[l]->wL = ibV3(wLx[l], wLy[l], wLz[l]);
		pc[l]->nu = nu[l];
	}
	return true;
}

void ib_predict_pose(const ibWorld* w, const ibBody* b, double h, ibVec3* s, ibQuat* q)
{
	ibRigidState st;
	double hint = b->substepHint;
	ib_integrate_body(w, b, h, &st, &hint, NULL);
	*s = st.s;
	*q = st.q;
}
