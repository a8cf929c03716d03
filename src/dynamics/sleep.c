/* Sleeping of resting islands (sleep.h, docs/contacts.md "Sleeping"): sleep timers, falling asleep
 * at the end of a step, waking up (contacts, user calls, destruction) and ibBody_SetAwake/IsAwake. */
#include <math.h>
#include <string.h>

#include "collision/collision_world.h"
#include "dynamics/sleep.h"
#include "joints/joint_internal.h"

static void wake_one(ibBody* b)
{
	b->sleeping = false;
	b->sleepTime = 0.0;
	b->sleepHead = b->sleepNext = IB_NULL_INDEX;
	b->velVersion++;
}

void ib_sleep_mark_asleep(ibWorld* w, ibBody* b)
{
	b->sleeping = true;
	if (++b->sleepSerial == 0u) b->sleepSerial = 1u; /* 0: never seen asleep */
	w->maybeAsleep = true;
	w->sleepStamp++;
	b->st.v = b->st.w = IB_VEC3_ZERO;
}

void ib_sleep_wake_body(ibWorld* w, int32_t i)
{
	ibBody* b = &w->bodies[i];
	b->sleepTime = 0.0;
	if (!b->sleeping) return;
	int32_t k = b->sleepHead;
	if (k < 0) { /* own bug guard: a sleeping body always has an island */
		wake_one(b);
		return;
	}
	while (k >= 0) {
		ibBody* m = &w->bodies[k];
		int32_t next = m->sleepNext;
		wake_one(m);
		k = next;
	}
}

void ib_sleep_wake_all(ibWorld* w)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i)
		if (w->bodies[i].inUse && w->bodies[i].sleeping) wake_one(&w->bodies[i]);
}

static bool overlap(ibAABB a, ibAABB b, double m)
{
	return a.lo.x <= b.hi.x + m && b.lo.x <= a.hi.x + m && a.lo.y <= b.hi.y + m && b.lo.y <= a.hi.y + m &&
	       a.lo.z <= b.hi.z + m && b.lo.z <= a.hi.z + m;
}

typedef struct WakeNear {
	ibWorld* w;
	int32_t body;
	ibAABB box;
	double m;
} WakeNear;

static void wake_candidate(void* ctx, int32_t t)
{
	WakeNear* c = ctx;
	const ibShape* sh = &c->w->shapes[t];
	ibBody* o = &c->w->bodies[sh->body];
	if (sh->body == c->body || !o->inUse || !o->sleeping) return;
	if (overlap(c->box, ib_shape_world_aabb(o, sh), c->m)) ib_sleep_wake_body(c->w, sh->body);
}

void ib_sleep_wake_near(ibWorld* w, int32_t i)
{
	if (!w->maybeAsleep) return; /* O(1) for worlds where nobody sleeps (e.g. a teleport every frame) */
	const ibBody* b = &w->bodies[i];
	double m = w->collisionSettings.contactTolerance;
	/* the broadphase's boxes of the sleeping shapes, then the same box test as the scan below (the
	 * same bodies woken; a box scan instead of one world box per sleeping body and call) */
	bool answered = b->firstShape != IB_NULL_INDEX;
	for (int32_t s = b->firstShape; s != IB_NULL_INDEX && answered; s = w->shapes[s].nextInBody) {
		WakeNear c = {w, i, ib_shape_world_aabb(b, &w->shapes[s]), m};
		answered = ib_collision_sleeping_candidates(w, ib_aabb_fatten(c.box, m), wake_candidate, &c);
	}
	if (answered) return;
	int32_t asleep = 0;
	for (int32_t k = 0; k < w->bodyHigh; ++k) asleep += w->bodies[k].inUse && w->bodies[k].sleeping;
	if (asleep == 0) {
		w->maybeAsleep = false;
		return;
	}
	for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) { /* every shape a candidate */
		WakeNear c = {w, i, ib_shape_world_aabb(b, &w->shapes[s]), m};
		for (int32_t t = 0; t < w->shapeHigh; ++t)
			if (w->shapes[t].inUse) wake_candidate(&c, t);
	}
}

bool ib_sleep_wake_touching(ibWorld* w)
{
	int32_t before = 0, after = 0;
	for (int32_t i = 0; i < w->bodyHigh; ++i) before += w->bodies[i].inUse && w->bodies[i].sleeping;
	if (before == 0) return false; /* nothing asleep: no island work */
	if (!ib_islands_wake(w, ib_sleep_store(w))) ib_sleep_wake_all(w); /* out of memory: nobody sleeps */
	for (int32_t i = 0; i < w->bodyHigh; ++i) after += w->bodies[i].inUse && w->bodies[i].sleeping;
	return after < before;
}

void ib_sleep_wake_neighbours(ibWorld* w, int32_t i)
{
	ib_sleep_wake_body(w, i);
	if (!w->maybeAsleep) return; /* nobody to wake */
	ib_sleep_wake_near(w, i);
	const ibJointStore* js = w->joints;
	for (int32_t k = 0; js && k < js->jointHigh; ++k) {
		const ibJoint* j = &js->joints[k];
		if (!j->inUse) continue;
		int32_t x = j->def.bodyA.index1 - 1, y = j->def.bodyB.index1 - 1;
		if (x == i && y >= 0 && y < w->bodyHigh) ib_sleep_wake_body(w, y);
		if (y == i && x >= 0 && x < w->bodyHigh) ib_sleep_wake_body(w, x);
	}
}

/* Put the members of the islands whose root qualifies (minTime >= 0 and >= need) to sleep. */
static void fall_asleep(ibWorld* w, ibSleepStore* ss, double need, int32_t only)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) ss->head[i] = IB_NULL_INDEX;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_body_awake_dynamic(b)) continue;
		int32_t r = ib_island_find(ss, i);
		if (only >= 0 ? r != only : !(ss->minTime[r] >= need && ss->minTime[r] >= 0.0)) continue;
		ib_sleep_mark_asleep(w, b);
		b->velVersion++;
		b->sleepNext = IB_NULL_INDEX;
		if (ss->head[r] < 0) {
			ss->head[r] = i;
		} else {
			w->bodies[ss->tail[r]].sleepNext = i;
		}
		b->sleepHead = ss->head[r];
		ss->tail[r] = i;
	}
}

void ib_sleep_end_step(ibWorld* w, double h)
{
	const ibSleepSettings* set = &w->solver.sleep;
	int awake = 0, islands = 0;
	bool candidates = false;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type != IB_BODY_DYNAMIC) continue;
		if (b->sleeping) {
			if (!set->enabled || !b->enableSleep) {
				ib_sleep_wake_body(w, i);
			} else {
				b->st.v = b->st.w = IB_VEC3_ZERO; /* joint impulses of a sleeping island are discarded */
				continue;
			}
		}
		bool slow = set->enabled && b->enableSleep && ibLength(b->st.v) <= set->linearThreshold &&
		            ibLength(b->st.w) <= set->angularThreshold;
		b->sleepTime = slow ? b->sleepTime + h : 0.0;
		if (b->sleepTime >= set->timeToSleep && slow) candidates = true;
	}
	ibSleepStore* ss = candidates ? ib_sleep_store(w) : NULL;
	if (ss && ib_islands_build(w, ss, true)) {
		for (int32_t i = 0; i < w->bodyHigh; ++i) ss->minTime[i] = INFINITY;
		for (int32_t i = 0; i < w->bodyHigh; ++i) {
			const ibBody* b = &w->bodies[i];
			if (!b->inUse || !ib_body_awake_dynamic(b)) continue;
			int32_t r = ib_island_find(ss, i);
			double t = (ss->keepAwake[i] || !b->enableSleep) ? -1.0 : b->sleepTime;
			if (t < ss->minTime[r]) ss->minTime[r] = t;
		}
		fall_asleep(w, ss, set->timeToSleep, -1);
	}
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type != IB_BODY_DYNAMIC) continue;
		if (!b->sleeping)
			++awake;
		else if (b->sleepHead == i)
			++islands;
	}
	w->stats.awakeBodies = awake;
	w->stats.sleepingIslands = islands;
}

ibResult ib_sleep_put_island(ibWorld* w, int32_t i)
{
	ibBody* b = &w->bodies[i];
	if (!b->enableSleep) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body '%s' has sleeping disabled", b->name ? b->name : "");
	if (b->sleeping) return IB_OK;
	ibSleepStore* ss = ib_sleep_store(w);
	if (!ss || !ib_islands_build(w, ss, false)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory putting a body to sleep");
	int32_t r = ib_island_find(ss, i);
	for (int32_t k = 0; k < w->bodyHigh; ++k) {
		const ibBody* o = &w->bodies[k];
		if (o->inUse && ib_body_awake_dynamic(o) && ib_island_find(ss, k) == r && !o->enableSleep)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body '%s' of the island has sleeping disabled", o->name ? o->name : "");
	}
	fall_asleep(w, ss, 0.0, r);
	return IB_OK;
}

void ib_sleep_destroy(ibWorld* w)
{
	ibSleepStore* ss = w->sleep;
	if (!ss) return;
	ib_free(w, ss->parent, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->head, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->tail, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->minTime, (size_t)ss->capacity * sizeof(double));
	ib_free(w, ss->keepAwake, (size_t)ss->capacity);
	ib_free(w, ss, sizeof *ss);
	w->sleep = NULL;
}

/* ---------------------------------------------------------------- public API */

ibResult ibBody_SetAwake(ibBodyId id, bool awake)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	if (!b) return IB_ERR_STALE_HANDLE;
	if (b->type != IB_BODY_DYNAMIC) {
		if (awake) return IB_OK;
		return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "only dynamic bodies sleep");
	}
	if (awake) {
		ib_sleep_wake_body(w, id.index1 - 1);
		return IB_OK;
	}
	return ib_sleep_put_island(w, id.index1 - 1);
}

bool ibBody_IsAwake(ibBodyId id)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	return b && !b->sleeping;
}

ibResult ibBody_EnableSleep(ibBodyId id, bool enable)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	if (!b) return IB_ERR_STALE_HANDLE;
	b->enableSleep = enable;
	if (!enable) ib_sleep_wake_body(w, id.index1 - 1);
	return IB_OK;
}

bool ibBody_IsSleepEnabled(ibBodyId id)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	return b && b->enableSleep;
}
