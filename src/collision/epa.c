/* Expanding polytope algorithm (van den Bergen 2001): penetration depth and direction of two
 * overlapping convex shapes. Starting from the GJK terminal simplex (blown up to a tetrahedron
 * by support points along the axes / around the segment / along the triangle's normals when it
 * has fewer than four points), a convex polytope inside the Minkowski difference A - B is grown
 * towards its face closest to the origin: the support point along that face's normal is added,
 * the faces it sees are removed (found by a walk over the face adjacency from the closest face,
 * so the removed region is connected) and the horizon is coned to the new point. A step whose
 * cone faces would be degenerate, face the wrong way or come closer to the origin than the
 * closest face (impossible for a convex expansion; rounding on curved surfaces) is not taken:
 * the current closest face is the result. It stops when the support plane is within
 * EPA_REL_TOL x (size of A - B) of the face. */
#include <math.h>
#include <string.h>

#include "collision/convex.h"

#define EPA_MAX_VERTICES 160
#define EPA_MAX_FACES (2 * EPA_MAX_VERTICES)
#define EPA_REL_TOL 1e-10 /* converged when support(n).n - d <= EPA_REL_TOL * scale */

typedef struct EpaFace {
	int v[3];       /* vertex indices, counter-clockwise seen from outside */
	int adj[3];     /* face across edge e = (v[e], v[e+1]) */
	int adjEdge[3]; /* index of that edge in the neighbour */
	ibVec3 n;       /* outward unit normal */
	double d;       /* n . v[0]: distance of the plane from the origin (>= 0 with the origin inside) */
	bool alive;
} EpaFace;

typedef struct Epa {
	const ibConvex *A, *B;
	bool cores;
	int nv;
	ibVec3 w[EPA_MAX_VERTICES], a[EPA_MAX_VERTICES], b[EPA_MAX_VERTICES];
	int nf;
	EpaFace f[EPA_MAX_FACES];
	int freeList[EPA_MAX_FACES];
	int nfree;
	double scale;
	ibVec3 interior; /* centroid of the initial polytope: stays inside as the polytope grows */
} Epa;

static void epa_support(Epa* e, ibVec3 dir, ibVec3* w, ibVec3* a, ibVec3* b)
{
	*a = e->cores ? ib_convex_support_core(e->A, dir) : ib_convex_support(e->A, dir);
	ibVec3 nd = ibNeg(dir);
	*b = e->cores ? ib_convex_support_core(e->B, nd) : ib_convex_support(e->B, nd);
	*w = ibSub(*a, *b);
}

static int add_vertex(Epa* e, ibVec3 w, ibVec3 a, ibVec3 b)
{
	if (e->nv >= EPA_MAX_VERTICES) return -1;
	e->w[e->nv] = w;
	e->a[e->nv] = a;
	e->b[e->nv] = b;
	return e->nv++;
}

/* New face (i, j, k); returns its index or -1 if out of space or degenerate. */
static int add_face(Epa* e, int i, int j, int k)
{
	int id;
	if (e->nfree > 0) id = e->freeList[--e->nfree];
	else if (e->nf < EPA_MAX_FACES) id = e->nf++;
	else return -1;
	EpaFace* f = &e->f[id];
	f->v[0] = i;
	f->v[1] = j;
	f->v[2] = k;
	f->adj[0] = f->adj[1] = f->adj[2] = -1;
	f->adjEdge[0] = f->adjEdge[1] = f->adjEdge[2] = -1;
	ibVec3 n = ibCross(ibSub(e->w[j], e->w[i]), ibSub(e->w[k], e->w[i]));
	double l = ibLength(n);
	f->alive = true;
	if (!(l > 0.0) || !isfinite(l)) { /* degenerate */
		f->alive = false;
		e->freeList[e->nfree++] = id;
		return -1;
	}
	f->n = ibScale(1.0 / l, n);
	/* plane offset: average over the three vertices (symmetric rounding) */
	f->d = (ibDot(f->n, e->w[i]) + ibDot(f->n, e->w[j]) + ibDot(f->n, e->w[k])) / 3.0;
	return id;
}

static void kill_face(Epa* e, int id)
{
	e->f[id].alive = false;
	e->freeList[e->nfree++] = id;
}

/* Link the edges of the faces in list[0..n) to each other where they match (opposite direction). */
static void link_faces(Epa* e, const int* list, int n)
{
	for (int p = 0; p < n; ++p) {
		EpaFace* f = &e->f[list[p]];
		for (int ei = 0; ei < 3; ++ei) {
			if (f->adj[ei] >= 0) continue;
			int u = f->v[ei], v = f->v[(ei + 1) % 3];
			for (int q = 0; q < n && f->adj[ei] < 0; ++q) {
				if (q == p) continue;
				EpaFace* g = &e->f[list[q]];
				for (int ej = 0; ej < 3; ++ej) {
					if (g->v[ej] == v && g->v[(ej + 1) % 3] == u) {
						f->adj[ei] = list[q];
						f->adjEdge[ei] = ej;
						g->adj[ej] = list[p];
						g->adjEdge[ej] = ei;
						break;
					}
				}
			}
		}
	}
}

/* Build the initial polytope from nInit points (4 or 5: tetrahedron or bipyramid given as
 * triangle + two apexes), orienting faces outward from the centroid. */
static bool build_initial(Epa* e, const int (*tri)[3], int ntri)
{
	ibVec3 c = IB_VEC3_ZERO;
	for (int i = 0; i < e->nv; ++i) c = ibAdd(c, e->w[i]);
	c = ibScale(1.0 / e->nv, c);
	e->interior = c;
	int list[8];
	for (int t = 0; t < ntri; ++t) {
		int i = tri[t][0], j = tri[t][1], k = tri[t][2];
		ibVec3 n = ibCross(ibSub(e->w[j], e->w[i]), ibSub(e->w[k], e->w[i]));
		if (ibDot(n, ibSub(e->w[i], c)) < 0.0) {
			int tmp = j;
			j = k;
			k = tmp;
		}
		int id = add_face(e, i, j, k);
		if (id < 0) return false;
		list[t] = id;
	}
	link_faces(e, list, ntri);
	for (int t = 0; t < ntri; ++t)
		for (int k = 0; k < 3; ++k)
			if (e->f[list[t]].adj[k] < 0) return false;
	return true;
}

/* Barycentric weights of p in the triangle of face f. */
static void face_weights(const Epa* e, const EpaFace* f, ibVec3 p, double* l)
{
	ibVec3 w0 = e->w[f->v[0]], w1 = e->w[f->v[1]], w2 = e->w[f->v[2]];
	ibVec3 n = ibCross(ibSub(w1, w0), ibSub(w2, w0));
	double nn = ibDot(n, n);
	l[1] = ibDot(ibCross(ibSub(w2, p), ibSub(w0, p)), n) / nn;
	l[2] = ibDot(ibCross(ibSub(w0, p), ibSub(w1, p)), n) / nn;
	l[0] = 1.0 - l[1] - l[2];
}

/* Fill out from face id: the origin projected onto its plane, barycentric weights on A and B.
 * Faces of A - B are often planar polygons split into coplanar triangles; the projection then
 * lies in one of them, which is the one used for the weights. */
static void face_result(const Epa* e, int id, ibConvexDistance* out)
{
	const EpaFace* f = &e->f[id];
	ibVec3 p = ibScale(f->d, f->n);
	double l[3];
	face_weights(e, f, p, l);
	double worst = ib_fmin(l[0], ib_fmin(l[1], l[2]));
	if (worst < -1e-12) {
		double tolD = 1e-10 * e->scale;
		for (int i = 0; i < e->nf; ++i) {
			const EpaFace* g = &e->f[i];
			if (!g->alive || i == id || !(g->d <= f->d + tolD) || !(ibDot(g->n, f->n) > 1.0 - 1e-9)) continue;
			double m[3];
			face_weights(e, g, p, m);
			double gw = ib_fmin(m[0], ib_fmin(m[1], m[2]));
			if (gw > worst) {
				worst = gw;
				id = i;
				l[0] = m[0], l[1] = m[1], l[2] = m[2];
			}
		}
		f = &e->f[id];
	}
	for (int k = 0; k < 3; ++k) l[k] = ib_fmax(l[k], 0.0);
	double sum = l[0] + l[1] + l[2];
	for (int k = 0; k < 3; ++k) l[k] /= sum;
	out->pointA = ibAdd(ibAdd(ibScale(l[0], e->a[f->v[0]]), ibScale(l[1], e->a[f->v[1]])), ibScale(l[2], e->a[f->v[2]]));
	out->pointB = ibAdd(ibAdd(ibScale(l[0], e->b[f->v[0]]), ibScale(l[1], e->b[f->v[1]])), ibScale(l[2], e->b[f->v[2]]));
	/* depth and normal of the face plane (a lower bound of the depth); the points are moved
	 * symmetrically (by rounding-level amounts once converged) so that pointA - pointB equals
	 * -depth * normal exactly */
	double depth = ib_fmax(f->d, 0.0);
	out->distance = -depth;
	out->normal = ibNeg(f->n);
	ibVec3 mid = ibScale(0.5, ibAdd(out->pointA, out->pointB));
	out->pointA = ibMulAdd(mid, 0.5 * depth, f->n);
	out->pointB = ibMulAdd(mid, -0.5 * depth, f->n);
}

/* A - B is flat (no volume) in direction n: depth 0, both points at a support point of A. */
static bool flat_result(const Epa* e, ibVec3 n, ibConvexDistance* out)
{
	out->distance = 0.0;
	out->normal = ibNormalize(n);
	if (!(ibLengthSq(out->normal) > 0.0)) out->normal = ibV3(0.0, 0.0, 1.0);
	out->pointA = e->a[0];
	out->pointB = e->a[0];
	return false;
}

bool ib_epa_penetration(const ibConvex* A, const ibConvex* B, bool cores, const ibGjkSimplex* simplex,
                        ibConvexDistance* out)
{
	Epa ebuf;
	Epa* e = &ebuf;
	e->A = A;
	e->B = B;
	e->cores = cores;
	e->nv = 0;
	e->nf = 0;
	e->nfree = 0;
	memset(out, 0, sizeof *out);

	int n0 = simplex->count < 1 ? 0 : (simplex->count > 4 ? 4 : simplex->count);
	if (n0 == 0) {
		ibVec3 w, a, b;
		epa_support(e, ibV3(1, 0, 0), &w, &a, &b);
		add_vertex(e, w, a, b);
		n0 = 1;
	} else {
		for (int i = 0; i < n0; ++i) add_vertex(e, simplex->w[i], simplex->a[i], simplex->b[i]);
	}
	/* scale of the problem: size of A - B seen from the support points along the axes */
	{
		double s = 0.0;
		static const ibVec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
		ibVec3 lo = e->w[0], hi = e->w[0];
		for (int k = 0; k < 6; ++k) {
			ibVec3 w, a, b;
			epa_support(e, axes[k], &w, &a, &b);
			lo = ibV3(ib_fmin(lo.x, w.x), ib_fmin(lo.y, w.y), ib_fmin(lo.z, w.z));
			hi = ibV3(ib_fmax(hi.x, w.x), ib_fmax(hi.y, w.y), ib_fmax(hi.z, w.z));
		}
		s = ibLength(ibSub(hi, lo));
		e->scale = s > 0.0 ? s : 1.0;
	}
	double flatTol = 1e-10 * e->scale;

	/* ---- blow the simplex up to a polytope with volume ---- */
	if (n0 == 1) {
		static const ibVec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
		double best = -1.0;
		ibVec3 bw = IB_VEC3_ZERO, ba = IB_VEC3_ZERO, bb = IB_VEC3_ZERO;
		for (int k = 0; k < 6; ++k) {
			ibVec3 w, a, b;
			epa_support(e, axes[k], &w, &a, &b);
			double dd = ibDistance(w, e->w[0]);
			if (dd > best) {
				best = dd;
				bw = w;
				ba = a;
				bb = b;
			}
		}
		if (!(best > flatTol)) return flat_result(e, ibV3(0, 0, 1), out);
		add_vertex(e, bw, ba, bb);
		n0 = 2;
	}
	if (n0 == 2) {
		ibVec3 d = ibNormalize(ibSub(e->w[1], e->w[0]));
		ibVec3 u = ibPerpendicular(d);
		ibVec3 v = ibCross(d, u);
		double best = -1.0;
		ibVec3 bw = IB_VEC3_ZERO, ba = IB_VEC3_ZERO, bb = IB_VEC3_ZERO, bdir = u;
		for (int k = 0; k < 6; ++k) { /* six directions 60 degrees apart around the segment */
			double ang = k * (IB_PI / 3.0);
			ibVec3 dir = ibAdd(ibScale(cos(ang), u), ibScale(sin(ang), v));
			ibVec3 w, a, b;
			epa_support(e, dir, &w, &a, &b);
			ibVec3 r = ibSub(w, e->w[0]);
			double dist = ibLength(ibSub(r, ibScale(ibDot(r, d), d)));
			if (dist > best) {
				best = dist;
				bw = w;
				ba = a;
				bb = b;
				bdir = dir;
			}
		}
		if (!(best > flatTol)) return flat_result(e, bdir, out);
		add_vertex(e, bw, ba, bb);
		n0 = 3;
	}
	if (n0 == 3) {
		ibVec3 n = ibNormalize(ibCross(ibSub(e->w[1], e->w[0]), ibSub(e->w[2], e->w[0])));
		ibVec3 wp, ap, bp, wm, am, bm;
		epa_support(e, n, &wp, &ap, &bp);
		epa_support(e, ibNeg(n), &wm, &am, &bm);
		double dp = ibDot(n, ibSub(wp, e->w[0])), dm = -ibDot(n, ibSub(wm, e->w[0]));
		if (!(dp > flatTol) && !(dm > flatTol)) return flat_result(e, n, out);
		/* the origin lies (within tolerance) in the triangle: a tetrahedron on its fuller side has
		 * the origin on its base face, which the expansion pushes out first */
		if (dp >= dm) add_vertex(e, wp, ap, bp);
		else add_vertex(e, wm, am, bm);
		static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
		if (!build_initial(e, tet, 4)) return flat_result(e, n, out);
	} else if (n0 == 4) {
		static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
		if (!build_initial(e, tet, 4)) {
			/* flat GJK tetrahedron (should not happen): restart from its first three points */
			ibGjkSimplex s3 = *simplex;
			s3.count = 3;
			return ib_epa_penetration(A, B, cores, &s3, out);
		}
	}

	/* ---- expansion ---- */
	double tol = EPA_REL_TOL * e->scale;
	int best = -1;
	int iterations = 0;
	int horizonFace[EPA_MAX_FACES], horizonEdge[EPA_MAX_FACES], removed[EPA_MAX_FACES];
	int stackF[3 * EPA_MAX_FACES], stackE[3 * EPA_MAX_FACES], newFaces[EPA_MAX_FACES];
	for (;;) {
		best = -1;
		double bestD = INFINITY;
		for (int i = 0; i < e->nf; ++i)
			if (e->f[i].alive && e->f[i].d < bestD) {
				bestD = e->f[i].d;
				best = i;
			}
		if (best < 0) break;
		EpaFace* f = &e->f[best];
		ibVec3 w, a, b;
		epa_support(e, f->n, &w, &a, &b);
		++iterations;
		if (ibDot(f->n, w) - f->d <= tol) break; /* support plane reached: converged */
		bool dup = false;
		for (int i = 0; i < e->nv && !dup; ++i)
			if (e->w[i].x == w.x && e->w[i].y == w.y && e->w[i].z == w.z) dup = true;
		if (dup || e->nv >= EPA_MAX_VERTICES) break;

		/* faces that see w, walking the adjacency from the closest face; horizon = edges to the
		 * faces that do not see it */
		int nh = 0, ns = 0, nr = 0;
		bool broken = false;
		f->alive = false;
		removed[nr++] = best;
		for (int k = 0; k < 3; ++k) {
			stackF[ns] = f->adj[k];
			stackE[ns] = f->adjEdge[k];
			++ns;
		}
		while (ns > 0 && !broken) {
			--ns;
			int g = stackF[ns], ge = stackE[ns];
			if (g < 0) {
				broken = true;
				break;
			}
			EpaFace* gf = &e->f[g];
			if (!gf->alive) continue;
			if (ibDot(gf->n, w) - gf->d > tol) {
				gf->alive = false;
				removed[nr++] = g;
				for (int k = 1; k <= 2; ++k) {
					int ek = (ge + k) % 3;
					stackF[ns] = gf->adj[ek];
					stackE[ns] = gf->adjEdge[ek];
					++ns;
				}
			} else if (nh < EPA_MAX_FACES) {
				horizonFace[nh] = g;
				horizonEdge[nh] = ge;
				++nh;
			} else {
				broken = true;
			}
		}
		/* the cone faces must be proper triangles facing outwards */
		if (!broken && nh >= 3) {
			for (int i = 0; i < nh && !broken; ++i) {
				const EpaFace* g = &e->f[horizonFace[i]];
				int ge = horizonEdge[i];
				ibVec3 p = e->w[g->v[ge]], q = e->w[g->v[(ge + 1) % 3]];
				ibVec3 n = ibCross(ibSub(p, q), ibSub(w, q));
				double l = ibLength(n);
				/* a proper triangle whose normal points away from the interior point, and (the new
				 * polytope contains the old one) no closer to the origin than the closest face */
				if (!(l > 1e-14 * e->scale * e->scale) || !(ibDot(n, ibSub(q, e->interior)) > 1e-12 * l * e->scale) ||
				    !(ibDot(n, q) >= (f->d - tol) * l))
					broken = true;
			}
		}
		if (broken || nh < 3 || e->nf - nr + nh > EPA_MAX_FACES) {
			for (int i = 0; i < nr; ++i) e->f[removed[i]].alive = true; /* undo; report this face */
			break;
		}
		for (int i = 0; i < nr; ++i) kill_face(e, removed[i]);
		int wi = add_vertex(e, w, a, b);
		for (int i = 0; i < nh; ++i) {
			int gi = horizonFace[i], ge = horizonEdge[i];
			int p = e->f[gi].v[ge], q = e->f[gi].v[(ge + 1) % 3];
			int id = add_face(e, q, p, wi);
			if (id < 0) { /* cannot happen after the checks above */
				broken = true;
				break;
			}
			e->f[id].adj[0] = gi;
			e->f[id].adjEdge[0] = ge;
			e->f[gi].adj[ge] = id;
			e->f[gi].adjEdge[ge] = 0;
			newFaces[i] = id;
		}
		if (broken) {
			best = -1;
			break;
		}
		link_faces(e, newFaces, nh);
	}
	if (best < 0) return flat_result(e, ibV3(0, 0, 1), out);
	face_result(e, best, out);
	out->iterations = iterations;
	return true;
}
