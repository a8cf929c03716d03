/* [IMPL] The impulses a manifold keeps for the next step's warm start (docs/contacts.md, "Warm start").
 *
 * A resting manifold (all its points stick) keeps only its net force, spread over its points: the
 * normal impulses of a face contact (>= 4 coplanar, non-collinear points) become uniform with the
 * same total, and the friction becomes proportional to these loads with the same net force. Neither
 * its tilting moment nor its twist is carried into the next step; the sweeps find them again. Other
 * manifolds keep their normal impulses, and their friction is spread over the loads with the same
 * net force and twist. With the direct solve (keepLoads) a resting face keeps its normal impulses too
 * (its friction is spread as before): they are the direct solve's least-squares loads, without the
 * self-equilibrated part that made the sweeps' loads grow (below), and they carry the face's moment.
 * A pile standing still then starts each step within a tenth of the tolerance and the direct solve has
 * nothing to do (pyramid20 of bench_contacts: first errors 5e-4 m / 3e-2 m/s with uniform loads, a
 * direct solve per loop every step; 2e-9 m / 1e-7 m/s kept). Kept moments were what drove the rocking
 * below only with the sweeps alone (test_pyramid_small_iterative: 4.3e-3 m against 6.5e-5 m uniform).
 *
 * Why (issue 6 part 7, per-step logs of bench_contacts' pyramids at 60 Hz, eps_v 1e-4, eps_d 1e-5):
 * - The impulses of one manifold are determined by the motion only up to a self-equilibrated
 *   part (a checkerboard of normal loads on a face, opposite friction at two corners). The sweeps
 *   change it arbitrarily and the warm start carried it on: in pyramid8 the normal checkerboard
 *   (deviation from the least-squares loads, summed over all points) grew from 0.004 to 7.4 N s in
 *   700 steps (a box weighs 0.16 N s per step), points reached their friction cones and the
 *   velocity loop's sweeps grew from ~6 to ~600 per step.
 * - Keeping the net wrench (least-squares loads and friction with the same force, moment and
 *   twist) stopped that growth but not the loss of pyramid20 at step ~100: an out-of-plane rocking
 *   of the pile grew (top cube 5e-4, 1.0e-3, 1.2e-3 m at steps 45, 80, 100; ~3e-4 m bounded without
 *   warm start), then cubes twisted about the vertical and the pile slid apart. Moments and twists
 *   that lag one step behind the motion drive that mode; with the net force only, the pile stands
 *   for 1000+ steps (the rocking still grows, slowly: ~1e-3 m by step 1000).
 * - Moving manifolds keep their loads: spreading those too doubled the late penetrations of cubes
 *   tumbling off the pile of test_contact_rain (4.1e-3 against 1.8e-3 m). */
#include <math.h>

#include "contact/contact_internal.h"

#define WARM_GROUP_MAX 16 /* larger groups keep their normal impulses as they are */

/* A face contact: at least 4 points that span a plane (not nearly collinear). */
static bool is_face(const ibContactPrev* g, int32_t m)
{
	if (m < 4 || m > WARM_GROUP_MAX) return false;
	ibVec3 n = g[0].n, c = IB_VEC3_ZERO, t1 = ibPerpendicular(n), t2 = ibCross(n, t1);
	for (int32_t i = 0; i < m; ++i) c = ibAdd(c, g[i].a);
	c = ibScale(1.0 / m, c);
	double sxx = 0.0, sxy = 0.0, syy = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		double x = ibDot(r, t1), y = ibDot(r, t2);
		sxx += x * x, sxy += x * y, syy += y * y;
	}
	double det = sxx * syy - sxy * sxy, tr = sxx + syy;
	return tr > 0.0 && det > 1e-6 * tr * tr;
}

/* Friction T of the group replaced by the distribution proportional to the loads w with the same net
 * force, and with the same twist about the loads' centre if twist: t_i = w_i (F / W + (tau / J) n x r_i),
 * r_i = tangential offset from the centre, J = sum w_i |r_i|^2 (the minimum of sum |t_i|^2 / w_i). */
static void spread_friction(const ibContactPrev* g, int32_t m, const double* w, ibVec3* T, bool twist)
{
	ibVec3 n = g[0].n, F = IB_VEC3_ZERO, c = IB_VEC3_ZERO;
	double W = 0.0, tau = 0.0, J = 0.0;
	for (int32_t i = 0; i < m; ++i) {
		W += ib_fmax(0.0, w[i]);
		c = ibMulAdd(c, ib_fmax(0.0, w[i]), g[i].a);
		F = ibAdd(F, ib_contact_tangential(T[i], n));
	}
	if (!(W > 0.0)) return;
	c = ibScale(1.0 / W, c);
	for (int32_t i = 0; twist && i < m; ++i) {
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		tau += ibDot(n, ibCross(r, ib_contact_tangential(T[i], n)));
		J += ib_fmax(0.0, w[i]) * ibLengthSq(r);
	}
	double k = J > 0.0 ? tau / J : 0.0;
	const ibVec3 f = ibScale(1.0 / W, F);
	for (int32_t i = 0; i < m; ++i) {
		if (k == 0.0) { /* (the net force alone: the offsets are not needed) */
			T[i] = ibScale(ib_fmax(0.0, w[i]), f);
			continue;
		}
		ibVec3 r = ib_contact_tangential(ibSub(g[i].a, c), n);
		T[i] = ibScale(ib_fmax(0.0, w[i]), ibMulAdd(f, k, ibCross(n, r)));
	}
}

void ib_contacts_balance_warm(ibContactPrev* g, int32_t m, bool keepLoads)
{
	if (m < 2 || m > WARM_GROUP_MAX) return;
	double N[WARM_GROUP_MAX], S[WARM_GROUP_MAX], Nt = 0.0, St = 0.0;
	ibVec3 T[WARM_GROUP_MAX], V[WARM_GROUP_MAX];
	bool rest = true; /* every point sticks: a resting manifold */
	for (int32_t i = 0; i < m; ++i) {
		if (!g[i].sticking) rest = false;
		N[i] = g[i].wN; /* position loop */
		S[i] = g[i].wN + g[i].wVN; /* the step's total normal impulse: weights of the velocity loop's friction */
		T[i] = g[i].wT;
		V[i] = g[i].wVT;
		Nt += N[i], St += S[i];
	}
	if (rest && !keepLoads && is_face(g, m))
		for (int32_t i = 0; i < m; ++i) N[i] = Nt / m, S[i] = St / m;
	if (g[0].mus > 0.0) {
		spread_friction(g, m, N, T, !rest);
		spread_friction(g, m, S, V, !rest);
	}
	for (int32_t i = 0; i < m; ++i) {
		g[i].wN = N[i];
		g[i].wVN = S[i] - N[i];
		g[i].wT = T[i];
		g[i].wVT = V[i];
	}
}
