/* Sparse direct solve of the soft rows (IB_SOFT_SOLVER_SPARSE): instead of one Gauss–Seidel pass
 * over the rows, each sweep solves all equality rows of the sparse soft bodies together with the
 * constraints touching their particles (rigid–soft joints, user constraints) as one linear system
 *
 *     (J M^-1 J^T + diag(alpha/h^2)) lambda = -(C(t0+h) + alpha acc/h) / h     (joint correction)
 *     (J M^-1 J^T) lambda = -J u                                                (velocity correction)
 *
 * with J at the time instant (t0, resp. t0+h) as in the Gauss–Seidel rows, i.e. the LGS method of
 * the rigid joints applied to the soft rows. The predicted row values are re-evaluated after each
 * solve, so the sweeps form a Newton-like iteration on the predicted constraints that ends when all
 * rows are within tolerance; rigid joints, contacts and Gauss–Seidel soft bodies are swept between
 * the solves (block Gauss–Seidel). A stiff 50 x 50 cloth needs a handful of solves per step where
 * Gauss–Seidel needs thousands of sweeps (docs/soft.md).
 *
 * The matrix is scaled to unit diagonal (S A S, S = diag^-1/2) and regularised by SP_EPS, so
 * redundant rigid rows (rank-deficient A) are solved in the least-squares sense; their impulses are
 * not warm-started. Pattern and symbolic factor (AMD) once per layout (ss->layout), numeric
 * factorisation per correction (begin), cholmod_solve2 with reused workspace per sweep. Our arrays
 * use the world allocator (grow-only); CHOLMOD allocates its factor and workspace itself. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>

#include "soft/soft_internal.h"
#include "math/cholmod_view.h"
#include "soft/soft_sparse_primal.h"

#define SP_EPS 1e-10
#define SP_MAX_HALVINGS 12
#define SP_RELINEARISE 0 /* halvings before the rows are linearised at the predicted state */
#define SP_MAX_RELINEARISE 20
#define SP_SLOW 0.5 /* a solve that left more than this fraction of the merit: linearise at the predicted state */
#define SP_MAX_SLOW 100 /* relinearisations for slow convergence per correction */
#define SP_DAMP_AFTER 8   /* halvings of one step before it is taken back and solved again with damping */
#define SP_DAMP_FIRST 1e-4
#define SP_DAMP_GROW 10.0
#define SP_MAX_DAMP 1e4

typedef struct SpUnit {
	int32_t index; /* internal row index (>= 0) or -(constraint index + 1) */
	int32_t row0;  /* first system row */
} SpUnit;

typedef struct SpSys {
	bool velocity;       /* velocity system: rows with velocity correction only */
	bool valid;          /* pattern and analysis built */
	bool factored;       /* numeric factor of the current correction */
	uint32_t builtFor;   /* ss->layout + 1 of the pattern (0 = none) */
	int32_t m, nnz, units;
	int32_t parts;       /* participant keys: particles, then bodies (at build time) */
	SpUnit* unit;
	int32_t unitCap;
	int32_t* rowUnit; /* unit of each system row */
	int32_t rowUnitCap;
	/* incidences: per system row the participants it touches, with a pointer to its Jacobian block */
	int32_t* incStart; /* m + 1 */
	int32_t incStartCap;
	int32_t* incPart; /* participant key: particle index, or particleCount + body index */
	int32_t incPartCap;
	double** incJ;
	int32_t incJCap;
	int32_t* incRow; /* system row of each incidence */
	int32_t incRowCap;
	int32_t* cursor; /* per participant, while building */
	int32_t cursorCap;
	/* transposed: incidences of each participant */
	int32_t* partStart;
	int32_t partStartCap;
	int32_t* partInc;
	int32_t partIncCap;
	/* upper triangle by columns, sorted rows */
	int32_t* Ap;
	int32_t ApCap;
	int32_t* Ai;
	int32_t AiCap;
	double* Ax;
	int32_t AxCap;
	int32_t* mark;
	int32_t markCap;
	double *scale, *b, *lam;
	int32_t scaleCap, bCap, lamCap;
	cholmod_factor* L;
	cholmod_dense *X, *Y, *E;
	/* particle-space form (joint correction; soft_sparse_primal.c) where CHOLMOD counts fewer flops */
	ibSpPrimal* primal;
	bool usePrimal;      /* the current factor is the particle-space one */
	double dualFlops;    /* CHOLMOD's flop count of the row-space factor */
	double *comp, *dc;   /* per row: compliance, compliance / h^2 */
	int32_t compCap, dcCap;
	double lastMerit;    /* sum of squared predicted row values before the last solve */
	bool haveLast;
	int halvings;        /* backtracking steps since the last solve */
	int relinearised;    /* times J was taken at the predicted state in this correction after a worse merit */
	int slowRelinearised; /* ... after a solve that reduced the merit too little */
	double damp;         /* Levenberg-Marquardt damping of the row-space factor (relative to its unit diagonal), 0 = none */
} SpSys;

struct ibSoftSparse {
	cholmod_common cc;
	SpSys sys[2]; /* joint correction, velocity correction */
};

static bool body_sparse(const ibSoftStore* ss, int32_t particle)
{
	return ib_soft_solver_of(&ss->softs[ss->particles[particle].soft]) == IB_SOFT_SOLVER_SPARSE;
}

int ib_soft_solver_of(const ibSoftBody* sb)
{
	if (sb->solver != IB_SOFT_SOLVER_AUTO) return sb->solver;
	/* the sparse solve was faster on every cloth measured (16 to 2601 particles) and converges where
	 * the sweeps stall; a sweep cap (anytime cloth) is a Gauss–Seidel notion */
	return sb->rowCount > 0 && sb->maxIter == 0 ? IB_SOFT_SOLVER_SPARSE : IB_SOFT_SOLVER_GAUSS_SEIDEL;
}

static bool con_sparse(const ibSoftStore* ss, const ibSoftCon* c)
{
	for (int k = 0; k < c->count; ++k)
		if (!c->parts[k].isBody && body_sparse(ss, c->parts[k].index)) return true;
	return false;
}

bool ib_soft_sparse_wanted(const ibSoftStore* ss)
{
	for (int32_t i = 0; i < ss->softHigh; ++i)
		if (ss->softs[i].inUse && ib_soft_solver_of(&ss->softs[i]) == IB_SOFT_SOLVER_SPARSE && ss->softs[i].rowCount > 0) return true;
	return false;
}

static ibSoftSparse* sparse_of(ibWorld* w, ibSoftStore* ss)
{
	if (!ss->sparse) {
		ibSoftSparse* S = ib_alloc(w, sizeof *S);
		if (!S) return NULL;
		memset(S, 0, sizeof *S);
		if (!ib_cholmod_start(&S->cc)) {
			ib_free(w, S, sizeof *S);
			return NULL;
		}
		S->sys[1].velocity = true;
		ss->sparse = S;
	}
	return ss->sparse;
}

#define FREE_ARR(p, cap, T) (ib_free(w, (p), sizeof(T) * (size_t)(cap)), (p) = NULL, (cap) = 0)

static void sys_free(ibWorld* w, ibSoftSparse* S, SpSys* y)
{
	FREE_ARR(y->unit, y->unitCap, SpUnit);
	FREE_ARR(y->rowUnit, y->rowUnitCap, int32_t);
	FREE_ARR(y->incStart, y->incStartCap, int32_t);
	FREE_ARR(y->incPart, y->incPartCap, int32_t);
	FREE_ARR(y->incJ, y->incJCap, double*);
	FREE_ARR(y->incRow, y->incRowCap, int32_t);
	FREE_ARR(y->cursor, y->cursorCap, int32_t);
	FREE_ARR(y->partStart, y->partStartCap, int32_t);
	FREE_ARR(y->partInc, y->partIncCap, int32_t);
	FREE_ARR(y->Ap, y->ApCap, int32_t);
	FREE_ARR(y->Ai, y->AiCap, int32_t);
	FREE_ARR(y->Ax, y->AxCap, double);
	FREE_ARR(y->mark, y->markCap, int32_t);
	FREE_ARR(y->scale, y->scaleCap, double);
	FREE_ARR(y->b, y->bCap, double);
	FREE_ARR(y->lam, y->lamCap, double);
	FREE_ARR(y->comp, y->compCap, double);
	FREE_ARR(y->dc, y->dcCap, double);
	ib_sp_primal_free(w, &S->cc, &y->primal);
	y->usePrimal = false;
	if (y->L) cholmod_free_factor(&y->L, &S->cc);
	if (y->X) cholmod_free_dense(&y->X, &S->cc);
	if (y->Y) cholmod_free_dense(&y->Y, &S->cc);
	if (y->E) cholmod_free_dense(&y->E, &S->cc);
	y->valid = y->factored = false;
	y->builtFor = 0;
}

void ib_soft_sparse_free(ibWorld* w, ibSoftStore* ss)
{
	ibSoftSparse* S = ss->sparse;
	if (!S) return;
	for (int k = 0; k < 2; ++k) sys_free(w, S, &S->sys[k]);
	cholmod_finish(&S->cc);
	ib_free(w, S, sizeof *S);
	ss->sparse = NULL;
}

static ibSoftView unit_view(ibSoftStore* ss, const SpUnit* u)
{
	return u->index >= 0 ? ib_soft_row_view(ss, &ss->rows[u->index]) : ib_soft_con_view(&ss->cons[-u->index - 1]);
}

static void part_key(const ibSoftStore* ss, const ibSoftView* v, int k, int32_t* key, int* width)
{
	if (v->parts) {
		*width = v->parts[k].isBody ? 6 : 3;
		*key = v->parts[k].isBody ? ss->particleCount + v->parts[k].index : v->parts[k].index;
	} else {
		*width = 3;
		*key = v->pidx ? v->pidx[k] : v->first + k;
	}
}

static int cmp_i32(const void* a, const void* b)
{
	int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
	return (x > y) - (x < y);
}

static cholmod_sparse sys_matrix(SpSys* y) { return ib_cholmod_upper(y->m, y->nnz, y->Ap, y->Ai, y->Ax); }

#define GROW(p, cap, n) ib_grow(w, (void**)&(p), &(cap), (n) + 1, sizeof(*(p)))

/* Units, incidences, pattern and symbolic analysis for the current layout. */
static ibSpGraph sys_graph(const ibSoftStore* ss, const SpSys* y)
{
	return (ibSpGraph){y->m, y->parts, ss->particleCount, y->incStart, y->incPart, y->incRow, y->partStart, y->partInc,
	                   y->incJ, y->comp};
}

static bool sys_build(ibWorld* w, ibSoftStore* ss, ibSoftSparse* S, SpSys* y)
{
	if (y->L) cholmod_free_factor(&y->L, &S->cc);
	ib_sp_primal_free(w, &S->cc, &y->primal);
	y->usePrimal = false;
	y->m = y->nnz = y->units = 0;
	int32_t nUnits = 0, m = 0, ninc = 0;
	for (int pass = 0; pass < 2; ++pass) {
		nUnits = m = ninc = 0;
		for (int32_t si = 0; si < ss->softHigh; ++si) {
			const ibSoftBody* sb = &ss->softs[si];
			if (!sb->inUse || ib_soft_solver_of(sb) != IB_SOFT_SOLVER_SPARSE) continue;
			for (int32_t k = sb->firstRow; k < sb->firstRow + sb->rowCount; ++k) {
				if (y->velocity && ss->rows[k].compliance > 0.0) continue;
				ibSoftView v = ib_soft_row_view(ss, &ss->rows[k]);
				if (pass) y->unit[nUnits] = (SpUnit){k, m};
				++nUnits;
				m += 1;
				ninc += v.count;
			}
		}
		for (int32_t i = 0; i < ss->conHigh; ++i) {
			ibSoftCon* c = &ss->cons[i];
			if (!c->inUse || !con_sparse(ss, c)) continue;
			ibSoftView v = ib_soft_con_view(c);
			if (y->velocity && !v.velocity) continue;
			if (pass) y->unit[nUnits] = (SpUnit){-(i + 1), m};
			++nUnits;
			m += v.rows;
			ninc += v.rows * v.count;
		}
		if (pass == 0) {
			int32_t parts = ss->particleCount + w->bodyHigh;
			if (!GROW(y->unit, y->unitCap, nUnits) || !GROW(y->rowUnit, y->rowUnitCap, m) ||
			    !GROW(y->incStart, y->incStartCap, m + 1) || !GROW(y->incPart, y->incPartCap, ninc) ||
			    !GROW(y->incJ, y->incJCap, ninc) || !GROW(y->incRow, y->incRowCap, ninc) ||
			    !GROW(y->cursor, y->cursorCap, parts + 1) || !GROW(y->partStart, y->partStartCap, parts + 1) ||
			    !GROW(y->partInc, y->partIncCap, ninc) || !GROW(y->Ap, y->ApCap, m + 1) ||
			    !GROW(y->mark, y->markCap, m) || !GROW(y->scale, y->scaleCap, m) || !GROW(y->b, y->bCap, m) ||
			    !GROW(y->lam, y->lamCap, m) || !GROW(y->comp, y->compCap, m) || !GROW(y->dc, y->dcCap, m))
				return false;
		}
	}
	y->units = nUnits;
	y->m = m;
	if (m == 0) return true;
	/* incidences per row */
	int32_t z = 0;
	for (int32_t u = 0; u < nUnits; ++u) {
		ibSoftView v = unit_view(ss, &y->unit[u]);
		int cols = ib_soft_view_cols(&v);
		for (int r = 0; r < v.rows; ++r) {
			int32_t row = y->unit[u].row0 + r;
			y->rowUnit[row] = u;
			y->incStart[row] = z;
			int col = 0;
			for (int k = 0; k < v.count; ++k) {
				int32_t key;
				int width;
				part_key(ss, &v, k, &key, &width);
				y->incPart[z] = key;
				y->incJ[z] = v.J + r * cols + col;
				y->incRow[z] = row;
				++z;
				col += width;
			}
		}
	}
	y->incStart[m] = z;
	/* transposed lists */
	int32_t parts = ss->particleCount + w->bodyHigh;
	y->parts = parts;
	for (int32_t p = 0; p <= parts; ++p) y->partStart[p] = 0;
	for (int32_t q = 0; q < z; ++q) y->partStart[y->incPart[q] + 1]++;
	for (int32_t p = 0; p < parts; ++p) y->partStart[p + 1] += y->partStart[p];
	/* counting sort into the participants' lists  */
	for (int32_t p = 0; p < parts; ++p) y->cursor[p] = y->partStart[p];
	for (int32_t q = 0; q < z; ++q) y->partInc[y->cursor[y->incPart[q]]++] = q;
	/* pattern: column j holds the rows i <= j sharing a participant with j */
	for (int32_t i = 0; i < m; ++i) y->mark[i] = -1;
	int32_t nnz = 0;
	for (int pass = 0; pass < 2; ++pass) {
		nnz = 0;
		for (int32_t j = 0; j < m; ++j) {
			if (pass) y->Ap[j] = nnz;
			int32_t start = nnz;
			for (int32_t q = y->incStart[j]; q < y->incStart[j + 1]; ++q) {
				int32_t p = y->incPart[q];
				for (int32_t t = y->partStart[p]; t < y->partStart[p + 1]; ++t) {
					int32_t i = y->incRow[y->partInc[t]];
					if (i > j || y->mark[i] == j + pass * m) continue;
					y->mark[i] = j + pass * m;
					if (pass) y->Ai[nnz] = i;
					++nnz;
				}
			}
			if (y->mark[j] != j + pass * m) { /* diagonal even for rows without participants */
				y->mark[j] = j + pass * m;
				if (pass) y->Ai[nnz] = j;
				++nnz;
			}
			if (pass) qsort(y->Ai + start, (size_t)(nnz - start), sizeof(int32_t), cmp_i32);
		}
		if (pass == 0 && (!GROW(y->Ai, y->AiCap, nnz) || !GROW(y->Ax, y->AxCap, nnz))) return false;
		if (pass == 0)
			for (int32_t i = 0; i < m; ++i) y->mark[i] = -1;
	}
	y->Ap[m] = nnz;
	y->nnz = nnz;
	for (int32_t q = 0; q < nnz; ++q) y->Ax[q] = 0.0;
	for (int32_t j = 0; j < m; ++j) y->Ax[y->Ap[j + 1] - 1] = 1.0; /* diagonal last (sorted, i <= j) */
	cholmod_sparse A = sys_matrix(y);
	y->L = cholmod_analyze(&A, &S->cc);
	if (!y->L || S->cc.status < CHOLMOD_OK) return false;
	double primalFlops;
	y->dualFlops = S->cc.fl;
	for (int32_t j = 0; j < m; ++j) {
		ibSoftView v = unit_view(ss, &y->unit[y->rowUnit[j]]);
		y->comp[j] = v.compliance;
	}
	if (!y->velocity) {
		ibSpGraph g = sys_graph(ss, y);
		y->primal = ib_sp_primal_build(w, ss, &S->cc, &g, &primalFlops);
		if (y->primal && !(primalFlops < y->dualFlops)) ib_sp_primal_free(w, &S->cc, &y->primal);
	}
	return true;
}

static int32_t find_entry(const SpSys* y, int32_t i, int32_t j)
{
	int32_t lo = y->Ap[j], hi = y->Ap[j + 1] - 1;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (y->Ai[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* a M^-1 b^T for participant key p (width 3 or 6) */
static double response(const ibWorld* w, const ibSoftStore* ss, int32_t p, const double* a, const double* b)
{
	if (p < ss->particleCount) {
		double im = ss->particles[p].invMass;
		return im * (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
	}
	const ibBody* body = &w->bodies[p - ss->particleCount];
	if (!ib_is_dynamic(body)) return 0.0;
	double s = body->invMass * (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
	for (int i = 0; i < 3; ++i)
		for (int l = 0; l < 3; ++l) s += a[3 + i] * body->invInertiaW.m[i][l] * b[3 + l];
	return s;
}

/* Numeric values (J, masses at the prepared instant) and factorisation: the particle-space form
 * where it applies, else the row-space system. */
static bool sys_factor(ibWorld* w, ibSoftStore* ss, ibSoftSparse* S, SpSys* y, double h)
{
	ss->stats.sparseFactorizations++;
	for (int32_t j = 0; j < y->m; ++j) y->dc[j] = y->velocity ? 0.0 : y->comp[j] / (h * h);
	if (y->primal) {
		ibSpGraph g = sys_graph(ss, y);
		if (!ib_sp_primal_matches(w, ss, y->primal, &g)) { /* a pin or a body type changed: new pattern */
			double flops;
			ib_sp_primal_free(w, &S->cc, &y->primal);
			y->primal = ib_sp_primal_build(w, ss, &S->cc, &g, &flops);
			if (y->primal && !(flops < y->dualFlops)) ib_sp_primal_free(w, &S->cc, &y->primal);
		}
	}
	if (y->primal) {
		ibSpGraph g = sys_graph(ss, y);
		y->usePrimal = ib_sp_primal_factor(w, ss, &S->cc, y->primal, &g, y->dc);
		if (y->usePrimal) return true;
	}
	for (int32_t q = 0; q < y->nnz; ++q) y->Ax[q] = 0.0;
	for (int32_t p = 0; p < y->parts; ++p)
		for (int32_t t = y->partStart[p]; t < y->partStart[p + 1]; ++t) {
			int32_t ia = y->partInc[t], ra = y->incRow[ia];
			for (int32_t t2 = t; t2 < y->partStart[p + 1]; ++t2) {
				int32_t ib = y->partInc[t2], rb = y->incRow[ib];
				int32_t i = ra < rb ? ra : rb, j = ra < rb ? rb : ra;
				double v = response(w, ss, p, y->incJ[ia], y->incJ[ib]);
				y->Ax[find_entry(y, i, j)] += ia == ib || ra != rb ? v : 2.0 * v;
			}
		}
	/* compliance on the diagonal (joint correction), scaling to unit diagonal */
	for (int32_t j = 0; j < y->m; ++j) {
		const SpUnit* u = &y->unit[y->rowUnit[j]];
		ibSoftView v = unit_view(ss, u);
		double d = y->Ax[y->Ap[j + 1] - 1];
		if (!y->velocity) d += v.compliance / (h * h);
		y->scale[j] = d > 0.0 ? 1.0 / sqrt(d) : 0.0;
	}
	for (int32_t j = 0; j < y->m; ++j) {
		for (int32_t q = y->Ap[j]; q < y->Ap[j + 1] - 1; ++q) y->Ax[q] *= y->scale[y->Ai[q]] * y->scale[j];
		y->Ax[y->Ap[j + 1] - 1] = 1.0;
	}
	cholmod_sparse A = sys_matrix(y);
	double beta[2] = {SP_EPS + y->damp, 0.0};
	int ok = cholmod_factorize_p(&A, beta, NULL, 0, y->L, &S->cc);
	return ok && S->cc.status >= CHOLMOD_OK && S->cc.status != CHOLMOD_NOT_POSDEF;
}

/* Set up the system of this correction; false if the sparse rows have to fall back to sweeps. */
static bool sys_begin(ibWorld* w, ibSoftStore* ss, bool velocity, double h)
{
	ibSoftSparse* S = sparse_of(w, ss);
	if (!S) return false;
	SpSys* y = &S->sys[velocity ? 1 : 0];
	y->factored = false;
	y->haveLast = false;
	y->halvings = 0;
	y->relinearised = 0;
	y->slowRelinearised = 0;
	y->damp = 0.0;
	if (y->builtFor != ss->layout + 1u) {
		y->valid = sys_build(w, ss, S, y);
		y->builtFor = ss->layout + 1u;
	}
	if (!y->valid) return false;
	if (y->m == 0) return y->factored = true;
	y->factored = sys_factor(w, ss, S, y, h);
	return y->factored;
}

static bool sys_solve(ibSoftStore* ss, ibSoftSparse* S, SpSys* y)
{
	ss->stats.sparseSolves++;
	if (y->usePrimal) {
		ibSpGraph g = sys_graph(ss, y);
		return ib_sp_primal_solve(y->primal, &S->cc, &g, y->dc, y->b, y->lam);
	}
	for (int32_t i = 0; i < y->m; ++i) y->b[i] *= y->scale[i];
	cholmod_dense B = ib_cholmod_vector(y->b, y->m);
	if (!cholmod_solve2(CHOLMOD_A, y->L, &B, NULL, &y->X, NULL, &y->Y, &y->E, &S->cc)) return false;
	const double* x = y->X->x;
	for (int32_t i = 0; i < y->m; ++i) y->lam[i] = y->scale[i] * x[i];
	return true;
}

bool ib_soft_sparse_begin(ibWorld* w, ibSoftStore* ss, bool velocity, double h)
{
	bool ok = sys_begin(w, ss, velocity, h);
	if (velocity)
		ss->sparseVelocity = ok;
	else
		ss->sparsePosition = ok;
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		ibSoftCon* c = &ss->cons[i];
		if (c->inUse) c->inSparse = ok && con_sparse(ss, c);
	}
	return ok;
}

static double norm(const double* x, int n)
{
	double s = 0.0;
	for (int i = 0; i < n; ++i) s += x[i] * x[i];
	return sqrt(s);
}

/* A new numeric factor of the joint correction's system (after a re-linearisation or a change of the damping);
 * false if it failed: the Gauss–Seidel sweeps take over for the rest of this correction */
static bool refactor(ibWorld* w, ibSoftStore* ss, SpSys* y, double h)
{
	if (sys_factor(w, ss, ss->sparse, y, h)) return true;
	y->factored = false;
	ss->sparsePosition = false;
	return false;
}

/* J of every unit at the predicted states (the impulse directions of the rest of this correction)
 * and a new factor; the units' epochs are reset so that the next time instant recomputes J. */
static void relinearise(ibWorld* w, ibSoftStore* ss, SpSys* y, double h)
{
	double C[IB_SOFT_MAXR];
	for (int32_t u = 0; u < y->units; ++u) {
		const SpUnit* su = &y->unit[u];
		ibSoftView v = unit_view(ss, su);
		ib_soft_view_eval(w, ss, &v, ib_soft_gather(w, ss, &v, true, h), C, v.J);
		if (su->index >= 0)
			ss->rows[su->index].epoch = w->poseEpoch - 1u;
		else
			ss->cons[-su->index - 1].epoch = w->poseEpoch - 1u;
	}
	y->relinearised++;
	ss->stats.sparseRelinearisations++;
	refactor(w, ss, y, h);
}

static void apply_lam(ibWorld* w, ibSoftStore* ss, SpSys* y)
{
	for (int32_t u = 0; u < y->units; ++u) {
		ibSoftView v = unit_view(ss, &y->unit[u]);
		const double* lam = y->lam + y->unit[u].row0;
		for (int r = 0; r < v.rows; ++r) v.acc[r] += lam[r];
		ib_soft_apply(w, ss, &v, lam);
	}
}

/* Sum of the squared predicted row values (with the springs' terms) into *merit, the right-hand
 * side -C/h into y->b; true if some row is outside its tolerance. */
static bool predicted_merit(ibWorld* w, ibSoftStore* ss, SpSys* y, double h, double* merit)
{
	bool any = false;
	*merit = 0.0;
	for (int32_t u = 0; u < y->units; ++u) {
		ibSoftView v = unit_view(ss, &y->unit[u]);
		double* C = y->b + y->unit[u].row0;
		ib_soft_view_eval(w, ss, &v, ib_soft_gather(w, ss, &v, true, h), C, NULL);
		for (int r = 0; r < v.rows; ++r) C[r] += v.compliance * v.acc[r] / h;
		double tol = v.tol > 0.0 ? v.tol : w->solver.positionTolerance, n = norm(C, v.rows);
		if (n > tol) any = true;
		*merit += n * n;
		for (int r = 0; r < v.rows; ++r) C[r] = -C[r] / h;
	}
	return any;
}

/* Take back the given part of the last solve's impulses (they lie along the current J, so this is
 * exact); y->lam then holds the part still applied. */
static void take_back(ibWorld* w, ibSoftStore* ss, SpSys* y, double part)
{
	for (int32_t i = 0; i < y->m; ++i) y->lam[i] *= -part;
	apply_lam(w, ss, y);
	for (int32_t i = 0; i < y->m; ++i) y->lam[i] *= (part - 1.0) / part;
}

/* One solve of the joint correction; true if some row was outside its tolerance. */
bool ib_soft_sparse_position_sweep(ibWorld* w, ibSoftStore* ss, double h)
{
	SpSys* y = &ss->sparse->sys[0];
	if (y->m == 0 || !y->factored) return false;
	double merit;
	if (!predicted_merit(w, ss, y, h, &merit)) return false;
	if (y->haveLast && merit > y->lastMerit && y->halvings >= SP_RELINEARISE && y->relinearised < SP_MAX_RELINEARISE) {
		/* backtracking does not help: the impulse directions of t0 cannot reach the target. Take
		 * the rest of the step back and linearise the rows at the predicted state instead. */
		take_back(w, ss, y, 1.0);
		relinearise(w, ss, y, h);
		y->haveLast = false;
		return true;
	}
	if (y->haveLast && merit > y->lastMerit && y->halvings >= SP_DAMP_AFTER && !y->usePrimal && y->damp < SP_MAX_DAMP) {
		/* backtracking along a poor Newton direction (a row near a singular configuration, such as a bending
		 * row of a flat inextensible cloth hung from an edge) makes little progress per solve: take the step
		 * back and solve again with a damped factor (Levenberg-Marquardt), which turns the step towards the
		 * gradient of the merit */
		take_back(w, ss, y, 1.0);
		y->damp = y->damp > 0.0 ? SP_DAMP_GROW * y->damp : SP_DAMP_FIRST;
		y->haveLast = false;
		y->halvings = 0;
		refactor(w, ss, y, h);
		return true;
	}
	if (y->haveLast && merit > y->lastMerit && y->halvings < SP_MAX_HALVINGS) {
		/* the last solve made the predicted rows worse (the t0 linearisation does not fit the
		 * predicted state, e.g. elements rotating fast): take back half of it (backtracking) */
		take_back(w, ss, y, 0.5);
		y->halvings++;
		return true;
	}
	if (y->haveLast && merit > SP_SLOW * y->lastMerit && y->slowRelinearised < SP_MAX_SLOW) {
		/* the t0 directions converge only linearly (or not at all: a flat cloth whose edges turn out
		 * of its plane, a straight edge between held points that must sag): Newton steps from here */
		y->slowRelinearised++;
		relinearise(w, ss, y, h);
		if (!y->factored) return true;
	}
	if (y->damp > 0.0 && y->haveLast && merit < y->lastMerit) { /* the damped step helped: less damping */
		y->damp = y->damp / SP_DAMP_GROW < SP_DAMP_FIRST ? 0.0 : y->damp / SP_DAMP_GROW;
		if (!refactor(w, ss, y, h)) return true;
	}
	if (!sys_solve(ss, ss->sparse, y)) return false;
	apply_lam(w, ss, y);
	y->lastMerit = merit;
	y->haveLast = true;
	y->halvings = 0;
	return true;
}

/* End of a joint correction (or of one sweep resumed by the contact loop): if its last solve made
 * the predicted rows worse (the correction ended at its sweep cap before the sweep that would take
 * it back), take it back. A cloth ending
 * unconverged on such a solve (a fold of a coarse inextensible cloth) gained tens of J. */
void ib_soft_sparse_position_end(ibWorld* w, ibSoftStore* ss, double h)
{
	SpSys* y = &ss->sparse->sys[0];
	if (y->m == 0 || !y->factored || !y->haveLast) return;
	double merit;
	if (!predicted_merit(w, ss, y, h, &merit) || merit <= y->lastMerit) return;
	take_back(w, ss, y, 1.0);
	y->haveLast = false;
}

/* One solve of the velocity correction. */
bool ib_soft_sparse_velocity_sweep(ibWorld* w, ibSoftStore* ss)
{
	SpSys* y = &ss->sparse->sys[1];
	if (y->m == 0) return false;
	bool any = false;
	for (int32_t u = 0; u < y->units; ++u) {
		ibSoftView v = unit_view(ss, &y->unit[u]);
		double* du = y->b + y->unit[u].row0;
		ib_soft_rate(w, ss, &v, du);
		if (norm(du, v.rows) > w->solver.velocityTolerance) any = true;
		for (int r = 0; r < v.rows; ++r) du[r] = -du[r];
	}
	if (!any) return false;
	if (!sys_solve(ss, ss->sparse, y)) return false;
	for (int32_t u = 0; u < y->units; ++u) {
		ibSoftView v = unit_view(ss, &y->unit[u]);
		const double* lam = y->lam + y->unit[u].row0;
		for (int r = 0; r < v.rows; ++r) v.accVel[r] += lam[r];
		ib_soft_apply(w, ss, &v, lam);
	}
	return true;
}
