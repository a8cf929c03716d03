/* Planar geometry of contact regions (§4.5.2.1): convex hulls of projected features, polygon
 * clipping (Sutherland–Hodgman), segment clipping, interval overlap and the reduction of a region
 * to a bounded number of points. All in 2-D coordinates of the contact plane. Internal. */
#ifndef IBDYN_SRC_CLIP_H
#define IBDYN_SRC_CLIP_H

#include <stdbool.h>
#include <stdint.h>

/* A point of the contact plane with the feature key it stems from. */
typedef struct ibClipPoint {
	double x, y;
	uint32_t key; /* vertex code, or the combination of the two edges that cross there */
} ibClipPoint;

/* Hash-combination of feature codes (never 0); inline: the contact regions make several per point. */
static inline uint32_t ib_feature_code(uint32_t salt, uint32_t a, uint32_t b)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)salt << 56);
	h ^= (uint64_t)a + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= (uint64_t)b + 0x8CB92BA72F3D8DD7ull + (h << 6) + (h >> 2);
	h *= 0x94D049BB133111EBull;
	h ^= h >> 31;
	uint32_t k = (uint32_t)(h ^ (h >> 32));
	return k ? k : 1u;
}

/* Code of the edge between vertices with codes a and b (order-independent). */
static inline uint32_t ib_edge_code(uint32_t a, uint32_t b) { return ib_feature_code(7u, a < b ? a : b, a < b ? b : a); }

/* Convex hull of n points in place, counter-clockwise, without duplicates (points within eps)
 * and collinear points; returns the count (1: a point, 2: a segment, >= 3: a polygon). A polygon
 * narrower than width is returned as the segment between its two farthest points. */
int ib_hull2d(ibClipPoint* p, int n, double eps, double width);

/* Sutherland–Hodgman: the convex CCW polygon subj clipped by the convex CCW polygon clip (both
 * >= 3 vertices). Vertices of subj inside clip keep their keys; crossings get the combination of
 * the two edges. Writes at most ns + nc points to out (not overlapping subj); returns the count. */
int ib_clip_polygon(const ibClipPoint* subj, int ns, const ibClipPoint* clip, int nc, double eps, ibClipPoint* out);

/* The segment s[0] s[1] clipped by the convex CCW polygon (>= 3 vertices): writes 0 or 2 points. */
int ib_clip_segment(const ibClipPoint* s, const ibClipPoint* poly, int np, double eps, ibClipPoint* out);

/* Two segments of the plane: if parallel and overlapping (lateral distance <= lat), the end points
 * of the overlap on segment a (out[i]) and their closest points on segment b (outB[i]): 2; if
 * crossing (within lat), the crossing point: 1; else 0. */
int ib_overlap_segments(const ibClipPoint* a, const ibClipPoint* b, double lat, ibClipPoint* out, ibClipPoint* outB);

/* Indices of at most maxKeep points of the convex CCW region (p, n) that keep the support polygon:
 * the deepest point (smallest depthKey), then greedily the point adding the largest area to the
 * polygon of the chosen ones (the farthest point while only one is chosen). Writes the chosen
 * indices in cyclic order to keep; returns their count. */
int ib_reduce_region(const ibClipPoint* p, const double* depthKey, int n, int maxKeep, int* keep);

#endif
