/* The cloth-on-a-swinging-bar scene (tests/soft_bar_scene.h) with a fine cloth solved by the sparse
 * direct soft solver (IB_SOFT_SOLVER_SPARSE): the attachments hold to eps_d after every step, every
 * step converges without subdivision, nothing becomes NaN. 30 x 30 cloth for 0.25 s; with
 * IBDYN_SLOW_TESTS also the 50 x 50 cloth of bench_soft (which diverges with Gauss–Seidel sweeps)
 * for 0.2 s (bench_soft runs it longer); the 50 x 50 cloth with the default solver (AUTO) for 8 steps
 * (4 without IBDYN_SLOW_TESTS);
 * AUTO picks the sparse solve, Gauss–Seidel for a body with a sweep cap (bit-identical to the
 * explicit choice). Also: the sparse solver on a small inextensible cloth gives the same motion as
 * the Gauss–Seidel sweeps (both converge to the same constraint solution). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "soft_bar_scene.h"

static void run_with(int n, double eps, double seconds, ibSoftSolver solver)
{
	const double h = 0.005;
	BarScene s;
	assert_true(bar_scene_ex(&s, n, IB_SOLVER_ITERATIVE, eps, 1e-5, 0, 1e-3, solver));
	int steps = (int)lround(seconds / h), sweeps = 0;
	double worst = 0.0;
	for (int k = 0; k < steps; ++k) {
		ibResult r = ibWorld_Step(s.w, h);
		if (r != IB_OK) fail_msg("step %d: %s", k, ibWorld_GetLastError(s.w));
		ibStepStats st = ibWorld_GetStepStats(s.w);
		if (!st.converged || st.stepSubdivisions != 1) fail_msg("step %d not converged (%d sub-steps)", k, st.stepSubdivisions);
		double e = fmax(ibConstraint_GetError(s.att[0]), ibConstraint_GetError(s.att[1]));
		if (!(e <= eps)) fail_msg("step %d: attachment error %.3g > eps_d", k, e);
		worst = fmax(worst, e);
		sweeps += st.positionIterations;
		/* the sparse path ran (AUTO picks it from 500 particles) */
		assert_true(ibWorld_GetSoftStepStats(s.w).sparseFactorizations > 0);
	}
	for (int i = 0; i < s.g.nv; ++i) {
		assert_true(ibVec3_IsFinite(ibSoftBody_GetPosition(s.cloth, i)));
		assert_true(ibVec3_IsFinite(ibSoftBody_GetVelocity(s.cloth, i)));
	}
	/* the cloth hangs below the bar and has not been stretched apart */
	ibVec3 lo = ibSoftBody_GetPosition(s.cloth, s.g.nv - 1);
	assert_true(lo.z < -0.5 && lo.z > -1.2);
	print_message("%dx%d eps %.0e, %.2f s: max attachment error %.3g m, %.1f sweeps/step\n", n, n, eps, seconds, worst,
	              (double)sweeps / steps);
	bar_scene_free(&s);
}

static void run(int n, double eps, double seconds) { run_with(n, eps, seconds, IB_SOFT_SOLVER_SPARSE); }

/* The default solver (IB_SOFT_SOLVER_AUTO) on the 50 x 50 cloth of bench_soft, which diverges with
 * Gauss–Seidel sweeps by step 6: a few steps, each converged within eps_d. */
static void test_cloth50_default(void** state)
{
	(void)state;
	assert_int_equal(ibDefaultSoftBodyDef().solver, IB_SOFT_SOLVER_AUTO);
#if IBDYN_SLOW_TESTS
	run_with(50, 1e-6, 0.04, IB_SOFT_SOLVER_AUTO);
#else
	run_with(50, 1e-6, 0.02, IB_SOFT_SOLVER_AUTO); /* ASan time budget */
#endif
}

/* AUTO resolves per body: the sparse solve (20 x 20 cloth: 441 particles, 30 x 30: 961), but the
 * Gauss–Seidel sweeps for a body with a sweep cap (anytime cloth, maxIterations > 0); bit-identical
 * to choosing that solver explicitly (4 steps). */
static void test_auto_choice(void** state)
{
	(void)state;
	const int sizes[3] = {20, 30, 20}, caps[3] = {0, 0, 400};
	for (int q = 0; q < 3; ++q) {
		int n = sizes[q];
		BarScene a, b;
		bool sparse = caps[q] == 0;
		ibSoftSolver expect = sparse ? IB_SOFT_SOLVER_SPARSE : IB_SOFT_SOLVER_GAUSS_SEIDEL;
		assert_true(bar_scene_ex(&a, n, IB_SOLVER_ITERATIVE, 1e-6, 1e-5, caps[q], 1e-3, IB_SOFT_SOLVER_AUTO));
		assert_true(bar_scene_ex(&b, n, IB_SOLVER_ITERATIVE, 1e-6, 1e-5, caps[q], 1e-3, expect));
		ibSoftBodyDef got;
		assert_int_equal(ibSoftBody_GetDef(a.cloth, &got), IB_OK);
		assert_int_equal(got.solver, IB_SOFT_SOLVER_AUTO); /* stored as given */
		for (int k = 0; k < 4; ++k) {
			assert_int_equal(ibWorld_Step(a.w, 0.005), IB_OK);
			assert_int_equal(ibWorld_Step(b.w, 0.005), IB_OK);
			ibSoftStepStats sa = ibWorld_GetSoftStepStats(a.w), sb = ibWorld_GetSoftStepStats(b.w);
			assert_int_equal(sa.sparseFactorizations, sb.sparseFactorizations);
			assert_true(sparse ? sa.sparseFactorizations > 0 : sa.sparseFactorizations == 0);
			assert_int_equal(sa.positionSweeps, sb.positionSweeps);
		}
		for (int i = 0; i < a.g.nv; ++i) {
			ibVec3 x = ibSoftBody_GetPosition(a.cloth, i), y = ibSoftBody_GetPosition(b.cloth, i);
			assert_true(x.x == y.x && x.y == y.y && x.z == y.z);
		}
		bar_scene_free(&a);
		bar_scene_free(&b);
	}
}

static void test_cloth30(void** state)
{
	(void)state;
	run(30, 1e-6, 0.25);
}

static void test_cloth50(void** state)
{
	(void)state;
#if IBDYN_SLOW_TESTS
	run(50, 1e-6, 0.2);
#else
	skip();
#endif
}

/* Same small cloth pinned at two corners, once with each solver: identical within the tolerances. */
static void test_same_as_gauss_seidel(void** state)
{
	(void)state;
	double diff[2];
	ibVec3 end[2][36];
	for (int r = 0; r < 2; ++r) {
		double h = r ? 0.0025 : 0.005;
		for (int q = 0; q < 2; ++q) {
			ibWorldDef wd = ibDefaultWorldDef();
			ibWorldId w = ibCreateWorld(&wd);
			SoftGrid g = soft_grid(5, 1.0, ibV3(-0.5, 0, 0), ibV3(1, 0, 0), ibV3(0, 1, 0));
			int pins[2] = {0, 5};
			ibSoftBodyDef d = ibDefaultSoftBodyDef();
			d.vertices = g.v;
			d.vertexCount = g.nv;
			d.triangles = g.t;
			d.triangleCount = g.nt;
			d.pinned = pins;
			d.pinnedCount = 2;
			d.stretchCompliance = 1e-4;
			d.bending = IB_SOFT_BENDING_DIHEDRAL;
			d.bendingCompliance = 1.0;
			d.positionTolerance = 1e-9;
			d.solver = q ? IB_SOFT_SOLVER_SPARSE : IB_SOFT_SOLVER_GAUSS_SEIDEL;
			ibSoftBodyId c = ibCreateSoftBody(w, &d);
			assert_true(ibSoftBody_IsValid(c));
			int steps = (int)(0.2 / h + 0.5);
			for (int k = 0; k < steps; ++k) assert_int_equal(ibWorld_Step(w, h), IB_OK);
			for (int i = 0; i < g.nv; ++i) end[q][i] = ibSoftBody_GetPosition(c, i);
			soft_grid_free(&g);
			ibDestroyWorld(w);
		}
		diff[r] = 0.0;
		for (int i = 0; i < 36; ++i) diff[r] = fmax(diff[r], ibDistance(end[0][i], end[1][i]));
		assert_true(end[1][35].z < -0.02); /* it did fall */
	}
	print_message("sparse vs Gauss-Seidel after 0.2 s: %.3g m (h = 5 ms), %.3g m (h = 2.5 ms)\n", diff[0], diff[1]);
	assert_true(diff[0] < 2e-3);
	assert_true(diff[1] < 0.6 * diff[0]); /* first order in h: the same motion in the limit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_cloth30), cmocka_unit_test(test_cloth50),
	                                   cmocka_unit_test(test_cloth50_default), cmocka_unit_test(test_auto_choice),
	                                   cmocka_unit_test(test_same_as_gauss_seidel)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
