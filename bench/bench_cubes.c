/* The cubes1000 trajectory and the separating-axis reference; see bench_cubes.h. */
#include "bench_cubes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform number in [0, 1) number k of the stream of cube i. */
static double draw(uint64_t seed, int i, int k)
{
	uint64_t z = mix64(seed + UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(8 * (int64_t)i + k + 1));
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* Rotation matrix (rows) of the unit quaternion q = (w, x, y, z): column j = body axis j in world. */
static void quat_matrix(const double q[4], double m[3][3])
{
	double w = q[0], x = q[1], y = q[2], z = q[3];
	m[0][0] = 1 - 2 * (y * y + z * z);
	m[0][1] = 2 * (x * y - w * z);
	m[0][2] = 2 * (x * z + w * y);
	m[1][0] = 2 * (x * y + w * z);
	m[1][1] = 1 - 2 * (x * x + z * z);
	m[1][2] = 2 * (y * z - w * x);
	m[2][0] = 2 * (x * z - w * y);
	m[2][1] = 2 * (y * z + w * x);
	m[2][2] = 1 - 2 * (x * x + y * y);
}

/* The 15 separating-axis candidates of two boxes (unit axes; near-parallel edge pairs skipped) with the sum of
 * the projected radii: axes[k], radius[k]. Returns the count. */
static int sat_axes(double ma[3][3], const double ea[3], double mb[3][3], const double eb[3], double axes[15][3],
                    double radius[15])
{
	double a[3][3], b[3][3]; /* a[i] = axis i of box A */
	for (int i = 0; i < 3; ++i)
		for (int k = 0; k < 3; ++k) {
			a[i][k] = ma[k][i];
			b[i][k] = mb[k][i];
		}
	int n = 0;
	for (int i = 0; i < 3; ++i) {
		memcpy(axes[n++], a[i], sizeof a[i]);
		memcpy(axes[n++], b[i], sizeof b[i]);
	}
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) {
			double c[3] = {a[i][1] * b[j][2] - a[i][2] * b[j][1], a[i][2] * b[j][0] - a[i][0] * b[j][2],
			               a[i][0] * b[j][1] - a[i][1] * b[j][0]};
			double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
			if (len < 1e-9) continue; /* parallel edges: covered by the face axes */
			for (int k = 0; k < 3; ++k) axes[n][k] = c[k] / len;
			++n;
		}
	for (int k = 0; k < n; ++k) {
		double r = 0.0;
		for (int i = 0; i < 3; ++i) {
			r += ea[i] * fabs(a[i][0] * axes[k][0] + a[i][1] * axes[k][1] + a[i][2] * axes[k][2]);
			r += eb[i] * fabs(b[i][0] * axes[k][0] + b[i][1] * axes[k][1] + b[i][2] * axes[k][2]);
		}
		radius[k] = r;
	}
	return n;
}

double bench_box_depth(const double ca[3], const double qa[4], const double ea[3], const double cb[3],
                       const double qb[4], const double eb[3])
{
	double ma[3][3], mb[3][3], axes[15][3], radius[15];
	quat_matrix(qa, ma);
	quat_matrix(qb, mb);
	int n = sat_axes(ma, ea, mb, eb, axes, radius);
	double d[3] = {cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]};
	double depth = INFINITY;
	for (int k = 0; k < n; ++k) {
		double o = radius[k] - fabs(d[0] * axes[k][0] + d[1] * axes[k][1] + d[2] * axes[k][2]);
		if (o < depth) depth = o;
	}
	return depth;
}

/* Highest centre height z at which box A (centre (x, y, z), orientation qa) overlaps the fixed box B, or -INFINITY
 * if it overlaps B at no height. Along each axis L the overlap condition |(cB - cA(z)).L| <= r(L) is an interval
 * of z; their intersection is exact (separating-axis theorem). */
static double overlap_top(const double xy[2], const double qa[4], const double ea[3], const double cb[3],
                          const double qb[4], const double eb[3])
{
	double ma[3][3], mb[3][3], axes[15][3], radius[15];
	quat_matrix(qa, ma);
	quat_matrix(qb, mb);
	int n = sat_axes(ma, ea, mb, eb, axes, radius);
	double d0[3] = {cb[0] - xy[0], cb[1] - xy[1], cb[2]};
	double lo = -INFINITY, hi = INFINITY;
	for (int k = 0; k < n; ++k) {
		double c = d0[0] * axes[k][0] + d0[1] * axes[k][1] + d0[2] * axes[k][2], lz = axes[k][2];
		if (fabs(lz) < 1e-12) {
			if (fabs(c) > radius[k]) return -INFINITY;
			continue;
		}
		/* |c - z lz| <= r  <=>  z in [(c - r)/lz, (c + r)/lz] (swapped for lz < 0) */
		double z1 = (c - radius[k]) / lz, z2 = (c + radius[k]) / lz;
		lo = fmax(lo, fmin(z1, z2));
		hi = fmin(hi, fmax(z1, z2));
	}
	return lo <= hi ? hi : -INFINITY;
}

static void random_quat(uint64_t seed, int i, double q[4])
{
	/* Shoemake: uniform on SO(3) */
	double u1 = draw(seed, i, 3), u2 = draw(seed, i, 4), u3 = draw(seed, i, 5);
	double s1 = sqrt(1.0 - u1), s2 = sqrt(u1);
	q[0] = s2 * cos(2 * PI * u3);
	q[1] = s1 * sin(2 * PI * u2);
	q[2] = s1 * cos(2 * PI * u2);
	q[3] = s2 * sin(2 * PI * u3);
}

void bench_cubes_free(BenchCubes* s)
{
	free(s->start);
	free(s->rest);
	free(s->quat);
	free(s->flat);
	memset(s, 0, sizeof *s);
}

int bench_cubes_make(BenchCubes* s, int count, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	if (count < 1 || count > 100000) return -1;
	const int n = count;
	s->count = n;
	s->half = 0.5 * BENCH_CUBES_EDGE;
	s->h = BENCH_CUBES_H;
	s->start = malloc(sizeof(double) * 3 * (size_t)n);
	s->rest = malloc(sizeof(double) * 3 * (size_t)n);
	s->quat = malloc(sizeof(double) * 4 * (size_t)n);
	s->flat = malloc(sizeof(int) * (size_t)n);
	if (!s->start || !s->rest || !s->quat || !s->flat) {
		bench_cubes_free(s);
		return -1;
	}
	int side = 1;
	while (side * side * side < n) ++side;
	s->side = side;
	s->layers = (n + side * side - 1) / (side * side);
	const double sp = BENCH_CUBES_SPACING, e[3] = {s->half, s->half, s->half};
	const double halfWidth = 0.5 * side * sp;
	for (int i = 0; i < n; ++i) {
		int layer = i / (side * side), r = i % (side * side);
		/* per-layer offsets from the R2 low-discrepancy sequence, so the layers interleave */
		double ox = fmod(layer * 0.7548776662466927, 1.0) * sp, oy = fmod(layer * 0.5698402909980532, 1.0) * sp;
		double jx = (2.0 * draw(seed, i, 0) - 1.0) * BENCH_CUBES_JITTER;
		double jy = (2.0 * draw(seed, i, 1) - 1.0) * BENCH_CUBES_JITTER;
		s->start[3 * i + 0] = -halfWidth + (r % side + 0.5) * sp + ox - 0.5 * sp + jx;
		s->start[3 * i + 1] = -halfWidth + (r / side + 0.5) * sp + oy - 0.5 * sp + jy;
		s->start[3 * i + 2] = BENCH_CUBES_LOWEST + layer * BENCH_CUBES_LAYER_GAP;
		s->flat[i] = draw(seed, i, 2) < 0.5;
		double* q = &s->quat[4 * i];
		if (s->flat[i]) {
			double yaw = 2 * PI * draw(seed, i, 3);
			q[0] = cos(0.5 * yaw);
			q[1] = q[2] = 0.0;
			q[3] = sin(0.5 * yaw);
			s->flatCount++;
		} else {
			random_quat(seed, i, q);
		}
	}
	s->floorCenter[0] = s->floorCenter[1] = 0.0;
	s->floorCenter[2] = -0.5 * BENCH_CUBES_FLOOR_THICKNESS;
	s->floorHalf[0] = s->floorHalf[1] = halfWidth + 2.0 * sp;
	s->floorHalf[2] = 0.5 * BENCH_CUBES_FLOOR_THICKNESS;

	/* Sequential deposition in lattice order (= layer order). Cubes of one layer never touch (spacing - 2 jitter >
	 * cube diameter sqrt(3)), so only earlier layers matter; their resting heights are known. */
	const double reach = 2.0 * sqrt(3.0) * s->half; /* horizontal centre distance below which two cubes can touch */
	double tLast = 0.0;
	for (int j = 0; j < n; ++j) {
		const double* qj = &s->quat[4 * j];
		double m[3][3];
		quat_matrix(qj, m);
		double top = s->half * (fabs(m[2][0]) + fabs(m[2][1]) + fabs(m[2][2])); /* on the floor */
		const double xy[2] = {s->start[3 * j], s->start[3 * j + 1]};
		for (int i = 0; i < j; ++i) {
			double dx = s->rest[3 * i] - xy[0], dy = s->rest[3 * i + 1] - xy[1];
			if (dx * dx + dy * dy >= reach * reach) continue;
			top = fmax(top, overlap_top(xy, qj, e, &s->rest[3 * i], &s->quat[4 * i], e));
		}
		s->rest[3 * j] = xy[0];
		s->rest[3 * j + 1] = xy[1];
		s->rest[3 * j + 2] = top - BENCH_CUBES_OVERLAP;
		double fall = s->start[3 * j + 2] - s->rest[3 * j + 2];
		tLast = fmax(tLast, sqrt(2.0 * fall / BENCH_CUBES_GRAVITY));
	}
	s->fallFrames = (int)floor(tLast / s->h) + 2;
	return 0;
}

void bench_cubes_pose(const BenchCubes* s, int f, double* pos, double* quat)
{
	double t = f * s->h, drop = 0.5 * BENCH_CUBES_GRAVITY * t * t;
	for (int i = 0; i < s->count; ++i) {
		pos[3 * i] = s->start[3 * i];
		pos[3 * i + 1] = s->start[3 * i + 1];
		double z = s->start[3 * i + 2] - drop;
		pos[3 * i + 2] = (f >= s->fallFrames || z < s->rest[3 * i + 2]) ? s->rest[3 * i + 2] : z;
	}
	memcpy(quat, s->quat, sizeof(double) * 4 * (size_t)s->count);
}

static int cmp_key(const void* a, const void* b)
{
	int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
	return (x > y) - (x < y);
}

void bench_sort_keys(int64_t* keys, int n)
{
	if (n > 1) qsort(keys, (size_t)n, sizeof *keys, cmp_key);
}

int bench_keys_missing(const int64_t* a, int na, const int64_t* b, int nb)
{
	int missing = 0, j = 0;
	for (int i = 0; i < na; ++i) {
		while (j < nb && b[j] < a[i]) ++j;
		if (j >= nb || b[j] != a[i]) ++missing;
	}
	return missing;
}

static int push_key(int64_t** arr, int* count, int* cap, int64_t key)
{
	if (*count == *cap) {
		int nc = *cap ? 2 * *cap : 1024;
		int64_t* p = realloc(*arr, sizeof(int64_t) * (size_t)nc);
		if (!p) return -1;
		*arr = p;
		*cap = nc;
	}
	(*arr)[(*count)++] = key;
	return 0;
}

static int classify(BenchPairRef* out, double depth, double mustDepth, double allowGap, int64_t key)
{
	if (depth > out->maxDepth) out->maxDepth = depth;
	if (depth >= mustDepth && push_key(&out->must, &out->mustCount, &out->mustCap, key)) return -1;
	if (depth >= -allowGap && push_key(&out->allow, &out->allowCount, &out->allowCap, key)) return -1;
	return 0;
}

int bench_cubes_reference(const BenchCubes* s, const double* pos, const double* quat, double mustDepth, double allowGap,
                          BenchPairRef* out)
{
	out->mustCount = out->allowCount = 0;
	out->maxDepth = 0.0;
	const int n = s->count;
	const double e[3] = {s->half, s->half, s->half}, idq[4] = {1, 0, 0, 0};
	const double reach = 2.0 * sqrt(3.0) * s->half + allowGap;
	for (int i = 0; i < n; ++i) {
		const double* pi = &pos[3 * i];
		if (pi[2] - sqrt(3.0) * s->half <= allowGap) {
			double d = bench_box_depth(pi, &quat[4 * i], e, s->floorCenter, idq, s->floorHalf);
			if (classify(out, d, mustDepth, allowGap, bench_pair_key(n, i, n))) return -1;
		}
		for (int j = i + 1; j < n; ++j) {
			const double* pj = &pos[3 * j];
			double dx = pj[0] - pi[0], dy = pj[1] - pi[1], dz = pj[2] - pi[2];
			if (dx * dx + dy * dy + dz * dz >= reach * reach) continue;
			double d = bench_box_depth(pi, &quat[4 * i], e, pj, &quat[4 * j], e);
			if (classify(out, d, mustDepth, allowGap, bench_pair_key(n, i, j))) return -1;
		}
	}
	bench_sort_keys(out->must, out->mustCount);
	bench_sort_keys(out->allow, out->allowCount);
	return 0;
}

void bench_pair_ref_free(BenchPairRef* r)
{
	free(r->must);
	free(r->allow);
	memset(r, 0, sizeof *r);
}
