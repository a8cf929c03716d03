/* Public collision API of the world: settings, ibWorld_Collide, contacts and touch events read after a
 * step, excluded body pairs and shape filters (include/ibdyn/collision.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collision_world_internal.h"

ibResult ib_validate_collision(const ibCollisionSettings* s, char* msg, size_t n)
{
	const char* err = NULL;
	if (!(isfinite(s->contactTolerance) && s->contactTolerance > 0.0))
		err = "contact tolerance must be finite and > 0";
	else if (s->broadphase != IB_BROADPHASE_SWEEP_AND_PRUNE && s->broadphase != IB_BROADPHASE_DYNAMIC_TREE)
		err = "unknown broadphase method";
	else if (s->toiMode != IB_TOI_OFF && s->toiMode != IB_TOI_INTERPOLATION && s->toiMode != IB_TOI_BISECTION)
		err = "unknown time-of-contact mode";
	else if (s->maxToiSubsteps < 0 || s->maxToiSubsteps > 1000)
		err = "maxToiSubsteps must be in [0, 1000]";
	else if (s->maxToiIterations < 1 || s->maxToiIterations > 1000)
		err = "maxToiIterations must be in [1, 1000]";
	if (!err) return IB_OK;
	if (msg) snprintf(msg, n, "%s", err);
	return IB_ERR_INVALID_ARGUMENT;
}

ibResult ibWorld_SetCollisionSettings(ibWorldId id, const ibCollisionSettings* s)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!s) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "collision settings are NULL");
	char msg[256];
	ibResult r = ib_validate_collision(s, msg, sizeof msg);
	if (r != IB_OK) return ib_error(w, r, "%s", msg);
	w->collisionSettings = *s;
	return IB_OK;
}

ibCollisionSettings ibWorld_GetCollisionSettings(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return ibDefaultCollisionSettings();
	return w->collisionSettings;
}

ibResult ibWorld_Collide(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	ib_collision_begin_events(w);
	return ib_collision_detect(w);
}

int ibWorld_GetContactCount(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	ibContactPair* c;
	return w ? ib_collision_contacts(w, &c) : 0;
}

int ibWorld_GetContacts(ibWorldId id, ibContactData* out, int capacity)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return 0;
	ibContactPair* c;
	int n = ib_collision_contacts(w, &c);
	if (!out || capacity <= 0) return n;
	for (int i = 0; i < n && i < capacity; ++i) {
		ibContactData* d = &out[i];
		memset(d, 0, sizeof *d);
		d->shapeA = ib_shape_handle(w, c[i].shapeA);
		d->shapeB = ib_shape_handle(w, c[i].shapeB);
		d->normal = c[i].manifold.normal;
		int pc = c[i].manifold.pointCount;
		d->pointCount = pc < IB_MAX_CONTACT_POINTS ? pc : IB_MAX_CONTACT_POINTS;
		for (int k = 0; k < d->pointCount; ++k) {
			const ibManifoldPoint* p = &c[i].manifold.points[k];
			d->points[k] = (ibContactPoint){p->pointA, p->pointB, p->separation};
		}
	}
	return n;
}

ibContactEvents ibWorld_GetContactEvents(ibWorldId id)
{
	ibContactEvents ev = {NULL, 0, NULL, 0};
	ibWorld* w = ib_world_get(id);
	if (!w || !w->collision) return ev;
	ibCollisionWorld* cw = w->collision;
	ev.beginEvents = cw->beginEv;
	ev.beginCount = cw->beginCount;
	ev.endEvents = cw->endEv;
	ev.endCount = cw->endCount;
	return ev;
}

ibCollisionStats ibWorld_GetCollisionStats(ibWorldId id)
{
	ibCollisionStats z = {0};
	z.firstToi = -1.0;
	ibWorld* w = ib_world_get(id);
	return w && w->collision ? w->collision->stats : z;
}

static ibResult get_two_bodies(ibBodyId a, ibBodyId b, ibWorld** out, int32_t* ia, int32_t* ib)
{
	ibWorld *wa, *wb;
	if (!ib_body_get(a, &wa)) return IB_ERR_STALE_HANDLE;
	if (!ib_body_get(b, &wb)) return IB_ERR_STALE_HANDLE;
	if (wa != wb) return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "bodies belong to different worlds");
	if (IB_ID_EQUALS(a, b)) return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "the two bodies are the same");
	*out = wa;
	*ia = a.index1 - 1;
	*ib = b.index1 - 1;
	return IB_OK;
}

ibResult ibWorld_SetPairCollision(ibBodyId bodyA, ibBodyId bodyB, bool collide)
{
	ibWorld* w = NULL;
	int32_t a = 0, b = 0;
	ibResult r = get_two_bodies(bodyA, bodyB, &w, &a, &b);
	if (r != IB_OK) return r;
	ibCollisionWorld* cw = ib_collision_world(w);
	if (!cw) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory");
	uint64_t key = ib_pair_key(a, b);
	bool present = ib_pairkeyset_contains(&cw->excluded, key);
	if (!collide && !present) {
		if (!ib_grow(w, (void**)&cw->exclList, &cw->exclCapacity, cw->exclCount + 1, sizeof(ibExcludedPair)) ||
		    ib_pairkeyset_insert(&cw->alloc, &cw->excluded, key) < 0)
			return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory");
		cw->exclList[cw->exclCount++] = (ibExcludedPair){a, b, w->bodies[a].generation, w->bodies[b].generation};
	} else if (collide && present) {
		ib_pairkeyset_remove(&cw->excluded, key);
		for (int32_t k = 0; k < cw->exclCount; ++k)
			if (ib_pair_key(cw->exclList[k].a, cw->exclList[k].b) == key) {
				cw->exclList[k] = cw->exclList[--cw->exclCount];
				break;
			}
	}
	return IB_OK;
}

bool ibWorld_GetPairCollision(ibBodyId bodyA, ibBodyId bodyB)
{
	ibWorld* w = NULL;
	int32_t a = 0, b = 0;
	if (get_two_bodies(bodyA, bodyB, &w, &a, &b) != IB_OK) return false;
	return !w->collision || !ib_pairkeyset_contains(&w->collision->excluded, ib_pair_key(a, b));
}

ibFilter ibShape_GetFilter(ibShapeId id)
{
	ibWorld* w;
	ibShape* s = ib_shape_get(id, &w);
	return s ? s->filter : ibDefaultFilter();
}

ibResult ibShape_SetFilter(ibShapeId id, ibFilter filter)
{
	ibWorld* w;
	ibShape* s = ib_shape_get(id, &w);
	if (!s) return IB_ERR_STALE_HANDLE;
	s->filter = filter; /* the next sync hands it to the broadphase */
	return IB_OK;
}

ibBounds ibShape_GetBounds(ibShapeId id)
{
	ibWorld* w;
	ibShape* s = ib_shape_get(id, &w);
	ibBounds z = {{0, 0, 0}, {0, 0, 0}};
	if (!s) return z;
	ibAABB a = ib_shape_world_aabb(&w->bodies[s->body], s);
	return (ibBounds){a.lo, a.hi};
}

ibQueryFilter ibDefaultQueryFilter(void) { return (ibQueryFilter){0xFFFFFFFFu, 0xFFFFFFFFu}; }
