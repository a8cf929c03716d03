/* Sleeping of resting islands (sleep.c, island.c; docs/contacts.md "Sleeping"). Internal, not installed.
 *
 * An island is a connected component of the awake dynamic bodies over the last detection's contact
 * pairs and the joints; static and kinematic bodies do not connect islands. At the end of each step
 * every awake dynamic body whose speeds are below the thresholds accumulates sleepTime; an island whose
 * bodies all reached timeToSleep falls asleep: velocities zero, not integrated, and its contacts with
 * static or sleeping bodies are skipped by the contact solver (ib_sleep_pair_inactive). A sleeping
 * island keeps its member list (sleepHead/sleepNext in ibBody) and wakes as a whole. */
#ifndef IBDYN_SRC_SLEEP_H
#define IBDYN_SRC_SLEEP_H

#include "dynamics/world.h"

typedef struct ibSleepStore {
	int32_t* parent;     /* union-find over body indices (grow-only, like all arrays here) */
	int32_t* head;       /* per root: first member of the island being put to sleep, or -1 */
	int32_t* tail;       /* per root: last member */
	double* minTime;     /* per root: smallest sleepTime of its bodies (-1: kept awake) */
	uint8_t* keepAwake;  /* per body: coupled to something that never sleeps (motor, drag, soft) */
	int32_t capacity;
} ibSleepStore;

static inline bool ib_body_awake_dynamic(const ibBody* b) { return b->type == IB_BODY_DYNAMIC && !b->sleeping; }

/* static, sleeping, or kinematic at rest: cannot disturb a sleeping body */
static inline bool ib_body_passive(const ibBody* b)
{
	if (b->type == IB_BODY_STATIC || b->sleeping) return true;
	return b->type == IB_BODY_KINEMATIC && ibLengthSq(b->st.v) == 0.0 && ibLengthSq(b->st.w) == 0.0;
}

/* Contact and narrowphase hook: true if one body of a pair sleeps and the other is passive
 * (sleeping-sleeping, sleeping-static, sleeping-resting kinematic): the pair is neither detected nor
 * resolved. Pairs with awake dynamic or moving kinematic bodies are detected and wake the sleeper. */
static inline bool ib_sleep_pair_inactive(const ibWorld* w, int32_t a, int32_t b)
{
	const ibBody* x = &w->bodies[a];
	const ibBody* y = &w->bodies[b];
	return (x->sleeping && ib_body_passive(y)) || (y->sleeping && ib_body_passive(x));
}

/* sleep.c */
/* Body b falls asleep (zero velocities; its island list is the caller's). */
void ib_sleep_mark_asleep(ibWorld* w, ibBody* b);
/* Wake the island of body i (no-op for awake bodies, except that their sleep timer restarts). */
void ib_sleep_wake_body(ibWorld* w, int32_t i);
void ib_sleep_wake_all(ibWorld* w);
/* Wake the sleeping bodies whose shapes' AABBs (fattened by eps_c) overlap body i's shapes. */
void ib_sleep_wake_near(ibWorld* w, int32_t i);
/* Start of a step and after each detection at t0: wake every sleeping island touching (contact or
 * joint) an awake dynamic or a moving kinematic body, or coupled to a motor, a drag or a soft body.
 * The detection must then run again: the pairs of the woken bodies with static and sleeping bodies
 * were skipped by the narrowphase. */
bool ib_sleep_wake_touching(ibWorld* w); /* true if it woke a body */
/* Body i (any type) moved or is going away: wake its island, its joint partners and the sleeping
 * bodies touching it. */
void ib_sleep_wake_neighbours(ibWorld* w, int32_t i);
/* End of a step: sleep timers, islands, falling asleep, statistics (awakeBodies, sleepingIslands). */
void ib_sleep_end_step(ibWorld* w, double h);
/* Put the island of awake body i to sleep now (ibBody_SetAwake(false)). */
ibResult ib_sleep_put_island(ibWorld* w, int32_t i);
void ib_sleep_destroy(ibWorld* w);

/* island.c */
ibSleepStore* ib_sleep_store(ibWorld* w);
int32_t ib_island_find(ibSleepStore* ss, int32_t i);
/* Union-find of the awake dynamic bodies over contacts and joints and the keepAwake marks; with
 * wake = true sleeping islands joined to awake or moving bodies are woken first. false: out of memory. */
bool ib_islands_build(ibWorld* w, ibSleepStore* ss, bool wake);
/* Only the wake part: keepAwake marks, then wake sleeping islands joined (contact or joint) to awake
 * dynamic or moving kinematic bodies until nothing changes. */
bool ib_islands_wake(ibWorld* w, ibSleepStore* ss);

#endif
