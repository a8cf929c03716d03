/* Static-friction anchors that no rigid motion of their bodies can satisfy (docs/contacts.md, "Log piles pop").
 *
 * [IMPL] A sticking point's anchors are set where it started sticking and kept while it sticks, so the anchors of
 * one island are of several instants. Within one manifold group consistent_anchors (contact_keep.c) drops the part
 * of the offsets that no motion of the face explains. Across a cycle of body pairs (a log on the ground beside
 * another on the ground, the two touching; a box on two boxes on the ground) each pair's offsets may fit a
 * motion of its own and yet no motion of all the bodies: a pair re-anchored at the present poses (its points
 * started sticking anew) while the other pairs keep anchors of earlier poses disagrees with them by the bodies'
 * drift since. The position loop can then only share the disagreement among the points; its friction grows
 * from sweep to sweep (and is carried on by the warm start) and it stalls just above eps_d in step after step,
 * until a point reaches its cone, slides, and the stored friction lets go (the 3-log pile of test_log_piles:
 * the bottom logs' anchors on the ground 1.1-1.6e-6 m apart along their axes from the anchors between them,
 * 30-40 % of its steps not converged, kinetic energy jumping to 1e-6-7e-5 J).
 *
 * Here, in each island of dynamic bodies whose contact pairs form a cycle, the sticking points' tangential
 * offsets at t0 are fitted by small rigid motions of its dynamic bodies (least squares, 6 per body: the offsets
 * cancelled, every resting point's normal distance unchanged), and body B's anchors are moved by the residuals
 * where one exceeds eps_d / 10: as in consistent_anchors, the part of the offsets that one motion of the island
 * explains stays (the bodies are still pulled back to where they stuck), the rest goes. Islands of more than
 * IB_ANCHOR_FIT_BODIES dynamic bodies are left to the groups' fit (a dense solve; a large pile would want a
 * sparse one). */
#include <math.h>
#include <string.h>

#include "contact/contact_internal.h"
#include "math/union_find.h"

enum { IB_ANCHOR_FIT_BODIES = 32 };

/* a row that constrains the fit's motions: a touching resting point (not speculative, not lifting) */
static inline bool fit_row(const ibContactRow* c) { return c->kind == IB_CONTACT_RESTING && !c->spec && !c->lift; }
/* ... whose anchors are fitted: a sticking point with friction */
static inline bool stick_row(const ibContactRow* c) { return fit_row(c) && c->sticking && c->mus > 0.0; }

/* dense Cholesky of the n x n matrix A (row-major, lower part used) in place; false if not positive definite */
static bool chol(double* A, int n)
{
	for (int j = 0; j < n; ++j) {
		double d = A[j * n + j];
		for (int k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
		if (!(d > 0.0)) return false;
		d = sqrt(d);
		A[j * n + j] = d;
		for (int i = j + 1; i < n; ++i) {
			double s = A[i * n + j];
			for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
			A[i * n + j] = s / d;
		}
	}
	return true;
}

static void chol_solve(const double* L, int n, double* x)
{
	for (int i = 0; i < n; ++i) {
		double s = x[i];
		for (int k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
		x[i] = s / L[i * n + i];
	}
	for (int i = n - 1; i >= 0; --i) {
		double s = x[i];
		for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
		x[i] = s / L[i * n + i];
	}
}

/* the anchors of row c at t0 (world) and their tangential offset (B's - A's) */
static ibVec3 anchor_points(const ibWorld* w, const ibContactRow* c, ibVec3* A, ibVec3* B)
{
	ib_contact_anchors_now(w, c, A, B);
	return ib_contact_tangential(ibSub(*B, *A), c->n);
}

/* J of one side of a row: the motion of the point at lever r for body motion (ds, dphi) is ds + dphi x r =
 * [I, -[r]x] (ds, dphi), times sg (+1 body 2, -1 body 1) */
static void side_jacobian(ibVec3 r, double sg, double J[3][6])
{
	memset(J, 0, 18 * sizeof(double));
	for (int i = 0; i < 3; ++i) J[i][i] = sg;
	/* -[r]x */
	J[0][4] = sg * r.z, J[0][5] = -sg * r.y;
	J[1][3] = -sg * r.z, J[1][5] = sg * r.x;
	J[2][3] = sg * r.y, J[2][4] = -sg * r.x;
}

/* fits and corrects the anchors of one island: its rows rows[0..nr-1], its dynamic bodies numbered by loc[] */
static void fit_island(ibWorld* w, ibContactStore* cs, const int32_t* rows, int32_t nr, const int32_t* loc, int nb, double* M, double* rhs)
{
	const int n = 6 * nb;
	memset(M, 0, (size_t)n * (size_t)n * sizeof(double));
	memset(rhs, 0, (size_t)n * sizeof(double));
	for (int32_t q = 0; q < nr; ++q) {
		const ibContactRow* c = &cs->pts[rows[q]];
		const bool stick = stick_row(c);
		ibVec3 A, B, d = anchor_points(w, c, &A, &B);
		const int32_t bi[2] = {c->b1, c->b2};
		const ibVec3 P[2] = {A, B};
		double J[2][3][6];
		int li[2];
		for (int s = 0; s < 2; ++s) {
			li[s] = ib_is_dynamic(&w->bodies[bi[s]]) ? loc[bi[s]] : -1;
			if (li[s] >= 0) side_jacobian(ibSub(P[s], w->bodies[bi[s]].st.s), s == 0 ? -1.0 : 1.0, J[s]);
		}
		/* P = I for a sticking point (its tangential offset cancelled, its normal distance kept), n n^T otherwise */
		const double nv[3] = {c->n.x, c->n.y, c->n.z}, dv[3] = {d.x, d.y, d.z};
		for (int s = 0; s < 2; ++s) {
			if (li[s] < 0) continue;
			double PJ[3][6]; /* P J_s */
			for (int k = 0; k < 6; ++k) {
				if (stick) {
					for (int i = 0; i < 3; ++i) PJ[i][k] = J[s][i][k];
				} else {
					double t = nv[0] * J[s][0][k] + nv[1] * J[s][1][k] + nv[2] * J[s][2][k];
					for (int i = 0; i < 3; ++i) PJ[i][k] = nv[i] * t;
				}
			}
			for (int t = 0; t < 2; ++t) {
				if (li[t] < 0) continue;
				for (int k = 0; k < 6; ++k)
					for (int l = 0; l < 6; ++l) {
						double v = 0.0;
						for (int i = 0; i < 3; ++i) v += J[t][i][k] * PJ[i][l];
						M[(6 * li[t] + k) * n + 6 * li[s] + l] += v;
					}
			}
			if (stick)
				for (int k = 0; k < 6; ++k) rhs[6 * li[s] + k] -= PJ[0][k] * dv[0] + PJ[1][k] * dv[1] + PJ[2][k] * dv[2];
		}
	}
	/* motions no row sees (a body's turn about its only point's normal) are left at 0 */
	double dmax = 0.0;
	for (int i = 0; i < n; ++i) dmax = ib_fmax(dmax, M[i * n + i]);
	if (!(dmax > 0.0)) return;
	for (int i = 0; i < n; ++i) M[i * n + i] += 1e-9 * dmax;
	if (!chol(M, n)) return;
	chol_solve(M, n, rhs);
	/* the residuals, where one exceeds eps_d / 10 */
	const double tol = 0.1 * w->solver.contact.contactPositionTolerance;
	double worst = 0.0;
	for (int pass = 0; pass < 2; ++pass) {
		for (int32_t q = 0; q < nr; ++q) {
			ibContactRow* c = &cs->pts[rows[q]];
			if (!stick_row(c)) continue;
			ibVec3 A, B, r = anchor_points(w, c, &A, &B);
			const int32_t bi[2] = {c->b1, c->b2};
			const ibVec3 P[2] = {A, B};
			for (int s = 0; s < 2; ++s) {
				if (!ib_is_dynamic(&w->bodies[bi[s]])) continue;
				const double* u = rhs + 6 * loc[bi[s]];
				ibVec3 m = ibAdd(ibV3(u[0], u[1], u[2]), ibCross(ibV3(u[3], u[4], u[5]), ibSub(P[s], w->bodies[bi[s]].st.s)));
				r = s == 0 ? ibSub(r, m) : ibAdd(r, m);
			}
			r = ib_contact_tangential(r, c->n);
			if (pass == 0) {
				worst = ib_fmax(worst, ibLength(r));
			} else {
				ib_contact_drop_anchor_offset(w, c, B, r);
				c->anchorsChecked = 0; /* (its group's fit is checked again next step: contact_keep.c consistent_anchors) */
			}
		}
		if (!(worst > tol)) return;
	}
}

void ib_contacts_island_anchors(ibWorld* w, ibContactStore* cs)
{
	const int32_t nbody = w->bodyHigh + 1;
	int32_t nstick = 0;
	for (int32_t k = 0; k < cs->count; ++k) nstick += stick_row(&cs->pts[k]);
	if (nstick < 2) return;
	/* per body: union-find parent (dynamic bodies; the static ones are fixed and join nothing), local index; per
	 * island root: its contact pairs (edges), dynamic bodies, whether it touches a non-dynamic body, its rows */
	if (!ib_grow(w, (void**)&cs->fitInt, &cs->fitIntCapacity, 6 * nbody + cs->count, sizeof(int32_t))) return;
	int32_t *parent = cs->fitInt, *loc = parent + nbody, *edges = loc + nbody, *nbOf = edges + nbody, *fixed = nbOf + nbody,
	        *start = fixed + nbody, *order = start + nbody;
	for (int32_t i = 0; i < nbody; ++i) parent[i] = i, loc[i] = -1, edges[i] = nbOf[i] = fixed[i] = start[i] = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (!fit_row(c)) continue;
		bool dx = ib_is_dynamic(&w->bodies[c->b1]), dy = ib_is_dynamic(&w->bodies[c->b2]);
		if (dx && dy) ib_uf_unite_min(parent, c->b1, c->b2);
	}
	/* a cycle: as many contact pairs (consecutive rows of one shape pair, the manifold groups) as nodes, the
	 * island's dynamic bodies and, if it touches any, the non-dynamic ones as one fixed node */
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (!fit_row(c)) continue;
		bool dx = ib_is_dynamic(&w->bodies[c->b1]), dy = ib_is_dynamic(&w->bodies[c->b2]);
		if (!dx && !dy) continue;
		int32_t r = ib_uf_find(parent, dx ? c->b1 : c->b2);
		if (!dx || !dy) fixed[r] = 1;
		if (k == 0 || !fit_row(c - 1) || (c - 1)->s1 != c->s1 || (c - 1)->s2 != c->s2) edges[r]++;
	}
	for (int32_t i = 0; i < w->bodyHigh; ++i)
		if (ib_is_dynamic(&w->bodies[i])) nbOf[ib_uf_find(parent, i)]++;
	/* fitted: the roots of islands with a cycle and at most IB_ANCHOR_FIT_BODIES bodies (edges[r] becomes the flag,
	 * nbOf[r] the count of local indices given out) */
	bool any = false;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		if (!ib_is_dynamic(&w->bodies[i]) || parent[i] != i) continue;
		edges[i] = edges[i] >= nbOf[i] + fixed[i] && nbOf[i] <= IB_ANCHOR_FIT_BODIES;
		nbOf[i] = 0;
		if (edges[i]) any = true;
	}
	if (!any) return;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		if (!ib_is_dynamic(&w->bodies[i])) continue;
		int32_t r = ib_uf_find(parent, i);
		if (edges[r]) loc[i] = nbOf[r]++;
	}
	/* the fitted islands' rows grouped by island (counting sort on the root) */
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (!fit_row(c)) continue;
		int32_t b = ib_is_dynamic(&w->bodies[c->b1]) ? c->b1 : c->b2;
		if (ib_is_dynamic(&w->bodies[b]) && loc[b] >= 0) start[ib_uf_find(parent, b)]++;
	}
	for (int32_t i = 0, acc = 0; i < nbody; ++i) {
		int32_t m = start[i];
		start[i] = acc;
		acc += m;
	}
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (!fit_row(c)) continue;
		int32_t b = ib_is_dynamic(&w->bodies[c->b1]) ? c->b1 : c->b2;
		if (ib_is_dynamic(&w->bodies[b]) && loc[b] >= 0) order[start[ib_uf_find(parent, b)]++] = k;
	}
	/* start[r] is now the end of island r's rows */
	for (int32_t r = 0, from = 0; r < nbody; ++r) {
		int32_t to = start[r];
		if (to > from) {
			const int n = 6 * nbOf[r];
			if (ib_grow(w, (void**)&cs->fitDbl, &cs->fitDblCapacity, n * n + n, sizeof(double)))
				fit_island(w, cs, order + from, to - from, loc, nbOf[r], cs->fitDbl, cs->fitDbl + n * n);
		}
		from = to;
	}
}
