/* Collision and resting-contact resolution (Chapter 5): classification, Newton/Poisson restitution,
 * a box resting on the ground, blocks on a slope (static and dynamic friction), settings. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "contact_test_util.h"

/* eq. 5.1: approaching faster than eps_rc = sqrt(2|g|eps_c) is a collision, slower a resting contact */
static void test_classification(void** state)
{
	(void)state;
	double epsc = 1e-3, rest = sqrt(2.0 * 9.81 * epsc);
	for (int k = 0; k < 2; ++k) {
		ibWorldId w = ct_world(epsc, 1e-6);
		ct_ground(w, 0.0, ct_mat(0.0, 0.0, 0.0));
		ibBodyId b = ct_ball(w, ibV3(0, 0, 0.1 + 0.5 * epsc), 0.1, ct_mat(0.0, 0.0, 0.0));
		double v = k == 0 ? 1.05 * rest : 0.95 * rest;
		ibBody_SetLinearVelocity(b, ibV3(0, 0, -v));
		assert_int_equal(ibWorld_Step(w, 1e-5), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		assert_int_equal(st.contactPoints, 1);
		assert_int_equal(st.collidingPoints, k == 0 ? 1 : 0);
		assert_int_equal(st.restingPoints, 1); /* e = 0: after the impact the point rests */
		ibDestroyWorld(w);
	}
	/* zero gravity: eps_rc from |g| = 9.81 */
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	wd.solver.contact.enabled = true;
	wd.collision.contactTolerance = epsc;
	ibWorldId w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(1.0, 0.0, 0.0));
	ibBodyId b = ct_ball(w, ibV3(0, 0, 0.1 + 0.5 * epsc), 0.1, ct_mat(1.0, 0.0, 0.0));
	ibBody_SetLinearVelocity(b, ibV3(0, 0, -1.05 * rest));
	ibWorld_Step(w, 1e-5);
	assert_int_equal(ibWorld_GetStepStats(w).collidingPoints, 1);
	assert_true(fabs(ibBody_GetLinearVelocity(b).z - 1.05 * rest) < 1e-6); /* e = 1 * 1 */
	ibDestroyWorld(w);
}

/* Bouncing ball, e = 0.5 * 1 (product rule): successive peak heights in ratio e^2. The impact is
 * resolved within eps_c of the surface, so the ratio error is about (1 - e^2) eps_c / height. */
static double bounce_ratio(ibRestitutionLaw law, double* r2)
{
	double epsc = 1e-4, h = 2e-5, r = 0.1;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.contact.enabled = true;
	wd.collision.contactTolerance = epsc;
	wd.solver.contact.restitutionLaw = law;
	ibWorldId w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(1.0, 0.0, 0.0));
	ibBodyId b = ct_ball(w, ibV3(0, 0, 1.0 + r), r, ct_mat(0.5, 0.0, 0.0));
	double peaks[3] = {1.0, 0, 0};
	int np = 1;
	double prevVz = 0.0, top = 0.0;
	for (int i = 0; i < 200000 && np < 3; ++i) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		double z = ibBody_GetPosition(b).z - r, vz = ibBody_GetLinearVelocity(b).z;
		assert_true(z > -epsc);
		if (vz > 0.0) top = fmax(top, z);
		if (prevVz > 0.0 && vz <= 0.0) peaks[np++] = top, top = 0.0;
		prevVz = vz;
	}
	assert_int_equal(np, 3);
	ibDestroyWorld(w);
	*r2 = peaks[2] / peaks[1];
	return peaks[1] / peaks[0];
}

static void test_bouncing_ball(void** state)
{
	(void)state;
	for (int law = 0; law < 2; ++law) {
		double r2, r1 = bounce_ratio((ibRestitutionLaw)law, &r2);
		printf("bouncing ball (%s): peak ratios %.6f %.6f (e^2 = 0.25)\n", law ? "Poisson" : "Newton", r1, r2);
		assert_true(fabs(r1 - 0.25) <= 1e-3);
		assert_true(fabs(r2 - 0.25) <= 1e-3);
	}
}

/* A block resting on four feet on the ground: no drift or jitter over 10 s, penetration <= eps_d + eps_c. */
static void test_box_resting(void** state)
{
	(void)state;
	double epsc = 1e-4, epsd = 1e-7;
	ibWorldId w = ct_world(epsc, epsd);
	ct_ground(w, 0.0, ct_mat(0.0, 0.5, 0.5));
	ibVec3 p0 = ibV3(0.3, -0.2, 0.5 + CT_FOOT_OUT);
	ibBodyId b = ct_block(w, p0, IB_QUAT_IDENTITY, 0.5, ct_mat(0.0, 0.5, 0.5));
	double worst = 0.0, pen = 0.0, angle = 0.0;
	int n = 10000;
	for (int i = 0; i < n; ++i) {
		assert_int_equal(ibWorld_Step(w, 1e-3), IB_OK);
		ibVec3 p = ibBody_GetPosition(b);
		worst = fmax(worst, ibLength(ibSub(p, p0)));
		pen = fmax(pen, -(p.z - 0.5 - CT_FOOT_OUT));
		ibQuat q = ibBody_GetRotation(b);
		angle = fmax(angle, 2.0 * sqrt(q.x * q.x + q.y * q.y + q.z * q.z));
		assert_int_equal(ibWorld_GetStepStats(w).restingPoints, 4);
	}
	printf("box resting 10 s: max displacement %.3e m, penetration %.3e m, tilt %.3e rad\n", worst, pen, angle);
	assert_true(worst <= 1e-6);
	assert_true(pen <= epsd + epsc);
	assert_true(angle <= 1e-6);
	ibDestroyWorld(w);
}

/* slope of angle theta (ground mu = 0, sum rule: the block's coefficients act) */
static void slope_run(double theta, double mus, double mud, double T, double* drift, double* accel)
{
	/* sticking points keep their anchors across steps, so the residuals of the static-friction
	 * correction (< eps_d) do not add up over the 10000 steps */
	double epsc = 1e-4, epsd = 1e-7, h = 1e-3;
	ibWorldId w = ct_world(epsc, epsd);
	ct_ground(w, theta, ct_mat(0.0, 0.0, 0.0));
	ibQuat q = ibQuatFromAxisAngle(ibV3(0, 1, 0), theta);
	ibVec3 p0 = ibRotate(q, ibV3(0, 0, 0.5 + CT_FOOT_OUT));
	ibBodyId b = ct_block(w, p0, q, 0.5, ct_mat(0.0, mus, mud));
	ibVec3 n = ibRotate(q, ibV3(0, 0, 1)), g = ibV3(0, 0, -9.81);
	ibVec3 down = ibNormalize(ibMulAdd(g, -ibDot(g, n), n));
	int steps = (int)lround(T / h), half = steps / 2;
	double d = 0.0, v1 = 0.0, t1 = 0.0;
	for (int i = 1; i <= steps; ++i) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibVec3 p = ibBody_GetPosition(b);
		d = fmax(d, ibLength(ibSub(p, p0)));
		if (i == half) v1 = ibDot(ibBody_GetLinearVelocity(b), down), t1 = i * h;
	}
	*drift = d;
	*accel = (ibDot(ibBody_GetLinearVelocity(b), down) - v1) / (steps * h - t1);
	ibDestroyWorld(w);
}

static void test_slope(void** state)
{
	(void)state;
	double d, a, g = 9.81;
	double th = 20.0 * 3.14159265358979323846 / 180.0; /* tan 20 deg = 0.364 < mu_s = 0.5: sticks */
	slope_run(th, 0.5, 0.3, 10.0, &d, &a);
	printf("slope 20 deg, mu_s 0.5: drift over 10 s %.3e m\n", d);
	assert_true(d <= 1e-6);
	th = 30.0 * 3.14159265358979323846 / 180.0; /* tan 30 deg = 0.577 > 0.5: slides with a = g (sin - mu_d cos) */
	slope_run(th, 0.5, 0.3, 2.0, &d, &a);
	double ae = g * (sin(th) - 0.3 * cos(th));
	printf("slope 30 deg, mu_d 0.3: a = %.6f m/s^2, exact %.6f\n", a, ae);
	assert_true(fabs(a - ae) <= 1e-3 * ae);
}

/* Mixing rules and settings validation. */
static void test_settings(void** state)
{
	(void)state;
	ibSolverSettings s = ibDefaultSolverSettings();
	assert_true(s.contact.enabled);
	assert_int_equal(s.contact.restitutionMixing, IB_MIX_PRODUCT);
	assert_int_equal(s.contact.frictionMixing, IB_MIX_SUM);
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	s.contact.collisionTolerance = 0.0;
	assert_int_not_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	s = ibDefaultSolverSettings();
	s.contact.frictionMixing = (ibMixRule)99;
	assert_int_not_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
	ibDestroyWorld(w);
	/* restitution by rule: ball e1 = 0.8 on ground e2 = 0.5, one impact at 1 m/s */
	const double expect[5] = {0.4, 1.0, 0.5, 0.8, 0.65}; /* product, sum (clamped to 1), min, max, mean */
	for (int rule = 0; rule < 5; ++rule) {
		wd = ibDefaultWorldDef();
		wd.gravity = ibV3(0, 0, 0);
		wd.solver.contact.enabled = true;
		wd.solver.contact.restitutionMixing = (ibMixRule)rule;
		w = ibCreateWorld(&wd);
		ct_ground(w, 0.0, ct_mat(0.5, 0.0, 0.0));
		ibBodyId b = ct_ball(w, ibV3(0, 0, 0.1 + 5e-5), 0.1, ct_mat(0.8, 0.0, 0.0));
		ibBody_SetLinearVelocity(b, ibV3(0, 0, -1.0));
		ibWorld_Step(w, 1e-5);
		assert_true(fabs(ibBody_GetLinearVelocity(b).z - expect[rule]) < 1e-5);
		ibDestroyWorld(w);
	}
}

/* A flat box 2e-10 m above a large ground box (a pose the README example reached): GJK's normal of the
 * two parallel faces is 2.7e-4 rad off there; the region must still be the box's 4 bottom corners. */
static void test_flat_box_touching_manifold(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibCreateBoxShape(ground, &sd, &(ibBox){ibV3(10.0, 10.0, 0.5)});
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.27184686990064255, 0.067336717463033394, 0.55000000023578843);
	bd.rotation = ibQuatNormalize((ibQuat){.w = 0.52385517743005383, .x = 3.0260391390528187e-10,
	                                       .y = -4.1574958855319211e-10, .z = 0.85180734504917666});
	ibBodyId box = ibCreateBody(w, &bd);
	ibCreateBoxShape(box, &sd, &(ibBox){ibV3(0.2, 0.1, 0.05)});
	assert_int_equal(ibWorld_Collide(w), IB_OK);
	ibContactData cd[2];
	assert_int_equal(ibWorld_GetContacts(w, cd, 2), 1);
	assert_int_equal(cd[0].pointCount, 4);
	assert_true(fabs(fabs(cd[0].normal.z) - 1.0) <= 1e-12);
	for (int k = 0; k < 4; ++k) assert_true(fabs(cd[0].points[k].separation) <= 1e-9);
	ibDestroyWorld(w);
}

/* Anytime results (issue 6 part 5): a loop stopped by its cap leaves the step not converged and reports how
 * far it got. A frictionless block on four sphere feet, iterative method (no direct solve, no warm start),
 * one sweep per contact loop: the velocity loop at t0+h, corrected point after point once, leaves the feet
 * it corrected first moving again. ibStepStats.contactVelocityResidual is the largest such error: an
 * approach counts always, a separation while the point's normal impulse holds it; so it lies between the
 * largest approach of a foot and the largest |u_n| of a foot, both measured here from the body's velocity
 * at the feet's lowest points. With the default caps the same step converges and reports 0. */
static void test_anytime_residuals(void** state)
{
	(void)state;
	for (int capped = 1; capped >= 0; --capped) {
		ibWorldId w = ct_world_v(1e-4, 1e-7, 1e-6);
		ibSolverSettings s = ibWorld_GetSolverSettings(w);
		s.contact.directSolve = false;
		s.contact.warmStart = false;
		if (capped) s.contact.maxContactIterations = 1;
		assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
		ct_ground(w, 0.0, ct_mat(0.0, 0.0, 0.0));
		const double half = 0.5;
		ibBodyId b = ct_block(w, ibV3(0, 0, half + CT_FOOT_OUT), IB_QUAT_IDENTITY, half, ct_mat(0.0, 0.0, 0.0));
		ibBody_SetAngularVelocity(b, ibV3(0.02, -0.01, 0.0)); /* rocking a little on its feet */
		assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		double approach = 0.0, speed = 0.0, c = half - CT_FOOT_R;
		for (int i = 0; i < 4; ++i) {
			ibVec3 foot = ibBody_GetWorldPoint(b, ibV3((i & 1) ? c : -c, (i & 2) ? c : -c, -half - CT_FOOT_OUT + CT_FOOT_R));
			ibVec3 low = ibSub(foot, ibV3(0, 0, CT_FOOT_R)); /* the round contact point (n = e_z) */
			double un = ibBody_GetPointVelocity(b, low).z;
			approach = fmax(approach, -un);
			speed = fmax(speed, fabs(un));
		}
		printf("block on four feet, %s: converged %d, contact sweeps %d + %d, velocity residual %.3e m/s (feet: largest approach "
		       "%.3e, largest |u_n| %.3e m/s), position residual %.3e m\n",
		       capped ? "one sweep per loop" : "default caps", (int)st.converged, st.contactIterations, st.contactVelocityIterations,
		       st.contactVelocityResidual, approach, speed, st.contactResidual);
		assert_int_equal(st.restingPoints, 4);
		if (capped) {
			assert_false(st.converged);
			assert_true(st.contactVelocityResidual > s.velocityTolerance);
			assert_true(st.contactVelocityResidual >= approach);
			assert_true(st.contactVelocityResidual <= speed * (1.0 + 1e-9));
		} else {
			assert_true(st.converged);
			assert_true(st.contactVelocityResidual == 0.0);
			assert_true(st.contactResidual == 0.0);
			assert_true(speed <= 10.0 * s.velocityTolerance);
		}
		ibDestroyWorld(w);
	}
}

/* The contact statistics cover all of a step's time-of-contact sub-steps: a block on four feet lands early in
 * the step with its collision loop capped at one sweep (not converged), a ball lands later in the same step
 * (a sub-step of its own, converged). The step reports the block's residual and the sweeps of both. */
static void test_stats_over_toi_substeps(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.contact.enabled = true;
	wd.solver.contact.maxCollisionIterations = 1;
	wd.solver.contact.warmStart = false;
	wd.collision.speculativeApproach = false;
	ibWorldId w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(0.0, 0.0, 0.0));
	const double H = 1.0 / 60.0, v = 3.0, half = 0.5;
	/* the block's feet reach the ground after 0.2 H, the ball after 0.7 H */
	ibBodyId block = ct_block(w, ibV3(0, 0, half + CT_FOOT_OUT + 0.2 * H * v), ibQuatFromAxisAngle(ibV3(1, 1, 0), 0.01),
	                          half, ct_mat(0.0, 0.0, 0.0));
	ibBodyId ball = ct_ball(w, ibV3(5, 0, 0.1 + 0.7 * H * v), 0.1, ct_mat(0.0, 0.0, 0.0));
	ibBody_SetLinearVelocity(block, ibV3(0, 0, -v));
	ibBody_SetLinearVelocity(ball, ibV3(0, 0, -v));
	assert_int_equal(ibWorld_Step(w, H), IB_OK);
	ibStepStats st = ibWorld_GetStepStats(w);
	ibCollisionStats cs = ibWorld_GetCollisionStats(w);
	printf("two landings in one step: %d time-of-contact sub-steps, converged %d, collision sweeps %d, residual %.3e m/s, "
	       "points %d (colliding %d, resting %d)\n",
	       cs.toiSubsteps, (int)st.converged, st.collisionIterations, st.collisionResidual, st.contactPoints, st.collidingPoints,
	       st.restingPoints);
	assert_true(cs.toiSubsteps >= 2);
	assert_false(st.converged);
	assert_true(st.collisionResidual > 0.0); /* the block's landing, not the ball's later one */
	assert_true(st.collisionIterations >= 2); /* one sweep in each landing's sub-step */
	assert_true(st.collidingPoints >= 2);     /* two feet of the tilted block at once */
	assert_true(st.contactPoints >= 4);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classification), cmocka_unit_test(test_bouncing_ball), cmocka_unit_test(test_box_resting),
	    cmocka_unit_test(test_slope),          cmocka_unit_test(test_settings), cmocka_unit_test(test_flat_box_touching_manifold),
	    cmocka_unit_test(test_anytime_residuals), cmocka_unit_test(test_stats_over_toi_substeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
