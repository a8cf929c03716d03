/* Rolling spheres (static friction on a curved contact, docs/contacts.md "Rolling spheres").
 *
 * A solid sphere (r = 0.1 m, 1 kg) on a static box ground, default contact settings:
 * - rolling without slip on flat ground keeps its speed and its height (no rolling resistance in the
 *   model): at 60 Hz and at 1 kHz, for 0.05 ... 2 m/s, over 2 s;
 * - on a slope of angle theta with enough friction (mu_s = 1 >= 2/7 tan theta) it rolls down with
 *   a = 5/7 g sin theta (I = 2/5 m r^2), distance 1/2 a t^2 after t.
 * Before the fix (carried material points: the bottom point of a rolling sphere runs on a cycloid over a
 * step) the flat roll at 60 Hz ended at 0.29 m/s from 0.1 m/s and at 0.78 m/s from 2 m/s and sank by up to
 * 5.7 mm. Measured after it: speeds and heights kept to rounding (the heights to 5e-7 m). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "ibdyn/ibdyn.h"

#define G 9.81
#define R 0.1

static double ground_mu = 0.5; /* the ground's friction coefficients */

/* a world with a static ground box whose top face passes through the origin with normal (-sin t, 0, cos t) */
static ibWorldId world_with_slope(double theta)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, -G);
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_STATIC;
	ibVec3 up = ibV3(-sin(theta), 0, cos(theta));
	bd.position = ibV3(-0.5 * up.x, 0, -0.5 * up.z);
	bd.rotation = (ibQuat){cos(-theta / 2), 0, sin(-theta / 2), 0}; /* about y by -theta: x tilts up */
	ibBodyId g = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, ground_mu, ground_mu};
	ibBox box = {ibV3(100, 100, 0.5)};
	assert_true(ibShape_IsValid(ibCreateBoxShape(g, &sd, &box)));
	return w;
}

enum { SPHERE, CAPSULE, CYLINDER };
static const char* kind_name[] = {"sphere", "capsule", "cylinder"};

/* a sphere or a capsule of radius R and half length halfLen lying with its axis along y */
static ibBodyId roller(ibWorldId w, int kind, double halfLen, ibVec3 p, ibVec3 v, ibVec3 om)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.linearVelocity = v;
	bd.angularVelocity = om;
	if (kind != SPHERE) bd.rotation = ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.5 * 3.14159265358979323846);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	sd.material = (ibMaterial){0.0, 0.5, 0.5};
	if (kind == SPHERE) {
		ibSphere s = {R};
		assert_true(ibShape_IsValid(ibCreateSphereShape(b, &sd, &s)));
	} else if (kind == CYLINDER) {
		ibCylinder c = {R, halfLen};
		assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &c)));
	} else {
		ibCapsule c = {R, halfLen};
		assert_true(ibShape_IsValid(ibCreateCapsuleShape(b, &sd, &c)));
	}
	return b;
}

/* the moment of inertia about the rolling axis (y) over m r^2 */
static double inertia_ratio(ibBodyId b)
{
	ibMassData md = ibBody_GetMassData(b);
	ibQuat q = ibBody_GetRotation(b);
	ibVec3 e = ibInvRotate(q, ibV3(0, 1, 0)); /* world y in the body frame */
	return ibDot(e, ibMat3_MulV(md.inertia, e)) / (md.mass * R * R);
}

static void roll_flat(int kind, double halfLen, double v0, double h)
{
	ibWorldId w = world_with_slope(0.0);
	ibBodyId b = roller(w, kind, halfLen, ibV3(0, 0, R), ibV3(v0, 0, 0), ibV3(0, v0 / R, 0));
	double dz = 0.0;
	int n = (int)lround(2.0 / h);
	for (int k = 0; k < n; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		dz = fmax(dz, fabs(ibBody_GetPosition(b).z - R));
	}
	ibVec3 v = ibBody_GetLinearVelocity(b), om = ibBody_GetAngularVelocity(b);
	double x = ibBody_GetPosition(b).x;
	printf("%s rolling at %g m/s, h = %g: after 2 s v = %.9f m/s, w r = %.9f m/s, x = %.9f m (%.9f), |z - r| <= %.3e m\n", kind_name[kind], v0, h, v.x,
	       om.y * R, x, 2.0 * v0, dz);
	assert_true(fabs(v.x - v0) <= 1e-6 * fmax(1.0, v0));
	assert_true(fabs(om.y * R - v0) <= 1e-6 * fmax(1.0, v0));
	assert_true(fabs(x - 2.0 * v0) <= 1e-5);
	assert_true(dz <= 1e-6);
	ibDestroyWorld(w);
}

static void test_roll_flat_60hz(void** state)
{
	(void)state;
	const double v[] = {0.05, 0.1, 0.5, 1.0, 2.0};
	for (int i = 0; i < 5; ++i) roll_flat(SPHERE, 0.0, v[i], 1.0 / 60.0);
}

static void test_roll_flat_1khz(void** state)
{
	(void)state;
	roll_flat(SPHERE, 0.0, 0.5, 1e-3);
	roll_flat(SPHERE, 0.0, 2.0, 1e-3);
}

/* a capsule lying on its side rolls like a cylinder: its two points are below the ends of its segment */
static void test_capsule_roll_flat(void** state)
{
	(void)state;
	const double v[] = {0.05, 0.5, 2.0};
	for (int i = 0; i < 3; ++i) roll_flat(CAPSULE, 0.2, v[i], 1.0 / 60.0);
	roll_flat(CAPSULE, 0.2, 0.5, 1e-3);
}

/* so does a cylinder: its round points are below the two rims, found again at every pose; the rim samples
 * next to them (carried points) are left out */
static void test_cylinder_roll_flat(void** state)
{
	(void)state;
	const double v[] = {0.05, 0.5, 2.0};
	for (int i = 0; i < 3; ++i) roll_flat(CYLINDER, 0.2, v[i], 1.0 / 60.0);
	roll_flat(CYLINDER, 0.2, 0.5, 1e-3);
}

static void roll_down_slope(int kind, double halfLen)
{
	const double theta = 15.0 * 3.14159265358979323846 / 180.0, h = 1.0 / 60.0, T = 1.0;
	ibWorldId w = world_with_slope(theta);
	ibVec3 up = ibV3(-sin(theta), 0, cos(theta)), down = ibV3(-cos(theta), 0, -sin(theta));
	ibVec3 p0 = ibScale(R, up);
	ibBodyId b = roller(w, kind, halfLen, p0, ibV3(0, 0, 0), ibV3(0, 0, 0));
	double kr = inertia_ratio(b); /* a = g sin t / (1 + I / (m r^2)): 5/7 g sin t for a sphere */
	int n = (int)lround(T / h);
	for (int k = 0; k < n; ++k) assert_int_equal(ibWorld_Step(w, h), IB_OK);
	ibVec3 d = ibSub(ibBody_GetPosition(b), p0);
	double s = ibDot(d, down), off = ibDot(d, up);
	double a = G * sin(theta) / (1.0 + kr), want = 0.5 * a * T * T;
	double vs = ibDot(ibBody_GetLinearVelocity(b), down);
	printf("%s, slope 15 deg, 60 Hz, 1 s: rolled %.6f m (g sin t / (1 + %.4f): %.6f), speed %.6f (%.6f), off the slope %.3e m\n",
	       kind_name[kind], s, kr, want, vs, a * T, off);
	assert_true(fabs(s - want) <= 1e-3 * want);
	assert_true(fabs(vs - a * T) <= 1e-3 * a * T);
	assert_true(fabs(off) <= 1e-5);
	ibDestroyWorld(w);
}

static void test_roll_down_slope(void** state)
{
	(void)state;
	roll_down_slope(SPHERE, 0.0);
	roll_down_slope(CAPSULE, 0.2);
	roll_down_slope(CYLINDER, 0.2);
}

/* A ball rolling on a dynamic board (100 kg, 10 m x 10 m x 0.2 m, a box or the hull of its corners, resting
 * on the static ground): the board is created first, so the ball is body B of its pair. Its normal turned with the ball before
 * (session 18): from 2 m/s it slowed to 0.77 m/s in 2 s and sank 5.5 mm, as on a static ground before the
 * round points. It now turns with the board (contact_set.c normal_body). */
static void test_roll_on_dynamic_board(void** state)
{
	(void)state;
	const double v[] = {0.1, 2.0, 0.1, 2.0};
	for (int i = 0; i < 4; ++i) {
		const bool hull = i >= 2; /* the board as a box, then as the convex hull of its corners */
		ibWorldId w = world_with_slope(0.0);
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(0, 0, 0.1);
		ibBodyId board = ibCreateBody(w, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		sd.mass = 100.0;
		sd.material = (ibMaterial){0.0, 0.5, 0.5};
		ibBox box = {ibV3(5, 5, 0.1)};
		ibVec3 corners[8];
		for (int k = 0; k < 8; ++k) corners[k] = ibV3(k & 1 ? 5 : -5, k & 2 ? 5 : -5, k & 4 ? 0.1 : -0.1);
		ibHull hd = {corners, 8};
		assert_true(ibShape_IsValid(hull ? ibCreateHullShape(board, &sd, &hd) : ibCreateBoxShape(board, &sd, &box)));
		ibBodyId b = roller(w, SPHERE, 0.0, ibV3(0, 0, 0.2 + R), ibV3(v[i], 0, 0), ibV3(0, v[i] / R, 0));
		double dz = 0.0;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
			dz = fmax(dz, fabs(ibBody_GetPosition(b).z - 0.2 - R));
		}
		ibVec3 vb = ibBody_GetLinearVelocity(b);
		double moved = ibLength(ibSub(ibBody_GetPosition(board), ibV3(0, 0, 0.1)));
		printf("ball rolling at %g m/s on a dynamic board (%s), 60 Hz: after 2 s v = %.9f m/s, w r = %.9f m/s, |z - z0| <= %.3e m, "
		       "board moved %.3e m\n",
		       v[i], hull ? "hull" : "box", vb.x, ibBody_GetAngularVelocity(b).y * R, dz, moved);
		assert_true(fabs(vb.x - v[i]) <= 1e-6);
		assert_true(dz <= 1e-6);
		assert_true(moved <= 1e-6);
		ibDestroyWorld(w);
	}
}

/* Two frictionless balls (or capsules lying side by side, a lying cylinder and a ball, or two lying cylinders
 * side by side: session 19, 4.4 cm before) touching on a
 * frictionless ground, one of them spinning about the axis across the pair: nothing should move. With the
 * normal turning with the spinning body (before session 18), at 20 rad/s they pushed each other 4.4 cm
 * apart in 2 s; the normal is now the line of their cores (across the cylinder's axis). */
static void test_spinning_neighbours(void** state)
{
	(void)state;
	ground_mu = 0.0;
	for (int kind = SPHERE; kind <= CYLINDER + 1; ++kind) {
		ibWorldId w = world_with_slope(0.0);
		int ka = kind > CYLINDER ? CYLINDER : kind, kb = kind > CYLINDER ? CYLINDER : kind == CYLINDER ? SPHERE : kind;
		/* the cylinder case: a cylinder lying beside the spinning ball (created first, so that the ball
		 * is body B of the pair) */
		ibBodyId a = roller(w, ka, 0.2, ibV3(-R, 0, R), ibV3(0, 0, 0), ibV3(0, 0, 0));
		ibBodyId b = roller(w, kb, 0.2, ibV3(R, 0, R), ibV3(0, 0, 0), ibV3(0, 20.0, 0));
		ibBodyId both[2] = {a, b};
		for (int i = 0; i < 2; ++i) {
			ibShapeId s;
			assert_int_equal(ibBody_GetShapes(both[i], &s, 1), 1);
			ibShape_SetMaterial(s, (ibMaterial){0.0, 0.0, 0.0});
		}
		double dev = 0.0;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
			dev = fmax(dev, ibLength(ibSub(ibBody_GetPosition(a), ibV3(-R, 0, R))));
			dev = fmax(dev, ibLength(ibSub(ibBody_GetPosition(b), ibV3(R, 0, R))));
		}
		printf("%s beside a %s spinning at 20 rad/s, frictionless: largest displacement in 2 s %.3e m\n", kind_name[ka],
		       kind_name[kb], dev);
		assert_true(dev <= 1e-6);
		ibDestroyWorld(w);
	}
	ground_mu = 0.5;
}

/* A body definition of a coin (or a plate of the same r, hl) tilted by tilt from upright about x, its lowest
 * rim point at the origin; *ax: its axis, *u: from the lower face's centre to that rim point. */
static ibBodyDef on_rim(double r, double hl, double tilt, ibVec3* ax, ibVec3* u)
{
	ibQuat q = ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.5 * 3.14159265358979323846 + tilt);
	ibVec3 down = ibV3(0, 0, -1);
	*ax = ibRotate(q, ibV3(0, 0, 1));
	*u = ibMulAdd(down, -ibDot(down, *ax), *ax);
	*u = ibScale(1.0 / ibLength(*u), *u);
	ibVec3 face = ibScale(ax->z > 0.0 ? -hl : hl, *ax); /* the lower face's centre from the body's centre */
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibSub(ibScale(-r, *u), face);
	bd.rotation = q;
	return bd;
}

/* A coin (cylinder r = 0.1 m, 2 cm thick, 1 kg) tilted by 20 degrees, rolling on the rim of its lower face
 * at 2 m/s on a static ground (mu = 0.5): rolling without slip does no work, so its energy (kinetic +
 * potential) stays constant, and the rim stays on the ground. Before the round rim points (session 18) it
 * lost all its energy within 2 s (3.1 J of 3.0 J kinetic at 60 Hz, 1.2 J at 1 kHz) and sank 3.9 mm. Now
 * its energy grows by ~1.5 % in 2 s at 60 Hz and by ~0.09 % at 1 kHz (first order in h: the anchors move
 * to first order), and the rim stays within 2e-8 m of the ground. */
static void coin_on_rim(double h, double relE)
{
	const double r = 0.1, hl = 0.01, tilt = 20.0 * 3.14159265358979323846 / 180.0, v0 = 2.0;
	ibWorldId w = world_with_slope(0.0);
	ibVec3 ax, u, down = ibV3(0, 0, -1);
	ibBodyDef bd = on_rim(r, hl, tilt, &ax, &u);
	bd.linearVelocity = ibV3(v0, 0, 0);
	double spin = -v0 / ibCross(ax, ibScale(r, u)).x; /* rolling: v + w x (r u) = 0 with w along the axis */
	bd.angularVelocity = ibScale(spin, ax);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	sd.material = (ibMaterial){0.0, 0.5, 0.5};
	ibCylinder cy = {r, hl};
	assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &cy)));
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	const double e0 = inv.kineticEnergy + inv.potentialEnergy, k0 = inv.kineticEnergy;
	double dE = 0.0, low = 0.0;
	int n = (int)lround(2.0 / h);
	for (int k = 0; k < n; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		double e = inv.kineticEnergy + inv.potentialEnergy - e0;
		if (fabs(e) > fabs(dE)) dE = e;
		ibVec3 a = ibBody_GetWorldVector(b, ibV3(0, 0, 1));
		double rim = ibBody_GetPosition(b).z - r * ibLength(ibMulAdd(down, -ibDot(down, a), a)) - hl * fabs(a.z);
		low = fmin(low, rim);
	}
	ibVec3 a = ibBody_GetWorldVector(b, ibV3(0, 0, 1));
	printf("coin tilted 20 deg rolling on its rim at 2 m/s, h = %g: energy change over 2 s %.3e J (%.3f %% of %.3f J kinetic), "
	       "rim down to %.3e m, tilt at the end %.1f deg\n",
	       h, dE, 100.0 * dE / k0, k0, low, asin(fabs(a.z)) * 180.0 / 3.14159265358979323846);
	assert_true(fabs(dE) <= relE * k0);
	assert_true(low >= -1e-6);
	assert_true(fabs(a.z) >= sin(10.0 * 3.14159265358979323846 / 180.0)); /* still rolling on its rim, not fallen flat or upright */
	assert_true(fabs(a.z) <= sin(30.0 * 3.14159265358979323846 / 180.0));
	ibDestroyWorld(w);
}

static void test_coin_on_rim(void** state)
{
	(void)state;
	coin_on_rim(1.0 / 60.0, 0.03);
	coin_on_rim(1e-3, 0.003);
}

/* Two lying cylinders crossing at right angles, the upper one resting on the lower one and spinning about
 * its own axis at 20 rad/s, everything frictionless: nothing should move. With the normal turning with the
 * spinning upper cylinder (before session 19; body 2 of the pair) it tilted and pushed. */
static void test_crossed_cylinders_spinning(void** state)
{
	(void)state;
	ground_mu = 0.0;
	ibWorldId w = world_with_slope(0.0);
	ibBodyId a = roller(w, CYLINDER, 0.2, ibV3(0, 0, R), ibV3(0, 0, 0), ibV3(0, 0, 0)); /* axis along y */
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0, 0, 3 * R);
	bd.rotation = ibQuatFromAxisAngle(ibV3(0, 1, 0), 0.5 * 3.14159265358979323846); /* axis along x */
	bd.angularVelocity = ibV3(20.0, 0, 0);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	sd.material = (ibMaterial){0.0, 0.0, 0.0};
	ibCylinder cy = {R, 0.2};
	assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &cy)));
	ibShapeId s;
	assert_int_equal(ibBody_GetShapes(a, &s, 1), 1);
	ibShape_SetMaterial(s, (ibMaterial){0.0, 0.0, 0.0});
	double dev = 0.0;
	for (int k = 0; k < 120; ++k) {
		assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
		dev = fmax(dev, ibLength(ibSub(ibBody_GetPosition(a), ibV3(0, 0, R))));
		dev = fmax(dev, ibLength(ibSub(ibBody_GetPosition(b), ibV3(0, 0, 3 * R))));
	}
	printf("cylinder crossing a cylinder, spinning at 20 rad/s on it, frictionless: largest displacement in 2 s %.3e m\n", dev);
	assert_true(dev <= 1e-6);
	ibDestroyWorld(w);
	ground_mu = 0.5;
}

/* A cylinder (r = 0.2 m, half-length 0.6 m, 1000 kg/m^3) dropped 1 mm onto a lying one it crosses at 0.12, 0.3
 * and 1 rad, spinning about the vertical at 10 and 20 rad/s, everything frictionless and inelastic: the energy
 * never rises above its start. With the crossing normal z1 x z2 taken at the predicted poses (sessions 19-29)
 * it turned with the spinning cylinder and the position loops diverged: 5 of these 6 runs gained, 2.5 J to
 * 122 J (on a 10 m ground instead of this 100 m one, up to 1.2e5 J in one step); now it is the normal at t0
 * for the step. */
static void test_crossed_cylinders_turning(void** state)
{
	(void)state;
	const double r = 0.2, hl = 0.6, ang[3] = {0.12, 0.3, 1.0}, spin[2] = {10.0, 20.0};
	double worst = -INFINITY;
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 2; ++k) {
			ground_mu = 0.0;
			ibWorldId w = world_with_slope(0.0);
			ibShapeDef sd = ibDefaultShapeDef();
			sd.material = (ibMaterial){0.0, 0.0, 0.0};
			sd.density = 1000.0;
			ibBodyDef bd = ibDefaultBodyDef();
			bd.type = IB_BODY_DYNAMIC;
			bd.position = ibV3(0, 0, r);
			bd.rotation = ibQuatFromAxisAngle(ibV3(0, 1, 0), 0.5 * 3.14159265358979323846); /* axis along x */
			assert_true(ibShape_IsValid(ibCreateCylinderShape(ibCreateBody(w, &bd), &sd, &(ibCylinder){r, hl})));
			bd.position = ibV3(0, 0, 3.0 * r + 0.001);
			bd.rotation = ibQuatMul(ibQuatFromAxisAngle(ibV3(0, 0, 1), ang[i]), bd.rotation);
			bd.angularVelocity = ibV3(0, 0, spin[k]);
			assert_true(ibShape_IsValid(ibCreateCylinderShape(ibCreateBody(w, &bd), &sd, &(ibCylinder){r, hl})));
			ibWorldInvariants inv;
			assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
			const double e0 = inv.kineticEnergy + inv.potentialEnergy;
			double gain = -INFINITY;
			for (int step = 0; step < 240; ++step) {
				assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
				assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
				gain = fmax(gain, inv.kineticEnergy + inv.potentialEnergy - e0);
			}
			printf("cylinder crossing a lying one at %.2f rad, turning at %.0f rad/s, frictionless: largest E - E(0) %.3e J of %.1f J\n",
			       ang[i], spin[k], gain, e0);
			worst = fmax(worst, gain / e0);
			ibDestroyWorld(w);
		}
	ground_mu = 0.5;
	assert_true(worst <= 1e-6);
}

/* A ball beside a disc (cylinder r = 0.1 m, 4 cm thick) standing on its face, both on the ground and
 * frictionless, the ball touching the disc's upper rim (its centre 0.1 m up, the rim 0.04 m: the normal
 * leans 37 degrees up from the horizontal): no force acts. Case 0: the disc spins at 20 rad/s about its
 * axis and is body B of the pair (created after the ball); case 1: the ball spins at 20 rad/s about a
 * horizontal axis and is body B. Turning with the spinning body B, the normal pushed the ball away. */
static void test_sphere_on_spinning_rim(void** state)
{
	(void)state;
	ground_mu = 0.0;
	const double hl = 0.02, gap = sqrt(R * R - (R - 2 * hl) * (R - 2 * hl)); /* the rim's radial offset from the ball */
	for (int spin = 0; spin < 2; ++spin) {
		ibWorldId w = world_with_slope(0.0);
		ibBodyId bodies[2];
		for (int i = 0; i < 2; ++i) {
			bool disc = (i == 1) == (spin == 0); /* body B (created second) spins */
			ibBodyDef bd = ibDefaultBodyDef();
			bd.type = IB_BODY_DYNAMIC;
			bd.position = disc ? ibV3(0, 0, hl) : ibV3(R + gap, 0, R);
			if (i == 1) bd.angularVelocity = disc ? ibV3(0, 0, 20.0) : ibV3(0, 20.0, 0);
			ibBodyId b = ibCreateBody(w, &bd);
			ibShapeDef sd = ibDefaultShapeDef();
			sd.mass = 1.0;
			sd.material = (ibMaterial){0.0, 0.0, 0.0};
			if (disc) {
				ibCylinder c = {R, hl};
				assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &c)));
			} else {
				ibSphere c = {R};
				assert_true(ibShape_IsValid(ibCreateSphereShape(b, &sd, &c)));
			}
			bodies[i] = b;
		}
		ibVec3 p0[2] = {ibBody_GetPosition(bodies[0]), ibBody_GetPosition(bodies[1])};
		double dev = 0.0;
		for (int k = 0; k < 120; ++k) {
			assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
			for (int i = 0; i < 2; ++i) dev = fmax(dev, ibLength(ibSub(ibBody_GetPosition(bodies[i]), p0[i])));
		}
		printf("ball on the upper rim of a disc, %s spinning at 20 rad/s, frictionless: largest displacement in 2 s %.3e m\n",
		       spin == 0 ? "the disc" : "the ball", dev);
		assert_true(dev <= 1e-6);
		ibDestroyWorld(w);
	}
	ground_mu = 0.5;
}

/* A coin (cylinder r = 0.1 m, 2 cm thick, 1 kg) and a plate (box 0.2 x 0.2 x 0.02 m) standing on their
 * lower edge 20 degrees from upright, released at rest at 60 Hz, frictionless and with mu = 0.5: they fall
 * flat and lie still, never deeper in the ground than the contact tolerances, and gain no energy beyond
 * the first-order error of the rolling phase (below 2e-3 J of 0.95 J potential). The speculative margin of
 * a touching pair was capped by a quarter of the smaller shape's smallest half size (2.5 mm here): the far
 * rim or edge, closing by ~4 cm in the last step of the fall, went through the ground; the coin came out
 * with 1.2 J (frictionless) or 31 J (mu 0.5) gained, the plate sank 1.5 cm and ended 6 mm deep, sliding. */
static void test_thin_bodies_fall_flat(void** state)
{
	(void)state;
	const double r = 0.1, hl = 0.01, tilt = 20.0 * 3.14159265358979323846 / 180.0, h = 1.0 / 60.0;
	for (int plate = 0; plate < 2; ++plate)
		for (int fr = 0; fr < 2; ++fr) {
			ground_mu = fr ? 0.5 : 0.0;
			ibWorldId w = world_with_slope(0.0);
			ibVec3 ax, u;
			ibBodyDef bd = on_rim(r, hl, tilt, &ax, &u);
			ibBodyId b = ibCreateBody(w, &bd);
			ibShapeDef sd = ibDefaultShapeDef();
			sd.mass = 1.0;
			sd.material = (ibMaterial){0.0, ground_mu, ground_mu};
			if (plate) {
				ibBox bx = {ibV3(r, r, hl)};
				assert_true(ibShape_IsValid(ibCreateBoxShape(b, &sd, &bx)));
			} else {
				ibCylinder cy = {r, hl};
				assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &cy)));
			}
			ibWorldInvariants inv;
			assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
			const double e0 = inv.kineticEnergy + inv.potentialEnergy;
			double gain = 0.0, low = INFINITY;
			for (int k = 0; k < 120; ++k) {
				assert_int_equal(ibWorld_Step(w, h), IB_OK);
				assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
				gain = fmax(gain, inv.kineticEnergy + inv.potentialEnergy - e0);
				low = fmin(low, ibBody_GetPosition(b).z);
			}
			ibVec3 a = ibBody_GetWorldVector(b, ibV3(0, 0, 1));
			double z = ibBody_GetPosition(b).z, v = ibLength(ibBody_GetLinearVelocity(b));
			printf("%s falling flat, mu %.1f, 60 Hz: largest energy gain %.3e J (of %.3f J), lowest centre %.6f m "
			       "(flat %.2f), after 2 s |axis z| %.9f, centre %.9f m, speed %.1e m/s\n",
			       plate ? "plate" : "coin", ground_mu, gain, e0, low, hl, fabs(a.z), z, v);
			assert_true(gain <= 2e-3);
			assert_true(low >= hl - 1.1e-4);
			assert_true(fabs(a.z) >= 1.0 - 1e-9);
			assert_true(fabs(z - hl) <= 1.1e-4);
			assert_true(v <= 1e-6);
			ibDestroyWorld(w);
		}
	ground_mu = 0.5;
}

/* n = 3 (one on two) or 6 (three-two-one) logs (cylinders r = 0.1 m, half length 0.5 m, 1 kg, axes along y,
 * friction mu on their shapes) side by side on the ground at x = 0, each upper layer gap above its bed; rest:
 * their centres in the resting pile (gap 0) */
static void add_log_pile(ibWorldId w, int n, double gap, double mu, ibBodyId* logs, ibVec3* rest)
{
	const double r = 0.1, dz = sqrt(3.0) * r;
	const ibVec3 p3[3] = {{-r, 0, r}, {r, 0, r}, {0, 0, r + dz}};
	const ibVec3 p6[6] = {{-2 * r, 0, r}, {0, 0, r}, {2 * r, 0, r}, {-r, 0, r + dz}, {r, 0, r + dz}, {0, 0, r + 2 * dz}};
	for (int k = 0; k < n; ++k) {
		rest[k] = n == 6 ? p6[k] : p3[k];
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibAdd(rest[k], ibV3(0, 0, gap * round((rest[k].z - r) / dz)));
		bd.rotation = ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.5 * 3.14159265358979323846);
		logs[k] = ibCreateBody(w, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		sd.mass = 1.0;
		sd.material = (ibMaterial){0.0, mu, mu};
		ibCylinder cy = {r, 0.5};
		assert_true(ibShape_IsValid(ibCreateCylinderShape(logs[k], &sd, &cy)));
	}
}

/* Logs (cylinders r = 0.1 m, 1 m long, 1 kg) piled at 60 Hz: one on two, and three-two-one, each layer 1 mm
 * above its bed, with mu = 0.5 (and frictionless). The energy never exceeds the start's (frictionless logs
 * roll apart, with friction the piles come to rest and stay at rest). With the crossing-axes normal z1 x z2 used from 1e-6
 * rad on, logs 1e-5..1e-3 rad out of parallel got normals tens of degrees off: the 3-2-1 pile gained
 * 787 J in its first step (frictionless), one log on two 248 J after 2 s (mu = 0.5). */
static void test_log_piles(void** state)
{
	(void)state;
	for (int six = 0; six < 2; ++six)
		for (int fr = 0; fr < 2; ++fr) {
			ground_mu = fr ? 0.5 : 0.0;
			ibWorldId w = world_with_slope(0.0);
			const int n = six ? 6 : 3;
			ibBodyId logs[6];
			ibVec3 rest[6];
			add_log_pile(w, n, 1e-3, ground_mu, logs, rest);
			ibWorldInvariants inv;
			assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
			const double e0 = inv.kineticEnergy + inv.potentialEnergy;
			double gain = 0.0, late = 0.0; /* late: the largest kinetic energy from 2 s on */
			int unconverged = 0; /* steps not converged from 1 s on */
			for (int k = 0; k < 180; ++k) {
				assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
				assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
				gain = fmax(gain, inv.kineticEnergy + inv.potentialEnergy - e0);
				if (k >= 120) late = fmax(late, inv.kineticEnergy);
				if (k >= 60 && !ibWorld_GetStepStats(w).converged) ++unconverged;
			}
			printf("%d logs piled, mu %.1f, 60 Hz: largest energy gain %.3e J (of %.2f J), kinetic energy after 3 s %.2e J, "
			       "largest from 2 s on %.2e J, %d steps not converged from 1 s on\n",
			       n, ground_mu, gain, e0, inv.kineticEnergy, late, unconverged);
			assert_true(gain <= 1e-3);
			/* with friction the piles rest from 2 s on in every step, their loops converged from 1 s on: anchors that
			 * missed each other around the cycle ground - log - log - ground by ~1.5e-6 m left 30-40 % of the
			 * steps unconverged and the kinetic energy jumping to 1e-6..7e-5 J (docs/contacts.md, "Log piles pop").
			 * The 2-1 pile must come to rest (pair mu 1.0 >= 2 - sqrt(3), test_log_piles_statics); the dropped 3-2-1
			 * pile may rest or take its rigid-body mechanism and fall apart (both solve the contact problem): where
			 * it rests at 3 s, it must have rested in every step from 2 s on with its loops converged */
			if (fr && (!six || inv.kineticEnergy <= 1e-9)) {
				assert_true(inv.kineticEnergy <= 1e-9);
				assert_true(late <= 1e-9);
				assert_true(unconverged == 0);
			}
			ibDestroyWorld(w);
		}
	ground_mu = 0.5;
}

/* A 2-1 or 3-2-1 pile of test_log_piles' logs (friction mu on every shape, the pair's coefficient 2 mu by the
 * default sum rule), its upper layers `gap` above their beds, optionally with static chocks touching its outer
 * bottom logs: the largest kinetic energy of the last second and the largest distance of a log's centre from
 * its place in the resting pile at the end. */
static void run_log_pile(int n, double mu, double hz, double gap, bool chocks, double secs, double* late, double* shift)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, -G);
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ibBodyDef gd = ibDefaultBodyDef(); /* world_with_slope(0)'s ground, with the chocks on it */
	gd.type = IB_BODY_STATIC;
	gd.position = ibV3(0, 0, -0.5);
	ibBodyId g = ibCreateBody(w, &gd);
	ibShapeDef gsd = ibDefaultShapeDef();
	gsd.material = (ibMaterial){0.0, mu, mu};
	ibBox ground = {ibV3(100, 100, 0.5)};
	assert_true(ibShape_IsValid(ibCreateBoxShape(g, &gsd, &ground)));
	if (chocks)
		for (int s = -1; s <= 1; s += 2) {
			ibShapeDef sd = gsd;
			sd.localPosition = ibV3(s * ((n == 6 ? 0.3 : 0.2) + 0.05), 0, 0.5 + 0.075); /* faces at the outer logs' sides */
			ibBox box = {ibV3(0.05, 0.6, 0.075)};
			assert_true(ibShape_IsValid(ibCreateBoxShape(g, &sd, &box)));
		}
	ibBodyId logs[6];
	ibVec3 rest[6];
	add_log_pile(w, n, gap, mu, logs, rest);
	const int steps = (int)lround(secs * hz);
	*late = 0.0;
	for (int k = 1; k <= steps; ++k) {
		assert_int_equal(ibWorld_Step(w, 1.0 / hz), IB_OK);
		ibWorldInvariants inv;
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		if (k > steps - (int)lround(hz)) *late = fmax(*late, inv.kineticEnergy);
	}
	*shift = 0.0;
	for (int k = 0; k < n; ++k) *shift = fmax(*shift, ibDistance(ibBody_GetPosition(logs[k]), rest[k]));
	ibDestroyWorld(w);
}

/* What the statics of equal smooth cylinders on a floor decide (2D, every contact with the same coefficient mu):
 * - a 2-1 pile stands if and only if mu >= 2 - sqrt(3) = 0.268 at the contacts of the top log (its bottom logs
 *   touching or not: their contact can only push them apart); the floor needs (2 - sqrt(3)) / 3;
 * - a 3-2-1 pile needs mu >= sqrt((2 sqrt(3) - 3) / (2 sqrt(3) - 1)) = 0.434, at both contacts of a middle log
 *   with the top log and with the centre bottom log (the outer logs' contacts need 0.268, as in the 2-1 pile);
 * - chocked at its outer bottom logs it stands for any mu, frictionless too (the middle logs sit in the grooves).
 * So the 2-1 pile with a pair coefficient of 0.28 comes to rest, with 0.26 it falls apart, and the 3-2-1 pile
 * with 0.42 falls apart; the chocked 3-2-1 pile rests. Without chocks, mu >= 0.434 lets the 3-2-1 pile rest but
 * does not make it: for rigid bodies it has a mechanism (the outer bottom logs rolling out on the floor, the
 * middle logs rolling on them and leaving the centre bottom log, the top log rolling down between them) that
 * gravity drives at 0.105 g from rest with the sticking contacts' forces inside mu >= 0.379, so resting and
 * falling apart are both solutions, and any motion along it (at the layers' landing, say) opens the contact that
 * holds it; `test_log_piles` asserts the resting outcome of one drop only (docs/contacts.md, "Log piles pop").
 * Before the normal fix of touching parallel cylinders (`manifold.c`, exact_normal; test_manifold's
 * test_parallel_cylinders_warm_gjk) 3 of the 9 chocked piles failed: mu 0 at 180 Hz (1.8e-6 J in the last second,
 * a log 4.3 mm from its place), mu 0.2 at 60 Hz (the middle logs sank into the bottom ones, 0.40 J, 1.7 m) and
 * mu 0.5 at 180 Hz (5.4e-3 J, 3.9 mm; 3e-3 J in one step at 2.96 s); the other piles were the same. */
static void test_log_piles_statics(void** state)
{
	(void)state;
	const double hz[3] = {60.0, 240.0, 60.0}, gaps[3] = {1e-3, 1.5e-3, 0.0};
	for (int v = 0; v < 3; ++v) {
		double late, shift;
		run_log_pile(3, 0.14, hz[v], gaps[v], false, 3.0, &late, &shift);
		printf("2-1 pile, pair mu 0.28, %.0f Hz, gap %.1e m: kinetic energy in the last second <= %.2e J, logs %.2e m from their places\n",
		       hz[v], gaps[v], late, shift);
		assert_true(late <= 1e-9);
		assert_true(shift <= 1e-3);
		run_log_pile(3, 0.13, hz[v], gaps[v], false, 3.0, &late, &shift);
		printf("2-1 pile, pair mu 0.26, %.0f Hz, gap %.1e m: a log %.2f m from its place\n", hz[v], gaps[v], shift);
		assert_true(shift >= 0.1);
		run_log_pile(6, 0.21, hz[v], gaps[v], false, 3.0, &late, &shift);
		printf("3-2-1 pile, pair mu 0.42, %.0f Hz, gap %.1e m: a log %.2f m from its place\n", hz[v], gaps[v], shift);
		assert_true(shift >= 0.1);
	}
	const double chz[3] = {60.0, 180.0, 120.0}, cgaps[3] = {1e-3, 1e-3, 1.5e-3}, cmu[3] = {0.0, 0.2, 0.5};
	for (int m = 0; m < 3; ++m)
		for (int v = 0; v < 3; ++v) {
			double late, shift;
			run_log_pile(6, cmu[m], chz[v], cgaps[v], true, 3.0, &late, &shift);
			printf("chocked 3-2-1 pile, mu %.1f, %.0f Hz, gap %.1e m: kinetic energy in the last second <= %.2e J, logs %.2e m from their places\n",
			       cmu[m], chz[v], cgaps[v], late, shift);
			assert_true(late <= 1e-9);
			assert_true(shift <= 1e-3);
		}
}

/* Six discs (cylinders r = 0.15 m, 4 cm thick, 0.5 kg) spinning at 5 rad/s about their axes, dropped onto
 * each other and the ground (mu = 0 or 0.5 on every shape), each tilted 0.3 rad more than the one below, at 60
 * and 240 Hz: the energy never exceeds the start's.
 * - Started 0.1 m apart the discs overlap (by mm); their separation at the recovery speed (up to 1 m/s) may add
 *   a little energy: at most 1.2e-3 J of 16.5 J measured, bound 5e-3 J. At 240 Hz three rim samples of a disc
 *   on another coincided to 1e-17 m; the velocity loop solved them as a face block (a triangle of good shape
 *   but no size), whose least-squares loads were 7e13 N s and grew by 1e16 per sweep: 5.5e271 J in one step
 *   (session 20). Frictionless they still gained 61 J at 240 Hz until session 21 (ib_contact_flat_rim on a
 *   disc's end face).
 * - Started 0.2 m apart (no overlap): 337 J (frictionless) and 72 J (mu 0.5) gained at 60 Hz before session
 *   21 (a disc landing on another's end face and turning flat); now nothing (1e-14 J), bound 1e-6 J. */
static void test_spinning_discs_dropped(void** state)
{
	(void)state;
	const double hz[2] = {60.0, 240.0}, gaps[2] = {0.1, 0.2}, mus[2] = {0.0, 0.5};
	for (int gi = 0; gi < 2; ++gi)
		for (int mi = 0; mi < 2; ++mi)
			for (int r = 0; r < 2; ++r) {
				ground_mu = mus[mi];
				ibWorldId w = world_with_slope(0.0);
				for (int k = 0; k < 6; ++k) {
					ibBodyDef bd = ibDefaultBodyDef();
					bd.type = IB_BODY_DYNAMIC;
					bd.position = ibV3(0.01 * k, 0, 0.3 + gaps[gi] * k);
					bd.rotation = ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.3 * k);
					bd.angularVelocity = ibV3(0, 0, 5.0);
					ibBodyId b = ibCreateBody(w, &bd);
					ibShapeDef sd = ibDefaultShapeDef();
					sd.mass = 0.5;
					sd.material = (ibMaterial){0.0, mus[mi], mus[mi]};
					ibCylinder cy = {0.15, 0.02};
					assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &cy)));
				}
				ibWorldInvariants inv;
				assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
				const double e0 = inv.kineticEnergy + inv.potentialEnergy;
				double gain = -INFINITY;
				const int n = (int)lround(4.0 * hz[r]);
				for (int k = 0; k < n; ++k) {
					assert_int_equal(ibWorld_Step(w, 1.0 / hz[r]), IB_OK);
					assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
					gain = fmax(gain, inv.kineticEnergy + inv.potentialEnergy - e0);
				}
				printf("6 spinning discs dropped %.1f m apart, mu %.1f, %.0f Hz: largest E - E(0) %.3e J (of %.2f J)\n", gaps[gi],
				       mus[mi], hz[r], gain, e0);
				assert_true(gain <= (gi == 0 ? 5e-3 : 1e-6));
				ibDestroyWorld(w);
			}
}

/* Largest E - E(0) (J) over t seconds at step h of a cylinder (r, hl; default density and material unless mu
 * >= 0: then mu / 2 on the disc, the ground's ground_mu) dropped from pose (p, q) with v and om. */
static double disc_gain(double h, double r, double hl, double mu, ibVec3 p, ibQuat q, ibVec3 v, ibVec3 om, double t)
{
	ibWorldId w = world_with_slope(0.0);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = p;
	bd.rotation = q;
	bd.linearVelocity = v;
	bd.angularVelocity = om;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	if (mu >= 0.0) sd.material = (ibMaterial){0.0, 0.5 * mu, 0.5 * mu};
	ibCylinder cy = {r, hl};
	assert_true(ibShape_IsValid(ibCreateCylinderShape(b, &sd, &cy)));
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	const double e0 = inv.kineticEnergy + inv.potentialEnergy;
	double gain = -INFINITY;
	const int n = (int)lround(t / h);
	for (int k = 0; k < n; ++k) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		gain = fmax(gain, inv.kineticEnergy + inv.potentialEnergy - e0);
	}
	ibDestroyWorld(w);
	return gain;
}

/* A disc turning through lying flat within one step, landing on its rim (contact_set.c ib_contact_flat_rim):
 * its one round point, the rim's deepest point at the predicted pose, jumped to the far side of the rim, where
 * the near side's response K had the wrong sign, and the position loop turned the disc over further from
 * sweep to sweep. Before the fix the built-in ibsim scene's disc (r = 0.2 m, 10 cm thick, thrown spinning)
 * gained 2.1e4 J at h = 0.005 s, and of the 48 drops below (r = 0.3 m, 4 cm thick, 11.3 kg, tilted 0.3 ... 1.3
 * rad, spinning at 0 ... 40 rad/s about the axis, 60 Hz) 15 gained 260 J to 3.3e3 J. Now none gains 1e-6 J. */
static void test_disc_turning_flat(void** state)
{
	(void)state;
	ground_mu = 0.5; /* with the disc's default 0.5 the built-in scene's mu = 1 */
	double g = disc_gain(0.005, 0.2, 0.05, -1.0, ibV3(0, -2, 1), ibQuatFromAxisAngle(ibV3(0, 1, 0), 0.3), ibV3(0, 1, 6),
	                     ibV3(1, 0, 8), 2.0);
	printf("built-in scene's disc at h = 0.005 s: largest E - E(0) %.3e J\n", g);
	assert_true(g <= 1e-6);
	const double tilts[4] = {0.3, 0.5, 0.7, 1.3}, spins[3] = {0.0, 20.0, 40.0}, z0s[2] = {0.4, 1.2};
	double worst = -INFINITY;
	int bad = 0;
	for (int mi = 0; mi < 2; ++mi) {
		ground_mu = 0.25 * mi;
		for (int i = 0; i < 4; ++i)
			for (int j = 0; j < 3; ++j)
				for (int k = 0; k < 2; ++k) {
					ibQuat q = ibQuatFromAxisAngle(ibV3(1, 0, 0), tilts[i]);
					g = disc_gain(1.0 / 60.0, 0.3, 0.02, 0.5 * mi, ibV3(0, 0, z0s[k]), q, ibV3(0, 0, 0),
					              ibRotate(q, ibV3(0, 0, spins[j])), 3.0);
					worst = fmax(worst, g);
					if (g > 1e-6) {
						printf("  tilt %.1f spin %.0f z0 %.1f mu %.1f: gained %.3e J\n", tilts[i], spins[j], z0s[k], 0.5 * mi, g);
						++bad;
					}
				}
	}
	printf("48 discs dropped at 60 Hz: %d gain more than 1e-6 J; largest E - E(0) %.3e J\n", bad, worst);
	assert_int_equal(bad, 0);
}

/* The built-in scene's dumbbell (a box bar with a sphere at one end, centre of mass off the body origin)
 * thrown onto the ground at h = 0.01 s: from 0.9 s on it rocks on its sphere and one corner of its bar.
 * The corner's static friction reaches its cone's boundary while the sphere sticks; held there, the
 * corner's friction followed its anchor offset, which the sphere's corrections turned, and the position
 * loop cycled between the two points until the stall rule ended it (1-4e-6 m against eps_d = 1e-6 m):
 * 98 of the 200 steps unconverged, 560 of 1000 over 10 s. A point held at the boundary for
 * IB_CONTACT_CONE_SWEEPS sweeps in a row now slides (contact_joint.c): 8 of 200, 35 of 1000. Asserted
 * over 2 s: at most 20 unconverged steps, the energy never more than 1e-4 J above its lowest value so
 * far (3.3e-5 J measured; 4.1e-5 before), the dumbbell on the ground. */
static void test_rocking_dumbbell(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = ibV3(0, 0, -0.25);
	ibBodyId ground = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	assert_true(ibShape_IsValid(ibCreateBoxShape(ground, &sd, &(ibBox){ibV3(5.0, 5.0, 0.25)})));
	ibBodyDef dd = ibDefaultBodyDef();
	dd.type = IB_BODY_DYNAMIC;
	dd.position = ibV3(0, 2, 2);
	dd.linearVelocity = ibV3(0, -0.5, 3);
	dd.angularVelocity = ibV3(1, 2, 3);
	ibBodyId db = ibCreateBody(w, &dd);
	assert_true(ibShape_IsValid(ibCreateBoxShape(db, &sd, &(ibBox){ibV3(0.3, 0.04, 0.04)})));
	ibShapeDef end = sd;
	end.localPosition = ibV3(0.35, 0, 0);
	assert_true(ibShape_IsValid(ibCreateSphereShape(db, &end, &(ibSphere){0.12})));
	int unconverged = 0;
	double emin = INFINITY, rise = 0.0;
	for (int k = 0; k < 200; ++k) {
		ibResult r = ibWorld_Step(w, 0.01);
		assert_true(r == IB_OK || r == IB_ERR_NOT_CONVERGED);
		unconverged += !ibWorld_GetStepStats(w).converged;
		ibWorldInvariants inv;
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		double e = inv.kineticEnergy + inv.potentialEnergy;
		emin = fmin(emin, e);
		rise = fmax(rise, e - emin);
	}
	ibVec3 sphere = ibBody_GetWorldPoint(db, ibV3(0.35, 0, 0));
	printf("rocking dumbbell, 2 s: %d of 200 steps unconverged, largest rise %.3e J, sphere centre at z = %.6f\n", unconverged,
	       rise, sphere.z);
	assert_true(unconverged <= 20);
	assert_true(rise <= 1e-4);
	assert_true(fabs(sphere.z - 0.12) <= 1e-3);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roll_flat_60hz),
		cmocka_unit_test(test_rocking_dumbbell),
		cmocka_unit_test(test_roll_flat_1khz),
		cmocka_unit_test(test_capsule_roll_flat),
		cmocka_unit_test(test_cylinder_roll_flat),
		cmocka_unit_test(test_roll_down_slope),
		cmocka_unit_test(test_roll_on_dynamic_board),
		cmocka_unit_test(test_spinning_neighbours),
		cmocka_unit_test(test_crossed_cylinders_spinning),
		cmocka_unit_test(test_crossed_cylinders_turning),
		cmocka_unit_test(test_coin_on_rim),
		cmocka_unit_test(test_sphere_on_spinning_rim),
		cmocka_unit_test(test_thin_bodies_fall_flat),
		cmocka_unit_test(test_log_piles),
		cmocka_unit_test(test_log_piles_statics),
		cmocka_unit_test(test_spinning_discs_dropped),
		cmocka_unit_test(test_disc_turning_flat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
