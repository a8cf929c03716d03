/* Task hooks (ibWorldDef.enqueueTask / finishTask / workerCount): a world stepped through a task system
 * gives the same state, bit for bit, as one stepped on the calling thread; the hooks are validated. Two
 * task systems: one that runs the ranges in reverse order on the calling thread with a different worker
 * index each, and one on POSIX threads. Scene: 128 boxes dropped onto the ground, 1 m apart, and a hanging chain of
 * 8 boxes on ball joints (the joints' predicted states feed the integration). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_test_util.h"
#include "ibdyn/ibdyn.h"

#define NBOX 128
#define NCHAIN 8
#define STEPS 40

typedef struct Sys {
	int workers;
	long tasks, ranges;
	int badRange; /* a range shorter than minRange (but the last) or out of bounds */
} Sys;

/* reverse order, one worker index per range (cycling) */
static void* reverse_enqueue(ibTaskFn* task, int32_t count, int32_t minRange, void* taskCtx, void* ctx)
{
	Sys* s = ctx;
	++s->tasks;
	int32_t per = (count + s->workers - 1) / s->workers;
	if (per < minRange) per = minRange;
	int32_t n = (count + per - 1) / per;
	for (int32_t r = n - 1; r >= 0; --r) {
		int32_t a = r * per, b = a + per < count ? a + per : count;
		if (a < 0 || b > count || (b - a < minRange && b != count)) s->badRange = 1;
		++s->ranges;
		task(a, b, (uint32_t)(r % s->workers), taskCtx);
	}
	return NULL; /* ran it all */
}

static void never_finish(void* t, void* ctx)
{
	(void)t;
	(void)ctx;
	fail_msg("finishTask called for a task that enqueueTask ran itself");
}

typedef struct Thread {
	pthread_t id;
	ibTaskFn* task;
	int32_t a, b;
	uint32_t worker;
	void* ctx;
} Thread;

typedef struct ThreadTask {
	Thread t[IB_MAX_WORKERS];
	int n;
} ThreadTask;

static void* thread_main(void* p)
{
	Thread* t = p;
	t->task(t->a, t->b, t->worker, t->ctx);
	return NULL;
}

/* POSIX threads: ranges 1.. on new threads, range 0 on the caller; finish joins */
static void* thread_enqueue(ibTaskFn* task, int32_t count, int32_t minRange, void* taskCtx, void* ctx)
{
	Sys* s = ctx;
	++s->tasks;
	ThreadTask* tt = calloc(1, sizeof *tt);
	if (!tt) fail_msg("out of memory in the test's task system"); /* NULL would mean: all ran */
	int32_t per = (count + s->workers - 1) / s->workers;
	if (per < minRange) per = minRange;
	for (int32_t a = 0; a < count && tt->n < s->workers; a += per) {
		Thread* t = &tt->t[tt->n];
		*t = (Thread){0, task, a, a + per < count ? a + per : count, (uint32_t)tt->n, taskCtx};
		++s->ranges;
		if (tt->n > 0 && pthread_create(&t->id, NULL, thread_main, t) != 0) t->worker = UINT32_MAX; /* run below */
		tt->n++;
	}
	tt->t[0].task(tt->t[0].a, tt->t[0].b, 0, taskCtx);
	for (int k = 1; k < tt->n; ++k)
		if (tt->t[k].worker == UINT32_MAX) tt->t[k].task(tt->t[k].a, tt->t[k].b, 0, taskCtx);
	return tt;
}

static void thread_finish(void* p, void* ctx)
{
	(void)ctx;
	ThreadTask* tt = p;
	for (int k = 1; k < tt->n; ++k)
		if (tt->t[k].worker != UINT32_MAX) pthread_join(tt->t[k].id, NULL);
	free(tt);
}

typedef struct Run {
	ibVec3 pos[NBOX + NCHAIN];
	ibQuat rot[NBOX + NCHAIN];
	ibVec3 vel[NBOX + NCHAIN];
	int substeps;
} Run;

/* mode 0: serial, 1: reverse ranges, 2: threads */
static void run(int mode, Sys* sys, Run* out)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.sleep.enabled = false;
	if (mode == 1) {
		wd.enqueueTask = reverse_enqueue;
		wd.finishTask = never_finish;
	} else if (mode == 2) {
		wd.enqueueTask = thread_enqueue;
		wd.finishTask = thread_finish;
	}
	if (mode) {
		wd.taskContext = sys;
		wd.workerCount = sys->workers;
	}
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ct_ground(w, 0.0, ct_mat(0.2, 0.5, 0.4));
	ibBodyId bodies[NBOX + NCHAIN];
	uint32_t seed = 12345u;
	for (int i = 0; i < NBOX; ++i) {
		double r[6];
		for (int k = 0; k < 6; ++k) {
			seed = seed * 1664525u + 1013904223u;
			r[k] = (double)(seed >> 8) / 16777216.0;
		}
		/* 1 m apart: each box lands alone (a pile would make the test slow, not stronger) */
		ibVec3 p = ibV3(-6.0 + (i % 12) + 0.1 * r[0], -6.0 + (double)(i / 12) + 0.1 * r[1], 0.4 + 0.3 * r[2]);
		ibQuat q = ibQuatNormalize((ibQuat){1.0, r[3] - 0.5, r[4] - 0.5, r[5] - 0.5});
		bodies[i] = ct_block(w, p, q, 0.15, ct_mat(0.2, 0.5, 0.4));
	}
	ibBodyDef sd = ibDefaultBodyDef();
	sd.position = ibV3(5.0, 0.0, 6.0);
	ibBodyId anchor = ibCreateBody(w, &sd);
	ibBodyId prev = anchor;
	for (int i = 0; i < NCHAIN; ++i) {
		bodies[NBOX + i] =
		    ct_block(w, ibV3(5.0 + 0.2 * (i + 1), 0.0, 6.0), IB_QUAT_IDENTITY, 0.08, ct_mat(0.2, 0.5, 0.4));
		ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
		jd.bodyA = prev;
		jd.bodyB = bodies[NBOX + i];
		assert_int_equal(
		    ibJointDef_SetWorldAnchors(&jd, ibV3(5.0 + 0.2 * i + 0.1, 0.0, 6.0), ibV3(5.0 + 0.2 * i + 0.1, 0.0, 6.0)),
		    IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
		prev = bodies[NBOX + i];
	}
	out->substeps = 0;
	for (int s = 0; s < STEPS; ++s) {
		ibResult r = ibWorld_Step(w, 1.0 / 60.0);
		assert_true(r == IB_OK || r == IB_ERR_NOT_CONVERGED);
		ibStepStats st = ibWorld_GetStepStats(w);
		out->substeps += st.integratorSubsteps;
	}
	for (int i = 0; i < NBOX + NCHAIN; ++i) {
		out->pos[i] = ibBody_GetPosition(bodies[i]);
		out->rot[i] = ibBody_GetRotation(bodies[i]);
		out->vel[i] = ibBody_GetLinearVelocity(bodies[i]);
	}
	ibDestroyWorld(w);
}

static Run serialRun, taskRun;

static void same(const Run* a, const Run* b)
{
	/* bit for bit: each body is integrated alone, whatever the split */
	assert_memory_equal(a->pos, b->pos, sizeof a->pos);
	assert_memory_equal(a->rot, b->rot, sizeof a->rot);
	assert_memory_equal(a->vel, b->vel, sizeof a->vel);
	assert_int_equal(a->substeps, b->substeps);
}

static void test_reverse_ranges_same_state(void** state)
{
	(void)state;
	run(0, NULL, &serialRun);
	/* the scene moved: the boxes fell and the chain swung */
	assert_true(serialRun.pos[0].z < 0.4);
	assert_true(serialRun.pos[NBOX + NCHAIN - 1].z < 5.9);
	Sys s = {4, 0, 0, 0};
	run(1, &s, &taskRun);
	assert_true(s.tasks >= STEPS); /* at least one task per step */
	assert_true(s.ranges >= 2 * s.tasks);
	assert_false(s.badRange);
	same(&serialRun, &taskRun);
}

static void test_threads_same_state(void** state)
{
	(void)state;
	run(0, NULL, &serialRun);
	Sys s = {2, 0, 0, 0};
	run(2, &s, &taskRun);
	assert_true(s.tasks >= STEPS);
	same(&serialRun, &taskRun);
}

static void test_hooks_validated(void** state)
{
	(void)state;
	char msg[256];
	ibWorldDef wd = ibDefaultWorldDef();
	assert_int_equal(wd.workerCount, 1);
	wd.enqueueTask = reverse_enqueue;
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "finishTask"));
	wd.finishTask = never_finish;
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_OK);
	wd.workerCount = 0;
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "workerCount"));
	wd.workerCount = IB_MAX_WORKERS + 1;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reverse_ranges_same_state),
	    cmocka_unit_test(test_threads_same_state),
	    cmocka_unit_test(test_hooks_validated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
