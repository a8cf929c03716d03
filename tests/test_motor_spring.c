/* Servo motors (PID of eq. 3.23 with a bounded integral window, torque limit, set-point schedule),
 * springs (frequency, damping, energy) and rejection of invalid joint definitions. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"

#define G 9.81
#define AXIS ibV3(0, 1, 0) /* hinge axis: +angle turns the arm's +x towards -z (down) */

typedef struct Arm {
	ibWorldId w;
	ibBodyId base, arm;
	ibJointId j;
	ibVec3 localX; /* the arm's initial world x in its own frame: our angle reference */
} Arm;

/* A 1 m, 2 kg bar along +x hinged at its end (the origin) to a static body. */
static Arm make_arm(ibVec3 gravity, const ibMotorDef* motor)
{
	Arm a;
	a.w = jt_world(gravity);
	a.base = jt_static(a.w, IB_VEC3_ZERO);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0.5, 0, 0);
	a.arm = ibCreateBody(a.w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 2.0;
	ibBox box = {{0.5, 0.05, 0.05}};
	assert_true(ibShape_IsValid(ibCreateBoxShape(a.arm, &sd, &box)));
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = a.base;
	jd.bodyB = a.arm;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, IB_VEC3_ZERO, AXIS), IB_OK);
	jd.motor = *motor;
	a.j = ibCreateJoint(a.w, &jd);
	assert_true(ibJoint_IsValid(a.j));
	a.localX = jt_local_vector(a.arm, ibV3(1, 0, 0));
	return a;
}

/* Hinge angle of the arm from its pose: atan2((rA x rB).axis, rA.rB) with rA = world x. */
static double arm_angle(const Arm* a)
{
	ibVec3 rb = ibBody_GetWorldVector(a->arm, a->localX);
	return atan2(ibDot(ibCross(ibV3(1, 0, 0), rb), AXIS), rb.x);
}

static ibMotorDef servo(ibMotorMode mode, double target, double gain, double resetTime, double derivTime, int window,
                        double maxForce)
{
	ibMotorDef m = ibDefaultMotorDef();
	m.mode = mode;
	m.target = target;
	m.gain = gain;
	m.resetTime = resetTime;
	m.derivativeTime = derivTime;
	m.integralWindow = window;
	m.maxForce = maxForce;
	return m;
}

/* Position servo against gravity (tau_g = m g L/2 cos 0.5 = 8.6 N m at the set-point). With a constant
 * error e over a full window u = K e (1 + N h / T_N), so a window-limited integral leaves a static error
 * tau_g / (K (1 + N h/T_N)); the window here (100 s) is longer than the run, i.e. a true integral.
 * The characteristic polynomial I s^3 + K T_V s^2 + K s + K/T_N (I = 0.67 kg m^2) is stable. */
static void test_hinge_position_servo(void** state)
{
	(void)state;
	const double h = 1e-3, target = 0.5, limit = 50.0;
	ibMotorDef m = servo(IB_MOTOR_POSITION, target, 500.0, 0.3, 0.06, 100000, limit);
	Arm a = make_arm(ibV3(0, 0, -G), &m);
	double hold = 0.0;
	int saturated = 0;
	for (int k = 1; k <= 5000; ++k) {
		jt_step(a.w, h);
		double u = ibJoint_GetMotorOutput(a.j);
		JT_LE(fabs(u), limit);
		if (fabs(u) == limit) ++saturated;
		if (k * h >= 3.0) hold = fmax(hold, fabs(arm_angle(&a) - target));
		JT_LE(ibJoint_GetPositionError(a.j), 1e-6);
	}
	print_message("hinge servo: |angle - 0.5| <= %.2e rad over 3..5 s (%d saturated steps, holding torque %.3f N m)\n",
	              hold, saturated, ibJoint_GetMotorOutput(a.j));
	JT_LE(hold, 1e-4);
	/* the gravity torque m g (L/2) cos(theta) is what the motor holds */
	assert_true(fabs(-ibJoint_GetMotorOutput(a.j) - 2.0 * G * 0.5 * cos(target)) < 0.05);
	assert_true(fabs(ibJoint_GetMotorValue(a.j) - target) < 1e-3); /* the joint's own (pre-step) measurement */
	ibDestroyWorld(a.w);

	/* a limit below the gravity torque (8.6 N m) saturates: the output sits at exactly -limit */
	m.maxForce = 5.0;
	a = make_arm(ibV3(0, 0, -G), &m);
	saturated = 0;
	for (int k = 0; k < 2000; ++k) {
		jt_step(a.w, h);
		double u = ibJoint_GetMotorOutput(a.j);
		JT_LE(fabs(u), 5.0);
		if (u == -5.0) ++saturated;
	}
	print_message("hinge servo limited to 5 N m: %d of 2000 steps saturated, angle %.3f rad\n", saturated, arm_angle(&a));
	assert_true(saturated > 1000);
	assert_true(fabs(arm_angle(&a) - target) > 0.2); /* it cannot hold the arm at the set-point */
	ibDestroyWorld(a.w);
}

/* Velocity servo without gravity: P control on the relative angular velocity. */
static void test_hinge_velocity_servo(void** state)
{
	(void)state;
	ibMotorDef m = servo(IB_MOTOR_VELOCITY, 2.0, 10.0, 0.5, 0.0, 50, 100.0); /* short window: the ring wraps */
	Arm a = make_arm(IB_VEC3_ZERO, &m);
	for (int k = 0; k < 2000; ++k) jt_step(a.w, 1e-3);
	double speed = ibDot(ibSub(ibBody_GetAngularVelocity(a.arm), ibBody_GetAngularVelocity(a.base)), AXIS);
	print_message("hinge velocity servo: speed %.9f rad/s (target 2)\n", speed);
	JT_LE(fabs(speed - 2.0), 1e-3);
	JT_LE(fabs(ibJoint_GetMotorSpeed(a.j) - 2.0), 1e-3);
	ibDestroyWorld(a.w);
}

/* Linear motor on a horizontal slider (gravity across the rail): PD reaches the set-point. */
static void test_slider_position_servo(void** state)
{
	(void)state;
	ibWorldId w = jt_world(ibV3(0, 0, -G));
	ibBodyId base = jt_static(w, IB_VEC3_ZERO);
	ibBodyId cart = jt_box(w, ibV3(0, 0, 0), IB_QUAT_IDENTITY, ibV3(0.1, 0.1, 0.1), 250.0); /* 2 kg */
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_SLIDER);
	jd.bodyA = base;
	jd.bodyB = cart;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, IB_VEC3_ZERO, ibV3(1, 0, 0)), IB_OK);
	jd.motor = servo(IB_MOTOR_POSITION, 0.3, 200.0, 0.0, 0.2, 1, 1e3);
	ibJointId j = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(j));
	double worst = 0.0;
	for (int k = 1; k <= 4000; ++k) {
		jt_step(w, 1e-3);
		if (k >= 3000) worst = fmax(worst, fabs(ibBody_GetPosition(cart).x - 0.3));
	}
	print_message("slider servo: |x - 0.3| <= %.2e m over 3..4 s\n", worst);
	JT_LE(worst, 1e-4);
	JT_LE(fabs(ibBody_GetPosition(cart).z), 1e-6); /* gravity is carried by the rail */
	ibDestroyWorld(w);
}

/* Schedule 0 -> 1 rad from 0.5 s to 2.5 s, then held: the set-point is the linear interpolation. */
static void test_motor_schedule(void** state)
{
	(void)state;
	const double times[3] = {0.5, 2.5, 4.0}, values[3] = {0.0, 1.0, 1.0};
	ibMotorDef m = servo(IB_MOTOR_POSITION, 7.0, 500.0, 0.0, 0.05, 1, 1e3);
	m.scheduleTimes = times;
	m.scheduleValues = values;
	m.scheduleCount = 3;
	Arm a = make_arm(IB_VEC3_ZERO, &m);
	double ramp = 0.0, after = 0.0;
	for (int k = 1; k <= 5000; ++k) {
		jt_step(a.w, 1e-3);
		double t = ibWorld_GetTime(a.w);
		double s = t <= 0.5 ? 0.0 : t >= 2.5 ? 1.0 : 0.0 + (t - 0.5) / (2.5 - 0.5) * (1.0 - 0.0);
		if (k % 250 == 0) JT_LE(fabs(ibJoint_GetMotorTarget(a.j) - s), 1e-15);
		if (t > 1.0 && t <= 2.5) ramp = fmax(ramp, fabs(arm_angle(&a) - s));
		if (t > 3.5) after = fmax(after, fabs(arm_angle(&a) - 1.0));
	}
	print_message("schedule: tracking error %.2e rad on the ramp, %.2e rad after it\n", ramp, after);
	JT_LE(ramp, 0.05);
	JT_LE(after, 1e-3);
	ibDestroyWorld(a.w);
}

typedef struct SpringRun {
	double period, energyDrift, amp0, amp1;
} SpringRun;

/* Sphere (m = 1 kg) on a spring (k = 100 N/m, rest 1 m) to a static anchor, no gravity, released
 * 0.2 m stretched; amplitudes are the largest |x - l0| in the first period and in [2 s, 2 s + T]. */
static SpringRun run_spring(double damping, double h, double duration)
{
	const double k = 100.0, m = 1.0, l0 = 1.0;
	ibWorldId w = jt_world(IB_VEC3_ZERO);
	ibBodyId anchor = jt_static(w, IB_VEC3_ZERO);
	ibBodyId ball = jt_sphere(w, ibV3(l0 + 0.2, 0, 0), 0.05, m);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_SPRING);
	jd.bodyA = anchor;
	jd.bodyB = ball;
	jd.stiffness = k;
	jd.damping = damping;
	jd.distance = l0;
	assert_int_equal(ibJointDef_SetWorldAnchors(&jd, IB_VEC3_ZERO, ibV3(l0 + 0.2, 0, 0)), IB_OK);
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	double E0 = inv.kineticEnergy + inv.springEnergy, T0 = 2.0 * IB_PI * sqrt(m / k);
	assert_true(fabs(E0 - 0.5 * k * 0.04) < 1e-12);
	SpringRun r = {0};
	jtCrossings cx = {0};
	int n = (int)lround(duration / h);
	for (int i = 1; i <= n; ++i) {
		jt_step(w, h);
		double t = i * h, x = ibBody_GetPosition(ball).x - l0;
		jt_crossings_add(&cx, t, x);
		if (t <= T0) r.amp0 = fmax(r.amp0, fabs(x));
		if (t >= 2.0 && t <= 2.0 + T0) r.amp1 = fmax(r.amp1, fabs(x));
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		r.energyDrift = fmax(r.energyDrift, fabs(inv.kineticEnergy + inv.springEnergy - E0) / E0);
	}
	r.period = jt_crossings_period(&cx);
	ibDestroyWorld(w);
	return r;
}

static void test_spring(void** state)
{
	(void)state;
	const double omega = 10.0; /* sqrt(k/m) */
	SpringRun r = run_spring(0.0, 1e-4, 3.0);
	double relFreq = fabs(2.0 * IB_PI / r.period - omega) / omega;
	/* the force is held constant over a step (footnote 3): E grows by (1 + w^2 h^2 / 2) per step */
	print_message("spring: frequency error %.2e, energy drift %.2e over 3 s (h = 1e-4)\n", relFreq, r.energyDrift);
	JT_LE(relFreq, 1e-3);
	JT_LE(r.energyDrift, 0.02);
	/* mu = 2 N s/m: x = A e^{-t} (cos wd t + sin(wd t) / wd), wd = sqrt(w^2 - 1); its extrema are at
	 * t_n = n pi / wd with |x| = A e^{-t_n}; the largest in [2 s, 2 s + T] is the first t_n >= 2 s */
	SpringRun d = run_spring(2.0, 1e-4, 2.7);
	double wd = sqrt(omega * omega - 1.0), tn = ceil(2.0 * wd / IB_PI) * IB_PI / wd;
	double ratio = d.amp1 / d.amp0, expect = exp(-tn);
	print_message("damped spring: amplitude ratio %.5f, analytic %.5f (relative %.1e)\n", ratio, expect,
	              fabs(ratio - expect) / expect);
	assert_true(d.amp1 < d.amp0);
	JT_LE(fabs(ratio - expect) / expect, 0.02); /* the explicit force adds ~0.5 % amplitude here */
}

/* Invalid definitions: no joint, an error message, the joint count unchanged. */
static void test_invalid_defs(void** state)
{
	(void)state;
	ibWorldId w = jt_world(IB_VEC3_ZERO);
	ibBodyId s1 = jt_static(w, IB_VEC3_ZERO), s2 = jt_static(w, ibV3(1, 0, 0));
	ibBodyId d1 = jt_box(w, ibV3(0, 1, 0), IB_QUAT_IDENTITY, ibV3(0.1, 0.1, 0.1), 1000.0);
	ibBodyId d2 = jt_box(w, ibV3(0, 2, 0), IB_QUAT_IDENTITY, ibV3(0.1, 0.1, 0.1), 1000.0);
	ibJointDef good = ibDefaultJointDef(IB_JOINT_HINGE);
	good.bodyA = d1;
	good.bodyB = d2;
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &good)));
	const double badTimes[3] = {0.0, 2.0, 1.0}, vals[3] = {0, 1, 2};
	for (int c = 0; c < 8; ++c) {
		ibJointDef d = good;
		switch (c) {
		case 0: d.bodyB = d1; break;                           /* same body twice */
		case 1: d.bodyA = s1; d.bodyB = s2; break;             /* two static bodies */
		case 2: d.localAnchorA.y = NAN; break;                 /* NaN anchor */
		case 3: d.localAxisA = IB_VEC3_ZERO; break;            /* zero axis */
		case 4: d.type = IB_JOINT_BALL; d.motor.mode = IB_MOTOR_VELOCITY; break; /* motor on a ball */
		case 5:                                                /* schedule times not increasing */
			d.motor.mode = IB_MOTOR_POSITION;
			d.motor.scheduleTimes = badTimes;
			d.motor.scheduleValues = vals;
			d.motor.scheduleCount = 3;
			break;
		case 6: d.type = IB_JOINT_SPRING; d.stiffness = -1.0; break; /* negative stiffness */
		default: d.internalValue = 0; break;                   /* not from ibDefaultJointDef */
		}
		ibWorld_ClearError(w);
		ibJointId j = ibCreateJoint(w, &d);
		if (!IB_IS_NULL(j)) fail_msg("invalid definition %d was accepted", c);
		assert_false(ibJoint_IsValid(j));
		assert_true(strlen(ibWorld_GetLastError(w)) > 0);
		assert_int_equal(ibWorld_GetJointCount(w), 1);
	}
	ibJointDef d = good;
	assert_int_not_equal(ibJointDef_SetWorldAxes(&d, IB_VEC3_ZERO, AXIS), IB_OK);
	assert_int_not_equal(ibJointDef_SetWorldAnchors(&d, ibV3(NAN, 0, 0), IB_VEC3_ZERO), IB_OK);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hinge_position_servo), cmocka_unit_test(test_hinge_velocity_servo),
		cmocka_unit_test(test_slider_position_servo), cmocka_unit_test(test_motor_schedule),
		cmocka_unit_test(test_spring),              cmocka_unit_test(test_invalid_defs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
