/* A rigid body resting on soft vertices and on a rigid body at once (issue 7 leftover 4): a plank
 * lies across a tetrahedral soft cube and a rigid block of the same height, both on a static
 * ground. The particle contacts are solved in the soft sweeps and again in every sweep of the
 * rigid contact loop (soft_contact_loop.c), so over 2 s no soft vertex is inside the plank by more
 * than eps_d (measured 3e-9 m; 1.4e-5 m when the soft sweeps ended before the contact loop), none
 * inside the ground and the plank not inside the block by more than eps_d + eps_c, no NaN. */
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

static void test_plank_on_soft_cube_and_block(void** state)
{
	(void)state;
	ibWorldId w = ct_world_v(EPS_C, EPS_D, 1e-8);
	ct_ground(w, 0.0, ct_mat(0.0, 0.5, 0.5));
	const double a = 0.2, h = 0.005, gap = 0.5 * EPS_C;
	/* soft cube centred at x = -0.4, standing on the ground */
	ibVec3 v[8];
	ibSoftBodyDef sd = sc_tet_cube_def(v, ibV3(-0.4, 0, gap + 0.5 * a), a, IB_QUAT_IDENTITY, 1e-5);
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	/* rigid block at x = +0.4, same height */
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.4, 0, gap + 0.5 * a);
	ibBodyId block = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.mass = 2.0;
	shd.material = ct_mat(0.0, 0.5, 0.5);
	ibBox bb = {{0.5 * a, 0.5 * a, 0.5 * a}};
	ibCreateBoxShape(block, &shd, &bb);
	/* plank across both */
	const double t = 0.02;
	bd.position = ibV3(0, 0, 2 * gap + a + t);
	bd.linearDamping = 1.0;
	bd.angularDamping = 1.0;
	ibBodyId plank = ibCreateBody(w, &bd);
	shd.mass = 1.0;
	ibBox pb = {{0.6, 0.2, t}}; /* wider than the cube: vertex contacts only, the plank must cover them */
	ibShapeId ps = ibCreateBoxShape(plank, &shd, &pb);
	double dmin = 1.0, zmin = 1.0, blockPen = 0.0;
	for (int s = 0; s < 400; ++s) {
		ibResult r = ibWorld_Step(w, h);
		if (r != IB_OK) fail_msg("step %d: %s", s, ibWorld_GetLastError(w));
		for (int i = 0; i < 8; ++i) {
			ibVec3 x = ibSoftBody_GetPosition(sb, i);
			assert_true(ibVec3_IsFinite(x));
			ibDistanceOutput o;
			assert_int_equal(ibShape_ClosestPoint(ps, x, &o), IB_OK);
			dmin = fmin(dmin, o.distance);
			zmin = fmin(zmin, x.z);
		}
		/* plank bottom over the block's top: the plank's lowest point above the block centre */
		ibVec3 bc = ibBody_GetPosition(block);
		ibDistanceOutput o;
		assert_int_equal(ibShape_ClosestPoint(ps, ibAdd(bc, ibV3(0, 0, 0.5 * a)), &o), IB_OK);
		blockPen = fmin(blockPen, o.distance);
	}
	ibVec3 pp = ibBody_GetPosition(plank);
	print_message("min soft-plank distance %.3g m, min vertex z %.3g m, plank-block %.3g m, plank z %.4f\n", dmin,
	              zmin, blockPen, pp.z);
	assert_true(ibVec3_IsFinite(pp));
	assert_true(dmin >= -EPS_D); /* converged with the rigid contacts of the plank */
	assert_true(zmin >= -(EPS_D + EPS_C));
	assert_true(blockPen >= -(EPS_D + EPS_C));
	assert_true(fabs(pp.z - (a + t)) < 0.01); /* the plank rests on both (level within 1 cm) */
	ibQuat pq = ibBody_GetRotation(plank);
	assert_true(2.0 * asin(fmin(1.0, sqrt(pq.x * pq.x + pq.y * pq.y + pq.z * pq.z))) < 1e-3); /* level */
	assert_true(ibLength(ibBody_GetLinearVelocity(plank)) < 0.05);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_plank_on_soft_cube_and_block)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
