/* [IMPL] Pairs of doubles for the hot kernels (GCC vector extension: SSE2 on x86-64). Each lane does
 * the operations of the scalar form in the same order (no contraction, no reassociation: ISO C builds
 * keep -ffp-contract=off), so paired code gives the same bits as the scalar code it replaces. */
#ifndef IBDYN_SRC_V2_H
#define IBDYN_SRC_V2_H

#include <string.h>

typedef double ibV2 __attribute__((vector_size(16)));
typedef long long ibV2m __attribute__((vector_size(16))); /* lane masks of ibV2 comparisons */

static inline __attribute__((always_inline)) ibV2 ib_v2_load(const double* p)
{
	ibV2 v;
	memcpy(&v, p, sizeof v);
	return v;
}
static inline __attribute__((always_inline)) void ib_v2_store(double* p, ibV2 v) { memcpy(p, &v, sizeof v); }
static inline __attribute__((always_inline)) ibV2 ib_v2_bc(double x) { return (ibV2){x, x}; }

#endif
