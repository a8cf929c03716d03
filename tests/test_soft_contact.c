/* Contact of soft vertices with rigid shapes (issue 7 part 3): a tetrahedral soft cube dropped on a
 * static ground box rests without sinking more than eps_d + eps_c; a cloth draped over a static
 * sphere keeps every vertex outside it; a particle sliding on a tilted box decelerates as Coulomb's
 * law says, a = g (sin theta - mu_d cos theta); a light rigid box resting on a cloth pinned at its
 * corners pushes it down (two-way) and is carried by it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact_test_util.h"
#include "ibdyn/ibdyn.h"
#include "soft_contact_util.h"
#include "soft_test_util.h"

#define EPS_C 1e-4
#define EPS_D 1e-6

static ibWorldId world(void) { return ct_world_v(EPS_C, EPS_D, 1e-8); }

static void test_cube_rests_on_ground(void** state)
{
	(void)state;
	ibWorldId w = world();
	ct_ground(w, 0.0, ct_mat(0.0, 0.5, 0.5));
	const double a = 0.2, h = 0.005, z0 = 0.1;
	ibQuat q = ibQuatFromAxisAngle(ibNormalize(ibV3(1, 1, 0)), 0.2); /* one corner lands first */
	ibVec3 v[8];
	ibSoftBodyDef sd = sc_tet_cube_def(v, ibV3(0, 0, z0 + a), a, q, 1e-4);
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	const int steps = 600; /* 3 s: lands at ~0.15 s, rests for the last 1 s checked */
	double zmin = 1.0, zmaxLow = -1.0, vmax = 0.0;
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		if (s < steps - 200) continue;
		double lo = 1.0;
		for (int i = 0; i < 8; ++i) {
			ibVec3 x = ibSoftBody_GetPosition(sb, i);
			zmin = fmin(zmin, x.z);
			lo = fmin(lo, x.z);
			vmax = fmax(vmax, ibLength(ibSoftBody_GetVelocity(sb, i)));
		}
		zmaxLow = fmax(zmaxLow, lo);
	}
	assert_true(zmin >= -(EPS_D + EPS_C));
	assert_true(zmaxLow <= EPS_C + 1e-3); /* it does rest on the ground (not hovering) */
	assert_true(vmax < 0.05);             /* resting: end-of-step speeds are ~g h */
	ibDestroyWorld(w);
}

static void test_cloth_over_sphere(void** state)
{
	(void)state;
	ibWorldId w = world();
	const double R = 0.5, h = 0.005;
	ibBodyDef bd = ibDefaultBodyDef();
	ibBodyId ball = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.material = ct_mat(0.0, 0.4, 0.4);
	ibSphere sph = {R};
	ibCreateSphereShape(ball, &shd, &sph);
	SoftGrid g = soft_grid(10, 1.2, ibV3(-0.6, -0.6, R + 0.05), ibV3(1, 0, 0), ibV3(0, 1, 0));
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = g.v;
	sd.vertexCount = g.nv;
	sd.triangles = g.t;
	sd.triangleCount = g.nt;
	sd.density = 0.2;
	sd.stretchCompliance = 1e-3;
	sd.bendingCompliance = 1.0;
	sd.linearDamping = 0.2;
	sd.positionTolerance = 1e-6;
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	double dmin = 1.0, tmin = 1.0;
	for (int s = 0; s < 300; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		for (int i = 0; i < g.nv; ++i) dmin = fmin(dmin, ibLength(ibSoftBody_GetPosition(sb, i)));
		double tstep = 1.0;
		for (int t = 0; t < g.nt; ++t)
			tstep = fmin(tstep, soft_triangle_distance(sb, g.t + 3 * t, IB_VEC3_ZERO));
		if (getenv("SC_TRACE") && tstep < R - 1e-5) print_message("step %d tri depth %g\n", s, R - tstep);
		tmin = fmin(tmin, tstep);
	}
	assert_true(dmin >= R - (EPS_D + EPS_C));
	/* draped: the centre lies on the top, the rim hangs below it */
	ibVec3 c = ibSoftBody_GetPosition(sb, 5 * 11 + 5);
	print_message("vertex depth %.3g m, triangle depth %.3g m, centre vertex %.4f m above the sphere\n", R - dmin, R - tmin,
	              ibLength(c) - R);
	assert_true(tmin >= R - (EPS_D + EPS_C)); /* no triangle cuts into the sphere (face contacts) */
	/* on the top: the triangles (12 cm) touch the sphere inside, so the vertices stand off by about
	 * the sagitta of a triangle, (6 cm)^2 / (2 R) = 3.6 mm, up to twice that at the corners */
	assert_true(ibLength(c) - R > 0.0 && ibLength(c) - R < 1e-2 && c.z > 0.49);
	assert_true(ibSoftBody_GetPosition(sb, 0).z < 0.3);
	soft_grid_free(&g);
	ibDestroyWorld(w);
}

static void test_particle_slides_coulomb(void** state)
{
	(void)state;
	ibWorldId w = world();
	const double th = 20.0 * IB_PI / 180.0, mu = 0.5, v0 = 1.0, h = 0.002, gz = 9.81;
	ct_ground(w, th, ct_mat(0.0, 0.6, mu));
	ibVec3 t = ibV3(cos(th), 0, -sin(th)), n = ibV3(sin(th), 0, cos(th));
	ibVec3 x0 = ibV3(0, 0, 0);
	double m = 0.1;
	ibSoftBodyId sb = sc_particle(w, x0, m);
	assert_true(ibSoftBody_IsValid(sb));
	ibSoftBody_SetVelocity(sb, 0, ibScale(v0, t));
	const double acc = gz * (sin(th) - mu * cos(th)); /* < 0: decelerates */
	double err = 0.0, gap = 0.0;
	int steps = (int)(0.5 / h);
	for (int s = 1; s <= steps; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibVec3 x = ibSoftBody_GetPosition(sb, 0);
		double time = s * h;
		double along = ibDot(x, t), expect = v0 * time + 0.5 * acc * time * time;
		err = fmax(err, fabs(along - expect));
		gap = fmax(gap, fabs(ibDot(x, n)));
	}
	/* distance slid within 1e-3 of Coulomb's law (about 0.35 m), and on the surface */
	assert_true(err < 1e-3);
	assert_true(gap <= EPS_C + EPS_D);
	/* the velocity at the end follows the same law (end-of-step velocities lag by g h / 2) */
	double vt = ibDot(ibSoftBody_GetVelocity(sb, 0), t);
	assert_true(fabs(vt - (v0 + acc * steps * h)) < 0.02);
	ibDestroyWorld(w);
}

/* A cloth pinned at its corners, alone or with a light box (50 g on 100 g of cloth) put on its
 * centre; returns the sag of the centre vertex after 2 s. */
typedef struct BoxOut {
	double z, v, tilt, dmin, gapCentre;
} BoxOut;

static double pinned_cloth(bool withBox, BoxOut* out)
{
	ibWorldId w = world();
	const double h = 0.005, half = 0.12;
	SoftGrid g = soft_grid(10, 1.0, ibV3(-0.5, -0.5, 0.0), ibV3(1, 0, 0), ibV3(0, 1, 0));
	int pins[4] = {0, 10, 110, 120};
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = g.v;
	sd.vertexCount = g.nv;
	sd.triangles = g.t;
	sd.triangleCount = g.nt;
	sd.density = 0.1;
	sd.stretchCompliance = 1e-3;
	sd.bendingCompliance = 1.0;
	sd.linearDamping = 3.0;
	sd.pinned = pins;
	sd.pinnedCount = 4;
	sd.positionTolerance = 1e-6;
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	ibBodyId box = {0};
	ibShapeId bs = {0};
	if (withBox) {
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(0, 0, half + 0.5 * EPS_C);
		bd.linearDamping = 3.0;
		bd.angularDamping = 3.0;
		box = ibCreateBody(w, &bd);
		ibShapeDef shd = ibDefaultShapeDef();
		shd.mass = 0.05;
		shd.material = ct_mat(0.0, 0.5, 0.5);
		ibBox bx = {{half, half, half}};
		bs = ibCreateBoxShape(box, &shd, &bx);
	}
	double dmin = 1.0;
	for (int s = 0; s < 400; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		for (int i = 0; withBox && i < g.nv; ++i) { /* no vertex inside the box */
			ibDistanceOutput o;
			assert_int_equal(ibShape_ClosestPoint(bs, ibSoftBody_GetPosition(sb, i), &o), IB_OK);
			dmin = fmin(dmin, o.distance);
		}
	}
	double sag = -ibSoftBody_GetPosition(sb, 60).z;
	if (withBox) {
		out->z = ibBody_GetPosition(box).z;
		out->v = ibLength(ibBody_GetLinearVelocity(box));
		ibQuat q = ibBody_GetRotation(box);
		out->tilt = 2.0 * asin(fmin(1.0, sqrt(q.x * q.x + q.y * q.y + q.z * q.z)));
		out->dmin = dmin;
		out->gapCentre = (out->z - half) + sag;
	}
	soft_grid_free(&g);
	ibDestroyWorld(w);
	return sag;
}

static void test_box_on_pinned_cloth(void** state)
{
	(void)state;
	BoxOut b = {0};
	double sag0 = pinned_cloth(false, NULL);
	double sag1 = pinned_cloth(true, &b);
	print_message("sag without box %.4f m, with %.4f m, min vertex-box %.3g m, box bottom above centre vertex %.3g m\n", sag0,
	              sag1, b.dmin, b.gapCentre);
	assert_true(sag1 > sag0 + 0.01);          /* the box's weight pushes the cloth down */
	assert_true(b.dmin >= -(EPS_D + EPS_C));  /* no vertex passes into the box */
	/* lowered with the cloth: its bottom face rests on the cloth's triangles (face contacts at the
	 * bottom edges, where the cloth is pressed most), the centre vertex hangs a little below it */
	assert_true(b.gapCentre > -(EPS_D + EPS_C) && b.gapCentre < 5e-3);
	assert_true(b.tilt < 0.01 && b.v < 0.1); /* level, (nearly) at rest */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cube_rests_on_ground),
	    cmocka_unit_test(test_cloth_over_sphere),
	    cmocka_unit_test(test_particle_slides_coulomb),
	    cmocka_unit_test(test_box_on_pinned_cloth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
