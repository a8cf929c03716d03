/* Chooses the method for each system of joints every step (§3.3, §6.2.1). The basic joints are
 * stored grouped by the method class of their island (solver_groups.c, joint.c): the O(n) LGS
 * range first (IB_SOLVER_AUTO / IB_SOLVER_LGS; loops cut, iterative where the tree cannot be
 * factored), then the sparse LGS range, then the iterative range. Each solver runs on its range
 * through a view of the store (basics, rhs and count narrowed); the ranges share no body, so the
 * order of the solves does not matter. An impulse bound (maxCorrectionImpulse > 0) lives in the
 * iterative loop and makes every island iterative. */
#include <math.h>

#include "joints/joint_internal.h"

typedef struct StoreView {
	ibBasic* basics;
	ibVec3* rhs;
	int32_t count;
} StoreView;

/* Narrow the store to the basics of class c (or of all classes for c = IB_CLASS_COUNT). */
static StoreView view_begin(ibJointStore* st, int c)
{
	StoreView v = {st->basics, st->rhs, st->basicCount};
	if (c == IB_CLASS_COUNT) return v;
	st->basics += st->classStart[c];
	st->rhs += st->classStart[c];
	st->basicCount = st->classStart[c + 1] - st->classStart[c];
	return v;
}

static void view_end(ibJointStore* st, StoreView v)
{
	st->basics = v.basics;
	st->rhs = v.rhs;
	st->basicCount = v.count;
}

static bool bounded(const ibWorld* w) { return w->solver.maxCorrectionImpulse > 0.0; }

static void count_islands(ibWorld* w, bool treeOk)
{
	const ibJointStore* st = w->joints;
	int tree = st->classIslands[IB_CLASS_TREE], sparse = st->classIslands[IB_CLASS_SPARSE];
	int iter = st->classIslands[IB_CLASS_ITERATIVE];
	if (bounded(w)) iter += tree + sparse, tree = sparse = 0;
	if (!treeOk) iter += tree, tree = 0;
	w->stats.lgsIslands = tree;
	w->stats.lgsSparseIslands = sparse;
	w->stats.iterativeIslands = iter;
}

/* Run the class solvers on their ranges; velocity selects the velocity correction. */
static ibResult run_classes(ibWorld* w, double h, bool velocity)
{
	ibJointStore* st = w->joints;
	ibResult res = IB_OK;
	if (bounded(w)) { /* everything iterative */
		if (!velocity) count_islands(w, true);
		return velocity ? ib_iterative_velocity_correction(w, h, true) : ib_iterative_position_correction(w, h);
	}
	for (int c = 0; c < IB_CLASS_COUNT; ++c) {
		if (st->classStart[c + 1] == st->classStart[c]) continue;
		StoreView v = view_begin(st, c);
		ibResult r;
		if (c == IB_CLASS_TREE) {
			bool ok = ib_lgs_applicable(w);
			if (!velocity) count_islands(w, ok);
			if (ok)
				r = velocity ? ib_lgs_velocity_correction(w, h) : ib_lgs_position_correction(w, h);
			else
				r = velocity ? ib_iterative_velocity_correction(w, h, true) : ib_iterative_position_correction(w, h);
		} else if (c == IB_CLASS_SPARSE) {
			r = velocity ? ib_lgs_sparse_velocity_correction(w, h) : ib_lgs_sparse_position_correction(w, h);
		} else {
			r = velocity ? ib_iterative_velocity_correction(w, h, true) : ib_iterative_position_correction(w, h);
		}
		view_end(st, v);
		if (r != IB_OK && res == IB_OK) res = r;
	}
	if (!velocity && st->classStart[1] == 0) count_islands(w, true); /* no tree range */
	return res;
}

static ibResult run_position_classes(ibWorld* w, double h) { return run_classes(w, h, false); }
static ibResult run_velocity_classes(ibWorld* w, double h) { return run_classes(w, h, true); }

/* Some island is solved by an LGS method (soft rows then alternate with the solves; with a mixed
 * world the iterative range still sweeps the soft rows inside its own loop as well). */
static bool has_lgs_range(const ibWorld* w)
{
	const ibJointStore* st = w->joints;
	if (bounded(w)) return false;
	return st->classStart[IB_CLASS_TREE + 1] > st->classStart[IB_CLASS_TREE] ||
	       st->classStart[IB_CLASS_SPARSE + 1] > st->classStart[IB_CLASS_SPARSE];
}

ibResult ib_joints_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (st && !ib_joints_rebuild_basics(w)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in joint solver");
	if (!st || st->basicCount == 0) return ib_soft_position_correction(w, h); /* soft rows alone */
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		st->pred[i].version = ~w->bodies[i].velVersion;
		st->pred[i].terms.valid = false; /* recomputed at this pose */
	}
	ib_joints_recovery_slack(w, st);
	/* LGS ranges: the soft rows alternate with the rigid solves; iterative only: swept inside its loop */
	ib_limits_begin(w, h);
	ibResult r = has_lgs_range(w) ? ib_soft_position_hybrid(w, h, run_position_classes) : run_classes(w, h, false);
	ib_limits_position_correction(w, h); /* one-sided limit rows, interleaved with joint sweeps */
	return r;
}

ibResult ib_joints_velocity_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return ib_soft_velocity_correction(w, h);
	ibResult r = has_lgs_range(w) ? ib_soft_velocity_hybrid(w, h, run_velocity_classes) : run_classes(w, h, true);
	ib_limits_velocity_correction(w, h);
	return r;
}

/* True if some joint's velocity condition is violated at the current instant (e.g. the user set
 * inconsistent initial velocities); then the step starts with a velocity correction, which is the
 * inelastic projection of the velocities, instead of letting the joint correction turn the
 * inconsistency into position-level corrections (which adds energy of order h). */
bool ib_joints_velocity_inconsistent(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return false;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		ib_solver_prepare_points(w, c);
		if (ib_solver_projected_norm(c, ib_solver_velocity_error(w, c)) > w->solver.velocityTolerance) return true;
	}
	return false;
}

/* Sub-steps needed so that no jointed dynamic body turns by more than maxRotation (rad) per
 * sub-step at its current angular velocity; 1 if off (maxRotation <= 0); at most 8. */
enum { IB_MAX_ROTATION_SUBSTEPS = 8 };

int ib_joints_rotation_substeps(ibWorld* w, double h, double maxRotation)
{
	ibJointStore* st = w->joints;
	if (!(maxRotation > 0.0) || !st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return 1;
	double wmax2 = 0.0;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		const int32_t bodies[2] = {c->b1, c->b2};
		for (int i = 0; i < 2; ++i) {
			const ibBody* b = &w->bodies[bodies[i]];
			if (ib_is_dynamic(b)) wmax2 = fmax(wmax2, ibLengthSq(b->st.w));
		}
	}
	/* capped: a body spun up by an impossible drive (inconsistent system) would otherwise ask for
	 * hundreds of sub-steps that cannot help; the normal subdivision on non-convergence remains */
	double n = ceil(sqrt(wmax2) * h / maxRotation);
	return n <= 1.0 ? 1 : n >= IB_MAX_ROTATION_SUBSTEPS ? IB_MAX_ROTATION_SUBSTEPS : (int)n;
}
