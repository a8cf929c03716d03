/* The time step (Part VI §21): force modules once per step, collision detection and resolution at
 * t0 with this step's contact joints (src/contact), then joint correction (§3.2.1) followed by the
 * contact joints, free motion (§3.1.2) and velocity correction of joints and contacts; split into
 * equal sub-steps when a jointed body would turn by more than maxRotationPerStep in one step. If the joint corrections do not
 * reach their tolerances within the iteration caps, the step is restored and redone as two halves
 * with the same (constant) forces, recursively up to maxStepSubdivisions — as the thesis redoes a
 * step with reduced length at a time of contact (§4.1). Only the position/velocity state moves. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "collision/collision_world.h"
#include "dynamics/sleep.h"
#include "dynamics/world.h"

/* Wall clock (ms) for the timing fields of ibStepStats. */
static double now_ms(void)
{
	struct timespec ts;
	if (timespec_get(&ts, TIME_UTC) != TIME_UTC) return 0.0;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool body_finite(const ibBody* b)
{
	return ibVec3_IsFinite(b->st.s) && ibVec3_IsFinite(b->st.v) && ibVec3_IsFinite(b->st.w) &&
	       ibQuat_IsFinite(b->st.q);
}

/* A speed beyond the world's bound (0 = none) counts as divergence: a blow-up that stays finite. */
static bool too_fast(ibVec3 v, double vmax, ibVec3 om, double wmax)
{
	return (vmax > 0.0 && ibDot(v, v) > vmax * vmax) || (wmax > 0.0 && ibDot(om, om) > wmax * wmax);
}

static bool ensure_snapshots(ibWorld* w, int levels)
{
	int32_t nb = w->bodyHigh, nw = ib_joints_warm_count(w);
	if (levels <= w->snapLevels && nb <= w->snapBodyCapacity && nw <= w->snapWarmCapacity) return true;
	int L = levels > w->snapLevels ? levels : w->snapLevels;
	int32_t cb = nb > w->snapBodyCapacity ? nb + nb / 2 + 8 : w->snapBodyCapacity;
	int32_t cw = nw > w->snapWarmCapacity ? nw + nw / 2 + 8 : w->snapWarmCapacity;
	ibRigidState* b = ib_alloc(w, (size_t)L * (size_t)cb * sizeof(ibRigidState));
	ibVec3* v = ib_alloc(w, (size_t)L * (size_t)cw * sizeof(ibVec3));
	if (!b || !v) {
		ib_free(w, b, (size_t)L * (size_t)cb * sizeof(ibRigidState));
		ib_free(w, v, (size_t)L * (size_t)cw * sizeof(ibVec3));
		return false;
	}
	ib_free(w, w->snapBodies, (size_t)w->snapLevels * (size_t)w->snapBodyCapacity * sizeof(ibRigidState));
	ib_free(w, w->snapWarm, (size_t)w->snapLevels * (size_t)w->snapWarmCapacity * sizeof(ibVec3));
	w->snapBodies = b;
	w->snapWarm = v;
	w->snapLevels = L;
	w->snapBodyCapacity = cb;
	w->snapWarmCapacity = cw;
	return true;
}

/* The free motion of one body over h (digest §21 item 7). Touches only the body (and reads the joints'
 * prediction), so the bodies may be integrated in parallel; *sub: the integrator's sub-step count. */
static void integrate_one(ibWorld* w, ibBody* b, int32_t i, double h, int* sub)
{
	ibRigidState next;
	if (ib_joints_predicted_state(w, i, h, &next, &b->R)) { /* the joint correction's prediction, if current */
		b->st = next;
		ib_body_update_inertia(b); /* b->R: the prediction's, of the same q */
	} else {
		ib_integrate_body(w, b, h, &next, &b->substepHint, sub);
		b->st = next;
		ib_body_update_derived(b);
	}
	b->userPoseExact = false;
}

typedef struct IntegrateTask {
	ibWorld* w;
	double h;
} IntegrateTask;

static void integrate_range(int32_t start, int32_t end, uint32_t worker, void* ctx)
{
	IntegrateTask* t = ctx;
	ibWorld* w = t->w;
	int most = 0;
	for (int32_t i = start; i < end; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type == IB_BODY_STATIC || b->sleeping) continue; /* sleeping: not integrated */
		int sub = 1;
		integrate_one(w, b, i, t->h, &sub);
		if (sub > most) most = sub;
	}
	int k = worker < (uint32_t)w->workerCount ? (int)worker : 0;
	if (most > w->workerSubsteps[k]) w->workerSubsteps[k] = most;
}

/* [IMPL] With the world's task hooks the bodies are integrated in ranges of IB_TASK_MIN_BODIES on the
 * user's workers; the result is the same bit for bit (each body is integrated alone). */
#define IB_TASK_MIN_BODIES 64

static void integrate_all(ibWorld* w, double h)
{
	IntegrateTask t = {w, h};
	for (int k = 0; k < w->workerCount; ++k) w->workerSubsteps[k] = 0;
	if (w->enqueueTask && w->bodyHigh >= 2 * IB_TASK_MIN_BODIES) {
		void* task = w->enqueueTask(integrate_range, w->bodyHigh, IB_TASK_MIN_BODIES, &t, w->taskContext);
		if (task) w->finishTask(task, w->taskContext);
	} else {
		integrate_range(0, w->bodyHigh, 0, &t);
	}
	for (int k = 0; k < w->workerCount; ++k)
		if (w->workerSubsteps[k] > w->stats.integratorSubsteps) w->stats.integratorSubsteps = w->workerSubsteps[k];
	ib_soft_integrate(w, h);
	w->poseEpoch++;
}

/* Step-length memory. A step whose corrections fail is redone as halves; the next steps usually fail
 * at the same length again (the 100-chain at 60 Hz: 460 of 600 steps, where the joint correction has
 * no solution near the t0 state at the full length, docs/joints.md), so the failed attempt was pure
 * waste. After a failure, steps longer than the half that converged are split at once; after
 * IB_STEP_HINT_PROBE sub-steps converged at that length, the double length is tried again. The
 * results are those of the redo (same halves, same forces); only the doomed attempts are skipped.
 * [IMPL] Each failed probe doubles the number of sub-steps before the next one (up to
 * IB_STEP_HINT_PROBE_MAX); a probe that converges resets it (the 100-chain: 116 failed probes of
 * 253 in 600 steps at a fixed 8). */
enum { IB_STEP_HINT_PROBE = 8, IB_STEP_HINT_PROBE_MAX = 64 };

static void hint_success(ibWorld* w, double h)
{
	if (!(w->stepHint > 0.0) || h < 0.75 * w->stepHint) return;
	if (w->stepHintProbing) w->stepHintProbe = IB_STEP_HINT_PROBE; /* the probe converged */
	w->stepHintProbing = false;
	if (++w->stepHintRuns >= (w->stepHintProbe > 0 ? w->stepHintProbe : IB_STEP_HINT_PROBE)) {
		w->stepHint *= 2.0; /* probe: the next longer sub-steps are tried again */
		w->stepHintRuns = 0;
		w->stepHintProbing = true;
	}
}

static void hint_failure(ibWorld* w, double h)
{
	if (w->stepHintProbing) { /* the probe failed: wait longer before the next one */
		int n = w->stepHintProbe > 0 ? w->stepHintProbe : IB_STEP_HINT_PROBE;
		w->stepHintProbe = n >= IB_STEP_HINT_PROBE_MAX / 2 ? IB_STEP_HINT_PROBE_MAX : 2 * n;
	}
	w->stepHintProbing = false;
	w->stepHint = 0.5 * h;
	w->stepHintRuns = 0;
}

/* [IMPL] The joint correction left some body turning by more than half a turn in the step (IB_SPURIOUS_TURN), and
 * more than twice as fast as before it: its predictions (exact in the translation, not in the rotation) then
 * met the conditions at a spurious solution, an angle met again after a large turn. A ragdoll landing with
 * its waist, neck and hip cones at their stops left the correction with its pelvis at 1700 rad/s (28 rad in
 * the step, from 25 rad/s) and 79 kJ in place of 759 J; the velocity correction took most of it back, but the
 * step still gained 817 J (tests/test_contact_ragdoll.c). Such an attempt counts as unconverged, and the step
 * is redone as halves. (Correcting a limit violated by 0.6 rad at the start turns a pendulum by that much
 * in any step length: that is no reason to split.) */
#define IB_SPURIOUS_TURN IB_PI
static bool spun_up(const ibWorld* w, const ibRigidState* before, double h)
{
	const double t2 = IB_SPURIOUS_TURN * IB_SPURIOUS_TURN / (h * h);
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		double a2 = ibLengthSq(b->st.w);
		if (a2 > t2 && a2 > 4.0 * ibLengthSq(before[i].w)) return true;
	}
	return false;
}

/* Joint correction, free motion, velocity correction over h; subdivides on non-convergence. */
static void advance(ibWorld* w, double h, int depth)
{
	/* no subdivision under an impulse bound: halves would each get the full bound (§3.3.3) */
	bool canSplit = depth < w->solver.maxStepSubdivisions && w->solver.maxCorrectionImpulse <= 0.0 &&
	                ib_joints_warm_count(w) > 0;
	if (canSplit && w->stepHint > 0.0 && h > 1.5 * w->stepHint && ensure_snapshots(w, depth + 1)) {
		/* failed at this length recently: split at once, with the warm-start impulses halved as after
		 * a failed attempt (rigid and soft rows), so the halves run exactly as they would after one */
		ibVec3* sw = w->snapWarm + (size_t)depth * (size_t)w->snapWarmCapacity;
		ib_joints_warm_save(w, sw);
		ib_joints_warm_restore(w, sw, 0.5);
		ib_soft_snapshot_save(w, depth);
		ib_soft_snapshot_restore(w, depth);
		advance(w, 0.5 * h, depth + 1);
		advance(w, 0.5 * h, depth + 1);
		return;
	}
	bool snap = canSplit && ensure_snapshots(w, depth + 1);
	ibRigidState* sb = snap ? w->snapBodies + (size_t)depth * (size_t)w->snapBodyCapacity : NULL;
	ibVec3* sw = snap ? w->snapWarm + (size_t)depth * (size_t)w->snapWarmCapacity : NULL;
	if (snap) {
		for (int32_t i = 0; i < w->bodyHigh; ++i) sb[i] = w->bodies[i].st;
		ib_joints_warm_save(w, sw);
		ib_soft_snapshot_save(w, depth);
	}
	bool outer = w->stats.converged;
	w->stats.converged = true;
	w->canSubdivide = snap;
	w->jointsUnconverged = false;
	/* large errors present at t0 are removed in proportion to this sub-step's share of the step, at the rate
	 * of a whole step, not all within one tiny sub-step (ib_joints_recovery_slack) */
	w->recoveryFraction = h < w->frameLength * (1.0 - 1e-9) ? h / w->frameLength : 1.0;
	ib_joints_position_correction(w, h);
	w->recoveryFraction = 1.0;
	if (!w->stats.converged || (snap && spun_up(w, sb, h))) w->jointsUnconverged = true;
	double t0 = now_ms();
	/* the contact loops' joint sweeps do not set jointsUnconverged: a pile's stalled friction keeps
	 * them moving as well, and the joint loops before and after own the joints' tolerance */
	ib_contacts_position_correction(w, h);
	w->stats.contactMs += now_ms() - t0;
	integrate_all(w, h);
	bool before = w->stats.converged;
	w->stats.converged = true;
	ib_joints_velocity_correction(w, h);
	if (!w->stats.converged) w->jointsUnconverged = true;
	w->stats.converged = w->stats.converged && before;
	t0 = now_ms();
	ib_contacts_velocity_correction(w, h);
	w->stats.contactMs += now_ms() - t0;
	ib_limits_report(w);
	/* [IMPL] only the joints' failure redoes the step as halves: a contact loop that stalls (a pile's
	 * sliding friction cycling) stalls in the halves as well, and the halves' own halves, so wall252's
	 * steps after the ball's impact ran as 32-144 sub-steps of the whole world (up to 7 s per step);
	 * without joints a stalled contact loop never split a step */
	if (!w->jointsUnconverged || !snap) {
		if (!w->jointsUnconverged) hint_success(w, h);
		w->stats.converged = w->stats.converged && outer;
		w->stats.stepSubdivisions += 1;
		return;
	}
	hint_failure(w, h);
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse) continue;
		b->st = sb[i];
		b->velVersion++;
		ib_body_update_derived(b);
	}
	ib_soft_snapshot_restore(w, depth);
	w->poseEpoch++;
	ib_joints_warm_restore(w, sw, 0.5);
	w->stats.converged = outer;
	advance(w, 0.5 * h, depth + 1);
	advance(w, 0.5 * h, depth + 1);
}

/* Midpoint step (§3.4.4): free motion h/2, joint correction so that the joints hold at t0+h
 * (prediction over the remaining h/2, target velocity change d/(h/2)), free motion h/2, velocity
 * correction. Second order: the correction impulse acts at the middle of the step (§3.4.1). */
static void midpoint_step(ibWorld* w, double h)
{
	integrate_all(w, 0.5 * h);
	ib_joints_position_correction(w, 0.5 * h);
	ib_contacts_position_correction(w, 0.5 * h);
	integrate_all(w, 0.5 * h);
	ib_joints_velocity_correction(w, h);
	ib_contacts_velocity_correction(w, h);
	ib_limits_report(w);
	w->stats.stepSubdivisions += 1;
}

static void load_state(ibWorld* w, const ibRigidState* src)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse) continue;
		b->st = src[i];
		b->velVersion++;
		b->userPoseExact = false;
		ib_body_update_derived(b);
	}
	w->poseEpoch++;
}

/* Orders 4 and 6 (§3.4, eq. 3.25): combine the results x_k of k = 1, 2 (, 3) midpoint sub-steps of
 * h/k from the same start with weights c = (-1/3, 4/3) or (1/24, -16/15, 81/40). Orientations are
 * combined as quaternions (sign-aligned) and renormalised ([R]: the thesis refers to [SBP05a]). */
static void higher_order_step(ibWorld* w, double h, int order)
{
	static const double c4[3] = {-1.0 / 3.0, 4.0 / 3.0, 0.0};
	static const double c6[3] = {1.0 / 24.0, -16.0 / 15.0, 81.0 / 40.0};
	const double* c = order == 4 ? c4 : c6;
	int runs = order == 4 ? 2 : 3;
	int32_t nb = w->bodyHigh;
	if (nb > w->orderCapacity) {
		int32_t cap = nb + nb / 2 + 8;
		ibRigidState* p = ib_alloc(w, (size_t)4 * (size_t)cap * sizeof(ibRigidState));
		if (!p) { /* out of memory: fall back to the midpoint step */
			midpoint_step(w, h);
			return;
		}
		ib_free(w, w->orderStates, (size_t)4 * (size_t)w->orderCapacity * sizeof(ibRigidState));
		w->orderStates = p;
		w->orderCapacity = cap;
	}
	ibRigidState* start = w->orderStates;
	for (int32_t i = 0; i < nb; ++i) start[i] = w->bodies[i].st;
	int32_t nw = ib_joints_warm_count(w);
	bool warm = nw > 0 && ensure_snapshots(w, 1);
	if (warm) ib_joints_warm_save(w, w->snapWarm);
	for (int k = 1; k <= runs; ++k) {
		if (k > 1) load_state(w, start);
		if (warm) ib_joints_warm_restore(w, w->snapWarm, 1.0 / k);
		for (int j = 0; j < k; ++j) midpoint_step(w, h / k);
		ibRigidState* out = w->orderStates + (size_t)k * (size_t)w->orderCapacity;
		for (int32_t i = 0; i < nb; ++i) out[i] = w->bodies[i].st;
	}
	for (int32_t i = 0; i < nb; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || b->type == IB_BODY_STATIC || b->sleeping) continue;
		ibRigidState acc = {IB_VEC3_ZERO, IB_VEC3_ZERO, {0, 0, 0, 0}, IB_VEC3_ZERO};
		ibQuat ref = w->orderStates[(size_t)runs * (size_t)w->orderCapacity + (size_t)i].q;
		for (int k = 1; k <= runs; ++k) {
			const ibRigidState* x = &w->orderStates[(size_t)k * (size_t)w->orderCapacity + (size_t)i];
			double sg = (x->q.w * ref.w + x->q.x * ref.x + x->q.y * ref.y + x->q.z * ref.z) < 0.0 ? -1.0 : 1.0;
			double ck = c[k - 1];
			acc.s = ibMulAdd(acc.s, ck, x->s);
			acc.v = ibMulAdd(acc.v, ck, x->v);
			acc.w = ibMulAdd(acc.w, ck, x->w);
			acc.q = (ibQuat){acc.q.w + sg * ck * x->q.w, acc.q.x + sg * ck * x->q.x, acc.q.y + sg * ck * x->q.y,
			                 acc.q.z + sg * ck * x->q.z};
		}
		acc.q = ibQuatNormalize(acc.q);
		b->st = acc;
		b->velVersion++;
		ib_body_update_derived(b);
	}
	w->poseEpoch++;
}

/* ---- collision detection in the step (digest §21 items 2 and 8; sub-steps and time of contact in
 * src/collision/toi.c) */

/* Item 2: collision detection at t0 of every (sub-)step; the contact solver's resolution follows it. */
static void collide_t0(ibWorld* w, double h)
{
	double t0 = now_ms();
	ibResult r = ib_collision_detect(w);
	if (r == IB_OK && ib_sleep_wake_touching(w)) /* sleeping islands touched by awake bodies (sleep.c) */
		r = ib_collision_detect(w);              /* again: with the pairs of the woken bodies */
	double t1 = now_ms();
	if (r == IB_OK) ib_contacts_collide(w, h); /* items 3-5: collisions, contact joints */
	w->stats.detectionMs += t1 - t0;
	w->stats.collisionMs += now_ms() - t1;
	ib_soft_contacts_detect(w, h); /* particle-shape contacts: clamped rows in the soft sweeps */
}

/* Items 6-7 and 9 over h: joint correction, free motion, velocity correction (with subdivision). */
static void motion(ibWorld* w, double h) { advance(w, h, 0); }

static bool collision_active(const ibWorld* w) { return w->collisionSettings.enabled && w->shapeCount > 0; }

ibResult ibWorld_Step(ibWorldId id, double h)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!(isfinite(h) && h > 0.0)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "time step must be finite and > 0 (got %g)", h);
	if (w->diverged) return ib_error(w, IB_ERR_DIVERGED, "world has diverged; it is not stepped any more");
	if (w->solver.order >= 4 && ib_soft_active(w))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver order %d does not support particles (use 1 or 2)", w->solver.order);

	ibStepStats stats = {0};
	stats.converged = true;
	w->stats = stats;
	w->frameLength = h;
	w->recoveryFraction = 1.0;
	ibResult r = ib_joints_before_step(w, h);
	if (r != IB_OK) return r;
	ib_apply_force_modules(w, h);
	ib_sleep_wake_touching(w);
	if (ib_joints_velocity_inconsistent(w)) {
		ib_joints_velocity_correction(w, h); /* project inconsistent velocities first */
		w->stats.velocityIterations = 0;
	}
	bool collide = collision_active(w);
	if (collide)
		ib_collision_begin_events(w);
	else {
		ib_contacts_collide(w, h); /* no detection: clears last step's contact joints */
		ib_soft_contacts_detect(w, h);
	}
	/* large rotations per step break the joint correction's prediction: sub-step (constant forces) */
	int sub = ib_joints_rotation_substeps(w, h, w->solver.maxRotationPerStep);
	for (int k = 0; k < sub; ++k) {
		double hs = h / sub;
		if (w->solver.order >= 2 && collide) collide_t0(w, hs); /* higher orders: detection at t0, no TOI */
		if (w->solver.order == 2)
			midpoint_step(w, hs);
		else if (w->solver.order >= 4)
			higher_order_step(w, hs, w->solver.order);
		else if (collide)
			ib_toi_step(w, hs, collide_t0, motion);
		else
			advance(w, hs, 0);
	}
	w->canSubdivide = false;
	ib_sleep_end_step(w, h); /* sleep timers, islands falling asleep (sleep.c) */

	int32_t bad = -1, fast = -1;
	const double vmax = w->solver.maxLinearSpeed, wmax = w->solver.maxAngularSpeed;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse) continue;
		b->userForce = IB_VEC3_ZERO;
		b->userTorque = IB_VEC3_ZERO;
		if (bad < 0 && !body_finite(b)) bad = i;
		if (fast < 0 && b->type == IB_BODY_DYNAMIC && too_fast(b->st.v, vmax, b->st.w, wmax)) fast = i;
	}
	w->time += h;
	ib_joints_measure(w, &w->stats);
	/* a step that leaves joint errors above IB_RECOVERY_MIN_ERRORS tolerances is not converged, even where its
	 * sub-steps met their targets: they may leave part of a large error for the next steps (joint_internal.h) */
	if (w->stats.maxPositionError > IB_RECOVERY_MIN_ERRORS * w->solver.positionTolerance ||
	    w->stats.maxAngularError > IB_RECOVERY_MIN_ERRORS * w->solver.angularTolerance)
		w->stats.converged = false;
	ib_soft_measure(w);
	if (bad < 0 && !ib_soft_finite(w)) {
		w->diverged = true;
		return ib_error(w, IB_ERR_DIVERGED, "simulation diverged at t = %g s: a particle has a non-finite state", w->time);
	}
	if (bad >= 0) {
		w->diverged = true;
		const char* nm = w->bodies[bad].name;
		return ib_error(w, IB_ERR_DIVERGED, "simulation diverged at t = %g s: body %d%s%s%s has a non-finite state",
		                w->time, (int)bad, nm ? " (" : "", nm ? nm : "", nm ? ")" : "");
	}
	if (fast >= 0) {
		w->diverged = true;
		const ibBody* b = &w->bodies[fast];
		const char* nm = b->name;
		const bool lin = too_fast(b->st.v, vmax, IB_VEC3_ZERO, 0.0);
		return ib_error(w, IB_ERR_DIVERGED, "simulation diverged at t = %g s: body %d%s%s%s moves at %g %s, beyond %s = %g",
		                w->time, (int)fast, nm ? " (" : "", nm ? nm : "", nm ? ")" : "",
		                lin ? ibLength(b->st.v) : ibLength(b->st.w), lin ? "m/s" : "rad/s",
		                lin ? "maxLinearSpeed" : "maxAngularSpeed", lin ? vmax : wmax);
	}
	if (ib_soft_too_fast(w, vmax)) {
		w->diverged = true;
		return ib_error(w, IB_ERR_DIVERGED, "simulation diverged at t = %g s: a particle moves faster than maxLinearSpeed %g m/s",
		                w->time, vmax);
	}
	return IB_OK;
}
