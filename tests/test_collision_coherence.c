/* Temporal coherence of the collision pipeline (src/collision/collision_world.c): a pair whose two shapes
 * kept bit-identical world poses since its manifolds were computed gets them copied from the last contact
 * set instead of running the narrowphase again, and the shapes' convex views are made once per pose.
 * (1) A dense random scene (boxes, spheres, compound bodies, a static box and a static plane)
 * over 40 detections in which a third of the bodies move, a third are set to their unchanged pose and the
 * rest are left alone: after every detection the contact set equals a brute-force recomputation of every
 * shape pair (ib_shape_pair_collide with a fresh cache): same pairs, same normals and point sets (1e-9),
 * same feature keys; pairs are reused on every detection after the first, and never when the tolerance
 * changed or when a shape slot was reused by a new shape; detections without any motion reuse every pair
 * and keep the broadphase's pair set.
 * (2) Drift coherence (IB_COHERENCE_DRIFT): the same kind of scene, settled, then moved every detection by
 * rounding-level amounts (positions and quaternion components by up to 1e-13, quaternions renormalised and
 * every other detection negated): every candidate pair is reused, and the contact set still equals the
 * brute-force recomputation at the current poses (1e-9); bodies then moved by 3 bounds get a new reference
 * pose and their pairs are recomputed, the others' are still reused; a slow walk that adds up beyond the
 * bound restamps the shape when it does; while a body drifts within the bound its manifolds ride with it
 * (separations within 0.1 bound of a recomputation's, points and normals within 20 bounds), also while
 * every body turns (normals within 100 bounds).
 * (3) The cached separating axis of box pairs (ib_collide_box_box_sat_cached, kept in the pair's GJK cache):
 * on random box pairs near contact moved in small steps, the SAT result and the manifold with the cache are
 * bit for bit those without it, and the cached axis rejects most separated pairs on its own. */
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

#define NB 240
#define STEPS 40

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

static ibShapeId add_random_shape(ibBodyId b, double u)
{
	ibShapeDef sd = ibDefaultShapeDef();
	if (u < 0.5) {
		ibBox g = {ibV3(rnd_range(0.1, 0.5), rnd_range(0.1, 0.5), rnd_range(0.1, 0.5))};
		return ibCreateBoxShape(b, &sd, &g);
	}
	/* boxes and spheres: their pairs have closed forms or the SAT when touching (capsule-box goes
	 * through GJK, whose warm start - the world's cache against the reference's fresh one - can change
	 * the feature of a capsule lying almost parallel to a face) */
	ibSphere g = {rnd_range(0.1, 0.4)};
	return ibCreateSphereShape(b, &sd, &g);
}

/* Brute force: every pair of shapes on different bodies, not both static, through the narrowphase with a
 * fresh cache. Returns the number of touching pairs; checks every contact of the world against it: normals
 * and points within geo, separations within sep. */
static int check_geo(ibWorld* w, double tol, double geo, double sep)
{
	ibContactPair* c;
	int nc = ib_collision_contacts(w, &c);
	/* the world's contacts by unordered shape pair (convex pairs and planes: one manifold each) */
	int touching = 0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		const ibShape* si = &w->shapes[i];
		if (!si->inUse) continue;
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			const ibShape* sj = &w->shapes[j];
			if (!sj->inUse || si->body == sj->body) continue;
			const ibBody *bi = &w->bodies[si->body], *bj = &w->bodies[sj->body];
			if (!ib_is_dynamic(bi) && !ib_is_dynamic(bj)) continue;
			int found = -1;
			for (int k = 0; k < nc; ++k)
				if ((c[k].shapeA == i && c[k].shapeB == j) || (c[k].shapeA == j && c[k].shapeB == i)) {
					assert_int_equal(found, -1); /* one manifold per pair */
					found = k;
				}
			/* the reference in the world's order of the pair (normal from B to A) */
			bool iFirst = found < 0 || c[found].shapeA == i;
			const ibShape *sa = iFirst ? si : sj, *sb = iFirst ? sj : si;
			ibPairCache cache;
			memset(&cache, 0, sizeof cache);
			ibManifold m[4];
			int mc = ib_shape_pair_collide(&w->bodies[sa->body], sa, &w->bodies[sb->body], sb, tol, &cache, m, 4);
			if (mc == 0 || m[0].pointCount == 0) {
				assert_int_equal(found, -1);
				continue;
			}
			++touching;
			assert_int_not_equal(found, -1);
			const ibManifold* g = &c[found].manifold;
			assert_true(ibDistance(g->normal, m[0].normal) <= geo);
			assert_int_equal(g->pointCount, m[0].pointCount);
			for (int p = 0; p < g->pointCount; ++p) {
				int q = 0;
				while (q < m[0].pointCount && m[0].points[q].key != g->points[p].key) ++q;
				assert_true(q < m[0].pointCount);
				assert_true(ibDistance(g->points[p].pointA, m[0].points[q].pointA) <= geo);
				assert_true(ibDistance(g->points[p].pointB, m[0].points[q].pointB) <= geo);
				assert_true(fabs(g->points[p].separation - m[0].points[q].separation) <= sep);
			}
		}
	}
	assert_int_equal(touching, nc);
	return touching;
}

static int check_against_brute_force(ibWorld* w, double tol) { return check_geo(w, tol, 1e-9, 1e-9); }

static void test_reuse_equals_recomputation(void** st)
{
	(void)st;
	g_rng = 777u;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	ibWorldId wid = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(wid));
	ibWorld* w = ib_world_get(wid);
	ibCollisionSettings cs = ibWorld_GetCollisionSettings(wid);
	cs.contactTolerance = 1e-2; /* many touching pairs with near-threshold points */
	assert_int_equal(ibWorld_SetCollisionSettings(wid, &cs), IB_OK);

	/* static ground: a box below a plane */
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(wid, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibPlane plane = {ibV3(0, 0, 1), 0.0};
	assert_false(IB_IS_NULL(ibCreatePlaneShape(ground, &sd, &plane)));
	gd.position = ibV3(3.0, 3.0, -0.2);
	ibBodyId slab = ibCreateBody(wid, &gd);
	ibBox sg = {ibV3(1.0, 1.0, 0.25)};
	assert_false(IB_IS_NULL(ibCreateBoxShape(slab, &sd, &sg)));

	static ibBodyId bodies[NB];
	static ibVec3 pos[NB];
	static ibQuat rot[NB];
	static ibShapeId firstShape[NB];
	const double L = 6.0;
	for (int i = 0; i < NB; ++i) {
		pos[i] = ibV3(rnd_range(0, L), rnd_range(0, L), rnd_range(0.05, 2.0));
		rot[i] = rnd_quat();
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = pos[i];
		bd.rotation = rot[i];
		bodies[i] = ibCreateBody(wid, &bd);
		assert_false(IB_IS_NULL(bodies[i]));
		firstShape[i] = add_random_shape(bodies[i], rnd());
		assert_false(IB_IS_NULL(firstShape[i]));
		if (rnd() < 0.15) { /* compound */
			ibShapeDef cd = ibDefaultShapeDef();
			cd.localPosition = ibV3(0.35, 0.0, 0.1);
			ibSphere g = {0.15};
			assert_false(IB_IS_NULL(ibCreateSphereShape(bodies[i], &cd, &g)));
		}
	}
	ibCollisionWorld* cw = NULL;
	long totalPairs = 0, totalReused = 0;
	for (int step = 0; step < STEPS; ++step) {
		int expectNoReuse = 0;
		for (int i = 0; i < NB; ++i) {
			double u = rnd();
			if (u < 0.33) { /* moves */
				pos[i] = ibAdd(pos[i], ibV3(rnd_range(-0.03, 0.03), rnd_range(-0.03, 0.03), rnd_range(-0.03, 0.03)));
				pos[i].z = fmax(pos[i].z, 0.02);
				rot[i] = ibQuatNormalize((ibQuat){rot[i].w, rot[i].x + rnd_range(-0.03, 0.03), rot[i].y, rot[i].z});
				assert_int_equal(ibBody_SetTransform(bodies[i], pos[i], rot[i]), IB_OK);
			} else if (u < 0.66) { /* set to the same pose: bit-identical */
				assert_int_equal(ibBody_SetTransform(bodies[i], pos[i], rot[i]), IB_OK);
			}
		}
		if (step == 12) { /* a new tolerance: nothing may be reused */
			cs.contactTolerance = 2e-2;
			assert_int_equal(ibWorld_SetCollisionSettings(wid, &cs), IB_OK);
			expectNoReuse = 1;
		}
		if (step == 20) { /* the slot of a destroyed shape reused by a different shape at the same pose */
			for (int i = 0; i < NB; i += 7) {
				assert_int_equal(ibDestroyShape(firstShape[i]), IB_OK);
				firstShape[i] = add_random_shape(bodies[i], rnd());
				assert_false(IB_IS_NULL(firstShape[i]));
			}
		}
		if (step == 28) { /* the static slab moves */
			assert_int_equal(ibBody_SetTransform(slab, ibV3(3.0, 3.05, -0.19), IB_QUAT_IDENTITY), IB_OK);
		}
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		cw = w->collision;
		int n = check_against_brute_force(w, cs.contactTolerance);
		totalPairs += n;
		totalReused += cw->reusedPairs;
		if (step == 0 || expectNoReuse) assert_int_equal(cw->reusedPairs, 0);
		else assert_true(cw->reusedPairs > 0);
	}
	/* nothing moves: the broadphase keeps its pair set (no sort pass, no merge), every pair is reused */
	for (int k = 0; k < 2; ++k) {
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		assert_int_equal(cw->reusedPairs, cw->stats.pairCount);
		check_against_brute_force(w, cs.contactTolerance);
	}
	printf("coherence: %ld touching pairs over %d detections equal brute force, %ld candidate pairs reused\n",
	       totalPairs, STEPS, totalReused);
	assert_true(totalPairs > 40 * STEPS);
	assert_true(totalReused > 10 * STEPS);
	ibDestroyWorld(wid);
}

static ibQuat nudge_quat(ibQuat q, double x)
{
	q = (ibQuat){q.w + rnd_range(-x, x), q.x + rnd_range(-x, x), q.y + rnd_range(-x, x), q.z + rnd_range(-x, x)};
	return ibQuatNormalize(q);
}

static ibVec3 nudge_vec(ibVec3 p, double x)
{
	return ibV3(p.x + rnd_range(-x, x), p.y + rnd_range(-x, x), p.z + rnd_range(-x, x));
}

static void test_drift_reuse_equals_recomputation(void** st)
{
	(void)st;
	g_rng = 4242u;
	enum { N = 160 };
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	ibWorldId wid = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(wid));
	ibWorld* w = ib_world_get(wid);
	ibCollisionSettings cs = ibWorld_GetCollisionSettings(wid);
	cs.contactTolerance = 1e-2;
	assert_int_equal(ibWorld_SetCollisionSettings(wid, &cs), IB_OK);
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(wid, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibPlane plane = {ibV3(0, 0, 1), 0.0};
	assert_false(IB_IS_NULL(ibCreatePlaneShape(ground, &sd, &plane)));

	static ibBodyId bodies[N];
	static ibVec3 pos[N];
	static ibQuat rot[N];
	static int32_t shapeIndex[N];
	const double L = 4.0;
	for (int i = 0; i < N; ++i) {
		pos[i] = ibV3(rnd_range(0, L), rnd_range(0, L), rnd_range(0.05, 1.5));
		rot[i] = rnd_quat();
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = pos[i];
		bd.rotation = rot[i];
		bodies[i] = ibCreateBody(wid, &bd);
		ibShapeId sh = add_random_shape(bodies[i], rnd());
		assert_false(IB_IS_NULL(sh));
		shapeIndex[i] = sh.index1 - 1;
	}
	assert_int_equal(ibWorld_Collide(wid), IB_OK);
	ibCollisionWorld* cw = w->collision;
	int touching = check_against_brute_force(w, cs.contactTolerance);
	assert_true(touching > 40);
	long driftReused = 0;
	/* rounding-level motion: everything reused, still equal to a recomputation */
	for (int step = 0; step < 12; ++step) {
		for (int i = 0; i < N; ++i) {
			ibVec3 p = nudge_vec(pos[i], 1e-13);
			ibQuat q = nudge_quat(rot[i], 1e-13);
			if (step & 1) q = (ibQuat){-q.w, -q.x, -q.y, -q.z};
			assert_int_equal(ibBody_SetTransform(bodies[i], p, q), IB_OK);
		}
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		check_against_brute_force(w, cs.contactTolerance);
		assert_int_equal(cw->reusedPairs, cw->stats.pairCount);
		assert_true(cw->driftReusedPairs > cw->stats.pairCount / 2);
		driftReused += cw->driftReusedPairs;
	}
	/* a third of the bodies moved beyond the bound: new reference poses, their pairs recomputed */
	uint64_t before = cw->clock;
	int moved = 0;
	const double bound = IB_COHERENCE_DRIFT;
	for (int i = 0; i < N; i += 3) {
		pos[i] = ibAdd(pos[i], ibV3(3.0 * bound, 0.0, 0.0));
		assert_int_equal(ibBody_SetTransform(bodies[i], pos[i], rot[i]), IB_OK);
		++moved;
	}
	assert_int_equal(ibWorld_Collide(wid), IB_OK);
	check_against_brute_force(w, cs.contactTolerance);
	for (int i = 0; i < N; ++i) {
		const ibShapeSlot* sl = &cw->slots[shapeIndex[i]];
		if (i % 3 == 0) {
			assert_true(sl->driftStamp > before);
			assert_true(ibDistance(sl->convex.position, pos[i]) == 0.0);
		} else {
			assert_true(sl->driftStamp <= before);
		}
	}
	assert_true(cw->reusedPairs < cw->stats.pairCount);
	assert_true(cw->reusedPairs > 0);
	/* a slow walk of one body: reused while within the bound of its reference, restamped when beyond. Its
	 * manifolds ride with it: the separations stay exact, the points lag along the surfaces by at most
	 * the walk since the reference, and the normals turn by at most that over the smallest radius (a
	 * sphere of 0.1 m) */
	int b0 = 1, restamped = 0, reusedSteps = 0;
	ibVec3 ref = cw->slots[shapeIndex[b0]].convex.position;
	for (int step = 0; step < 60; ++step) {
		pos[b0] = ibAdd(pos[b0], ibV3(0.1 * bound, 0.0, 0.0));
		assert_int_equal(ibBody_SetTransform(bodies[b0], pos[b0], rot[b0]), IB_OK);
		uint64_t c0 = cw->clock;
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		check_geo(w, cs.contactTolerance, 2.0 * bound / 0.1, 0.1 * bound);
		const ibShapeSlot* sl = &cw->slots[shapeIndex[b0]];
		/* the reference moves only when the walk left the bound around it */
		double off = fabs(pos[b0].x - ref.x);
		if (sl->driftStamp > c0) {
			++restamped;
			assert_true(off > bound * (1.0 + sl->radius) - 1e-12);
			ref = sl->convex.position;
		} else {
			++reusedSteps;
			assert_true(off <= bound * (1.0 + sl->radius) + 1e-12);
		}
	}
	assert_true(restamped >= 2 && reusedSteps >= 20);
	/* every body turns slowly about its own axis (a twentieth of the bound per detection, points within
	 * 1 m of the centre): the touching pairs ride until a body leaves its bound, and their separations
	 * stay within a tenth of the bound of a recomputation's (the recomputation clips at other points of the
	 * tilted faces); normals within 100 bounds (a sphere sunk 0.35 m into a box turns its normal fastest) */
	long turnReused = 0;
	for (int step = 0; step < 30; ++step) {
		for (int i = 0; i < N; ++i) {
			ibVec3 axis = ibNormalize(ibV3(1.0 + i % 3, 2.0 - i % 5, 0.5 + i % 2));
			rot[i] = ibQuatNormalize(ibQuatMul(ibQuatFromAxisAngle(axis, 0.05 * bound), rot[i]));
			assert_int_equal(ibBody_SetTransform(bodies[i], pos[i], rot[i]), IB_OK);
		}
		assert_int_equal(ibWorld_Collide(wid), IB_OK);
		check_geo(w, cs.contactTolerance, 100.0 * bound, 0.1 * bound);
		turnReused += cw->driftReusedPairs;
	}
	assert_true(turnReused > 10 * touching);
	printf("drift coherence: %d touching pairs, %ld drift reuses, %d moved beyond the bound, walk restamped %d "
	       "times in 60, %ld pairs reused while turning\n",
	       touching, driftReused, moved, restamped, turnReused);
	ibDestroyWorld(wid);
}

static bool vec_same(ibVec3 a, ibVec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static ibConvex make_box(ibVec3 p, ibQuat q, ibVec3 h)
{
	ibConvex c = ib_convex_make(IB_CONVEX_BOX, p, q);
	c.halfExtents = h;
	return c;
}

static void test_sat_axis_cache(void** st)
{
	(void)st;
	g_rng = 99u;
	const double tol = 1e-3;
	long calls = 0, separated = 0, hits = 0, touching = 0;
	for (int pair = 0; pair < 3000; ++pair) {
		ibVec3 ha = ibV3(rnd_range(0.1, 1.0), rnd_range(0.1, 1.0), rnd_range(0.1, 1.0));
		ibVec3 hb = ibV3(rnd_range(0.1, 1.0), rnd_range(0.1, 1.0), rnd_range(0.1, 1.0));
		ibVec3 pa = ibV3(0, 0, 0), pb = ibV3(rnd_range(-1.5, 1.5), rnd_range(-1.5, 1.5), rnd_range(-1.5, 1.5));
		ibQuat qa = rnd_quat(), qb = rnd_quat();
		if (pair % 4 == 0) qb = qa; /* aligned pairs: face contacts */
		ibGjkCache cache = {0};
		for (int step = 0; step < 8; ++step) {
			ibConvex a = make_box(pa, qa, ha), b = make_box(pb, qb, hb);
			/* the SAT alone */
			int axis = cache.satAxis, axisBefore = axis;
			ibConvexDistance d1, d2;
			memset(&d1, 0, sizeof d1);
			memset(&d2, 0, sizeof d2);
			int r1 = ib_collide_box_box_sat_cached(&a, &b, tol, &axis, &d1);
			int r2 = ib_collide_box_box_sat_tol(&a, &b, tol, &d2);
			assert_int_equal(r1, r2);
			if (r1 == 1) {
				assert_true(d1.distance == d2.distance && vec_same(d1.normal, d2.normal));
				assert_true(vec_same(d1.pointA, d2.pointA) && vec_same(d1.pointB, d2.pointB));
			}
			/* the manifold: the same GJK warm start, with and without the cached axis */
			ibGjkCache c2 = cache;
			c2.satAxis = 0;
			ibManifold m1, m2;
			memset(&m1, 0, sizeof m1);
			memset(&m2, 0, sizeof m2);
			int k1 = ib_manifold_build(&a, &b, tol, &cache, &m1);
			int k2 = ib_manifold_build(&a, &b, tol, &c2, &m2);
			assert_int_equal(k1, k2);
			assert_int_equal(m1.pointCount, m2.pointCount);
			if (k1 > 0) assert_true(vec_same(m1.normal, m2.normal));
			for (int k = 0; k < m1.pointCount; ++k) {
				assert_true(vec_same(m1.points[k].pointA, m2.points[k].pointA));
				assert_true(vec_same(m1.points[k].pointB, m2.points[k].pointB));
				assert_true(m1.points[k].separation == m2.points[k].separation);
				assert_int_equal(m1.points[k].key, m2.points[k].key);
			}
			assert_int_equal(cache.count, c2.count);
			++calls;
			if (r1 < 0) {
				++separated;
				hits += axisBefore != 0 && axis == axisBefore;
			}
			touching += k1 > 0;
			/* a small motion */
			pb = ibAdd(pb, ibV3(rnd_range(-0.02, 0.02), rnd_range(-0.02, 0.02), rnd_range(-0.02, 0.02)));
			qb = ibQuatNormalize((ibQuat){qb.w, qb.x + rnd_range(-0.01, 0.01), qb.y, qb.z + rnd_range(-0.01, 0.01)});
		}
	}
	printf("sat axis cache: %ld calls, %ld touching, %ld separated, %ld rejected by the cached axis\n", calls,
	       touching, separated, hits);
	assert_true(touching > calls / 20);
	assert_true(separated > calls / 4);
	assert_true(hits > separated / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reuse_equals_recomputation),
	    cmocka_unit_test(test_drift_reuse_equals_recomputation),
	    cmocka_unit_test(test_sat_axis_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
