/* [IMPL] Sparse Cholesky factorisation A = L L^T of a symmetric positive definite matrix made of small
 * dense blocks (sizes 1..IB_BCHOL_MAX_DIM; the contact direct solve has 6x6 faces, 3x3 points, 1x1
 * normals), docs/contacts.md "Direct solve".
 *
 * - Analysis (once per block pattern): a minimum-degree ordering of the block graph (the degree of a
 *   block is the number of scalar rows it is coupled to in the elimination graph), and the block
 *   structure of L (the elimination graph's neighbours of each block when it is eliminated).
 * - Numeric factorisation (right-looking, in elimination order): dense Cholesky of each diagonal block,
 *   a triangular solve for the blocks below it, dense updates of the blocks they couple.
 * - Solve: block forward and back substitution.
 *
 * A is given in the caller's block order: block i has dim[i] rows at scalar offset off[i] (the prefix
 * sums of dim); the pattern of the strict upper triangle as, for each block j, the sorted blocks i < j
 * coupled to it (adj[adjStart[j] .. adjStart[j+1]-1]). The values: diag (block j's dim[j] x dim[j]
 * matrix, row-major, at diagOff[j] = sum of dim[i]^2 for i < j) and offd (for the z-th entry (i, j) of
 * adj, the dim[i] x dim[j] block A(i, j) row-major at offOff[z]); ib_bchol_value_sizes gives the
 * offsets. Memory is grown through the caller's functions (no allocation once grown). */
#ifndef IBDYN_BLOCK_CHOL_H
#define IBDYN_BLOCK_CHOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { IB_BCHOL_MAX_DIM = 6 };

typedef struct ibBlockAlloc {
	void* ctx;
	/* grow *array (element size elem) to at least need elements, keeping its contents; false on OOM */
	bool (*grow)(void* ctx, void** array, int32_t* capacity, int32_t need, size_t elem);
	void (*release)(void* ctx, void* p, size_t size);
} ibBlockAlloc;

typedef struct ibBlockChol {
	int32_t n, m;         /* blocks, scalar rows */
	int64_t lnz;          /* scalar entries of L (lower triangle with the diagonal) */
	int32_t nval;         /* doubles of L's storage (full diagonal blocks) */
	bool analysed, factored;
	int32_t *dim, *perm, *iperm; /* dim of block (caller's order); perm[k] = caller's block eliminated k-th */
	int32_t *edim;        /* block sizes in elimination order */
	int32_t *eoff;        /* scalar offset of elimination block k (n + 1), then of the caller's block j (n + 1) */
	int32_t *colStart, *rowIdx; /* L: below-diagonal blocks of column k: rows rowIdx[colStart[k] ..] (sorted) */
	int32_t *valPos;      /* value offset of each (row, column) block of L, row-major d_row x d_col */
	int32_t *diagPos;     /* value offset of the diagonal block of column k (d_k x d_k, row-major, lower) */
	int32_t *adjStart, *adjRow; /* the caller's pattern (copy) */
	int32_t *inPos;       /* per entry z of the caller's pattern: value offset in L, negative (-1 - pos): transposed */
	double *val, *work;
	int32_t adjStartCap, adjRowCap, edimCap;
	int32_t dimCap, permCap, ipermCap, eoffCap, colStartCap, rowIdxCap, valPosCap, diagPosCap, inPosCap, valCap, workCap;
	/* ordering scratch (explicit elimination graph) */
	int32_t *gStart, *gLen, *gCap, *pool, *mark, *deg;
	int32_t gStartCap, gLenCap, gCapCap, poolCap, markCap, degCap, poolLen;
	int32_t *heap, *hpos; /* blocks not yet eliminated, a binary heap on (degree, block); hpos: place in it */
	int32_t heapCap, hposCap;
	int32_t nadj;         /* entries of the caller's pattern */
} ibBlockChol;

/* Scalar offsets of the caller's values: diagOff[j] (n + 1 entries), offOff[z] (nadj + 1 entries); either may be NULL. */
void ib_bchol_value_sizes(int32_t n, const int32_t* dim, const int32_t* adjStart, const int32_t* adj, int32_t* diagOff, int32_t* offOff);
/* Ordering and symbolic structure; false on OOM or a malformed pattern (F unusable then). */
bool ib_bchol_analyse(ibBlockChol* F, const ibBlockAlloc* al, int32_t n, const int32_t* dim, const int32_t* adjStart, const int32_t* adj);
/* dst gets src's analysis (same ordering and structure, as if dst had analysed the same pattern); false on OOM. */
bool ib_bchol_copy_analysis(ibBlockChol* dst, const ibBlockChol* src, const ibBlockAlloc* al);
/* Numeric factorisation of the analysed pattern; false if A is not (numerically) positive definite. */
bool ib_bchol_factor(ibBlockChol* F, const double* diag, const double* offd);
/* x = A^-1 b in the caller's scalar order (x may be b); needs a factor. */
void ib_bchol_solve(ibBlockChol* F, const double* b, double* x);
void ib_bchol_free(ibBlockChol* F, const ibBlockAlloc* al);

#endif
