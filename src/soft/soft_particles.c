/* Particles: force modules, free motion and prediction (exactly the rigid translation, eqs 3.2 and
 * 3.3: the force is held constant over the step), step-subdivision snapshots, invariants. */
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"

void ib_soft_apply_forces(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		ibParticle* p = &ss->particles[i];
		if (p->invMass <= 0.0) {
			p->f = IB_VEC3_ZERO;
			p->userForce = IB_VEC3_ZERO;
			continue;
		}
		ibVec3 f = ibAdd(ibScale(p->mass * p->gravityScale, w->gravity), p->userForce);
		if (p->damping > 0.0) f = ibMulAdd(f, -p->damping * p->mass, p->v);
		p->f = f;
		p->userForce = IB_VEC3_ZERO;
	}
}

void ib_soft_integrate(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		ibParticle* p = &ss->particles[i];
		if (p->invMass <= 0.0) continue;
		p->x = ibAdd(p->x, ibAdd(ibScale(h, p->v), ibScale(0.5 * h * h * p->invMass, p->f)));
		p->v = ibMulAdd(p->v, h * p->invMass, p->f);
	}
}

bool ib_soft_finite(const ibWorld* w)
{
	const ibSoftStore* ss = w->soft;
	if (!ss) return true;
	for (int32_t i = 0; i < ss->particleCount; ++i)
		if (!ibVec3_IsFinite(ss->particles[i].x) || !ibVec3_IsFinite(ss->particles[i].v)) return false;
	return true;
}

bool ib_soft_too_fast(const ibWorld* w, double vmax)
{
	const ibSoftStore* ss = w->soft;
	if (!ss || !(vmax > 0.0)) return false;
	for (int32_t i = 0; i < ss->particleCount; ++i)
		if (ss->particles[i].invMass > 0.0 && ibDot(ss->particles[i].v, ss->particles[i].v) > vmax * vmax) return true;
	return false;
}

bool ib_soft_active(const ibWorld* w) { return w->soft && w->soft->particleCount > 0; }

void ib_soft_snapshot_save(ibWorld* w, int depth)
{
	ibSoftStore* ss = w->soft;
	if (!ss || ss->particleCount == 0) return;
	if (depth >= ss->snapLevels || ss->particleCount > ss->snapCapacity) {
		int L = depth + 1 > ss->snapLevels ? depth + 1 : ss->snapLevels;
		int32_t cap = ss->particleCount > ss->snapCapacity ? ss->particleCount + ss->particleCount / 2 + 8 : ss->snapCapacity;
		ibVec3* b = ib_alloc(w, sizeof(ibVec3) * 2 * (size_t)cap * (size_t)L);
		if (!b) return; /* restore then finds no snapshot and leaves the particles as they are */
		ib_free(w, ss->snap, sizeof(ibVec3) * 2 * (size_t)ss->snapCapacity * (size_t)ss->snapLevels);
		ss->snap = b;
		ss->snapLevels = L;
		ss->snapCapacity = cap;
	}
	ibVec3* s = ss->snap + 2 * (size_t)depth * (size_t)ss->snapCapacity;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		s[2 * i] = ss->particles[i].x;
		s[2 * i + 1] = ss->particles[i].v;
	}
}

void ib_soft_snapshot_restore(ibWorld* w, int depth)
{
	ibSoftStore* ss = w->soft;
	if (!ss || ss->particleCount == 0 || depth >= ss->snapLevels || ss->particleCount > ss->snapCapacity) return;
	const ibVec3* s = ss->snap + 2 * (size_t)depth * (size_t)ss->snapCapacity;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		ss->particles[i].x = s[2 * i];
		ss->particles[i].v = s[2 * i + 1];
	}
	for (int32_t k = 0; k < ss->rowCount; ++k) ss->rows[k].warm *= 0.5;
}

void ib_soft_add_invariants(const ibWorld* w, ibWorldInvariants* out)
{
	const ibSoftStore* ss = w->soft;
	if (!ss) return;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		const ibParticle* p = &ss->particles[i];
		if (p->invMass <= 0.0) continue;
		ibVec3 mom = ibScale(p->mass, p->v);
		out->kineticEnergy += 0.5 * p->mass * ibLengthSq(p->v);
		out->potentialEnergy -= p->mass * p->gravityScale * ibDot(w->gravity, p->x);
		out->linearMomentum = ibAdd(out->linearMomentum, mom);
		out->angularMomentum = ibAdd(out->angularMomentum, ibCross(p->x, mom));
	}
}
