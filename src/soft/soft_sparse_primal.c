/* Particle-space (primal) form of the sparse soft joint correction. The row-space system of
 * soft_sparse.c, (J W J^T + D) lambda = b with W = M^-1 and D = diag(alpha/h^2), has one unknown
 * per row; a cloth has about twice as many rows (edges and bending rows) as particle coordinates, so
 * its factor is large (50 x 50 cloth: 15 006 rows, 2.0 M factor entries, 4.6e8 flops). For the rows
 * with compliance (D_s > 0) Woodbury's identity gives the same lambda through the matrix
 *
 *     P = M + J_s^T D_s^-1 J_s         (free degrees of freedom: 3 per particle, 6 per rigid body)
 *
 * (the matrix of an implicit Euler step of the springs): lambda_s = D_s^-1 (b_s - J_s dv) with
 * P dv = J_s^T D_s^-1 b_s + J_h^T lambda_h, and the few rows without compliance (hard: rigid–soft
 * joints) through the Schur complement G = J_h P^-1 J_h^T, G lambda_h = b_h - J_h P^-1 J_s^T D_s^-1 b_s
 * (P^-1 J_h^T by one multi-column solve per factorisation; dead pivots of G give zero impulses, as
 * the regularised row-space solve does for redundant rows). Infinite masses (pinned particles, static
 * bodies) have no degrees of freedom. The 50 x 50 cloth: 7 809 unknowns, 1.0 M factor entries,
 * 2.1e8 flops. soft_sparse.c uses this form when CHOLMOD's flop count is lower than the row-space
 * one's. Exact: the same lambda as the row-space solve up to rounding. */
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "soft/soft_sparse_primal.h"
#include "math/cholmod_view.h"

#define PRIMAL_MIN_RATIO 1e-7 /* dc / (J W J^T)_jj below this: P too ill-conditioned */

struct ibSpPrimal {
	int32_t nd, nh, parts, m;
	int32_t* dof;      /* first degree of freedom of each participant, -1 = infinite mass */
	int32_t* selfOff;  /* offset of a participant's own block in its columns */
	int32_t* hard;     /* system rows with compliance 0 */
	int32_t* pairStart; /* per row: first slot in pairOff (m + 1) */
	int32_t* pairOff;  /* per row and incidence pair (i <= k): offset of the block in its columns */
	int32_t *Pp, *Pi;
	double* Px;
	int64_t nnz;
	double *rhs, *dv, *Yx, *G, *Ginv, *Lg; /* nd, nd, nd x nh, nh x nh (3) */
	size_t bytes[16];  /* allocation sizes, for ib_free */
	cholmod_factor* L;
	cholmod_dense *X, *Ydense, *Ew, *Yw, *Ew1, *Yw1; /* solve results and workspace (multi- and one-column) */
};

static int width_of(const ibSpGraph* g, int32_t key) { return key < g->particleCount ? 3 : 6; }

/* finite mass (and for a rigid body: finite inertia on every axis) now */
static bool is_free(const ibWorld* w, const ibSoftStore* ss, const ibSpGraph* g, int32_t k)
{
	if (k < g->particleCount) return ss->particles[k].invMass > 0.0;
	const ibBody* b = &w->bodies[k - g->particleCount];
	return ib_is_dynamic(b) && b->invMass > 0.0 && b->invInertiaP.x > 0.0 && b->invInertiaP.y > 0.0 && b->invInertiaP.z > 0.0;
}

bool ib_sp_primal_matches(const ibWorld* w, const ibSoftStore* ss, const ibSpPrimal* P, const ibSpGraph* g)
{
	for (int32_t k = 0; k < g->parts; ++k)
		if (g->partStart[k] < g->partStart[k + 1] && is_free(w, ss, g, k) != (P->dof[k] >= 0)) return false;
	return true;
}

static void* take(ibWorld* w, size_t n, size_t* slot)
{
	*slot = n ? n : 1;
	void* p = ib_alloc(w, *slot);
	if (p) memset(p, 0, *slot);
	return p;
}

void ib_sp_primal_free(ibWorld* w, cholmod_common* cc, ibSpPrimal** PP)
{
	ibSpPrimal* P = *PP;
	if (!P) return;
	void* arr[] = {P->dof, P->selfOff, P->hard, P->pairStart, P->pairOff, P->Pp, P->Pi, P->Px,
	               P->rhs, P->dv, P->Yx, P->G, P->Ginv, P->Lg};
	for (size_t k = 0; k < sizeof arr / sizeof arr[0]; ++k)
		if (arr[k]) ib_free(w, arr[k], P->bytes[k]);
	if (P->L) cholmod_free_factor(&P->L, cc);
	if (P->X) cholmod_free_dense(&P->X, cc);
	if (P->Ydense) cholmod_free_dense(&P->Ydense, cc);
	if (P->Ew) cholmod_free_dense(&P->Ew, cc);
	if (P->Yw) cholmod_free_dense(&P->Yw, cc);
	if (P->Ew1) cholmod_free_dense(&P->Ew1, cc);
	if (P->Yw1) cholmod_free_dense(&P->Yw1, cc);
	ib_free(w, P, sizeof *P);
	*PP = NULL;
}

ibSpPrimal* ib_sp_primal_build(ibWorld* w, ibSoftStore* ss, cholmod_common* cc, const ibSpGraph* g, double* flops)
{
	*flops = INFINITY;
	int32_t nh = 0;
	for (int32_t j = 0; j < g->m; ++j)
		if (!(g->compliance[j] > 0.0)) ++nh;
	if (nh > IB_SP_MAX_HARD || g->m == 0) return NULL;
	for (int32_t k = g->particleCount; k < g->parts; ++k) {
		if (g->partStart[k] == g->partStart[k + 1]) continue;
		const ibBody* b = &w->bodies[k - g->particleCount];
		if (ib_is_dynamic(b) && !is_free(w, ss, g, k)) return NULL; /* locked axes: no finite mass matrix */
	}
	ibSpPrimal* P = ib_alloc(w, sizeof *P);
	if (!P) return NULL;
	memset(P, 0, sizeof *P);
	P->nh = nh;
	P->parts = g->parts;
	P->m = g->m;
	int32_t* mark = NULL;
	int32_t* list = NULL;
	size_t markBytes = 0, listBytes = 0;
	bool ok = false;
	P->dof = take(w, sizeof(int32_t) * (size_t)g->parts, &P->bytes[0]);
	P->selfOff = take(w, sizeof(int32_t) * (size_t)g->parts, &P->bytes[1]);
	P->hard = take(w, sizeof(int32_t) * (size_t)nh, &P->bytes[2]);
	P->pairStart = take(w, sizeof(int32_t) * (size_t)(g->m + 1), &P->bytes[3]);
	mark = take(w, sizeof(int32_t) * (size_t)g->parts, &markBytes);
	list = take(w, sizeof(int32_t) * (size_t)g->parts, &listBytes);
	if (!P->dof || !P->selfOff || !P->hard || !P->pairStart || !mark || !list) goto done;
	/* degrees of freedom of the participants that have rows */
	int32_t nd = 0;
	for (int32_t k = 0; k < g->parts; ++k) {
		bool used = g->partStart[k] < g->partStart[k + 1];
		P->dof[k] = used && is_free(w, ss, g, k) ? nd : -1;
		if (P->dof[k] >= 0) nd += width_of(g, k);
		mark[k] = -1;
	}
	P->nd = nd;
	nh = 0;
	int64_t slots = 0;
	for (int32_t j = 0; j < g->m; ++j) {
		if (!(g->compliance[j] > 0.0)) P->hard[nh++] = j;
		int64_t c = g->incStart[j + 1] - g->incStart[j];
		P->pairStart[j] = (int32_t)slots;
		slots += c * (c + 1) / 2;
	}
	P->pairStart[g->m] = (int32_t)slots;
	P->pairOff = take(w, sizeof(int32_t) * (size_t)slots, &P->bytes[4]);
	P->Pp = take(w, sizeof(int32_t) * (size_t)(nd + 1), &P->bytes[5]);
	if (!P->pairOff || !P->Pp || nd == 0) goto done;
	/* columns of participant b: the blocks of the participants a (dof(a) <= dof(b)) sharing a row
	 * with compliance, in dof order, then b's own upper triangle */
	for (int pass = 0; pass < 2; ++pass) {
		int64_t nnz = 0;
		for (int32_t b = 0; b < g->parts; ++b) {
			if (P->dof[b] < 0) continue;
			int32_t n = 0, wb = width_of(g, b);
			for (int32_t t = g->partStart[b]; t < g->partStart[b + 1]; ++t) {
				int32_t row = g->incRow[g->partInc[t]];
				if (!(g->compliance[row] > 0.0)) continue;
				for (int32_t q = g->incStart[row]; q < g->incStart[row + 1]; ++q) {
					int32_t a = g->incPart[q];
					if (a == b || P->dof[a] < 0 || P->dof[a] > P->dof[b] || mark[a] == b) continue;
					mark[a] = b;
					list[n++] = a;
				}
			}
			/* dof order = key order (dofs are numbered by key): insertion sort of the short list */
			for (int32_t i = 1; i < n; ++i)
				for (int32_t k = i; k > 0 && list[k - 1] > list[k]; --k) {
					int32_t tmp = list[k];
					list[k] = list[k - 1];
					list[k - 1] = tmp;
				}
			int32_t off = 0;
			for (int32_t i = 0; i < n; ++i) {
				mark[list[i]] = -2 - off; /* offset of a's block, until the next column participant */
				off += width_of(g, list[i]);
			}
			P->selfOff[b] = off;
			if (pass) {
				for (int c = 0; c < wb; ++c) {
					int32_t col = P->dof[b] + c;
					P->Pp[col] = (int32_t)nnz;
					int64_t z = nnz;
					for (int32_t i = 0; i < n; ++i)
						for (int r = 0; r < width_of(g, list[i]); ++r) P->Pi[z++] = P->dof[list[i]] + r;
					for (int r = 0; r <= c; ++r) P->Pi[z++] = P->dof[b] + r;
					nnz = z;
				}
				/* slots of the pairs whose later participant is b */
				for (int32_t t = g->partStart[b]; t < g->partStart[b + 1]; ++t) {
					int32_t inc = g->partInc[t], row = g->incRow[inc];
					if (!(g->compliance[row] > 0.0)) continue;
					int32_t kb = inc - g->incStart[row];
					for (int32_t q = g->incStart[row]; q < g->incStart[row + 1]; ++q) {
						int32_t a = g->incPart[q], ka = q - g->incStart[row];
						if (P->dof[a] < 0 || P->dof[a] > P->dof[b]) continue;
						if (a == b && q != inc) continue; /* a participant twice in one row: not expected */
						int32_t lo = ka < kb ? ka : kb, hi = ka < kb ? kb : ka;
						P->pairOff[P->pairStart[row] + hi * (hi + 1) / 2 + lo] = a == b ? off : -2 - mark[a];
					}
				}
			} else {
				nnz += (int64_t)wb * off + wb * (wb + 1) / 2;
			}
			for (int32_t i = 0; i < n; ++i) mark[list[i]] = b; /* keep the dedup stamp */
		}
		if (pass == 0) {
			if (nnz > INT32_MAX) goto done;
			P->nnz = nnz;
			P->Pi = take(w, sizeof(int32_t) * (size_t)nnz, &P->bytes[6]);
			P->Px = take(w, sizeof(double) * (size_t)nnz, &P->bytes[7]);
			if (!P->Pi || !P->Px) goto done;
			for (int32_t k = 0; k < g->parts; ++k) mark[k] = -1;
		}
	}
	P->Pp[nd] = (int32_t)P->nnz;
	P->rhs = take(w, sizeof(double) * (size_t)nd, &P->bytes[8]);
	P->dv = take(w, sizeof(double) * (size_t)nd, &P->bytes[9]);
	P->Yx = take(w, sizeof(double) * (size_t)nd * (size_t)P->nh, &P->bytes[10]);
	P->G = take(w, sizeof(double) * (size_t)(P->nh * P->nh), &P->bytes[11]);
	P->Ginv = take(w, sizeof(double) * (size_t)(P->nh * P->nh), &P->bytes[12]);
	P->Lg = take(w, sizeof(double) * (size_t)(P->nh * P->nh), &P->bytes[13]);
	if (!P->rhs || !P->dv || !P->Yx || !P->G || !P->Ginv || !P->Lg) goto done;
	/* diagonal 1 for the symbolic analysis (values do not matter) */
	for (int32_t col = 0; col < nd; ++col) P->Px[P->Pp[col + 1] - 1] = 1.0;
	cholmod_sparse A = ib_cholmod_upper(nd, P->nnz, P->Pp, P->Pi, P->Px);
	int nmethods = cc->nmethods, ord = cc->method[0].ordering, ord1 = cc->method[1].ordering;
	cc->nmethods = 2; /* AMD and METIS (where CHOLMOD has it), the one with the smaller factor */
	cc->method[0].ordering = CHOLMOD_AMD;
	cc->method[1].ordering = CHOLMOD_METIS;
	P->L = cholmod_analyze(&A, cc);
	cc->nmethods = nmethods;
	cc->method[0].ordering = ord;
	cc->method[1].ordering = ord1;
	if (!P->L || cc->status < CHOLMOD_OK) goto done;
	*flops = cc->fl;
	ok = true;
done:
	if (mark) ib_free(w, mark, markBytes);
	if (list) ib_free(w, list, listBytes);
	if (!ok) ib_sp_primal_free(w, cc, &P);
	return P;
}

/* Inverse of the symmetric positive semi-definite n x n matrix A (dead pivots: zero rows/columns). */
static void pinv_spd(const double* A, int n, double* L, double* out)
{
	double scale = 0.0;
	for (int i = 0; i < n; ++i) scale = fmax(scale, fabs(A[i * n + i]));
	for (int j = 0; j < n; ++j) {
		double d = A[j * n + j];
		for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
		bool live = d > 1e-12 * scale && d > 0.0;
		double lj = live ? sqrt(d) : 0.0;
		L[j * n + j] = lj;
		for (int i = j + 1; i < n; ++i) {
			double s = A[i * n + j];
			for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
			L[i * n + j] = live ? s / lj : 0.0;
		}
		for (size_t i = 0; i < (size_t)j; ++i) L[i * (size_t)n + (size_t)j] = 0.0; /* size_t: no int overflow for GCC to assume */
	}
	for (int c = 0; c < n; ++c) {
		/* forward: L y = e_c (y in out's column c), then back: L^T x = y */
		for (int i = 0; i < n; ++i) {
			double s = i == c ? 1.0 : 0.0;
			for (int k = 0; k < i; ++k) s -= L[i * n + k] * out[k * n + c];
			out[i * n + c] = L[i * n + i] > 0.0 ? s / L[i * n + i] : 0.0;
		}
		for (int i = n - 1; i >= 0; --i) {
			double s = out[i * n + c];
			for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * out[k * n + c];
			out[i * n + c] = L[i * n + i] > 0.0 ? s / L[i * n + i] : 0.0;
		}
	}
}

/* J_j . x over the row's free degrees of freedom */
static double row_dot(const ibSpPrimal* P, const ibSpGraph* g, int32_t j, const double* x)
{
	double s = 0.0;
	for (int32_t q = g->incStart[j]; q < g->incStart[j + 1]; ++q) {
		int32_t k = g->incPart[q], d = P->dof[k];
		if (d < 0) continue;
		const double* J = g->incJ[q];
		for (int i = 0; i < width_of(g, k); ++i) s += J[i] * x[d + i];
	}
	return s;
}

/* x += s J_j^T */
static void row_scatter(const ibSpPrimal* P, const ibSpGraph* g, int32_t j, double s, double* x)
{
	for (int32_t q = g->incStart[j]; q < g->incStart[j + 1]; ++q) {
		int32_t k = g->incPart[q], d = P->dof[k];
		if (d < 0) continue;
		const double* J = g->incJ[q];
		for (int i = 0; i < width_of(g, k); ++i) x[d + i] += s * J[i];
	}
}

static double row_response(const ibWorld* w, const ibSoftStore* ss, const ibSpGraph* g, int32_t j)
{
	double s = 0.0;
	for (int32_t q = g->incStart[j]; q < g->incStart[j + 1]; ++q) {
		int32_t k = g->incPart[q];
		const double* J = g->incJ[q];
		if (k < g->particleCount) {
			s += ss->particles[k].invMass * (J[0] * J[0] + J[1] * J[1] + J[2] * J[2]);
		} else {
			const ibBody* b = &w->bodies[k - g->particleCount];
			if (!ib_is_dynamic(b)) continue;
			s += b->invMass * (J[0] * J[0] + J[1] * J[1] + J[2] * J[2]);
			for (int r = 0; r < 3; ++r)
				for (int c = 0; c < 3; ++c) s += J[3 + r] * b->invInertiaW.m[r][c] * J[3 + c];
		}
	}
	return s;
}

bool ib_sp_primal_factor(ibWorld* w, ibSoftStore* ss, cholmod_common* cc, ibSpPrimal* P, const ibSpGraph* g,
                         const double* dc)
{
	for (int32_t j = 0; j < g->m; ++j)
		if (g->compliance[j] > 0.0 && !(dc[j] >= PRIMAL_MIN_RATIO * row_response(w, ss, g, j))) return false;
	memset(P->Px, 0, sizeof(double) * (size_t)P->nnz);
	/* masses */
	for (int32_t k = 0; k < g->parts; ++k) {
		int32_t d = P->dof[k];
		if (d < 0) continue;
		double* col[6];
		for (int c = 0; c < width_of(g, k); ++c) col[c] = P->Px + P->Pp[d + c] + P->selfOff[k];
		if (k < g->particleCount) {
			double mass = 1.0 / ss->particles[k].invMass;
			for (int c = 0; c < 3; ++c) col[c][c] += mass;
		} else {
			const ibBody* b = &w->bodies[k - g->particleCount];
			ibMat3 I;
			if (!ibMat3_InverseSym(b->invInertiaW, &I)) return false;
			for (int c = 0; c < 3; ++c) {
				col[c][c] += 1.0 / b->invMass;
				for (int r = 0; r <= c; ++r) col[3 + c][3 + r] += I.m[r][c];
			}
		}
	}
	/* J_s^T D_s^-1 J_s */
	for (int32_t j = 0; j < g->m; ++j) {
		if (!(g->compliance[j] > 0.0)) continue;
		double inv = 1.0 / dc[j];
		int32_t q0 = g->incStart[j], cnt = g->incStart[j + 1] - q0;
		for (int32_t kb = 0; kb < cnt; ++kb) {
			int32_t b = g->incPart[q0 + kb];
			if (P->dof[b] < 0) continue;
			const double* Jb = g->incJ[q0 + kb];
			for (int32_t ka = 0; ka < cnt; ++ka) {
				int32_t a = g->incPart[q0 + ka];
				if (P->dof[a] < 0 || P->dof[a] > P->dof[b] || (a == b && ka != kb)) continue;
				const double* Ja = g->incJ[q0 + ka];
				int32_t lo = ka < kb ? ka : kb, hi = ka < kb ? kb : ka;
				int32_t off = P->pairOff[P->pairStart[j] + hi * (hi + 1) / 2 + lo];
				int wa = width_of(g, a), wb = width_of(g, b);
				for (int c = 0; c < wb; ++c) {
					double* col = P->Px + P->Pp[P->dof[b] + c] + off;
					double s = inv * Jb[c];
					for (int r = 0; r < (a == b ? c + 1 : wa); ++r) col[r] += s * Ja[r];
				}
			}
		}
	}
	cholmod_sparse A = ib_cholmod_upper(P->nd, P->nnz, P->Pp, P->Pi, P->Px);
	if (!cholmod_factorize(&A, P->L, cc) || cc->status != CHOLMOD_OK) return false;
	int32_t nh = P->nh, nd = P->nd;
	if (nh == 0) return true;
	/* Y = P^-1 J_h^T, G = J_h Y */
	memset(P->Yx, 0, sizeof(double) * (size_t)nd * (size_t)nh);
	for (int32_t i = 0; i < nh; ++i) row_scatter(P, g, P->hard[i], 1.0, P->Yx + (size_t)i * (size_t)nd);
	cholmod_dense B;
	memset(&B, 0, sizeof B);
	B.nrow = B.d = (size_t)nd;
	B.ncol = (size_t)nh;
	B.nzmax = (size_t)nd * (size_t)nh;
	B.x = P->Yx;
	B.xtype = CHOLMOD_REAL;
	B.dtype = CHOLMOD_DOUBLE;
	if (!cholmod_solve2(CHOLMOD_A, P->L, &B, NULL, &P->Ydense, NULL, &P->Yw, &P->Ew, cc)) return false;
	memcpy(P->Yx, P->Ydense->x, sizeof(double) * (size_t)nd * (size_t)nh);
	for (int32_t i = 0; i < nh; ++i)
		for (int32_t k = 0; k < nh; ++k) P->G[i * nh + k] = row_dot(P, g, P->hard[i], P->Yx + (size_t)k * (size_t)nd);
	for (int32_t i = 0; i < nh; ++i) /* symmetric up to rounding */
		for (int32_t k = 0; k < i; ++k) P->G[i * nh + k] = P->G[k * nh + i] = 0.5 * (P->G[i * nh + k] + P->G[k * nh + i]);
	pinv_spd(P->G, nh, P->Lg, P->Ginv);
	return true;
}

bool ib_sp_primal_solve(ibSpPrimal* P, cholmod_common* cc, const ibSpGraph* g, const double* dc, const double* b,
                        double* lam)
{
	int32_t nd = P->nd, nh = P->nh;
	memset(P->rhs, 0, sizeof(double) * (size_t)nd);
	for (int32_t j = 0; j < g->m; ++j)
		if (g->compliance[j] > 0.0) row_scatter(P, g, j, b[j] / dc[j], P->rhs);
	cholmod_dense B = ib_cholmod_vector(P->rhs, nd);
	if (!cholmod_solve2(CHOLMOD_A, P->L, &B, NULL, &P->X, NULL, &P->Yw1, &P->Ew1, cc)) return false;
	memcpy(P->dv, P->X->x, sizeof(double) * (size_t)nd);
	if (nh > 0) {
		double t[IB_SP_MAX_HARD], lh[IB_SP_MAX_HARD];
		for (int32_t i = 0; i < nh; ++i) t[i] = b[P->hard[i]] - row_dot(P, g, P->hard[i], P->dv);
		for (int32_t i = 0; i < nh; ++i) {
			double s = 0.0;
			for (int32_t k = 0; k < nh; ++k) s += P->Ginv[i * nh + k] * t[k];
			lh[i] = s;
			lam[P->hard[i]] = s;
		}
		for (int32_t k = 0; k < nh; ++k) {
			const double* Y = P->Yx + (size_t)k * (size_t)nd;
			for (int32_t i = 0; i < nd; ++i) P->dv[i] += Y[i] * lh[k];
		}
	}
	for (int32_t j = 0; j < g->m; ++j)
		if (g->compliance[j] > 0.0) lam[j] = (b[j] - row_dot(P, g, j, P->dv)) / dc[j];
	return true;
}
