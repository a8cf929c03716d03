/* Stacks (§5.3, §5.5): ten blocks on four feet each stand on the ground (no block moves by more than
 * 1 cm); penetration stays below eps_d + eps_c throughout. 1 s always, 60 s with IBDYN_SLOW_TESTS. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "contact_test_util.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 0
#endif

/* Runs the stack for T seconds; returns the mean number of sweeps (position + velocity) per step. */
static double run_stack(double T, int shock, bool direct, bool warm, double* worstOut, double* penOut)
{
	double epsc = 1e-4, epsd = 1e-5, h = 1e-3, pitch = 1.0 + CT_FOOT_OUT;
	ibWorldId w = ct_world_v(epsc, epsd, 1e-4); /* eps_d of Table 5.2; eps_v 1e-4 m/s */
	ibSolverSettings ss = ibWorld_GetSolverSettings(w);
	ss.contact.shockIterations = shock;
	ss.contact.directSolve = direct; /* contact_direct.c; off: the iterative method of §5.3 alone */
	ss.contact.warmStart = warm; /* docs/contacts.md, "Warm start" */
	assert_int_equal(ibWorld_SetSolverSettings(w, &ss), IB_OK);
	ct_ground(w, 0.0, ct_mat(0.0, 0.3, 0.3));
	enum { N = 10 };
	ibBodyId b[N];
	ibVec3 p0[N];
	for (int i = 0; i < N; ++i) {
		p0[i] = ibV3(0.0, 0.0, 0.5 + CT_FOOT_OUT + pitch * i);
		b[i] = ct_block(w, p0[i], IB_QUAT_IDENTITY, 0.5, ct_mat(0.0, 0.3, 0.3));
	}
	int steps = (int)lround(T / h);
	double worst = 0.0, pen = 0.0;
	long sweeps = 0;
	for (int k = 0; k < steps; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		sweeps += st.contactIterations + st.contactVelocityIterations;
		for (int i = 0; i < N; ++i) {
			ibVec3 p = ibBody_GetPosition(b[i]);
			worst = fmax(worst, ibLength(ibSub(p, p0[i])));
			double below = i == 0 ? 0.0 : ibBody_GetPosition(b[i - 1]).z + 0.5;
			pen = fmax(pen, below - (p.z - 0.5 - CT_FOOT_OUT));
		}
	}
	printf("stack of %d, %.1f s, direct solve %s, warm start %s, shock propagation after %d sweeps: max displacement %.3e m, max penetration %.3e m, "
	       "mean contact sweeps %.1f\n", N, T, direct ? "on" : "off", warm ? "on" : "off", shock, worst, pen, (double)sweeps / steps);
	assert_true(worst <= 1e-2); /* stands: no block moved by more than 1 cm */
	assert_true(pen <= epsd + epsc);
	ibDestroyWorld(w);
	*worstOut = worst;
	*penOut = pen;
	return (double)sweeps / steps;
}

static void test_stack10(void** state)
{
	(void)state;
	double worst, pen;
	double sweeps = run_stack(IBDYN_SLOW_TESTS ? 60.0 : 1.0, 0, true, true, &worst, &pen);
	/* the direct solve (contact_direct.c) leaves nothing for the sweeps: one position and one velocity
	 * sweep per step check it (the iterative method alone needs about 60) */
	assert_true(sweeps <= 2.5);
	assert_true(worst <= 1e-5);
}

/* The iterative method alone (direct solve off) also keeps the stack standing. */
static void test_stack10_iterative(void** state)
{
	(void)state;
	double worst, pen;
	run_stack(1.0, 0, false, true, &worst, &pen);
}

/* Shock propagation (§5.3.2) on and off: both states valid, fewer sweeps with it on (iterative method). */
static void test_stack_shock(void** state)
{
	(void)state;
	double w0, p0, w1, p1;
	double off = run_stack(0.5, 0, false, true, &w0, &p0);
	double on = run_stack(0.5, 20, false, true, &w1, &p1);
	printf("sweeps per step: %.1f without, %.1f with shock propagation\n", off, on);
	assert_true(on < 0.8 * off);
}

/* The contact warm start (docs/contacts.md, "Warm start") with the iterative method: both runs stand,
 * and starting from last step's impulses needs fewer sweeps than starting from zero. */
static void test_stack_warm(void** state)
{
	(void)state;
	double w0, p0, w1, p1;
	double off = run_stack(0.5, 0, false, false, &w0, &p0);
	double on = run_stack(0.5, 0, false, true, &w1, &p1);
	printf("sweeps per step: %.1f without, %.1f with the warm start\n", off, on);
	assert_true(on < 0.8 * off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_stack10), cmocka_unit_test(test_stack10_iterative),
	                                   cmocka_unit_test(test_stack_shock), cmocka_unit_test(test_stack_warm)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
