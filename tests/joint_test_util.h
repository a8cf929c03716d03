/* Shared helpers of the joint tests (static inline only). Include after <cmocka.h> and ibdyn.h. */
#ifndef IBDYN_TESTS_JOINT_TEST_UTIL_H
#define IBDYN_TESTS_JOINT_TEST_UTIL_H

#include <math.h>
#include <stdint.h>

/* Fail with both values printed when v > bound (or v is NaN). */
#define JT_LE(v, bound)                                                                          \
	do {                                                                                         \
		double jt_v_ = (v), jt_b_ = (bound);                                                     \
		if (!(jt_v_ <= jt_b_)) fail_msg("%s = %.17g exceeds %s = %.17g", #v, jt_v_, #bound, jt_b_); \
	} while (0)

/* ---------------------------------------------------------------- fixed-seed random numbers */
typedef struct jtRng {
	uint64_t s;
} jtRng;

static inline double jt_uniform(jtRng* r, double lo, double hi)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	uint64_t x = r->s * 2685821657736338717ull;
	return lo + (hi - lo) * ((double)(x >> 11) * (1.0 / 9007199254740992.0));
}

static inline ibVec3 jt_rand_vec(jtRng* r, double a)
{
	return ibV3(jt_uniform(r, -a, a), jt_uniform(r, -a, a), jt_uniform(r, -a, a));
}

static inline ibVec3 jt_rand_unit(jtRng* r)
{
	for (;;) {
		ibVec3 v = jt_rand_vec(r, 1.0);
		double l = ibLength(v);
		if (l > 0.1 && l <= 1.0) return ibScale(1.0 / l, v);
	}
}

static inline ibQuat jt_rand_quat(jtRng* r)
{
	return ibQuatFromAxisAngle(jt_rand_unit(r), jt_uniform(r, -IB_PI, IB_PI));
}

/* Unit vector perpendicular to the unit n, rotated by a random angle about n. */
static inline ibVec3 jt_rand_perp(jtRng* r, ibVec3 n)
{
	return ibRotate(ibQuatFromAxisAngle(n, jt_uniform(r, -IB_PI, IB_PI)), ibPerpendicular(n));
}

/* ---------------------------------------------------------------- scene construction */
static inline ibWorldId jt_world(ibVec3 gravity)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.gravity = gravity;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

/* Box body; density > 0 gives a dynamic body, density 0 a static one. */
static inline ibBodyId jt_box(ibWorldId w, ibVec3 pos, ibQuat rot, ibVec3 half, double density)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = density > 0.0 ? IB_BODY_DYNAMIC : IB_BODY_STATIC;
	bd.position = pos;
	bd.rotation = rot;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_true(ibBody_IsValid(b));
	ibShapeDef sd = ibDefaultShapeDef();
	if (density > 0.0) sd.density = density;
	ibBox box = {half};
	assert_true(ibShape_IsValid(ibCreateBoxShape(b, &sd, &box)));
	return b;
}

/* Dynamic sphere of the given radius and explicit mass. */
static inline ibBodyId jt_sphere(ibWorldId w, ibVec3 pos, double radius, double mass)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = pos;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_true(ibBody_IsValid(b));
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = mass;
	ibSphere s = {radius};
	assert_true(ibShape_IsValid(ibCreateSphereShape(b, &sd, &s)));
	return b;
}

static inline ibBodyId jt_static(ibWorldId w, ibVec3 pos)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.position = pos;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_true(ibBody_IsValid(b));
	return b;
}

static inline void jt_step(ibWorldId w, double h)
{
	ibResult r = ibWorld_Step(w, h);
	if (r != IB_OK) fail_msg("ibWorld_Step: %s (%s)", ibResultString(r), ibWorld_GetLastError(w));
}

/* ---------------------------------------------------------------- kinematics measured from body states */
static inline ibVec3 jt_local_vector(ibBodyId b, ibVec3 worldVec) { return ibInvRotate(ibBody_GetRotation(b), worldVec); }

/* Rotation angle (rad, in [0, pi]) of a unit quaternion. */
static inline double jt_quat_angle(ibQuat q)
{
	double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
	return 2.0 * atan2(s, fabs(q.w));
}

static inline double jt_angle_between(ibVec3 a, ibVec3 b) { return atan2(ibLength(ibCross(a, b)), ibDot(a, b)); }

/* v with its component along the unit x removed. */
static inline ibVec3 jt_reject(ibVec3 v, ibVec3 x) { return ibMulAdd(v, -ibDot(v, x), x); }

/* Inertia tensor of a body in world coordinates (kg m^2). */
static inline ibMat3 jt_world_inertia(ibBodyId b)
{
	ibMassData md = ibBody_GetMassData(b);
	ibMat3 R = ibMat3_FromQuat(ibBody_GetRotation(b));
	return ibMat3_Mul(R, ibMat3_Mul(md.inertia, ibMat3_Transpose(R)));
}

/* ---------------------------------------------------------------- analysis */
/* Complete elliptic integral of the first kind, K(k) = pi / (2 AGM(1, sqrt(1 - k^2))). */
static inline double jt_elliptic_k(double k)
{
	double a = 1.0, g = sqrt(1.0 - k * k);
	for (int i = 0; i < 60 && fabs(a - g) > 1e-16 * a; ++i) {
		double an = 0.5 * (a + g);
		g = sqrt(a * g);
		a = an;
	}
	return IB_PI / (2.0 * a);
}

/* Zero-crossing recorder: linear interpolation of the crossing time of a sampled signal. */
typedef struct jtCrossings {
	double prevT, prevX;
	bool havePrev;
	int count;
	double first, last; /* times of the first and last crossing */
} jtCrossings;

static inline void jt_crossings_add(jtCrossings* c, double t, double x)
{
	if (c->havePrev && ((c->prevX < 0.0 && x >= 0.0) || (c->prevX > 0.0 && x <= 0.0))) {
		double tc = c->prevT + (t - c->prevT) * c->prevX / (c->prevX - x);
		if (c->count == 0) c->first = tc;
		c->last = tc;
		c->count++;
	}
	c->prevT = t;
	c->prevX = x;
	c->havePrev = true;
}

/* Period from all crossings (two per period). */
static inline double jt_crossings_period(const jtCrossings* c) { return 2.0 * (c->last - c->first) / (c->count - 1); }

/* A box link from p to q (cross-section 0.1 m, density 500 kg/m^3) for the loop models. */
static inline ibBodyId jt_link(ibWorldId w, ibVec3 p, ibVec3 q)
{
	ibVec3 d = ibSub(q, p);
	double len = ibLength(d);
	ibVec3 x = ibV3(1, 0, 0), u = ibScale(1.0 / len, d);
	ibVec3 ax = ibCross(x, u);
	double s = ibLength(ax);
	ibQuat rot = s > 1e-12 ? ibQuatFromAxisAngle(ibScale(1.0 / s, ax), atan2(s, ibDot(x, u))) : IB_QUAT_IDENTITY;
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibScale(0.5, ibAdd(p, q));
	bd.rotation = rot;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.density = 500.0;
	ibBox box = {{0.5 * len, 0.05, 0.05}};
	assert_true(ibShape_IsValid(ibCreateBoxShape(b, &sd, &box)));
	return b;
}

/* A hinge between a and b at a world point with a world axis. */
static inline ibJointId jt_hinge(ibWorldId w, ibBodyId a, ibBodyId b, ibVec3 at, ibVec3 axis)
{
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = a;
	jd.bodyB = b;
	assert_int_equal(ibJointDef_SetWorldFrame(&jd, at, axis), IB_OK);
	ibJointId j = ibCreateJoint(w, &jd);
	assert_true(ibJoint_IsValid(j));
	return j;
}

/* A joint-only world (no collisions) with the given solver method and gravity. */
static inline ibWorldId jt_world_method(ibJointSolver method, ibVec3 g)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false;
	wd.gravity = g;
	wd.solver.method = method;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	return w;
}

/* Rebound ratio -v_after / v_before at each sign change of v (a stop's velocity jump), up to 4. */
typedef struct jtRebounds {
	double prev, ratio[4];
	int n;
} jtRebounds;

static inline void jt_track(jtRebounds* r, double v)
{
	if (v * r->prev < 0.0 && r->n < 4) r->ratio[r->n++] = -v / r->prev;
	r->prev = v;
}

#endif
