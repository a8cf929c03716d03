/* CHOLMOD headers over our own arrays (no copies): a symmetric matrix stored as its upper
 * triangle in compressed columns (stype 1, int indices, sorted, packed) and a dense column vector.
 * Shared by the sparse LGS (src/joints/solver_lgs_sparse.c) and the sparse soft solver
 * (src/soft/soft_sparse.c). */
#ifndef IBDYN_CHOLMOD_VIEW_H
#define IBDYN_CHOLMOD_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cholmod.h>

static inline cholmod_sparse ib_cholmod_upper(int32_t m, int64_t nnz, int32_t* Ap, int32_t* Ai, double* Ax)
{
	cholmod_sparse A;
	memset(&A, 0, sizeof A);
	A.nrow = A.ncol = (size_t)m;
	A.nzmax = (size_t)nnz;
	A.p = Ap;
	A.i = Ai;
	A.x = Ax;
	A.stype = 1;
	A.itype = CHOLMOD_INT;
	A.xtype = CHOLMOD_REAL;
	A.dtype = CHOLMOD_DOUBLE;
	A.sorted = 1;
	A.packed = 1;
	return A;
}

/* cholmod_start with our settings: no printing (errors go through the status), one AMD ordering,
 * postordered. False if CHOLMOD could not start. */
static inline bool ib_cholmod_start(cholmod_common* cc)
{
	if (!cholmod_start(cc)) return false;
	cc->print = 0;
	cc->nmethods = 1;
	cc->method[0].ordering = CHOLMOD_AMD;
	cc->postorder = 1;
	return true;
}

static inline cholmod_dense ib_cholmod_vector(double* v, int32_t m)
{
	cholmod_dense B;
	memset(&B, 0, sizeof B);
	B.nrow = B.nzmax = B.d = (size_t)m;
	B.ncol = 1;
	B.x = v;
	B.xtype = CHOLMOD_REAL;
	B.dtype = CHOLMOD_DOUBLE;
	return B;
}

#endif
