/* Time of contact (src/collision/toi.c, §4.1): (1) a sphere falling onto a static thin box: the time of
 * contact found by each search mode (interpolation, bisection; with and without conservative
 * advancement) equals the analytic time within eps_c / speed, and the contact detected at the start of
 * the following sub-step has its separation within eps_c; with TOI off the step ends penetrating;
 * (2) a bullet: a sphere at 1000 m/s with h = 1/60 towards a 1 cm wall: conservative advancement stops
 * the sub-step at the first contact (analytic time), the contact set holds the sphere on the near side
 * of the wall within eps_c and a begin-touch event is reported; without conservative advancement the
 * sphere passes the wall unseen (which is why the test can fail); (3) a fast kinematic paddle, a
 * spinning rod, and a stepped scene that allocates nothing once warm. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ibdyn/ibdyn.h"

static ibWorldId make_world(ibVec3 g, ibToiMode mode, bool ca)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = g;
	wd.collision.toiMode = mode;
	wd.collision.conservativeAdvancement = ca;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

static ibShapeId add_static_box(ibWorldId w, ibVec3 p, ibVec3 h)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.position = p;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox box = {h};
	return ibCreateBoxShape(b, &sd, &box);
}

static ibShapeId add_sphere(ibWorldId w, ibVec3 p, ibVec3 v, double r, ibBodyId* out)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.linearVelocity = v;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere s = {r};
	*out = b;
	return ibCreateSphereShape(b, &sd, &s);
}

/* sphere of radius r dropped from z0 with speed v0 downwards onto a box whose top is at z = 0 */
static void drop(ibToiMode mode, bool ca, const char* name)
{
	const double g = 9.81, r = 0.1, z0 = 1.0, v0 = 2.0, h = 1.0 / 60.0, eps = 1e-4;
	ibWorldId w = make_world(ibV3(0, 0, -g), mode, ca);
	ibShapeId box = add_static_box(w, ibV3(0, 0, -0.01), ibV3(1, 1, 0.01)); /* 2 cm thick */
	ibBodyId b;
	ibShapeId s = add_sphere(w, ibV3(0.1, -0.2, z0), ibV3(0, 0, -v0), r, &b);
	/* analytic: z0 - r = v0 t + g t^2 / 2 */
	double tc = (-v0 + sqrt(v0 * v0 + 2.0 * g * (z0 - r))) / g;
	double t = 0.0, found = -1.0;
	int steps = 0;
	while (t < 2.0 && found < 0.0) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibCollisionStats st = ibWorld_GetCollisionStats(w);
		if (st.firstToi >= 0.0) {
			found = t + st.firstToi;
			assert_true(st.toiIterations >= 1 || st.caEvents >= 1);
			/* the last detection was at the time of contact: the pair touches within eps_c */
			ibContactData cd[4];
			int n = ibWorld_GetContacts(w, cd, 4);
			assert_int_equal(n, 1);
			assert_true((IB_ID_EQUALS(cd[0].shapeA, s) && IB_ID_EQUALS(cd[0].shapeB, box)) ||
			            (IB_ID_EQUALS(cd[0].shapeA, box) && IB_ID_EQUALS(cd[0].shapeB, s)));
			assert_true(fabs(cd[0].points[0].separation) <= eps);
			printf("%-28s t_contact %.9f s (analytic %.9f, |dt| %.2e s; bound eps/v %.2e s), %d re-simulations, "
			       "separation %.2e m\n",
			       name, found, tc, fabs(found - tc), eps / (v0 + g * tc), st.toiIterations,
			       cd[0].points[0].separation);
		}
		t += h;
		++steps;
	}
	assert_true(found >= 0.0);
	double speed = v0 + g * tc;
	assert_true(fabs(found - tc) <= 1.001 * eps / speed + 1e-12);
	ibDestroyWorld(w);
}

static void test_drop_interpolation(void** st)
{
	(void)st;
	drop(IB_TOI_INTERPOLATION, false, "interpolation");
}
static void test_drop_bisection(void** st)
{
	(void)st;
	drop(IB_TOI_BISECTION, false, "bisection");
}
static void test_drop_interpolation_ca(void** st)
{
	(void)st;
	drop(IB_TOI_INTERPOLATION, true, "interpolation + CA");
}
static void test_drop_bisection_ca(void** st)
{
	(void)st;
	drop(IB_TOI_BISECTION, true, "bisection + CA");
}

/* TOI off: the step that reaches the box ends penetrating deeper than eps_c (what the search prevents) */
static void test_drop_off(void** st)
{
	(void)st;
	const double h = 1.0 / 60.0;
	ibWorldId w = make_world(ibV3(0, 0, -9.81), IB_TOI_OFF, false);
	ibShapeId boxShape = add_static_box(w, ibV3(0, 0, -0.01), ibV3(1, 1, 0.01));
	ibBodyId b;
	add_sphere(w, ibV3(0.1, -0.2, 1.0), ibV3(0, 0, -2.0), 0.1, &b);
	ibShapeId shapes[1];
	ibBody_GetShapes(b, shapes, 1);
	double deepest = 0.0;
	for (int i = 0; i < 40; ++i) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibCollisionStats cs = ibWorld_GetCollisionStats(w);
		assert_true(cs.firstToi < 0.0);
		ibDistanceOutput d;
		assert_int_equal(ibShape_Distance(shapes[0], boxShape, &d), IB_OK);
		if (-d.distance > deepest) deepest = -d.distance;
	}
	assert_true(deepest > 1e-3);
	ibDestroyWorld(w);
}

/* a bullet: a 5 cm sphere at 1000 m/s, h = 1/60 (16.7 m per step), wall 1 cm thick at x = 0 */
static void bullet(bool ca, ibToiMode mode)
{
	const double v = 1000.0, r = 0.05, half = 0.005, x0 = -1.0, eps = 1e-4, h = 1.0 / 60.0;
	ibWorldId w = make_world(ibV3(0, 0, 0), mode, ca);
	ibShapeId wall = add_static_box(w, ibV3(0, 0, 0), ibV3(half, 1, 1));
	ibBodyId b;
	ibShapeId s = add_sphere(w, ibV3(x0, 0.1, 0.2), ibV3(v, 0, 0), r, &b);
	double tc = (-half - r - x0) / v;
	assert_int_equal(ibWorld_Step(w, h), IB_OK);
	ibCollisionStats cs = ibWorld_GetCollisionStats(w);
	ibContactEvents ev = ibWorld_GetContactEvents(w);
	if (!ca) {
		/* the discrete test sees nothing: the sphere is 15.7 m behind the wall */
		assert_true(cs.firstToi < 0.0);
		assert_int_equal(ev.beginCount, 0);
		assert_true(ibBody_GetPosition(b).x > 10.0);
		ibDestroyWorld(w);
		return;
	}
	printf("bullet (%s): t_contact %.9f s (analytic %.9f s, |dt| %.2e s), %d CA, %d re-simulations\n",
	       mode == IB_TOI_BISECTION ? "bisection" : "interpolation", cs.firstToi, tc, fabs(cs.firstToi - tc),
	       cs.caEvents, cs.toiIterations);
	assert_true(cs.caEvents >= 1);
	assert_true(fabs(cs.firstToi - tc) <= 1.001 * eps / v);
	/* stopped at first contact: the detection at the time of contact holds the pair within eps_c, the
	 * sphere on the near side of the wall */
	ibContactData cd[4];
	assert_int_equal(ibWorld_GetContacts(w, cd, 4), 1);
	assert_true(fabs(cd[0].points[0].separation) <= eps);
	ibVec3 onSphere = IB_ID_EQUALS(cd[0].shapeA, s) ? cd[0].points[0].pointA : cd[0].points[0].pointB;
	assert_true(fabs(onSphere.x - (-half)) <= eps);
	assert_int_equal(ev.beginCount, 1);
	assert_true((IB_ID_EQUALS(ev.beginEvents[0].shapeA, s) && IB_ID_EQUALS(ev.beginEvents[0].shapeB, wall)) ||
	            (IB_ID_EQUALS(ev.beginEvents[0].shapeA, wall) && IB_ID_EQUALS(ev.beginEvents[0].shapeB, s)));
	ibDestroyWorld(w);
}

static void test_bullet(void** st)
{
	(void)st;
	bullet(true, IB_TOI_INTERPOLATION);
	bullet(true, IB_TOI_BISECTION);
	bullet(true, IB_TOI_OFF); /* conservative advancement alone */
}

static void test_bullet_without_ca_tunnels(void** st)
{
	(void)st;
	bullet(false, IB_TOI_INTERPOLATION);
}

/* a spinning thin rod (capsule) passing next to a post: angular motion x radius enters the bound */
static void test_spinning(void** st)
{
	(void)st;
	const double eps = 1e-4, h = 1.0 / 60.0;
	ibWorldId w = make_world(ibV3(0, 0, 0), IB_TOI_INTERPOLATION, true);
	ibShapeId post = add_static_box(w, ibV3(0.0, 0.8, 0), ibV3(0.005, 0.005, 1)); /* 1 cm post at y = 0.8 */
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	const double omega = 20.0; /* 0.33 rad per step: the tip moves 33 cm past a 1 cm post */
	bd.angularVelocity = ibV3(0, 0, omega);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibCapsule c = {0.01, 1.0};
	ibShapeId rod = ibCreateCapsuleShape(b, &sd, &c);
	assert_false(IB_IS_NULL(rod));
	/* the capsule's axis is the body z axis: turn it into x; it spins about z towards +y */
	ibBody_SetTransform(b, ibV3(0, 0, 0), ibQuatNormalize((ibQuat){1, 0, 1, 0})); /* z -> x */
	double t0 = 0.0;
	ibCollisionStats cs;
	for (int i = 0; i < 10; ++i) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		cs = ibWorld_GetCollisionStats(w);
		if (cs.firstToi >= 0.0) break;
		t0 += h;
	}
	cs.firstToi += t0;
	printf("spinning rod: firstToi %g s, %d sub-steps, %d CA, %d re-simulations, %d contacts\n", cs.firstToi,
	       cs.toiSubsteps, cs.caEvents, cs.toiIterations, ibWorld_GetContactCount(w));
	assert_true(cs.firstToi >= 0.0);
	ibContactData cd[4];
	assert_int_equal(ibWorld_GetContacts(w, cd, 4), 1);
	assert_true(fabs(cd[0].points[0].separation) <= eps);
	/* analytic: the rod axis (cos a, sin a) comes within the rod radius of the post's corner (0.005, 0.795):
	 * 0.795 cos a - 0.005 sin a = 0.01, a = 200 t (rotation about a principal axis, no torque) */
	double lo = 0.0, hi = 1.5707963267948966;
	for (int k = 0; k < 200; ++k) {
		double m = 0.5 * (lo + hi);
		if (0.795 * cos(m) - 0.005 * sin(m) > 0.01) lo = m;
		else hi = m;
	}
	double tc = lo / omega;
	printf("spinning rod: analytic %.9f s, |dt| %.2e s (bound eps/(w r) %.2e s)\n", tc, fabs(cs.firstToi - tc),
	       eps / (omega * 0.795));
	assert_true(fabs(cs.firstToi - tc) <= 1.01 * eps / (omega * 0.795));
	(void)post;
	ibDestroyWorld(w);
}

/* the step with detection and TOI allocates nothing once warm: 200 spheres flying through each other and
 * past static walls (zero gravity, periodic wrap-around by teleports), counting allocator hooks */
static size_t g_allocs;
static void* count_alloc(size_t n, void* ctx)
{
	(void)ctx;
	++g_allocs;
	return malloc(n);
}
static void* count_realloc(void* p, size_t o, size_t n, void* ctx)
{
	(void)o, (void)ctx;
	++g_allocs;
	return realloc(p, n);
}
static void count_free(void* p, size_t n, void* ctx)
{
	(void)n, (void)ctx;
	free(p);
}

static void test_no_allocation_when_warm(void** st)
{
	(void)st;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	wd.allocFn = count_alloc;
	wd.reallocFn = count_realloc;
	wd.freeFn = count_free;
	wd.solver.contact.enabled = false; /* detection and TOI only: with contact resolution the motion is not periodic */
	ibWorldId w = ibCreateWorld(&wd);
	enum { N = 200 };
	ibBodyId b[N];
	uint64_t rng = 5;
	for (int i = 0; i < N; ++i) {
		double u[6];
		for (int k = 0; k < 6; ++k) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			u[k] = (double)(rng >> 11) / 9007199254740992.0;
		}
		/* velocities are multiples of 3 m/s = 10 m per 200 steps: steps 200-399 repeat steps 0-199 */
		ibVec3 v = ibV3(3.0 * floor(5 * u[3] - 2.5), 3.0 * floor(5 * u[4] - 2.5), 3.0 * floor(13 * u[5] - 6.5));
		add_sphere(w, ibV3(10 * u[0], 10 * u[1], 10 * u[2]), v, 0.2, &b[i]);
	}
	for (int i = 0; i < 10; ++i) add_static_box(w, ibV3(i, 5, 5), ibV3(0.005, 5, 5));
	int toi = 0;
	for (int step = 0; step < 400; ++step) {
		if (step == 200) g_allocs = 0;
		assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
		toi += ibWorld_GetCollisionStats(w).toiSubsteps;
		for (int i = 0; i < N; ++i) { /* wrap around the 10 m cube */
			ibVec3 p = ibBody_GetPosition(b[i]), q = p;
			q.x = p.x - 10.0 * floor(p.x / 10.0);
			q.y = p.y - 10.0 * floor(p.y / 10.0);
			q.z = p.z - 10.0 * floor(p.z / 10.0);
			if (q.x != p.x || q.y != p.y || q.z != p.z) ibBody_SetTransform(b[i], q, IB_QUAT_IDENTITY);
		}
	}
	printf("200 spheres, 400 steps: %d TOI sub-steps, %zu allocations in steps 200-399\n", toi, g_allocs);
	assert_true(toi > 10);
	assert_int_equal(g_allocs, 0);
	ibDestroyWorld(w);
}

/* a fast kinematic paddle (1 cm thick, 300 m/s) towards a resting dynamic box: stopped at first contact */
static void test_kinematic_paddle(void** st)
{
	(void)st;
	const double eps = 1e-4, v = 300.0;
	ibWorldId w = make_world(ibV3(0, 0, 0), IB_TOI_INTERPOLATION, true);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_KINEMATIC;
	bd.position = ibV3(-2, 0, 0);
	bd.linearVelocity = ibV3(v, 0, 0);
	ibBodyId k = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox paddle = {ibV3(0.005, 0.5, 0.5)};
	ibCreateBoxShape(k, &sd, &paddle);
	bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	ibBodyId d = ibCreateBody(w, &bd);
	ibBox box = {ibV3(0.1, 0.1, 0.1)};
	ibCreateBoxShape(d, &sd, &box);
	assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
	ibCollisionStats cs = ibWorld_GetCollisionStats(w);
	double tc = (2.0 - 0.1 - 0.005) / v;
	printf("kinematic paddle: t_contact %.9f s (analytic %.9f s)\n", cs.firstToi, tc);
	assert_true(fabs(cs.firstToi - tc) <= 1.001 * eps / v);
	assert_int_equal(ibWorld_GetContactCount(w), 1);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_drop_interpolation), cmocka_unit_test(test_drop_bisection),
	    cmocka_unit_test(test_drop_interpolation_ca), cmocka_unit_test(test_drop_bisection_ca),
	    cmocka_unit_test(test_drop_off),          cmocka_unit_test(test_bullet),
	    cmocka_unit_test(test_bullet_without_ca_tunnels), cmocka_unit_test(test_spinning),
	    cmocka_unit_test(test_kinematic_paddle), cmocka_unit_test(test_no_allocation_when_warm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
