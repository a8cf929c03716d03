/* Soft-body physics against theory: the longitudinal mode of a mass-spring chain (compliant edge
 * rows) oscillates at omega_1 = 2 sqrt(k/m) sin(pi / (2 (N+1))); a hanging, damped cloth comes to
 * rest; linear and angular momentum of a free rigid body + cloth joined by the rigid–soft ball
 * joint (delta != 0): linear momentum to rounding, angular momentum to first order in h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "soft_test_util.h"

static ibWorldId make_world(ibVec3 g)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = g;
	return ibCreateWorld(&wd);
}

static void test_chain_frequency(void** state)
{
	(void)state;
	enum { N = 5 };
	const double k = 100.0, m = 1.0, L = 0.2, A = 0.01, h = 1e-3;
	ibWorldId w = make_world(IB_VEC3_ZERO);
	ibVec3 v[N + 2];
	double masses[N + 2];
	int edges[2 * (N + 1)], pins[2] = {0, N + 1};
	for (int i = 0; i < N + 2; ++i) {
		double u = (i == 0 || i == N + 1) ? 0.0 : A * sin(IB_PI * i / (N + 1)); /* mode 1 shape */
		v[i] = ibV3(L * i + u, 0, 0);
		masses[i] = m;
	}
	for (int i = 0; i <= N; ++i) edges[2 * i] = i, edges[2 * i + 1] = i + 1;
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = v;
	sd.vertexCount = N + 2;
	sd.edges = edges;
	sd.edgeCount = N + 1;
	sd.vertexMasses = masses;
	sd.pinned = pins;
	sd.pinnedCount = 2;
	sd.stretchCompliance = 1.0 / k;
	sd.positionTolerance = 1e-12;
	/* rest lengths are taken from the given vertices: build the chain at rest, then displace */
	ibVec3 rest[N + 2];
	for (int i = 0; i < N + 2; ++i) rest[i] = ibV3(L * i, 0, 0);
	sd.vertices = rest;
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	for (int i = 1; i <= N; ++i) assert_int_equal(ibSoftBody_SetPosition(sb, i, v[i]), IB_OK);
	const double omega = 2.0 * sqrt(k / m) * sin(IB_PI / (2.0 * (N + 1)));
	const int mid = (N + 1) / 2;
	double prev = ibSoftBody_GetPosition(sb, mid).x - L * mid, t = 0.0;
	double first = -1.0, last = -1.0;
	int crossings = 0;
	while (crossings < 6) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		t += h;
		double u = ibSoftBody_GetPosition(sb, mid).x - L * mid;
		if (prev < 0.0 && u >= 0.0) { /* upward zero crossing, linear interpolation */
			double tc = t - h * u / (u - prev);
			if (first < 0.0) first = tc;
			last = tc;
			++crossings;
		}
		prev = u;
		assert_true(fabs(ibSoftBody_GetPosition(sb, mid).y) < 1e-15); /* stays longitudinal */
	}
	double measured = 2.0 * IB_PI * (crossings - 1) / (last - first);
	print_message("chain: omega_1 = %.6f rad/s, measured %.6f (rel. error %.2e)\n", omega, measured, measured / omega - 1.0);
	assert_true(fabs(measured / omega - 1.0) < 1e-3);
	ibDestroyWorld(w);
}

static ibSoftBodyId make_cloth(ibWorldId w, int n, double size, ibVec3 origin, ibVec3 u, ibVec3 v, const int* pins,
                               int npins, double damping, double stretchCompliance, SoftGrid* g)
{
	*g = soft_grid(n, size, origin, u, v);
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = g->v;
	sd.vertexCount = g->nv;
	sd.triangles = g->t;
	sd.triangleCount = g->nt;
	sd.density = 0.2;
	sd.bending = IB_SOFT_BENDING_DIHEDRAL;
	sd.bendingCompliance = 1.0;
	sd.stretchCompliance = stretchCompliance;
	sd.pinned = pins;
	sd.pinnedCount = npins;
	sd.linearDamping = damping;
	sd.positionTolerance = 1e-9; /* every vertex sits in ~8 rows: the tolerance bounds its jitter */
	return ibCreateSoftBody(w, &sd);
}

/* A horizontal cloth pinned at two corners of one edge swings down and settles. The edge between
 * the pins is straight, so inextensible edges could not let it sag (infinite tension): the
 * stretch rows get a small compliance. At rest under a constant load the end-of-step velocity of
 * a compliant row is the exact free-flight value g h / 2 while the positions stand still, so rest
 * is measured by the displacement per step. */
static void test_hanging_cloth_rests(void** state)
{
	(void)state;
	const int n = IBDYN_SLOW_TESTS ? 8 : 6, steps = IBDYN_SLOW_TESTS ? 1500 : 1200;
	const double h = 0.01;
	ibWorldId w = make_world(ibV3(0, 0, -9.81));
	int pins[2] = {0, n};
	SoftGrid g;
	ibSoftBodyId sb = make_cloth(w, n, 1.0, ibV3(0, 0, 0), ibV3(1, 0, 0), ibV3(0, 1, 0), pins, 2, 3.0, 1e-3, &g);
	assert_true(ibSoftBody_IsValid(sb));
	ibVec3* prev = malloc(sizeof(ibVec3) * (size_t)g.nv);
	double maxSpeed = 0.0, finalSpeed = 0.0;
	for (int s = 0; s < steps; ++s) {
		ibSoftBody_GetPositions(sb, prev, g.nv);
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		double vmax = 0.0;
		for (int i = 0; i < g.nv; ++i) vmax = fmax(vmax, ibDistance(ibSoftBody_GetPosition(sb, i), prev[i]) / h);
		maxSpeed = fmax(maxSpeed, vmax);
		finalSpeed = vmax;
	}
	print_message("hanging cloth: max speed %.3g m/s, final %.3g m/s\n", maxSpeed, finalSpeed);
	assert_true(maxSpeed > 1.0);        /* it did swing */
	assert_true(finalSpeed < 1e-4);     /* and came to rest */
	for (int i = 0; i < g.nv; ++i) assert_true(ibSoftBody_GetPosition(sb, i).z <= 1e-9); /* below the pins */
	free(prev);
	soft_grid_free(&g);
	ibDestroyWorld(w);
}

/* Free rigid body + cloth joined by a rigid-soft joint, no gravity: linear momentum is kept to
 * rounding. Angular momentum is kept to first order in h: the rows' impulses are applied at t0, and
 * where the t0 Jacobian cannot reach the predicted state (the sparse solve's merit test; the edge
 * rows of the Gauss-Seidel sweeps always) they point along the predicted edges, whose torque about
 * the t0 positions is O(h). Asserted: the drift is small and halves (at least) with h. */
static double momentum_run(double h, double* dpOut, double* errOut)
{
	ibWorldId w = make_world(IB_VEC3_ZERO);
	SoftGrid g;
	ibSoftBodyId sb = make_cloth(w, 3, 0.6, ibV3(0, 0, 0), ibV3(1, 0, 0), ibV3(0, 1, 0), NULL, 0, 0.0, 0.0, &g);
	assert_true(ibSoftBody_IsValid(sb));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.12, 0.05, 0.3);
	bd.rotation = ibQuatFromAxisAngle(ibNormalize(ibV3(1, -1, 2)), 0.7);
	bd.linearVelocity = ibV3(0.3, -0.2, 0.5);
	bd.angularVelocity = ibV3(1.0, 0.5, -2.0);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef shd = ibDefaultShapeDef();
	shd.mass = 0.5;
	ibBox cube = {{0.1, 0.1, 0.1}}; /* isotropic inertia: torque-free rotation is exact */
	ibCreateBoxShape(b, &shd, &cube);
	ibSoftJointDef jd = ibDefaultSoftJointDef();
	jd.body = b;
	jd.soft = sb;
	jd.triangle = 0;
	jd.worldPoint = ibV3(0.13, 0.04, 0.2); /* delta = 0.2 above the cloth */
	ibConstraintId c = ibCreateSoftJoint(w, &jd);
	assert_true(ibConstraint_IsValid(c));
	for (int i = 0; i < g.nv; ++i) ibSoftBody_SetVelocity(sb, i, ibV3(-0.1, 0.2, 0.0));
	ibWorldInvariants i0, i1;
	assert_int_equal(ibWorld_ComputeInvariants(w, &i0), IB_OK);
	double maxErr = 0.0;
	int steps = (int)(3.0 / h + 0.5);
	for (int s = 0; s < steps; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		maxErr = fmax(maxErr, ibConstraint_GetError(c));
	}
	assert_int_equal(ibWorld_ComputeInvariants(w, &i1), IB_OK);
	*dpOut = ibLength(ibSub(i1.linearMomentum, i0.linearMomentum)) / ibLength(i0.linearMomentum);
	*errOut = maxErr;
	soft_grid_free(&g);
	ibDestroyWorld(w);
	return ibLength(ibSub(i1.angularMomentum, i0.angularMomentum)) / ibLength(i0.angularMomentum);
}

static void test_momentum_conservation(void** state)
{
	(void)state;
	double dp[2], err[2], dL[2];
	for (int r = 0; r < 2; ++r) dL[r] = momentum_run(r ? 0.005 : 0.01, &dp[r], &err[r]);
	print_message("momentum: |dp|/|p| = %.2e / %.2e, |dL|/|L| = %.2e / %.2e, max joint error %.2e / %.2e m (h = 10 / 5 ms)\n",
	              dp[0], dp[1], dL[0], dL[1], err[0], err[1]);
	for (int r = 0; r < 2; ++r) {
		assert_true(dp[r] < 1e-10);
		assert_true(err[r] <= 1e-6);
	}
	assert_true(dL[0] < 3e-3);
	assert_true(dL[1] < 0.6 * dL[0]); /* first order: 0.5 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain_frequency),
	    cmocka_unit_test(test_hanging_cloth_rests),
	    cmocka_unit_test(test_momentum_conservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
