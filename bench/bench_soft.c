/* bench/soft: an n x n cloth hanging by two rigid–soft triangle joints from a bar that a hinge
 * servo swings (the scene of tests/test_soft_cloth_bar.c, tests/soft_bar_scene.h); ms per step and
 * the largest attachment error over the run, for eps_d = 1e-4 and 1e-6 (the cloth's own rows at
 * 1e-5 m, stretch compliance 1e-3 m/N), with the default row solver IB_SOFT_SOLVER_AUTO (the sparse
 * direct soft solver) on the 20 x 20 (441 particles) and 50 x 50 (2601) cloths, and for comparison
 * the Gauss–Seidel row sweeps on the 20 x 20 cloth (on the 50 x 50 one they stall at the sweep cap,
 * docs/soft.md). Usage: bench_soft [steps] (default 100 steps of 5 ms). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "ibdyn/ibdyn.h"
#include "soft_bar_scene.h"

int main(int argc, char** argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 100;
	const double h = 0.005, eps[2] = {1e-4, 1e-6};
	const int sizes[3] = {20, 20, 50};
	const ibSoftSolver solvers[3] = {ibDefaultSoftBodyDef().solver, IB_SOFT_SOLVER_GAUSS_SEIDEL, ibDefaultSoftBodyDef().solver};
	for (int q = 0; q < 6; ++q) {
		int k = q % 2, n = sizes[q / 2];
		ibSoftSolver solver = solvers[q / 2];
		char scene[32];
		snprintf(scene, sizeof scene, "cloth%d", n);
		BarScene s;
		if (!bar_scene_ex(&s, n, IB_SOLVER_ITERATIVE, eps[k], 1e-5, 0, 1e-3, solver)) {
			fprintf(stderr, "bench_soft: scene failed: %s\n", ibWorld_GetLastError(s.w));
			return 1;
		}
		double maxErr = 0.0, t0 = bench_now_ms();
		int diverged = 0, unconverged = 0, sweeps = 0, factorizations = 0, solves = 0;
		for (int i = 0; i < steps && !diverged; ++i) {
			if (ibWorld_Step(s.w, h) != IB_OK) diverged = 1;
			ibStepStats st = ibWorld_GetStepStats(s.w);
			unconverged += !st.converged || st.stepSubdivisions > 1;
			sweeps += st.positionIterations;
			ibSoftStepStats ss = ibWorld_GetSoftStepStats(s.w);
			factorizations += ss.sparseFactorizations;
			solves += ss.sparseSolves;
			double e = fmax(ibConstraint_GetError(s.att[0]), ibConstraint_GetError(s.att[1]));
			if (!(e == e)) diverged = 1;
			maxErr = e > maxErr ? e : maxErr;
		}
		double ms = (bench_now_ms() - t0) / steps;
		const char* name = solver == IB_SOFT_SOLVER_AUTO ? (factorizations ? "auto:sparse" : "auto:gauss-seidel")
		                   : solver == IB_SOFT_SOLVER_SPARSE ? "sparse"
		                                                     : "gauss-seidel";
		bench_print(scene, "ibdyn", ms, maxErr,
		            "eps=%g steps=%d h=%g solver=%s sweeps_per_step=%.1f factorizations_per_step=%.2f "
		            "solves_per_step=%.1f unconverged=%d diverged=%d",
		            eps[k], steps, h, name, (double)sweeps / steps, (double)factorizations / steps, (double)solves / steps,
		            unconverged, diverged);
		bar_scene_free(&s);
	}
	return 0;
}
