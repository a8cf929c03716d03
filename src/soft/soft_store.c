/* The soft store beside the world: allocation, handles, scratch buffers, destruction hooks. */
#include <string.h>

#include "soft/soft_internal.h"

ibSoftStore* ib_soft_store(ibWorld* w, bool create)
{
	if (!w->soft && create) {
		ibSoftStore* ss = ib_alloc(w, sizeof *ss);
		if (!ss) return NULL;
		memset(ss, 0, sizeof *ss);
		ss->softFree = IB_NULL_INDEX;
		ss->conFree = IB_NULL_INDEX;
		w->soft = ss;
	}
	return w->soft;
}

ibSoftBody* ib_soft_get(ibSoftBodyId id, ibWorld** outWorld)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (outWorld) *outWorld = w;
	ibSoftStore* ss = w ? w->soft : NULL;
	if (!ss || id.index1 <= 0 || id.index1 > ss->softHigh) {
		if (w && id.index1 != 0) ib_error(w, IB_ERR_STALE_HANDLE, "stale soft body handle");
		return NULL;
	}
	ibSoftBody* s = &ss->softs[id.index1 - 1];
	if (!s->inUse || s->generation != id.generation) {
		ib_error(w, IB_ERR_STALE_HANDLE, "stale soft body handle (index %d)", (int)id.index1 - 1);
		return NULL;
	}
	return s;
}

ibSoftCon* ib_soft_con_get(ibConstraintId id, ibWorld** outWorld)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (outWorld) *outWorld = w;
	ibSoftStore* ss = w ? w->soft : NULL;
	if (!ss || id.index1 <= 0 || id.index1 > ss->conHigh) {
		if (w && id.index1 != 0) ib_error(w, IB_ERR_STALE_HANDLE, "stale constraint handle");
		return NULL;
	}
	ibSoftCon* c = &ss->cons[id.index1 - 1];
	if (!c->inUse || c->generation != id.generation) {
		ib_error(w, IB_ERR_STALE_HANDLE, "stale constraint handle (index %d)", (int)id.index1 - 1);
		return NULL;
	}
	return c;
}

bool ib_soft_ensure_scratch(ibWorld* w, ibSoftStore* ss, int32_t states, int32_t jdoubles)
{
	if (!ib_grow(w, (void**)&ss->scratch, &ss->scratchCapacity, states + 1, sizeof(ibPartState))) return false;
	if (!ib_grow(w, (void**)&ss->ustates, &ss->ustateCapacity, states + 1, sizeof(ibConstraintState))) return false;
	return ib_grow(w, (void**)&ss->scratchJ, &ss->scratchJCapacity, jdoubles + 1, sizeof(double));
}

void ib_soft_con_free(ibWorld* w, ibSoftStore* ss, int32_t i)
{
	ibSoftCon* c = &ss->cons[i];
	if (!c->inUse) return;
	ib_free(w, c->parts, sizeof(ibSoftPart) * (size_t)c->count);
	ib_free(w, c->J, sizeof(double) * (size_t)(c->rows * c->cols));
	ib_strfree(w, c->name);
	c->parts = NULL;
	c->J = NULL;
	c->name = NULL;
	c->inUse = false;
	c->generation++;
	c->nextFree = ss->conFree;
	ss->conFree = i;
	ss->conCount--;
	ss->layout++;
}

static void free_soft_data(ibWorld* w, ibSoftBody* s)
{
	ib_free(w, s->tris, sizeof(int) * 3 * (size_t)s->triCount);
	ib_free(w, s->volJ, sizeof(double) * 3 * (size_t)s->count);
	ib_free(w, s->rest, sizeof(ibVec3) * (size_t)s->count);
	ib_free(w, s->mass0, sizeof(double) * (size_t)s->count);
	ib_free(w, s->tets, sizeof(int) * 4 * (size_t)s->tetCount);
	ib_free(w, s->edges, sizeof(int) * 2 * (size_t)s->edgeCount);
	s->rest = NULL;
	s->mass0 = NULL;
	s->tets = s->edges = NULL;
	ib_strfree(w, s->name);
	s->tris = NULL;
	s->volJ = NULL;
	s->name = NULL;
}

void ib_soft_destroy_store(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	for (int32_t i = 0; i < ss->conHigh; ++i) ib_soft_con_free(w, ss, i);
	for (int32_t i = 0; i < ss->softHigh; ++i)
		if (ss->softs[i].inUse) free_soft_data(w, &ss->softs[i]);
	ib_free(w, ss->particles, sizeof(ibParticle) * (size_t)ss->particleCapacity);
	ib_free(w, ss->rows, sizeof(ibSoftRow) * (size_t)ss->rowCapacity);
	ib_free(w, ss->softs, sizeof(ibSoftBody) * (size_t)ss->softCapacity);
	ib_free(w, ss->cons, sizeof(ibSoftCon) * (size_t)ss->conCapacity);
	ib_free(w, ss->bpred, sizeof(ibBodyPred) * (size_t)ss->bpredCapacity);
	ib_free(w, ss->contacts, sizeof(ibSoftContact) * (size_t)ss->contactCapacity);
	ib_free(w, ss->scratch, sizeof(ibPartState) * (size_t)ss->scratchCapacity);
	ib_free(w, ss->ustates, sizeof(ibConstraintState) * (size_t)ss->ustateCapacity);
	ib_free(w, ss->scratchJ, sizeof(double) * (size_t)ss->scratchJCapacity);
	ib_free(w, ss->snap, sizeof(ibVec3) * 2 * (size_t)ss->snapCapacity * (size_t)ss->snapLevels);
	ib_soft_sparse_free(w, ss);
	ib_free(w, ss, sizeof *ss);
	w->soft = NULL;
}

void ib_soft_on_body_destroyed(ibWorld* w, int32_t bodyIndex)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	ss->contactCount = 0; /* contacts refer to bodies by index; the next detection rebuilds them */
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		for (int k = 0; k < c->count; ++k)
			if (c->parts[k].isBody && c->parts[k].index == bodyIndex) {
				ib_soft_con_free(w, ss, i);
				break;
			}
	}
}

/* Remove a soft body: its constraints and every public constraint on its particles go; later
 * particles and rows move down (indices in rows and constraints are remapped). */
void ib_soft_body_remove(ibWorld* w, ibSoftStore* ss, int32_t si)
{
	ibSoftBody* s = &ss->softs[si];
	int32_t first = s->first, n = s->count, r0 = s->firstRow, nr = s->rowCount;
	ss->contactCount = 0; /* particle indices move; the next detection rebuilds the contacts */
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		bool uses = false;
		for (int k = 0; k < c->count; ++k)
			if (!c->parts[k].isBody && c->parts[k].index >= first && c->parts[k].index < first + n) uses = true;
		if (uses) {
			ib_soft_con_free(w, ss, i);
			continue;
		}
		for (int k = 0; k < c->count; ++k)
			if (!c->parts[k].isBody && c->parts[k].index >= first + n) c->parts[k].index -= n;
	}
	memmove(ss->particles + first, ss->particles + first + n, sizeof(ibParticle) * (size_t)(ss->particleCount - first - n));
	ss->particleCount -= n;
	memmove(ss->rows + r0, ss->rows + r0 + nr, sizeof(ibSoftRow) * (size_t)(ss->rowCount - r0 - nr));
	ss->rowCount -= nr;
	for (int32_t k = 0; k < ss->rowCount; ++k) {
		ibSoftRow* r = &ss->rows[k];
		if (r->kind == IB_ROW_SURFACE_VOLUME) continue;
		for (int q = 0; q < r->count; ++q)
			if (r->p[q] >= first + n) r->p[q] -= n;
	}
	for (int32_t k = 0; k < ss->softHigh; ++k) {
		ibSoftBody* o = &ss->softs[k];
		if (!o->inUse || k == si) continue;
		if (o->first >= first + n) o->first -= n;
		if (o->firstRow >= r0 + nr) o->firstRow -= nr;
	}
	free_soft_data(w, s);
	s->inUse = false;
	s->generation++;
	s->nextFree = ss->softFree;
	ss->softFree = si;
	ss->layout++;
	w->poseEpoch++;
}
