/* [IMPL] The impulses a manifold keeps for the next step's warm start (docs/contacts.md, "Warm start").
 *
 * The impulses of the points of one manifold are determined by the motion only up to a
 * self-equilibrated part: a checkerboard of normal loads on a face (+ - + - at the four corners of
 * a rectangle: no net force, no moment) and opposite friction at two corners (no net force, no
 * twist). The sweeps change that part arbitrarily. Carried from step to step by the warm start it
 * grew without bound: pyramid8, 700 steps with the warm start, the sum over all points of the
 * deviation of the normal impulses from the least-squares loads grew from 0.004 to 7.4 N s (the
 * boxes' weight is 0.16 N s per step each), points with light loads reached their friction cones,
 * the velocity loop's sweeps grew from ~6 to ~600 per step, and pyramid20 fell apart after ~136
 * steps. Without the warm start the deviation stays 0.
 *
 * So only the manifold's net wrench is kept: before an impulse is stored for the warm start, the
 * normal impulses N_i of a group of coplanar points are replaced by the least-squares loads with
 * the same total F_n and tilting moment (N_i = F_n / m + beta . r_i, r_i = tangential offset from
 * the points' centre; moved back towards the original loads as far as needed to keep them >= 0, a
 * convex combination of two distributions of the same wrench), and the friction by the distribution
 * proportional to these loads that has the same net force F and twist tau about the loads' centre:
 * t_i = w_i (F / W + (tau / J) n x r_i), J = sum w_i |r_i|^2 (the minimum of sum |t_i|^2 / w_i).
 * The bodies get the same wrench (coplanar points). */
#include <math.h>

#include "contact/contact_internal.h"

#define WARM_GROUP_MAX 16 /* larger groups keep their impulses as they are */

/* Least-squares normal loads of the m points with the same sum and moment as N (in place). */
static void balance_normal(const ibContactRow* g, int32_t m, double* N)
{
	if (m < 4) return; /* up to 3 points the loads follow from the wrench */
	ibVec3 n = g[0].n, c = IB_VEC3_ZERO, t1 = ibPerpendicular(n), t2 = ibCross(n, t1);
	for (int32_t i = 0; i < m; ++i) c = ibAdd(c, g[i].a);
	c = ibScale(1.0 / m, c);
	double x[WARM_GROUP_MAX], y[WARM_GROUP_MAX], sxx = 0.0, sxy = 0.0, syy = 0.0, Fn = 0.0, mx = 0.0, my = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		x[i] = ibDot(r, t1), y[i] = ibDot(r, t2);
		sxx += x[i] * x[i], sxy += x[i] * y[i], syy += y[i] * y[i];
		Fn += N[i], mx += N[i] * x[i], my += N[i] * y[i];
	}
	double det = sxx * syy - sxy * sxy, tr = sxx + syy;
	if (!(tr > 0.0) || !(det > 1e-6 * tr * tr)) return; /* (nearly) collinear: no self-equilibrated normal part */
	double bx = (syy * mx - sxy * my) / det, by = (sxx * my - sxy * mx) / det, L[WARM_GROUP_MAX], t = 1.0;
	for (int32_t i = 0; i < m; ++i) {
		L[i] = Fn / m + bx * x[i] + by * y[i];
		if (L[i] < 0.0 && N[i] >= 0.0) t = fmin(t, N[i] / (N[i] - L[i])); /* N + t (L - N) >= 0 */
	}
	for (int32_t i = 0; i < m; ++i) N[i] = N[i] + t * (L[i] - N[i]);
}

/* Friction t_i of the group replaced by the loads-proportional distribution of the same net force and twist. */
static void balance_friction(const ibContactRow* g, int32_t m, const double* w, ibVec3* T)
{
	ibVec3 n = g[0].n, F = IB_VEC3_ZERO, c = IB_VEC3_ZERO;
	double W = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		double wi = fmax(0.0, w[i]);
		W += wi;
		c = ibMulAdd(c, wi, g[i].a);
		F = ibAdd(F, ib_contact_tangential(T[i], n));
	}
	if (!(W > 0.0)) return;
	c = ibScale(1.0 / W, c);
	double tau = 0.0, J = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		tau += ibDot(n, ibCross(r, ib_contact_tangential(T[i], n)));
		J += fmax(0.0, w[i]) * ibLengthSq(r);
	}
	double k = J > 0.0 ? tau / J : 0.0;
	for (int32_t i = 0; i < m; ++i) {
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		T[i] = ibScale(fmax(0.0, w[i]), ibMulAdd(ibScale(1.0 / W, F), k, ibCross(n, r)));
	}
}

void ib_contacts_balance_warm(ibContactRow* g, int32_t m)
{
	if (m < 2 || m > WARM_GROUP_MAX) return;
	double N[WARM_GROUP_MAX], S[WARM_GROUP_MAX];
	ibVec3 T[WARM_GROUP_MAX], V[WARM_GROUP_MAX];
	for (int32_t i = 0; i < m; ++i) {
		N[i] = g[i].wN;
		S[i] = g[i].wN + g[i].wVN; /* the step's total normal impulse: the weights of the velocity loop's friction */
		T[i] = g[i].wT;
		V[i] = g[i].wVT;
	}
	balance_normal(g, m, N);
	balance_normal(g, m, S);
	if (g[0].mus > 0.0) {
		balance_friction(g, m, N, T);
		balance_friction(g, m, S, V);
	}
	for (int32_t i = 0; i < m; ++i) {
		g[i].wN = N[i];
		g[i].wVN = S[i] - N[i];
		g[i].wT = T[i];
		g[i].wVT = V[i];
	}
}
