/* Stacks (§5.3, §5.5): ten blocks on four feet each stand on the ground (no block moves by more than
 * 1 cm); penetration stays below eps_d + eps_c throughout. 1 s always, 60 s with IBDYN_SLOW_TESTS. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "contact_test_util.h"

#ifndef IBDYN_SLOW_TESTS
#define IBDYN_SLOW_TESTS 0
#endif

static void test_stack10(void** state)
{
	(void)state;
	double epsc = 1e-4, epsd = 1e-5, h = 1e-3, pitch = 1.0 + CT_FOOT_OUT;
	ibWorldId w = ct_world_v(epsc, epsd, 1e-4); /* the tolerances of Table 5.2; eps_v 1e-4 m/s */
	ct_ground(w, 0.0, ct_mat(0.0, 0.3, 0.3));
	enum { N = 10 };
	ibBodyId b[N];
	ibVec3 p0[N];
	for (int i = 0; i < N; ++i) {
		p0[i] = ibV3(0.0, 0.0, 0.5 + CT_FOOT_OUT + pitch * i);
		b[i] = ct_block(w, p0[i], IB_QUAT_IDENTITY, 0.5, ct_mat(0.0, 0.3, 0.3));
	}
	double T = IBDYN_SLOW_TESTS ? 60.0 : 1.0;
	int steps = (int)lround(T / h);
	double worst = 0.0, pen = 0.0;
	long sweeps = 0;
	for (int k = 0; k < steps; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		sweeps += st.contactIterations;
		for (int i = 0; i < N; ++i) {
			ibVec3 p = ibBody_GetPosition(b[i]);
			worst = fmax(worst, ibLength(ibSub(p, p0[i])));
			double below = i == 0 ? 0.0 : ibBody_GetPosition(b[i - 1]).z + 0.5;
			pen = fmax(pen, below - (p.z - 0.5 - CT_FOOT_OUT));
		}
	}
	printf("stack of %d, %.0f s: max displacement %.3e m, max penetration %.3e m, mean contact sweeps %.1f\n", N, T,
	       worst, pen, (double)sweeps / steps);
	assert_true(worst <= 1e-2); /* stands: no block moved by more than 1 cm */
	assert_true(pen <= epsd + epsc);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_stack10)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
