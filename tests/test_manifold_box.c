/* The box shortcut of the contact regions (src/collision/manifold.c, box_face_polygon: a box's face
 * feature is ordered around the face directly instead of by the general 2-D hull) against the general
 * path (ib_manifold_build_reference): on 2.4·10^4 box pairs, each in both orders - face on face
 * (aligned, yawed, tilted within and beyond the feature band, gaps from -2 eps_c to +1.5 eps_c), edge on
 * face, edge across edge, corner on face, random orientations brought within [-5 cm, eps_c] of contact,
 * thin plates and long bars, deep interpenetration - both give the same contact region bit for bit:
 * the same normal, points, separations and feature keys in the same order (the shortcut hands the
 * clipping the polygon ib_hull2d would have made). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collision_world.h"

#define EPS_C 1e-4
#define N_PER_FAMILY 4000

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static uint64_t rng_next(void)
{
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return g_rng * 0x2545F4914F6CDD1Dull;
}
static double urand(double lo, double hi) { return lo + (hi - lo) * (double)(rng_next() >> 11) * 0x1.0p-53; }
static ibVec3 rand_unit(void)
{
	for (;;) {
		ibVec3 v = ibV3(urand(-1, 1), urand(-1, 1), urand(-1, 1));
		double l = ibLength(v);
		if (l > 0.1 && l <= 1.0) return ibScale(1.0 / l, v);
	}
}
static ibQuat rand_quat(void)
{
	for (;;) {
		ibQuat q = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)};
		double n2 = ibQuatNormSq(q);
		if (n2 > 0.01 && n2 <= 1.0) return ibQuatNormalize(q);
	}
}
static ibQuat axis_angle(ibVec3 axis, double angle)
{
	double s = sin(0.5 * angle);
	return (ibQuat){cos(0.5 * angle), s * axis.x, s * axis.y, s * axis.z};
}

static ibConvex box(ibVec3 p, ibQuat q, ibVec3 h)
{
	ibConvex c = ib_convex_make(IB_CONVEX_BOX, p, q);
	c.halfExtents = h;
	return c;
}

static ibVec3 rand_half(int family)
{
	if (family == 5 && urand(0, 1) < 0.5) /* thin plates and long bars */
		return ibV3(urand(0.2, 1.0), urand(0.2, 1.0), urand(1e-4, 2e-3));
	if (family == 5) return ibV3(urand(1.0, 3.0), urand(0.02, 0.1), urand(0.02, 0.1));
	return ibV3(urand(0.1, 1.0), urand(0.1, 1.0), urand(0.1, 1.0));
}

typedef struct Counts {
	long cases, touching, points, faceRegions;
} Counts;

/* Both paths on (a, b): same result. */
static void compare(const ibConvex* a, const ibConvex* b, Counts* n, int family, int i)
{
	ibManifold fast, ref;
	int kf = ib_manifold_build(a, b, EPS_C, NULL, &fast);
	int kr = ib_manifold_build_reference(a, b, EPS_C, NULL, &ref);
	++n->cases;
	if (kf != kr) print_error("family %d case %d: %d points vs %d (reference)\n", family, i, kf, kr);
	assert_int_equal(kf, kr);
	if (kf == 0) return;
	++n->touching;
	n->points += kf;
	if (kf >= 3) ++n->faceRegions;
	assert_true(ibDistance(fast.normal, ref.normal) == 0.0);
	for (int p = 0; p < kf; ++p) {
		int q = 0;
		while (q < kr && ref.points[q].key != fast.points[p].key) ++q;
		if (q == kr) print_error("family %d case %d: key %u not in the reference\n", family, i, fast.points[p].key);
		assert_true(q < kr);
		double ea = ibDistance(fast.points[p].pointA, ref.points[q].pointA);
		double eb = ibDistance(fast.points[p].pointB, ref.points[q].pointB);
		if (!(ea == 0.0 && eb == 0.0))
			print_error("family %d case %d: point %d off by %.3g / %.3g\n", family, i, p, ea, eb);
		assert_true(ea == 0.0 && eb == 0.0); /* the same polygon in the same order: bit for bit */
		assert_true(fast.points[p].separation == ref.points[q].separation);
		assert_int_equal(p, q);
	}
}

/* Move b along dir so that the pair's signed distance is target (bisection on the exact query). */
static void place(const ibConvex* a, ibConvex* b, ibVec3 dir, double target)
{
	double lo = 0.0, hi = 10.0;
	ibVec3 base = a->position;
	for (int it = 0; it < 60; ++it) {
		double mid = 0.5 * (lo + hi);
		b->position = ibMulAdd(base, mid, dir);
		double d = ib_convex_query(a, b, NULL).distance;
		if (d < target) lo = mid;
		else hi = mid;
	}
	b->position = ibMulAdd(base, 0.5 * (lo + hi), dir);
}

static void test_box_shortcut_equals_general_path(void** st)
{
	(void)st;
	Counts n = {0, 0, 0, 0};
	const ibVec3 z = ibV3(0, 0, 1);
	for (int family = 0; family < 6; ++family) {
		for (int i = 0; i < N_PER_FAMILY; ++i) {
			ibVec3 ha = rand_half(family), hb = rand_half(family);
			ibConvex A = box(ibV3(urand(-1, 1), urand(-1, 1), urand(-1, 1)), rand_quat(), ha);
			ibQuat qa = A.rotation;
			ibConvex B;
			double gap = urand(-2.0 * EPS_C, 1.5 * EPS_C);
			switch (family) {
			case 0: { /* face on face: B on A's top face, yawed, tilted by 0, within or beyond the band */
				double tilt = (i % 3 == 0) ? 0.0 : (i % 3 == 1 ? urand(0.0, 1e-4) : urand(1e-4, 1e-2));
				ibQuat ql = ibQuatMul(axis_angle(z, urand(0, 2 * IB_PI)), axis_angle(rand_unit(), tilt));
				if (i % 5 == 0) ql = IB_QUAT_IDENTITY; /* aligned */
				ibVec3 off = ibV3(urand(-ha.x - hb.x, ha.x + hb.x), urand(-ha.y - hb.y, ha.y + hb.y), 0.0);
				B = box(IB_VEC3_ZERO, ibQuatMul(qa, ql), hb);
				ibVec3 dir = ibRotate(qa, ibNormalize(ibAdd(ibV3(off.x, off.y, 0.0), ibV3(0, 0, ha.z + hb.z))));
				place(&A, &B, dir, gap);
				break;
			}
			case 1: { /* edge of B on a face of A */
				ibQuat ql = ibQuatMul(axis_angle(z, urand(0, 2 * IB_PI)),
				                      axis_angle(ibV3(1, 0, 0), 0.25 * IB_PI + urand(-1e-3, 1e-3) * (i % 2)));
				B = box(IB_VEC3_ZERO, ibQuatMul(qa, ql), hb);
				ibVec3 dir = ibRotate(qa, ibNormalize(ibV3(urand(-0.3, 0.3), urand(-0.3, 0.3), 1.0)));
				place(&A, &B, dir, gap);
				break;
			}
			case 2: { /* edge across edge */
				ibQuat l1 = axis_angle(ibV3(1, 0, 0), 0.25 * IB_PI), l2 = axis_angle(ibV3(0, 1, 0), 0.25 * IB_PI);
				A = box(A.position, ibQuatMul(qa, l1), ha);
				ibQuat ql = ibQuatMul(axis_angle(z, urand(0.2, 1.4)), l2);
				B = box(IB_VEC3_ZERO, ibQuatMul(qa, ql), hb);
				place(&A, &B, ibRotate(qa, z), gap);
				break;
			}
			case 3: { /* corner on face */
				ibQuat ql = ibQuatMul(axis_angle(z, urand(0, 2 * IB_PI)),
				                      ibQuatMul(axis_angle(ibV3(1, 0, 0), 0.6), axis_angle(ibV3(0, 1, 0), 0.5)));
				B = box(IB_VEC3_ZERO, ibQuatMul(qa, ql), hb);
				place(&A, &B, ibRotate(qa, z), gap);
				break;
			}
			case 4: /* random orientations, from touching to 5 cm deep */
			case 5: /* thin plates and long bars (the shortcut gives way to the hull for slivers) */
				B = box(IB_VEC3_ZERO, rand_quat(), hb);
				place(&A, &B, rand_unit(), i % 4 == 0 ? urand(-0.05, 0.0) : gap);
				break;
			}
			compare(&A, &B, &n, family, i);
			compare(&B, &A, &n, family, i);
		}
	}
	printf("box shortcut: %ld pairs, %ld touching, %ld points, %ld regions of >= 3 points: equal to the general path\n",
	       n.cases, n.touching, n.points, n.faceRegions);
	assert_true(n.touching > n.cases / 2);
	assert_true(n.faceRegions > n.cases / 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_box_shortcut_equals_general_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
