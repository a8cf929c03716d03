/* A cloth started flat and pinned, the usual first demo: an 11 x 11 cloth 2 m across (0.8 kg) is
 * released horizontally at 60 Hz, pinned at its four corners, at two corners of one edge or along
 * one edge, inextensible or with stretch compliance 1e-4 m/N, without bending rows or with
 * dihedral ones. With the sweeps' t0 Jacobian the flat cloth could not be corrected (its edges all
 * lie in its plane) and went to NaN within 0.1–0.65 s, helped by warm starts from unconverged steps.
 * Asserted with the default solver (the sparse solve): finite, at most 0.1 J gained (kinetic +
 * gravity, the springs' energy being >= 0; of m g 1 m = 7.8 J: the edge-pinned compliant cloth
 * whipping round gains 0.082 J at 60 Hz, 0.0076 J at 120 Hz, none at 240 Hz, a discretisation
 * error; the others at most 0.01 J), every step converged except where no solution
 * exists (inextensible edges straight between two held points would need infinite tension), the
 * inextensible edges then within eps_d. With Gauss–Seidel sweeps (explicit choice): finite, no
 * energy gained, bounded. Random cloths (3x3 to 12x12 cells, 0.5-2.5 m, tilted, pinned
 * at 4 / 2 corners, an edge, one vertex or free, inextensible or 1e-2 m/N (1e-6 between two
 * corners), any bending; free ones turning and rising, one held at a vertex turning about it; 60 to
 * 240 Hz): every step converges, at most 2 % of m g size + the kinetic energy gained (largest
 * 0.26 %). Stiff compliant rows (1e-6 ... 1e-4 m/N) are left out: they gain energy while the cloth
 * turns (up to 12 % in 2 s at 60 Hz; README Known problems), as do 30 Hz steps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "soft_test_util.h"

typedef struct Outcome {
	bool finite;
	double gain;     /* largest (kinetic + gravity energy) - that after the first step (J) */
	double maxZ;     /* highest particle (m; the pins are at z = 2) */
	double maxErr;   /* largest internal row error after a converged step (m) */
	int unconverged; /* steps */
} Outcome;

/* Pins of an n x n grid: 0 its four corners, 1 the two corners of its first edge, 2 that edge, 3 the
 * given vertex, else none. Returns the count. */
static int grid_pins(int n, int mode, int vertex, int pins[])
{
	int np = 0;
	if (mode == 0) {
		pins[np++] = 0, pins[np++] = n, pins[np++] = n * (n + 1), pins[np++] = (n + 1) * (n + 1) - 1;
	} else if (mode == 1) {
		pins[np++] = 0, pins[np++] = n;
	} else if (mode == 2) {
		for (int i = 0; i <= n; ++i) pins[np++] = i;
	} else if (mode == 3) {
		pins[np++] = vertex;
	}
	return np;
}

/* Kinetic + gravity energy of the cloth (J, zero at z = 0); clears *finite if a particle went far
 * away, raises *maxZ to its highest particle. */
static double cloth_energy(ibSoftBodyId sb, int nv, bool* finite, double* maxZ)
{
	double E = ibSoftBody_GetKineticEnergy(sb);
	for (int i = 0; i < nv; ++i) {
		ibVec3 p = ibSoftBody_GetPosition(sb, i);
		if (!(fabs(p.x) + fabs(p.y) + fabs(p.z) < 1e4)) *finite = false;
		E += ibSoftBody_GetParticleMass(sb, i) * 9.81 * p.z;
		*maxZ = fmax(*maxZ, p.z);
	}
	return E;
}

static Outcome run(int pinMode, double compliance, ibSoftBending bending, ibSoftSolver solver, double seconds)
{
	const int n = 10;
	const double h = 1.0 / 60.0, z0 = 2.0;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	SoftGrid g = soft_grid(n, 2.0, ibV3(-1, -1, z0), ibV3(1, 0, 0), ibV3(0, 1, 0));
	int pins[16], np = grid_pins(n, pinMode, 0, pins);
	ibSoftBodyDef sd = soft_grid_def(&g);
	sd.density = 0.2;
	sd.stretchCompliance = compliance;
	sd.bending = bending;
	sd.bendingCompliance = 1.0;
	sd.pinned = pins;
	sd.pinnedCount = np;
	sd.solver = solver;
	ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
	assert_true(ibSoftBody_IsValid(sb));
	Outcome o = {true, 0.0, -1e300, 0.0, 0};
	double E0 = 0.0;
	int steps = (int)(seconds / h + 0.5);
	for (int s = 0; s < steps && o.finite; ++s) {
		assert_int_equal(ibWorld_Step(w, h), IB_OK);
		ibStepStats st = ibWorld_GetStepStats(w);
		double E = cloth_energy(sb, g.nv, &o.finite, &o.maxZ);
		if (s == 0) E0 = E;
		o.gain = fmax(o.gain, E - E0);
		if (!st.converged)
			o.unconverged++;
		else if (compliance == 0.0)
			o.maxErr = fmax(o.maxErr, ibWorld_GetSoftStepStats(w).maxInternalError);
	}
	soft_grid_free(&g);
	ibDestroyWorld(w);
	return o;
}

static const char* pinName[3] = {"4 corners", "2 corners", "edge"};

static void test_default_solver(void** state)
{
	(void)state;
	const double seconds = IBDYN_SLOW_TESTS ? 2.0 : 0.75;
	for (int mode = 0; mode < 3; ++mode)
		for (int c = 0; c < 2; ++c)
			for (int b = 0; b < 2; ++b) {
				double comp = c ? 1e-4 : 0.0;
				/* a straight inextensible edge between two pins: no solution exists (infinite tension) */
				bool singular = comp == 0.0 && mode == 1;
				if (singular && b) continue; /* costly (every step at the sweep cap), covered without bending */
				ibSoftBending bend = b ? IB_SOFT_BENDING_DIHEDRAL : IB_SOFT_BENDING_NONE;
				Outcome o = run(mode, comp, bend, IB_SOFT_SOLVER_AUTO, seconds);
				print_message("%-9s compliance %-6g bending %d: gain %.3g J, top %.3f m, unconverged %d, max error %.3g m\n",
				              pinName[mode], comp, b, o.gain, o.maxZ, o.unconverged, o.maxErr);
				assert_true(o.finite);
				assert_true(o.gain <= 0.1);
				assert_true(o.maxZ < 2.5);
				if (!singular) assert_true(o.unconverged <= 2);
				assert_true(o.maxErr <= 1e-6 + 1e-12);
			}
}

static void test_gauss_seidel(void** state)
{
	(void)state;
	const double seconds = IBDYN_SLOW_TESTS ? 1.0 : 0.2;
	for (int mode = 1; mode < 3; ++mode)
		for (int c = 0; c < 2; ++c) {
			double comp = c ? 1e-4 : 0.0;
			Outcome o = run(mode, comp, IB_SOFT_BENDING_NONE, IB_SOFT_SOLVER_GAUSS_SEIDEL, seconds);
			print_message("Gauss-Seidel %-9s compliance %-6g: gain %.3g J, top %.3f m, unconverged %d\n", pinName[mode], comp,
			              o.gain, o.maxZ, o.unconverged);
			assert_true(o.finite);
			assert_true(o.gain <= 1e-6);
			assert_true(o.maxZ < 2.01);
		}
}

static void test_random_cloths(void** state)
{
	(void)state;
	const int count = IBDYN_SLOW_TESTS ? 40 : 12;
	int worstSeed = 0;
	double worst = 0.0;
	for (int seed = 1; seed <= count; ++seed) {
		unsigned long long rs = 0x9E3779B97F4A7C15ull * (unsigned long long)seed + 12345;
		double u[16];
		for (int k = 0; k < 16; ++k) u[k] = 0.5 * (soft_rand(&rs) + 1.0);
		int n = 3 + (int)(u[0] * 10), bend = (int)(u[4] * 3) % 3, mode = (int)(u[6] * 5) % 5;
		double size = 0.5 + 2.0 * u[1], tilt = 1.5 * u[5], speed = 3.0 * u[8];
		double hz = (double[]){60, 60, 120, 120, 240}[(int)(u[2] * 5) % 5];
		double comp = (double[]){0, 0, 0, 1e-2, 1e-2}[(int)(u[3] * 5) % 5];
		if (mode == 1 && comp == 0.0) comp = 1e-6; /* inextensible between two corners has no solution */
		ibWorldDef wd = ibDefaultWorldDef();
		ibWorldId w = ibCreateWorld(&wd);
		SoftGrid g = soft_grid(n, size, ibV3(-size / 2, -size / 2, 2), ibV3(1, 0, 0), ibV3(0, cos(tilt), sin(tilt)));
		int pins[16], np = grid_pins(n, mode, (int)(u[7] * g.nv) % g.nv, pins);
		ibSoftBodyDef sd = soft_grid_def(&g);
		sd.density = 0.05 + 0.5 * u[9];
		sd.stretchCompliance = comp;
		sd.bending = (ibSoftBending)bend;
		sd.bendingCompliance = (double[]){1e-3, 1e-1, 1.0}[(int)(u[10] * 3) % 3];
		sd.pinned = np ? pins : NULL;
		sd.pinnedCount = np;
		ibSoftBodyId sb = ibCreateSoftBody(w, &sd);
		assert_true(ibSoftBody_IsValid(sb));
		/* a motion the edges and pins allow: free cloth turning about z and rising, one pinned vertex
		 * turning about it; cloth pinned at corners or an edge starts at rest */
		ibVec3 c = mode == 3 ? g.v[pins[0]] : ibV3(0, 0, 2);
		if (mode < 3) speed = 0.0;
		for (int i = 0; i < g.nv; ++i)
			if (!ibSoftBody_IsPinned(sb, i)) {
				ibVec3 r = ibSub(g.v[i], c);
				ibVec3 v = ibV3(speed * r.y, -speed * r.x, mode == 4 ? 0.5 * speed : 0.0);
				assert_int_equal(ibSoftBody_SetVelocity(sb, i, v), IB_OK);
			}
		double h = 1.0 / hz, mass = ibSoftBody_GetMass(sb), E0 = 0.0, gain = 0.0, top = -1e300;
		int steps = (int)(2.0 * hz), unconverged = 0;
		bool finite = true;
		for (int s = 0; s <= steps && finite; ++s) {
			if (s > 0) {
				assert_int_equal(ibWorld_Step(w, h), IB_OK);
				unconverged += !ibWorld_GetStepStats(w).converged;
			}
			double E = cloth_energy(sb, g.nv, &finite, &top);
			if (s == 0)
				E0 = E;
			else
				gain = fmax(gain, E - E0);
		}
		double scale = mass * 9.81 * size + mass * speed * speed;
		if (!finite || unconverged > 0 || gain > 0.02 * scale)
			fail_msg("seed %d (n %d, %.2f m, %g Hz, compliance %g, bending %d, pins %d): finite %d, unconverged %d of %d, "
			         "gain %.3g J (%.3g of %.3g)",
			         seed, n, size, hz, comp, bend, mode, finite, unconverged, steps, gain, gain / scale, scale);
		if (gain / scale > worst) worst = gain / scale, worstSeed = seed;
		soft_grid_free(&g);
		ibDestroyWorld(w);
	}
	print_message("%d random cloths: largest energy gain %.3g of the scale (seed %d)\n", count, worst, worstSeed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_default_solver), cmocka_unit_test(test_gauss_seidel),
	                                   cmocka_unit_test(test_random_cloths)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
