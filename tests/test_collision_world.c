/* The world's collision pipeline (src/collision/collision_world.c) and the public collision API:
 * (1) random scenes of 10^3 bodies (spheres, boxes, capsules; some static; groups and masks) moved by
 * teleports over 100 steps: the contact set of ibWorld_Collide equals the O(n^2) brute-force set (same
 * rules, exact distance <= eps_c) for both broadphases, and the pipeline allocates nothing once warm;
 * (2) the filter: groups, masks, jointed bodies (collideConnected), excluded body pairs, static-static;
 * (3) touch events begin/end (also for destroyed shapes); (4) ray casts against analytic answers
 * (spheres, boxes) and surface/sampling checks (capsules, cylinders), overlaps and closest points vs
 * brute force or closed forms; (5) stale handles and NaN rejected; debug draw hooks called. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collision_world_internal.h"
#include "ibdyn/scene.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 1
#endif
#if IBDYN_SLOW_TESTS
#define SCENE_N 1000
#define SCENE_STEPS 100
#else
#define SCENE_N 400
#define SCENE_STEPS 30
#endif

static uint64_t g_rng;
static double rnd(void)
{
	g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}
static double rnd_range(double a, double b) { return a + (b - a) * rnd(); }
static ibQuat rnd_quat(void)
{
	ibQuat q = {rnd_range(-1, 1), rnd_range(-1, 1), rnd_range(-1, 1), rnd_range(-1, 1)};
	return ibQuatNormalize(q);
}

static size_t g_allocs;
static void* count_alloc(size_t n, void* ctx)
{
	(void)ctx;
	++g_allocs;
	return malloc(n);
}
static void* count_realloc(void* p, size_t o, size_t n, void* ctx)
{
	(void)o;
	(void)ctx;
	++g_allocs;
	return realloc(p, n);
}
static void count_free(void* p, size_t n, void* ctx)
{
	(void)n;
	(void)ctx;
	free(p);
}

static ibWorldId make_world(bool counting)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	if (counting) {
		wd.allocFn = count_alloc;
		wd.reallocFn = count_realloc;
		wd.freeFn = count_free;
	}
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

static ibBodyId add_body(ibWorldId w, ibBodyType type, ibVec3 p, ibQuat q)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = type;
	bd.position = p;
	bd.rotation = q;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_false(IB_IS_NULL(b));
	return b;
}

static ibShapeId add_sphere(ibBodyId b, double r)
{
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere s = {r};
	return ibCreateSphereShape(b, &sd, &s);
}
static ibShapeId add_box(ibBodyId b, ibVec3 h)
{
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox x = {h};
	return ibCreateBoxShape(b, &sd, &x);
}

/* ---------------------------------------------------------------- (1) contact set vs brute force */

static int cmp_u64(const void* a, const void* b)
{
	uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

/* brute force: every shape pair under the rules, exact distance <= eps_c */
static int brute_pairs(ibWorld* w, uint64_t* out, ibBodyId* bodies, const int* excl, int nexcl)
{
	int n = 0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		const ibShape* a = &w->shapes[i];
		if (!a->inUse) continue;
		ibAABB ba = ib_aabb_fatten(ib_shape_world_aabb(&w->bodies[a->body], a), w->collisionSettings.contactTolerance);
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			const ibShape* b = &w->shapes[j];
			if (!b->inUse || a->body == b->body) continue;
			if (!ib_is_dynamic(&w->bodies[a->body]) && !ib_is_dynamic(&w->bodies[b->body])) continue;
			if (!ib_aabb_overlap(ba, ib_shape_world_aabb(&w->bodies[b->body], b))) continue;
			bool ok;
			if (a->filter.groupIndex != 0 && a->filter.groupIndex == b->filter.groupIndex)
				ok = a->filter.groupIndex > 0;
			else
				ok = (a->filter.categoryBits & b->filter.maskBits) && (b->filter.categoryBits & a->filter.maskBits);
			for (int k = 0; k < nexcl && ok; ++k) {
				int32_t x = bodies[excl[2 * k]].index1 - 1, y = bodies[excl[2 * k + 1]].index1 - 1;
				if ((x == a->body && y == b->body) || (x == b->body && y == a->body)) ok = false;
			}
			if (!ok) continue;
			ibConvex ca, cb;
			assert_true(ib_shape_convex(&w->bodies[a->body], a, &ca));
			assert_true(ib_shape_convex(&w->bodies[b->body], b, &cb));
			if (ib_convex_query(&ca, &cb, NULL).distance <= w->collisionSettings.contactTolerance)
				out[n++] = ((uint64_t)(uint32_t)i << 32) | (uint32_t)j;
		}
	}
	qsort(out, (size_t)n, sizeof *out, cmp_u64);
	return n;
}

static int world_pairs(ibWorldId wid, ibWorld* w, uint64_t* out)
{
	int n = ibWorld_GetContactCount(wid);
	ibContactPair* c;
	assert_int_equal(ib_collision_contacts(w, &c), n);
	for (int k = 0; k < n; ++k) {
		int32_t a = c[k].shapeA, b = c[k].shapeB;
		if (a > b) {
			int32_t t = a;
			a = b;
			b = t;
		}
		out[k] = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	}
	qsort(out, (size_t)n, sizeof *out, cmp_u64);
	return n;
}

/* a small rotation perturbation */
static ibQuat ibAdd4(ibQuat q, double e) { return (ibQuat){q.w, q.x + e, q.y - 0.5 * e, q.z + 0.25 * e}; }

static void run_scene(ibBroadphaseMethod method)
{
	g_rng = 12345u + (uint64_t)method;
	ibWorldId wid = make_world(true);
	ibCollisionSettings cs = ibWorld_GetCollisionSettings(wid);
	cs.broadphase = method;
	cs.contactTolerance = 1e-3;
	assert_int_equal(ibWorld_SetCollisionSettings(wid, &cs), IB_OK);
	ibWorld* w = ib_world_get(wid);
	static ibBodyId bodies[SCENE_N];
	static ibVec3 pos[SCENE_N];
	static ibQuat rot[SCENE_N];
	const double L = 9.0 * cbrt(SCENE_N / 1000.0);
	for (int i = 0; i < SCENE_N; ++i) {
		pos[i] = ibV3(rnd_range(0, L), rnd_range(0, L), rnd_range(0, L));
		rot[i] = rnd_quat();
		bodies[i] = add_body(wid, rnd() < 0.1 ? IB_BODY_STATIC : IB_BODY_DYNAMIC, pos[i], rot[i]);
		double u = rnd();
		ibShapeId s;
		ibShapeDef sd = ibDefaultShapeDef();
		if (u < 0.4) {
			ibSphere g = {rnd_range(0.1, 0.4)};
			s = ibCreateSphereShape(bodies[i], &sd, &g);
		} else if (u < 0.8) {
			ibBox g = {ibV3(rnd_range(0.05, 0.4), rnd_range(0.05, 0.4), rnd_range(0.05, 0.4))};
			s = ibCreateBoxShape(bodies[i], &sd, &g);
		} else {
			ibCapsule g = {rnd_range(0.05, 0.2), rnd_range(0.0, 0.3)};
			s = ibCreateCapsuleShape(bodies[i], &sd, &g);
		}
		assert_false(IB_IS_NULL(s));
		if (rnd() < 0.1) { /* a second shape: compound bodies */
			sd.localPosition = ibV3(0.3, 0, 0);
			ibSphere g = {0.15};
			assert_false(IB_IS_NULL(ibCreateSphereShape(bodies[i], &sd, &g)));
		}
		double f = rnd();
		if (f < 0.05) ibShape_SetFilter(s, (ibFilter){1u, 0xFFFFFFFFu, -3});
		else if (f < 0.10) ibShape_SetFilter(s, (ibFilter){2u, 0xFFFFFFFDu, 0});
		else if (f < 0.13) ibShape_SetFilter(s, (ibFilter){4u, 0u, 5});
	}
	static int excl[2 * 50];
	for (int k = 0; k < 50; ++k) {
		excl[2 * k] = (int)(rnd() * SCENE_N);
		excl[2 * k + 1] = (excl[2 * k] + 1 + (int)(rnd() * (SCENE_N - 1))) % SCENE_N;
		assert_int_equal(ibWorld_SetPairCollision(bodies[excl[2 * k]], bodies[excl[2 * k + 1]], false), IB_OK);
	}
	uint64_t* ref = malloc(sizeof(uint64_t) * 200000);
	uint64_t* got = malloc(sizeof(uint64_t) * 200000);
	long total = 0;
	size_t warmAllocs = 0;
	for (int step = 0; step < SCENE_STEPS; ++step) {
		for (int i = 0; i < SCENE_N; ++i) {
			if (ibBody_GetType(bodies[i]) == IB_BODY_STATIC && step % 10 != 5) continue;
			pos[i] = ibAdd(pos[i], ibV3(rnd_range(-0.05, 0.05), rnd_range(-0.05, 0.05), rnd_range(-0.05, 0.05)));
			rot[i] = ibQuatNormalize(ibAdd4(rot[i], rnd_range(-0.05, 0.05)));
			assert_int_equal(ibBody_SetTransform(bodies[i], pos[i], rot[i]), IB_OK);
		}
		if (step == 20) g_allocs = 0;
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		if (step == 20) warmAllocs = g_allocs;
		if (step == 20) assert_int_equal(warmAllocs, 0);
		int nr = brute_pairs(w, ref, bodies, excl, 50);
		int ng = world_pairs(wid, w, got);
		assert_int_equal(ng, nr);
		for (int k = 0; k < nr; ++k) assert_true(got[k] == ref[k]);
		total += nr;
	}
	printf("broadphase %s: %ld contact pairs over %d steps of %d bodies equal brute force; allocations in a warm "
	       "detection: %zu\n",
	       method == IB_BROADPHASE_SWEEP_AND_PRUNE ? "SAP" : "tree", total, SCENE_STEPS, SCENE_N, warmAllocs);
	assert_true(total > 10 * SCENE_STEPS);
	free(ref);
	free(got);
	ibDestroyWorld(wid);
}

static void test_scene_sap(void** st)
{
	(void)st;
	run_scene(IB_BROADPHASE_SWEEP_AND_PRUNE);
}
static void test_scene_tree(void** st)
{
	(void)st;
	run_scene(IB_BROADPHASE_DYNAMIC_TREE);
}

/* ---------------------------------------------------------------- (2) filter */

static int collide_count(ibWorldId w)
{
	assert_int_equal(ibWorld_Collide(w), IB_OK);
	return ibWorld_GetContactCount(w);
}

static void test_filter(void** st)
{
	(void)st;
	ibWorldId w = make_world(false);
	ibBodyId a = add_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibBodyId b = add_body(w, IB_BODY_DYNAMIC, ibV3(0.9, 0, 0), IB_QUAT_IDENTITY);
	ibShapeId sa = add_box(a, ibV3(0.5, 0.5, 0.5)), sb = add_sphere(b, 0.5);
	assert_int_equal(collide_count(w), 1);
	/* groups: equal negative never, equal positive always (even against the masks) */
	assert_int_equal(ibShape_SetFilter(sa, (ibFilter){1, 0xFFFFFFFFu, -2}), IB_OK);
	assert_int_equal(ibShape_SetFilter(sb, (ibFilter){1, 0xFFFFFFFFu, -2}), IB_OK);
	assert_int_equal(collide_count(w), 0);
	ibShape_SetFilter(sa, (ibFilter){1, 0u, 7});
	ibShape_SetFilter(sb, (ibFilter){1, 0u, 7});
	assert_int_equal(collide_count(w), 1);
	/* masks */
	ibShape_SetFilter(sa, (ibFilter){2, 0xFFFFFFFFu, 0});
	ibShape_SetFilter(sb, (ibFilter){1, ~2u, 0});
	assert_int_equal(collide_count(w), 0);
	ibShape_SetFilter(sb, ibDefaultFilter());
	assert_int_equal(collide_count(w), 1);
	assert_int_equal(ibShape_GetFilter(sa).categoryBits, 2u);
	/* excluded body pairs */
	assert_true(ibWorld_GetPairCollision(a, b));
	assert_int_equal(ibWorld_SetPairCollision(a, b, false), IB_OK);
	assert_false(ibWorld_GetPairCollision(b, a));
	assert_int_equal(collide_count(w), 0);
	assert_int_equal(ibWorld_SetPairCollision(b, a, true), IB_OK);
	assert_int_equal(collide_count(w), 1);
	/* jointed bodies: no collisions unless collideConnected */
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
	jd.bodyA = a;
	jd.bodyB = b;
	ibJointId j = ibCreateJoint(w, &jd);
	assert_false(IB_IS_NULL(j));
	assert_int_equal(collide_count(w), 0);
	assert_int_equal(ibDestroyJoint(j), IB_OK);
	assert_int_equal(collide_count(w), 1);
	jd.collideConnected = true;
	j = ibCreateJoint(w, &jd);
	assert_int_equal(collide_count(w), 1);
	/* static-static and static-kinematic never; static-dynamic yes */
	ibBodyId s1 = add_body(w, IB_BODY_STATIC, ibV3(5, 0, 0), IB_QUAT_IDENTITY);
	ibBodyId s2 = add_body(w, IB_BODY_STATIC, ibV3(5.5, 0, 0), IB_QUAT_IDENTITY);
	ibBodyId k = add_body(w, IB_BODY_KINEMATIC, ibV3(5.2, 0.5, 0), IB_QUAT_IDENTITY);
	add_box(s1, ibV3(0.5, 0.5, 0.5));
	add_box(s2, ibV3(0.5, 0.5, 0.5));
	add_box(k, ibV3(0.5, 0.5, 0.5));
	assert_int_equal(collide_count(w), 1);
	ibBodyId d = add_body(w, IB_BODY_DYNAMIC, ibV3(5.2, -0.9, 0), IB_QUAT_IDENTITY);
	add_sphere(d, 0.5);
	assert_int_equal(collide_count(w), 1 + 2); /* d touches s1 and s2 */
	/* an excluded pair dies with its body */
	assert_int_equal(ibWorld_SetPairCollision(d, s1, false), IB_OK);
	assert_int_equal(collide_count(w), 2);
	assert_int_equal(ibDestroyBody(d), IB_OK);
	ibBodyId d2 = add_body(w, IB_BODY_DYNAMIC, ibV3(5.2, -0.9, 0), IB_QUAT_IDENTITY);
	add_sphere(d2, 0.5);
	assert_int_equal(collide_count(w), 3);
	/* shapes of one body never collide with each other */
	ibShapeDef sd = ibDefaultShapeDef();
	sd.localPosition = ibV3(0, 0.3, 0);
	ibSphere g = {0.3};
	assert_false(IB_IS_NULL(ibCreateSphereShape(d2, &sd, &g)));
	assert_int_equal(collide_count(w), 5);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- (3) events */

static bool has_event(const ibContactTouchEvent* e, int n, ibShapeId x, ibShapeId y)
{
	for (int i = 0; i < n; ++i)
		if ((IB_ID_EQUALS(e[i].shapeA, x) && IB_ID_EQUALS(e[i].shapeB, y)) ||
		    (IB_ID_EQUALS(e[i].shapeA, y) && IB_ID_EQUALS(e[i].shapeB, x)))
			return true;
	return false;
}

static void test_events(void** st)
{
	(void)st;
	ibWorldId w = make_world(false);
	ibBodyId a = add_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibBodyId b = add_body(w, IB_BODY_DYNAMIC, ibV3(3, 0, 0), IB_QUAT_IDENTITY);
	ibShapeId sa = add_sphere(a, 0.5), sb = add_sphere(b, 0.5);
	ibWorld_Collide(w);
	ibContactEvents ev = ibWorld_GetContactEvents(w);
	assert_int_equal(ev.beginCount, 0);
	assert_int_equal(ev.endCount, 0);
	ibBody_SetTransform(b, ibV3(1.00005, 0, 0), IB_QUAT_IDENTITY); /* gap 5e-5 < eps_c */
	ibWorld_Collide(w);
	ev = ibWorld_GetContactEvents(w);
	assert_int_equal(ev.beginCount, 1);
	assert_true(has_event(ev.beginEvents, 1, sa, sb));
	ibContactData cd[4];
	assert_int_equal(ibWorld_GetContacts(w, cd, 4), 1);
	assert_true(cd[0].pointCount >= 1);
	assert_true(fabs(cd[0].points[0].separation - 5e-5) < 1e-11);
	/* the normal points towards shape A */
	double sign = IB_ID_EQUALS(cd[0].shapeA, sa) ? -1.0 : 1.0;
	assert_true(fabs(cd[0].normal.x - sign) < 1e-12);
	ibWorld_Collide(w); /* still touching: no new events */
	ev = ibWorld_GetContactEvents(w);
	assert_int_equal(ev.beginCount + ev.endCount, 0);
	ibBody_SetTransform(b, ibV3(1.01, 0, 0), IB_QUAT_IDENTITY);
	ibWorld_Collide(w);
	ev = ibWorld_GetContactEvents(w);
	assert_int_equal(ev.endCount, 1);
	assert_true(has_event(ev.endEvents, 1, sa, sb));
	assert_int_equal(ibWorld_GetContactCount(w), 0);
	/* touching again, then the shape is destroyed: an end event with the (now stale) handle */
	ibBody_SetTransform(b, ibV3(0.9, 0, 0), IB_QUAT_IDENTITY);
	ibWorld_Collide(w);
	assert_int_equal(ibWorld_GetContactEvents(w).beginCount, 1);
	assert_int_equal(ibDestroyShape(sb), IB_OK);
	ibWorld_Collide(w);
	ev = ibWorld_GetContactEvents(w);
	assert_int_equal(ev.endCount, 1);
	assert_true(has_event(ev.endEvents, 1, sa, sb));
	assert_false(ibShape_IsValid(ev.endEvents[0].shapeB) && ibShape_IsValid(ev.endEvents[0].shapeA));
	/* events of a step: two spheres approaching meet during the steps */
	ibShapeId sc = add_sphere(b, 0.5);
	ibBody_SetTransform(b, ibV3(3, 0, 0), IB_QUAT_IDENTITY);
	ibBody_SetLinearVelocity(b, ibV3(-1, 0, 0));
	int begins = 0;
	for (int i = 0; i < 180; ++i) {
		assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
		ev = ibWorld_GetContactEvents(w);
		if (has_event(ev.beginEvents, ev.beginCount, sa, sc)) ++begins;
	}
	assert_int_equal(begins, 1);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- (4) queries */

/* analytic ray entry fraction for a sphere / a box (in its frame); -1 if missed */
static double ref_ray_sphere(ibVec3 c, double r, ibVec3 o, ibVec3 d)
{
	ibVec3 m = ibSub(o, c);
	double a = ibDot(d, d), b = ibDot(m, d), cc = ibDot(m, m) - r * r;
	if (cc <= 0) return 0.0;
	double disc = b * b - a * cc;
	if (disc < 0) return -1;
	double t = (-b - sqrt(disc)) / a;
	return t >= 0 && t <= 1 ? t : -1;
}
static double ref_ray_box(ibBodyId body, ibVec3 h, ibVec3 o, ibVec3 d)
{
	ibVec3 lo = ibBody_GetLocalPoint(body, o), ld = ibSub(ibBody_GetLocalPoint(body, ibAdd(o, d)), lo);
	double t0 = 0, t1 = 1;
	double P[3] = {lo.x, lo.y, lo.z}, D[3] = {ld.x, ld.y, ld.z}, H[3] = {h.x, h.y, h.z};
	for (int k = 0; k < 3; ++k) {
		if (fabs(D[k]) < 1e-300) {
			if (fabs(P[k]) > H[k]) return -1;
			continue;
		}
		double a = (-H[k] - P[k]) / D[k], b = (H[k] - P[k]) / D[k];
		if (a > b) {
			double x = a;
			a = b;
			b = x;
		}
		t0 = fmax(t0, a);
		t1 = fmin(t1, b);
		if (t0 > t1) return -1;
	}
	return t0;
}

static void test_raycast(void** st)
{
	(void)st;
	g_rng = 99;
	for (int method = 0; method < 2; ++method) {
		ibWorldId w = make_world(false);
		ibCollisionSettings cs = ibWorld_GetCollisionSettings(w);
		cs.broadphase = (ibBroadphaseMethod)method;
		ibWorld_SetCollisionSettings(w, &cs);
		enum { N = 60 };
		ibBodyId bodies[N];
		ibShapeId shapes[N];
		double rad[N];
		ibVec3 half[N];
		for (int i = 0; i < N; ++i) {
			bodies[i] = add_body(w, i % 3 ? IB_BODY_DYNAMIC : IB_BODY_STATIC,
			                     ibV3(rnd_range(-5, 5), rnd_range(-5, 5), rnd_range(-5, 5)), rnd_quat());
			if (i % 2) {
				rad[i] = rnd_range(0.2, 1.0);
				shapes[i] = add_sphere(bodies[i], rad[i]);
			} else {
				rad[i] = 0;
				half[i] = ibV3(rnd_range(0.1, 1), rnd_range(0.1, 1), rnd_range(0.1, 1));
				shapes[i] = add_box(bodies[i], half[i]);
			}
		}
		int hits = 0;
		for (int r = 0; r < 400; ++r) {
			ibVec3 o = ibV3(rnd_range(-8, 8), rnd_range(-8, 8), rnd_range(-8, 8));
			ibVec3 d = ibScale(20.0, ibNormalize(ibV3(rnd_range(-1, 1), rnd_range(-1, 1), rnd_range(-1, 1))));
			double best = 2.0;
			int bi = -1, nref = 0;
			for (int i = 0; i < N; ++i) {
				double t = rad[i] > 0 ? ref_ray_sphere(ibBody_GetPosition(bodies[i]), rad[i], o, d)
				                      : ref_ray_box(bodies[i], half[i], o, d);
				if (t < 0) continue;
				++nref;
				if (t < best) {
					best = t;
					bi = i;
				}
			}
			ibRayResult h = ibWorld_CastRayClosest(w, o, d, ibDefaultQueryFilter());
			assert_int_equal(h.hit, bi >= 0);
			ibRayResult all[N];
			int na = ibWorld_CastRayAll(w, o, d, ibDefaultQueryFilter(), all, N);
			assert_int_equal(na, nref);
			for (int k = 1; k < na; ++k) assert_true(all[k - 1].fraction <= all[k].fraction);
			if (bi < 0) continue;
			++hits;
			assert_true(fabs(h.fraction - best) < 1e-9);
			assert_true(IB_ID_EQUALS(h.shape, shapes[bi]));
			assert_true(fabs(all[0].fraction - best) < 1e-9);
			if (best > 0) {
				ibDistanceOutput cp;
				assert_int_equal(ibShape_ClosestPoint(h.shape, h.point, &cp), IB_OK);
				assert_true(fabs(cp.distance) < 1e-9);
				assert_true(fabs(ibLength(h.normal) - 1.0) < 1e-12);
				assert_true(ibDot(h.normal, d) < 0.0);
			}
		}
		assert_true(hits > 50);
		/* filter: a query that reports nothing */
		ibRayResult none = ibWorld_CastRayClosest(w, ibV3(-10, 0, 0), ibV3(20, 0, 0), (ibQueryFilter){1, 0});
		assert_false(none.hit);
		ibDestroyWorld(w);
	}
}

/* capsules and cylinders: the hit lies on the surface and the ray is outside before it */
static void test_raycast_round(void** st)
{
	(void)st;
	g_rng = 7;
	ibWorldId w = make_world(false);
	ibBodyId b = add_body(w, IB_BODY_STATIC, ibV3(0.3, -0.2, 0.1), rnd_quat());
	ibShapeDef sd = ibDefaultShapeDef();
	for (int kind = 0; kind < 2; ++kind) {
		ibShapeId s;
		if (kind == 0) {
			ibCapsule c = {0.4, 0.7};
			s = ibCreateCapsuleShape(b, &sd, &c);
		} else {
			ibCylinder c = {0.5, 0.6};
			s = ibCreateCylinderShape(b, &sd, &c);
		}
		int hits = 0;
		for (int r = 0; r < 300; ++r) {
			ibVec3 o = ibScale(3.0, ibNormalize(ibV3(rnd_range(-1, 1), rnd_range(-1, 1), rnd_range(-1, 1))));
			ibVec3 target = ibV3(rnd_range(-0.8, 0.8), rnd_range(-0.8, 0.8), rnd_range(-0.8, 0.8));
			ibVec3 d = ibScale(2.0, ibSub(target, o));
			ibRayResult h = ibWorld_CastRayClosest(w, o, d, ibDefaultQueryFilter());
			double tEnd = h.hit ? h.fraction : 1.0;
			for (int k = 0; k < 400; ++k) {
				ibDistanceOutput cp;
				ibShape_ClosestPoint(s, ibMulAdd(o, tEnd * k / 400.0, d), &cp);
				assert_true(cp.distance > -1e-12);
			}
			if (!h.hit) continue;
			++hits;
			ibDistanceOutput cp;
			ibShape_ClosestPoint(s, h.point, &cp);
			assert_true(fabs(cp.distance) < 1e-9);
			assert_true(ibDot(h.normal, d) < 0.0);
			/* just past the hit the ray is inside */
			ibShape_ClosestPoint(s, ibMulAdd(h.point, 1e-6 / ibLength(d), d), &cp);
			assert_true(cp.distance < 1e-12);
		}
		assert_true(hits > 100);
		ibDestroyShape(s);
	}
	ibDestroyWorld(w);
}

static void test_overlap_closest(void** st)
{
	(void)st;
	g_rng = 3;
	ibWorldId w = make_world(false);
	enum { N = 200 };
	ibBodyId bodies[N];
	ibShapeId shapes[N];
	for (int i = 0; i < N; ++i) {
		bodies[i] = add_body(w, IB_BODY_DYNAMIC, ibV3(rnd_range(-5, 5), rnd_range(-5, 5), rnd_range(-5, 5)), rnd_quat());
		shapes[i] = i % 2 ? add_sphere(bodies[i], rnd_range(0.1, 0.5))
		                  : add_box(bodies[i], ibV3(rnd_range(0.1, 0.5), rnd_range(0.1, 0.5), rnd_range(0.1, 0.5)));
	}
	for (int q = 0; q < 50; ++q) {
		ibVec3 c = ibV3(rnd_range(-5, 5), rnd_range(-5, 5), rnd_range(-5, 5));
		ibBounds bb = {ibSub(c, ibV3(1, 1.5, 0.5)), ibAdd(c, ibV3(1, 1.5, 0.5))};
		ibShapeId out[N];
		int n = ibWorld_OverlapBounds(w, bb, ibDefaultQueryFilter(), out, N);
		int nref = 0;
		for (int i = 0; i < N; ++i) {
			ibBounds s = ibShape_GetBounds(shapes[i]);
			if (s.lower.x <= bb.upper.x && bb.lower.x <= s.upper.x && s.lower.y <= bb.upper.y &&
			    bb.lower.y <= s.upper.y && s.lower.z <= bb.upper.z && bb.lower.z <= s.upper.z)
				++nref;
		}
		assert_int_equal(n, nref);
		/* a sphere at c of radius 1: overlapping shapes are those whose closest point to c is within 1 */
		ibQueryShape qs = {0};
		qs.type = IB_SHAPE_SPHERE;
		qs.sphere.radius = 1.0;
		n = ibWorld_OverlapShape(w, &qs, c, IB_QUAT_IDENTITY, ibDefaultQueryFilter(), out, N);
		nref = 0;
		for (int i = 0; i < N; ++i) {
			ibDistanceOutput cp;
			assert_int_equal(ibShape_ClosestPoint(shapes[i], c, &cp), IB_OK);
			if (cp.distance <= 1.0) ++nref;
		}
		assert_int_equal(n, nref);
	}
	/* closest point to a box: the clamp in its frame (analytic) */
	for (int i = 0; i < N; i += 2) {
		ibBox g = ibShape_GetBox(shapes[i]);
		ibVec3 p = ibV3(rnd_range(-6, 6), rnd_range(-6, 6), rnd_range(-6, 6));
		ibVec3 l = ibBody_GetLocalPoint(bodies[i], p);
		ibVec3 c = {fmax(-g.halfExtents.x, fmin(g.halfExtents.x, l.x)), fmax(-g.halfExtents.y, fmin(g.halfExtents.y, l.y)),
		            fmax(-g.halfExtents.z, fmin(g.halfExtents.z, l.z))};
		ibDistanceOutput cp;
		assert_int_equal(ibShape_ClosestPoint(shapes[i], p, &cp), IB_OK);
		if (ibDistance(c, l) > 1e-9) {
			assert_true(fabs(cp.distance - ibDistance(c, l)) < 1e-9);
			assert_true(ibDistance(cp.pointA, ibBody_GetWorldPoint(bodies[i], c)) < 1e-9);
		}
	}
	/* two spheres: analytic distance and points */
	ibDistanceOutput d;
	ibShapeId s1 = shapes[1], s2 = shapes[3];
	assert_int_equal(ibShape_Distance(s1, s2, &d), IB_OK);
	ibVec3 c1 = ibBody_GetPosition(bodies[1]), c2 = ibBody_GetPosition(bodies[3]);
	double r1 = ibShape_GetSphere(s1).radius, r2 = ibShape_GetSphere(s2).radius;
	assert_true(fabs(d.distance - (ibDistance(c1, c2) - r1 - r2)) < 1e-12);
	assert_true(fabs(ibDistance(d.pointA, c1) - r1) < 1e-12);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- (5) errors, draw, settings */

static int g_segments, g_shapes, g_contacts;
static void seg_cb(ibVec3 a, ibVec3 b, uint32_t c, void* ctx)
{
	(void)a, (void)b, (void)c, (void)ctx;
	++g_segments;
}
static void shape_cb(ibVec3 p, ibQuat q, ibShapeId s, uint32_t c, void* ctx)
{
	(void)p, (void)q, (void)c, (void)ctx;
	assert_true(ibShape_IsValid(s));
	++g_shapes;
}
static void contact_cb(ibVec3 p, ibVec3 n, double sep, void* ctx)
{
	(void)p, (void)n, (void)sep, (void)ctx;
	++g_contacts;
}

static void test_errors_and_draw(void** st)
{
	(void)st;
	ibWorldId w = make_world(false);
	ibBodyId a = add_body(w, IB_BODY_DYNAMIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY);
	ibBodyId b = add_body(w, IB_BODY_STATIC, ibV3(0.9, 0, 0), IB_QUAT_IDENTITY);
	ibShapeId sa = add_box(a, ibV3(0.5, 0.5, 0.5));
	ibShapeId sb = add_sphere(b, 0.5);
	/* settings */
	ibCollisionSettings cs = ibWorld_GetCollisionSettings(w);
	assert_true(cs.contactTolerance == 1e-4);
	cs.contactTolerance = NAN;
	assert_int_equal(ibWorld_SetCollisionSettings(w, &cs), IB_ERR_INVALID_ARGUMENT);
	cs.contactTolerance = 1e-3;
	cs.toiMode = (ibToiMode)7;
	assert_int_equal(ibWorld_SetCollisionSettings(w, &cs), IB_ERR_INVALID_ARGUMENT);
	assert_true(ibWorld_GetCollisionSettings(w).contactTolerance == 1e-4);
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.contactTolerance = -1;
	assert_int_not_equal(ibValidateWorldDef(&wd, NULL, 0), IB_OK);
	/* NaN and stale handles */
	assert_false(ibWorld_CastRayClosest(w, ibV3(NAN, 0, 0), ibV3(1, 0, 0), ibDefaultQueryFilter()).hit);
	assert_int_equal(ibWorld_CastRayAll(w, ibV3(0, 0, 0), ibV3(INFINITY, 0, 0), ibDefaultQueryFilter(), NULL, 0), -1);
	assert_int_equal(ibWorld_OverlapBounds(w, (ibBounds){{1, 0, 0}, {0, 1, 1}}, ibDefaultQueryFilter(), NULL, 0), -1);
	ibQueryShape qs = {0};
	qs.type = IB_SHAPE_SPHERE;
	qs.sphere.radius = NAN;
	assert_int_equal(ibWorld_OverlapShape(w, &qs, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibDefaultQueryFilter(), NULL, 0), -1);
	ibDistanceOutput d;
	assert_int_equal(ibShape_ClosestPoint(sa, ibV3(0, NAN, 0), &d), IB_ERR_INVALID_ARGUMENT);
	ibShapeId stale = add_sphere(a, 0.1);
	ibDestroyShape(stale);
	assert_int_equal(ibShape_Distance(sa, stale, &d), IB_ERR_STALE_HANDLE);
	assert_int_equal(ibShape_SetFilter(stale, ibDefaultFilter()), IB_ERR_STALE_HANDLE);
	assert_int_equal(ibWorld_SetPairCollision(a, a, false), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibWorld_Collide(IB_NULL_WORLD), IB_ERR_STALE_HANDLE);
	assert_int_equal(ibWorld_GetContactCount(IB_NULL_WORLD), 0);
	/* draw */
	assert_int_equal(ibWorld_Collide(w), IB_OK);
	assert_int_equal(ibWorld_GetContactCount(w), 1);
	ibDebugDraw dd = ibDefaultDebugDraw();
	dd.drawSegment = seg_cb;
	dd.drawShape = shape_cb;
	dd.drawContact = contact_cb;
	assert_int_equal(ibWorld_Draw(w, &dd), IB_OK);
	assert_int_equal(g_shapes, 2);
	assert_int_equal(g_segments, 24); /* two AABBs */
	assert_true(g_contacts >= 1);
	dd.drawShape = NULL;
	dd.drawBounds = false;
	g_segments = 0;
	ibWorld_Draw(w, &dd);
	assert_true(g_segments >= 12 + 3 * 24); /* box and sphere wireframes */
	assert_int_equal(ibWorld_Draw(w, NULL), IB_ERR_INVALID_ARGUMENT);
	(void)sb;
	ibDestroyWorld(w);
}

/* scene format: the world's collision attributes load, are validated and survive a save/load round trip */
static void test_scene_attributes(void** st)
{
	(void)st;
	const char* xml = "<ibdyn version=\"1\"><world collision=\"false\" contact_tolerance=\"0.002\" broadphase=\"tree\" "
	                  "toi=\"bisection\" conservative_advancement=\"false\" max_toi_substeps=\"3\" "
	                  "max_toi_iterations=\"11\"/></ibdyn>";
	ibWorldId w;
	char err[256];
	assert_int_equal(ibLoadSceneFromMemory(xml, strlen(xml), "t", NULL, &w, NULL, err, sizeof err), IB_OK);
	ibCollisionSettings c = ibWorld_GetCollisionSettings(w);
	assert_false(c.enabled);
	assert_true(c.contactTolerance == 0.002);
	assert_int_equal(c.broadphase, IB_BROADPHASE_DYNAMIC_TREE);
	assert_int_equal(c.toiMode, IB_TOI_BISECTION);
	assert_false(c.conservativeAdvancement);
	assert_int_equal(c.maxToiSubsteps, 3);
	assert_int_equal(c.maxToiIterations, 11);
	char* out = NULL;
	assert_int_equal(ibSaveSceneToMemory(w, NULL, &out, err, sizeof err), IB_OK);
	ibWorldId w2;
	assert_int_equal(ibLoadSceneFromMemory(out, strlen(out), "t2", NULL, &w2, NULL, err, sizeof err), IB_OK);
	ibCollisionSettings c2 = ibWorld_GetCollisionSettings(w2);
	assert_true(c2.enabled == c.enabled && c2.contactTolerance == c.contactTolerance && c2.broadphase == c.broadphase &&
	            c2.toiMode == c.toiMode && c2.conservativeAdvancement == c.conservativeAdvancement &&
	            c2.maxToiSubsteps == c.maxToiSubsteps && c2.maxToiIterations == c.maxToiIterations);
	free(out);
	ibDestroyWorld(w);
	ibDestroyWorld(w2);
	const char* bad = "<ibdyn version=\"1\"><world contact_tolerance=\"-1\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(bad, strlen(bad), "t3", NULL, &w, NULL, err, sizeof err), IB_OK);
	const char* bad2 = "<ibdyn version=\"1\"><world toi=\"sometimes\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(bad2, strlen(bad2), "t4", NULL, &w, NULL, err, sizeof err), IB_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filter),         cmocka_unit_test(test_events),
	    cmocka_unit_test(test_raycast),        cmocka_unit_test(test_raycast_round),
	    cmocka_unit_test(test_overlap_closest), cmocka_unit_test(test_errors_and_draw),
	    cmocka_unit_test(test_scene_attributes), cmocka_unit_test(test_scene_sap),
	    cmocka_unit_test(test_scene_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
