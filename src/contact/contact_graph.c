/* Contact graph (§5.2.3, digest §17.3) and shock propagation (§5.2.4, §5.3.2, digest §17.4/§18.2).
 *
 * Nodes are bodies, edges contact points. Level 0 is every non-dynamic body that has contacts (the
 * root); a breadth-first search gives each reached body the level of its parent + 1; a component
 * without a non-dynamic body starts at its first body with level 0. A point's level is the smaller
 * level of its two bodies, and the sweeps visit the points in ascending level, from the ground up.
 * [R] Cycles are not merged into one level: a non-tree edge between two bodies of the same level
 * is a same-level point and is treated as in a merged level (neither side frozen).
 *
 * Shock propagation: after shockIterations sweeps (0 = off) the loop makes one last pass, level by
 * level from the root; while the points of level L are iterated, the lower body of each point is
 * frozen: impulses are computed with its response taken out and are not applied to it (it is not
 * given infinite mass, so its predicted motion under gravity stays right, §5.3.2). Each level gets at
 * most shockIterations sweeps, each followed by the loop's joint sweep as before the pass (a joint
 * may move a frozen body). It trades accuracy for speed and makes an early abort valid. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"
#include "math/union_find.h"

static bool grow_i32(ibWorld* w, int32_t** a, int32_t* cap, int32_t need)
{
	return ib_grow(w, (void**)a, cap, need, sizeof(int32_t));
}

bool ib_contacts_graph(ibWorld* w, ibContactStore* cs)
{
	int32_t nb = w->bodyHigh, np = cs->count;
	if (!grow_i32(w, &cs->level, &cs->levelCapacity, nb + 1) || !grow_i32(w, &cs->queue, &cs->queueCapacity, nb + 1) ||
	    !grow_i32(w, &cs->adjStart, &cs->adjStartCapacity, nb + 2) || !grow_i32(w, &cs->adj, &cs->adjCapacity, 2 * np + 1) ||
	    !grow_i32(w, &cs->order, &cs->orderCapacity, np + 1))
		return false;
	/* adjacency (CSR) of the bodies over the points */
	memset(cs->adjStart, 0, (size_t)(nb + 2) * sizeof(int32_t));
	for (int32_t k = 0; k < np; ++k) {
		cs->adjStart[cs->pts[k].b1 + 2]++;
		cs->adjStart[cs->pts[k].b2 + 2]++;
	}
	for (int32_t i = 2; i < nb + 2; ++i) cs->adjStart[i] += cs->adjStart[i - 1];
	for (int32_t k = 0; k < np; ++k) {
		cs->adj[cs->adjStart[cs->pts[k].b1 + 1]++] = k;
		cs->adj[cs->adjStart[cs->pts[k].b2 + 1]++] = k;
	}
	/* now adjStart[i]..adjStart[i+1] are body i's points; BFS from the non-dynamic bodies */
	int32_t head = 0, tail = 0;
	for (int32_t i = 0; i < nb; ++i) {
		cs->level[i] = -1;
		if (cs->adjStart[i + 1] > cs->adjStart[i] && !ib_is_dynamic(&w->bodies[i])) {
			cs->level[i] = 0;
			cs->queue[tail++] = i;
		}
	}
	int32_t next = 0;
	for (;;) {
		while (head < tail) {
			int32_t x = cs->queue[head++];
			for (int32_t e = cs->adjStart[x]; e < cs->adjStart[x + 1]; ++e) {
				const ibContactRow* c = &cs->pts[cs->adj[e]];
				int32_t y = c->b1 == x ? c->b2 : c->b1;
				if (cs->level[y] >= 0) continue;
				cs->level[y] = cs->level[x] + 1;
				cs->queue[tail++] = y;
			}
		}
		while (next < nb && !(cs->level[next] < 0 && cs->adjStart[next + 1] > cs->adjStart[next])) ++next;
		if (next >= nb) break;
		cs->level[next] = 0; /* an independent graph without static bodies */
		cs->queue[tail++] = next;
	}
	/* points in ascending level (counting sort) */
	int32_t maxLevel = 0;
	for (int32_t k = 0; k < np; ++k) {
		ibContactRow* c = &cs->pts[k];
		int32_t l1 = cs->level[c->b1], l2 = cs->level[c->b2];
		c->level = l1 < l2 ? l1 : l2;
		if (c->level > maxLevel) maxLevel = c->level;
	}
	if (!grow_i32(w, &cs->levelStart, &cs->levelStartCapacity, maxLevel + 3)) return false;
	memset(cs->levelStart, 0, (size_t)(maxLevel + 3) * sizeof(int32_t));
	for (int32_t k = 0; k < np; ++k) cs->levelStart[cs->pts[k].level + 2]++;
	for (int32_t l = 2; l < maxLevel + 3; ++l) cs->levelStart[l] += cs->levelStart[l - 1];
	for (int32_t k = 0; k < np; ++k) cs->order[cs->levelStart[cs->pts[k].level + 1]++] = k;
	cs->levelCount = maxLevel + 1;
	return true;
}

/* The response of a point with its lower body frozen (shock propagation). */
static void freeze_lower(ibWorld* w, ibContactStore* cs, ibContactRow* c)
{
	int32_t l1 = cs->level[c->b1], l2 = cs->level[c->b2];
	c->frozen = l1 < l2 ? 1 : l2 < l1 ? 2 : 0;
	if (c->frozen == 0) return;
	ib_contact_need_K(w, c);
	c->Ksave = c->K;
	c->nKnSave = c->nKn;
	c->kinv = 0;
	int32_t s = c->frozen == 1 ? c->b2 : c->b1;
	ibVec3 p = c->frozen == 1 ? c->b : c->a;
	c->K = ib_contact_response(w, s, p, s, p);
	c->K = ibMat3_Scale(0.5, c->K); /* response(s, p, s, p) counts body s twice */
	double nKn = ibDot(c->n, ibMat3_MulV(c->K, c->n));
	if (nKn > 0.0) c->nKn = nKn;
}

static void unfreeze(ibContactRow* c)
{
	if (c->frozen == 0) return;
	c->K = c->Ksave;
	c->nKn = c->nKnSave;
	c->kinv = 0;
	c->frozen = 0;
}

/* [IMPL] Masked sweeps. A point that was within its tolerance when it was last iterated, and none of
 * whose dynamic bodies has had a point outside its tolerance since, is not iterated: its bodies
 * changed by sub-tolerance corrections only, and its own correction would be of that size. Where a
 * few points of a large pile converge slowly, a sweep then costs the points around them instead of
 * the whole set (rain1000: after about 100 sweeps 2-6 of 2000 points were still outside eps_d, up to
 * the cap of 1000 sweeps). The loop ends only after a full sweep (every point iterated) in which no
 * point was outside its tolerance: the same criterion as without the mask. Off with joint or soft
 * sweeps (their impulses are not attributed to bodies here), and below IB_CONTACT_MASK_MIN_POINTS
 * points, where a full sweep is cheap: small scenes iterate exactly as without the mask. */
enum { IB_CONTACT_MASK_MIN_POINTS = 256 };
static bool point_skipped(const ibContactStore* cs, const ibContactMaskRow* r)
{
	return r->quiet && cs->bodyMoved[r->b1] < r->seen && cs->bodyMoved[r->b2] < r->seen;
}

static void mask_reset(ibContactStore* cs, int32_t nb, int32_t na)
{
	memset(cs->bodyMoved, 0, (size_t)nb * sizeof(int32_t));
	for (int32_t j = 0; j < na; ++j) cs->maskRows[j].seen = cs->maskRows[j].quiet = 0;
}

void ib_contacts_mark_both(ibContactStore* cs)
{
	for (int32_t j = 0; j < cs->count; ++j) {
		ibContactRow* c = &cs->pts[j];
		c->twoN = c->accN;
		c->twoVN = c->accVN;
		c->twoT = c->accT;
	}
}

/* keepBest (ib_contacts_run): the state after a sweep, saved or restored (body velocities, the active points'
 * accumulated impulses) */
/* The dynamic bodies a loop over some points can move: one island's (ib_contacts_run per island), or every body */
typedef struct LoopBodies {
	const int32_t* list; /* NULL: every body of the world */
	int32_t count;
} LoopBodies;

static int32_t loop_body(const ibWorld* w, const LoopBodies* lb, int32_t k) { return lb->list ? lb->list[k] : (k < w->bodyHigh ? k : -1); }
static int32_t loop_body_count(const ibWorld* w, const LoopBodies* lb) { return lb->list ? lb->count : w->bodyHigh; }

/* their kinetic energy (ib_bodies_kinetic_energy over the whole world) */
static double loop_energy(const ibWorld* w, const LoopBodies* lb)
{
	if (!lb->list) return ib_bodies_kinetic_energy(w);
	double e = 0.0;
	for (int32_t k = 0; k < lb->count; ++k) e += ib_body_kinetic_energy(&w->bodies[lb->list[k]]);
	return e;
}

static void best_state(ibWorld* w, ibContactStore* cs, const LoopBodies* lb, const int32_t* act, int32_t na, bool restore)
{
	for (int32_t z = 0, nz = loop_body_count(w, lb); z < nz; ++z) {
		int32_t i = loop_body(w, lb, z);
		ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		ibVec3* s = &cs->bestVel[2 * i];
		if (!restore) {
			s[0] = b->st.v;
			s[1] = b->st.w;
		} else {
			b->st.v = s[0];
			b->st.w = s[1];
			b->velVersion++;
		}
	}
	for (int32_t j = 0; j < na; ++j) {
		ibContactRow* c = &cs->pts[act[j]];
		double* a = &cs->bestAcc[5 * j];
		if (!restore) {
			a[0] = c->accN, a[1] = c->accVN, a[2] = c->accT.x, a[3] = c->accT.y, a[4] = c->accT.z;
		} else {
			c->accN = a[0], c->accVN = a[1], c->accT = ibV3(a[2], a[3], a[4]);
		}
	}
}

/* [IMPL] keepBest: a loop ended not converged with the kinetic energy above keepBest times (plus 1e-9 J) its
 * least value after a sweep goes back to that sweep. The loops that ask for it are inelastic projections of the
 * velocities (targets <= 0: zero velocity satisfies them): with exact responses their sweeps are coordinate
 * descent on the dual problem, whose objective is the kinetic energy, so the energy never rises. But a point with
 * the joints' response K_eff (contact_joint_response.c), where K_eff misjudges the joints (one-sided limit rows
 * taken as two-sided), can pump: a ragdoll lying on the ground (tests/test_contact_ragdoll.c, seed 35) cycled
 * between 1.1 and 167 J of kinetic energy every 7 sweeps, one thigh's point raising it and the other points
 * taking it out, and the velocity loop, ended by the stall rule at sweep 51, left 159 J. */
#define IB_CONTACT_BEST_SLACK 1e-9

/* [IMPL] A position loop that ends not converged with its largest error above IB_CONTACT_DIVERGED times its
 * first sweep's diverged: its impulses are taken back (body velocities and the points' accumulated impulses as
 * before the first sweep), the step is reported not converged with the first sweep's residual, and the
 * penetration is left to the velocity correction and the next steps. Gauss-Seidel on a consistent linear
 * response cannot grow its error; it grows where a predicted normal turns with a body that the loop's own
 * impulses spin up (a light hull squeezed by a falling cylinder onto a mesh, the normal turning with the
 * hull; two cylinders crossing at a small angle, z1 x z2 turning with both), and the loop's impulses then
 * raised the kinetic energy without bound: random drops onto bumpy meshes (tests/test_trimesh_contact.c)
 * gained 95 J, 1.8 kJ and 21 kJ in one step, the residual growing from 6.6e-3 to 2.5e-2 m and from 2e-2 to
 * 0.38 m in 51 sweeps. A converging loop's largest error falls (its first sweep sees the errors before any
 * correction); rain1000's stalled loops end 10-1000 times below their first sweep's. */
#define IB_CONTACT_DIVERGED 2.0

/* The loop over the points act[0 .. na-1] (all of the loop's points, or one island's) */
static int run_points(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, const LoopBodies* lb, const int32_t* act, int32_t na,
                      bool* movedOut)
{
	const ibContactSettings* set = &w->solver.contact;
	int cap = set->maxContactIterations, shock = set->shockIterations;
	if (loop->cap > 0) cap = loop->cap;
	bool mask = cs->count >= IB_CONTACT_MASK_MIN_POINTS && !loop->extra &&
	            ib_grow(w, (void**)&cs->bodyMoved, &cs->bodyMovedCapacity, w->bodyHigh + 1, sizeof(int32_t)) &&
	            ib_grow(w, (void**)&cs->maskRows, &cs->maskRowsCapacity, na + 1, sizeof(ibContactMaskRow));
	if (mask) {
		for (int32_t j = 0; j < na; ++j) {
			const ibContactRow* c = &cs->pts[act[j]];
			cs->maskRows[j].b1 = c->b1;
			cs->maskRows[j].b2 = c->b2;
		}
		mask_reset(cs, w->bodyHigh, na);
	}
	/* keepBest saves the best sweep's state; a position loop of free bodies (no joint sweeps, which the saved
	 * state would not undo) saves its start in the same arrays, to go back to if it diverges (IB_CONTACT_DIVERGED) */
	const bool wantKeep = loop->keepBest > 0.0, wantGuard = !wantKeep && loop->residual && !loop->extra && na > 0;
	const bool saves = (wantKeep || wantGuard) &&
	                   ib_grow(w, (void**)&cs->bestVel, &cs->bestVelCapacity, 2 * w->bodyHigh + 2, sizeof(ibVec3)) &&
	                   ib_grow(w, (void**)&cs->bestAcc, &cs->bestAccCapacity, 5 * na + 5, sizeof(double));
	const bool keep = wantKeep && saves, guard = wantGuard && saves;
	if (guard) best_state(w, cs, lb, act, na, false);
	double firstRes = 0.0;
	double bestKe = INFINITY;
	int bestIt = -1;
	int32_t tick = 0;
	int it = 0, stall = set->stallSweeps, refIt = 0;
	double ref = INFINITY;
	bool moved = true, full = true;
	while (moved && it < cap) {
		if (shock > 0 && it >= shock) break;
		++it;
		moved = false;
		cs->sweepMax2 = 0.0;
		if (loop->residual) *loop->residual = 0.0; /* the residual reported is the last sweep's */
		for (int32_t j = 0; j < na; ++j) {
			if (mask && !full && point_skipped(cs, &cs->maskRows[j])) continue;
			ibContactRow* c = &cs->pts[act[j]];
			bool m = loop->point(w, cs, c, loop->ctx);
			if (m) moved = true;
			if (!mask) continue;
			ibContactMaskRow* r = &cs->maskRows[j];
			r->seen = ++tick;
			r->quiet = !m;
			if (m) { /* the points of its dynamic bodies are iterated again */
				if (ib_is_dynamic(&w->bodies[c->b1])) cs->bodyMoved[c->b1] = tick;
				if (ib_is_dynamic(&w->bodies[c->b2])) cs->bodyMoved[c->b2] = tick;
			}
		}
		if (loop->extra && loop->extra(w, loop->ctx)) moved = true;
		if (it == 1 && loop->residual) firstRes = *loop->residual;
		if (mask && tick > INT32_MAX / 2) { /* (never in practice) restart the stamps: one full sweep */
			mask_reset(cs, w->bodyHigh, na);
			tick = 0;
		}
		if (keep && moved) {
			double ke = loop_energy(w, lb);
			if (ke < bestKe) {
				bestKe = ke;
				bestIt = it;
				best_state(w, cs, lb, act, na, false);
			}
		}
		/* a masked sweep without a moving point is confirmed by a full one */
		if (mask && !moved && !full) moved = full = true;
		else full = false;
		/* stalled: the largest impulse of a sweep has not halved for stallSweeps sweeps (the points
		 * cycle, e.g. sliding friction in a pile); the loop ends as at the cap, not converged */
		if (stall > 0 && moved) {
			if (cs->sweepMax2 < 0.25 * ref) {
				ref = cs->sweepMax2;
				refIt = it;
			} else if (it - refIt >= stall) {
				break;
			}
		}
	}
	cs->bestRestored = keep && moved && bestIt >= 0 && bestIt < it &&
	                   loop_energy(w, lb) > loop->keepBest * bestKe + IB_CONTACT_BEST_SLACK;
	if (cs->bestRestored) best_state(w, cs, lb, act, na, true);
	cs->startRestored = guard && moved && it > 1 && *loop->residual > IB_CONTACT_DIVERGED * firstRes;
	if (cs->startRestored) {
		best_state(w, cs, lb, act, na, true);
		*loop->residual = firstRes;
	}
	/* the impulses so far act on both bodies; those of the shock pass only on the upper one, so they
	 * must not warm-start the next step, where they would act on both */
	ib_contacts_mark_both(cs);
	if (moved && shock > 0 && it >= shock && cs->levelCount > 0 && !cs->startRestored) { /* shock propagation: one last pass */
		moved = false;
		for (int32_t L = 0; L < cs->levelCount; ++L) {
			int32_t a = L == 0 ? 0 : cs->levelStart[L], b = cs->levelStart[L + 1];
			for (int32_t j = a; j < b; ++j) freeze_lower(w, cs, &cs->pts[cs->order[j]]);
			bool lm = true;
			/* at most shockIterations sweeps per level: a box on two frozen boxes that move a little
			 * differently cannot stick on both, and iterating it to the tolerance may never end */
			for (int i = 0; lm && i < shock; ++i) {
				lm = false;
				++it;
				for (int32_t j = a; j < b; ++j)
					if (loop->point(w, cs, &cs->pts[cs->order[j]], loop->ctx)) lm = true;
				/* the loop's joint sweep follows each sweep, as before the pass: without it the pass's
				 * impulses opened the joints of the bodies they moved (the pendulum ball of
				 * tests/test_contact_wall.c: 1.5e-4 m against eps_d = 1e-6 m) */
				if (loop->extra && loop->extra(w, loop->ctx)) lm = true;
			}
			if (lm) moved = true;
			for (int32_t j = a; j < b; ++j) unfreeze(&cs->pts[cs->order[j]]);
		}
	}
	*movedOut = moved;
	return it;
}

/* joins the islands of bodies x and y where both are dynamic (parent -1: not) */
static void uf_unite(int32_t* p, int32_t x, int32_t y)
{
	if (p[x] >= 0 && p[y] >= 0) ib_uf_unite_min(p, x, y);
}

/* [IMPL] Per island. With joint sweeps in the loop (ragdolls, jointed structures) the points and joints are
 * split into islands (dynamic bodies connected by the loop's points and by joints) and each island is
 * iterated alone, its joint sweeps taking only its own rows (ibJointStore.sweepIsland): it ends when its
 * own points and joints hold, or by its own stall rule or cap. As one loop, every sweep visited every
 * island's points and swept every joint of the world until the slowest island converged or stalled. With
 * the masked sweeps (no joint sweeps) the converged parts are skipped already, and such loops stay one.
 * Returns -1 where the loop is not split (no joint sweeps, soft bodies, shock propagation, one island). */
/* Stable counting sort of items 0..n-1 by key[i] in 0..nk-1 (items with key < 0 left out): out[start[k] ..
 * start[k] + count[k] - 1] are the items (item[i], or i if item is NULL) of key k in their order. */
static void group_by(const int32_t* key, const int32_t* item, int32_t n, int32_t nk, int32_t* count, int32_t* start, int32_t* out)
{
	for (int32_t k = 0; k < nk; ++k) count[k] = 0;
	for (int32_t i = 0; i < n; ++i)
		if (key[i] >= 0) count[key[i]]++;
	for (int32_t k = 0, o = 0; k < nk; ++k) {
		start[k] = o;
		o += count[k];
	}
	for (int32_t i = 0; i < n; ++i)
		if (key[i] >= 0) out[start[key[i]]++] = item ? item[i] : i;
	for (int32_t k = 0; k < nk; ++k) start[k] -= count[k];
}

static int run_islands(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, int32_t na, bool* movedOut)
{
	ibJointStore* st = w->joints;
	if (!loop->extra || !st || st->basicCount == 0 || ib_soft_active(w) || w->solver.contact.shockIterations > 0 || na < 2)
		return -1;
	int32_t nb = w->bodyHigh;
	if (!ib_grow(w, (void**)&cs->islandBody, &cs->islandBodyCapacity, 7 * nb + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&cs->islandPts, &cs->islandPtsCapacity, 2 * na + 1, sizeof(int32_t)))
		return -1;
	/* per body: union-find parents, island labels (the root, -1 if not dynamic), the islands' points and bodies */
	int32_t *par = cs->islandBody, *lab = par + nb, *pcount = lab + nb, *pstart = pcount + nb;
	int32_t *bcount = pstart + nb, *bstart = bcount + nb, *blist = bstart + nb;
	int32_t *pts = cs->islandPts, *pkey = pts + na;
	for (int32_t i = 0; i < nb; ++i) par[i] = w->bodies[i].inUse && ib_is_dynamic(&w->bodies[i]) ? i : -1;
	for (int32_t j = 0; j < na; ++j) uf_unite(par, cs->pts[cs->active[j]].b1, cs->pts[cs->active[j]].b2);
	for (int32_t k = 0; k < st->basicCount; ++k) uf_unite(par, st->basics[k].b1, st->basics[k].b2);
	for (int32_t i = 0; i < nb; ++i) lab[i] = par[i] < 0 ? -1 : ib_uf_find(par, i);
	bool split = false;
	for (int32_t j = 0; j < na; ++j) {
		const ibContactRow* c = &cs->pts[cs->active[j]];
		pkey[j] = lab[c->b1] >= 0 ? lab[c->b1] : lab[c->b2];
		if (pkey[j] < 0) return -1; /* (no dynamic body: not a contact joint) */
		split = split || pkey[j] != pkey[0];
	}
	if (!split) return -1; /* one island */
	group_by(pkey, cs->active, na, nb, pcount, pstart, pts); /* each island's points in sweep order */
	group_by(lab, NULL, nb, nb, bcount, bstart, blist);      /* and its bodies (energy, saved state) */
	int its = 0;
	bool moved = false, best = false, start = false;
	double res = 0.0;
	st->sweepIsland = lab;
	for (int32_t r = 0; r < nb; ++r) {
		if (pcount[r] == 0) continue;
		st->sweepId = r;
		bool m = false;
		const LoopBodies lb = {blist + bstart[r], bcount[r]};
		int it = run_points(w, cs, loop, &lb, pts + pstart[r], pcount[r], &m);
		its = it > its ? it : its;
		moved = moved || m;
		best = best || cs->bestRestored;
		start = start || cs->startRestored;
		if (loop->residual) res = ib_fmax(res, *loop->residual);
	}
	st->sweepIsland = NULL;
	cs->bestRestored = best;
	cs->startRestored = start;
	if (loop->residual) *loop->residual = res;
	*movedOut = moved;
	return its;
}

/* the points of the loop's kind in sweep order into cs->active (the others would return false, untouched), only
 * those at a marked body where mark is set; their count, -1 if out of memory */
static int32_t gather(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, const uint8_t* mark)
{
	bool ordered = w->solver.contact.contactGraph && cs->levelCount > 0;
	if (!ib_grow(w, (void**)&cs->active, &cs->activeCapacity, cs->count + 1, sizeof(int32_t))) return -1;
	int32_t na = 0;
	for (int32_t j = 0; j < cs->count; ++j) {
		int32_t k = ordered ? cs->order[j] : j;
		const ibContactRow* c = &cs->pts[k];
		if (c->kind == loop->kind && (!mark || (c->b1 >= 0 && mark[c->b1]) || (c->b2 >= 0 && mark[c->b2]))) cs->active[na++] = k;
	}
	return na;
}

int ib_contacts_run(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, bool* movedOut)
{
	int32_t na = gather(w, cs, loop, NULL);
	if (na < 0) {
		*movedOut = true;
		return 0;
	}
	int its = run_islands(w, cs, loop, na, movedOut);
	const LoopBodies all = {NULL, 0};
	return its >= 0 ? its : run_points(w, cs, loop, &all, cs->active, na, movedOut);
}

int ib_contacts_run_marked(ibWorld* w, ibContactStore* cs, const ibContactLoop* loop, const uint8_t* mark, bool* movedOut)
{
	int32_t na = gather(w, cs, loop, mark);
	if (na < 0) {
		*movedOut = true;
		return 0;
	}
	const LoopBodies all = {NULL, 0};
	return run_points(w, cs, loop, &all, cs->active, na, movedOut);
}
