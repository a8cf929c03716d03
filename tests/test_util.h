/* Helpers shared by the unit tests: a deterministic random-number generator (xorshift64*, one
 * state per test executable), random vectors and rotations, and world/body constructors that
 * fail the running cmocka test when the library refuses them.
 * Include after <cmocka.h> (and its prerequisites). */
#ifndef IBDYN_TEST_UTIL_H
#define IBDYN_TEST_UTIL_H

#include <math.h>
#include <stdint.h>

#include "ibdyn/ibdyn.h"

#define TU_RNG_DEFAULT_SEED 0x9E3779B97F4A7C15ull

static uint64_t g_tu_rng = TU_RNG_DEFAULT_SEED;

static inline void rng_seed(uint64_t s) { g_tu_rng = s ? s : TU_RNG_DEFAULT_SEED; }

static inline uint64_t rng_next(void)
{
	g_tu_rng ^= g_tu_rng >> 12;
	g_tu_rng ^= g_tu_rng << 25;
	g_tu_rng ^= g_tu_rng >> 27;
	return g_tu_rng * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double urand01(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; }

/* Uniform in [lo, hi). */
static inline double urand(double lo, double hi) { return lo + (hi - lo) * urand01(); }

/* Uniform in [-1, 1). */
static inline double srand1(void) { return 2.0 * urand01() - 1.0; }

static inline ibVec3 rand_vec(double lo, double hi) { return ibV3(urand(lo, hi), urand(lo, hi), urand(lo, hi)); }

/* A uniformly distributed unit vector (rejection from the unit ball, skipping the centre). */
static inline ibVec3 rand_unit_vec(void)
{
	for (;;) {
		ibVec3 v = rand_vec(-1.0, 1.0);
		double l2 = ibLengthSq(v);
		if (l2 > 1e-4 && l2 <= 1.0) return ibScale(1.0 / sqrt(l2), v);
	}
}

/* A uniformly distributed rotation (rejection from the unit 4-ball). */
static inline ibQuat rand_unit_quat(void)
{
	for (;;) {
		ibQuat q = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)};
		double n2 = ibQuatNormSq(q);
		if (n2 > 1e-4 && n2 <= 1.0) return ibQuatNormalize(q);
	}
}

/* A world with the default definition; fails the test if it cannot be created. */
static inline ibWorldId tu_new_world(void)
{
	ibWorldDef d = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&d);
	assert_true(ibWorld_IsValid(w));
	return w;
}

/* A body of the given type and pose; fails the test if it cannot be created. */
static inline ibBodyId tu_new_body(ibWorldId w, ibBodyType type, ibVec3 pos, ibQuat rot)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = type;
	bd.position = pos;
	bd.rotation = rot;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_false(IB_IS_NULL(b));
	return b;
}

#endif
