/* ibdyn math: eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations
 * (used for principal axes of inertia tensors, thesis App. D.1). Only the upper triangle of the
 * input is read. The matrix is first scaled by an exact power of two so that the largest entry is
 * in [1, 2), which keeps every intermediate away from overflow and underflow. */
#include "ibdyn/math.h"

#define IB_JACOBI_MAX_SWEEPS 50

/* One Jacobi rotation in the (p, q) plane that annihilates a[p][q] (p < q, r the third index).
 * With theta = (a_qq - a_pp) / (2 a_pq), t = tan(phi) is the smaller root of t^2 + 2 theta t - 1 = 0,
 * so |phi| <= pi/4 and the update is written in the stable incremental form
 * a_pp -= t a_pq, a_qq += t a_pq. */
static void ib_jacobi_rotate(double a[3][3], double v[3][3], int p, int q)
{
	int r = 3 - p - q;
	double apq = a[p][q];
	double theta = (a[q][q] - a[p][p]) / (2.0 * apq);
	double t;
	if (fabs(theta) > 1e150)
		t = 0.5 / theta; /* theta^2 would overflow; t ~ 1/(2 theta) */
	else
		t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
	double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
	a[p][p] -= t * apq;
	a[q][q] += t * apq;
	a[p][q] = a[q][p] = 0.0;
	double arp = a[r][p], arq = a[r][q];
	a[r][p] = a[p][r] = c * arp - s * arq;
	a[r][q] = a[q][r] = s * arp + c * arq;
	for (int k = 0; k < 3; ++k) {
		double vkp = v[k][p], vkq = v[k][q];
		v[k][p] = c * vkp - s * vkq;
		v[k][q] = s * vkp + c * vkq;
	}
}

/* An off-diagonal entry is negligible once adding it (times 100) changes neither diagonal entry
 * it couples; it is then set to zero, which makes the sweep loop terminate exactly. */
static bool ib_negligible(double apq, double app, double aqq)
{
	double g = 100.0 * fabs(apq);
	return fabs(app) + g == fabs(app) && fabs(aqq) + g == fabs(aqq);
}

static void ib_swap_columns(double v[3][3], double* l, int i, int j)
{
	double t = l[i];
	l[i] = l[j];
	l[j] = t;
	for (int k = 0; k < 3; ++k) {
		t = v[k][i];
		v[k][i] = v[k][j];
		v[k][j] = t;
	}
}

IB_API int ibMat3_EigenSym(ibMat3 A, ibVec3* values, ibMat3* vectors)
{
	static const int P[3] = {0, 0, 1}, Q[3] = {1, 2, 2};
	double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	double mx = 0.0;
	bool finite = true;
	for (int i = 0; i < 3; ++i)
		for (int j = i; j < 3; ++j) {
			a[i][j] = a[j][i] = A.m[i][j];
			finite = finite && isfinite(A.m[i][j]);
			mx = fmax(mx, fabs(A.m[i][j]));
		}
	if (!finite) {
		if (values) *values = ibV3(NAN, NAN, NAN);
		if (vectors) *vectors = ibMat3_Identity();
		return -1;
	}
	int e = mx > 0.0 ? ilogb(mx) : 0; /* ldexp per entry: exact, and 2^-e may not be representable */
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) a[i][j] = ldexp(a[i][j], -e);

	int sweeps = 0;
	bool converged = false;
	for (;;) {
		bool offZero = true;
		for (int k = 0; k < 3; ++k) {
			int p = P[k], q = Q[k];
			if (a[p][q] != 0.0 && ib_negligible(a[p][q], a[p][p], a[q][q])) a[p][q] = a[q][p] = 0.0;
			offZero = offZero && a[p][q] == 0.0;
		}
		if (offZero) {
			converged = true;
			break;
		}
		if (sweeps == IB_JACOBI_MAX_SWEEPS) break;
		++sweeps;
		for (int k = 0; k < 3; ++k)
			if (a[P[k]][Q[k]] != 0.0) ib_jacobi_rotate(a, v, P[k], Q[k]);
	}

	/* ascending order (three-element sorting network), then make V a proper rotation */
	double l[3] = {a[0][0], a[1][1], a[2][2]};
	if (l[0] > l[1]) ib_swap_columns(v, l, 0, 1);
	if (l[1] > l[2]) ib_swap_columns(v, l, 1, 2);
	if (l[0] > l[1]) ib_swap_columns(v, l, 0, 1);
	ibMat3 V = {{{v[0][0], v[0][1], v[0][2]}, {v[1][0], v[1][1], v[1][2]}, {v[2][0], v[2][1], v[2][2]}}};
	if (ibMat3_Det(V) < 0.0)
		for (int k = 0; k < 3; ++k) V.m[k][2] = -V.m[k][2];
	if (values) *values = ibV3(ldexp(l[0], e), ldexp(l[1], e), ldexp(l[2], e));
	if (vectors) *vectors = V;
	return converged ? sweeps : -sweeps;
}
