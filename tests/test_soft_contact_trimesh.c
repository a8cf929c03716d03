/* Particles against static triangle meshes (issue 7 part 3): the closest point of the nearest
 * triangle of the mesh's tree gives the contact, one-sided since session 23 (over a face the signed
 * distance along its normal; off the faces only from the front).
 *  - a particle sliding at 1 m/s down a 20° slope made of a 6 x 6 grid of triangles with
 *    mu_d = 0.5 crosses triangle edges and follows Coulomb's law, distance v0 t + a t²/2 with
 *    a = g (sin θ − mu_d cos θ), within 1e-3 m over 0.5 s, on the surface (|gap| <= eps_c + eps_d);
 *  - a particle 0.05 mm behind a horizontal mesh comes out through the face and rests on it;
 *  - a tetrahedral soft cube dropped tilted onto a flat trimesh ground rests on it: every vertex
 *    above −(eps_d + eps_c) in every step, the lowest within eps_c + 1 mm of the ground at the end,
 *    and it does not move over the last second. */
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

/* Static trimesh: the grid of soft_grid (n x n cells of size x size in the plane through o spanned
 * by u, v) on a static body at the origin. */
static ibShapeId mesh_ground(ibWorldId w, int n, double size, ibVec3 o, ibVec3 u, ibVec3 v, ibMaterial m)
{
	SoftGrid g = soft_grid(n, size, o, u, v);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_STATIC;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.material = m;
	ibMesh mesh = {g.v, g.nv, g.t, g.nt};
	ibShapeId s = ibCreateTriMeshShape(b, &shd, &mesh);
	soft_grid_free(&g);
	return s;
}

static void test_particle_slides_on_trimesh(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	const double th = 20.0 * IB_PI / 180.0, mu = 0.5, v0 = 1.0, h = 0.002, gz = 9.81;
	ibVec3 t = ibV3(cos(th), 0, -sin(th)), n = ibV3(sin(th), 0, cos(th)), y = ibV3(0, 1, 0);
	/* 6 x 6 cells of 0.2 m (triangle edges every 0.2 m along the path), normal t x y = n */
	ibShapeId s = mesh_ground(w, 6, 1.2, ibAdd(ibScale(-0.3, t), ibScale(-0.6, y)), t, y, ct_mat(0.0, 0.6, mu));
	assert_true(ibShape_IsValid(s));
	ibVec3 x0 = ibV3(0, 0.05, 0);
	double m = 0.1;
	ibSoftBodyId sb = sc_particle(w, x0, m);
	assert_true(ibSoftBody_IsValid(sb));
	ibSoftBody_SetVelocity(sb, 0, ibScale(v0, t));
	const double acc = gz * (sin(th) - mu * cos(th));
	double err = 0.0, gap = 0.0;
	int steps = (int)(0.5 / h);
	for (int k = 1; k <= steps; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibVec3 x = ibSoftBody_GetPosition(sb, 0);
		double time = k * h;
		err = fmax(err, fabs(ibDot(ibSub(x, x0), t) - (v0 * time + 0.5 * acc * time * time)));
		gap = fmax(gap, fabs(ibDot(x, n)));
	}
	double slid = ibDot(ibSub(ibSoftBody_GetPosition(sb, 0), x0), t);
	print_message("slid %.4f m (over %d grid lines), error against Coulomb %.3g m, max |gap| %.3g m\n", slid,
	              (int)((slid + 0.3) / 0.2) - 1, err, gap);
	assert_true(slid > 0.3);
	assert_true(err < 1e-3);
	assert_true(gap <= EPS_C + EPS_D);
	ibDestroyWorld(w);
}

/* One-sided (since session 23, as for rigid shapes): a particle 0.05 mm behind a horizontal mesh (within its
 * contact reach), at rest under gravity, is pushed back out through the face and rests on it. Seen two-sided
 * it was 0.05 mm from the face's back, fell away and was 1.2 m below after 0.5 s. */
static void test_particle_behind_trimesh_comes_out(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	const double h = 0.002;
	ibShapeId s = mesh_ground(w, 4, 1.0, ibV3(-0.5, -0.5, 0), ibV3(1, 0, 0), ibV3(0, 1, 0), ct_mat(0.0, 0.5, 0.5));
	assert_true(ibShape_IsValid(s));
	ibVec3 x0 = ibV3(0.13, 0.07, -5e-5);
	double m = 0.1;
	ibSoftBodyId sb = sc_particle(w, x0, m);
	assert_true(ibSoftBody_IsValid(sb));
	double lowest = 0.0;
	for (int k = 0; k < 250; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		lowest = fmin(lowest, ibSoftBody_GetPosition(sb, 0).z);
	}
	ibVec3 x = ibSoftBody_GetPosition(sb, 0);
	print_message("particle behind the mesh: z = %.3g m after 0.5 s, lowest %.3g m\n", x.z, lowest);
	assert_true(x.z >= -(EPS_C + EPS_D) && x.z <= EPS_C);
	assert_true(lowest >= -5e-5 - 1e-9);
	assert_true(ibLength(ibSoftBody_GetVelocity(sb, 0)) < 1e-3);
	ibDestroyWorld(w);
}

static void test_soft_cube_rests_on_trimesh(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	mesh_ground(w, 4, 2.0, ibV3(-1, -1, 0), ibV3(1, 0, 0), ibV3(0, 1, 0), ct_mat(0.0, 0.5, 0.5));
	const double a = 0.2, h = 0.005, z0 = 0.1;
	ibQuat q = ibQuatFromAxisAngle(ibNormalize(ibV3(1, 1, 0)), 0.2);
	ibVec3 v[8];
	ibSoftBodyDef sd = sc_tet_cube_def(v, ibV3(0.5, 0.02, z0 + a), a, q, 1e-5); /* over a triangle edge of the grid */
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	double zmin = 1.0, lo = 1.0;
	ibVec3 c1 = {0};
	const int steps = 600;
	for (int k = 0; k < steps; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		lo = 1.0;
		for (int i = 0; i < 8; ++i) {
			ibVec3 x = ibSoftBody_GetPosition(sb, i);
			assert_true(ibVec3_IsFinite(x));
			zmin = fmin(zmin, x.z);
			lo = fmin(lo, x.z);
		}
		if (k == steps - (int)(1.0 / h)) c1 = ibSoftBody_GetPosition(sb, 7);
	}
	double drift = ibLength(ibSub(ibSoftBody_GetPosition(sb, 7), c1));
	print_message("min vertex z %.3g m, lowest vertex at the end %.3g m, drift over the last 1 s %.3g m\n", zmin, lo, drift);
	assert_true(zmin >= -(EPS_D + EPS_C));
	assert_true(lo <= EPS_C + 1e-3);
	assert_true(drift < 1e-4);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_particle_slides_on_trimesh),
	    cmocka_unit_test(test_particle_behind_trimesh_comes_out),
	    cmocka_unit_test(test_soft_cube_rests_on_trimesh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
