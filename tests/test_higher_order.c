/* Higher-order methods (§3.4): observed convergence order of the position after 1 s of a hinge
 * pendulum and a 3-link hinge chain, from three step sizes, against a reference run (order 6 at a
 * tiny step). The thesis observed O(h^3) for all its higher-order schemes (§3.4.4); we reach the
 * same: order 1 -> global order 2, orders 4 and 6 -> 3 (with smaller error constants), order 2 -> 2
 * on the chain. Asserted: those orders within 0.15 and the error ranking. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"

static ibVec3 run(int order, double h, int links)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.order = order;
	wd.solver.positionTolerance = wd.solver.angularTolerance = wd.solver.velocityTolerance = 1e-13;
	wd.solver.maxPositionIterations = wd.solver.maxVelocityIterations = 100000;
	wd.solver.maxStepSubdivisions = 0;
	wd.solver.warmStart = false;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId prev = ibCreateBody(w, &gd);
	for (int i = 0; i < links; ++i) {
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(0.5 + i, 0, 0); /* released horizontally */
		ibBodyId b = ibCreateBody(w, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		ibBox bx = {{0.5, 0.05, 0.05}};
		assert_true(ibShape_IsValid(ibCreateBoxShape(b, &sd, &bx)));
		ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
		jd.bodyA = prev;
		jd.bodyB = b;
		assert_int_equal(ibJointDef_SetWorldFrame(&jd, ibV3(i, 0, 0), ibV3(0, 1, 0)), IB_OK);
		assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
		prev = b;
	}
	int n = (int)lround(1.0 / h);
	for (int k = 0; k < n; ++k) assert_int_equal(ibWorld_Step(w, h), IB_OK);
	ibVec3 p = ibBody_GetWorldCenterOfMass(prev);
	ibDestroyWorld(w);
	return p;
}

static void orders(int links, const double expect[4], double errAt100[4])
{
	static const int ord[4] = {1, 2, 4, 6};
	ibVec3 ref = run(6, 1.0 / 3200.0, links);
	for (int o = 0; o < 4; ++o) {
		double e[3];
		for (int i = 0; i < 3; ++i) e[i] = ibDistance(run(ord[o], 1.0 / (100.0 * (1 << i)), links), ref);
		double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
		print_message("%d link(s), order %d: errors %.3e %.3e %.3e (h = 1/100, 1/200, 1/400), observed order %.2f %.2f\n",
		              links, ord[o], e[0], e[1], e[2], p1, p2);
		if (expect[o] > 0) {
			assert_true(fabs(p2 - expect[o]) <= 0.15);
		}
		errAt100[o] = e[0];
	}
}

static void test_pendulum_orders(void** state)
{
	(void)state;
	const double expect[4] = {2.0, -1.0 /* erratic on one link: cancellation */, 3.0, 3.0};
	double e[4];
	orders(1, expect, e);
	assert_true(e[2] < e[0] && e[3] < e[2]);
}

static void test_chain_orders(void** state)
{
	(void)state;
	const double expect[4] = {2.0, 2.0, 3.0, 3.0};
	double e[4];
	orders(3, expect, e);
	assert_true(e[1] < e[0] && e[2] < e[1] && e[3] < e[2]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_pendulum_orders), cmocka_unit_test(test_chain_orders)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
