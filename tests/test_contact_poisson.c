/* Poisson's restitution law (eq. 5.3, digest §16.3/§17.2) on an eccentric impact with sticking
 * friction, against closed-form impulses; Newton's law (eq. 5.2) on the same impact gives a different
 * closed-form result (issue 6). tests/test_contact_basic.c's bouncing ball is a central impact, where
 * the two laws coincide; for a single frictionless point they coincide too (u_n is linear in the
 * normal impulse), so the difference needs friction: K couples the normal and the tangential impulse.
 *
 * Set-up: a box (the body's only shape, mass from sd.mass, centre of mass at its centre) tilted so
 * that exactly one corner touches a static ground (top face z = 0, normal n = e_z); gravity off, so the
 * velocities after one step of h are those right after the impact: v is constant in free flight, and
 * so is the world angular momentum L = I_w w about the centre of mass (for the cube I_w = k E, so w
 * itself is constant). Ground e = 1, mu = 0 with the default mixing (product / sum): the pair has the
 * box's e and mu.
 *
 * Analytic model (plain linear algebra below, no library internals). r = corner - centre of mass,
 * u0 = v0 + w0 x r the corner's velocity before the impact, K = E/m - [r]x I_w^-1 [r]x the corner's
 * impulse response (u = u0 + K P for an impulse P at the corner).
 *  - Newton, sticking: u_f = -e (u0.n) n (tangential velocity stopped), P_N = K^-1 (u_f - u0).
 *  - Poisson, compression with sticking: P_c = -K^-1 u0 (u = 0 afterwards), p = P_c.n.
 *    Restitution phase (contact_collide.c: "the restitution impulse e p_n as the last iteration, with
 *    its friction", §5.2.2/§5.2.5, then restitution_friction_point): the normal impulse e p n, which leaves
 *    the corner at u1 = e p K n, and a tangential impulse T that keeps the corner sticking (inside the
 *    cone, checked): K_tt T = -w, w = u1 - (u1.n) n, K_tt the tangential 2x2 block of K (Routh's
 *    sticking restitution phase). P_P = P_c + e p n + T: total normal impulse (1 + e) p (eq. 5.3), u_f
 *    tangential = 0 and u_f.n = e p / (K^-1)_nn (Schur complement), i.e.
 *        u_f.n = -e u_n0 - e (K^-1)_nt u0_t / (K^-1)_nn
 *    (checked against the impulses): Newton's -e u_n0 plus a term of the tangential approach u0_t.
 *    The thesis' "last iteration" read literally is ONE static-friction impulse of eq. 5.9 along t =
 *    w/|w|: T1 = -(|w| / (t^T K t)) t. For the cube (I_w = k E, K t = kappa t + beta n) that is the same
 *    T; for a box of unequal edges K t has a tangential part across t and T1 leaves the corner slipping
 *    across t although the impulse is inside the cone (Coulomb: no slip while sticking; §5.2.5: the
 *    loop ends only when every static-friction point has u_t = 0). That was the implementation before
 *    this test; test_poisson_anisotropic_box tells the two apart (and prints T1's slip).
 *  - Both: v = v0 + P/m, L = I_w w0 + r x P; the impulses must lie inside the friction cones (checked)
 *    and the corner must separate (no contact joint). Sticking Poisson never gains energy:
 *    dT = -1/2 P_c^T K P_c + 1/2 P_r^T K P_r with P_r (the restitution part) minimising P^T K P for its
 *    normal part e p, so P_r^T K P_r <= e^2 P_c^T K P_c.
 *
 * Tolerance: the collision loop (and the restitution phase's friction sweeps) stop when their
 * corrections fall below eps_v,c = 1e-12 m/s, so the impulses are within |K^-1| eps_v,c ~ 1e-12 N s of
 * the model's; the corner starts GAP = 1e-9 m above the ground, so the lever arm of the impulse is known
 * to ~1e-9 m of |r| = 0.17-0.23 m (< 1e-8 relative); the free step (h = 1e-5 s, no gravity) keeps v
 * exactly and L exactly (cube) or to RK4's ~(h |w|)^5. TOL = 1e-7 relative is a margin of >10 over these
 * bounds (measured: ~1e-12); the two laws differ by > 1e-2 relative. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "contact_test_util.h"

#define GAP 1e-9 /* corner above the ground at t0 (m), < eps_c */
#define H 1e-5   /* step (s) */
#define TOL 1e-7 /* relative tolerance of the comparisons */

/* ---- plain 3-vectors and 3x3 matrices for the expected values ---- */
typedef struct V {
	double x[3];
} V;
typedef struct M {
	double a[3][3];
} M;

static V vmk(double x, double y, double z) { return (V){{x, y, z}}; }
static V vadd(V p, V q) { return vmk(p.x[0] + q.x[0], p.x[1] + q.x[1], p.x[2] + q.x[2]); }
static V vsub(V p, V q) { return vmk(p.x[0] - q.x[0], p.x[1] - q.x[1], p.x[2] - q.x[2]); }
static V vscale(double s, V p) { return vmk(s * p.x[0], s * p.x[1], s * p.x[2]); }
static double vdot(V p, V q) { return p.x[0] * q.x[0] + p.x[1] * q.x[1] + p.x[2] * q.x[2]; }
static double vnorm(V p) { return sqrt(vdot(p, p)); }
static V vcross(V p, V q)
{
	return vmk(p.x[1] * q.x[2] - p.x[2] * q.x[1], p.x[2] * q.x[0] - p.x[0] * q.x[2], p.x[0] * q.x[1] - p.x[1] * q.x[0]);
}
static V vfrom(ibVec3 p) { return vmk(p.x, p.y, p.z); }
static ibVec3 vto(V p) { return ibV3(p.x[0], p.x[1], p.x[2]); }

static V mmulv(M A, V p)
{
	V r;
	for (int i = 0; i < 3; ++i) r.x[i] = A.a[i][0] * p.x[0] + A.a[i][1] * p.x[1] + A.a[i][2] * p.x[2];
	return r;
}
static M mmul(M A, M B)
{
	M C;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) C.a[i][j] = A.a[i][0] * B.a[0][j] + A.a[i][1] * B.a[1][j] + A.a[i][2] * B.a[2][j];
	return C;
}
static M mtrans(M A)
{
	M T;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) T.a[i][j] = A.a[j][i];
	return T;
}
static M mskew(V r) { return (M){{{0, -r.x[2], r.x[1]}, {r.x[2], 0, -r.x[0]}, {-r.x[1], r.x[0], 0}}}; }
static M mdiag(double a, double b, double c) { return (M){{{a, 0, 0}, {0, b, 0}, {0, 0, c}}}; }
/* inverse by the adjugate */
static M minv(M A)
{
	M C;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) {
			int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
			C.a[j][i] = A.a[i1][j1] * A.a[i2][j2] - A.a[i1][j2] * A.a[i2][j1]; /* cofactor, transposed */
		}
	double det = A.a[0][0] * C.a[0][0] + A.a[0][1] * C.a[1][0] + A.a[0][2] * C.a[2][0];
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) C.a[i][j] /= det;
	return C;
}
/* rotation matrix of the unit quaternion (w, x, y, z), body -> world */
static M mquat(ibQuat q)
{
	double w = q.w, x = q.x, y = q.y, z = q.z;
	return (M){{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
	            {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
	            {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

/* ---- the impact ---- */
typedef struct Case {
	const char* name;
	double he[3];        /* half edges (m) */
	double mass;         /* kg */
	double axis[3], ang; /* orientation: rotation by ang about axis */
	double v0[3], w0[3]; /* velocities before the impact */
	double e, mu;        /* the box's restitution and friction (mu_s = mu_d); the ground has 1, 0 */
} Case;

typedef struct Geo {
	ibQuat q;
	M R, Ib, Iw, IwInv, K, Kinv;
	V s, r, u0;
	double m, gap2; /* gap2: height of the second-lowest corner */
} Geo;

static Geo geometry(const Case* c)
{
	Geo g;
	V ax = vmk(c->axis[0], c->axis[1], c->axis[2]);
	g.q = ibQuatFromAxisAngle(vto(vscale(1.0 / vnorm(ax), ax)), c->ang);
	g.R = mquat(g.q);
	g.m = c->mass;
	double a = c->he[0], b = c->he[1], d = c->he[2];
	g.Ib = mdiag(g.m / 3.0 * (b * b + d * d), g.m / 3.0 * (a * a + d * d), g.m / 3.0 * (a * a + b * b));
	g.Iw = mmul(mmul(g.R, g.Ib), mtrans(g.R));
	g.IwInv = minv(g.Iw);
	/* the lowest corner */
	double zmin = INFINITY, z2 = INFINITY;
	for (int k = 0; k < 8; ++k) {
		V cl = vmk((k & 1) ? a : -a, (k & 2) ? b : -b, (k & 4) ? d : -d);
		V cw = mmulv(g.R, cl);
		if (cw.x[2] < zmin) {
			z2 = zmin;
			zmin = cw.x[2];
			g.r = cw;
		} else if (cw.x[2] < z2) {
			z2 = cw.x[2];
		}
	}
	g.s = vmk(0.0, 0.0, GAP - zmin);
	g.gap2 = z2 - zmin;
	/* K = E/m - [r]x I_w^-1 [r]x */
	M S = mskew(g.r), T = mmul(mmul(S, g.IwInv), S);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) g.K.a[i][j] = (i == j ? 1.0 / g.m : 0.0) - T.a[i][j];
	g.Kinv = minv(g.K);
	V v0 = vmk(c->v0[0], c->v0[1], c->v0[2]), w0 = vmk(c->w0[0], c->w0[1], c->w0[2]);
	g.u0 = vadd(v0, vcross(w0, g.r));
	return g;
}

typedef struct Result {
	V P, v, w, L, u; /* impulse on the box, velocities after, world angular momentum, corner velocity */
	double T;        /* kinetic energy */
} Result;

static Result after_impulse(const Case* c, const Geo* g, V P)
{
	Result x;
	x.P = P;
	V v0 = vmk(c->v0[0], c->v0[1], c->v0[2]), w0 = vmk(c->w0[0], c->w0[1], c->w0[2]);
	x.v = vadd(v0, vscale(1.0 / g->m, P));
	x.L = vadd(mmulv(g->Iw, w0), vcross(g->r, P));
	x.w = mmulv(g->IwInv, x.L);
	x.u = vadd(g->u0, mmulv(g->K, P));
	x.T = 0.5 * g->m * vdot(x.v, x.v) + 0.5 * vdot(x.w, x.L);
	return x;
}

static double tangential_norm(V p) { return hypot(p.x[0], p.x[1]); }

/* Newton, sticking: u_f = -e u_n0 n, P = K^-1 (u_f - u0) */
static Result newton_model(const Case* c, const Geo* g)
{
	V uf = vmk(0.0, 0.0, -c->e * g->u0.x[2]);
	V P = mmulv(g->Kinv, vsub(uf, g->u0));
	assert_true(P.x[2] > 0.0);
	assert_true(tangential_norm(P) < 0.9 * c->mu * P.x[2]); /* inside the cone with a margin */
	return after_impulse(c, g, P);
}

/* Poisson: compression to u = 0 (sticking), then e p n and one static-friction impulse of eq. 5.9
 * (full = false: the thesis' "last iteration" read literally), or the tangential impulse that keeps the
 * corner sticking through the restitution (full = true: the 2x2 tangential block of K solved; the model
 * of the library) */
static Result poisson_model(const Case* c, const Geo* g, bool full)
{
	V Pc = vscale(-1.0, mmulv(g->Kinv, g->u0));
	double p = Pc.x[2];
	assert_true(p > 0.0);
	assert_true(tangential_norm(Pc) < 0.9 * c->mu * p);
	V Pr = vmk(0.0, 0.0, c->e * p);
	V u1 = mmulv(g->K, Pr); /* the corner's velocity after the normal restitution impulse */
	V wt = vmk(u1.x[0], u1.x[1], 0.0);
	V Pf;
	if (!full) {
		double s = vnorm(wt);
		V t = vscale(1.0 / s, wt);
		Pf = vscale(-s / vdot(t, mmulv(g->K, t)), t);
	} else { /* K_tt T = -w */
		double k00 = g->K.a[0][0], k01 = g->K.a[0][1], k11 = g->K.a[1][1], det = k00 * k11 - k01 * k01;
		Pf = vmk(-(k11 * wt.x[0] - k01 * wt.x[1]) / det, -(-k01 * wt.x[0] + k00 * wt.x[1]) / det, 0.0);
	}
	V P = vadd(vadd(Pc, Pr), Pf);
	assert_true(tangential_norm(P) < 0.9 * c->mu * P.x[2]);
	return after_impulse(c, g, P);
}

/* one step of the library from the pose and velocities of the case */
static Result simulate(const Case* c, const Geo* g, ibRestitutionLaw law)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 0);
	wd.solver.contact.enabled = true;
	wd.solver.contact.restitutionLaw = law;
	wd.solver.contact.collisionTolerance = 1e-12;
	wd.collision.contactTolerance = 1e-4;
	ibWorldId w = ibCreateWorld(&wd);
	ct_ground(w, 0.0, ct_mat(1.0, 0.0, 0.0));
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = vto(g->s);
	bd.rotation = g->q;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = ct_mat(c->e, c->mu, c->mu);
	sd.mass = c->mass;
	ibBox box = {ibV3(c->he[0], c->he[1], c->he[2])};
	ibCreateBoxShape(b, &sd, &box);
	/* the library's mass properties are the ones of the model */
	ibMassData md = ibBody_GetMassData(b);
	assert_true(fabs(md.mass - g->m) <= 1e-14 * g->m);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) assert_true(fabs(md.inertia.m[i][j] - g->Ib.a[i][j]) <= 1e-14 * g->Ib.a[0][0]);
	ibBody_SetLinearVelocity(b, ibV3(c->v0[0], c->v0[1], c->v0[2]));
	ibBody_SetAngularVelocity(b, ibV3(c->w0[0], c->w0[1], c->w0[2]));
	double T0 = ibBody_GetKineticEnergy(b);
	assert_int_equal(ibWorld_Step(w, H), IB_OK);
	ibStepStats st = ibWorld_GetStepStats(w);
	assert_int_equal(st.contactPoints, 1);
	assert_int_equal(st.collidingPoints, 1);
	assert_int_equal(st.restingPoints, 0); /* the corner separates: no contact joint acts */
	assert_true(st.converged);
	Result x;
	x.P = vmk(NAN, NAN, NAN);
	x.v = vfrom(ibBody_GetLinearVelocity(b));
	x.w = vfrom(ibBody_GetAngularVelocity(b));
	M R1 = mquat(ibBody_GetRotation(b));
	x.L = mmulv(mmul(mmul(R1, g->Ib), mtrans(R1)), x.w); /* I_w at t0+h times w(t0+h) */
	x.u = vmk(NAN, NAN, NAN);
	x.T = ibBody_GetKineticEnergy(b);
	printf("  %s (%s): %d collision sweeps, T %.9f -> %.9f J\n", c->name, law == IB_RESTITUTION_POISSON ? "Poisson" : "Newton",
	       st.collisionIterations, T0, x.T);
	ibDestroyWorld(w);
	return x;
}

static double rel(V a, V b) { return vnorm(vsub(a, b)) / vnorm(b); }

static void print_result(const char* what, Result x)
{
	printf("  %-22s v = (%+.9f %+.9f %+.9f)  L = (%+.9e %+.9e %+.9e)\n", what, x.v.x[0], x.v.x[1], x.v.x[2], x.L.x[0], x.L.x[1],
	       x.L.x[2]);
}

/* Runs both laws on the case and checks them against the models; *slip: the corner's slip after the
 * restitution phase with only one static-friction impulse (the implementation before issue 6) */
static void check_case(const Case* c, double* slip)
{
	Geo g = geometry(c);
	double rest = sqrt(2.0 * 9.81 * 1e-4); /* eps_rc with gravity off */
	printf("%s: r = (%+.6f %+.6f %+.6f) m, u0 = (%+.6f %+.6f %+.6f) m/s, second corner %.4f m up\n", c->name, g.r.x[0],
	       g.r.x[1], g.r.x[2], g.u0.x[0], g.u0.x[1], g.u0.x[2], g.gap2);
	assert_true(g.u0.x[2] < -10.0 * rest); /* a collision */
	assert_true(g.gap2 > 0.02);               /* only one corner within reach */
	assert_true(tangential_norm(g.r) > 0.3 * vnorm(g.r)); /* eccentric */

	Result nm = newton_model(c, &g), pm = poisson_model(c, &g, true), pi = poisson_model(c, &g, false);
	Result nl = simulate(c, &g, IB_RESTITUTION_NEWTON), pl = simulate(c, &g, IB_RESTITUTION_POISSON);
	double T0 = after_impulse(c, &g, vmk(0, 0, 0)).T;

	printf("  Newton model:  P = (%+.9f %+.9f %+.9f) N s, corner after (%+.9f %+.9f %+.9f) m/s, dT %+.6e J\n", nm.P.x[0],
	       nm.P.x[1], nm.P.x[2], nm.u.x[0], nm.u.x[1], nm.u.x[2], nm.T - T0);
	printf("  Poisson model: P = (%+.9f %+.9f %+.9f) N s, corner after (%+.9f %+.9f %+.9f) m/s, dT %+.6e J\n", pm.P.x[0],
	       pm.P.x[1], pm.P.x[2], pm.u.x[0], pm.u.x[1], pm.u.x[2], pm.T - T0);
	print_result("Newton expected", nm);
	print_result("Newton library", nl);
	print_result("Poisson expected", pm);
	print_result("Poisson library", pl);
	double en = fmax(rel(nl.v, nm.v), rel(nl.L, nm.L)), ep = fmax(rel(pl.v, pm.v), rel(pl.L, pm.L));
	double dlaw = fmax(rel(nm.v, pm.v), rel(nm.L, pm.L));
	double dsticking = fmax(rel(pi.v, pm.v), rel(pi.L, pm.L));
	printf("  relative error: Newton %.3e, Poisson %.3e; Newton vs Poisson model %.3e; one friction impulse vs "
	       "sticking restitution %.3e\n",
	       en, ep, dlaw, dsticking);
	printf("  corner after the Poisson impact: normal %.9f m/s (Newton -e u_n0 = %.9f); with one friction impulse: normal "
	       "%.9f m/s, slip %.3e m/s\n",
	       pm.u.x[2], nm.u.x[2], pi.u.x[2], tangential_norm(pi.u));
	/* the Poisson model's normal velocity after the impact in closed form (Schur complement) */
	double unP = -c->e * g.u0.x[2] - c->e * (g.Kinv.a[2][0] * g.u0.x[0] + g.Kinv.a[2][1] * g.u0.x[1]) / g.Kinv.a[2][2];
	assert_true(fabs(pm.u.x[2] - unP) <= 1e-12);
	assert_true(tangential_norm(pm.u) <= 1e-12);
	assert_true(pm.u.x[2] > 2.0 * rest); /* separates: no contact joint */
	assert_true(en <= TOL);
	assert_true(ep <= TOL);
	assert_true(dlaw >= 1e4 * TOL); /* the laws really differ here: Poisson cannot pass as Newton */
	assert_true(pm.T <= T0);        /* Poisson with sticking dissipates ... */
	assert_true(pl.T <= T0);        /* ... in the library too */
	*slip = tangential_norm(pi.u);
}

/* A cube (I_w = k E), one corner down, hit with a tangential approach velocity at the corner. Here
 * the one static-friction impulse of the restitution phase already stops the slip exactly. */
static void test_poisson_eccentric_cube(void** state)
{
	(void)state;
	Case c = {"cube", {0.1, 0.1, 0.1}, 1.0, {1.0, 2.0, 0.0}, 0.5, {0.6, -0.3, -1.0}, {1.0, -2.0, 0.5}, 0.5, 3.0};
	double slip;
	check_case(&c, &slip);
	assert_true(slip <= 1e-12);
}

/* A box of unequal edges: K t has a tangential part across the slip t, so one static-friction impulse
 * (eq. 5.9 along t) after the restitution impulse leaves the corner slipping (0.19 m/s here, with the
 * impulse inside the cone); the restitution phase must keep the corner sticking (contact_collide.c,
 * restitution_friction_point). The two restitution models differ by far more than TOL. */
static void test_poisson_anisotropic_box(void** state)
{
	(void)state;
	Case c = {"box 0.1 x 0.2 x 0.4", {0.05, 0.1, 0.2}, 2.0, {1.0, 1.0, 0.3}, 1.2, {0.5, 0.4, -1.0}, {-1.5, 2.0, 1.0}, 0.5, 4.0};
	double slip;
	check_case(&c, &slip);
	assert_true(slip >= 1e-2); /* the case tells the two restitution phases apart */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_poisson_eccentric_cube),
	    cmocka_unit_test(test_poisson_anisotropic_box),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
