/* The joint system's response to a contact impulse (§5.4.2, digest §20.2: Baraff's primary and
 * secondary constraints, [Bar96]).
 *
 * A contact point on a jointed body is swept alternately with the joints. Its impulse is computed with
 * the free bodies' K, and the joint sweep that follows takes much of its effect away again: a 1000 kg
 * chassis on four 1 kg legs (fixed joints) lets each leg's contact push only its leg, the joints then
 * share that push with the chassis, and the pair of loops gains about a thousandth of the error per
 * sweep. The table sank by 9 mm and its contacts collided in every step (tests/test_contact_joint_response.c).
 *
 * The thesis measures, for each contact joint, the relative velocity change Δu_rel that a unit impulse
 * pair (+n at a, -n at b) causes once the primary joints have been corrected, and replaces K n by
 * K_n = K n + (n·Δu_rel) n in eq. 5.11. As printed, Δu_rel already holds the direct part K n (it is
 * measured from before the unit impulses), so K n would count twice; we take the whole measured change
 * as the response (the digest's [R], its list item 13), one point at a time with the state restored in
 * between (the thesis leaves open whether all unit impulses are applied at once; at once, each point's
 * response would contain its neighbours'). [IMPL] beyond the thesis, which notes that friction cannot be
 * handled this way because the direction of a friction impulse is not known in advance: the response
 * is linear, so three probes along the world axes give the whole 3x3 matrix K_eff of the point, which
 * then replaces K for the normal, the friction and the 3x3 sticking solves alike. K_eff is only the
 * loops' step size (their preconditioner): the loops still iterate to their tolerances, with the joint
 * sweeps in between, so an approximate K_eff (probe sweeps capped, limit rows left out) costs sweeps,
 * not accuracy, as long as it does not underestimate the response by more than a factor 2: a step then
 * overshoots and adds energy. That happens where a one-sided limit row, held two-sided by the probes, lets
 * go; such steps are scaled back (ib_contact_follow_checked).
 *
 * A probe: the bodies' velocities are saved; the joints are first swept to their tolerance from the
 * current state (the baseline, so that the probes measure only their own impulse), then for each axis
 * the impulse pair s e_i (s scaled to a velocity change of about 1 m/s) is applied, the joints are swept
 * until no row moves by more than the probe's tolerance, the change of the point's relative velocity is the column
 * K_eff e_i, and the baseline velocities are restored. At the end every touched body gets back its
 * velocities and its velocity version: the sweeps never predict a pose, so the prediction caches of
 * those versions are still right. */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"

enum { PROBE_SWEEPS = 100 };  /* sweeps per probe at most (the response is a step size, not a result) */
#define SCREEN_TOL 1e-3       /* row tolerance of the screening probe, relative to the probe's ~1 m/s */
#define PROBE_ACCURACY 1e-3   /* row tolerance of the three probes of K_eff relative to n^T K_eff n / n^T K n */
#define PROBE_FLOOR 1e-6      /* n^T K_eff n below this fraction of n^T K n: keep the free K */
#define RESPONSE_RATIO 0.25   /* n^T K_eff n above this fraction of n^T K n: keep the free K (probe_point) */
#define SKIP_TIME 0.25        /* s: a body whose points kept the free K is not probed again for this long */

typedef struct BodyVel {
	ibVec3 v, w;
	uint32_t ver;
} BodyVel;

typedef struct ibContactJointResponse {
	BodyVel *orig, *base; /* per body: at entry, after the baseline sweeps */
	uint8_t* mark;        /* per body: 1 = dynamic body of a basic joint, 2 = other touched body */
	int32_t* touched;     /* the marked bodies */
	double* skipUntil;    /* per body: simulated time until which its points keep the free K without a probe */
	ibBasic* basics;      /* the joint rows as they were: the sweeps' preparation at t0 would replace what the
	                       * joint correction left for its sweeps in the position loop */
	int32_t bodyCap, origCap, baseCap, touchedCap, basicsCap, skipCap;
} ibContactJointResponse;

void ib_contact_joint_response_destroy(ibWorld* w, ibContactStore* cs)
{
	ibContactJointResponse* r = cs->jointResponse;
	if (!r) return;
	ib_free(w, r->orig, (size_t)r->origCap * sizeof(BodyVel));
	ib_free(w, r->base, (size_t)r->baseCap * sizeof(BodyVel));
	ib_free(w, r->mark, (size_t)r->bodyCap);
	ib_free(w, r->touched, (size_t)r->touchedCap * sizeof(int32_t));
	ib_free(w, r->basics, (size_t)r->basicsCap * sizeof(ibBasic));
	ib_free(w, r->skipUntil, (size_t)r->skipCap * sizeof(double));
	ib_free(w, r, sizeof *r);
	cs->jointResponse = NULL;
}

static void save(const ibWorld* w, const ibContactJointResponse* r, int32_t n, BodyVel* out)
{
	for (int32_t k = 0; k < n; ++k) {
		const ibBody* b = &w->bodies[r->touched[k]];
		out[r->touched[k]] = (BodyVel){b->st.v, b->st.w, b->velVersion};
	}
}

/* velocities back; the version too only at the end (restoreVersion) */
static void restore(ibWorld* w, const ibContactJointResponse* r, int32_t n, const BodyVel* in, bool restoreVersion)
{
	for (int32_t k = 0; k < n; ++k) {
		ibBody* b = &w->bodies[r->touched[k]];
		const BodyVel* s = &in[r->touched[k]];
		b->st.v = s->v;
		b->st.w = s->w;
		if (restoreVersion) b->velVersion = s->ver;
		else b->velVersion++;
	}
}

static void sweep(ibWorld* w, double tol)
{
	for (int it = 0; it < PROBE_SWEEPS; ++it) {
		/* [IMPL] each hinge or slider at its stop as one block first (ib_limits_block_response_sweep), as in the
		 * follow sweeps: with the rows one by one every probe of the hinged table ran its 100 sweeps and K_eff
		 * came out 2-3 times too small */
		bool z = ib_limits_block_response_sweep(w, tol);
		bool a = ib_limits_response_sweep(w, tol), b = ib_joints_response_sweep(w, tol);
		if (!a && !b && !z) break;
	}
}

static void touch(ibWorld* w, ibContactJointResponse* r, int32_t i, uint8_t m, int32_t* n)
{
	if (i < 0 || i >= w->bodyHigh || r->mark[i] || !ib_is_dynamic(&w->bodies[i])) return;
	r->mark[i] = m;
	r->touched[(*n)++] = i;
}

/* the change of the point's relative velocity per unit impulse pair along d, the joints following */
static ibVec3 probe(ibWorld* w, const ibContactJointResponse* r, int32_t n, ibContactRow* c, ibVec3 d, double s, ibVec3 u0, double tol)
{
	ibVec3 p = ibScale(s, d);
	ib_body_apply_impulse(&w->bodies[c->b1], p, c->a);
	ib_body_apply_impulse(&w->bodies[c->b2], ibNeg(p), c->b);
	if (!(w->solver.contact.directFollow && ib_joints_probe_direct(w, c->b1, c->b2))) sweep(w, tol); /* (joint_follow.c) */
	ibVec3 du = ibScale(1.0 / s, ibSub(ib_contact_rel_velocity(w, c), u0));
	restore(w, r, n, r->base, false);
	return du;
}

/* K_eff of one point at the current poses: 1; 0 where it is not usable, -1 where the joints change the
 * normal response by less than RESPONSE_RATIO (a link of a chain lying on the ground: its neighbours carry
 * little of its load, and the probes and the joint sweeps that must follow each of its impulses cost far
 * more than they save; a 50-link chain 0.24 -> 114 ms/step with K_eff everywhere). The free K stays
 * unless 1. */
static int probe_point(ibWorld* w, const ibContactJointResponse* r, int32_t n, ibContactRow* c, ibMat3* out)
{
	ib_contact_need_K(w, c);
	double tr = c->K.m[0][0] + c->K.m[1][1] + c->K.m[2][2];
	if (!(tr > 0.0) || !(c->nKn > 0.0)) return 0;
	double s = 3.0 / tr;
	ibVec3 u0 = ib_contact_rel_velocity(w, c);
	ibVec3 b[3], col[3];
	b[0] = c->n;
	b[1] = ibPerpendicular(c->n);
	b[2] = ibCross(c->n, b[1]);
	/* a rough screening probe along n first; then all three to a tolerance that resolves K_eff to about
	 * PROBE_ACCURACY of itself (a 10 000 kg table on 1 kg legs: n^T K_eff n ~ 3e-4 n^T K n) */
	double ratio = ibDot(c->n, probe(w, r, n, c, b[0], s, u0, SCREEN_TOL)) / c->nKn;
	if (ratio > RESPONSE_RATIO) return -1;
	double tol = PROBE_ACCURACY * ib_fmax(ratio, PROBE_FLOOR);
	for (int k = 0; k < 3; ++k) col[k] = probe(w, r, n, c, b[k], s, u0, tol);
	if (!(ibDot(c->n, col[0]) > PROBE_FLOOR * c->nKn)) return 0;
	/* K = sum_k col_k b_k^T (K b_k = col_k, b orthonormal), made symmetric */
	ibMat3 K;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) {
			double kij = 0.0, kji = 0.0;
			for (int k = 0; k < 3; ++k) {
				kij += ibVec3_Get(col[k], i) * ibVec3_Get(b[k], j);
				kji += ibVec3_Get(col[k], j) * ibVec3_Get(b[k], i);
			}
			K.m[i][j] = 0.5 * (kij + kji);
		}
	if (!ibMat3_IsFinite(K)) return 0;
	*out = K;
	return 1;
}

/* the joints' velocity sweeps after a K_eff impulse; true if they hold (not capped) */
static bool follow_velocity(ibWorld* w, const ibContactRow* c, double h)
{
	/* the follow solved directly on the point's joint-connected groups (joint_follow.c): the impulse moved no other
	 * body. The sweeps below run over every joint of the world, and where other groups were still moving (ten
	 * ragdolls) each follow ran them to their cap: ~1 s per step */
	if (w->solver.contact.directFollow && ib_joints_follow_direct(w, h, c->b1, c->b2)) return true;
	/* velocity sweeps first, also in the position loop: K_eff is their response, and they pass the impulse
	 * on linearly. Position sweeps alone, on predicted rotations, did not: a leg pushed sideways by a
	 * K_eff-sized friction impulse at its contact (14 N s at 0.1 m on a 1 kg sphere) kept spinning at
	 * 233 rad/s inside its fixed joint, whose predicted rotation error stayed at 1.1e-6 rad. */
	for (int it = 0; it < IB_CONTACT_JOINT_SWEEPS; ++it) {
		/* each hinge or slider as one block first (its rows are strongly coupled: ib_limits_block_follow_sweep) */
		bool z = ib_limits_block_follow_sweep(w, h);
		bool a = ib_limits_follow_sweep(w, h), b = ib_joints_velocity_sweep(w);
		if (!a && !b && !z) return true;
	}
	return false;
}

/* [IMPL] K_eff holds a limit row at its stop as an equality (the probes are linear), but in the follow sweeps
 * the row is one-sided: an impulse that turns a light body off its stop is resisted by the body alone, not by
 * everything behind the limit. A 10 000 kg table on four hinged 1 kg legs whose stops carry it, with friction:
 * the first sticking solve of a leg's point (380 N s up, 222 N s inward, the inward part turning the leg off its
 * stop) met a response 40-3000 times what K_eff predicted, the step gained kJ and the table flew off. So the point's
 * impulse dp is checked against the response the followed joints gave it (measured only where the follow
 * held): if dp^T du exceeds OVERSHOOT times dp^T K_eff dp, the step along dp went past the point of least
 * energy (the loops are coordinate descent; a step is safe below twice the exact one), and the impulse is scaled
 * to f = dp^T K_eff dp / dp^T du of itself (the exact step along dp for a linear response), the accumulated
 * impulses with it (a convex combination of two admissible ones stays in the cone), and the joints follow again. */
#define OVERSHOOT 2.0

void ib_contact_follow_checked(ibWorld* w, ibContactRow* c, const ibContactAcc* before, double h, bool position)
{
	ib_contact_need_K(w, c);
	bool held = follow_velocity(w, c, h);
	ibVec3 dp = ibAdd(ibScale(c->accN - before->accN, c->n), ibSub(c->accT, before->accT));
	double pred = ibDot(dp, ibMat3_MulV(c->K, dp));
	double act = ibDot(dp, ibSub(ib_contact_rel_velocity(w, c), before->u));
	if (held && pred > 0.0 && act > OVERSHOOT * pred) {
		double f = pred / act;
		ib_contact_apply(w, c, ibScale(f - 1.0, dp));
		c->accN = before->accN + f * (c->accN - before->accN);
		c->accVN = before->accVN + f * (c->accVN - before->accVN);
		c->accT = ibAdd(before->accT, ibScale(f, ibSub(c->accT, before->accT)));
		follow_velocity(w, c, h);
	}
	if (position) {
		if (!(w->solver.contact.directFollow && ib_joints_follow_position_direct(w, h, c->b1, c->b2))) /* (joint_follow.c) */
			for (int it = 0; it < IB_CONTACT_JOINT_SWEEPS && ib_joints_position_sweep(w, h); ++it) {}
	}
}

bool ib_contact_point_followed(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx,
                               bool (*point)(ibWorld* w, ibContactStore* cs, ibContactRow* c, void* ctx))
{
	uint32_t v1 = w->bodies[c->b1].velVersion, v2 = w->bodies[c->b2].velVersion;
	ibContactAcc before = ib_contact_acc(w, c);
	bool moved = point(w, cs, c, ctx);
	if (w->bodies[c->b1].velVersion != v1 || w->bodies[c->b2].velVersion != v2) ib_contact_follow_checked(w, c, &before, 0.0, false);
	return moved;
}

void ib_contacts_joint_response(ibWorld* w, ibContactStore* cs, bool colliding)
{
	if (!w->solver.contact.jointResponse || !w->joints || !ib_joints_rebuild_basics(w) || w->joints->basicCount == 0) return;
	if (!cs->jointResponse) {
		cs->jointResponse = ib_alloc(w, sizeof(ibContactJointResponse));
		if (!cs->jointResponse) return;
		memset(cs->jointResponse, 0, sizeof(ibContactJointResponse));
	}
	ibContactJointResponse* r = cs->jointResponse;
	int32_t nb = w->bodyHigh;
	if (!ib_grow(w, (void**)&r->mark, &r->bodyCap, nb + 1, 1) || !ib_grow(w, (void**)&r->orig, &r->origCap, nb + 1, sizeof(BodyVel)) ||
	    !ib_grow(w, (void**)&r->base, &r->baseCap, nb + 1, sizeof(BodyVel)) ||
	    !ib_grow(w, (void**)&r->touched, &r->touchedCap, nb + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&r->skipUntil, &r->skipCap, nb + 1, sizeof(double)))
		return;
	memset(r->mark, 0, (size_t)nb);
	int32_t n = 0;
	ibJointStore* st = w->joints;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		touch(w, r, st->basics[k].b1, 1, &n);
		touch(w, r, st->basics[k].b2, 1, &n);
	}
	int32_t probed = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		c->kj = 0;
		if (!(c->kind == IB_CONTACT_RESTING || (colliding && c->kind == IB_CONTACT_COLLIDING))) continue;
		if (!(r->mark[c->b1] == 1 || r->mark[c->b2] == 1)) continue;
		/* [IMPL] not between two jointed bodies (a ragdoll's chest on its own thigh, two linkages): there the
		 * probes' unit impulses act on both sides of the same joint system, and K_eff with its limit rows taken
		 * two-sided overshot, the position sweeps diverging by ~2 per sweep to 1.5e8 J
		 * (tests/test_contact_ragdoll.c); such points keep the free K */
		if (r->mark[c->b1] == 1 && r->mark[c->b2] == 1) continue;
		/* screened out recently (probe_point's -1): the free K, no probe */
		if ((r->mark[c->b1] != 1 || w->time < r->skipUntil[c->b1]) && (r->mark[c->b2] != 1 || w->time < r->skipUntil[c->b2])) continue;
		touch(w, r, c->b1, 2, &n);
		touch(w, r, c->b2, 2, &n);
		c->kj = 1; /* to be probed */
		++probed;
	}
	if (probed == 0) return;
	if (!ib_grow(w, (void**)&r->basics, &r->basicsCap, st->basicCount + 1, sizeof(ibBasic))) {
		for (int32_t k = 0; k < cs->count; ++k) cs->pts[k].kj = 0;
		return;
	}
	memcpy(r->basics, st->basics, (size_t)st->basicCount * sizeof(ibBasic));
	save(w, r, n, r->orig);
	sweep(w, PROBE_FLOOR); /* the baseline */
	save(w, r, n, r->base);
	for (int32_t k = 0; k < cs->count; ++k) {
		ibContactRow* c = &cs->pts[k];
		if (!c->kj) continue;
		ibMat3 K;
		int got = probe_point(w, r, n, c, &K);
		if (got < 0) { /* not worth it: this body's points keep the free K for SKIP_TIME */
			if (r->mark[c->b1] == 1) r->skipUntil[c->b1] = w->time + SKIP_TIME;
			if (r->mark[c->b2] == 1) r->skipUntil[c->b2] = w->time + SKIP_TIME;
		}
		if (got > 0) {
			c->K = K;
			c->nKn = ibDot(c->n, ibMat3_MulV(K, c->n));
			c->kinv = 0;
		} else {
			c->kj = 0;
		}
	}
	restore(w, r, n, r->orig, true);
	memcpy(st->basics, r->basics, (size_t)st->basicCount * sizeof(ibBasic));
}
