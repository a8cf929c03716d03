/* Solving the soft–rigid contacts (issue 7 part 3), two-way, with Coulomb friction; detection in
 * soft_contact_detect.c, the resumption from the rigid contact loop in soft_contact_loop.c.
 *
 * Each contact is a constraint with 3 columns per soft particle (weight wt_i: 1 for a vertex,
 * the barycentric weights of a point on a soft triangle) and 6 for the body: the normal row
 * C = (sum wt_i x_i - q)·n with q and n carried with the body, and a tangential row pair. They are
 * clamped soft rows, swept with the soft internal rows, the rigid joints and the rigid–soft joints
 * (the soft sweeps), and again inside the rigid contact loop (every contact sweep resumes the soft
 * sweeps, soft_contact_loop.c), so rigid contacts, particle contacts and soft rows converge
 * together:
 *  - joint correction at t0 (eq. 5.11 generalised): predicted gap g after a free step; while
 *    g < 0 (or g > 0 with a positive accumulated impulse) p_n = -g/(h nᵀKn), accumulated >= 0,
 *    K = sum wt_i²/m_i I + K_body(q); friction cancels the predicted tangential slip, accumulated
 *    friction clamped to the disc mu accN (mu_s for points that were sticking at t0, else mu_d) —
 *    the clamped case is exactly Coulomb's dynamic friction mu_d |p_n| opposite the slip;
 *  - velocity correction at t0+h: u_n >= 0 with its own accumulated clamp, friction as above.
 * An impulse P acts as wt_i P on particle i and -P at q on the body (sum wt_i = 1: momentum is
 * conserved). Collisions are resolved by the same rows (inelastic, e = 0): the joint correction
 * already prevents the predicted penetration, the velocity correction removes the approach speed.
 * Friction coefficients are the shape's material (particles have none). */
#include <math.h>

#include "soft/soft_internal.h"

static inline ibVec3 ib_tangential(ibVec3 v, ibVec3 n) { return ibMulAdd(v, -ibDot(v, n), n); }

/* K of a body point (lever r from the COM): invMass I - [r]x I^-1 [r]x; zero unless dynamic. */
static ibMat3 body_point_k(const ibBody* b, ibVec3 r)
{
	ibMat3 K = {{{0}}};
	if (!ib_is_dynamic(b)) return K;
	ibMat3 S = ibMat3_Skew(r);
	K = ibMat3_Scale(-1.0, ibMat3_Mul(S, ibMat3_Mul(b->invInertiaW, S)));
	for (int i = 0; i < 3; ++i) K.m[i][i] += b->invMass;
	return K;
}

/* The weighted soft point's position (predicted over h, or current with h = 0) and velocity. */
static ibVec3 soft_point(const ibSoftStore* ss, const ibSoftContact* k, double h)
{
	ibVec3 x = IB_VEC3_ZERO;
	for (int i = 0; i < k->np; ++i) {
		const ibParticle* p = &ss->particles[k->p[i]];
		ibVec3 xi = ibAdd(p->x, ibAdd(ibScale(h, p->v), ibScale(0.5 * h * h * p->invMass, p->f)));
		x = ibMulAdd(x, k->wt[i], xi);
	}
	return x;
}

static ibVec3 soft_velocity(const ibSoftStore* ss, const ibSoftContact* k)
{
	ibVec3 v = IB_VEC3_ZERO;
	for (int i = 0; i < k->np; ++i) v = ibMulAdd(v, k->wt[i], ss->particles[k->p[i]].v);
	return v;
}

/* K and nᵀKn of a contact at the current pose from its weights, lq and ln. */
static void contact_k(ibWorld* w, const ibSoftStore* ss, ibSoftContact* k)
{
	const ibBody* b = &w->bodies[k->body];
	k->K = body_point_k(b, ibMat3_MulV(b->R, k->lq));
	double im = 0.0;
	for (int i = 0; i < k->np; ++i) im += k->wt[i] * k->wt[i] * ss->particles[k->p[i]].invMass;
	for (int i = 0; i < 3; ++i) k->K.m[i][i] += im;
	ibVec3 n = ibMat3_MulV(b->R, k->ln);
	k->kn = ibDot(n, ibMat3_MulV(k->K, n));
}

/* A sphere against a soft triangle (nonlinear row): the point of the predicted triangle closest to
 * the predicted centre becomes the contact (weights, normal and sphere point), so the gap is the
 * exact predicted distance minus the radius also while the triangle turns over the sphere. */
static void reproject_sphere(ibWorld* w, ibSoftStore* ss, ibSoftContact* k, double h)
{
	const ibBody* b = &w->bodies[k->body];
	ibVec3 s = b->st.s;
	ibMat3 R = b->R;
	if (b->type != IB_BODY_STATIC) {
		const ibPartState* st = ib_soft_body_predicted(w, ss, k->body, h);
		s = st->x;
		R = st->R;
	}
	ibVec3 c = ibAdd(s, ibMat3_MulV(R, k->lc)), x[3];
	for (int i = 0; i < 3; ++i) {
		const ibParticle* p = &ss->particles[k->p[i]];
		x[i] = ibAdd(p->x, ibAdd(ibScale(h, p->v), ibScale(0.5 * h * h * p->invMass, p->f)));
	}
	ibVec3 pc = ib_soft_closest_on_triangle(c, x[0], x[1], x[2]);
	ibVec3 d = ibSub(pc, c);
	double l = ibLength(d);
	if (!(l > 1e-9 * k->radius)) return; /* centre on the triangle: keep the last normal */
	ibVec3 n = ibScale(1.0 / l, d);
	ib_soft_barycentric(pc, x[0], x[1], x[2], k->wt);
	k->ln = ibMat3_MulTV(R, n);
	k->lq = ibMat3_MulTV(R, ibSub(ibMulAdd(c, k->radius, n), s));
	contact_k(w, ss, k);
}

bool ib_soft_contact_finish(ibWorld* w, ibSoftStore* ss, ibSoftContact* k, ibVec3 q, ibVec3 n, double gap)
{
	const ibBody* b = &w->bodies[k->body];
	const ibShape* s = &w->shapes[k->shape];
	k->lq = ibMat3_MulTV(b->R, ibSub(q, b->st.s));
	k->ln = ibMat3_MulTV(b->R, n);
	contact_k(w, ss, k);
	k->mus = fmax(0.0, s->material.staticFriction);
	k->mud = fmax(0.0, s->material.dynamicFriction);
	ibVec3 u = ibSub(soft_velocity(ss, k), ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
	k->sticking = ibLength(ib_tangential(u, n)) <= w->solver.velocityTolerance;
	k->accN = k->accVN = 0.0;
	k->accT = k->accVT = IB_VEC3_ZERO;
	k->gap = gap;
	return k->kn > 0.0;
}

/* Predicted (t0+h) or current surface point and normal of a contact, and the body's velocity there. */
static void carried(ibWorld* w, ibSoftStore* ss, const ibSoftContact* k, bool predicted, double h, ibVec3* q, ibVec3* n)
{
	const ibBody* b = &w->bodies[k->body];
	if (predicted && b->type != IB_BODY_STATIC) {
		const ibPartState* st = ib_soft_body_predicted(w, ss, k->body, h);
		*q = ibAdd(st->x, ibMat3_MulV(st->R, k->lq));
		*n = ibMat3_MulV(st->R, k->ln);
	} else {
		*q = ibAdd(b->st.s, ibMat3_MulV(b->R, k->lq));
		*n = ibMat3_MulV(b->R, k->ln);
	}
}

/* Impulse wt_i P on the particles, -P on the body at its contact point (current pose). */
static void apply(ibWorld* w, ibSoftStore* ss, const ibSoftContact* k, ibVec3 P)
{
	for (int i = 0; i < k->np; ++i) {
		ibParticle* p = &ss->particles[k->p[i]];
		if (p->invMass > 0.0) p->v = ibMulAdd(p->v, p->invMass * k->wt[i], P);
	}
	ibBody* b = &w->bodies[k->body];
	if (ib_is_dynamic(b)) ib_body_apply_impulse(b, ibNeg(P), ibAdd(b->st.s, ibMat3_MulV(b->R, k->lq)));
}

/* Friction: cancel the tangential defect d (slip over h, or velocity with h = 1) within the
 * disc |acc| <= limit; returns the magnitude of the impulse applied. */
static double friction(ibWorld* w, ibSoftStore* ss, ibSoftContact* k, ibVec3 n, ibVec3 d, double hh, ibVec3* acc, double limit)
{
	ibVec3 dt = ib_tangential(d, n);
	double len = ibLength(dt);
	ibVec3 next = *acc;
	if (len > 1e-300) {
		ibVec3 t = ibScale(1.0 / len, dt);
		double kt = ibDot(t, ibMat3_MulV(k->K, t));
		if (kt > 0.0) next = ibMulAdd(*acc, -len / (hh * kt), t);
	}
	double m = ibLength(next);
	if (m > limit) next = m > 0.0 ? ibScale(limit / m, next) : IB_VEC3_ZERO;
	ibVec3 P = ibSub(next, *acc);
	*acc = next;
	double pm = ibLength(P);
	if (pm > 0.0) apply(w, ss, k, P);
	return pm;
}

void ib_soft_contacts_position_begin(ibWorld* w, ibSoftStore* ss, double h)
{
	ss->resumePos = true; /* the rigid contact loop may resume this correction (soft_contact_loop.c) */
	ss->resumePosEpoch = w->poseEpoch;
	ss->resumeH = h;
	for (int32_t i = 0; i < ss->contactCount; ++i) {
		ss->contacts[i].accN = 0.0;
		ss->contacts[i].accT = IB_VEC3_ZERO;
	}
}

bool ib_soft_contacts_position_sweep(ibWorld* w, ibSoftStore* ss, double h)
{
	double tol = w->solver.contact.contactPositionTolerance;
	bool moved = false;
	for (int32_t i = 0; i < ss->contactCount; ++i) {
		ibSoftContact* k = &ss->contacts[i];
		if (k->sphere) reproject_sphere(w, ss, k, h);
		if (!(k->kn > 0.0)) continue;
		ibVec3 q, n;
		carried(w, ss, k, true, h, &q, &n);
		double g = ibDot(ibSub(soft_point(ss, k, h), q), n);
		k->gap = g;
		if (g < 0.0 || k->accN > 0.0) {
			double next = fmax(0.0, k->accN - g / (h * k->kn));
			double dN = next - k->accN;
			k->accN = next;
			if (dN != 0.0) apply(w, ss, k, ibScale(dN, n));
			if (fabs(dN) * h * k->kn > tol) moved = true;
		}
		if (k->accN > 0.0) {
			carried(w, ss, k, true, h, &q, &n);
			ibVec3 d = ibSub(soft_point(ss, k, h), q);
			double mu = k->sticking ? k->mus : k->mud;
			double pm = friction(w, ss, k, n, d, h, &k->accT, mu * k->accN);
			if (pm * h * k->kn > tol) moved = true;
		} else if (ibLengthSq(k->accT) > 0.0) { /* separated: release the friction */
			apply(w, ss, k, ibNeg(k->accT));
			k->accT = IB_VEC3_ZERO;
		}
	}
	return moved;
}

void ib_soft_contacts_velocity_begin(ibWorld* w, ibSoftStore* ss)
{
	ss->resumeVel = true;
	ss->resumeVelEpoch = w->poseEpoch;
	for (int32_t i = 0; i < ss->contactCount; ++i) {
		ss->contacts[i].accVN = 0.0;
		ss->contacts[i].accVT = IB_VEC3_ZERO;
	}
}

bool ib_soft_contacts_velocity_sweep(ibWorld* w, ibSoftStore* ss)
{
	double tol = w->solver.velocityTolerance;
	bool moved = false;
	for (int32_t i = 0; i < ss->contactCount; ++i) {
		ibSoftContact* k = &ss->contacts[i];
		if (!(k->accN > 0.0) && !(k->accVN > 0.0)) continue; /* not touching in this step */
		const ibBody* b = &w->bodies[k->body];
		ibVec3 q, n;
		carried(w, ss, k, false, 0.0, &q, &n);
		ibVec3 u = ibSub(soft_velocity(ss, k), ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
		double un = ibDot(u, n);
		if (un < 0.0 || k->accVN > 0.0) {
			double next = fmax(0.0, k->accVN - un / k->kn);
			double dN = next - k->accVN;
			k->accVN = next;
			if (dN != 0.0) apply(w, ss, k, ibScale(dN, n));
			if (fabs(dN) * k->kn > tol) moved = true;
		}
		u = ibSub(soft_velocity(ss, k), ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
		double mu = k->sticking ? k->mus : k->mud;
		double pm = friction(w, ss, k, n, u, 1.0, &k->accVT, mu * k->accVN);
		if (pm * k->kn > tol) moved = true;
	}
	return moved;
}
