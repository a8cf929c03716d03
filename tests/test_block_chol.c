/* Block-sparse Cholesky (src/math/block_chol.c, used by the contact direct solve):
 * (1) on random symmetric positive definite block-sparse matrices (block sizes 1..6 mixed, random,
 *     banded, star and contact-like patterns, A = G M^-1 G^T + d I of random bodies and blocks) its
 *     solution agrees with a dense Cholesky solve to <= 1e-10 (relative);
 * (2) a symbolic structure re-used for new values of the same pattern gives the same solution as a
 *     fresh analysis (bit for bit) and the dense one;
 * (3) a matrix that is not positive definite is reported (factor false), a malformed pattern refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math/block_chol.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static double urand(void) /* xorshift64*, [0, 1) */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}
static int irand(int n) { return (int)(urand() * n); }

static bool t_grow(void* ctx, void** a, int32_t* cap, int32_t need, size_t elem)
{
	(void)ctx;
	if (need <= *cap) return true;
	int32_t c = need + need / 2 + 8;
	void* p = realloc(*a, (size_t)c * elem);
	if (!p) return false;
	*a = p;
	*cap = c;
	return true;
}
static void t_release(void* ctx, void* p, size_t size)
{
	(void)ctx, (void)size;
	free(p);
}
static const ibBlockAlloc AL = {NULL, t_grow, t_release};

/* a test problem: pattern (adjStart/adj), dense A (m x m) and the block values taken from it */
typedef struct Prob {
	int32_t n, m, nadj;
	int32_t dim[400], off[401], adjStart[401];
	int32_t* adj;
	double *A, *diag, *offd;
} Prob;

static void prob_free(Prob* P)
{
	free(P->adj), free(P->A), free(P->diag), free(P->offd);
	memset(P, 0, sizeof *P);
}

/* pattern from a symmetric n x n 0/1 matrix C (upper part used) */
static void prob_pattern(Prob* P, int n, const int* dims, const unsigned char* C)
{
	memset(P, 0, sizeof *P);
	P->n = n;
	P->m = 0;
	for (int j = 0; j < n; ++j) P->dim[j] = dims[j], P->off[j] = P->m, P->m += dims[j];
	P->off[n] = P->m;
	P->adj = malloc((size_t)(n * n + 1) * sizeof(int32_t));
	int z = 0;
	for (int j = 0; j < n; ++j) {
		P->adjStart[j] = z;
		for (int i = 0; i < j; ++i)
			if (C[n * i + j]) P->adj[z++] = i;
	}
	P->adjStart[n] = z;
	P->nadj = z;
	P->A = calloc((size_t)P->m * P->m, sizeof(double));
}

/* the block values of the dense A */
static void prob_values(Prob* P)
{
	int32_t nd = 0, no = 0;
	for (int j = 0; j < P->n; ++j) nd += P->dim[j] * P->dim[j];
	for (int j = 0; j < P->n; ++j)
		for (int z = P->adjStart[j]; z < P->adjStart[j + 1]; ++z) no += P->dim[P->adj[z]] * P->dim[j];
	free(P->diag), free(P->offd);
	P->diag = malloc((size_t)(nd + 1) * sizeof(double));
	P->offd = malloc((size_t)(no + 1) * sizeof(double));
	int32_t* dOff = malloc((size_t)(P->n + 1) * sizeof(int32_t));
	int32_t* oOff = malloc((size_t)(P->nadj + 1) * sizeof(int32_t));
	ib_bchol_value_sizes(P->n, P->dim, P->adjStart, P->adj, dOff, oOff);
	assert_int_equal(dOff[P->n], nd);
	assert_int_equal(oOff[P->nadj], no);
	int m = P->m;
	for (int j = 0; j < P->n; ++j) {
		for (int r = 0; r < P->dim[j]; ++r)
			for (int c = 0; c < P->dim[j]; ++c) P->diag[dOff[j] + P->dim[j] * r + c] = P->A[(P->off[j] + r) * m + P->off[j] + c];
		for (int z = P->adjStart[j]; z < P->adjStart[j + 1]; ++z) {
			int i = P->adj[z];
			for (int r = 0; r < P->dim[i]; ++r)
				for (int c = 0; c < P->dim[j]; ++c) P->offd[oOff[z] + P->dim[j] * r + c] = P->A[(P->off[i] + r) * m + P->off[j] + c];
		}
	}
	free(dOff), free(oOff);
}

/* random SPD values on the pattern: random coupling blocks, diagonal blocks B B^T + (row sums + 1) I */
static void random_spd(Prob* P, const unsigned char* C)
{
	int m = P->m, n = P->n;
	memset(P->A, 0, (size_t)m * m * sizeof(double));
	for (int j = 0; j < n; ++j)
		for (int i = 0; i < j; ++i) {
			if (!C[n * i + j]) continue;
			for (int r = 0; r < P->dim[i]; ++r)
				for (int c = 0; c < P->dim[j]; ++c) {
					double v = 2.0 * urand() - 1.0;
					P->A[(P->off[i] + r) * m + P->off[j] + c] = v;
					P->A[(P->off[j] + c) * m + P->off[i] + r] = v;
				}
		}
	for (int j = 0; j < n; ++j) {
		int d = P->dim[j];
		double B[36];
		for (int q = 0; q < d * d; ++q) B[q] = 2.0 * urand() - 1.0;
		for (int r = 0; r < d; ++r) {
			double rs = 0.0;
			for (int c = 0; c < m; ++c)
				if (c < P->off[j] || c >= P->off[j] + d) rs += fabs(P->A[(P->off[j] + r) * m + c]);
			for (int c = 0; c < d; ++c) {
				double s = 0.0;
				for (int l = 0; l < d; ++l) s += B[d * r + l] * B[d * c + l];
				P->A[(P->off[j] + r) * m + P->off[j] + c] = s + (r == c ? rs + 0.1 * urand() + 1e-3 : 0.0);
			}
		}
	}
	prob_values(P);
}

/* dense Cholesky solve of A x = b (A copied) */
static void dense_solve(const double* A0, int m, const double* b, double* x)
{
	double* L = malloc((size_t)m * m * sizeof(double));
	memcpy(L, A0, (size_t)m * m * sizeof(double));
	for (int j = 0; j < m; ++j) {
		double s = L[j * m + j];
		for (int k = 0; k < j; ++k) s -= L[j * m + k] * L[j * m + k];
		assert_true(s > 0.0);
		L[j * m + j] = sqrt(s);
		for (int i = j + 1; i < m; ++i) {
			double t = L[i * m + j];
			for (int k = 0; k < j; ++k) t -= L[i * m + k] * L[j * m + k];
			L[i * m + j] = t / L[j * m + j];
		}
	}
	for (int i = 0; i < m; ++i) {
		double s = b[i];
		for (int k = 0; k < i; ++k) s -= L[i * m + k] * x[k];
		x[i] = s / L[i * m + i];
	}
	for (int i = m - 1; i >= 0; --i) {
		double s = x[i];
		for (int k = i + 1; k < m; ++k) s -= L[k * m + i] * x[k];
		x[i] = s / L[i * m + i];
	}
	free(L);
}

static double rel_diff(const double* a, const double* b, int m)
{
	double d = 0.0, s = 0.0;
	for (int i = 0; i < m; ++i) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
	return d / fmax(s, 1e-300);
}

/* factor + solve against the dense solve for 3 right-hand sides; returns the worst relative difference */
static double check_solve(ibBlockChol* F, const Prob* P)
{
	assert_true(ib_bchol_factor(F, P->diag, P->offd));
	int m = P->m;
	double *b = malloc((size_t)m * sizeof(double)), *x = malloc((size_t)m * sizeof(double)), *xd = malloc((size_t)m * sizeof(double));
	double worst = 0.0;
	for (int rep = 0; rep < 3; ++rep) {
		for (int i = 0; i < m; ++i) b[i] = 2.0 * urand() - 1.0;
		dense_solve(P->A, m, b, xd);
		ib_bchol_solve(F, b, x);
		worst = fmax(worst, rel_diff(x, xd, m));
		ib_bchol_solve(F, b, b); /* in place */
		assert_true(rel_diff(b, x, m) == 0.0);
	}
	free(b), free(x), free(xd);
	return worst;
}

/* pattern kinds: 0 random (density p), 1 banded + random, 2 star (block 0 coupled to all) + chain, 3 tree */
static void make_pattern(int kind, int n, unsigned char* C)
{
	memset(C, 0, (size_t)n * n);
	double p = 0.5 * urand() * fmin(1.0, 8.0 / n);
	for (int j = 0; j < n; ++j)
		for (int i = 0; i < j; ++i) {
			bool on = false;
			if (kind == 0) on = urand() < p;
			else if (kind == 1) on = j - i <= 2 || urand() < 0.3 * p;
			else if (kind == 2) on = i == 0 || j - i == 1;
			else on = i == (j - 1) / 2;
			C[n * i + j] = C[n * j + i] = on;
		}
}

static void random_dims(int n, int* dims)
{
	static const int choice[] = {1, 3, 6, 6, 2, 4, 5};
	for (int j = 0; j < n; ++j) dims[j] = choice[irand(7)];
}

static void test_random_spd(void** state)
{
	(void)state;
	unsigned char* C = malloc(120 * 120);
	double worst = 0.0;
	int cases = 0;
	for (int kind = 0; kind < 4; ++kind)
		for (int rep = 0; rep < 12; ++rep) {
			int n = 1 + irand(rep < 4 ? 8 : 120), dims[400];
			random_dims(n, dims);
			make_pattern(kind, n, C);
			Prob P;
			prob_pattern(&P, n, dims, C);
			random_spd(&P, C);
			ibBlockChol F;
			memset(&F, 0, sizeof F);
			assert_true(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
			assert_int_equal(F.m, P.m);
			worst = fmax(worst, check_solve(&F, &P));
			ib_bchol_free(&F, &AL);
			prob_free(&P);
			++cases;
		}
	print_message("block Cholesky vs dense: %d random SPD matrices, worst relative difference %.3e\n", cases, worst);
	assert_true(worst <= 1e-10);
	free(C);
}

/* A = G M^-1 G^T + d I of random bodies (6 dof, random SPD inverse mass) and blocks of 6, 3 or 1 rows
 * between two random bodies of a chain-like pile (as the contact direct solve builds it): with d = 0.1
 * and fewer rows than degrees of freedom against the dense solve; with d = 1e-6 and more rows (a pile:
 * rank-deficient, condition ~1e10) by the relative residual |A x - b| / (|A| |x|) of the solution */
static void test_contact_like(void** state)
{
	(void)state;
	enum { NB = 60, NK = 150 };
	double worst = 0.0, worstRes = 0.0;
	for (int rep = 0; rep < 6; ++rep) {
		const int nk = rep < 3 ? 60 : NK;
		static double Minv[NB][36], G[NK][2][36];
		int body[NK][2], dims[NK];
		for (int b = 0; b < NB; ++b) {
			double R[36];
			for (int q = 0; q < 36; ++q) R[q] = 2.0 * urand() - 1.0;
			for (int r = 0; r < 6; ++r)
				for (int c = 0; c < 6; ++c) {
					double s = r == c ? 0.5 : 0.0;
					for (int l = 0; l < 6; ++l) s += R[6 * r + l] * R[6 * c + l];
					Minv[b][6 * r + c] = s;
				}
		}
		static const int choice[] = {6, 6, 3, 1};
		for (int k = 0; k < nk; ++k) {
			dims[k] = choice[irand(4)];
			int a = irand(NB), c = a + 1 + irand(4);
			body[k][0] = a;
			body[k][1] = c < NB ? c : -1; /* -1: the ground */
			for (int p = 0; p < 2; ++p)
				for (int q = 0; q < 36; ++q) G[k][p][q] = 2.0 * urand() - 1.0;
		}
		unsigned char* C = calloc((size_t)nk * nk, 1);
		for (int i = 0; i < nk; ++i)
			for (int j = 0; j < nk; ++j)
				for (int p = 0; p < 2; ++p)
					for (int q = 0; q < 2; ++q)
						if (i != j && body[i][p] >= 0 && body[i][p] == body[j][q]) C[nk * i + j] = 1;
		Prob P;
		prob_pattern(&P, nk, dims, C);
		for (int i = 0; i < nk; ++i)
			for (int j = 0; j < nk; ++j)
				for (int r = 0; r < dims[i]; ++r)
					for (int s = 0; s < dims[j]; ++s) {
						double a = i == j && r == s ? (rep < 3 ? 0.1 : 1e-6) : 0.0;
						for (int p = 0; p < 2; ++p)
							for (int q = 0; q < 2; ++q) {
								int b = body[i][p];
								if (b < 0 || b != body[j][q]) continue;
								for (int u = 0; u < 6; ++u)
									for (int v = 0; v < 6; ++v) a += G[i][p][6 * r + u] * Minv[b][6 * u + v] * G[j][q][6 * s + v];
							}
						P.A[(P.off[i] + r) * P.m + P.off[j] + s] = a;
					}
		prob_values(&P);
		ibBlockChol F;
		memset(&F, 0, sizeof F);
		assert_true(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
		if (rep < 3) {
			worst = fmax(worst, check_solve(&F, &P));
		} else {
			assert_true(ib_bchol_factor(&F, P.diag, P.offd));
			int m = P.m;
			double *b = malloc((size_t)m * sizeof(double)), *x = malloc((size_t)m * sizeof(double));
			for (int i = 0; i < m; ++i) b[i] = 2.0 * urand() - 1.0;
			ib_bchol_solve(&F, b, x);
			double na = 0.0, nx = 0.0, nr = 0.0;
			for (int i = 0; i < m; ++i) {
				double r = -b[i], rs = 0.0;
				for (int j = 0; j < m; ++j) r += P.A[i * m + j] * x[j], rs += fabs(P.A[i * m + j]);
				na = fmax(na, rs), nx = fmax(nx, fabs(x[i])), nr = fmax(nr, fabs(r));
			}
			worstRes = fmax(worstRes, nr / (na * nx));
			free(b), free(x);
		}
		ib_bchol_free(&F, &AL);
		prob_free(&P);
		free(C);
	}
	print_message("block Cholesky, contact-like G M^-1 G^T + d I: full rank vs dense %.3e, rank-deficient relative residual %.3e\n", worst, worstRes);
	assert_true(worst <= 1e-10);
	assert_true(worstRes <= 1e-14);
}

static void test_reuse_symbolic(void** state)
{
	(void)state;
	unsigned char* C = malloc(80 * 80);
	for (int rep = 0; rep < 6; ++rep) {
		int n = 20 + irand(60), dims[400];
		random_dims(n, dims);
		make_pattern(rep % 4, n, C);
		Prob P;
		prob_pattern(&P, n, dims, C);
		random_spd(&P, C);
		ibBlockChol F, G;
		memset(&F, 0, sizeof F);
		memset(&G, 0, sizeof G);
		assert_true(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
		assert_true(check_solve(&F, &P) <= 1e-10);
		random_spd(&P, C); /* new values, same pattern: F's analysis re-used */
		assert_true(check_solve(&F, &P) <= 1e-10);
		assert_true(ib_bchol_analyse(&G, &AL, P.n, P.dim, P.adjStart, P.adj));
		assert_true(ib_bchol_factor(&G, P.diag, P.offd));
		double *b = malloc((size_t)P.m * sizeof(double)), *x = malloc((size_t)P.m * sizeof(double)), *y = malloc((size_t)P.m * sizeof(double));
		for (int i = 0; i < P.m; ++i) b[i] = 2.0 * urand() - 1.0;
		ib_bchol_solve(&F, b, x);
		ib_bchol_solve(&G, b, y);
		assert_true(memcmp(x, y, (size_t)P.m * sizeof(double)) == 0);
		free(b), free(x), free(y);
		ib_bchol_free(&F, &AL);
		ib_bchol_free(&G, &AL);
		prob_free(&P);
	}
	free(C);
}

static void test_not_pd_and_malformed(void** state)
{
	(void)state;
	unsigned char C[30 * 30];
	int dims[400];
	random_dims(30, dims);
	make_pattern(1, 30, C);
	Prob P;
	prob_pattern(&P, 30, dims, C);
	random_spd(&P, C);
	ibBlockChol F;
	memset(&F, 0, sizeof F);
	assert_true(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
	assert_true(ib_bchol_factor(&F, P.diag, P.offd));
	P.diag[0] = -1.0; /* a negative diagonal entry */
	assert_false(ib_bchol_factor(&F, P.diag, P.offd));
	assert_false(F.factored);
	/* an unsorted or lower-triangle entry, a block too large */
	if (P.nadj >= 2 && P.adjStart[29] < P.adjStart[30] - 1) {
		int32_t z = P.adjStart[29], t = P.adj[z];
		P.adj[z] = P.adj[z + 1], P.adj[z + 1] = t;
		assert_false(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
		P.adj[z + 1] = P.adj[z], P.adj[z] = t;
	}
	P.adj[P.adjStart[5]] = 7;
	if (P.adjStart[5] < P.adjStart[6]) assert_false(ib_bchol_analyse(&F, &AL, P.n, P.dim, P.adjStart, P.adj));
	int32_t big[1] = {7}, s0[2] = {0, 0};
	assert_false(ib_bchol_analyse(&F, &AL, 1, big, s0, P.adj));
	ib_bchol_free(&F, &AL);
	prob_free(&P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_spd),
	    cmocka_unit_test(test_contact_like),
	    cmocka_unit_test(test_reuse_symbolic),
	    cmocka_unit_test(test_not_pd_and_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
