/* Momentum and energy of soft–rigid collisions (issue 7 part 3), without gravity: every contact
 * impulse acts as +P on the soft points (split by the weights, which sum to 1) and -P on the body,
 * so the total linear momentum (ibWorld_ComputeInvariants, particles included) stays what it was
 * to rounding; the contacts are inelastic (e = 0), so the kinetic energy never grows.
 *  - a free tetrahedral soft cube at 1 m/s hits a free rigid box off-centre (vertex contacts,
 *    friction): momentum to 1e-12 relative in every step, the box takes up momentum and spin;
 *  - a free coarse cloth at 1 m/s falls flat onto a free small sphere (face contacts inside a
 *    triangle): momentum the same, the sphere is pushed along (two-way) and stays outside every
 *    triangle. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "contact_test_util.h"
#include "ibdyn/ibdyn.h"
#include "soft_contact_util.h"
#include "soft_test_util.h"

#define EPS_C 1e-4
#define EPS_D 1e-6

typedef struct Watch {
	ibVec3 p0;
	double e0, dp, de;
} Watch;

static void watch_begin(ibWorldId w, Watch* x)
{
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	x->p0 = inv.linearMomentum;
	x->e0 = inv.kineticEnergy;
	x->dp = 0.0;
	x->de = -INFINITY;
}

static void watch_step(ibWorldId w, Watch* x)
{
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	x->dp = fmax(x->dp, ibLength(ibSub(inv.linearMomentum, x->p0)) / ibLength(x->p0));
	x->de = fmax(x->de, (inv.kineticEnergy - x->e0) / x->e0);
}

static void test_soft_cube_hits_free_box(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	ibWorld_SetGravity(w, ibV3(0, 0, 0));
	const double a = 0.2, h = 0.005;
	ibVec3 v[8];
	ibSoftBodyDef sd = sc_tet_cube_def(v, ibV3(-0.4, 0, 0), a, IB_QUAT_IDENTITY, 1e-4);
	sd.volumeCompliance = 0.0; /* hard volume rows, no damping: momentum and energy are checked */
	sd.linearDamping = 0.0;
	sd.positionTolerance = 1e-8;
	sd.linearVelocity = ibV3(1.0, 0, 0);
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.1, 0.1, 0.0); /* off-centre: the hit also spins the box */
	ibBodyId box = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.mass = 1.0;
	shd.material = ct_mat(0.0, 0.3, 0.3);
	ibBox bx = {{0.1, 0.1, 0.1}};
	ibCreateBoxShape(box, &shd, &bx);
	Watch x;
	watch_begin(w, &x);
	for (int s = 0; s < 200; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		watch_step(w, &x);
	}
	ibVec3 vb = ibBody_GetLinearVelocity(box), pb = vb; /* 1 kg */
	double spin = ibLength(ibBody_GetAngularVelocity(box));
	ibVec3 ps = ibSoftBody_GetLinearMomentum(sb);
	print_message("cube-box: momentum error %.2g (relative), energy change %.3g (relative), box v %.3f %.3f m/s, "
	              "spin %.3f rad/s, cube momentum x %.3f\n",
	              x.dp, x.de, vb.x, vb.y, spin, ps.x);
	assert_true(x.dp < 1e-12);
	assert_true(x.de < 1e-9);          /* inelastic: never more kinetic energy */
	assert_true(pb.x > 0.2 && ps.x < 0.7); /* the box was hit (0.8 kg m/s in the cube before) */
	assert_true(spin > 0.1);
	ibDestroyWorld(w);
}

static void test_cloth_hits_free_sphere(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	ibWorld_SetGravity(w, ibV3(0, 0, 0));
	const double h = 0.005, r = 0.05;
	SoftGrid g = soft_grid(2, 1.0, ibV3(-0.5, -0.5, 0.1), ibV3(1, 0, 0), ibV3(0, 1, 0));
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = g.v;
	sd.vertexCount = g.nv;
	sd.triangles = g.t;
	sd.triangleCount = g.nt;
	sd.density = 0.2;
	sd.stretchCompliance = 1e-3;
	sd.bendingCompliance = 10.0;
	sd.positionTolerance = 1e-8;
	sd.linearVelocity = ibV3(0, 0, -1.0);
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(-0.12, -0.36, 0.0); /* under the inside of triangle (0, 1, 4) */
	ibBodyId ball = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.mass = 0.05;
	shd.material = ct_mat(0.0, 0.3, 0.3);
	ibSphere sp = {r};
	ibCreateSphereShape(ball, &shd, &sp);
	Watch x;
	watch_begin(w, &x);
	double dmin = INFINITY;
	for (int s = 0; s < 100; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		watch_step(w, &x);
		ibVec3 c = ibBody_GetPosition(ball);
		for (int t = 0; t < g.nt; ++t) dmin = fmin(dmin, soft_triangle_distance(sb, g.t + 3 * t, c) - r);
	}
	ibVec3 vb = ibBody_GetLinearVelocity(ball);
	print_message("cloth-sphere: momentum error %.2g (relative), energy change %.3g, sphere v z %.3f m/s, min distance "
	              "sphere-triangles %.3g m\n",
	              x.dp, x.de, vb.z, dmin);
	assert_true(x.dp < 1e-12);
	assert_true(x.de < 1e-9);
	assert_true(vb.z < -0.2);                  /* pushed along by the cloth (0.2 kg at 1 m/s) */
	assert_true(dmin >= -(EPS_D + EPS_C));     /* did not pass through the triangle */
	soft_grid_free(&g);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_soft_cube_hits_free_box),
	    cmocka_unit_test(test_cloth_hits_free_sphere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
