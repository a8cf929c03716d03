/* Planar geometry of contact regions: 2-D convex hull (monotone chain), Sutherland–Hodgman polygon
 * clipping, Cyrus–Beck segment clipping, parallel-segment overlap and the area-greedy reduction.
 * See clip.h. */
#include <math.h>
#include <stdlib.h>

#include "collision/clip.h"
#include "collision/convex.h"

/* sqrt(x^2 + y^2) without libm hypot's overflow care (coordinates are small) */
static inline double len2(double x, double y) { return sqrt(x * x + y * y); }


static double cross3(ibClipPoint o, ibClipPoint a, ibClipPoint b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

static bool less_xy(const ibClipPoint* a, const ibClipPoint* b)
{
	return a->x < b->x || (a->x == b->x && a->y < b->y);
}

int ib_hull2d(ibClipPoint* p, int n, double eps, double width)
{
	if (n <= 1) return n;
	/* stable insertion sort by (x, y): features have a few points (boxes at most 4), and qsort's
	 * calls through a function pointer cost more than the sorting */
	for (int i = 1; i < n; ++i) {
		ibClipPoint t = p[i];
		int j = i;
		for (; j > 0 && less_xy(&t, &p[j - 1]); --j) p[j] = p[j - 1];
		p[j] = t;
	}
	/* drop near-duplicates (within eps of a kept point) */
	int m = 0;
	for (int i = 0; i < n; ++i) {
		bool dup = false;
		for (int j = 0; j < m && !dup; ++j) dup = len2(p[i].x - p[j].x, p[i].y - p[j].y) <= eps;
		if (!dup) p[m++] = p[i];
	}
	if (m <= 2) return m;
	/* monotone chain; a turn counts only if the point is farther than eps from the chord */
	ibClipPoint hp[2 * 64 + 2];
	if (m > 64) m = 64; /* callers never pass more; defensive */
	int k = 0;
	for (int pass = 0; pass < 2; ++pass) {
		int start = k;
		for (int ii = 0; ii < m; ++ii) {
			int i = pass ? m - 1 - ii : ii;
			while (k >= start + 2) {
				double len = len2(p[i].x - hp[k - 2].x, p[i].y - hp[k - 2].y);
				if (cross3(hp[k - 2], hp[k - 1], p[i]) > eps * len) break; /* hp[k-1] farther than eps from the chord */
				--k;
			}
			hp[k++] = p[i];
		}
		--k; /* the last point is the first of the other chain */
	}
	if (k == 2) {
		/* collinear: keep the two extreme points */
		p[0] = hp[0];
		p[1] = hp[1];
		return len2(p[1].x - p[0].x, p[1].y - p[0].y) > eps ? 2 : 1;
	}
	/* a sliver (every vertex within width of the line of some edge) is a segment: its two
	 * farthest points */
	double minW = INFINITY;
	for (int i = 0; i < k; ++i) {
		ibClipPoint a = hp[i], b = hp[(i + 1) % k];
		double len = len2(b.x - a.x, b.y - a.y), w = 0.0;
		if (!(len > 0.0)) continue;
		/* max |cross| / len == max (|cross| / len): the division by len > 0 is monotone */
		double cmax = 0.0;
		for (int j = 0; j < k; ++j) {
			double c = fabs(cross3(a, b, hp[j]));
			cmax = c > cmax ? c : cmax; /* ib_fmax(cmax, c): cmax is never NaN */
		}
		w = cmax / len;
		minW = w < minW ? w : minW; /* ib_fmin(minW, w) */
	}
	if (minW <= width) {
		int bi = 0, bj = 1;
		double best = -1.0;
		for (int i = 0; i < k; ++i)
			for (int j = i + 1; j < k; ++j) {
				double d = len2(hp[i].x - hp[j].x, hp[i].y - hp[j].y);
				if (d > best) best = d, bi = i, bj = j;
			}
		p[0] = hp[bi];
		p[1] = hp[bj];
		return 2;
	}
	for (int i = 0; i < k; ++i) p[i] = hp[i];
	return k;
}

int ib_clip_polygon(const ibClipPoint* subj, int ns, const ibClipPoint* clip, int nc, double eps, ibClipPoint* out)
{
	enum { CAP = 2 * 64 + 8 };
	ibClipPoint buf[2][CAP];
	uint32_t edge[2][CAP]; /* code of the edge from point i to point i + 1 */
	int n = ns < CAP ? ns : CAP;
	for (int i = 0; i < n; ++i)
		edge[0][i] = ib_edge_code(subj[i].key, subj[i + 1 < n ? i + 1 : 0].key); /* no integer division */
	int cur = 0;
	const ibClipPoint* res = subj; /* the polygon so far (subj itself until the first pass: no copy) */
	for (int j = 0; j < nc && n > 0; ++j) {
		ibClipPoint a = clip[j], b = clip[j + 1 < nc ? j + 1 : 0];
		uint32_t ce = ib_edge_code(a.key, b.key);
		double len = len2(b.x - a.x, b.y - a.y);
		if (!(len > 0.0)) continue;
		const ibClipPoint* in = res;
		const uint32_t* ein = edge[cur];
		ibClipPoint* o = buf[1 - cur];
		uint32_t* eo = edge[1 - cur];
		double f[CAP]; /* signed distances to the clip line, inside >= 0 (once per point) */
		for (int i = 0; i < n; ++i) f[i] = cross3(a, b, in[i]) / len;
		int m = 0;
		for (int i = 0, ip = n - 1; i < n && m < CAP - 2; ip = i++) {
			ibClipPoint P = in[ip], Q = in[i];
			uint32_t e = ein[ip]; /* edge P -> Q */
			double fp = f[ip], fq = f[i];
			bool pin = fp >= -eps, qin = fq >= -eps;
			if (pin != qin) {
				double t = fp / (fp - fq);
				ibClipPoint I = {P.x + t * (Q.x - P.x), P.y + t * (Q.y - P.y), ib_feature_code(11u, e < ce ? e : ce, e < ce ? ce : e)};
				o[m] = I;
				eo[m] = qin ? e : ce; /* entering: continues along P -> Q; leaving: along the clip edge */
				++m;
			}
			if (qin) {
				o[m] = Q;
				eo[m] = ein[i];
				++m;
			}
		}
		n = m;
		cur = 1 - cur;
		res = o;
	}
	/* merge consecutive near-duplicates (crossings at a vertex) */
	int m = 0;
	for (int i = 0; i < n; ++i) {
		ibClipPoint q = res[i];
		if (m > 0 && len2(q.x - out[m - 1].x, q.y - out[m - 1].y) <= eps) continue;
		out[m++] = q;
	}
	while (m > 1 && len2(out[0].x - out[m - 1].x, out[0].y - out[m - 1].y) <= eps) --m;
	return m;
}

int ib_clip_segment(const ibClipPoint* s, const ibClipPoint* poly, int np, double eps, ibClipPoint* out)
{
	double t0 = 0.0, t1 = 1.0;
	uint32_t k0 = s[0].key, k1 = s[1].key;
	uint32_t se = ib_edge_code(s[0].key, s[1].key);
	for (int j = 0; j < np; ++j) {
		ibClipPoint a = poly[j], b = poly[j + 1 < np ? j + 1 : 0];
		double len = len2(b.x - a.x, b.y - a.y);
		if (!(len > 0.0)) continue;
		double f0 = cross3(a, b, s[0]) / len, f1 = cross3(a, b, s[1]) / len;
		uint32_t ce = ib_edge_code(a.key, b.key);
		uint32_t kk = ib_feature_code(11u, se < ce ? se : ce, se < ce ? ce : se);
		if (f0 < -eps && f1 < -eps) return 0;
		if (f0 < -eps) {
			double t = f0 / (f0 - f1);
			if (t > t0) t0 = t, k0 = kk;
		} else if (f1 < -eps) {
			double t = f0 / (f0 - f1);
			if (t < t1) t1 = t, k1 = kk;
		}
	}
	if (t0 > t1) return 0;
	out[0] = (ibClipPoint){s[0].x + t0 * (s[1].x - s[0].x), s[0].y + t0 * (s[1].y - s[0].y), k0};
	out[1] = (ibClipPoint){s[0].x + t1 * (s[1].x - s[0].x), s[0].y + t1 * (s[1].y - s[0].y), k1};
	return 2;
}

/* Closest point of segment b to p, with parameter. */
static ibClipPoint closest_on(const ibClipPoint* b, ibClipPoint p)
{
	double ux = b[1].x - b[0].x, uy = b[1].y - b[0].y, l2 = ux * ux + uy * uy;
	double t = l2 > 0.0 ? ((p.x - b[0].x) * ux + (p.y - b[0].y) * uy) / l2 : 0.0;
	t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
	return (ibClipPoint){b[0].x + t * ux, b[0].y + t * uy, 0u};
}

int ib_overlap_segments(const ibClipPoint* a, const ibClipPoint* b, double lat, ibClipPoint* out, ibClipPoint* outB)
{
	double ux = a[1].x - a[0].x, uy = a[1].y - a[0].y, l2 = ux * ux + uy * uy;
	if (!(l2 > 0.0)) return 0;
	double tb0 = ((b[0].x - a[0].x) * ux + (b[0].y - a[0].y) * uy) / l2;
	double tb1 = ((b[1].x - a[0].x) * ux + (b[1].y - a[0].y) * uy) / l2;
	uint32_t ea = ib_edge_code(a[0].key, a[1].key), eb = ib_edge_code(b[0].key, b[1].key);
	/* ends of the overlap on a: an end of a (its vertex code) or of b (b's vertex on a's edge) */
	double t0 = 0.0, t1 = 1.0;
	double bl = ib_fmin(tb0, tb1), bh = ib_fmax(tb0, tb1);
	bool endB0 = bl > t0, endB1 = bh < t1;
	if (endB0) t0 = bl;
	if (endB1) t1 = bh;
	if (t0 > t1) return 0;
	out[0] = (ibClipPoint){a[0].x + t0 * ux, a[0].y + t0 * uy, 0u};
	out[1] = (ibClipPoint){a[0].x + t1 * ux, a[0].y + t1 * uy, 0u};
	bool parallel = true;
	for (int i = 0; i < 2; ++i) {
		outB[i] = closest_on(b, out[i]);
		parallel = parallel && len2(outB[i].x - out[i].x, outB[i].y - out[i].y) <= lat;
	}
	if (parallel) { /* the keys of the two ends (only here: a crossing has its own) */
		out[0].key = endB0 ? ib_feature_code(13u, tb0 <= tb1 ? b[0].key : b[1].key, ea) : ib_feature_code(13u, a[0].key, eb);
		out[1].key = endB1 ? ib_feature_code(13u, tb0 <= tb1 ? b[1].key : b[0].key, ea) : ib_feature_code(13u, a[1].key, eb);
		outB[0].key = out[0].key;
		outB[1].key = out[1].key;
		return 2;
	}
	/* crossing edges: the one point where they cross */
	double vx = b[1].x - b[0].x, vy = b[1].y - b[0].y;
	double den = ux * vy - uy * vx;
	if (!(fabs(den) > 0.0)) return 0;
	double wx = b[0].x - a[0].x, wy = b[0].y - a[0].y;
	double s = (wx * vy - wy * vx) / den, t = (wx * uy - wy * ux) / den;
	double tolA = lat / sqrt(l2), tolB = lat / ib_fmax(len2(vx, vy), 1e-300);
	if (s < -tolA || s > 1.0 + tolA || t < -tolB || t > 1.0 + tolB) return 0;
	s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
	out[0] = (ibClipPoint){a[0].x + s * ux, a[0].y + s * uy, ib_feature_code(11u, ea < eb ? ea : eb, ea < eb ? eb : ea)};
	outB[0] = closest_on(b, out[0]);
	outB[0].key = out[0].key;
	return 1;
}

int ib_reduce_region(const ibClipPoint* p, const double* depthKey, int n, int maxKeep, int* keep)
{
	if (n <= maxKeep) {
		for (int i = 0; i < n; ++i) keep[i] = i;
		return n;
	}
	bool chosen[2 * 64 + 8] = {false};
	int deep = 0;
	for (int i = 1; i < n; ++i)
		if (depthKey[i] < depthKey[deep]) deep = i;
	chosen[deep] = true;
	int count = 1;
	while (count < maxKeep) {
		int best = -1;
		double bestGain = -1.0;
		for (int c = 0; c < n; ++c) {
			if (chosen[c]) continue;
			/* chosen neighbours of c in cyclic order */
			int prev = c, next = c;
			do prev = (prev + n - 1) % n; while (!chosen[prev]);
			do next = (next + 1) % n; while (!chosen[next]);
			double gain = count == 1 ? len2(p[c].x - p[deep].x, p[c].y - p[deep].y)
			                         : 0.5 * cross3(p[prev], p[c], p[next]);
			if (gain > bestGain) bestGain = gain, best = c;
		}
		if (best < 0) break;
		chosen[best] = true;
		++count;
	}
	int m = 0;
	for (int i = 0; i < n; ++i)
		if (chosen[i]) keep[m++] = i;
	return m;
}
