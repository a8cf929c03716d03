/* Every joint type between two tumbling, falling boxes: after each step the position, angular and
 * velocity errors in the removed DOFs, measured here from the body states with our own formulas
 * (digest §4, §5), are within the solver tolerances; probes show free DOFs move and removed don't. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "joint_test_util.h"

#define TOL 1e-6     /* default positionTolerance = angularTolerance = velocityTolerance */
#define SLACK 1e-9   /* our own rounding (positions of tens of metres after the fall) */
#define H 0.01
#define STEPS 200
#define ENERGY_DRIFT 5e-3 /* E = KE + PE after step 1 kept to this x KE; measured <= 1.9e-3 (static-body pendulums), <= 2e-4 free pairs */
#define PROBE 2.0    /* free-body response of a probe (m/s or rad/s) */

typedef enum Kind { K_BALL, K_DIST, K_LINE, K_LINE_DIST, K_PLANE, K_LOCK, K_ALIGN, K_DBL } Kind;
typedef enum Probe { P_NONE, P_ANG_AXIS, P_ANG_RAND, P_LIN_AXIS, P_LIN_PERP_U, P_LIN_INPLANE, P_LIN_RAND } Probe;

typedef struct Case {
	const char* name;
	ibJointSolver method; /* IB_SOLVER_AUTO = the default settings */
	ibJointType type;
	double dist;
	bool staticA;
	Probe free[2]; /* free-DOF probes (P_NONE = none) */
} Case;

typedef struct Scene {
	ibWorldId w;
	ibBodyId A, B;
	ibJointId j;
	double dist, alpha0;
	ibVec3 la, lb, xa, xb; /* our own copies of the joint frames (user frames) */
	ibQuat qrel0;          /* qB(0)^-1 qA(0) */
	Kind kinds[2];
	int nk;
	jtRng rng;
} Scene;

typedef struct Err {
	double pos, ang, linVel, angVel;
} Err;

static void kinds_of(const Case* c, Scene* s)
{
	s->nk = 2;
	switch (c->type) {
	case IB_JOINT_BALL: s->kinds[0] = c->dist > 0 ? K_DIST : K_BALL; s->nk = 1; break;
	case IB_JOINT_LINE: s->kinds[0] = c->dist > 0 ? K_LINE_DIST : K_LINE; s->nk = 1; break;
	case IB_JOINT_PLANE: s->kinds[0] = K_PLANE; s->nk = 1; break;
	case IB_JOINT_ROTATION_LOCK: s->kinds[0] = K_LOCK; s->nk = 1; break;
	case IB_JOINT_AXIS_ALIGN: s->kinds[0] = K_ALIGN; s->nk = 1; break;
	case IB_JOINT_DOUBLE_ROTATION: s->kinds[0] = K_DBL; s->nk = 1; break;
	case IB_JOINT_HINGE: s->kinds[0] = K_BALL; s->kinds[1] = K_ALIGN; break;
	case IB_JOINT_CYLINDRICAL: s->kinds[0] = K_LINE; s->kinds[1] = K_ALIGN; break;
	case IB_JOINT_SLIDER: s->kinds[0] = K_LINE; s->kinds[1] = K_LOCK; break;
	case IB_JOINT_UNIVERSAL: s->kinds[0] = K_BALL; s->kinds[1] = K_DBL; break;
	default: s->kinds[0] = K_BALL; s->kinds[1] = K_LOCK; break; /* fixed */
	}
}

static void build(Scene* s, const Case* c, uint64_t seed)
{
	s->rng.s = seed;
	jtRng* r = &s->rng;
	kinds_of(c, s);
	s->w = jt_world(ibV3(0, 0, -9.81));
	ibSolverSettings ss = ibWorld_GetSolverSettings(s->w);
	ss.method = c->method;
	assert_int_equal(ibWorld_SetSolverSettings(s->w, &ss), IB_OK);
	s->A = jt_box(s->w, jt_rand_vec(r, 0.2), jt_rand_quat(r), ibV3(0.3, 0.2, 0.15), c->staticA ? 0.0 : 700.0);
	s->B = jt_box(s->w, ibAdd(ibV3(0.6, 0.2, -0.1), jt_rand_vec(r, 0.1)), jt_rand_quat(r), ibV3(0.12, 0.25, 0.18), 1800.0);
	ibVec3 anchor = ibAdd(ibScale(0.5, ibAdd(ibBody_GetPosition(s->A), ibBody_GetPosition(s->B))), jt_rand_vec(r, 0.1));
	ibVec3 axis = jt_rand_unit(r);
	bool twoAxes = c->type == IB_JOINT_UNIVERSAL || c->type == IB_JOINT_DOUBLE_ROTATION;
	ibVec3 axisB = twoAxes ? jt_rand_perp(r, axis) : axis;
	ibVec3 anchorA = anchor, anchorB = anchor;
	switch (s->kinds[0]) {
	case K_DIST: /* anchors near the COMs, at the distance c->dist (about the COM distance) */
		anchorA = ibAdd(ibBody_GetWorldCenterOfMass(s->A), jt_rand_vec(r, 0.05));
		anchorB = ibMulAdd(anchorA, c->dist, ibNormalize(ibSub(ibBody_GetWorldCenterOfMass(s->B), anchorA)));
		break;
	case K_LINE: anchorB = ibMulAdd(anchorA, jt_uniform(r, -0.1, 0.1), axis); break;
	case K_LINE_DIST: anchorB = ibMulAdd(ibMulAdd(anchorA, jt_uniform(r, -0.1, 0.1), axis), c->dist, jt_rand_perp(r, axis)); break;
	case K_PLANE: anchorB = ibMulAdd(ibMulAdd(anchorA, c->dist, axis), 0.1, jt_rand_perp(r, axis)); break;
	default: break;
	}
	ibJointDef jd = ibDefaultJointDef(c->type);
	jd.bodyA = s->A;
	jd.bodyB = s->B;
	jd.distance = c->dist;
	assert_int_equal(ibJointDef_SetWorldAnchors(&jd, anchorA, anchorB), IB_OK);
	assert_int_equal(ibJointDef_SetWorldAxes(&jd, axis, axisB), IB_OK);
	s->j = ibCreateJoint(s->w, &jd);
	assert_true(ibJoint_IsValid(s->j));
	s->dist = c->dist;
	s->la = ibBody_GetLocalPoint(s->A, anchorA);
	s->lb = ibBody_GetLocalPoint(s->B, anchorB);
	s->xa = jt_local_vector(s->A, axis);
	s->xb = jt_local_vector(s->B, axisB);
	s->qrel0 = ibQuatMul(ibQuatConj(ibBody_GetRotation(s->B)), ibBody_GetRotation(s->A));
	s->alpha0 = jt_angle_between(axis, axisB);
	if (!c->staticA) {
		assert_int_equal(ibBody_SetLinearVelocity(s->A, jt_rand_vec(r, 3.0)), IB_OK);
		assert_int_equal(ibBody_SetAngularVelocity(s->A, jt_rand_vec(r, 3.0)), IB_OK);
	}
	assert_int_equal(ibBody_SetLinearVelocity(s->B, jt_rand_vec(r, 3.0)), IB_OK);
	assert_int_equal(ibBody_SetAngularVelocity(s->B, jt_rand_vec(r, 3.0)), IB_OK);
}

/* Errors of every basic joint from the body states (digest §4.1-4.7). */
static Err measure(const Scene* s)
{
	Err e = {0};
	ibVec3 a = ibBody_GetWorldPoint(s->A, s->la), b = ibBody_GetWorldPoint(s->B, s->lb);
	ibVec3 xA = ibNormalize(ibBody_GetWorldVector(s->A, s->xa)), xB = ibNormalize(ibBody_GetWorldVector(s->B, s->xb));
	ibVec3 vBb = ibBody_GetPointVelocity(s->B, b), vAa = ibBody_GetPointVelocity(s->A, a);
	ibVec3 dw = ibSub(ibBody_GetAngularVelocity(s->B), ibBody_GetAngularVelocity(s->A));
	for (int k = 0; k < s->nk; ++k) {
		ibVec3 lineE = jt_reject(ibSub(b, a), xA); /* b minus its foot point on A's line */
		ibVec3 vFoot = ibSub(vBb, ibBody_GetPointVelocity(s->A, ibSub(b, lineE)));
		double p = 0, v = 0, an = 0, av = 0;
		switch (s->kinds[k]) {
		case K_BALL: p = ibDistance(a, b); v = ibLength(ibSub(vBb, vAa)); break;
		case K_DIST: {
			ibVec3 u = ibNormalize(ibSub(b, a));
			p = fabs(ibDistance(a, b) - s->dist);
			v = fabs(ibDot(u, ibSub(vBb, vAa)));
		} break;
		case K_LINE: p = ibLength(lineE); v = ibLength(jt_reject(vFoot, xA)); break;
		case K_LINE_DIST: p = fabs(ibLength(lineE) - s->dist); v = fabs(ibDot(ibNormalize(lineE), vFoot)); break;
		case K_PLANE: {
			double sd = ibDot(ibSub(b, a), xA) - s->dist;
			p = fabs(sd);
			v = fabs(ibDot(xA, ibSub(vBb, ibBody_GetPointVelocity(s->A, ibMulAdd(b, -sd, xA)))));
		} break;
		case K_LOCK: {
			ibQuat q = ibQuatMul(ibQuatMul(ibBody_GetRotation(s->B), s->qrel0), ibQuatConj(ibBody_GetRotation(s->A)));
			an = jt_quat_angle(q);
			av = ibLength(dw);
		} break;
		case K_ALIGN: an = jt_angle_between(xA, xB); av = ibLength(jt_reject(dw, xA)); break;
		case K_DBL:
			an = fabs(jt_angle_between(xA, xB) - s->alpha0);
			av = fabs(ibDot(ibNormalize(ibCross(xA, xB)), dw));
			break;
		}
		e.pos = fmax(e.pos, p);
		e.linVel = fmax(e.linVel, v);
		e.ang = fmax(e.ang, an);
		e.angVel = fmax(e.angVel, av);
	}
	return e;
}

static void check(const Scene* s)
{
	Err e = measure(s);
	JT_LE(e.pos, TOL + SLACK);
	JT_LE(e.ang, TOL + SLACK);
	JT_LE(e.linVel, TOL + SLACK);
	JT_LE(e.angVel, TOL + SLACK);
	double lp = ibJoint_GetPositionError(s->j), la = ibJoint_GetAngularError(s->j), lv = ibJoint_GetVelocityError(s->j);
	JT_LE(lp, TOL + 1e-12);
	JT_LE(la, TOL + 1e-12);
	JT_LE(lv, TOL + 1e-12);
	JT_LE(fabs(lp - e.pos), SLACK);
	JT_LE(fabs(la - e.ang), SLACK);
	JT_LE(fabs(lv - fmax(e.linVel, e.angVel)), SLACK);
	assert_true(ibWorld_GetStepStats(s->w).converged);
}

/* ----------------------------------------------------------------------------- probes */
static void apply_angular(const Scene* s, ibVec3 dir, double speed)
{
	ibVec3 L = ibMat3_MulV(jt_world_inertia(s->B), ibScale(speed, dir)); /* free body: dw = speed dir */
	assert_int_equal(ibBody_ApplyAngularImpulse(s->B, L), IB_OK);
}

static void apply_linear(const Scene* s, ibVec3 dir, double speed, ibVec3 at)
{
	ibVec3 p = ibScale(ibBody_GetMass(s->B) * speed, dir); /* free body at its COM: dv = speed dir */
	assert_int_equal(ibBody_ApplyImpulseAtPoint(s->B, p, at), IB_OK);
}

static bool is_angular(Probe p) { return p == P_ANG_AXIS || p == P_ANG_RAND; }

/* Relative velocity of the probed free DOF: angular (wB - wA).dir, or of B's anchor relative to A's
 * matching point (its anchor for ball/distance, the coincident point otherwise) along dir. */
static double free_dof_speed(const Scene* s, Probe p, ibVec3 dir)
{
	if (p == P_ANG_AXIS || p == P_LIN_AXIS) dir = ibNormalize(ibBody_GetWorldVector(s->A, s->xa));
	if (is_angular(p)) return ibDot(dir, ibSub(ibBody_GetAngularVelocity(s->B), ibBody_GetAngularVelocity(s->A)));
	ibVec3 b = ibBody_GetWorldPoint(s->B, s->lb);
	ibVec3 pa = (s->kinds[0] == K_BALL || s->kinds[0] == K_DIST) ? ibBody_GetWorldPoint(s->A, s->la) : b;
	return ibDot(dir, ibSub(ibBody_GetPointVelocity(s->B, b), ibBody_GetPointVelocity(s->A, pa)));
}

static ibVec3 probe_dir(Scene* s, Probe p)
{
	ibVec3 xA = ibNormalize(ibBody_GetWorldVector(s->A, s->xa));
	ibVec3 u = ibNormalize(ibSub(ibBody_GetWorldPoint(s->B, s->lb), ibBody_GetWorldPoint(s->A, s->la)));
	switch (p) {
	case P_ANG_AXIS:
	case P_LIN_AXIS: return xA;
	case P_LIN_PERP_U: return jt_rand_perp(&s->rng, u);
	case P_LIN_INPLANE: return jt_rand_perp(&s->rng, xA);
	default: return jt_rand_unit(&s->rng);
	}
}

/* Impulses in removed directions of every basic joint of the scene. */
static void apply_removed(Scene* s)
{
	ibVec3 a = ibBody_GetWorldPoint(s->A, s->la), b = ibBody_GetWorldPoint(s->B, s->lb);
	ibVec3 xA = ibNormalize(ibBody_GetWorldVector(s->A, s->xa)), xB = ibNormalize(ibBody_GetWorldVector(s->B, s->xb));
	for (int k = 0; k < s->nk; ++k) {
		switch (s->kinds[k]) {
		case K_BALL: apply_linear(s, jt_rand_unit(&s->rng), PROBE, b); break;
		case K_DIST: apply_linear(s, ibNormalize(ibSub(b, a)), PROBE, b); break;
		case K_LINE: apply_linear(s, jt_rand_perp(&s->rng, xA), PROBE, b); break;
		case K_LINE_DIST: apply_linear(s, ibNormalize(jt_reject(ibSub(b, a), xA)), PROBE, b); break;
		case K_PLANE: apply_linear(s, xA, PROBE, b); break;
		case K_LOCK: apply_angular(s, jt_rand_unit(&s->rng), PROBE); break;
		case K_ALIGN: apply_angular(s, jt_rand_perp(&s->rng, xA), PROBE); break;
		case K_DBL: apply_angular(s, ibNormalize(ibCross(xA, xB)), PROBE); break;
		}
	}
}

static void test_joint_type(void** state)
{
	const Case* c = *state;
	for (int pi = 0; pi < 2; ++pi) {
		if (pi > 0 && c->free[pi] == P_NONE) break;
		uint64_t seed = 0x9e3779b97f4a7c15ull;
		for (const char* n = c->name; *n && *n != '/'; ++n) seed = seed * 1099511628211ull + (uint64_t)*n;
		Scene R, P; /* reference and probed copies of the same scene */
		build(&R, c, seed);
		build(&P, c, seed);
		double e1 = 0.0, ke1 = 0.0, drift = 0.0;
		for (int i = 0; i < STEPS; ++i) {
			jt_step(R.w, H);
			jt_step(P.w, H);
			check(&P);
			ibWorldInvariants inv;
			assert_int_equal(ibWorld_ComputeInvariants(P.w, &inv), IB_OK);
			double e = inv.kineticEnergy + inv.potentialEnergy;
			if (i == 0) e1 = e, ke1 = inv.kineticEnergy;
			drift = fmax(drift, fabs(e - e1) / ke1);
		}
		/* energy after the first (consistency) step is kept: free joints do no work */
		if (pi == 0) print_message("%-18s energy drift %.2e of the kinetic energy\n", c->name, drift);
		JT_LE(drift, ENERGY_DRIFT);
		/* both copies are bit-identical (determinism) */
		ibVec3 dpos = ibSub(ibBody_GetPosition(R.B), ibBody_GetPosition(P.B));
		assert_true(dpos.x == 0.0 && dpos.y == 0.0 && dpos.z == 0.0);
		Probe fp = c->free[pi];
		if (fp != P_NONE) {
			ibVec3 dir = probe_dir(&P, fp);
			if (is_angular(fp)) apply_angular(&P, dir, PROBE);
			else apply_linear(&P, dir, PROBE, ibBody_GetWorldCenterOfMass(P.B));
			jt_step(R.w, H);
			jt_step(P.w, H);
			check(&P);
			double moved = fabs(free_dof_speed(&P, fp, dir) - free_dof_speed(&R, fp, dir));
			if (!(moved > 1e-3 * PROBE)) fail_msg("%s: free DOF (probe %d) moved only %g", c->name, (int)fp, moved);
		}
		if (pi == 0) {
			apply_removed(&P);
			for (int i = 0; i < 5; ++i) {
				jt_step(P.w, H);
				check(&P);
			}
		}
		ibDestroyWorld(R.w);
		ibDestroyWorld(P.w);
	}
}

/* Every case with the default settings and with the iterative method forced. */
#define P2(a, b) {a, b}
#define CASES(name, type, dist, staticA, probes) \
	{name, IB_SOLVER_AUTO, type, dist, staticA, probes}, {name "/iterative", IB_SOLVER_ITERATIVE, type, dist, staticA, probes}

static const Case cases[] = {
	CASES("ball", IB_JOINT_BALL, 0.0, false, P2(P_ANG_RAND, P_NONE)),
	CASES("ball_distance", IB_JOINT_BALL, 0.6, false, P2(P_LIN_PERP_U, P_ANG_RAND)),
	CASES("ball_static_body", IB_JOINT_BALL, 0.0, true, P2(P_ANG_RAND, P_NONE)),
	CASES("line", IB_JOINT_LINE, 0.0, false, P2(P_LIN_AXIS, P_ANG_RAND)),
	CASES("line_distance", IB_JOINT_LINE, 0.2, false, P2(P_LIN_AXIS, P_ANG_RAND)),
	CASES("plane", IB_JOINT_PLANE, 0.0, false, P2(P_LIN_INPLANE, P_ANG_RAND)),
	CASES("plane_offset", IB_JOINT_PLANE, 0.15, false, P2(P_LIN_INPLANE, P_NONE)),
	CASES("rotation_lock", IB_JOINT_ROTATION_LOCK, 0.0, false, P2(P_LIN_RAND, P_NONE)),
	CASES("axis_align", IB_JOINT_AXIS_ALIGN, 0.0, false, P2(P_ANG_AXIS, P_LIN_RAND)),
	CASES("double_rotation", IB_JOINT_DOUBLE_ROTATION, 0.0, false, P2(P_ANG_AXIS, P_LIN_RAND)),
	CASES("hinge", IB_JOINT_HINGE, 0.0, false, P2(P_ANG_AXIS, P_NONE)),
	CASES("hinge_static_body", IB_JOINT_HINGE, 0.0, true, P2(P_ANG_AXIS, P_NONE)),
	CASES("cylindrical", IB_JOINT_CYLINDRICAL, 0.0, false, P2(P_ANG_AXIS, P_LIN_AXIS)),
	CASES("slider", IB_JOINT_SLIDER, 0.0, false, P2(P_LIN_AXIS, P_NONE)),
	CASES("universal", IB_JOINT_UNIVERSAL, 0.0, false, P2(P_ANG_AXIS, P_NONE)),
	CASES("fixed", IB_JOINT_FIXED, 0.0, false, P2(P_NONE, P_NONE)),
};

#define CASE(i) {cases[i].name, test_joint_type, NULL, NULL, (void*)&cases[i]}

int main(void)
{
	struct CMUnitTest tests[sizeof cases / sizeof cases[0]];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) tests[i] = (struct CMUnitTest)CASE(i);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
