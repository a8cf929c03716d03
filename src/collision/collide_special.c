/* Exact closed-form narrowphase cases (Chapter 4; spheres as in §4.5.1.2): sphere-sphere,
 * sphere-box (closest point by clamping in the box frame; penetration through the nearest face
 * when the centre is inside), sphere-capsule (point-segment), sphere-cylinder (the same in the
 * cylinder frame, radial/axial), capsule-capsule (segment-segment)
 * and the box-box separating-axis test on the 15 candidate axes, whose minimum overlap is the
 * exact penetration depth of two boxes (the minimum translational distance of two polytopes is
 * attained at a face normal of either or at the cross product of an edge pair). All results
 * satisfy pointA - pointB == distance * normal, with the normal pointing from B to A. */
#include <math.h>

#include "collision/convex.h"

static inline double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Result of two cores (points) at closest points p (on A's core) and q (on B's core), swept by the
 * radii ra and rb; fallback is the normal used when p == q. */
static ibConvexDistance swept_result(ibVec3 p, ibVec3 q, double ra, double rb, ibVec3 fallback)
{
	ibConvexDistance r;
	ibVec3 d = ibSub(p, q);
	double l = ibLength(d);
	r.normal = l > 0.0 ? ibScale(1.0 / l, d) : fallback;
	r.distance = (l > 0.0 ? l : 0.0) - ra - rb;
	r.pointA = ibMulAdd(p, -ra, r.normal);
	r.pointB = ibMulAdd(q, rb, r.normal);
	r.iterations = 0;
	return r;
}

ibConvexDistance ib_collide_sphere_sphere(const ibConvex* a, const ibConvex* b)
{
	return swept_result(a->position, b->position, a->radius, b->radius, ibV3(0.0, 0.0, 1.0));
}

ibConvexDistance ib_collide_sphere_box(const ibConvex* sphere, const ibConvex* box)
{
	ibVec3 p = ib_convex_to_local(box, sphere->position);
	ibVec3 h = box->halfExtents;
	double r = sphere->radius;
	ibConvexDistance res;
	res.iterations = 0;
	if (fabs(p.x) > h.x || fabs(p.y) > h.y || fabs(p.z) > h.z) {
		ibVec3 q = ibV3(clampd(p.x, -h.x, h.x), clampd(p.y, -h.y, h.y), clampd(p.z, -h.z, h.z));
		ibVec3 d = ibSub(p, q);
		double l = ibLength(d);
		res.normal = ibMat3_MulV(box->R, ibScale(1.0 / l, d));
		res.distance = l - r;
		res.pointB = ib_convex_to_world(box, q);
		res.pointA = ibMulAdd(sphere->position, -r, res.normal);
		return res;
	}
	/* centre inside (or on) the box: leave through the nearest face */
	double pv[3] = {p.x, p.y, p.z}, hv[3] = {h.x, h.y, h.z};
	int k = 0;
	double best = hv[0] - fabs(pv[0]);
	for (int i = 1; i < 3; ++i) {
		double t = hv[i] - fabs(pv[i]);
		if (t < best) {
			best = t;
			k = i;
		}
	}
	double s = pv[k] >= 0.0 ? 1.0 : -1.0;
	ibVec3 nl = IB_VEC3_ZERO;
	if (k == 0) nl.x = s;
	else if (k == 1) nl.y = s;
	else nl.z = s;
	pv[k] = s * hv[k];
	res.normal = ibMat3_MulV(box->R, nl);
	res.distance = -(best + r);
	res.pointB = ib_convex_to_world(box, ibV3(pv[0], pv[1], pv[2]));
	res.pointA = ibMulAdd(sphere->position, -r, res.normal);
	return res;
}

ibConvexDistance ib_collide_sphere_capsule(const ibConvex* sphere, const ibConvex* capsule)
{
	/* closest point of the capsule's segment, in the capsule frame (no cancellation of positions) */
	ibVec3 p = ib_convex_to_local(capsule, sphere->position);
	ibVec3 ql = ibV3(0.0, 0.0, clampd(p.z, -capsule->halfLength, capsule->halfLength));
	ibVec3 dl = ibSub(p, ql);
	double l = ibLength(dl);
	ibVec3 nl = l > 0.0 ? ibScale(1.0 / l, dl) : ibV3(1.0, 0.0, 0.0);
	ibConvexDistance r;
	r.iterations = 0;
	r.normal = ibMat3_MulV(capsule->R, nl);
	r.distance = l - sphere->radius - capsule->radius;
	r.pointA = ibMulAdd(sphere->position, -sphere->radius, r.normal);
	r.pointB = ib_convex_to_world(capsule, ibMulAdd(ql, capsule->radius, nl));
	return r;
}

ibConvexDistance ib_collide_sphere_cylinder(const ibConvex* sphere, const ibConvex* cylinder)
{
	ibVec3 p = ib_convex_to_local(cylinder, sphere->position);
	double R = cylinder->radius, h = cylinder->halfLength, r = sphere->radius;
	double rho = sqrt(p.x * p.x + p.y * p.y);
	ibVec3 radial = rho > 0.0 ? ibV3(p.x / rho, p.y / rho, 0.0) : ibV3(1.0, 0.0, 0.0);
	ibVec3 q, nl;
	double dc; /* signed distance of the centre to the cylinder */
	if (rho <= R && fabs(p.z) <= h) { /* centre inside: leave through the nearer of side and cap */
		double side = R - rho, cap = h - fabs(p.z);
		if (side < cap) {
			nl = radial;
			q = ibV3(R * radial.x, R * radial.y, p.z);
			dc = -side;
		} else {
			nl = ibV3(0.0, 0.0, p.z >= 0.0 ? 1.0 : -1.0);
			q = ibV3(p.x, p.y, p.z >= 0.0 ? h : -h);
			dc = -cap;
		}
	} else {
		double rc = rho < R ? rho : R;
		q = ibV3(rc * radial.x, rc * radial.y, clampd(p.z, -h, h));
		ibVec3 d = ibSub(p, q);
		dc = ibLength(d);
		nl = ibScale(1.0 / dc, d);
	}
	ibConvexDistance res;
	res.iterations = 0;
	res.normal = ibMat3_MulV(cylinder->R, nl);
	res.distance = dc - r;
	res.pointB = ib_convex_to_world(cylinder, q);
	res.pointA = ibMulAdd(sphere->position, -r, res.normal);
	return res;
}

void ib_segment_closest_params(ibVec3 p0, ibVec3 p1, ibVec3 q0, ibVec3 q1, double* sOut, double* tOut)
{
	ibVec3 d1 = ibSub(p1, p0), d2 = ibSub(q1, q0), r = ibSub(p0, q0);
	double a = ibDot(d1, d1), e = ibDot(d2, d2), f = ibDot(d2, r);
	double tiny = 1e-300;
	double s = 0.0, t = 0.0;
	if (a <= tiny && e <= tiny) {
		s = t = 0.0;
	} else if (a <= tiny) {
		t = clampd(f / e, 0.0, 1.0);
	} else {
		double c = ibDot(d1, r);
		if (e <= tiny) {
			s = clampd(-c / a, 0.0, 1.0);
		} else {
			double b = ibDot(d1, d2);
			double denom = a * e - b * b;
			if (denom > 1e-14 * a * e) {
				s = clampd((b * f - c * e) / denom, 0.0, 1.0);
			} else {
				/* parallel: middle of the overlap of [0,1] with Q's parameter interval on P */
				double s0 = -c / a, s1 = (b - c) / a;
				double lo = ib_fmax(0.0, ib_fmin(s0, s1)), hi = ib_fmin(1.0, ib_fmax(s0, s1));
				s = lo <= hi ? 0.5 * (lo + hi) : (ib_fmax(s0, s1) < 0.0 ? 0.0 : 1.0);
			}
			t = (b * s + f) / e;
			if (t < 0.0) {
				t = 0.0;
				s = clampd(-c / a, 0.0, 1.0);
			} else if (t > 1.0) {
				t = 1.0;
				s = clampd((b - c) / a, 0.0, 1.0);
			}
		}
	}
	*sOut = s;
	*tOut = t;
}

ibConvexDistance ib_collide_capsule_capsule(const ibConvex* a, const ibConvex* b)
{
	ibVec3 ua = ib_mat3_col(&a->R, 2), ub = ib_mat3_col(&b->R, 2);
	ibVec3 p0 = ibMulAdd(a->position, -a->halfLength, ua), p1 = ibMulAdd(a->position, a->halfLength, ua);
	ibVec3 q0 = ibMulAdd(b->position, -b->halfLength, ub), q1 = ibMulAdd(b->position, b->halfLength, ub);
	double s, t;
	ib_segment_closest_params(p0, p1, q0, q1, &s, &t);
	ibVec3 p = ibAdd(p0, ibScale(s, ibSub(p1, p0)));
	ibVec3 q = ibAdd(q0, ibScale(t, ibSub(q1, q0)));
	/* crossing cores: the depth is ra + rb along the normal of both axes */
	ibVec3 fb = ibCross(ua, ub);
	fb = ibLengthSq(fb) > 1e-24 ? ibNormalize(fb) : ibPerpendicular(ua);
	if (ibDot(fb, ibSub(a->position, b->position)) < 0.0) fb = ibNeg(fb);
	return swept_result(p, q, a->radius, b->radius, fb);
}

/* Support feature of a box along dir: the vertex, or the centre of the edge/face when dir is
 * (within 1e-10) perpendicular to one or two box axes. */
static ibVec3 box_support_feature(const ibConvex* box, ibVec3 dir)
{
	ibVec3 p = box->position;
	double h[3] = {box->halfExtents.x, box->halfExtents.y, box->halfExtents.z};
	for (int k = 0; k < 3; ++k) {
		ibVec3 ax = ib_mat3_col(&box->R, k);
		double c = ibDot(ax, dir);
		if (fabs(c) > 1e-10) p = ibMulAdd(p, c > 0.0 ? h[k] : -h[k], ax);
	}
	return p;
}

/* Corners of a box's support feature along dir (vertex: 1, edge: 2, face: 4, in polygon order): the axes
 * within 1e-10 of perpendicular to dir are free. */
static int box_support_polygon(const ibConvex* box, const ibVec3 ax[3], const double h[3], ibVec3 dir, ibVec3* out)
{
	ibVec3 c = box->position;
	int freeAx[3], nf = 0;
	for (int k = 0; k < 3; ++k) {
		double d = ibDot(ax[k], dir);
		if (fabs(d) > 1e-10) c = ibMulAdd(c, d > 0.0 ? h[k] : -h[k], ax[k]);
		else freeAx[nf++] = k;
	}
	if (nf == 0) {
		out[0] = c;
		return 1;
	}
	ibVec3 u = ibScale(h[freeAx[0]], ax[freeAx[0]]);
	if (nf == 1) {
		out[0] = ibSub(c, u), out[1] = ibAdd(c, u);
		return 2;
	}
	ibVec3 v = ibScale(h[freeAx[1]], ax[freeAx[1]]);
	out[0] = ibSub(ibSub(c, u), v), out[1] = ibSub(ibAdd(c, u), v);
	out[2] = ibAdd(ibAdd(c, u), v), out[3] = ibAdd(ibSub(c, u), v);
	return 4;
}

/* Clip the convex polygon p[0..n) (n <= 4; a segment when n == 2) to the slab |dot(x - o, u)| <= e;
 * returns the new count (one more per clipped side: at most 8 after two slabs of a quadrilateral). */
static int clip_slab(const ibVec3* p, int n, ibVec3 o, ibVec3 u, double e, ibVec3* out)
{
	ibVec3 tmp[8];
	int m = n;
	const ibVec3* src = p;
	for (int side = 0; side < 2; ++side) {
		double sg = side == 0 ? 1.0 : -1.0;
		ibVec3* dst = side == 0 ? tmp : out;
		int k = 0;
		int edges = m == 2 ? 1 : m; /* a segment has one edge */
		if (m == 1) {
			if (sg * ibDot(ibSub(src[0], o), u) <= e) dst[k++] = src[0];
		} else {
			double dv[8]; /* the signed heights over the slab side, once per point */
			for (int i = 0; i < m; ++i) dv[i] = sg * ibDot(ibSub(src[i], o), u) - e;
			for (int i = 0; i < edges; ++i) {
				int i1 = i + 1 < m ? i + 1 : 0; /* no integer division */
				ibVec3 a = src[i], b = src[i1];
				double da = dv[i], db = dv[i1];
				if (da <= 0.0) dst[k++] = a;
				if ((da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0)) dst[k++] = ibAdd(a, ibScale(da / (da - db), ibSub(b, a)));
				if (m == 2 && db <= 0.0) dst[k++] = b;
			}
		}
		if (m == 2 && k > 2) k = 2; /* cannot happen for a segment; defensive */
		m = k;
		src = dst;
		if (m == 0) break;
	}
	return m;
}

/* Witness of a face axis: the incident box's support feature along dir (into the reference box),
 * clipped to the reference face's rectangle (the two other axes of the reference box); the centroid of
 * what remains is on the incident box's surface and above the reference face. Returns false if the
 * clipping leaves nothing (rounding at a tie). */
static inline __attribute__((always_inline)) bool face_witness(const ibConvex* ref, const ibVec3 ra[3],
                                                                 const double rh[3], int i, const ibConvex* inc,
                                                                 const ibVec3 ia[3], const double ih[3], ibVec3 dir,
                                                                 ibVec3* point)
{
	ibVec3 f[4], c1[8], c2[8];
	int n = box_support_polygon(inc, ia, ih, dir, f);
	int j = (i + 1) % 3, k = (i + 2) % 3;
	double tol = 1e-12 * (rh[0] + rh[1] + rh[2]);
	int m = clip_slab(f, n, ref->position, ra[j], rh[j] + tol, c1);
	if (m == 0) return false;
	m = clip_slab(c1, m, ref->position, ra[k], rh[k] + tol, c2);
	if (m == 0) return false;
	ibVec3 s = IB_VEC3_ZERO;
	for (int q = 0; q < m; ++q) s = ibAdd(s, c2[q]);
	*point = ibScale(1.0 / m, s);
	return true;
}

/* Witness of a face axis (kind 0: face i of A, 1: face i of B) with the normal n (B -> A) and overlap ov.
 * One call of face_witness with the roles chosen by kind (inlined: its point stays in registers, where
 * a point returned through memory and copied on stalled store forwarding), the other point along n. */
static bool face_axis_witness(const ibConvex* a, const ibVec3 A[3], const double ha[3], const ibConvex* b,
                              const ibVec3 B[3], const double hb[3], int kind, int i, ibVec3 n, double ov,
                              ibConvexDistance* out)
{
	/* kind 0, face of A: B's deepest feature goes into A; kind 1, face of B: A's goes into B */
	const bool faceA = kind == 0;
	ibVec3 p;
	if (!face_witness(faceA ? a : b, faceA ? A : B, faceA ? ha : hb, i, faceA ? b : a, faceA ? B : A, faceA ? hb : ha,
	                  faceA ? n : ibNeg(n), &p))
		return false;
	out->iterations = 0;
	out->distance = -ov;
	out->normal = n;
	if (faceA) {
		out->pointB = p;
		out->pointA = ibMulAdd(p, -ov, n);
	} else {
		out->pointA = p;
		out->pointB = ibMulAdd(p, ov, n);
	}
	return true;
}

/* Witness of the edge axis A[i] x B[j] with the normal n (B -> A) and overlap ov: the closest points of
 * the two support edges' lines. At the minimum they lie inside both edges (the axis is then a face
 * normal of the Minkowski difference); otherwise (a rounding tie with a face axis) returns false. */
static bool edge_witness(const ibConvex* a, const ibVec3 A[3], const double ha[3], const ibConvex* b,
                         const ibVec3 B[3], const double hb[3], int i, int j, ibVec3 n, double ov,
                         ibConvexDistance* out)
{
	ibVec3 PA = a->position, PB = b->position;
	for (int k = 0; k < 3; ++k) {
		/* the signs selected by index (no branch) */
		const double sa[2] = {ha[k], -ha[k]}, sb[2] = {-hb[k], hb[k]};
		if (k != i) PA = ibMulAdd(PA, sa[ibDot(A[k], n) > 0.0], A[k]);
		if (k != j) PB = ibMulAdd(PB, sb[ibDot(B[k], n) > 0.0], B[k]);
	}
	ibVec3 d = ibSub(PA, PB);
	double c = ibDot(A[i], B[j]);
	double denom = 1.0 - c * c;
	if (!(denom > 0.0)) return false;
	double da = ibDot(A[i], d), db = ibDot(B[j], d);
	double s = (c * db - da) / denom, t = (db - c * da) / denom;
	double tol = 1e-9 * (ha[i] + hb[j]);
	if (!(fabs(s) <= ha[i] + tol && fabs(t) <= hb[j] + tol)) return false;
	out->iterations = 0; /* written field by field (no copy of a struct built on the stack) */
	out->distance = -ov;
	out->normal = n;
	ibVec3 pA = ibMulAdd(PA, clampd(s, -ha[i], ha[i]), A[i]);
	out->pointA = pA;
	out->pointB = ibMulAdd(pA, ov, n);
	return true;
}

/* The axis search: every candidate axis in the frame of A through the relative rotation C = A^T B
 * (C[i][j] = A_i . B_j). For the edge axis L = A_i x B_j the projections are |A_k . L| = |C[m][j]|
 * and |B_k . L| = |C[i][m]| ({k, m} the two other indices), divided by |L|. */
/* Axis codes: 0..2 faces of A, 3..5 faces of B, 6 + 3 i + j the edge pair A_i x B_j. */
static int sat_search(const ibConvex* a, const ibConvex* b, double tolerance, ibBoxSat* st, int* reject);

int ib_box_box_sat_search(const ibConvex* a, const ibConvex* b, double tolerance, ibBoxSat* st)
{
	return sat_search(a, b, tolerance, st, NULL);
}

/* The overlap along one axis, with the search's arithmetic term by term (so that a rejection here is one
 * there); false for a degenerate edge axis, which the search skips. */
static bool sat_axis_overlap(const ibConvex* a, const ibConvex* b, int axis, double* ov)
{
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	ibVec3 T = ibSub(a->position, b->position);
	if (axis < 3) {
		int i = axis;
		ibVec3 Ai = ib_mat3_col(&a->R, i);
		double X0 = fabs(ibDot(Ai, ib_mat3_col(&b->R, 0))), X1 = fabs(ibDot(Ai, ib_mat3_col(&b->R, 1))),
		       X2 = fabs(ibDot(Ai, ib_mat3_col(&b->R, 2)));
		double ra = ha[i], rb = hb[0] * X0 + hb[1] * X1 + hb[2] * X2, t = ibDot(T, Ai);
		*ov = ra + rb - fabs(t);
		return true;
	}
	if (axis < 6) {
		int i = axis - 3;
		ibVec3 Bi = ib_mat3_col(&b->R, i);
		double X0 = fabs(ibDot(ib_mat3_col(&a->R, 0), Bi)), X1 = fabs(ibDot(ib_mat3_col(&a->R, 1), Bi)),
		       X2 = fabs(ibDot(ib_mat3_col(&a->R, 2), Bi));
		double ra = ha[0] * X0 + ha[1] * X1 + ha[2] * X2, rb = hb[i], t = ibDot(T, Bi);
		*ov = ra + rb - fabs(t);
		return true;
	}
	int i = (axis - 6) / 3, j = (axis - 6) % 3;
	int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
	ibVec3 Ai = ib_mat3_col(&a->R, i), Bj = ib_mat3_col(&b->R, j);
	ibVec3 L = ibCross(Ai, Bj);
	double l = ibLength(L);
	if (!(l > 1e-9)) return false;
	double inv = 1.0 / l;
	double Xi2j = fabs(ibDot(ib_mat3_col(&a->R, i2), Bj)), Xi1j = fabs(ibDot(ib_mat3_col(&a->R, i1), Bj));
	double Xij2 = fabs(ibDot(Ai, ib_mat3_col(&b->R, j2))), Xij1 = fabs(ibDot(Ai, ib_mat3_col(&b->R, j1)));
	double ra = (ha[i1] * Xi2j + ha[i2] * Xi1j) * inv;
	double rb = (hb[j1] * Xij2 + hb[j2] * Xij1) * inv;
	double t = ibDot(T, L) * inv;
	*ov = ra + rb - fabs(t);
	return true;
}

int ib_collide_box_box_sat_cached(const ibConvex* a, const ibConvex* b, double tolerance, int* axis,
                                  ibConvexDistance* out)
{
	double ov;
	if (axis && *axis >= 1 && *axis <= 15 && sat_axis_overlap(a, b, *axis - 1, &ov) && ov < -tolerance) return -1;
	ibBoxSat st;
	int reject = -1;
	int r = sat_search(a, b, tolerance, &st, &reject);
	if (axis) *axis = r < 0 ? reject + 1 : 0;
	if (r == 1) ib_box_box_sat_witness(a, b, &st, out);
	return r;
}

static int sat_search(const ibConvex* a, const ibConvex* b, double tolerance, ibBoxSat* st, int* reject)
{
	ibVec3 A[3], B[3];
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	for (int k = 0; k < 3; ++k) {
		A[k] = ib_mat3_col(&a->R, k);
		B[k] = ib_mat3_col(&b->R, k);
	}
	ibVec3 T = ibSub(a->position, b->position);
	double C[3][3], X[3][3], tA[3], tB[3];
	for (int i = 0; i < 3; ++i) {
		tA[i] = ibDot(T, A[i]);
		tB[i] = ibDot(T, B[i]);
		for (int j = 0; j < 3; ++j) {
			C[i][j] = ibDot(A[i], B[j]);
			X[i][j] = fabs(C[i][j]);
		}
	}
	bool apart = false;
	double best = INFINITY;
	int bestKind = -1; /* kind 0: face of A (i), 1: face of B (j), 2: edges (i, j) */
	double bestFace = INFINITY, bestEdge = INFINITY; /* the best face axis and the best edge axis */
	int bestFaceKind = 0, bestFaceI = 0, bestEdgeI = 0, bestEdgeJ = 0;
	ibVec3 bestFaceN = IB_VEC3_ZERO, bestEdgeN = IB_VEC3_ZERO;

	/* face axes */
	for (int kind = 0; kind < 2; ++kind) {
		for (int i = 0; i < 3; ++i) {
			double ra, rb, t;
			if (kind == 0) {
				ra = ha[i];
				rb = hb[0] * X[i][0] + hb[1] * X[i][1] + hb[2] * X[i][2];
				t = tA[i];
			} else {
				ra = ha[0] * X[0][i] + ha[1] * X[1][i] + ha[2] * X[2][i];
				rb = hb[i];
				t = tB[i];
			}
			double ov = ra + rb - fabs(t);
			if (ov < -tolerance) { /* separated by more than the tolerance */
				if (reject) *reject = 3 * kind + i;
				return -1;
			}
			if (ov < 0.0) apart = true;     /* separating axis */
			if (apart) continue;
			if (ov < bestFace) {
				ibVec3 L = kind == 0 ? A[i] : B[i];
				bestFace = ov;
				bestFaceKind = kind;
				bestFaceI = i;
				bestFaceN = t >= 0.0 ? L : ibNeg(L);
			}
			if (ov < best) {
				best = ov;
				bestKind = kind;
			}
		}
	}
	/* edge axes */
	for (int i = 0; i < 3; ++i) {
		int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
		for (int j = 0; j < 3; ++j) {
			int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
			ibVec3 L = ibCross(A[i], B[j]);
			double l = ibLength(L);
			if (!(l > 1e-9)) continue; /* parallel edges: covered by the face axes */
			double inv = 1.0 / l;
			double ra = (ha[i1] * X[i2][j] + ha[i2] * X[i1][j]) * inv;
			double rb = (hb[j1] * X[i][j2] + hb[j2] * X[i][j1]) * inv;
			double t = ibDot(T, L) * inv;
			double ov = ra + rb - fabs(t);
			if (ov < -tolerance) {
				if (reject) *reject = 6 + 3 * i + j;
				return -1;
			}
			if (ov < 0.0) apart = true;
			if (apart) continue;
			if (ov < bestEdge) {
				L = ibScale(inv, L);
				bestEdge = ov;
				bestEdgeI = i;
				bestEdgeJ = j;
				bestEdgeN = t >= 0.0 ? L : ibNeg(L);
			}
			/* prefer face axes on (near) ties: edge axes must be strictly better */
			if (ov < best - 1e-12 * (ra + rb)) {
				best = ov;
				bestKind = 2;
			}
		}
	}
	if (apart) return 0;
	st->bestKind = bestKind;
	st->faceKind = bestFaceKind;
	st->faceI = bestFaceI;
	st->edgeI = bestEdgeI;
	st->edgeJ = bestEdgeJ;
	st->faceOverlap = bestFace;
	st->edgeOverlap = bestEdge;
	st->faceNormal = bestFaceN;
	st->edgeNormal = bestEdgeN;
	/* the axis whose witness is used first (and normally): see ib_box_box_sat_witness */
	double scale = ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2];
	st->edgeOk = bestEdge <= bestFace + 1e-9 * scale;
	return 1;
}

void ib_box_box_sat_witness(const ibConvex* a, const ibConvex* b, const ibBoxSat* st, ibConvexDistance* out)
{
	ibVec3 A[3], B[3];
	double ha[3] = {a->halfExtents.x, a->halfExtents.y, a->halfExtents.z};
	double hb[3] = {b->halfExtents.x, b->halfExtents.y, b->halfExtents.z};
	for (int k = 0; k < 3; ++k) {
		A[k] = ib_mat3_col(&a->R, k);
		B[k] = ib_mat3_col(&b->R, k);
	}
	/* the witness points of the best axis; at a rounding tie between a face axis and an edge axis
	 * (nearly aligned boxes) the chosen axis may have no exact witness, then the other one is used */
	bool edgeFirst = st->bestKind == 2;
	for (int pass = 0; pass < 2; ++pass) {
		bool edge = (pass == 0) == edgeFirst;
		if (edge ? st->edgeOk &&
		               edge_witness(a, A, ha, b, B, hb, st->edgeI, st->edgeJ, st->edgeNormal, st->edgeOverlap, out)
		         : face_axis_witness(a, A, ha, b, B, hb, st->faceKind, st->faceI, st->faceNormal, st->faceOverlap,
		                             out))
			return;
	}
	/* no exact witness (cannot happen in exact arithmetic): the deepest feature's centre */
	ibConvexDistance r;
	r.iterations = 0;
	r.distance = -st->faceOverlap;
	r.normal = st->faceNormal;
	if (st->faceKind == 0) {
		r.pointB = box_support_feature(b, st->faceNormal);
		r.pointA = ibMulAdd(r.pointB, -st->faceOverlap, st->faceNormal);
	} else {
		r.pointA = box_support_feature(a, ibNeg(st->faceNormal));
		r.pointB = ibMulAdd(r.pointA, st->faceOverlap, st->faceNormal);
	}
	*out = r;
}

int ib_collide_box_box_sat_tol(const ibConvex* a, const ibConvex* b, double tolerance, ibConvexDistance* out)
{
	ibBoxSat st;
	int r = ib_box_box_sat_search(a, b, tolerance, &st);
	if (r == 1) ib_box_box_sat_witness(a, b, &st, out);
	return r;
}

bool ib_collide_box_box_sat(const ibConvex* a, const ibConvex* b, ibConvexDistance* out)
{
	return ib_collide_box_box_sat_tol(a, b, 0.0, out) == 1;
}
