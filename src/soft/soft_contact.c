/* Contact of particles with rigid shapes (issue 7 part 3), two-way, with Coulomb friction.
 *
 * Detection at t0 (with the rigid contacts, step.c collide_t0): every particle is tested against
 * the shapes the broadphase returns for its box, enlarged by eps_c plus the distance the particle
 * and the bodies can travel in the step (speculative contacts: a row with a positive gap does
 * nothing unless its prediction penetrates). The exact test is point vs. convex (GJK/EPA with a
 * zero-radius sphere) or point vs. plane; trimesh shapes are not handled yet.
 *
 * Each contact is a constraint with 3 columns for the particle and 6 for the body: the normal row
 * C = (x_p - q)·n with q and n carried with the body, and a tangential row pair. They are solved
 * as clamped soft rows inside the soft sweeps, i.e. in the same loop as the soft internal rows, the
 * rigid joints and the rigid–soft joints (and through the joint sweeps of the rigid contact loop):
 *  - joint correction at t0 (eq. 5.11 generalised): predicted gap g after a free step; while
 *    g < 0 (or g > 0 with a positive accumulated impulse) p_n = -g/(h nᵀKn), accumulated >= 0;
 *    friction cancels the predicted tangential slip, accumulated friction clamped to the disc
 *    mu accN (mu_s for points that were sticking at t0, else mu_d) — the clamped case is exactly
 *    Coulomb's dynamic friction mu_d |p_n| opposite the slip;
 *  - velocity correction at t0+h: u_n >= 0 with its own accumulated clamp, friction as above.
 * Collisions are resolved by the same rows (inelastic, e = 0): the joint correction already
 * prevents the predicted penetration, the velocity correction removes the approach speed.
 * Friction coefficients are the shape's material (particles have none). Particles of a soft body
 * are not tested against bodies it is attached to by a rigid–soft joint. */
#include <math.h>

#include "collision/broadphase.h"
#include "collision/collision_world.h"
#include "collision/convex.h"
#include "soft/soft_internal.h"

static inline ibVec3 ib_tangential(ibVec3 v, ibVec3 n) { return ibMulAdd(v, -ibDot(v, n), n); }

typedef struct DetectCtx {
	ibWorld* w;
	ibSoftStore* ss;
	int32_t particle;
	double h, reach;
	bool oom;
} DetectCtx;

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

static bool attached(const ibSoftStore* ss, int32_t soft, int32_t body)
{
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		const ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		bool hasBody = false, hasSoft = false;
		for (int k = 0; k < c->count; ++k) {
			if (c->parts[k].isBody)
				hasBody |= c->parts[k].index == body;
			else
				hasSoft |= ss->particles[c->parts[k].index].soft == soft;
		}
		if (hasBody && hasSoft) return true;
	}
	return false;
}

/* Signed distance of x to a shape, the closest surface point and the outward normal there. */
static bool point_shape(const ibBody* b, const ibShape* s, ibVec3 x, double* dist, ibVec3* q, ibVec3* n)
{
	if (s->type == IB_SHAPE_PLANE) {
		ibVec3 pos;
		ibQuat rot;
		ib_shape_world_pose(b, s, &pos, &rot);
		ibVec3 nw = ibRotate(rot, s->g.plane.normal);
		ibVec3 p0 = ibAdd(pos, ibScale(s->g.plane.offset, nw));
		*dist = ibDot(ibSub(x, p0), nw);
		*q = ibMulAdd(x, -*dist, nw);
		*n = nw;
		return true;
	}
	ibConvex cv;
	if (!ib_shape_convex(b, s, &cv)) return false; /* trimesh: not yet */
	ibConvex pt = ib_convex_make(IB_CONVEX_SPHERE, x, IB_QUAT_IDENTITY);
	pt.radius = 0.0;
	ibConvexDistance d = ib_convex_query(&cv, &pt, NULL);
	if (!ibVec3_IsFinite(d.normal) || !(ibLengthSq(d.normal) > 0.5)) return false;
	*dist = d.distance;
	*q = d.pointA;
	*n = ibNeg(d.normal); /* d.normal points from the point (B) to the shape (A) */
	return true;
}

static bool detect_cb(void* vctx, int32_t proxy)
{
	DetectCtx* c = vctx;
	ibWorld* w = c->w;
	ibSoftStore* ss = c->ss;
	int32_t si = ib_broadphase_user_id(ib_collision_broadphase(w), proxy);
	const ibShape* s = &w->shapes[si];
	const ibBody* b = &w->bodies[s->body];
	const ibParticle* p = &ss->particles[c->particle];
	double dist;
	ibVec3 q, n;
	if (!point_shape(b, s, p->x, &dist, &q, &n)) return true;
	if (dist > c->reach) return true;
	if (attached(ss, p->soft, s->body)) return true;
	if (!ib_grow(w, (void**)&ss->contacts, &ss->contactCapacity, ss->contactCount + 1, sizeof(ibSoftContact))) {
		c->oom = true;
		return false;
	}
	ibSoftContact* k = &ss->contacts[ss->contactCount++];
	k->particle = c->particle;
	k->body = s->body;
	k->shape = si;
	k->lq = ibMat3_MulTV(b->R, ibSub(q, b->st.s));
	k->ln = ibMat3_MulTV(b->R, n);
	k->K = body_point_k(b, ibSub(q, b->st.s));
	for (int i = 0; i < 3; ++i) k->K.m[i][i] += p->invMass;
	k->kn = ibDot(n, ibMat3_MulV(k->K, n));
	k->mus = fmax(0.0, s->material.staticFriction);
	k->mud = fmax(0.0, s->material.dynamicFriction);
	ibVec3 u = ibSub(p->v, ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
	k->sticking = ibLength(ib_tangential(u, n)) <= w->solver.velocityTolerance;
	k->accN = k->accVN = 0.0;
	k->accT = k->accVT = IB_VEC3_ZERO;
	k->gap = dist;
	if (!(k->kn > 0.0)) ss->contactCount--; /* pinned particle on a static body */
	return true;
}

void ib_soft_contacts_detect(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	ss->contactCount = 0;
	if (ss->particleCount == 0 || !w->solver.contact.enabled || !w->collisionSettings.enabled || w->shapeCount == 0)
		return;
	if (ib_collision_sync(w) != IB_OK) return;
	ibBroadphase* bp = ib_collision_broadphase(w);
	if (!bp) return;
	/* the fastest body point: |v| + |w| (distance of the shape's box corners from the COM) */
	double vb = 0.0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		const ibShape* s = &w->shapes[i];
		if (!s->inUse) continue;
		const ibBody* b = &w->bodies[s->body];
		if (b->type == IB_BODY_STATIC) continue;
		ibAABB box = ib_shape_world_aabb(b, s);
		ibVec3 c = ibScale(0.5, ibAdd(box.lo, box.hi));
		double r = ibLength(ibSub(c, b->st.s)) + 0.5 * ibLength(ibSub(box.hi, box.lo));
		if (!isfinite(r)) r = 0.0;
		vb = fmax(vb, ibLength(b->st.v) + ibLength(b->st.w) * r);
	}
	double g = ibLength(w->gravity);
	double eps = w->collisionSettings.contactTolerance;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		const ibParticle* p = &ss->particles[i];
		double reach = eps + h * (ibLength(p->v) + vb) + h * h * (g * fabs(p->gravityScale) + ibLength(p->f) * p->invMass);
		ibVec3 e = ibV3(reach, reach, reach);
		ibAABB box = {ibSub(p->x, e), ibAdd(p->x, e)};
		DetectCtx c = {w, ss, i, h, reach, false};
		ib_broadphase_query(bp, box, detect_cb, &c);
		if (c.oom) break;
	}
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

/* Impulse P on the particle, -P on the body at its contact point (current pose). */
static void apply(ibWorld* w, ibSoftStore* ss, const ibSoftContact* k, ibVec3 P)
{
	ibParticle* p = &ss->particles[k->particle];
	if (p->invMass > 0.0) p->v = ibMulAdd(p->v, p->invMass, P);
	ibBody* b = &w->bodies[k->body];
	if (ib_is_dynamic(b)) ib_body_apply_impulse(b, ibNeg(P), ibAdd(b->st.s, ibMat3_MulV(b->R, k->lq)));
}

static ibVec3 predicted_particle(const ibParticle* p, double h)
{
	return ibAdd(p->x, ibAdd(ibScale(h, p->v), ibScale(0.5 * h * h * p->invMass, p->f)));
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

void ib_soft_contacts_position_begin(ibWorld* w, ibSoftStore* ss)
{
	(void)w;
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
		const ibParticle* p = &ss->particles[k->particle];
		ibVec3 q, n;
		carried(w, ss, k, true, h, &q, &n);
		double g = ibDot(ibSub(predicted_particle(p, h), q), n);
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
			ibVec3 d = ibSub(predicted_particle(p, h), q);
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
	(void)w;
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
		const ibParticle* p = &ss->particles[k->particle];
		const ibBody* b = &w->bodies[k->body];
		ibVec3 q, n;
		carried(w, ss, k, false, 0.0, &q, &n);
		ibVec3 u = ibSub(p->v, ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
		double un = ibDot(u, n);
		if (un < 0.0 || k->accVN > 0.0) {
			double next = fmax(0.0, k->accVN - un / k->kn);
			double dN = next - k->accVN;
			k->accVN = next;
			if (dN != 0.0) apply(w, ss, k, ibScale(dN, n));
			if (fabs(dN) * k->kn > tol) moved = true;
		}
		u = ibSub(p->v, ibAdd(b->st.v, ibCross(b->st.w, ibSub(q, b->st.s))));
		double mu = k->sticking ? k->mus : k->mud;
		double pm = friction(w, ss, k, n, u, 1.0, &k->accVT, mu * k->accVN);
		if (pm * k->kn > tol) moved = true;
	}
	return moved;
}
