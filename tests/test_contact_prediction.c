/* The contact loops' predicted poses (src/contact/contact_set.c, ib_contact_predicted): after an
 * exact prediction a body's later predictions within a sweep are linearised updates. For a
 * torque-free body of equal principal moments (a cube) the update goes through the left Jacobian of
 * exp at h w0, so a tumbling cube stays on the linear path with an error of order |h w0| |h dw|^2
 * instead of |h w0| |h dw| (docs/contacts.md, "Box piles at 60 Hz" item 11). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "contact/contact_internal.h"
#include "dynamics/world.h"
#include "ibdyn/ibdyn.h"

static uint64_t rng = 0x2545F4914F6CDD1Du;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}
static ibVec3 unit(void)
{
	ibVec3 d = ibV3(2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1);
	return ibScale(1.0 / ibLength(d), d);
}

static ibMat3 expm(ibVec3 t) { return ibMat3_FromQuat(ibQuatNormalize(ibQuat_FromRotationVector(t))); }

static double max_diff(ibMat3 a, ibMat3 b)
{
	double m = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) m = fmax(m, fabs(a.m[i][j] - b.m[i][j]));
	return m;
}

/* exp(t + d) = exp(J_l(t) d) exp(t) to 0.1 |t| |d|^2 (the bound predict_linear relies on), where the
 * plain product exp(d) exp(t) is off by up to |t| |d| / 2 */
static void test_left_jacobian_bound(void** state)
{
	(void)state;
	double worstJ = 0.0, worstPlain = 0.0;
	for (int k = 0; k < 20000; ++k) {
		double a = 2.0 * urand(), da = 3e-4 * urand();
		ibVec3 t = ibScale(a, unit()), d = ibScale(da, unit());
		ibMat3 exact = expm(ibAdd(t, d)), base = expm(t);
		ibMat3 viaJ = ibMat3_Mul(expm(ibMat3_MulV(ib_contact_left_jacobian(t), d)), base);
		ibMat3 plain = ibMat3_Mul(expm(d), base);
		double scale = a * da * da;
		if (scale > 1e-12) worstJ = fmax(worstJ, (max_diff(viaJ, exact) - 4e-16) / scale);
		if (a * da > 1e-8) worstPlain = fmax(worstPlain, max_diff(plain, exact) / (a * da));
	}
	printf("left Jacobian: error / (|t| |d|^2) at most %.4f; plain product: error / (|t| |d|) at most %.4f\n", worstJ, worstPlain);
	assert_true(worstJ <= 0.1);
	assert_true(worstPlain >= 0.4); /* the error the old bound had to hold small */
}

/* J_l against its closed form in long double, on both sides of the switch to the series (|t| < 0.25)
 * and across the range of h |w| (to 1e-15: a closed form in double loses 1e-12 near |t| = 1e-4) */
static void test_left_jacobian_series(void** state)
{
	(void)state;
	ibVec3 u = unit();
	const double as[] = {0.0, 1e-8, 1e-4, 0.01, 0.1, 0.2499, 0.2501, 0.5, 1.0, 2.0, 3.0};
	for (int k = 0; k < (int)(sizeof as / sizeof as[0]); ++k) {
		double a = as[k];
		ibMat3 J = ib_contact_left_jacobian(ibScale(a, u));
		/* closed form evaluated in long double */
		long double sh = sinl(0.5L * a), A = a > 0 ? 2.0L * sh * sh / ((long double)a * a) : 0.5L;
		long double B = a > 0 ? ((long double)a - sinl(a)) / ((long double)a * a * a) : 1.0L / 6.0L;
		ibMat3 S = ibMat3_Skew(ibScale(a, u)), S2 = ibMat3_Mul(S, S);
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j) {
				double ref = (double)((i == j ? 1.0L : 0.0L) + A * S.m[i][j] + B * S2.m[i][j]);
				if (!(fabs(J.m[i][j] - ref) <= 1e-15)) printf("|t| = %g: J[%d][%d] off by %.3e\n", a, i, j, J.m[i][j] - ref);
				assert_true(fabs(J.m[i][j] - ref) <= 1e-15);
			}
	}
}

/* A cube tumbling at |w| h = 0.1 rad per step, resting on the ground: after an impulse that changes w
 * by h |dw| = 2e-4 rad the prediction stays linear (no new exact base) and matches the exact prediction
 * (ib_predict_pose) to 1e-9; the plain linearisation would be off by ~1e-5 rad. */
static void test_tumbling_cube_prediction(void** state)
{
	(void)state;
	const double h = 1.0 / 60.0;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId wid = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = ibV3(0, 0, -0.5);
	ibBodyId g = ibCreateBody(wid, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox gb = {{50.0, 50.0, 0.5}};
	ibCreateBoxShape(g, &sd, &gb);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0, 0, 0.5);
	ibBodyId cb = ibCreateBody(wid, &bd);
	sd.mass = 1.0;
	ibBox bb = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(cb, &sd, &bb);
	assert_int_equal(ibWorld_Step(wid, h), IB_OK);
	ibWorld* w = ib_world_get(wid);
	ibContactStore* cs = w->contactStore;
	assert_non_null(cs);
	ibWorld* w2 = NULL;
	ibBody* b = ib_body_get(cb, &w2);
	assert_non_null(b);
	int32_t i = (int32_t)(b - w->bodies);
	assert_true(i >= 0 && i < cs->predCapacity);
	b->st.w = ibScale(0.1 / h, unit());
	b->velVersion++;
	ib_contact_invalidate_prediction(w, cs, h);
	ibVec3 s;
	ibMat3 R;
	ib_contact_predicted(w, cs, i, h, &s, &R); /* exact: the base */
	assert_int_equal(cs->baseOk[i], 2);
	ibVec3 w0 = cs->baseW[i];
	/* an impulse at a corner: h |dw| = 2e-4 rad */
	ibVec3 r = ibV3(0.5, -0.5, -0.5), p = ibCross(unit(), r);
	ibVec3 dw = ibMat3_MulV(b->invInertiaW, ibCross(r, p));
	p = ibScale(2e-4 / (h * ibLength(dw)), p);
	ib_body_apply_impulse(b, p, ibAdd(b->st.s, r));
	ib_contact_predicted(w, cs, i, h, &s, &R);
	assert_true(ibLength(ibSub(cs->baseW[i], w0)) == 0.0); /* linear: the base is kept */
	ibVec3 se;
	ibQuat qe;
	ib_predict_pose(w, b, h, &se, &qe);
	double dR = max_diff(R, ibMat3_FromQuat(qe)), ds = ibLength(ibSub(s, se));
	ibMat3 plain = ibMat3_Mul(expm(ibScale(h, ibSub(b->st.w, w0))), cs->baseR[i]);
	double dPlain = max_diff(plain, ibMat3_FromQuat(qe));
	printf("tumbling cube: linear prediction off by %.3e (rotation), %.3e m; plain linearisation %.3e\n", dR, ds, dPlain);
	assert_true(dR <= 1e-9);
	assert_true(ds <= 1e-12);
	assert_true(dPlain >= 1e-6); /* what the Jacobian removes */
	ibDestroyWorld(wid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_left_jacobian_bound),
	    cmocka_unit_test(test_left_jacobian_series),
	    cmocka_unit_test(test_tumbling_cube_prediction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
