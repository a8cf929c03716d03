/* [IMPL] Block solve of a sticking face contact in the velocity correction at t0+h (beyond the thesis).
 *
 * The points of one manifold (a face of a box on a face of another: 4 coplanar points) are
 * redundant constraints: 4 normal rows and 8 friction rows for the 6 degrees of freedom of the
 * relative motion. Gauss-Seidel sweeps over the single points converge slowly on them (each point
 * undoes part of its neighbours' work), and the impulses they end with carry a self-equilibrated
 * part (opposite friction at two corners, a checkerboard of normal loads) that the warm start
 * carries from step to step until points leave their friction cones (pyramid20 fell apart that way).
 *
 * When every point of the group sticks, the group is solved as one 6-dof block: the wrench (F, M)
 * about the points' centre c that removes the whole relative twist (velocity at c, angular
 * velocity) is one 6x6 solve, A x = -twist. The group's total wrench is then distributed over the
 * points with the least-squares loads: normal N_i = F_n / m + beta . r_i (r_i: tangential offset
 * of point i from c), friction t_i = N_i (F_t / W + k n x r'_i) about the loads' centre (the
 * minimum of sum |t_i|^2 / N_i). The block is used only if the result is admissible for every
 * point (N_i >= 0, |t_i| <= mu_s N_i); otherwise the points are iterated one by one as before.
 * The distribution removes the self-equilibrated part at every block solve. */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"

/* [r]x J: its column j is r x (column j of J) */
static void skew_times(ibVec3 r, const ibMat3* J, double out[3][3])
{
	for (int j = 0; j < 3; ++j) {
		ibVec3 c = ibCross(r, ibV3(J->m[0][j], J->m[1][j], J->m[2][j]));
		out[0][j] = c.x, out[1][j] = c.y, out[2][j] = c.z;
	}
}

/* The block's response A (change of the relative velocity at c and of the relative angular velocity per unit
 * force and moment at c, + on body 1), in closed form: A_uu = K(c) of both bodies (ib_contact_response),
 * A_uw = -[r1]x J1 - [r2]x J2 (J: world inverse inertia, zero for a body that is not dynamic),
 * A_wu = A_uw^T, A_ww = J1 + J2. */
static void block_response(const ibWorld* w, const ibContactRow* g, ibVec3 r1, ibVec3 r2, double A[6][6])
{
	const ibBody* b[2] = {&w->bodies[g->b1], &w->bodies[g->b2]};
	const ibVec3 r[2] = {r1, r2};
	ibMat3 K = ib_contact_response(w, g->b1, ibAdd(b[0]->st.s, r1), g->b2, ibAdd(b[1]->st.s, r2));
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 6; ++j) A[i][j] = A[3 + i][j] = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) A[i][j] = K.m[i][j];
	for (int q = 0; q < 2; ++q) {
		if (!ib_is_dynamic(b[q])) continue;
		const ibMat3* J = &b[q]->invInertiaW;
		double S[3][3];
		skew_times(r[q], J, S);
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j) {
				A[i][3 + j] -= S[i][j];
				A[3 + j][i] -= S[i][j];
				A[3 + i][3 + j] += J->m[i][j];
			}
	}
	for (int i = 0; i < 6; ++i) /* exactly symmetric */
		for (int j = 0; j < i; ++j) A[i][j] = A[j][i] = 0.5 * (A[i][j] + A[j][i]);
}

/* [IMPL] A group's factor entry: L (36), then what A was formed from: r1, r2 (3 each), the world inverse inertias
 * J1, J2 (9 each, zero for a body that is not dynamic), the bodies b1, b2 and their inverse masses (zero likewise).
 * A face resting in a pile has the same block from step to step (pyramid20: forming and factoring the 400 faces'
 * blocks was ~25 % of the velocity loop's confirming sweep), so last step's factor serves while the bodies and
 * their masses are the same and r1, r2, J1, J2 are within IB_PATCH_REUSE of it (relative): the block solve is then
 * exact to about that, and the loop measures its errors anew as always. The entry keeps the values it was formed
 * with, so that a drift cannot add up over the steps. */
enum { IB_PATCH_ENTRY = 64 };
#define IB_PATCH_REUSE 1e-7

/* two buffers of cap entries and flags, into *L, *ok (freed first with *capacity) */
static bool patch_grow(ibWorld* w, double** L, uint8_t** ok, int32_t* capacity, int32_t need)
{
	if (need <= *capacity) return true;
	int32_t cap = need + need / 2 + 16;
	double* nl = ib_alloc(w, (size_t)cap * IB_PATCH_ENTRY * sizeof(double));
	uint8_t* nok = ib_alloc(w, (size_t)cap);
	if (!nl || !nok) {
		ib_free(w, nl, (size_t)cap * IB_PATCH_ENTRY * sizeof(double));
		ib_free(w, nok, (size_t)cap);
		return false;
	}
	ib_free(w, *L, (size_t)*capacity * IB_PATCH_ENTRY * sizeof(double));
	ib_free(w, *ok, (size_t)*capacity);
	*L = nl;
	*ok = nok;
	*capacity = cap;
	return true;
}

bool ib_contact_patch_begin(ibWorld* w, ibContactStore* cs)
{
	if (!patch_grow(w, &cs->patchL, &cs->patchOk, &cs->patchCapacity, cs->count)) return false;
	if (cs->count > 0) memset(cs->patchOk, 0, (size_t)cs->count);
	return true;
}

bool ib_contact_patch_keep_begin(ibWorld* w, ibContactStore* cs, int32_t n)
{
	if (!patch_grow(w, &cs->patchPrev, &cs->patchPrevOk, &cs->patchPrevCapacity, n)) return false;
	if (n > 0) memset(cs->patchPrevOk, 0, (size_t)n);
	return true;
}

void ib_contact_patch_keep(ibContactStore* cs, int32_t k, int32_t j)
{
	if (j >= cs->patchPrevCapacity || k >= cs->patchCapacity || !cs->patchOk || cs->patchOk[k] != 1) return;
	memcpy(&cs->patchPrev[(size_t)j * IB_PATCH_ENTRY], &cs->patchL[(size_t)k * IB_PATCH_ENTRY], IB_PATCH_ENTRY * sizeof(double));
	cs->patchPrevOk[j] = 1;
}

void ib_contact_patch_destroy(ibWorld* w, ibContactStore* cs)
{
	ib_free(w, cs->patchL, (size_t)cs->patchCapacity * IB_PATCH_ENTRY * sizeof(double));
	ib_free(w, cs->patchOk, (size_t)cs->patchCapacity);
	ib_free(w, cs->patchPrev, (size_t)cs->patchPrevCapacity * IB_PATCH_ENTRY * sizeof(double));
	ib_free(w, cs->patchPrevOk, (size_t)cs->patchPrevCapacity);
	cs->patchL = cs->patchPrev = NULL;
	cs->patchOk = cs->patchPrevOk = NULL;
	cs->patchCapacity = cs->patchPrevCapacity = 0;
}

/* what the block of group g is formed from, into e[36 ..] (the layout of IB_PATCH_ENTRY) */
static void patch_inputs(const ibWorld* w, const ibContactRow* g, ibVec3 r1, ibVec3 r2, double* e)
{
	const ibBody* b[2] = {&w->bodies[g->b1], &w->bodies[g->b2]};
	e[36] = r1.x, e[37] = r1.y, e[38] = r1.z, e[39] = r2.x, e[40] = r2.y, e[41] = r2.z;
	for (int q = 0; q < 2; ++q)
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j) e[42 + 9 * q + 3 * i + j] = ib_is_dynamic(b[q]) ? b[q]->invInertiaW.m[i][j] : 0.0;
	e[60] = g->b1, e[61] = g->b2;
	e[62] = ib_is_dynamic(b[0]) ? b[0]->invMass : 0.0, e[63] = ib_is_dynamic(b[1]) ? b[1]->invMass : 0.0;
}

/* |x - y| <= IB_PATCH_REUSE |y| over the n entries of two vectors (and exact where both are zero) */
static bool near_rel(const double* x, const double* y, int n)
{
	double d = 0.0, s = 0.0;
	for (int i = 0; i < n; ++i) d += (x[i] - y[i]) * (x[i] - y[i]), s += y[i] * y[i];
	return d <= IB_PATCH_REUSE * IB_PATCH_REUSE * s;
}

/* last step's factor of the group's first point into now (which holds the block's inputs, patch_inputs), where it
 * was formed from (nearly) the same block */
static bool patch_reuse(const ibContactStore* cs, const ibContactRow* g, double* now)
{
	const int32_t j = g->warm;
	if (j < 0 || j >= cs->prevCount || j >= cs->patchPrevCapacity || !cs->patchPrevOk || cs->patchPrevOk[j] != 1) return false;
	const double* e = &cs->patchPrev[(size_t)j * IB_PATCH_ENTRY];
	if (e[60] != now[60] || e[61] != now[61] || e[62] != now[62] || e[63] != now[63]) return false;
	if (!near_rel(now + 36, e + 36, 3) || !near_rel(now + 39, e + 39, 3) || !near_rel(now + 42, e + 42, 9) || !near_rel(now + 51, e + 51, 9))
		return false;
	memcpy(now, e, IB_PATCH_ENTRY * sizeof(double));
	return true;
}

/* Cholesky factor L (row-major 6x6, lower part; the diagonal held as its reciprocals, so that the factor and
 * the solves multiply instead of divide; the strictly upper part is neither written nor read) of the
 * symmetric positive definite A; false if not positive definite */
static bool factor6(double A[6][6], double* L)
{
	for (int i = 0; i < 6; ++i) {
		for (int j = 0; j <= i; ++j) {
			double s = A[i][j];
			for (int k = 0; k < j; ++k) s -= L[6 * i + k] * L[6 * j + k];
			if (i == j) {
				if (!(s > 1e-14 * (fabs(A[i][i]) + 1e-300))) return false;
				L[6 * i + i] = 1.0 / sqrt(s);
			} else {
				L[6 * i + j] = s * L[6 * j + j];
			}
		}
	}
	return true;
}

static void solve6(const double* L, const double b[6], double x[6])
{
	double y[6];
	for (int i = 0; i < 6; ++i) {
		double s = b[i];
		for (int k = 0; k < i; ++k) s -= L[6 * i + k] * y[k];
		y[i] = s * L[6 * i + i];
	}
	for (int i = 5; i >= 0; --i) {
		double s = y[i];
		for (int k = i + 1; k < 6; ++k) s -= L[6 * k + i] * x[k];
		x[i] = s * L[6 * i + i];
	}
}

/* The least-squares loads N (same F_n, same moment rho = sum N_i r_i) have a negative entry: if the
 * centre of pressure rho / F_n lies in a triangle of the points, its barycentric loads are >= 0 and
 * give the same wrench; N moves towards them just as far as needed (a convex combination keeps the
 * wrench). False if no triangle contains it. */
static bool nonneg_loads(const ibVec3* r, int m, ibVec3 t1, ibVec3 t2, double Fn, ibVec3 rho, double* N)
{
	if (!(Fn > 0.0)) return false;
	double qx = ibDot(rho, t1) / Fn, qy = ibDot(rho, t2) / Fn, best = -1.0, B[IB_CONTACT_PATCH_MAX] = {0};
	for (int i = 0; i < m; ++i)
		for (int j = i + 1; j < m; ++j)
			for (int k = j + 1; k < m; ++k) {
				double ax = ibDot(r[i], t1), ay = ibDot(r[i], t2), bx = ibDot(r[j], t1) - ax, by = ibDot(r[j], t2) - ay;
				double cx = ibDot(r[k], t1) - ax, cy = ibDot(r[k], t2) - ay, d = bx * cy - by * cx;
				if (fabs(d) < 1e-12 * (bx * bx + by * by + cx * cx + cy * cy)) continue;
				double px = qx - ax, py = qy - ay, l1 = (px * cy - py * cx) / d, l2 = (bx * py - by * px) / d, l0 = 1.0 - l1 - l2;
				double mn = ib_fmin(l0, ib_fmin(l1, l2));
				if (mn > best) {
					best = mn;
					for (int q = 0; q < m; ++q) B[q] = 0.0;
					B[i] = l0 * Fn, B[j] = l1 * Fn, B[k] = l2 * Fn;
				}
			}
	if (best < 0.0) return false;
	double t = 1.0; /* N = B + t (N_ls - B), the largest t in [0, 1] with N >= 0 */
	for (int i = 0; i < m; ++i)
		if (N[i] < 0.0) t = ib_fmin(t, B[i] / (B[i] - N[i]));
	for (int i = 0; i < m; ++i) N[i] = ib_fmax(0.0, B[i] + t * (N[i] - B[i]));
	return true;
}

bool ib_contact_patch_geometry(const ibContactRow* const* g, int m, double minSpread, ibPatchGeom* pg)
{
	if (m < 3 || m > IB_CONTACT_PATCH_MAX) return false;
	pg->m = m;
	pg->n = g[0]->n;
	pg->c = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) pg->c = ibAdd(pg->c, g[i]->a);
	pg->c = ibScale(1.0 / m, pg->c);
	/* planar geometry of the points: basis (t1, t2) of the plane, second moments about c */
	pg->t1 = ibPerpendicular(pg->n);
	pg->t2 = ibCross(pg->n, pg->t1);
	double sxx = 0.0, sxy = 0.0, syy = 0.0;
	for (int i = 0; i < m; ++i) {
		pg->r[i] = ib_contact_tangential(ibSub(g[i]->a, pg->c), pg->n);
		double px = ibDot(pg->r[i], pg->t1), py = ibDot(pg->r[i], pg->t2);
		sxx += px * px, sxy += px * py, syy += py * py;
	}
	pg->sxx = sxx, pg->sxy = sxy, pg->syy = syy;
	pg->det = sxx * syy - sxy * sxy;
	double tr = sxx + syy;
	/* (nearly) collinear, or the points within minSpread of their centre (RMS): no block. [IMPL] The
	 * second test is absolute: three rim samples of a disc stacked on another disc once coincided to
	 * 1e-17 m, a triangle of good shape but no size, whose least-squares loads (tilting moment over
	 * det ~ 1e-70) were 7e13 N s and grew by 1e16 per sweep: 5.5e271 J in one step */
	return tr > 0.0 && pg->det > 1e-6 * tr * tr && tr >= m * minSpread * minSpread;
}

int ib_contact_patch_loads(const ibContactRow* const* g, const ibPatchGeom* pg, ibVec3 F, ibVec3 M, double* N, ibVec3* T)
{
	int m = pg->m, status = 1;
	ibVec3 n = pg->n;
	/* least-squares normal loads with the wrench's F_n and tilting moment M_t = rho x n */
	double Fn = ibDot(F, n);
	ibVec3 Ft = ib_contact_tangential(F, n), rho = ibCross(n, ib_contact_tangential(M, n));
	double rx = ibDot(rho, pg->t1), ry = ibDot(rho, pg->t2);
	double bx = (pg->syy * rx - pg->sxy * ry) / pg->det, by = (pg->sxx * ry - pg->sxy * rx) / pg->det;
	ibVec3 beta = ibMulAdd(ibScale(bx, pg->t1), by, pg->t2);
	double W = 0.0, Nmin = INFINITY;
	ibVec3 cw = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		N[i] = Fn / m + ibDot(beta, pg->r[i]);
		Nmin = ib_fmin(Nmin, N[i]);
	}
	/* the centre of pressure outside the points: a corner lifts */
	if (Nmin < 0.0 && !nonneg_loads(pg->r, m, pg->t1, pg->t2, Fn, rho, N)) status = 0;
	for (int i = 0; i < m; ++i) {
		double wi = ib_fmax(0.0, N[i]);
		W += wi;
		cw = ibMulAdd(cw, wi, pg->r[i]);
	}
	if (!(W > 0.0)) {
		for (int i = 0; i < m; ++i) T[i] = ibScale(1.0 / m, Ft);
		return 0;
	}
	cw = ibScale(1.0 / W, cw); /* loads' centre, relative to c */
	/* friction: same F_t, same twist about c */
	double Mn = ibDot(M, n) - ibDot(n, ibCross(cw, Ft)), J = 0.0;
	for (int i = 0; i < m; ++i) J += ib_fmax(0.0, N[i]) * ibLengthSq(ibSub(pg->r[i], cw));
	double k = J > 0.0 ? Mn / J : 0.0;
	if (!(J > 0.0) && fabs(Mn) > 0.0) status = 0;
	for (int i = 0; i < m; ++i) {
		T[i] = ibScale(ib_fmax(0.0, N[i]), ibMulAdd(ibScale(1.0 / W, Ft), k, ibCross(n, ibSub(pg->r[i], cw))));
		if (ibLength(T[i]) > g[i]->mus * N[i]) status = 0; /* outside a cone */
	}
	return status;
}

bool ib_contact_patch_velocity(ibWorld* w, ibContactStore* cs, ibContactRow* g, int m, double tol, bool* moved)
{
	if (m < 3 || m > IB_CONTACT_PATCH_MAX || !cs->patchL || (g - cs->pts) + m > cs->count) return false;
	for (int i = 0; i < m; ++i)
		if (g[i].kind != IB_CONTACT_RESTING || !g[i].sticking || !(g[i].mus > 0.0) || g[i].frozen || g[i].lift == 2) return false;
	const ibBody* x = &w->bodies[g[0].b1];
	const ibBody* y = &w->bodies[g[0].b2];
	const ibContactRow* gp[IB_CONTACT_PATCH_MAX];
	for (int i = 0; i < m; ++i) gp[i] = &g[i];
	ibPatchGeom pg;
	if (!ib_contact_patch_geometry(gp, m, w->collisionSettings.contactTolerance, &pg)) return false;
	ibVec3 n = pg.n, c = pg.c;
	/* relative twist at c and the group's present wrench about c */
	ibVec3 r1 = ibSub(c, x->st.s), r2 = ibSub(c, y->st.s);
	ibVec3 u = ibSub(ibAdd(x->st.v, ibCross(x->st.w, r1)), ibAdd(y->st.v, ibCross(y->st.w, r2)));
	ibVec3 om = ibSub(x->st.w, y->st.w);
	double err = 0.0;
	for (int i = 0; i < m; ++i) err = ib_fmax(err, ibLength(ib_contact_rel_velocity(w, &g[i])));
	if (!(err > 0.0)) return true;
	ibVec3 F = IB_VEC3_ZERO, M = IB_VEC3_ZERO;
	for (int i = 0; i < m; ++i) {
		ibVec3 p = ibMulAdd(g[i].accT, g[i].accN, n);
		F = ibAdd(F, p);
		M = ibAdd(M, ibCross(pg.r[i], p));
	}
	/* the response of the block does not change during the loop (poses fixed at t0+h): factor once */
	int32_t gi = (int32_t)(g - cs->pts);
	double* L = &cs->patchL[IB_PATCH_ENTRY * (size_t)gi];
	if (cs->patchOk[gi] == 0) {
		patch_inputs(w, g, r1, r2, L);
		if (patch_reuse(cs, g, L)) {
			cs->patchOk[gi] = 1;
		} else {
			double A[6][6];
			block_response(w, g, r1, r2, A);
			cs->patchOk[gi] = factor6(A, L) ? 1 : 2;
		}
	}
	if (cs->patchOk[gi] != 1) return false;
	double b[6], sol[6];
	b[0] = -u.x, b[1] = -u.y, b[2] = -u.z, b[3] = -om.x, b[4] = -om.y, b[5] = -om.z;
	solve6(L, b, sol);
	F = ibAdd(F, ibV3(sol[0], sol[1], sol[2]));
	M = ibAdd(M, ibV3(sol[3], sol[4], sol[5]));
	double N[IB_CONTACT_PATCH_MAX];
	ibVec3 T[IB_CONTACT_PATCH_MAX];
	if (ib_contact_patch_loads(gp, &pg, F, M, N, T) != 1) return false; /* the points decide one by one */
	ibVec3 dp[IB_CONTACT_PATCH_MAX];
	for (int i = 0; i < m; ++i) {
		ibContactRow* q = &g[i];
		ibVec3 T0 = ib_contact_tangential(q->accT, n);
		double dN = N[i] - q->accN;
		dp[i] = ibMulAdd(ibSub(T[i], T0), dN, n);
		q->accN = N[i];
		q->accVN += dN;
		q->accT = T[i];
	}
	ib_contact_apply_group(w, g, m, dp);
	if (err > tol) *moved = true;
	return true;
}
