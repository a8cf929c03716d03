/* Engine-neutral collision benchmark `cubes1000` (Bender's dissertation §4.6, DIGEST §15.6: 1000 cubes falling onto
 * the floor, collision detection only). ibdyn has no contact solver yet, so the bench generates the pose sequence
 * itself (bench_cubes_make) and feeds the same poses to every engine (BenchCollider). An exact separating-axis
 * test of box pairs (bench_box_depth) is the reference that the engines' pair sets are checked against.
 * Units SI; quaternions (w, x, y, z), body -> world; z is up; the floor's top face is the plane z = 0. */
#ifndef IBDYN_BENCH_CUBES_H
#define IBDYN_BENCH_CUBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Scene parameters (see bench/README.md, "bench_collision"). */
#define BENCH_CUBES_EDGE 1.0       /**< cube edge length (m), as the thesis' 1000-cube funnel model (§5.7) */
#define BENCH_CUBES_SPACING 1.9    /**< horizontal lattice spacing (m) */
#define BENCH_CUBES_JITTER 0.05    /**< horizontal jitter of each cube, per coordinate, uniform in +/- (m) */
#define BENCH_CUBES_LAYER_GAP 2.0  /**< vertical spacing of the lattice layers (m) */
#define BENCH_CUBES_LOWEST 3.0     /**< start height of the lowest layer's centres (m) */
#define BENCH_CUBES_OVERLAP 1e-4   /**< resting interpenetration along z (m) */
#define BENCH_CUBES_GRAVITY 9.81   /**< free-fall acceleration (m/s^2) */
#define BENCH_CUBES_H (1.0 / 60.0) /**< frame interval (s) */
#define BENCH_CUBES_FLOOR_THICKNESS 1.0
#define BENCH_CUBES_SEED UINT64_C(0xc0b35f411a6e2007)

/** A deterministic falling-and-settling trajectory of `count` cubes. Cube i falls straight down from its lattice
 * start (x, y, z0) without rotating (orientation quat), in free fall from rest at t = 0, and stops at zf, the
 * height at which it first touches the floor or a cube below it, minus BENCH_CUBES_OVERLAP. */
typedef struct BenchCubes {
	int count;             /**< cubes; the floor is body index `count` in pair lists */
	double half;           /**< half edge (m) */
	double floorCenter[3]; /**< floor box centre (m) */
	double floorHalf[3];   /**< floor box half extents (m); its top face is z = 0 */
	double h;              /**< frame interval (s) */
	int fallFrames;        /**< frames 0 .. fallFrames-1 cover the fall; in the last one every cube rests */
	double* start;         /**< 3 count: start position of the centre (m) */
	double* rest;          /**< 3 count: resting position of the centre (m) */
	double* quat;          /**< 4 count: constant orientation */
	int* flat;             /**< count: 1 = flat on its face (yaw only), 0 = uniformly random orientation */
	int flatCount;         /**< number of flat cubes */
	int layers;            /**< lattice layers; side x side cubes per layer */
	int side;              /**< lattice side */
} BenchCubes;

/** Build the trajectory: side = ceil(cbrt(count)), layers of side x side cubes (the last one partly filled) on a
 * horizontal lattice of spacing BENCH_CUBES_SPACING with per-layer offsets and per-cube jitter, layer k at
 * height BENCH_CUBES_LOWEST + k BENCH_CUBES_LAYER_GAP; every other cube (by a fixed-seed draw) is flat with a
 * random yaw, the others have uniformly random orientations. Resting heights by sequential deposition, layer by
 * layer, with the exact box-box overlap interval along z. Returns 0, or -1 on bad count / out of memory. */
int bench_cubes_make(BenchCubes* s, int count, uint64_t seed);

/** Free the arrays. */
void bench_cubes_free(BenchCubes* s);

/** Poses of all cubes at frame f (f >= fallFrames: the resting pile): pos[3 i], quat[4 i]. */
void bench_cubes_pose(const BenchCubes* s, int f, double* pos, double* quat);

/** Separating-axis test of two boxes (centre c, orientation q, half extents e): the penetration depth (> 0,
 * exact for boxes: the minimum overlap over the 15 axes) or, when separated, minus a lower bound of the distance
 * (the largest gap over the 15 axes; < 0). */
double bench_box_depth(const double ca[3], const double qa[4], const double ea[3], const double cb[3],
                       const double qb[4], const double eb[3]);

/** One touching pair as an engine reports it: body indices a < b (cubes 0 .. count-1, floor = count) and the
 * number of contact points of its manifold(s). */
typedef struct BenchPair {
	int32_t a, b;
	int32_t points;
} BenchPair;

/** Pair key a * (count + 1) + b, for sorted comparison. */
static inline int64_t bench_pair_key(int count, int32_t a, int32_t b)
{
	return a < b ? (int64_t)a * (count + 1) + b : (int64_t)b * (count + 1) + a;
}

/** Sort the keys ascending (qsort). */
void bench_sort_keys(int64_t* keys, int n);

/** Number of keys of a (sorted) that are not in b (sorted). */
int bench_keys_missing(const int64_t* a, int na, const int64_t* b, int nb);

/** Reference pair sets of one pose: every pair (cube-cube, cube-floor) whose bench_box_depth >= mustDepth
 * (every engine has to report it) and every pair whose depth >= -allowGap (an engine may report it). Keys sorted.
 * Arrays are grown with realloc; returns 0, -1 on out of memory. */
typedef struct BenchPairRef {
	int64_t *must, *allow;
	int mustCount, allowCount;
	int mustCap, allowCap;
	double maxDepth; /**< largest penetration depth of any pair (m): the trajectory's own check */
} BenchPairRef;
int bench_cubes_reference(const BenchCubes* s, const double* pos, const double* quat, double mustDepth, double allowGap,
                          BenchPairRef* out);
void bench_pair_ref_free(BenchPairRef* r);

/** An engine under test: set the cubes' poses (untimed), detect (timed), read the pairs (untimed). */
typedef struct BenchCollider {
	const char* name;
	void* impl;
	/** Copy the poses pos[3 i], quat[4 i] of all cubes into the engine. */
	void (*setPoses)(void* impl, const double* pos, const double* quat);
	/** All phases of collision detection at the current poses. Returns 0, or -1 on failure. */
	int (*detect)(void* impl);
	/** Touching pairs of the last detect (a < b); writes at most capacity, returns the total. */
	int (*pairs)(void* impl, BenchPair* out, int capacity);
	void (*destroy)(void* impl);
} BenchCollider;

#ifdef __cplusplus
}
#endif

#endif
