/* The world: handle registry, creation, settings and the time step (Part VI of the digest). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collision_world.h"
#include "dynamics/sleep.h"
#include "dynamics/world.h"

/* The only process-wide state: which world lives in which handle slot. It holds no settings
 * (allocator, logger and solver settings are per world) and is touched only by create/destroy. */
static ibWorld* s_worlds[IB_MAX_WORLDS];
static uint16_t s_generations[IB_MAX_WORLDS];

ibWorld* ib_world_from_slot(uint16_t slot) { return slot < IB_MAX_WORLDS ? s_worlds[slot] : NULL; }

ibWorld* ib_world_get(ibWorldId id)
{
	if (id.index1 == 0 || id.index1 > IB_MAX_WORLDS) return NULL;
	ibWorld* w = s_worlds[id.index1 - 1];
	return (w && w->generation == id.generation) ? w : NULL;
}

ibBody* ib_body_get(ibBodyId id, ibWorld** outWorld)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (outWorld) *outWorld = w;
	if (!w || id.index1 <= 0 || id.index1 > w->bodyHigh) {
		if (w && id.index1 != 0) ib_error(w, IB_ERR_STALE_HANDLE, "stale body handle (index %d)", (int)id.index1 - 1);
		return NULL;
	}
	ibBody* b = &w->bodies[id.index1 - 1];
	if (!b->inUse || b->generation != id.generation) {
		ib_error(w, IB_ERR_STALE_HANDLE, "stale body handle (index %d, generation %u)", (int)id.index1 - 1,
		         (unsigned)id.generation);
		return NULL;
	}
	return b;
}

ibShape* ib_shape_get(ibShapeId id, ibWorld** outWorld)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (outWorld) *outWorld = w;
	if (!w || id.index1 <= 0 || id.index1 > w->shapeHigh) {
		if (w && id.index1 != 0) ib_error(w, IB_ERR_STALE_HANDLE, "stale shape handle");
		return NULL;
	}
	ibShape* s = &w->shapes[id.index1 - 1];
	if (!s->inUse || s->generation != id.generation) {
		ib_error(w, IB_ERR_STALE_HANDLE, "stale shape handle (index %d)", (int)id.index1 - 1);
		return NULL;
	}
	return s;
}

ibBodyId ib_body_id(const ibWorld* w, int32_t index)
{
	return (ibBodyId){index + 1, w->slot, w->bodies[index].generation};
}

ibResult ibValidateWorldDef(const ibWorldDef* def, char* msg, size_t n)
{
	if (!def) {
		if (msg) snprintf(msg, n, "world definition is NULL");
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (def->internalValue != IB_DEF_MAGIC) {
		if (msg) snprintf(msg, n, "world definition not initialised with ibDefaultWorldDef()");
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!ibVec3_IsFinite(def->gravity)) {
		if (msg) snprintf(msg, n, "gravity must be finite");
		return IB_ERR_INVALID_ARGUMENT;
	}
	bool anyHook = def->allocFn || def->freeFn || def->reallocFn;
	if (anyHook && !(def->allocFn && def->freeFn)) {
		if (msg) snprintf(msg, n, "allocFn and freeFn must be set together");
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!def->enqueueTask != !def->finishTask) {
		if (msg) snprintf(msg, n, "enqueueTask and finishTask must be set together");
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (def->workerCount < 1 || def->workerCount > IB_MAX_WORKERS) {
		if (msg) snprintf(msg, n, "workerCount must be in 1..%d (got %d)", IB_MAX_WORKERS, def->workerCount);
		return IB_ERR_INVALID_ARGUMENT;
	}
	ibResult r = ib_validate_collision(&def->collision, msg, n);
	if (r != IB_OK) return r;
	return ib_validate_solver(&def->solver, msg, n);
}

ibWorldId ibCreateWorld(const ibWorldDef* def)
{
	char msg[256];
	if (ibValidateWorldDef(def, msg, sizeof msg) != IB_OK) {
		if (def && def->internalValue == IB_DEF_MAGIC && def->logFn) def->logFn(IB_LOG_ERROR, msg, def->logContext);
		return IB_NULL_WORLD;
	}
	int slot = -1;
	for (int i = 0; i < IB_MAX_WORLDS; ++i)
		if (!s_worlds[i]) {
			slot = i;
			break;
		}
	if (slot < 0) {
		if (def->logFn) def->logFn(IB_LOG_ERROR, "too many worlds (128)", def->logContext);
		return IB_NULL_WORLD;
	}
	ibWorld tmp = {0};
	tmp.allocator = (ibAllocator){def->allocFn, def->reallocFn, def->freeFn, def->allocContext};
	ibWorld* w = ib_alloc(&tmp, sizeof *w);
	if (!w) {
		if (def->logFn) def->logFn(IB_LOG_ERROR, "out of memory creating world", def->logContext);
		return IB_NULL_WORLD;
	}
	memset(w, 0, sizeof *w);
	w->allocator = tmp.allocator;
	w->logFn = def->logFn;
	w->logContext = def->logContext;
	w->userData = def->userData;
	w->enqueueTask = def->enqueueTask;
	w->finishTask = def->finishTask;
	w->taskContext = def->taskContext;
	w->workerCount = def->workerCount;
	w->gravity = def->gravity;
	w->solver = def->solver;
	w->recoveryFraction = 1.0; /* outside a step: whole errors (step.c) */
	w->bodyFree = IB_NULL_INDEX;
	w->shapeFree = IB_NULL_INDEX;
	w->stats.converged = true;
	w->collisionSettings = def->collision;
	w->poseEpoch = 1;
	w->slot = (uint16_t)slot;
	w->generation = (uint16_t)(s_generations[slot] + 1u);
	if (w->generation == 0) w->generation = 1;
	s_generations[slot] = w->generation;
	s_worlds[slot] = w;
	return (ibWorldId){(uint16_t)(slot + 1), w->generation};
}

void ibDestroyWorld(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return;
	ib_joints_destroy_store(w);
	ib_collision_destroy(w);
	ib_contacts_destroy(w);
	ib_sleep_destroy(w);
	ib_soft_destroy_store(w);
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		ibShape* s = &w->shapes[i];
		if (s->inUse) ib_shape_free_data(w, s);
	}
	for (int32_t i = 0; i < w->bodyHigh; ++i)
		if (w->bodies[i].inUse) ib_strfree(w, w->bodies[i].name);
	ib_free(w, w->snapBodies, (size_t)w->snapLevels * (size_t)w->snapBodyCapacity * sizeof(ibRigidState));
	ib_free(w, w->snapWarm, (size_t)w->snapLevels * (size_t)w->snapWarmCapacity * sizeof(ibVec3));
	ib_free(w, w->orderStates, (size_t)4 * (size_t)w->orderCapacity * sizeof(ibRigidState));
	ib_free(w, w->groupMethod, (size_t)w->groupMethodCapacity * sizeof(int32_t));
	ib_free(w, w->shapes, (size_t)w->shapeCapacity * sizeof(ibShape));
	ib_free(w, w->bodies, (size_t)w->bodyCapacity * sizeof(ibBody));
	s_worlds[w->slot] = NULL;
	ibAllocator a = w->allocator;
	ibWorld tmp = {0};
	tmp.allocator = a;
	ib_free(&tmp, w, sizeof *w);
}

bool ibWorld_IsValid(ibWorldId id) { return ib_world_get(id) != NULL; }

const char* ibWorld_GetLastError(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->lastError : "stale world handle";
}

void ibWorld_ClearError(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	if (w) w->lastError[0] = '\0';
}

bool ibWorld_HasDiverged(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->diverged : false;
}

double ibWorld_GetTime(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->time : 0.0;
}

void* ibWorld_GetUserData(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->userData : NULL;
}

ibResult ibWorld_SetGravity(ibWorldId id, ibVec3 g)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!ibVec3_IsFinite(g)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "gravity must be finite");
	w->gravity = g;
	ib_sleep_wake_all(w);
	return IB_OK;
}

ibVec3 ibWorld_GetGravity(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->gravity : IB_VEC3_ZERO;
}

ibResult ibWorld_SetSolverSettings(ibWorldId id, const ibSolverSettings* s)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!s) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver settings are NULL");
	char msg[256];
	ibResult r = ib_validate_solver(s, msg, sizeof msg);
	if (r != IB_OK) return ib_error(w, r, "%s", msg);
	if (s->method != w->solver.method) w->solverGroupsVersion++;
	if (!s->sleep.enabled) ib_sleep_wake_all(w);
	w->solver = *s;
	return IB_OK;
}

ibSolverSettings ibWorld_GetSolverSettings(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->solver : ibDefaultSolverSettings();
}

ibStepStats ibWorld_GetStepStats(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	ibStepStats z = {0};
	return w ? w->stats : z;
}

int ibWorld_GetBodyCount(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	return w ? w->bodyCount : 0;
}

int ibWorld_GetBodies(ibWorldId id, ibBodyId* out, int capacity)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return 0;
	int n = 0;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		if (!w->bodies[i].inUse) continue;
		if (out && n < capacity) out[n] = ib_body_id(w, i);
		++n;
	}
	return n;
}

ibBodyId ibWorld_FindBody(ibWorldId id, const char* name)
{
	ibWorld* w = ib_world_get(id);
	if (!w || !name) return IB_NULL_BODY;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (b->inUse && b->name && strcmp(b->name, name) == 0) return ib_body_id(w, i);
	}
	return IB_NULL_BODY;
}

ibResult ibWorld_ComputeInvariants(ibWorldId id, ibWorldInvariants* out)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!out) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "output is NULL");
	memset(out, 0, sizeof *out);
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		ibVec3 wl = ibMat3_MulTV(b->R, b->st.w);
		ibVec3 Lb = ibMulCW(b->inertiaP, wl);
		out->kineticEnergy += 0.5 * b->mass * ibLengthSq(b->st.v) + 0.5 * ibDot(wl, Lb);
		out->potentialEnergy -= b->mass * b->gravityScale * ibDot(w->gravity, b->st.s);
		ibVec3 p = ibScale(b->mass, b->st.v);
		out->linearMomentum = ibAdd(out->linearMomentum, p);
		out->angularMomentum = ibAdd(out->angularMomentum, ibAdd(ibCross(b->st.s, p), ibMat3_MulV(b->R, Lb)));
	}
	out->springEnergy = ib_joints_spring_energy(w);
	ib_soft_add_invariants(w, out);
	return IB_OK;
}
