/* Chooses the method for the system of joints each step (§3.3, §6.2.1): the O(n) LGS for acyclic
 * joint graphs, the iterative method otherwise or when asked for. */
#include "joints/joint_internal.h"

/* IB_SOLVER_LGS_SPARSE: the CHOLMOD system over the whole joint graph, loops included */
static bool use_sparse(const ibWorld* w)
{
	return w->solver.method == IB_SOLVER_LGS_SPARSE && w->solver.maxCorrectionImpulse <= 0.0;
}

static bool use_lgs(ibWorld* w)
{
	if (w->solver.method == IB_SOLVER_ITERATIVE) return false;
	if (w->solver.maxCorrectionImpulse > 0.0) return false; /* the impulse bound lives in the iterative loop */
	return ib_lgs_applicable(w);
}

ibResult ib_joints_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (st && !ib_joints_rebuild_basics(w)) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in joint solver");
	if (!st || st->basicCount == 0) return ib_soft_position_correction(w, h); /* soft rows alone */
	for (int32_t i = 0; i < w->bodyHigh; ++i) st->pred[i].version = ~w->bodies[i].velVersion;
	/* LGS methods: the soft rows alternate with the rigid solve; iterative: swept inside its loop */
	if (use_sparse(w)) return ib_soft_position_hybrid(w, h, ib_lgs_sparse_position_correction);
	return use_lgs(w) ? ib_soft_position_hybrid(w, h, ib_lgs_position_correction) : ib_iterative_position_correction(w, h);
}

ibResult ib_joints_velocity_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	if (!st || st->basicCount == 0) return ib_soft_velocity_correction(w, h);
	if (use_sparse(w)) return ib_soft_velocity_hybrid(w, h, ib_lgs_sparse_velocity_correction);
	return use_lgs(w) ? ib_soft_velocity_hybrid(w, h, ib_lgs_velocity_correction) : ib_iterative_velocity_correction(w, h, true);
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
		ib_solver_prepare(w, c);
		if (ib_solver_projected_norm(c, ib_solver_velocity_error(w, c)) > w->solver.velocityTolerance) return true;
	}
	return false;
}
