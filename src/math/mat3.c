/* ibdyn math: determinant, inverses, orthonormalisation and Euler-angle rotations of 3x3
 * matrices. Formulas: thesis Appendix C (C.2 Euler angles, C.3 / Algorithm C.1 orthonormalisation,
 * C.4 general inverse, C.5 symmetric inverse), see DIGEST.md section 29. */
#include "ibdyn/math.h"

/* Singularity threshold: |det| relative to the Hadamard bound |r1| |r2| |r3| (the product of the
 * row lengths). The ratio is invariant under scaling of the rows and is ~1 for well-conditioned
 * matrices; rounding noise in det of an exactly singular matrix stays below a few ulps of it. */
#define IB_INV_REL_TOL 1e-14

IB_API double ibMat3_Det(ibMat3 A)
{
	double(*a)[3] = A.m;
	return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
	       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

/* A power of two p with p * maxabs in [1, 2); scaling by it is exact and keeps the
 * determinant (a cubic) away from overflow and underflow. Returns 0 (treated as singular) for a
 * zero or non-finite maximum, or one below 2^-1000 whose inverse would overflow anyway. */
static double ib_pow2_scale(double maxabs)
{
	if (!(maxabs > 0.0) || !isfinite(maxabs)) return 0.0;
	int e = ilogb(maxabs);
	return e < -1000 ? 0.0 : ldexp(1.0, -e);
}

static bool ib_fail(ibMat3* out)
{
	if (out) *out = ibMat3_Zero();
	return false;
}

/* App. C.4, written with the (non-negated) adjugate: A^-1 = adj(A) / det(A), det expanded along
 * the first row with the precomputed cofactors of the first column of adj(A). */
IB_API bool ibMat3_Inverse(ibMat3 A, ibMat3* out)
{
	double mx = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) mx = fmax(mx, fabs(A.m[i][j]));
	double p = ibMat3_IsFinite(A) ? ib_pow2_scale(mx) : 0.0;
	if (p == 0.0) return ib_fail(out);
	A = ibMat3_Scale(p, A);
	double a = A.m[0][0], b = A.m[0][1], c = A.m[0][2];
	double d = A.m[1][0], e = A.m[1][1], f = A.m[1][2];
	double g = A.m[2][0], h = A.m[2][1], i = A.m[2][2];
	double c00 = e * i - f * h, c10 = f * g - d * i, c20 = d * h - e * g;
	double det = a * c00 + b * c10 + c * c20;
	double had = sqrt((a * a + b * b + c * c) * (d * d + e * e + f * f) * (g * g + h * h + i * i));
	if (!(fabs(det) > IB_INV_REL_TOL * had)) return ib_fail(out);
	double s = p / det;
	ibMat3 R = {{{c00 * s, (c * h - b * i) * s, (b * f - c * e) * s},
	             {c10 * s, (a * i - c * g) * s, (c * d - a * f) * s},
	             {c20 * s, (b * g - a * h) * s, (a * e - b * d) * s}}};
	if (!ibMat3_IsFinite(R)) return ib_fail(out);
	if (out) *out = R;
	return true;
}

/* App. C.5 for A = [[a,b,c],[b,d,e],[c,e,f]], reading only the upper triangle; again with the
 * non-negated adjugate and determinant. */
IB_API bool ibMat3_InverseSym(ibMat3 A, ibMat3* out)
{
	double a = A.m[0][0], b = A.m[0][1], c = A.m[0][2];
	double d = A.m[1][1], e = A.m[1][2], f = A.m[2][2];
	double mx = fmax(fmax(fmax(fabs(a), fabs(b)), fmax(fabs(c), fabs(d))), fmax(fabs(e), fabs(f)));
	bool finite = isfinite(a) && isfinite(b) && isfinite(c) && isfinite(d) && isfinite(e) && isfinite(f);
	double p = finite ? ib_pow2_scale(mx) : 0.0;
	if (p == 0.0) return ib_fail(out);
	a *= p, b *= p, c *= p, d *= p, e *= p, f *= p;
	double c00 = d * f - e * e, c01 = c * e - b * f, c02 = b * e - c * d;
	double det = a * c00 + b * c01 + c * c02;
	double had = sqrt((a * a + b * b + c * c) * (b * b + d * d + e * e) * (c * c + e * e + f * f));
	if (!(fabs(det) > IB_INV_REL_TOL * had)) return ib_fail(out);
	double s = p / det;
	double i01 = c01 * s, i02 = c02 * s, i12 = (b * c - a * e) * s;
	ibMat3 R = {{{c00 * s, i01, i02}, {i01, (a * f - c * c) * s, i12}, {i02, i12, (a * d - b * b) * s}}};
	if (!ibMat3_IsFinite(R)) return ib_fail(out);
	if (out) *out = R;
	return true;
}

/* Largest deviation of the column Gram matrix from the identity. */
static double ib_ortho_error(const ibVec3 c[3])
{
	double err = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = i; j < 3; ++j) err = fmax(err, fabs(ibDot(c[i], c[j]) - (i == j ? 1.0 : 0.0)));
	return err;
}

/* Gram-Schmidt with c3 = c1 x c2: a proper rotation for any input (fallback for inputs far from
 * a rotation, e.g. reflections or rank-deficient matrices). */
static void ib_gram_schmidt(ibVec3 c[3])
{
	ibVec3 u = ibNormalize(c[0]);
	if (ibLengthSq(u) == 0.0) u = ibV3(1.0, 0.0, 0.0);
	ibVec3 v = ibNormalize(ibMulAdd(c[1], -ibDot(u, c[1]), u));
	if (!(ibLengthSq(v) > 0.5)) v = ibPerpendicular(u);
	c[0] = u;
	c[1] = v;
	c[2] = ibCross(u, v);
}

/* Algorithm C.1 applied to the columns: c1 := (c1 + c2 x c3)/2 etc. In matrix form this is
 * X := (X + cof(X))/2 = (X + det(X) X^-T)/2, which removes the non-orthogonal part quadratically
 * but amplifies a common scale error by 3/2 per step; the columns are therefore normalised before
 * every step (not only after the loop as in the thesis). Inputs that do not converge to a proper
 * rotation (det <= 0, degenerate) fall back to Gram-Schmidt, so det(result) = +1 for any finite
 * input; non-finite input is returned unchanged. */
IB_API ibMat3 ibMat3_Orthonormalize(ibMat3 R)
{
	if (!ibMat3_IsFinite(R)) return R; /* let NaN/Inf propagate to the divergence checks */
	ibVec3 c[3] = {ibMat3_Column(R, 0), ibMat3_Column(R, 1), ibMat3_Column(R, 2)};
	bool ok = false;
	for (int it = 0;; ++it) {
		for (int k = 0; k < 3; ++k) c[k] = ibNormalize(c[k]);
		double err = ib_ortho_error(c);
		/* far from a rotation, or a reflection: the iteration would collapse the columns */
		if (!(err < 0.5) || !(ibDot(c[0], ibCross(c[1], c[2])) > 0.0)) break;
		if (err <= 4.0 * 2.220446049250313e-16 || it == 30) {
			ok = err < 1e-13;
			break;
		}
		ibVec3 c23 = ibCross(c[1], c[2]), c31 = ibCross(c[2], c[0]), c12 = ibCross(c[0], c[1]);
		c[0] = ibScale(0.5, ibAdd(c[0], c23));
		c[1] = ibScale(0.5, ibAdd(c[1], c31));
		c[2] = ibScale(0.5, ibAdd(c[2], c12));
	}
	if (!ok) {
		c[0] = ibMat3_Column(R, 0);
		c[1] = ibMat3_Column(R, 1);
		c[2] = ibMat3_Column(R, 2);
		ib_gram_schmidt(c);
	}
	return ibMat3_FromColumns(c[0], c[1], c[2]);
}

/* App. C.2: R = Rx(a) Ry(b) Rz(c). */
IB_API ibMat3 ibMat3_FromEulerXYZ(double a, double b, double c)
{
	double sa = sin(a), ca = cos(a), sb = sin(b), cb = cos(b), sc = sin(c), cc = cos(c);
	return (ibMat3){{{cb * cc, -cb * sc, sb},
	                 {sa * sb * cc + ca * sc, ca * cc - sa * sb * sc, -sa * cb},
	                 {sa * sc - ca * sb * cc, ca * sb * sc + sa * cc, ca * cb}}};
}
