/* No heap allocation inside a step after warm-up (the architecture's rule for the hot paths): a
 * resting pyramid of boxes and a box rain whose contact set keeps changing are stepped through the
 * world's allocator hooks (ibWorldDef.allocFn / reallocFn / freeFn), which count the calls. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "contact_test_util.h"
#include "ibdyn/ibdyn.h"

typedef struct Counter {
	long allocs, reallocs, frees;
	size_t largest;
} Counter;

static void* count_alloc(size_t size, void* ctx)
{
	Counter* c = ctx;
	++c->allocs;
	if (size > c->largest) c->largest = size;
	return malloc(size);
}

static void* count_realloc(void* p, size_t oldSize, size_t newSize, void* ctx)
{
	(void)oldSize;
	Counter* c = ctx;
	++c->reallocs;
	if (newSize > c->largest) c->largest = newSize;
	return realloc(p, newSize);
}

static void count_free(void* p, size_t size, void* ctx)
{
	(void)size;
	Counter* c = ctx;
	if (p) ++c->frees;
	free(p);
}

static ibWorldId counted_world(Counter* c)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.velocityTolerance = 1e-4;
	wd.solver.contact.collisionTolerance = 1e-3;
	wd.solver.contact.contactPositionTolerance = 1e-5;
	wd.solver.sleep.enabled = false;
	wd.allocFn = count_alloc;
	wd.reallocFn = count_realloc;
	wd.freeFn = count_free;
	wd.allocContext = c;
	ibWorldId w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(0.0, 0.25, 0.25));
	return w;
}

static void add_cube(ibWorldId w, ibVec3 p, ibQuat q)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.rotation = q;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25};
	sd.mass = 1.0;
	ibBox bb = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(b, &sd, &bb);
}

/* steps [0, warm) warm up; the calls during steps [warm, warm + n) are returned */
static Counter run(ibWorldId w, Counter* c, int warm, int n, double h)
{
	for (int k = 0; k < warm; ++k) assert_int_equal(ibWorld_Step(w, h), IB_OK);
	Counter before = *c;
	for (int k = 0; k < n; ++k) assert_int_equal(ibWorld_Step(w, h), IB_OK);
	Counter d = {c->allocs - before.allocs, c->reallocs - before.reallocs, c->frees - before.frees, c->largest};
	return d;
}

/* a resting pyramid of 6 rows at 60 Hz (the direct solve, warm start, speculative re-queries): once
 * its contact set is steady, a step allocates nothing */
static void test_pyramid_steady(void** state)
{
	(void)state;
	Counter c = {0, 0, 0, 0};
	ibWorldId w = counted_world(&c);
	const int rows = 6;
	for (int k = 0; k < rows; ++k)
		for (int j = 0; j < rows - k; ++j) add_cube(w, ibV3((j - (rows - 1 - k) / 2.0) * 1.02, 0.0, 0.5 + k), (ibQuat){1, 0, 0, 0});
	Counter d = run(w, &c, 60, 120, 1.0 / 60.0);
	printf("pyramid of %d rows, steps 61-180: %ld allocations, %ld reallocations, %ld frees\n", rows, d.allocs, d.reallocs, d.frees);
	assert_int_equal(d.allocs + d.reallocs + d.frees, 0);
	ibDestroyWorld(w);
}

/* the same cubes dropped again and again onto a pile (contact sets come and go, time-of-contact
 * sub-steps): after the first rounds every array has met its largest size; the later rounds, the
 * same motion from the same start, allocate nothing */
static void test_repeated_rain(void** state)
{
	(void)state;
	Counter c = {0, 0, 0, 0};
	ibWorldId w = counted_world(&c);
	enum { N = 12 };
	ibBodyId ids[N];
	ibVec3 p0[N];
	ibQuat q0[N];
	for (int i = 0; i < N; ++i) {
		p0[i] = ibV3(0.6 * (i % 3) - 0.6, 0.6 * ((i / 3) % 2) - 0.3, 1.0 + 1.6 * i);
		q0[i] = ibQuatNormalize((ibQuat){0.9, 0.1 * (i % 4), 0.2, 0.05 * i});
		add_cube(w, p0[i], q0[i]);
	}
	int nb = ibWorld_GetBodyCount(w);
	ibBodyId* all = malloc(sizeof(ibBodyId) * (size_t)nb);
	assert_non_null(all);
	ibWorld_GetBodies(w, all, nb);
	for (int i = 0, k = 0; i < nb; ++i)
		if (ibBody_GetType(all[i]) == IB_BODY_DYNAMIC) ids[k++] = all[i];
	free(all);
	Counter last = {0, 0, 0, 0};
	for (int round = 0; round < 3; ++round) {
		for (int i = 0; i < N; ++i) {
			ibBody_SetTransform(ids[i], p0[i], q0[i]);
			ibBody_SetLinearVelocity(ids[i], ibV3(0, 0, 0));
			ibBody_SetAngularVelocity(ids[i], ibV3(0, 0, 0));
		}
		last = run(w, &c, 0, 150, 1.0 / 60.0);
		printf("rain of %d cubes, round %d: %ld allocations, %ld reallocations, %ld frees\n", N, round + 1, last.allocs, last.reallocs,
		       last.frees);
	}
	assert_int_equal(last.allocs + last.reallocs + last.frees, 0);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pyramid_steady),
	    cmocka_unit_test(test_repeated_rain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
