/* Islands for sleeping (sleep.h): connected components of the awake dynamic bodies over the contact
 * pairs of the last detection and the joints, by union-find with path halving. Static and kinematic
 * bodies do not connect islands. Joints with a motor and drag joints keep their bodies awake (a motor
 * schedule or a drag target changes without a call on the bodies), as does any coupling to a soft body
 * (rigid-soft constraints, particle contacts): the soft module has no sleeping. */
#include <math.h>
#include <string.h>

#include "collision/collision_world.h"
#include "dynamics/sleep.h"
#include "math/union_find.h"
#include "joints/joint_internal.h"
#include "soft/soft_internal.h"

ibSleepStore* ib_sleep_store(ibWorld* w)
{
	if (!w->sleep) {
		w->sleep = ib_alloc(w, sizeof(ibSleepStore));
		if (w->sleep) memset(w->sleep, 0, sizeof(ibSleepStore));
	}
	ibSleepStore* ss = w->sleep;
	if (!ss || w->bodyHigh <= ss->capacity) return ss;
	int32_t cap = w->bodyHigh + w->bodyHigh / 2 + 8;
	int32_t* p = ib_alloc(w, (size_t)cap * sizeof(int32_t));
	int32_t* hd = ib_alloc(w, (size_t)cap * sizeof(int32_t));
	int32_t* tl = ib_alloc(w, (size_t)cap * sizeof(int32_t));
	double* mt = ib_alloc(w, (size_t)cap * sizeof(double));
	uint8_t* ka = ib_alloc(w, (size_t)cap);
	if (!p || !hd || !tl || !mt || !ka) {
		ib_free(w, p, (size_t)cap * sizeof(int32_t));
		ib_free(w, hd, (size_t)cap * sizeof(int32_t));
		ib_free(w, tl, (size_t)cap * sizeof(int32_t));
		ib_free(w, mt, (size_t)cap * sizeof(double));
		ib_free(w, ka, (size_t)cap);
		return NULL;
	}
	memset(ka, 0, (size_t)cap);
	ib_free(w, ss->parent, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->head, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->tail, (size_t)ss->capacity * sizeof(int32_t));
	ib_free(w, ss->minTime, (size_t)ss->capacity * sizeof(double));
	ib_free(w, ss->keepAwake, (size_t)ss->capacity);
	ss->parent = p;
	ss->head = hd;
	ss->tail = tl;
	ss->minTime = mt;
	ss->keepAwake = ka;
	ss->capacity = cap;
	return ss;
}

int32_t ib_island_find(ibSleepStore* ss, int32_t i) { return ib_uf_find(ss->parent, i); }

/* the smaller index is the root: islands come out in body order */
static void unite(ibSleepStore* ss, int32_t a, int32_t b) { ib_uf_unite_min(ss->parent, a, b); }

static bool moving(const ibBody* b) { return ibLengthSq(b->st.v) > 0.0 || ibLengthSq(b->st.w) > 0.0; }

/* An edge between bodies x and y: wakes a sleeping end joined to an awake dynamic or moving kinematic
 * body (wake pass), or unites two awake dynamic ends (union pass). Returns true if it woke something. */
static bool edge(ibWorld* w, ibSleepStore* ss, int32_t x, int32_t y, bool wakePass)
{
	ibBody* a = &w->bodies[x];
	ibBody* b = &w->bodies[y];
	if (wakePass) {
		if (a->sleeping && (ib_body_awake_dynamic(b) || (b->type == IB_BODY_KINEMATIC && moving(b)))) {
			ib_sleep_wake_body(w, x);
			return true;
		}
		if (b->sleeping && (ib_body_awake_dynamic(a) || (a->type == IB_BODY_KINEMATIC && moving(a)))) {
			ib_sleep_wake_body(w, y);
			return true;
		}
		return false;
	}
	if (ib_body_awake_dynamic(a) && ib_body_awake_dynamic(b)) unite(ss, x, y);
	return false;
}

static int32_t joint_body(const ibWorld* w, ibBodyId id)
{
	int32_t i = id.index1 - 1;
	return (i >= 0 && i < w->bodyHigh && w->bodies[i].inUse) ? i : -1;
}

/* One pass over all edges; returns true if the wake pass woke a body. */
static bool pass(ibWorld* w, ibSleepStore* ss, bool wakePass)
{
	bool woke = false;
	ibContactPair* pairs = NULL;
	int np = w->collision ? ib_collision_contacts(w, &pairs) : 0;
	for (int k = 0; k < np; ++k) woke |= edge(w, ss, pairs[k].bodyA, pairs[k].bodyB, wakePass);
	const ibJointStore* js = w->joints;
	for (int32_t k = 0; js && k < js->jointHigh; ++k) {
		const ibJoint* j = &js->joints[k];
		if (!j->inUse) continue;
		int32_t x = joint_body(w, j->def.bodyA), y = joint_body(w, j->def.bodyB);
		if (x < 0 || y < 0) continue;
		woke |= edge(w, ss, x, y, wakePass);
	}
	return woke;
}

static void keep(ibWorld* w, ibSleepStore* ss, int32_t i)
{
	if (i < 0 || i >= w->bodyHigh || !w->bodies[i].inUse || w->bodies[i].type != IB_BODY_DYNAMIC) return;
	ss->keepAwake[i] = 1;
	if (w->bodies[i].sleeping) ib_sleep_wake_body(w, i);
}

static void mark_keep_awake(ibWorld* w, ibSleepStore* ss)
{
	memset(ss->keepAwake, 0, (size_t)w->bodyHigh);
	const ibJointStore* js = w->joints;
	for (int32_t k = 0; js && k < js->jointHigh; ++k) {
		const ibJoint* j = &js->joints[k];
		if (!j->inUse || (j->def.motor.mode == IB_MOTOR_OFF && j->dragHelper < 0)) continue;
		keep(w, ss, joint_body(w, j->def.bodyA));
		keep(w, ss, joint_body(w, j->def.bodyB));
	}
	const ibSoftStore* sf = w->soft;
	if (!sf) return;
	for (int32_t k = 0; k < sf->conHigh; ++k) {
		const ibSoftCon* c = &sf->cons[k];
		if (!c->inUse) continue;
		for (int p = 0; p < c->count; ++p)
			if (c->parts[p].isBody) keep(w, ss, c->parts[p].index);
	}
	for (int32_t k = 0; k < sf->contactCount; ++k) keep(w, ss, sf->contacts[k].body);
}

bool ib_islands_wake(ibWorld* w, ibSleepStore* ss)
{
	if (!ss) return false;
	mark_keep_awake(w, ss);
	while (pass(w, ss, true)) {} /* each round wakes at least one whole island, so this ends */
	return true;
}

bool ib_islands_build(ibWorld* w, ibSleepStore* ss, bool wake)
{
	if (!ss || (wake && !ib_islands_wake(w, ss))) return false;
	for (int32_t i = 0; i < w->bodyHigh; ++i) ss->parent[i] = i;
	pass(w, ss, false);
	return true;
}
