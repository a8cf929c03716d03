/* [IMPL] Block-sparse Cholesky factorisation (block_chol.h). */
#include "math/block_chol.h"
#include "math/v2.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static bool grow_i(const ibBlockAlloc* al, int32_t** a, int32_t* cap, int64_t need)
{
	if (need > INT32_MAX - 1) return false;
	return al->grow(al->ctx, (void**)a, cap, (int32_t)need, sizeof(int32_t));
}

void ib_bchol_value_sizes(int32_t n, const int32_t* dim, const int32_t* adjStart, const int32_t* adj, int32_t* diagOff, int32_t* offOff)
{
	int32_t pos = 0;
	for (int32_t j = 0; j < n; ++j) {
		if (diagOff) diagOff[j] = pos;
		pos += dim[j] * dim[j];
	}
	if (diagOff) diagOff[n] = pos;
	pos = 0;
	for (int32_t j = 0; j < n; ++j)
		for (int32_t z = adjStart[j]; z < adjStart[j + 1]; ++z) {
			if (offOff) offOff[z] = pos;
			pos += dim[adj[z]] * dim[j];
		}
	if (offOff) offOff[adjStart[n]] = pos;
}

/* ---------------------------------------------------------------- ordering */

/* room for len entries in v's list of the elimination graph (moved to the end of the pool if needed) */
static bool list_room(ibBlockChol* F, const ibBlockAlloc* al, int32_t v, int32_t len)
{
	if (len <= F->gCap[v]) return true;
	int32_t cap = len + len / 2 + 4;
	if (!grow_i(al, &F->pool, &F->poolCap, (int64_t)F->poolLen + cap)) return false;
	memcpy(F->pool + F->poolLen, F->pool + F->gStart[v], (size_t)F->gLen[v] * sizeof(int32_t));
	F->gStart[v] = F->poolLen;
	F->gCap[v] = cap;
	F->poolLen += cap;
	return true;
}

/* The heap of the blocks to eliminate: the least (degree, index) on top, so that the choice is that of a
 * scan for the first block of least degree. */
static inline bool heap_less(const ibBlockChol* F, int32_t a, int32_t b)
{
	return F->deg[a] < F->deg[b] || (F->deg[a] == F->deg[b] && a < b);
}
static void heap_up(ibBlockChol* F, int32_t i)
{
	int32_t v = F->heap[i];
	while (i > 0) {
		int32_t p = (i - 1) / 2, u = F->heap[p];
		if (!heap_less(F, v, u)) break;
		F->heap[i] = u, F->hpos[u] = i, i = p;
	}
	F->heap[i] = v, F->hpos[v] = i;
}
static void heap_down(ibBlockChol* F, int32_t i, int32_t len)
{
	int32_t v = F->heap[i];
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= len) break;
		if (c + 1 < len && heap_less(F, F->heap[c + 1], F->heap[c])) ++c;
		if (!heap_less(F, F->heap[c], v)) break;
		F->heap[i] = F->heap[c], F->hpos[F->heap[i]] = i, i = c;
	}
	F->heap[i] = v, F->hpos[v] = i;
}

/* Minimum degree on the explicit elimination graph: eliminating v joins its neighbours pairwise; the
 * degree of a block is the sum of the dims of its neighbours (its column count in L). The neighbours of
 * v at its elimination are the rows of its column of L (kept in rowIdx, caller's indices). */
static bool order(ibBlockChol* F, const ibBlockAlloc* al, const int32_t* adjStart, const int32_t* adj)
{
	int32_t n = F->n;
	if (!grow_i(al, &F->gStart, &F->gStartCap, n + 1) || !grow_i(al, &F->gLen, &F->gLenCap, n + 1) ||
	    !grow_i(al, &F->gCap, &F->gCapCap, n + 1) || !grow_i(al, &F->mark, &F->markCap, n + 1) ||
	    !grow_i(al, &F->deg, &F->degCap, n + 1) || !grow_i(al, &F->heap, &F->heapCap, n + 1) ||
	    !grow_i(al, &F->hpos, &F->hposCap, n + 1))
		return false;
	memset(F->gLen, 0, (size_t)n * sizeof(int32_t));
	for (int32_t j = 0; j < n; ++j)
		for (int32_t z = adjStart[j]; z < adjStart[j + 1]; ++z) F->gLen[j]++, F->gLen[adj[z]]++;
	int64_t total = 0;
	for (int32_t v = 0; v < n; ++v) {
		F->gStart[v] = (int32_t)total;
		F->gCap[v] = F->gLen[v];
		total += F->gLen[v];
		F->gLen[v] = 0;
	}
	if (!grow_i(al, &F->pool, &F->poolCap, 2 * total + 16)) return false;
	F->poolLen = (int32_t)total;
	for (int32_t j = 0; j < n; ++j)
		for (int32_t z = adjStart[j]; z < adjStart[j + 1]; ++z) {
			int32_t i = adj[z];
			F->pool[F->gStart[j] + F->gLen[j]++] = i;
			F->pool[F->gStart[i] + F->gLen[i]++] = j;
		}
	for (int32_t v = 0; v < n; ++v) {
		int32_t d = 0;
		for (int32_t e = 0; e < F->gLen[v]; ++e) d += F->dim[F->pool[F->gStart[v] + e]];
		F->deg[v] = d;
		F->mark[v] = -1;
	}
	int32_t nrow = 0, hlen = n;
	for (int32_t u = 0; u < n; ++u) F->heap[u] = u, F->hpos[u] = u;
	for (int32_t i = n / 2 - 1; i >= 0; --i) heap_down(F, i, hlen);
	for (int32_t k = 0; k < n; ++k) {
		int32_t v = F->heap[0];
		if (--hlen > 0) {
			F->heap[0] = F->heap[hlen];
			heap_down(F, 0, hlen);
		}
		F->perm[k] = v;
		F->iperm[v] = k;
		F->deg[v] = -1; /* eliminated */
		int32_t lv = F->gLen[v];
		F->colStart[k] = nrow;
		if (!grow_i(al, &F->rowIdx, &F->rowIdxCap, (int64_t)nrow + lv + 1)) return false;
		memcpy(F->rowIdx + nrow, F->pool + F->gStart[v], (size_t)lv * sizeof(int32_t));
		nrow += lv;
		/* each neighbour u: N(u) = N(u) + N(v) - {u, v} */
		for (int32_t a = 0; a < lv; ++a) {
			int32_t u = F->pool[F->gStart[v] + a];
			int32_t* lu = F->pool + F->gStart[u];
			int32_t len = 0;
			for (int32_t e = 0; e < F->gLen[u]; ++e)
				if (lu[e] != v) {
					lu[len++] = lu[e];
					F->mark[lu[e]] = u;
				}
			F->gLen[u] = len;
			int32_t add = 0;
			for (int32_t b = 0; b < lv; ++b) {
				int32_t x = F->pool[F->gStart[v] + b];
				if (x != u && F->mark[x] != u) ++add;
			}
			if (!list_room(F, al, u, len + add)) return false;
			lu = F->pool + F->gStart[u];
			const int32_t* nv = F->pool + F->gStart[v]; /* v's list is not moved by u's room */
			for (int32_t b = 0; b < lv; ++b) {
				int32_t x = nv[b];
				if (x != u && F->mark[x] != u) {
					lu[len++] = x;
					F->mark[x] = u;
				}
			}
			F->gLen[u] = len;
			int32_t d = 0;
			for (int32_t e = 0; e < len; ++e) d += F->dim[lu[e]];
			int32_t old = F->deg[u];
			F->deg[u] = d;
			if (d < old) heap_up(F, F->hpos[u]);
			else if (d > old) heap_down(F, F->hpos[u], hlen);
		}
		for (int32_t a = 0; a < lv; ++a) F->mark[F->pool[F->gStart[v] + a]] = -1;
	}
	F->colStart[n] = nrow;
	return true;
}

/* ---------------------------------------------------------------- analysis */

static int32_t find_row(const ibBlockChol* F, int32_t col, int32_t row)
{
	int32_t lo = F->colStart[col], hi = F->colStart[col + 1] - 1;
	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (F->rowIdx[mid] == row) return mid;
		if (F->rowIdx[mid] < row) lo = mid + 1;
		else hi = mid - 1;
	}
	return -1;
}

bool ib_bchol_analyse(ibBlockChol* F, const ibBlockAlloc* al, int32_t n, const int32_t* dim, const int32_t* adjStart, const int32_t* adj)
{
	F->analysed = F->factored = false;
	if (n < 0) return false;
	int32_t nadj = adjStart[n];
	for (int32_t j = 0; j < n; ++j) {
		if (dim[j] < 1 || dim[j] > IB_BCHOL_MAX_DIM) return false;
		for (int32_t z = adjStart[j]; z < adjStart[j + 1]; ++z)
			if (adj[z] < 0 || adj[z] >= j || (z > adjStart[j] && adj[z] <= adj[z - 1])) return false;
	}
	if (!grow_i(al, &F->dim, &F->dimCap, n + 1) || !grow_i(al, &F->perm, &F->permCap, n + 1) ||
	    !grow_i(al, &F->iperm, &F->ipermCap, n + 1) || !grow_i(al, &F->eoff, &F->eoffCap, 2 * (int64_t)n + 2) ||
	    !grow_i(al, &F->colStart, &F->colStartCap, n + 1) || !grow_i(al, &F->diagPos, &F->diagPosCap, n + 1) ||
	    !grow_i(al, &F->inPos, &F->inPosCap, nadj + 1) || !grow_i(al, &F->rowIdx, &F->rowIdxCap, nadj + 1) ||
	    !grow_i(al, &F->adjStart, &F->adjStartCap, n + 1) || !grow_i(al, &F->adjRow, &F->adjRowCap, nadj + 1) ||
	    !grow_i(al, &F->edim, &F->edimCap, n + 1))
		return false;
	F->n = n;
	F->nadj = nadj;
	memcpy(F->dim, dim, (size_t)n * sizeof(int32_t));
	memcpy(F->adjStart, adjStart, (size_t)(n + 1) * sizeof(int32_t));
	memcpy(F->adjRow, adj, (size_t)nadj * sizeof(int32_t));
	if (!order(F, al, adjStart, adj)) return false;
	int32_t nrow = F->colStart[n];
	if (!grow_i(al, &F->valPos, &F->valPosCap, nrow + 1)) return false;
	/* rows in elimination indices, sorted (short lists: insertion sort) */
	for (int32_t k = 0; k < n; ++k)
		for (int32_t t = F->colStart[k]; t < F->colStart[k + 1]; ++t) {
			int32_t r = F->iperm[F->rowIdx[t]], q = t;
			while (q > F->colStart[k] && F->rowIdx[q - 1] > r) {
				F->rowIdx[q] = F->rowIdx[q - 1];
				--q;
			}
			F->rowIdx[q] = r;
		}
	/* scalar offsets: elimination order (eoff) and the caller's (eoff + n + 1) */
	int32_t* uoff = F->eoff + n + 1;
	int32_t m = 0;
	for (int32_t j = 0; j < n; ++j) uoff[j] = m, m += dim[j];
	uoff[n] = m;
	F->m = m;
	m = 0;
	for (int32_t k = 0; k < n; ++k) F->eoff[k] = m, F->edim[k] = dim[F->perm[k]], m += dim[F->perm[k]];
	F->eoff[n] = m;
	int64_t pos = 0, lnz = 0;
	for (int32_t k = 0; k < n; ++k) {
		int64_t dk = dim[F->perm[k]];
		F->diagPos[k] = (int32_t)pos;
		pos += dk * dk;
		lnz += dk * (dk + 1) / 2;
		for (int32_t t = F->colStart[k]; t < F->colStart[k + 1]; ++t) {
			F->valPos[t] = (int32_t)pos;
			pos += dk * dim[F->perm[F->rowIdx[t]]];
			lnz += dk * dim[F->perm[F->rowIdx[t]]];
		}
		if (pos > INT32_MAX / 2) return false;
	}
	F->lnz = lnz;
	F->nval = (int32_t)pos;
	if (!al->grow(al->ctx, (void**)&F->val, &F->valCap, (int32_t)pos + 1, sizeof(double)) ||
	    !al->grow(al->ctx, (void**)&F->work, &F->workCap, F->m + 1, sizeof(double)))
		return false;
	for (int32_t j = 0; j < n; ++j)
		for (int32_t z = adjStart[j]; z < adjStart[j + 1]; ++z) {
			int32_t pi = F->iperm[adj[z]], pj = F->iperm[j];
			int32_t col = pi < pj ? pi : pj, row = pi < pj ? pj : pi;
			int32_t t = find_row(F, col, row);
			if (t < 0) return false;
			F->inPos[z] = pi > pj ? F->valPos[t] : -1 - F->valPos[t];
		}
	F->analysed = true;
	return true;
}

static bool copy_i(const ibBlockAlloc* al, int32_t** dst, int32_t* cap, const int32_t* src, int64_t len)
{
	if (!grow_i(al, dst, cap, len + 1)) return false;
	if (len > 0) memcpy(*dst, src, (size_t)len * sizeof(int32_t));
	return true;
}

bool ib_bchol_copy_analysis(ibBlockChol* dst, const ibBlockChol* src, const ibBlockAlloc* al)
{
	dst->analysed = dst->factored = false;
	if (!src->analysed) return false;
	int32_t n = src->n, nrow = src->colStart[n], nadj = src->nadj;
	if (!copy_i(al, &dst->dim, &dst->dimCap, src->dim, n) || !copy_i(al, &dst->perm, &dst->permCap, src->perm, n) ||
	    !copy_i(al, &dst->iperm, &dst->ipermCap, src->iperm, n) || !copy_i(al, &dst->edim, &dst->edimCap, src->edim, n) ||
	    !copy_i(al, &dst->eoff, &dst->eoffCap, src->eoff, 2 * (int64_t)n + 2) ||
	    !copy_i(al, &dst->colStart, &dst->colStartCap, src->colStart, n + 1) ||
	    !copy_i(al, &dst->rowIdx, &dst->rowIdxCap, src->rowIdx, nrow) ||
	    !copy_i(al, &dst->valPos, &dst->valPosCap, src->valPos, nrow) ||
	    !copy_i(al, &dst->diagPos, &dst->diagPosCap, src->diagPos, n) ||
	    !copy_i(al, &dst->adjStart, &dst->adjStartCap, src->adjStart, n + 1) ||
	    !copy_i(al, &dst->adjRow, &dst->adjRowCap, src->adjRow, nadj) ||
	    !copy_i(al, &dst->inPos, &dst->inPosCap, src->inPos, nadj) ||
	    !al->grow(al->ctx, (void**)&dst->val, &dst->valCap, src->nval + 1, sizeof(double)) ||
	    !al->grow(al->ctx, (void**)&dst->work, &dst->workCap, src->m + 1, sizeof(double)))
		return false;
	dst->n = n, dst->m = src->m, dst->lnz = src->lnz, dst->nval = src->nval, dst->nadj = nadj;
	dst->analysed = true;
	return true;
}

/* ---------------------------------------------------------------- numeric factorisation */

/* dense Cholesky of the d x d block a (row-major; lower part used and overwritten) */
static bool chol_dense(double* a, int d)
{
	for (int i = 0; i < d; ++i) {
		for (int j = 0; j < i; ++j) {
			double s = a[d * i + j];
			for (int l = 0; l < j; ++l) s -= a[d * i + l] * a[d * j + l];
			a[d * i + j] = s / a[d * j + j];
		}
		double s = a[d * i + i];
		for (int l = 0; l < i; ++l) s -= a[d * i + l] * a[d * i + l];
		if (!(s > 0.0)) return false;
		a[d * i + i] = sqrt(s);
	}
	return true;
}

/* The kernels below take the column block's size d as a constant (SPECIALISE: one copy per size, which
 * the compiler unrolls; generic loops cost ~9 instructions per multiply-add on 6x6 blocks). */
#define IB_BCHOL_INLINE static inline __attribute__((always_inline))
#define SPECIALISE(call, d)                                                                                     \
	switch (d) {                                                                                                \
	case 1: call(1); break;                                                                                     \
	case 2: call(2); break;                                                                                     \
	case 3: call(3); break;                                                                                     \
	case 4: call(4); break;                                                                                     \
	case 5: call(5); break;                                                                                     \
	default: call(6); break;                                                                                    \
	}

/* x (r x d, row-major) := x L^-T, L the d x d lower factor */
IB_BCHOL_INLINE void solve_right_d(double* x, int r, const double* L, const int d)
{
	for (int i = 0; i < r; ++i) {
		double* xi = x + d * i;
		for (int c = 0; c < d; ++c) {
			double s = xi[c];
			for (int l = 0; l < c; ++l) s -= xi[l] * L[d * c + l];
			xi[c] = s / L[d * c + c];
		}
	}
}
static void solve_right(double* x, int r, const double* L, int d)
{
#define SOLR(D) solve_right_d(x, r, L, D)
	SPECIALISE(SOLR, d)
#undef SOLR
}

/* T (ra x rb) -= A B^T, A: ra x d, B: rb x d (row-major) */
IB_BCHOL_INLINE void update_d(double* T, const double* A, int ra, const double* B, int rb, const int d)
{
	for (int i = 0; i < ra; ++i) {
		const double* ai = A + d * i;
		for (int j = 0; j < rb; ++j) {
			const double* bj = B + d * j;
			double s = 0.0;
			for (int l = 0; l < d; ++l) s += ai[l] * bj[l];
			T[rb * i + j] -= s;
		}
	}
}
/* all three sizes constant for the blocks of the contact solve (6 faces, 3 points, 1 normals): the compiler
 * unrolls and pairs the independent dot products (same order of the sums: the same results) */
#define UPD3(RA, RB, D) update_d(T, A, RA, B, RB, D)
#define UPD_ROWS(RA, D)                                                                                         \
	switch (rb) {                                                                                               \
	case 6: UPD3(RA, 6, D); return;                                                                             \
	case 3: UPD3(RA, 3, D); return;                                                                             \
	case 1: UPD3(RA, 1, D); return;                                                                             \
	default: update_d(T, A, RA, B, rb, D); return;                                                              \
	}
#define UPD_SIZES(D)                                                                                            \
	switch (ra) {                                                                                               \
	case 6: UPD_ROWS(6, D)                                                                                      \
	case 3: UPD_ROWS(3, D)                                                                                      \
	case 1: UPD_ROWS(1, D)                                                                                      \
	default: update_d(T, A, ra, B, rb, D); return;                                                              \
	}
/* T (6 x 6) -= A B^T for 6 x 6 blocks (faces against faces: most of the contact solve's work), with B
 * given transposed in pairs (bt[l][p] = (B[2p][l], B[2p+1][l]), made once per B by transpose6), two rows
 * of T and two entries of each at a time (GCC vector extension: SSE2 pairs). Every entry is summed as in
 * update_d (0 + a_0 b_0 + ... + a_5 b_5, then subtracted): the same results. */
static void transpose6(const double* B, ibV2 bt[6][3])
{
	for (int l = 0; l < 6; ++l)
		for (int p = 0; p < 3; ++p) bt[l][p] = (ibV2){B[6 * (2 * p) + l], B[6 * (2 * p + 1) + l]};
}
static void update666(double* T, const double* A, const ibV2 bt[6][3])
{
	for (int i = 0; i < 6; i += 2) {
		const double *a0 = A + 6 * i, *a1 = a0 + 6;
		ibV2 s00 = {0.0, 0.0}, s01 = s00, s02 = s00, s10 = s00, s11 = s00, s12 = s00;
		for (int l = 0; l < 6; ++l) {
			ibV2 x = {a0[l], a0[l]}, y = {a1[l], a1[l]};
			s00 += x * bt[l][0];
			s01 += x * bt[l][1];
			s02 += x * bt[l][2];
			s10 += y * bt[l][0];
			s11 += y * bt[l][1];
			s12 += y * bt[l][2];
		}
		double* t0 = T + 6 * i;
		ibV2 r[6];
		memcpy(r, t0, 12 * sizeof(double)); /* rows i and i + 1 are contiguous */
		r[0] -= s00, r[1] -= s01, r[2] -= s02, r[3] -= s10, r[4] -= s11, r[5] -= s12;
		memcpy(t0, r, 12 * sizeof(double));
	}
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The same update with 256-bit AVX vectors where the processor has them (checked at run time; the rest of
 * the library is built for baseline x86-64): rows of T as 4 + 2 entries, B^T given as bt[l] = (B[0][l],
 * ..., B[5][l]) (made once per B by transpose6_avx). Separate multiplies and adds, every entry summed in
 * the same order as update_d (0 + a_0 b_0 + ... + a_5 b_5, then subtracted): bit-identical results. */
#define IB_BCHOL_AVX 1
#include <immintrin.h>
static void transpose6_avx(const double* B, double bt[6][8])
{
	for (int l = 0; l < 6; ++l)
		for (int j = 0; j < 6; ++j) bt[l][j] = B[6 * j + l];
}
__attribute__((target("avx"))) static void update666_avx(double* T, const double* A, const double bt[6][8])
{
	for (int i = 0; i < 6; ++i) {
		const double* a = A + 6 * i;
		__m256d s = _mm256_setzero_pd();
		__m128d u = _mm_setzero_pd();
		for (int l = 0; l < 6; ++l) {
			__m256d x = _mm256_broadcast_sd(a + l);
			s = _mm256_add_pd(s, _mm256_mul_pd(x, _mm256_loadu_pd(bt[l])));
			u = _mm_add_pd(u, _mm_mul_pd(_mm256_castpd256_pd128(x), _mm_loadu_pd(bt[l] + 4)));
		}
		_mm256_storeu_pd(T + 6 * i, _mm256_sub_pd(_mm256_loadu_pd(T + 6 * i), s));
		_mm_storeu_pd(T + 6 * i + 4, _mm_sub_pd(_mm_loadu_pd(T + 6 * i + 4), u));
	}
}
#endif

static void update(double* T, const double* A, int ra, const double* B, int rb, int d)
{
	switch (d) {
	case 6: UPD_SIZES(6)
	case 3: UPD_SIZES(3)
	case 1: UPD_SIZES(1)
	default: break;
	}
#define UPD(D) update_d(T, A, ra, B, rb, D)
	SPECIALISE(UPD, d)
#undef UPD
}
#undef UPD_SIZES
#undef UPD_ROWS
#undef UPD3

/* y (r) -= B x, B: r x d */
IB_BCHOL_INLINE void gemv_sub_d(double* y, const double* B, int r, const double* x, const int d)
{
	for (int i = 0; i < r; ++i) {
		double s = 0.0;
		for (int l = 0; l < d; ++l) s += B[d * i + l] * x[l];
		y[i] -= s;
	}
}
/* x (d) -= B^T y, B: r x d */
IB_BCHOL_INLINE void gemtv_sub_d(double* x, const double* B, int r, const double* y, const int d)
{
	double acc[IB_BCHOL_MAX_DIM];
	for (int l = 0; l < d; ++l) acc[l] = x[l];
	for (int i = 0; i < r; ++i)
		for (int l = 0; l < d; ++l) acc[l] -= B[d * i + l] * y[i];
	for (int l = 0; l < d; ++l) x[l] = acc[l];
}

/* the row block's size r as a constant too for the sizes of the contact solve (6, 3, 1) */
#define SPECIALISE_ROWS(call, r)                                                                                \
	switch (r) {                                                                                                \
	case 6: call(6); break;                                                                                     \
	case 3: call(3); break;                                                                                     \
	case 1: call(1); break;                                                                                     \
	default: call(r); break;                                                                                    \
	}

#ifdef IB_BCHOL_AVX
/* gemv_sub_d and gemtv_sub_d of a 6 x 6 block with AVX vectors (rows 0-3 and 4-5 of y; entries 0-3 and 4-5 of
 * x): every entry summed in the same order as the scalar kernels, bit-identical results */
__attribute__((target("avx"))) static void gemv66_avx(double* y, const double* B, const double* x)
{
	__m256d s = _mm256_setzero_pd();
	__m128d u = _mm_setzero_pd();
	for (int l = 0; l < 6; ++l) {
		const __m256d c = _mm256_set_pd(B[18 + l], B[12 + l], B[6 + l], B[l]); /* column l, rows 0-3 */
		const __m128d e = _mm_set_pd(B[30 + l], B[24 + l]);                     /* rows 4-5 */
		s = _mm256_add_pd(s, _mm256_mul_pd(c, _mm256_broadcast_sd(x + l)));
		u = _mm_add_pd(u, _mm_mul_pd(e, _mm_set1_pd(x[l])));
	}
	_mm256_storeu_pd(y, _mm256_sub_pd(_mm256_loadu_pd(y), s));
	_mm_storeu_pd(y + 4, _mm_sub_pd(_mm_loadu_pd(y + 4), u));
}
__attribute__((target("avx"))) static void gemtv66_avx(double* x, const double* B, const double* y)
{
	__m256d a = _mm256_loadu_pd(x);
	__m128d b = _mm_loadu_pd(x + 4);
	for (int i = 0; i < 6; ++i) {
		a = _mm256_sub_pd(a, _mm256_mul_pd(_mm256_loadu_pd(B + 6 * i), _mm256_broadcast_sd(y + i)));
		b = _mm_sub_pd(b, _mm_mul_pd(_mm_loadu_pd(B + 6 * i + 4), _mm_set1_pd(y[i])));
	}
	_mm256_storeu_pd(x, a);
	_mm_storeu_pd(x + 4, b);
}
#endif

/* forward substitution of column k: y_k = L_kk^-1 y_k, then y_r -= L_rk y_k for its rows (the column's
 * values are contiguous: the diagonal block, then the row blocks in order); avx: 6 x 6 blocks with AVX */
IB_BCHOL_INLINE void forward_d(const ibBlockChol* F, int32_t k, double* y, const int d, const bool avx)
{
	(void)avx;
	const double* L = F->val + F->diagPos[k];
	double* yk = y + F->eoff[k];
	for (int i = 0; i < d; ++i) {
		double s = yk[i];
		for (int l = 0; l < i; ++l) s -= L[d * i + l] * yk[l];
		yk[i] = s / L[d * i + i];
	}
	double x[IB_BCHOL_MAX_DIM];
	for (int l = 0; l < d; ++l) x[l] = yk[l];
	const double* B = L + d * d;
	for (int32_t t = F->colStart[k]; t < F->colStart[k + 1]; ++t) {
		int32_t r = F->rowIdx[t];
		int dr = F->edim[r];
		double* yr = y + F->eoff[r];
#ifdef IB_BCHOL_AVX
		if (avx && d == 6 && dr == 6) {
			gemv66_avx(yr, B, x);
			B += 36;
			continue;
		}
#endif
#define GEMV(R) gemv_sub_d(yr, B, R, x, d)
		SPECIALISE_ROWS(GEMV, dr)
#undef GEMV
		B += dr * d;
	}
}
/* back substitution of column k: y_k -= sum L_rk^T y_r, then y_k = L_kk^-T y_k */
IB_BCHOL_INLINE void backward_d(const ibBlockChol* F, int32_t k, double* y, const int d, const bool avx)
{
	(void)avx;
	double* yk = y + F->eoff[k];
	const double* L = F->val + F->diagPos[k];
	const double* B = L + d * d;
	for (int32_t t = F->colStart[k]; t < F->colStart[k + 1]; ++t) {
		int32_t r = F->rowIdx[t];
		int dr = F->edim[r];
		const double* yr = y + F->eoff[r];
#ifdef IB_BCHOL_AVX
		if (avx && d == 6 && dr == 6) {
			gemtv66_avx(yk, B, yr);
			B += 36;
			continue;
		}
#endif
#define GEMTV(R) gemtv_sub_d(yk, B, R, yr, d)
		SPECIALISE_ROWS(GEMTV, dr)
#undef GEMTV
		B += dr * d;
	}
	for (int i = d - 1; i >= 0; --i) {
		double s = yk[i];
		for (int l = i + 1; l < d; ++l) s -= L[d * l + i] * yk[l];
		yk[i] = s / L[d * i + i];
	}
}

bool ib_bchol_factor(ibBlockChol* F, const double* diag, const double* offd)
{
	F->factored = false;
	if (!F->analysed) return false;
	const int32_t n = F->n, *dim = F->dim, *perm = F->perm;
	double* val = F->val;
#ifdef IB_BCHOL_AVX
	const bool avx = __builtin_cpu_supports("avx");
#endif
	memset(val, 0, (size_t)F->nval * sizeof(double));
	/* A into L's storage: the diagonal blocks, and each A(i, j) of the pattern as (later, earlier) */
	int32_t pos = 0;
	for (int32_t j = 0; j < n; ++j) {
		int32_t d = dim[j];
		memcpy(val + F->diagPos[F->iperm[j]], diag + pos, (size_t)(d * d) * sizeof(double));
		pos += d * d;
	}
	pos = 0;
	for (int32_t j = 0; j < n; ++j) {
		int32_t dj = dim[j];
		for (int32_t z = F->adjStart[j]; z < F->adjStart[j + 1]; ++z) {
			int32_t di = dim[F->adjRow[z]], q = F->inPos[z];
			const double* a = offd + pos;
			if (q >= 0) {
				memcpy(val + q, a, (size_t)(di * dj) * sizeof(double));
			} else { /* stored as A(j, i) = A(i, j)^T, dj x di */
				double* b = val + (-1 - q);
				for (int r = 0; r < di; ++r)
					for (int c = 0; c < dj; ++c) b[di * c + r] = a[dj * r + c];
			}
			pos += di * dj;
		}
	}
	for (int32_t k = 0; k < n; ++k) {
		int dk = dim[perm[k]];
		double* Lkk = val + F->diagPos[k];
		if (!chol_dense(Lkk, dk)) return false;
		int32_t t0 = F->colStart[k], t1 = F->colStart[k + 1];
		for (int32_t t = t0; t < t1; ++t) solve_right(val + F->valPos[t], dim[perm[F->rowIdx[t]]], Lkk, dk);
		/* Schur complement: (rb, ra) -= L(rb, k) L(ra, k)^T for ra <= rb among the rows of column k
		 * (the rows after ra are rows of column ra: walk its sorted list) */
		for (int32_t a = t0; a < t1; ++a) {
			int32_t ra = F->rowIdx[a], da = dim[perm[ra]];
			const double* La = val + F->valPos[a];
			const bool six = da == 6 && dk == 6;
#ifdef IB_BCHOL_AVX
			if (six && avx) {
				double bt4[6][8];
				transpose6_avx(La, bt4);
				update666_avx(val + F->diagPos[ra], La, (const double(*)[8])bt4);
				int32_t q = F->colStart[ra];
				for (int32_t b = a + 1; b < t1; ++b) {
					int32_t rb = F->rowIdx[b], db = dim[perm[rb]];
					while (F->rowIdx[q] != rb) ++q;
					if (db == 6)
						update666_avx(val + F->valPos[q], val + F->valPos[b], (const double(*)[8])bt4);
					else
						update(val + F->valPos[q], val + F->valPos[b], db, La, da, dk);
				}
				continue;
			}
#endif
			ibV2 bt[6][3];
			if (six) {
				transpose6(La, bt);
				update666(val + F->diagPos[ra], La, (const ibV2(*)[3])bt);
			} else {
				update(val + F->diagPos[ra], La, da, La, da, dk);
			}
			int32_t q = F->colStart[ra];
			for (int32_t b = a + 1; b < t1; ++b) {
				int32_t rb = F->rowIdx[b], db = dim[perm[rb]];
				while (F->rowIdx[q] != rb) ++q;
				if (six && db == 6)
					update666(val + F->valPos[q], val + F->valPos[b], (const ibV2(*)[3])bt);
				else
					update(val + F->valPos[q], val + F->valPos[b], db, La, da, dk);
			}
		}
	}
	F->factored = true;
	return true;
}

/* ---------------------------------------------------------------- solve */

void ib_bchol_solve(ibBlockChol* F, const double* b, double* x)
{
	const int32_t n = F->n, *dim = F->dim, *perm = F->perm, *uoff = F->eoff + n + 1;
	double* y = F->work;
#ifdef IB_BCHOL_AVX
	const bool avx = __builtin_cpu_supports("avx");
#else
	const bool avx = false;
#endif
	for (int32_t k = 0; k < n; ++k) memcpy(y + F->eoff[k], b + uoff[perm[k]], (size_t)dim[perm[k]] * sizeof(double));
	for (int32_t k = 0; k < n; ++k) { /* L y = b */
#define FWD(D) forward_d(F, k, y, D, avx)
		SPECIALISE(FWD, dim[perm[k]])
#undef FWD
	}
	for (int32_t k = n - 1; k >= 0; --k) { /* L^T x = y */
#define BWD(D) backward_d(F, k, y, D, avx)
		SPECIALISE(BWD, dim[perm[k]])
#undef BWD
	}
	for (int32_t k = 0; k < n; ++k) memcpy(x + uoff[perm[k]], y + F->eoff[k], (size_t)dim[perm[k]] * sizeof(double));
}

void ib_bchol_free(ibBlockChol* F, const ibBlockAlloc* al)
{
	int32_t* iv[] = {F->edim, F->dim, F->perm, F->iperm, F->eoff, F->colStart, F->rowIdx, F->valPos, F->diagPos, F->inPos,
	                 F->adjStart, F->adjRow, F->gStart, F->gLen, F->gCap, F->pool, F->mark, F->deg, F->heap, F->hpos};
	int32_t ic[] = {F->edimCap, F->dimCap, F->permCap, F->ipermCap, F->eoffCap, F->colStartCap, F->rowIdxCap, F->valPosCap, F->diagPosCap, F->inPosCap,
	                F->adjStartCap, F->adjRowCap, F->gStartCap, F->gLenCap, F->gCapCap, F->poolCap, F->markCap, F->degCap, F->heapCap, F->hposCap};
	for (size_t k = 0; k < sizeof iv / sizeof iv[0]; ++k) al->release(al->ctx, iv[k], (size_t)ic[k] * sizeof(int32_t));
	al->release(al->ctx, F->val, (size_t)F->valCap * sizeof(double));
	al->release(al->ctx, F->work, (size_t)F->workCap * sizeof(double));
	memset(F, 0, sizeof *F);
}
