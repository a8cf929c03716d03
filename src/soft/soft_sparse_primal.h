/* The particle-space (primal) form of the sparse soft solve (src/soft/soft_sparse_primal.c), used by
 * soft_sparse.c for the joint correction when it is cheaper than the row-space system. */
#ifndef IBDYN_SOFT_SPARSE_PRIMAL_H
#define IBDYN_SOFT_SPARSE_PRIMAL_H

#include "soft/soft_internal.h"

struct cholmod_common_struct; /* cholmod_common (the header is included by the sources only) */

/* The system rows and their participants, owned by soft_sparse.c: row j touches the participants
 * incPart[q] (particle index, or particleCount + body index) for q in [incStart[j], incStart[j+1]),
 * with Jacobian blocks incJ[q] (3 or 6 values); partInc lists the incidences of each participant. */
typedef struct ibSpGraph {
	int32_t m, parts, particleCount;
	const int32_t *incStart, *incPart, *incRow, *partStart, *partInc;
	double* const* incJ;
	const double* compliance; /* per row */
} ibSpGraph;

typedef struct ibSpPrimal ibSpPrimal;

/* Pattern and symbolic factor of P = M + J_s^T diag(alpha/h^2)^-1 J_s over the participants' free
 * degrees of freedom (rows with compliance > 0: s; rows with compliance 0: hard, at most
 * IB_SP_MAX_HARD, through a Schur complement). NULL if the form does not apply (too many hard
 * rows, a rigid body with a locked axis) or out of memory; *flops = CHOLMOD's flop count. */
#define IB_SP_MAX_HARD 48
ibSpPrimal* ib_sp_primal_build(ibWorld* w, ibSoftStore* ss, struct cholmod_common_struct* cc, const ibSpGraph* g, double* flops);
/* The participants with finite mass are still those of the build (pins, body types unchanged). */
bool ib_sp_primal_matches(const ibWorld* w, const ibSoftStore* ss, const ibSpPrimal* P, const ibSpGraph* g);
/* Numeric factor at the current J and masses, dc = compliance / h^2 per row; false if the rows are
 * too stiff for the form (dc below 1e-7 of the row's J M^-1 J^T: use the row-space system). */
bool ib_sp_primal_factor(ibWorld* w, ibSoftStore* ss, struct cholmod_common_struct* cc, ibSpPrimal* P, const ibSpGraph* g,
                         const double* dc);
/* lam = (J M^-1 J^T + diag(dc))^-1 b, exactly (up to rounding) through the factor of P. */
bool ib_sp_primal_solve(ibSpPrimal* P, struct cholmod_common_struct* cc, const ibSpGraph* g, const double* dc, const double* b,
                        double* lam);
void ib_sp_primal_free(ibWorld* w, struct cholmod_common_struct* cc, ibSpPrimal** P);

#endif
