/* General sparse LGS method (§3.3.2, digest §11/§12) with SuiteSparse CHOLMOD: joint graphs with or
 * without closed loops are solved directly, redundant constraints included (IB_SOLVER_LGS_SPARSE).
 *
 * System. One row per projection row of every basic joint (velocity-only joints only in the velocity
 * correction). Row i has a 6-vector Jacobian per body (translational: [P, r_a x P] for body 1 and
 * -[P, r_b x P] for body 2; rotational: [0, P] and -[0, P]; zero for non-dynamic bodies), and
 *     A = G Mass^-1 G^T,   Mass^-1 = diag(1/m, J_world^-1),
 * the matrix of the blocks P_i M~_ij P_j^T of §11.2: symmetric positive semi-definite, A_ij != 0 only
 * if rows i and j share a dynamic body. The impulses x (A x = rhs) change the body velocities by
 * dv = Mass^-1 G^T x (+P^T x at a on body 1, -P^T x at b on body 2, as the iterative method applies).
 *
 * Velocity correction: rhs_i = P_i (u_b - u_a) (or w2 - w1) at t0+h, A at t0+h; one solve is exact
 * (the errors are re-measured and the solve repeated only if rounding left them above the tolerance).
 *
 * Joint correction: rhs_i = P_i d_i(t0+h)/h, iterated on the predicted errors (Newton): each step
 * solves (J + eps D) dx = rhs (damped, see below), J = Gr Mass^-1 G^T the response of the predicted errors to impulses at t0 (Gr:
 * lever arms of the predicted joint points; after a step that reduced the errors by less than 20x,
 * the exact response by forward differences through the integrator, 6 perturbed predictions per body).
 * J is not symmetric; it is solved by GMRES (flexible form, <= 20 vectors, relative residual 1e-6)
 * preconditioned with the Cholesky factor of the symmetric A at t0: A^-1 J = I + O(rotation per
 * step), 2-4 vectors in practice, and the one factorisation serves every Newton step. A step that
 * makes the errors worse is halved back (<= 8 times); a stall (less than 10% progress three times) or
 * maxPositionIterations (which counts Newton steps) ends it: unconverged, so that step.c redoes the
 * step as two halves, or, where the step cannot be subdivided, Alg. 3.1 finishes as for the tree solver.
 * The factorisation made at t0+h for the velocity correction is reused by the next step's joint
 * correction when the two systems are the same (no velocity-only joints) and no pose changed.
 *
 * Redundant constraints (closed loops, e.g. the 6-hinge ring: 30 rows of rank 27 with parallel axes,
 * a four-bar: 20 rows for at most 19 removed DOFs) make A singular. Handled automatically by
 * regularisation, not by dropping rows:
 *   1. Jacobi scaling S = diag(A)^-1/2 (unit diagonal; rows of different units and masses alike);
 *   2. CHOLMOD factorises S A S + eps I, eps = SP_EPS = 1e-6 (always positive definite);
 *   3. velocity correction: y = (SAS + eps I)^-1 S rhs, refined with y += (SAS + eps I)^-1 (S rhs - SAS y)
 *      while the residual falls by at least half (<= 8 times); x = S y. The velocity rhs G u is always
 *      in range(A), and a partial or full mass-metric projection never adds kinetic energy, so the
 *      refinement may converge to the exact (minimum-norm) solution;
 *   4. joint correction: each Newton step solves the damped system (J + eps D) x = rhs, D = diag(A) =
 *      S^-2 (Levenberg-Marquardt), preconditioned with the same factor. The damping changes only the
 *      step, not the converged result (the loop stops on the measured predicted errors).
 * In the eigenbasis of SAS, a component with eigenvalue lambda > 0 converges by eps/(lambda + eps) per
 * refinement or Newton step. Why the joint correction must be damped (issue 4, the three-loop model at
 * eps_d = 1e-4 / 1e-6 blew up with eps = 1e-10 and undamped GMRES): with errors up to the tolerance, the
 * hinge axes of a loop are not exactly parallel, so its "redundant" rows are only nearly dependent
 * (eigenvalues ~ misalignment^2, 1e-8 .. 1e-12 in the unit scaling), and the predicted errors are in
 * range(J) only to first order. Undamped, GMRES removes that second-order remainder with impulses
 * ~ remainder / lambda along the near-null directions: 1e7 .. 1e12 N s where m g h ~ 1 N s was needed;
 * they are not quite in null(G^T), so they changed the velocities (kinetic energy 2.2 J -> 56 J in
 * one step, then non-finite states), and a preconditioner with eps = 1e-10 put such components into
 * every Krylov vector. With eps = 1e-6 in the factor and the operator, the impulses along directions
 * with lambda << eps are bounded by remainder / eps and the loops keep their energy (20 s, within
 * 0.04 J of 256 J, the iterative method's drift; tests/test_joints_loops.c).
 * Impulses in null(A) = null(G^T) would not change any body velocity anyway: the motion dv is unique
 * even where the split of the impulses over redundant rows is not.
 * An inconsistent remainder (e.g. kinematic bodies driving a loop incompatibly) stalls the refinement,
 * which then stops; the errors stay above the tolerance and the step reports converged = false.
 *
 * Symbolic analysis (AMD ordering) once per joint layout (st->layoutVersion), numeric factorisation per
 * time instant (w->poseEpoch), solves with cholmod_solve2 and reused workspace. Our arrays use the world
 * allocator; CHOLMOD allocates its own (factor, workspace) with malloc (SuiteSparse_config), outside
 * the world's allocator hooks. One cholmod_common per world (no shared state between worlds); the
 * Debian CHOLMOD may run OpenMP threads inside the supernodal factorisation of large supernodes.
 * Cost: nnz(A) grows with the square of the number of rows meeting at one body (a body with k joints
 * couples all their rows), so a hub with hundreds of joints gives a dense block; the tree solver
 * (solver_lgs_tree.c) has no such fill for acyclic graphs. */
#include <math.h>
#include <string.h>

#include <cholmod.h>

#include "joints/joint_internal.h"
#include "math/cholmod_view.h"

#define SP_EPS 1e-6       /* regularisation of the unit-diagonal matrix and damping of the Newton steps */
#define SP_MAX_REFINE 8   /* refinement solves per system solve */
#define SP_MAX_VEL_SOLVES 4

#define SP_KRYLOV 20       /* Krylov vectors per Newton step of the joint correction */
#define SP_KRYLOV_TOL 1e-6 /* relative residual of the linearised joint correction */

typedef struct SpSys {
	uint32_t builtFor;    /* st->layoutVersion of pattern and analysis (0 = none) */
	bool valid;           /* pattern and symbolic factor built without error */
	bool velocityOnlyToo; /* rows of velocity-only joints included */
	int32_t m, nnz;       /* rows, stored entries (upper triangle incl. diagonal) */
	/* per-row arrays, carved from two blocks of mAlloc rows: */
	int32_t* ints;
	double* dbl;
	int32_t mAlloc;
	int32_t* rowOf;  /* basic * 4 + projection row */
	int32_t* Ap;     /* m + 1 column starts */
	int32_t* diag;   /* position of the diagonal entry of each column */
	double* G;       /* 12 per row: Jacobian for body 1 (6) and body 2 (6) at the instant of the factor */
	double* W;       /* 12 per row: Mass^-1 G^T */
	double* Gr;      /* 12 per row: response of the predicted errors (lever arms at the predicted poses) */
	double* scale;   /* S = diag(A)^-1/2 */
	double *b, *y, *r, *x; /* right-hand side, scaled solution, residual / correction, impulses */
	double *V, *Z;   /* Krylov bases, (SP_KRYLOV + 1) and SP_KRYLOV vectors */
	/* entries: row indices (sorted) and values of the upper triangle of S A S */
	int32_t* Ai;
	double* Ax;
	int32_t nnzAlloc;
	cholmod_factor* L;
	cholmod_dense *X, *Y, *E; /* cholmod_solve2 workspace */
	uint32_t factorEpoch;     /* w->poseEpoch of the numeric factor (0 = none) */
} SpSys;

typedef struct LgsSparse {
	cholmod_common cc;
	SpSys sys[2]; /* [0] joint correction (and velocity correction without velocity-only joints), [1] velocity
	               * correction with velocity-only rows */
	int32_t* bodyStart; /* rows touching each dynamic body: bodyRows[bodyStart[b] .. bodyStart[b+1]) */
	int32_t bodyStartCap;
	int32_t* bodyRows;
	int32_t bodyRowsCap;
	int32_t* fill; /* per-body write cursor while building */
	int32_t fillCap;
	double* dv; /* 6 per body: velocity change (Jacobian products) */
	int32_t dvCap;
	ibPose* fdPose; /* 6 per body: predicted poses with one velocity component perturbed */
	int32_t fdPoseCap;
	uint32_t* fdStamp; /* per body: fdEpoch when its fdPose were computed */
	int32_t fdStampCap;
	uint32_t fdEpoch;
} LgsSparse;

/* ---------------------------------------------------------------- lifetime */

static LgsSparse* sparse_of(ibWorld* w, bool create)
{
	ibJointStore* st = w->joints;
	if (!st->sparse && create) {
		LgsSparse* S = ib_alloc(w, sizeof *S);
		if (!S) return NULL;
		memset(S, 0, sizeof *S);
		if (!ib_cholmod_start(&S->cc)) {
			ib_free(w, S, sizeof *S);
			return NULL;
		}
		S->sys[1].velocityOnlyToo = true;
		st->sparse = S;
	}
	return st->sparse;
}

enum { SP_INTS_PER_ROW = 3, SP_DBL_PER_ROW = 42 + 2 * SP_KRYLOV };

static void sys_free_arrays(ibWorld* w, SpSys* y)
{
	size_t m = (size_t)y->mAlloc, z = (size_t)y->nnzAlloc;
	ib_free(w, y->ints, (SP_INTS_PER_ROW * m + 1) * sizeof(int32_t));
	ib_free(w, y->dbl, SP_DBL_PER_ROW * m * sizeof(double));
	ib_free(w, y->Ai, z * sizeof(int32_t));
	ib_free(w, y->Ax, z * sizeof(double));
	y->ints = y->rowOf = y->Ap = y->diag = y->Ai = NULL;
	y->dbl = y->G = y->W = y->Gr = y->scale = y->b = y->y = y->r = y->x = y->V = y->Z = y->Ax = NULL;
	y->mAlloc = y->nnzAlloc = 0;
}

static void sys_free(ibWorld* w, LgsSparse* S, SpSys* y)
{
	sys_free_arrays(w, y);
	if (y->L) cholmod_free_factor(&y->L, &S->cc);
	if (y->X) cholmod_free_dense(&y->X, &S->cc);
	if (y->Y) cholmod_free_dense(&y->Y, &S->cc);
	if (y->E) cholmod_free_dense(&y->E, &S->cc);
	y->valid = false;
	y->builtFor = 0;
	y->factorEpoch = 0;
}

void ib_lgs_sparse_free(ibWorld* w)
{
	ibJointStore* st = w->joints;
	LgsSparse* S = st ? st->sparse : NULL;
	if (!S) return;
	for (int k = 0; k < 2; ++k) sys_free(w, S, &S->sys[k]);
	cholmod_finish(&S->cc);
	ib_free(w, S->bodyStart, (size_t)S->bodyStartCap * sizeof(int32_t));
	ib_free(w, S->bodyRows, (size_t)S->bodyRowsCap * sizeof(int32_t));
	ib_free(w, S->fill, (size_t)S->fillCap * sizeof(int32_t));
	ib_free(w, S->dv, (size_t)S->dvCap * sizeof(double));
	ib_free(w, S->fdPose, (size_t)S->fdPoseCap * sizeof(ibPose));
	ib_free(w, S->fdStamp, (size_t)S->fdStampCap * sizeof(uint32_t));
	ib_free(w, S, sizeof *S);
	st->sparse = NULL;
}

/* ---------------------------------------------------------------- pattern and analysis */

static bool row_included(const ibBasic* c, bool velocityOnlyToo) { return velocityOnlyToo || !c->type->velocityOnly; }

static int32_t dyn_body(const ibWorld* w, int32_t bi) { return ib_is_dynamic(&w->bodies[bi]) ? bi : -1; }

/* Dynamic bodies of row i: side 0 = body 1, side 1 = body 2 (-1 if not dynamic or a repeat). */
static void row_bodies(const ibWorld* w, const ibJointStore* st, const SpSys* y, int32_t i, int32_t out[2])
{
	const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
	out[0] = dyn_body(w, c->b1);
	out[1] = dyn_body(w, c->b2);
	if (out[1] == out[0]) out[1] = -1;
}

/* Rows i <= j coupled to row j (sharing a dynamic body), sorted, written to out (if not NULL);
 * returns their number. The per-body row lists are ascending, so this is a merge of two lists. */
static int32_t column_rows(const ibWorld* w, const ibJointStore* st, const LgsSparse* S, const SpSys* y, int32_t j,
                           int32_t* out)
{
	int32_t bj[2];
	row_bodies(w, st, y, j, bj);
	const int32_t *p = NULL, *pe = NULL, *q = NULL, *qe = NULL;
	if (bj[0] >= 0) {
		p = S->bodyRows + S->bodyStart[bj[0]];
		pe = S->bodyRows + S->bodyStart[bj[0] + 1];
	}
	if (bj[1] >= 0) {
		q = S->bodyRows + S->bodyStart[bj[1]];
		qe = S->bodyRows + S->bodyStart[bj[1] + 1];
	}
	int32_t n = 0;
	bool haveDiag = false;
	for (;;) {
		int32_t a = (p && p < pe && *p <= j) ? *p : INT32_MAX;
		int32_t b = (q && q < qe && *q <= j) ? *q : INT32_MAX;
		int32_t v = a < b ? a : b;
		if (v == INT32_MAX) break;
		if (a == v) ++p;
		if (b == v) ++q;
		if (out) out[n] = v;
		haveDiag |= v == j;
		++n;
	}
	if (!haveDiag) { /* a row without dynamic bodies: identity row */
		if (out) out[n] = j;
		++n;
	}
	return n;
}

/* Per-row arrays for m rows (kept when large enough). */
static bool sys_alloc_rows(ibWorld* w, SpSys* y, int32_t m)
{
	if (m <= y->mAlloc && y->ints) return true;
	size_t old = (size_t)y->mAlloc, mm = (size_t)(m > 0 ? m : 1);
	ib_free(w, y->ints, (SP_INTS_PER_ROW * old + 1) * sizeof(int32_t));
	ib_free(w, y->dbl, SP_DBL_PER_ROW * old * sizeof(double));
	y->ints = ib_alloc(w, (SP_INTS_PER_ROW * mm + 1) * sizeof(int32_t));
	y->dbl = ib_alloc(w, SP_DBL_PER_ROW * mm * sizeof(double));
	if (!y->ints || !y->dbl) {
		ib_free(w, y->ints, (SP_INTS_PER_ROW * mm + 1) * sizeof(int32_t));
		ib_free(w, y->dbl, SP_DBL_PER_ROW * mm * sizeof(double));
		y->ints = NULL;
		y->dbl = NULL;
		y->mAlloc = 0;
		return false;
	}
	y->mAlloc = (int32_t)mm;
	y->rowOf = y->ints;
	y->diag = y->rowOf + mm;
	y->Ap = y->diag + mm;
	y->G = y->dbl;
	y->W = y->G + 12 * mm;
	y->Gr = y->W + 12 * mm;
	y->scale = y->Gr + 12 * mm;
	y->b = y->scale + mm;
	y->y = y->b + mm;
	y->r = y->y + mm;
	y->x = y->r + mm;
	y->V = y->x + mm;
	y->Z = y->V + (SP_KRYLOV + 1) * mm;
	return true;
}

static bool sys_alloc_entries(ibWorld* w, SpSys* y, int32_t nnz)
{
	if (nnz <= y->nnzAlloc && y->Ai) return true;
	size_t old = (size_t)y->nnzAlloc, z = (size_t)(nnz > 0 ? nnz : 1);
	ib_free(w, y->Ai, old * sizeof(int32_t));
	ib_free(w, y->Ax, old * sizeof(double));
	y->nnzAlloc = (int32_t)z;
	y->Ai = ib_alloc(w, z * sizeof(int32_t));
	y->Ax = ib_alloc(w, z * sizeof(double));
	if (y->Ai && y->Ax) return true;
	ib_free(w, y->Ai, z * sizeof(int32_t));
	ib_free(w, y->Ax, z * sizeof(double));
	y->Ai = NULL;
	y->Ax = NULL;
	y->nnzAlloc = 0;
	return false;
}

/* Header of the matrix for CHOLMOD (our arrays; stype 1: upper triangle). */
static cholmod_sparse sys_matrix(SpSys* y) { return ib_cholmod_upper(y->m, y->nnz, y->Ap, y->Ai, y->Ax); }

/* Rows, pattern and symbolic factor for the current layout (basics prepared: rows known). */
static bool sys_build(ibWorld* w, LgsSparse* S, SpSys* y)
{
	ibJointStore* st = w->joints;
	if (y->L) cholmod_free_factor(&y->L, &S->cc);
	y->factorEpoch = 0;
	int32_t m = 0;
	for (int32_t k = 0; k < st->basicCount; ++k)
		if (row_included(&st->basics[k], y->velocityOnlyToo)) m += st->basics[k].rows;
	int32_t nb = w->bodyHigh;
	if (!ib_grow(w, (void**)&S->bodyStart, &S->bodyStartCap, nb + 2, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&S->fill, &S->fillCap, nb + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&S->bodyRows, &S->bodyRowsCap, 2 * m + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&S->dv, &S->dvCap, 6 * nb + 6, sizeof(double)) ||
	    !ib_grow(w, (void**)&S->fdPose, &S->fdPoseCap, 6 * nb + 6, sizeof(ibPose)) ||
	    !ib_grow(w, (void**)&S->fdStamp, &S->fdStampCap, nb + 1, sizeof(uint32_t)))
		return false;
	if (!sys_alloc_rows(w, y, m)) return false;
	y->m = m;
	int32_t i = 0;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (!row_included(c, y->velocityOnlyToo)) continue;
		for (int r = 0; r < c->rows; ++r) y->rowOf[i++] = k * 4 + r;
	}
	/* rows per dynamic body (counting sort keeps them ascending) */
	memset(S->bodyStart, 0, (size_t)(nb + 2) * sizeof(int32_t));
	for (i = 0; i < m; ++i) {
		int32_t bb[2];
		row_bodies(w, st, y, i, bb);
		for (int s = 0; s < 2; ++s)
			if (bb[s] >= 0) S->bodyStart[bb[s] + 1]++;
	}
	for (int32_t b = 0; b < nb; ++b) S->bodyStart[b + 1] += S->bodyStart[b];
	memcpy(S->fill, S->bodyStart, (size_t)nb * sizeof(int32_t));
	for (i = 0; i < m; ++i) {
		int32_t bb[2];
		row_bodies(w, st, y, i, bb);
		for (int s = 0; s < 2; ++s)
			if (bb[s] >= 0) S->bodyRows[S->fill[bb[s]]++] = i;
	}
	/* count, allocate, fill the upper triangle column by column */
	int64_t nnz = 0;
	for (int32_t j = 0; j < m; ++j) nnz += column_rows(w, st, S, y, j, NULL);
	if (nnz > INT32_MAX / 2) return false;
	if (!sys_alloc_entries(w, y, (int32_t)nnz)) return false;
	y->nnz = (int32_t)nnz;
	int32_t pos = 0;
	for (int32_t j = 0; j < m; ++j) {
		y->Ap[j] = pos;
		int32_t n = column_rows(w, st, S, y, j, y->Ai + pos);
		y->diag[j] = pos + n - 1; /* sorted, all rows <= j: the diagonal is last */
		pos += n;
	}
	y->Ap[m] = pos;
	if (m == 0) return true;
	for (int32_t z = 0; z < pos; ++z) y->Ax[z] = 0.0;
	for (int32_t j = 0; j < m; ++j) y->Ax[y->diag[j]] = 1.0;
	cholmod_sparse A = sys_matrix(y);
	y->L = cholmod_analyze(&A, &S->cc);
	return y->L != NULL && S->cc.status >= CHOLMOD_OK;
}

/* ---------------------------------------------------------------- assembly and factorisation */

/* Jacobian of row i for both bodies (G) and Mass^-1 G^T (W), at the prepared time instant. */
static void row_jacobian(const ibWorld* w, const ibJointStore* st, SpSys* y, int32_t i)
{
	const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
	ibVec3 P = c->P[y->rowOf[i] & 3];
	double* G = y->G + 12 * (size_t)i;
	double* W = y->W + 12 * (size_t)i;
	int32_t bodies[2] = {c->b1, c->b2};
	for (int s = 0; s < 2; ++s) {
		const ibBody* b = &w->bodies[bodies[s]];
		double sg = s == 0 ? 1.0 : -1.0;
		double* g = G + 6 * s;
		double* wv = W + 6 * s;
		if (!ib_is_dynamic(b)) {
			for (int q = 0; q < 6; ++q) g[q] = wv[q] = 0.0;
			continue;
		}
		ibVec3 lin = IB_VEC3_ZERO, ang = P;
		if (!c->type->rotational) {
			lin = P;
			ang = ibCross(ibSub(s == 0 ? c->a : c->b, b->st.s), P);
		}
		lin = ibScale(sg, lin);
		ang = ibScale(sg, ang);
		ibVec3 wl = ibScale(b->invMass, lin), wa = ibMat3_MulV(b->invInertiaW, ang);
		g[0] = lin.x, g[1] = lin.y, g[2] = lin.z, g[3] = ang.x, g[4] = ang.y, g[5] = ang.z;
		wv[0] = wl.x, wv[1] = wl.y, wv[2] = wl.z, wv[3] = wa.x, wv[4] = wa.y, wv[5] = wa.z;
	}
}

static double dot6(const double* a, const double* b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* A_ij = sum over the dynamic bodies rows i and j share of G_i,body . (Mass^-1 G_j,body^T). */
static double entry(const ibWorld* w, const ibJointStore* st, const SpSys* y, int32_t i, int32_t j)
{
	int32_t bi[2], bj[2];
	row_bodies(w, st, y, i, bi);
	row_bodies(w, st, y, j, bj);
	const ibBasic* ci = &st->basics[y->rowOf[i] >> 2];
	const ibBasic* cj = &st->basics[y->rowOf[j] >> 2];
	int32_t si[2] = {ci->b1, ci->b2}, sj[2] = {cj->b1, cj->b2};
	double a = 0.0;
	for (int p = 0; p < 2; ++p) {
		if (bi[p] < 0) continue;
		for (int q = 0; q < 2; ++q)
			if (bj[q] >= 0 && si[p] == sj[q]) a += dot6(y->G + 12 * (size_t)i + 6 * p, y->W + 12 * (size_t)j + 6 * q);
	}
	return a;
}

static bool sys_factor(ibWorld* w, LgsSparse* S, SpSys* y)
{
	ibJointStore* st = w->joints;
	for (int32_t i = 0; i < y->m; ++i) row_jacobian(w, st, y, i);
	for (int32_t i = 0; i < y->m; ++i) {
		double d = entry(w, st, y, i, i);
		y->scale[i] = d > 0.0 ? 1.0 / sqrt(d) : 0.0;
	}
	for (int32_t j = 0; j < y->m; ++j) {
		for (int32_t z = y->Ap[j]; z < y->diag[j]; ++z) {
			int32_t i = y->Ai[z];
			y->Ax[z] = y->scale[i] * y->scale[j] * entry(w, st, y, i, j);
		}
		y->Ax[y->diag[j]] = 1.0; /* unit diagonal (also for rows without a dynamic body) */
	}
	cholmod_sparse A = sys_matrix(y);
	double beta[2] = {SP_EPS, 0.0};
	int ok = cholmod_factorize_p(&A, beta, NULL, 0, y->L, &S->cc);
	return ok && S->cc.status >= CHOLMOD_OK && S->cc.status != CHOLMOD_NOT_POSDEF; /* other warnings are harmless */
}

/* Make y usable at the current time instant; false if it cannot be (out of memory, CHOLMOD error). */
static bool sys_ready(ibWorld* w, LgsSparse* S, SpSys* y)
{
	ibJointStore* st = w->joints;
	if (y->builtFor != st->layoutVersion) {
		y->valid = sys_build(w, S, y);
		y->builtFor = st->layoutVersion;
		y->factorEpoch = 0;
	}
	if (!y->valid) return false;
	if (y->m == 0 || y->factorEpoch == w->poseEpoch) return true;
	if (!sys_factor(w, S, y)) {
		y->factorEpoch = 0;
		return false;
	}
	y->factorEpoch = w->poseEpoch;
	return true;
}

/* ---------------------------------------------------------------- solve and apply */

/* r = b - (S A S) v with the stored upper triangle (unregularised); returns |r|. */
static double residual(const SpSys* y, const double* b, const double* v, double* r)
{
	memcpy(r, b, (size_t)y->m * sizeof(double));
	for (int32_t j = 0; j < y->m; ++j) {
		double vj = v[j], s = 0.0;
		for (int32_t z = y->Ap[j]; z < y->diag[j]; ++z) {
			int32_t i = y->Ai[z];
			r[i] -= y->Ax[z] * vj;
			s += y->Ax[z] * v[i];
		}
		r[j] -= s + vj; /* diagonal 1 */
	}
	double n = 0.0;
	for (int32_t i = 0; i < y->m; ++i) n += r[i] * r[i];
	return sqrt(n);
}

static bool factor_solve(LgsSparse* S, SpSys* y, double* rhs, double* out)
{
	cholmod_dense B = ib_cholmod_vector(rhs, y->m);
	if (!cholmod_solve2(CHOLMOD_A, y->L, &B, NULL, &y->X, NULL, &y->Y, &y->E, &S->cc)) return false;
	memcpy(out, y->X->x, (size_t)y->m * sizeof(double));
	return true;
}

/* Impulses x for the rows' right-hand sides b (see the header: scaled, regularised, refined). */
static bool sys_solve(LgsSparse* S, SpSys* y)
{
	int32_t m = y->m;
	double nb = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		y->b[i] *= y->scale[i];
		nb += y->b[i] * y->b[i];
	}
	if (!(nb > 0.0)) {
		memset(y->x, 0, (size_t)m * sizeof(double));
		return isfinite(nb) || nb == 0.0;
	}
	nb = sqrt(nb);
	if (!factor_solve(S, y, y->b, y->y)) return false;
	double prev = INFINITY;
	for (int it = 0; it < SP_MAX_REFINE; ++it) {
		double nr = residual(y, y->b, y->y, y->r);
		if (!(nr > 1e-15 * nb) || nr > 0.5 * prev) break;
		prev = nr;
		if (!factor_solve(S, y, y->r, y->r)) return false;
		for (int32_t i = 0; i < m; ++i) y->y[i] += y->r[i];
	}
	for (int32_t i = 0; i < m; ++i) y->x[i] = y->scale[i] * y->y[i];
	return true;
}

/* Velocity change f Mass^-1 G^T x on the bodies. */
static void apply(ibWorld* w, const ibJointStore* st, const SpSys* y, double f)
{
	for (int32_t i = 0; i < y->m; ++i) {
		double x = f * y->x[i];
		if (x == 0.0) continue;
		const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		int32_t bodies[2] = {c->b1, c->b2};
		for (int s = 0; s < 2; ++s) {
			ibBody* b = &w->bodies[bodies[s]];
			if (!ib_is_dynamic(b)) continue;
			const double* wv = y->W + 12 * (size_t)i + 6 * s;
			b->st.v = ibAdd(b->st.v, ibScale(x, ibV3(wv[0], wv[1], wv[2])));
			b->st.w = ibAdd(b->st.w, ibScale(x, ibV3(wv[3], wv[4], wv[5])));
			b->velVersion++;
		}
	}
}

/* ---------------------------------------------------------------- Newton-Krylov for the joint correction */

/* Size of the velocity perturbation of component q of body b for the finite differences. */
static double fd_step(const ibBody* b, int q) { return 1e-7 * (1.0 + (q < 3 ? ibLength(b->st.v) : ibLength(b->st.w))); }

/* Predicted poses of body bi with each of its 6 velocity components perturbed (once per Newton step). */
static const ibPose* fd_poses(ibWorld* w, LgsSparse* S, int32_t bi, double h)
{
	ibPose* p = S->fdPose + 6 * (size_t)bi;
	if (S->fdStamp[bi] == S->fdEpoch) return p;
	const ibBody* b = &w->bodies[bi];
	for (int q = 0; q < 6; ++q) {
		ibBody tmp = *b;
		ibVec3 e = ibV3(q % 3 == 0, q % 3 == 1, q % 3 == 2);
		if (q < 3)
			tmp.st.v = ibMulAdd(tmp.st.v, fd_step(b, q), e);
		else
			tmp.st.w = ibMulAdd(tmp.st.w, fd_step(b, q), e);
		ib_predict_pose(w, &tmp, h, &p[q].s, &p[q].q);
		p[q].R = ibMat3_FromQuat(p[q].q);
	}
	S->fdStamp[bi] = S->fdEpoch;
	return p;
}

/* Response rows Gr of the predicted errors (decrease of P d(t0+h)/h per velocity change of a body).
 * fd = false: the Jacobian with the lever arms of the predicted poses (rotational rows as at t0);
 * fd = true: exact, by forward differences through the integrator (6 perturbed predictions per
 * body) — needed when bodies turn by large angles per step and the lever-arm model converges slowly. */
static void response_rows(ibWorld* w, ibJointStore* st, LgsSparse* S, SpSys* y, double h, bool fd)
{
	if (fd && ++S->fdEpoch == 0) { /* stamps wrapped: invalidate all */
		memset(S->fdStamp, 0, (size_t)S->fdStampCap * sizeof(uint32_t));
		S->fdEpoch = 1;
	}
	for (int32_t i = 0; i < y->m; ++i) {
		ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		ibVec3 P = c->P[y->rowOf[i] & 3];
		double* g = y->Gr + 12 * (size_t)i;
		memcpy(g, y->G + 12 * (size_t)i, 12 * sizeof(double));
		bool first = (y->rowOf[i] & 3) == 0; /* rows of a basic are consecutive, from 0 */
		int32_t bodies[2] = {c->b1, c->b2};
		if (fd) {
			if (first) {
				ibPose p[2] = {*ib_solver_predicted(w, st, c->b1, h), *ib_solver_predicted(w, st, c->b2, h)};
				ibVec3 d0 = c->type->error(c, &p[0], &p[1]);
				for (int s = 0; s < 2; ++s) {
					const ibBody* b = &w->bodies[bodies[s]];
					const ibPose* fp = ib_is_dynamic(b) ? fd_poses(w, S, bodies[s], h) : NULL;
					for (int q = 0; q < 6; ++q) {
						ibVec3 dd = IB_VEC3_ZERO;
						if (fp) {
							ibPose pp[2] = {p[0], p[1]};
							pp[s] = fp[q];
							dd = ibScale(1.0 / (fd_step(b, q) * h), ibSub(c->type->error(c, &pp[0], &pp[1]), d0));
						}
						c->dEdu[s][0][q] = dd.x;
						c->dEdu[s][1][q] = dd.y;
						c->dEdu[s][2][q] = dd.z;
					}
				}
			}
			for (int s = 0; s < 2; ++s)
				for (int q = 0; q < 6; ++q)
					g[6 * s + q] = -(P.x * c->dEdu[s][0][q] + P.y * c->dEdu[s][1][q] + P.z * c->dEdu[s][2][q]);
			continue;
		}
		if (c->type->rotational) continue;
		if (first) { /* the predicted joint points */
			const ibPose* p1 = ib_solver_predicted(w, st, c->b1, h);
			const ibPose* p2 = ib_solver_predicted(w, st, c->b2, h);
			ibBasic tmp = *c;
			c->type->prepare(&tmp, p1, p2);
			c->raResp = ibSub(tmp.a, p1->s);
			c->rbResp = ibSub(tmp.b, p2->s);
		}
		for (int s = 0; s < 2; ++s) {
			if (!ib_is_dynamic(&w->bodies[bodies[s]])) continue;
			ibVec3 m = ibScale(s == 0 ? 1.0 : -1.0, ibCross(s == 0 ? c->raResp : c->rbResp, P));
			g[6 * s + 3] = m.x;
			g[6 * s + 4] = m.y;
			g[6 * s + 5] = m.z;
		}
	}
}

/* out = (J + eps D) v, J = Gr Mass^-1 G^T: how impulses v change the rows' predicted errors (per h), plus the
 * Levenberg-Marquardt damping eps D, D = diag(A) (see the header: keeps the near-null directions of
 * nearly redundant rows out of the Newton step). */
static void jac_mul(const ibWorld* w, const ibJointStore* st, LgsSparse* S, const SpSys* y, const double* v, double* out)
{
	for (int32_t i = 0; i < y->m; ++i) {
		const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		int32_t bodies[2] = {c->b1, c->b2};
		for (int s = 0; s < 2; ++s) {
			if (!ib_is_dynamic(&w->bodies[bodies[s]])) continue;
			double* d = S->dv + 6 * (size_t)bodies[s];
			const double* wv = y->W + 12 * (size_t)i + 6 * s;
			for (int q = 0; q < 6; ++q) d[q] += wv[q] * v[i];
		}
	}
	for (int32_t i = 0; i < y->m; ++i) {
		const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		int32_t bodies[2] = {c->b1, c->b2};
		double a = 0.0;
		for (int s = 0; s < 2; ++s)
			if (ib_is_dynamic(&w->bodies[bodies[s]])) a += dot6(y->Gr + 12 * (size_t)i + 6 * s, S->dv + 6 * (size_t)bodies[s]);
		out[i] = a + (y->scale[i] > 0.0 ? SP_EPS * v[i] / (y->scale[i] * y->scale[i]) : SP_EPS * v[i]);
	}
	for (int32_t i = 0; i < y->m; ++i) { /* clear the touched bodies */
		const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		memset(S->dv + 6 * (size_t)c->b1, 0, 6 * sizeof(double));
		memset(S->dv + 6 * (size_t)c->b2, 0, 6 * sizeof(double));
	}
}

/* out = S (S A S + eps I)^-1 S v: one factor solve, the preconditioner of the Krylov iteration. */
static bool precondition(LgsSparse* S, SpSys* y, const double* v, double* out)
{
	for (int32_t i = 0; i < y->m; ++i) y->r[i] = y->scale[i] * v[i];
	if (!factor_solve(S, y, y->r, out)) return false;
	for (int32_t i = 0; i < y->m; ++i) out[i] *= y->scale[i];
	return true;
}

/* Impulses y->x with (J + eps D) x = y->b by right-preconditioned GMRES (flexible form, at most SP_KRYLOV
 * vectors, to the relative residual SP_KRYLOV_TOL). A^-1 J = I + O(rotation per step): a few vectors. */
static bool krylov_solve(const ibWorld* w, const ibJointStore* st, LgsSparse* S, SpSys* y)
{
	enum { K = SP_KRYLOV };
	int32_t m = y->m;
	double H[K + 1][K], cs[K], sn[K], g[K + 1], coef[K];
	double beta = 0.0;
	for (int32_t i = 0; i < m; ++i) beta += y->b[i] * y->b[i];
	beta = sqrt(beta);
	memset(y->x, 0, (size_t)m * sizeof(double));
	if (!(beta > 0.0)) return beta == 0.0;
	for (int32_t i = 0; i < m; ++i) y->V[i] = y->b[i] / beta;
	memset(g, 0, sizeof g);
	g[0] = beta;
	int n = 0;
	for (int j = 0; j < K; ++j) {
		double* vj = y->V + (size_t)j * (size_t)m;
		double* zj = y->Z + (size_t)j * (size_t)m;
		double* vn = y->V + (size_t)(j + 1) * (size_t)m;
		if (!precondition(S, y, vj, zj)) return false;
		jac_mul(w, st, S, y, zj, vn);
		for (int i = 0; i <= j; ++i) { /* modified Gram-Schmidt */
			const double* vi = y->V + (size_t)i * (size_t)m;
			double hij = 0.0;
			for (int32_t q = 0; q < m; ++q) hij += vn[q] * vi[q];
			for (int32_t q = 0; q < m; ++q) vn[q] -= hij * vi[q];
			H[i][j] = hij;
		}
		double hn = 0.0;
		for (int32_t q = 0; q < m; ++q) hn += vn[q] * vn[q];
		hn = sqrt(hn);
		H[j + 1][j] = hn;
		if (hn > 0.0)
			for (int32_t q = 0; q < m; ++q) vn[q] /= hn;
		for (int i = 0; i < j; ++i) { /* previous rotations */
			double a = H[i][j], b = H[i + 1][j];
			H[i][j] = cs[i] * a + sn[i] * b;
			H[i + 1][j] = -sn[i] * a + cs[i] * b;
		}
		double a = H[j][j], b = H[j + 1][j], r = hypot(a, b);
		cs[j] = r > 0.0 ? a / r : 1.0;
		sn[j] = r > 0.0 ? b / r : 0.0;
		H[j][j] = r;
		H[j + 1][j] = 0.0;
		g[j + 1] = -sn[j] * g[j];
		g[j] = cs[j] * g[j];
		n = j + 1;
		if (!(fabs(g[j + 1]) > SP_KRYLOV_TOL * beta) || !(hn > 1e-14 * beta) || !(r > 0.0)) break;
	}
	for (int i = n - 1; i >= 0; --i) { /* H coef = g, upper triangular */
		double t = g[i];
		for (int k = i + 1; k < n; ++k) t -= H[i][k] * coef[k];
		coef[i] = H[i][i] != 0.0 ? t / H[i][i] : 0.0;
	}
	for (int i = 0; i < n; ++i) {
		const double* zi = y->Z + (size_t)i * (size_t)m;
		for (int32_t q = 0; q < m; ++q) y->x[q] += coef[i] * zi[q];
	}
	return true;
}

/* Rows' right-hand sides from the per-basic world vectors st->rhs. */
static void set_rhs(const ibJointStore* st, SpSys* y)
{
	for (int32_t i = 0; i < y->m; ++i) {
		const ibBasic* c = &st->basics[y->rowOf[i] >> 2];
		y->b[i] = ibDot(c->P[y->rowOf[i] & 3], st->rhs[y->rowOf[i] >> 2]);
	}
}


/* ---------------------------------------------------------------- the two corrections */

ibResult ib_lgs_sparse_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		st->basics[k].iterations = 0;
		ib_solver_prepare(w, &st->basics[k]);
	}
	LgsSparse* S = sparse_of(w, true);
	SpSys* y = S ? &S->sys[0] : NULL;
	if (!y || !sys_ready(w, S, y)) return ib_iterative_position_correction(w, h);
	if (y->m == 0) return IB_OK;
	int it = 0, stalls = 0;
	bool fd = false;
	double err = ib_solver_predicted_errors(w, st, h);
	while (err > 1.0 && it < s->maxPositionIterations) {
		set_rhs(st, y);
		response_rows(w, st, S, y, h, fd);
		if (!krylov_solve(w, st, S, y)) break;
		apply(w, st, y, 1.0);
		++it;
		for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].iterations++;
		double prev = err;
		err = ib_solver_predicted_errors(w, st, h);
		/* the Newton step overshot (poor linearisation): back off along the same direction */
		double f = 1.0;
		for (int half = 0; half < 8 && !(err <= prev); ++half) {
			f *= 0.5;
			apply(w, st, y, -f);
			err = ib_solver_predicted_errors(w, st, h);
		}
		if (!(err <= 0.05 * prev)) fd = true; /* slow: the exact response from now on */
		if (!(err <= 0.9 * prev) && ++stalls >= 3) break;
	}
	w->stats.positionIterations += it;
	if (err > 1.0 && it < s->maxPositionIterations && !w->canSubdivide) { /* stalled: Alg. 3.1 from here */
		ibSolverSettings saved = w->solver;
		w->solver.maxPositionIterations = s->maxPositionIterations - it;
		w->solver.warmStart = false;
		ibResult r = ib_iterative_position_correction(w, h);
		w->solver = saved;
		return r;
	}
	if (!(err <= 1.0)) w->stats.converged = false;
	return IB_OK;
}

ibResult ib_lgs_sparse_velocity_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) ib_solver_prepare(w, &st->basics[k]);
	LgsSparse* S = sparse_of(w, true);
	SpSys* y = S ? &S->sys[st->hasVelocityOnly ? 1 : 0] : NULL;
	if (!y || !sys_ready(w, S, y)) return ib_iterative_velocity_correction(w, h, true);
	if (y->m == 0) return IB_OK;
	int cap = s->maxVelocityIterations < SP_MAX_VEL_SOLVES ? s->maxVelocityIterations : SP_MAX_VEL_SOLVES;
	int solves = 0;
	bool ok = false;
	for (;;) {
		ok = true;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			const ibBasic* c = &st->basics[k];
			st->rhs[k] = ib_solver_velocity_error(w, c);
			if (row_included(c, y->velocityOnlyToo) && !(ib_solver_projected_norm(c, st->rhs[k]) <= s->velocityTolerance))
				ok = false;
		}
		if ((ok && solves > 0) || solves >= cap) break; /* always one exact solve */
		set_rhs(st, y);
		if (!sys_solve(S, y)) break;
		apply(w, st, y, 1.0);
		++solves;
		for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].iterations++;
	}
	w->stats.velocityIterations += solves;
	if (!ok) w->stats.converged = false;
	return IB_OK;
}
