/* Values and Jacobians of the soft constraint rows: edge distance, dihedral bending, tetrahedron
 * and closed-surface volume, the rigid–soft ball joint on a triangle (the Russian article, digest
 * Part VIII, with the world-frame lever arm of §24.4) and the rigid–vertex ball joint.
 * Jacobians are row-major, 3 columns per particle and 6 per rigid body (v_com, omega_world). */
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"

static void put3(double* J, int cols, int row, int col, ibVec3 g)
{
	J[row * cols + col] = g.x;
	J[row * cols + col + 1] = g.y;
	J[row * cols + col + 2] = g.z;
}

/* 3x3 block M into rows 0..2, columns col..col+2 */
static void put33(double* J, int cols, int col, ibMat3 M)
{
	for (int r = 0; r < 3; ++r)
		for (int k = 0; k < 3; ++k) J[r * cols + col + k] = M.m[r][k];
}

double ib_soft_dihedral(const ibVec3 x[4], ibVec3 g[4])
{
	ibVec3 e = ibSub(x[3], x[2]);
	ibVec3 nA = ibCross(e, ibSub(x[0], x[2]));
	ibVec3 nB = ibCross(ibNeg(e), ibSub(x[1], x[3]));
	double le = ibLength(e), aa = ibLengthSq(nA), bb = ibLengthSq(nB);
	if (!(le > 1e-300 && aa > 1e-300 && bb > 1e-300)) {
		if (g) g[0] = g[1] = g[2] = g[3] = IB_VEC3_ZERO;
		return 0.0;
	}
	double th = atan2(ibDot(ibCross(nA, nB), e) / le, ibDot(nA, nB));
	if (g) {
		ibVec3 a = ibScale(1.0 / aa, nA), b = ibScale(1.0 / bb, nB);
		g[0] = ibScale(-le, a);
		g[1] = ibScale(-le, b);
		g[2] = ibNeg(ibAdd(ibScale(ibDot(ibSub(x[0], x[3]), e) / le, a), ibScale(ibDot(ibSub(x[1], x[3]), e) / le, b)));
		g[3] = ibAdd(ibScale(ibDot(ibSub(x[0], x[2]), e) / le, a), ibScale(ibDot(ibSub(x[1], x[2]), e) / le, b));
	}
	return th;
}

static double wrap_angle(double a)
{
	while (a > IB_PI) a -= 2.0 * IB_PI;
	while (a < -IB_PI) a += 2.0 * IB_PI;
	return a;
}

void ib_soft_eval_row(const ibSoftStore* ss, const ibSoftRow* r, const ibPartState* s, double* C, double* J)
{
	switch (r->kind) {
	case IB_ROW_DISTANCE: {
		ibVec3 d = ibSub(s[1].x, s[0].x);
		double l = ibLength(d);
		C[0] = r->scale * (l - r->rest);
		if (J) {
			ibVec3 u = l > 1e-300 ? ibScale(r->scale / l, d) : IB_VEC3_ZERO;
			put3(J, 6, 0, 0, ibNeg(u));
			put3(J, 6, 0, 3, u);
		}
		break;
	}
	case IB_ROW_DIHEDRAL: {
		ibVec3 x[4] = {s[0].x, s[1].x, s[2].x, s[3].x}, g[4];
		double th = ib_soft_dihedral(x, J ? g : NULL);
		C[0] = r->scale * wrap_angle(th - r->rest);
		if (J)
			for (int k = 0; k < 4; ++k) put3(J, 12, 0, 3 * k, ibScale(r->scale, g[k]));
		break;
	}
	case IB_ROW_TET_VOLUME: {
		ibVec3 a = ibSub(s[1].x, s[0].x), b = ibSub(s[2].x, s[0].x), c = ibSub(s[3].x, s[0].x);
		double V = ibDot(a, ibCross(b, c)) / 6.0;
		C[0] = r->scale * (V - r->rest);
		if (J) {
			ibVec3 g1 = ibScale(r->scale / 6.0, ibCross(b, c)), g2 = ibScale(r->scale / 6.0, ibCross(c, a));
			ibVec3 g3 = ibScale(r->scale / 6.0, ibCross(a, b));
			put3(J, 12, 0, 0, ibNeg(ibAdd(g1, ibAdd(g2, g3))));
			put3(J, 12, 0, 3, g1);
			put3(J, 12, 0, 6, g2);
			put3(J, 12, 0, 9, g3);
		}
		break;
	}
	case IB_ROW_SURFACE_VOLUME: {
		const ibSoftBody* sb = &ss->softs[r->p[0]];
		int n = sb->count;
		if (J) memset(J, 0, sizeof(double) * 3 * (size_t)n);
		double V = 0.0;
		for (int t = 0; t < sb->triCount; ++t) {
			int ia = sb->tris[3 * t], ib = sb->tris[3 * t + 1], ic = sb->tris[3 * t + 2];
			ibVec3 a = s[ia].x, b = s[ib].x, c = s[ic].x;
			V += ibDot(a, ibCross(b, c)) / 6.0;
			if (J) {
				ibVec3 ga = ibScale(r->scale / 6.0, ibCross(b, c)), gb = ibScale(r->scale / 6.0, ibCross(c, a));
				ibVec3 gc = ibScale(r->scale / 6.0, ibCross(a, b));
				for (int k = 0; k < 3; ++k) {
					J[3 * ia + k] += ibVec3_Get(ga, k);
					J[3 * ib + k] += ibVec3_Get(gb, k);
					J[3 * ic + k] += ibVec3_Get(gc, k);
				}
			}
		}
		C[0] = r->scale * (V - r->rest);
		break;
	}
	default: C[0] = 0.0; break;
	}
}

void ib_soft_ball_triangle(const double bary[4], ibVec3 local, const ibPartState* s, double* C, double* J)
{
	ibVec3 A = s[0].x, B = s[1].x, Cv = s[2].x;
	double al = bary[0], be = bary[1], ga = bary[2], de = bary[3];
	ibVec3 n = ibCross(ibSub(B, A), ibSub(Cv, A));
	double ln = ibLength(n);
	ibVec3 nh = ln > 1e-300 ? ibScale(1.0 / ln, n) : IB_VEC3_ZERO;
	ibVec3 soft = ibAdd(ibAdd(ibScale(al, A), ibScale(be, B)), ibAdd(ibScale(ga, Cv), ibScale(de, nh)));
	ibVec3 r = ibMat3_MulV(s[3].R, local); /* world lever arm (digest §24.4) */
	ibVec3 rigid = ibAdd(s[3].x, r);
	ibVec3 d = ibSub(soft, rigid);
	C[0] = d.x;
	C[1] = d.y;
	C[2] = d.z;
	if (!J) return;
	const int cols = 15;
	/* J_X = w_X I + (delta/|n|) (I - n^ n^T) [edge_X]x  (compact form of CpX - CovX, §24.3) */
	ibMat3 P = ibMat3_Identity();
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) P.m[i][k] -= ibVec3_Get(nh, i) * ibVec3_Get(nh, k);
	double f = ln > 1e-300 ? de / ln : 0.0;
	ibVec3 edges[3] = {ibSub(Cv, B), ibSub(A, Cv), ibSub(B, A)};
	double w3[3] = {al, be, ga};
	for (int k = 0; k < 3; ++k) {
		ibMat3 M = ibMat3_Scale(f, ibMat3_Mul(P, ibMat3_Skew(edges[k])));
		for (int i = 0; i < 3; ++i) M.m[i][i] += w3[k];
		put33(J, cols, 3 * k, M);
	}
	put33(J, cols, 9, ibMat3_Scale(-1.0, ibMat3_Identity()));
	put33(J, cols, 12, ibMat3_Skew(r));
}

void ib_soft_ball_vertex(ibVec3 local, const ibPartState* s, double* C, double* J)
{
	ibVec3 r = ibMat3_MulV(s[1].R, local);
	ibVec3 d = ibSub(s[0].x, ibAdd(s[1].x, r));
	C[0] = d.x;
	C[1] = d.y;
	C[2] = d.z;
	if (!J) return;
	put33(J, 9, 0, ibMat3_Identity());
	put33(J, 9, 3, ibMat3_Scale(-1.0, ibMat3_Identity()));
	put33(J, 9, 6, ibMat3_Skew(r));
}

/* User constraints see the body's user frame (origin, rotation) besides its centre of mass. */
static void user_eval(const ibWorld* w, const ibSoftCon* c, const ibPartState* s, double* C, double* J)
{
	ibConstraintState* cs = w->soft->ustates; /* sized at constraint creation (no allocation in a step) */
	for (int k = 0; k < c->count; ++k) {
		ibConstraintState* o = &cs[k];
		if (c->parts[k].isBody) {
			const ibBody* b = &w->bodies[c->parts[k].index];
			o->isBody = true;
			o->position = s[k].x;
			o->rotation = ibQuatMul(s[k].q, ibQuatConj(b->qPrincipal));
			o->origin = ibSub(s[k].x, ibRotate(o->rotation, b->localCom));
		} else {
			o->isBody = false;
			o->position = o->origin = s[k].x;
			o->rotation = IB_QUAT_IDENTITY;
		}
	}
	for (int r = 0; r < c->rows; ++r) C[r] = 0.0;
	if (J) memset(J, 0, sizeof(double) * (size_t)(c->rows * c->cols));
	c->fn(cs, c->count, C, J, c->userData);
}

void ib_soft_eval_con(const ibWorld* w, const ibSoftCon* c, const ibPartState* s, double* C, double* J)
{
	if (c->kind == IB_CON_TRIANGLE || c->kind == IB_CON_VERTEX) {
		/* anchor in the principal frame, so that a later mass-frame change keeps the user-frame point */
		const ibBody* b = &w->bodies[c->parts[c->count - 1].index];
		ibVec3 lp = ibInvRotate(b->qPrincipal, ibSub(c->localUser, b->localCom));
		if (c->kind == IB_CON_TRIANGLE)
			ib_soft_ball_triangle(c->bary, lp, s, C, J);
		else
			ib_soft_ball_vertex(lp, s, C, J);
		return;
	}
	switch (c->kind) {
	default: user_eval(w, c, s, C, J); break;
	}
}
