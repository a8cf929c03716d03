/* Public getters and setters of soft bodies and particles. */
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"

#define GET_SOFT_OR(ret)                  \
	ibWorld* w;                           \
	ibSoftBody* s = ib_soft_get(id, &w);  \
	if (!s) return ret

#define GET_PARTICLE_OR(ret)                                                                              \
	GET_SOFT_OR(ret);                                                                                     \
	if (i < 0 || i >= s->count) {                                                                         \
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "particle index %d out of range [0, %d)", i, (int)s->count); \
		return ret;                                                                                       \
	}                                                                                                     \
	ibParticle* p = &w->soft->particles[s->first + i]

bool ibSoftBody_IsValid(ibSoftBodyId id)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	ibSoftStore* ss = w ? w->soft : NULL;
	if (!ss || id.index1 <= 0 || id.index1 > ss->softHigh) return false;
	const ibSoftBody* s = &ss->softs[id.index1 - 1];
	return s->inUse && s->generation == id.generation;
}

int ibSoftBody_GetParticleCount(ibSoftBodyId id)
{
	GET_SOFT_OR(0);
	return s->count;
}

int ibSoftBody_GetConstraintCount(ibSoftBodyId id)
{
	GET_SOFT_OR(0);
	return s->rowCount;
}

ibVec3 ibSoftBody_GetPosition(ibSoftBodyId id, int i)
{
	GET_PARTICLE_OR(IB_VEC3_ZERO);
	return p->x;
}

ibVec3 ibSoftBody_GetVelocity(ibSoftBodyId id, int i)
{
	GET_PARTICLE_OR(IB_VEC3_ZERO);
	return p->v;
}

int ibSoftBody_GetPositions(ibSoftBodyId id, ibVec3* out, int capacity)
{
	GET_SOFT_OR(0);
	for (int i = 0; out && i < s->count && i < capacity; ++i) out[i] = w->soft->particles[s->first + i].x;
	return s->count;
}

int ibSoftBody_GetVelocities(ibSoftBodyId id, ibVec3* out, int capacity)
{
	GET_SOFT_OR(0);
	for (int i = 0; out && i < s->count && i < capacity; ++i) out[i] = w->soft->particles[s->first + i].v;
	return s->count;
}

ibResult ibSoftBody_SetPosition(ibSoftBodyId id, int i, ibVec3 x)
{
	GET_PARTICLE_OR(IB_ERR_STALE_HANDLE);
	if (!ibVec3_IsFinite(x)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "position must be finite");
	p->x = x;
	w->poseEpoch++;
	return IB_OK;
}

ibResult ibSoftBody_SetVelocity(ibSoftBodyId id, int i, ibVec3 v)
{
	GET_PARTICLE_OR(IB_ERR_STALE_HANDLE);
	if (!ibVec3_IsFinite(v)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "velocity must be finite");
	if (p->invMass <= 0.0) return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "particle %d is pinned", i);
	p->v = v;
	return IB_OK;
}

double ibSoftBody_GetParticleMass(ibSoftBodyId id, int i)
{
	GET_PARTICLE_OR(0.0);
	return p->invMass > 0.0 ? p->mass : 0.0;
}

double ibSoftBody_GetMass(ibSoftBodyId id)
{
	GET_SOFT_OR(0.0);
	double m = 0.0;
	for (int i = 0; i < s->count; ++i) {
		const ibParticle* p = &w->soft->particles[s->first + i];
		if (p->invMass > 0.0) m += p->mass;
	}
	return m;
}

ibResult ibSoftBody_SetPinned(ibSoftBodyId id, int i, bool pinned)
{
	GET_PARTICLE_OR(IB_ERR_STALE_HANDLE);
	if (!pinned && !(p->mass > 0.0)) return ib_error(w, IB_ERR_DEGENERATE, "particle %d has no mass to release", i);
	p->invMass = pinned ? 0.0 : 1.0 / p->mass;
	if (pinned) p->v = IB_VEC3_ZERO;
	w->poseEpoch++; /* response matrices change */
	return IB_OK;
}

bool ibSoftBody_IsPinned(ibSoftBodyId id, int i)
{
	GET_PARTICLE_OR(false);
	return p->invMass <= 0.0;
}

ibResult ibSoftBody_ApplyForce(ibSoftBodyId id, int i, ibVec3 f)
{
	GET_PARTICLE_OR(IB_ERR_STALE_HANDLE);
	if (!ibVec3_IsFinite(f)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "force must be finite");
	p->userForce = ibAdd(p->userForce, f);
	return IB_OK;
}

ibResult ibSoftBody_SetDamping(ibSoftBodyId id, double c)
{
	GET_SOFT_OR(IB_ERR_STALE_HANDLE);
	if (!(isfinite(c) && c >= 0.0)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "damping must be finite and >= 0");
	for (int i = 0; i < s->count; ++i) w->soft->particles[s->first + i].damping = c;
	return IB_OK;
}

ibResult ibSoftBody_SetMaxIterations(ibSoftBodyId id, int n)
{
	GET_SOFT_OR(IB_ERR_STALE_HANDLE);
	if (n < 0) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "maxIterations must be >= 0");
	s->maxIter = n;
	return IB_OK;
}

ibVec3 ibSoftBody_GetLinearMomentum(ibSoftBodyId id)
{
	GET_SOFT_OR(IB_VEC3_ZERO);
	ibVec3 m = IB_VEC3_ZERO;
	for (int i = 0; i < s->count; ++i) {
		const ibParticle* p = &w->soft->particles[s->first + i];
		if (p->invMass > 0.0) m = ibMulAdd(m, p->mass, p->v);
	}
	return m;
}

double ibSoftBody_GetKineticEnergy(ibSoftBodyId id)
{
	GET_SOFT_OR(0.0);
	double e = 0.0;
	for (int i = 0; i < s->count; ++i) {
		const ibParticle* p = &w->soft->particles[s->first + i];
		if (p->invMass > 0.0) e += 0.5 * p->mass * ibLengthSq(p->v);
	}
	return e;
}

int ibSoftBody_GetTriangles(ibSoftBodyId id, int* out, int capacity)
{
	GET_SOFT_OR(0);
	if (out && capacity >= 3 * s->triCount) memcpy(out, s->tris, sizeof(int) * 3 * (size_t)s->triCount);
	return s->triCount;
}

const char* ibSoftBody_GetName(ibSoftBodyId id)
{
	GET_SOFT_OR("");
	return s->name ? s->name : "";
}

ibSoftBodyId ibWorld_FindSoftBody(ibWorldId world, const char* name)
{
	ibWorld* w = ib_world_get(world);
	if (!w || !w->soft || !name) return IB_NULL_SOFT_BODY;
	for (int32_t i = 0; i < w->soft->softHigh; ++i) {
		const ibSoftBody* s = &w->soft->softs[i];
		if (s->inUse && s->name && strcmp(s->name, name) == 0) return (ibSoftBodyId){i + 1, w->slot, s->generation};
	}
	return IB_NULL_SOFT_BODY;
}

ibSoftStepStats ibWorld_GetSoftStepStats(ibWorldId world)
{
	ibSoftStepStats z = {0};
	ibWorld* w = ib_world_get(world);
	return w && w->soft ? w->soft->stats : z;
}
