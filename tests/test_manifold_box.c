/* The box-box path of the contact regions (src/collision/box_box.c, ib_box_box_manifold; and
 * ib_manifold_build, which uses it for box pairs and the general path where it declines) against the
 * general path (ib_manifold_build_reference): on 2.8·10^4 box pairs, each in both orders - face on face
 * (aligned, yawed, tilted within and beyond the feature band, gaps from -2 eps_c to +1.5 eps_c), edge on
 * face, edge across edge, corner on face, random orientations brought within [-5 cm, eps_c] of contact,
 * thin plates and long bars, deep interpenetration, and with a speculative tolerance of 5 cm boxes tilted
 * by up to 0.03 rad on a 50 m ground box - both give the same contact region to rounding: the
 * same point count, normals within 1e-12, and for every point the reference point with the same feature
 * key (warm-start matching uses the keys) within 1e-10 m on both surfaces, separations within 1e-10 m.
 * The box path must take most touching pairs itself (it declines pairs apart by less than eps_c, whose
 * distance needs GJK, and features that need the general 2-D hull). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collision_world.h"
#include "collision/manifold_internal.h"

#define EPS_C 1e-4
#define SPECULATIVE_TOL 0.05 /* family 6: a large (speculative) contact tolerance */
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
	long cases, touching, points, faceRegions, boxPath, boxTouching;
} Counts;

/* m (k points) is the reference region r (kr points) to rounding. */
static void check_same(const ibManifold* m, int k, const ibManifold* r, int kr, const char* what, int family, int i)
{
	if (k != kr) print_error("%s: family %d case %d: %d points vs %d (reference)\n", what, family, i, k, kr);
	assert_int_equal(k, kr);
	if (k == 0) return;
	double en = ibDistance(m->normal, r->normal);
	if (!(en <= 1e-12)) print_error("%s: family %d case %d: normal off by %.3g\n", what, family, i, en);
	assert_true(en <= 1e-12);
	for (int p = 0; p < k; ++p) {
		int q = 0;
		while (q < kr && r->points[q].key != m->points[p].key) ++q;
		if (q == kr) print_error("%s: family %d case %d: key %u not in the reference\n", what, family, i, m->points[p].key);
		assert_true(q < kr);
		for (int o = 0; o < p; ++o) assert_true(m->points[o].key != m->points[p].key); /* one point per key */
		double ea = ibDistance(m->points[p].pointA, r->points[q].pointA);
		double eb = ibDistance(m->points[p].pointB, r->points[q].pointB);
		double es = fabs(m->points[p].separation - r->points[q].separation);
		if (!(ea <= 1e-10 && eb <= 1e-10 && es <= 1e-10))
			print_error("%s: family %d case %d: point %d off by %.3g / %.3g, separation by %.3g\n", what, family, i, p,
			            ea, eb, es);
		assert_true(ea <= 1e-10 && eb <= 1e-10 && es <= 1e-10);
	}
}

/* The box path, ib_manifold_build and the general path on (a, b): the same region. */
static void compare(const ibConvex* a, const ibConvex* b, Counts* n, int family, int i)
{
	ibManifold box, built, ref;
	double tol = family == 6 ? SPECULATIVE_TOL : EPS_C;
	int kr = ib_manifold_build_reference(a, b, tol, NULL, &ref);
	int kb = ib_manifold_build(a, b, tol, NULL, &built);
	int axis = 0;
	int kf = ib_box_box_manifold(a, b, tol, &axis, &box);
	++n->cases;
	check_same(&built, kb, &ref, kr, "ib_manifold_build", family, i);
	if (kf >= 0) {
		++n->boxPath;
		n->boxTouching += kf > 0;
		check_same(&box, kf, &ref, kr, "box path", family, i);
		/* again with the separating axis it cached: the same outcome */
		ibManifold again;
		int k2 = ib_box_box_manifold(a, b, tol, &axis, &again);
		assert_int_equal(k2, kf);
	}
	if (kr == 0) return;
	++n->touching;
	n->points += kr;
	if (kr >= 3) ++n->faceRegions;
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

static void test_box_path_equals_general_path(void** st)
{
	(void)st;
	Counts n = {0, 0, 0, 0, 0, 0};
	const ibVec3 z = ibV3(0, 0, 1);
	for (int family = 0; family < 7; ++family) {
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
			case 6: { /* a box tilted by up to 0.03 rad on a 50 m ground box, tolerance 0.05: tilted faces in
			           * the band, corners nearly over the sides of the incident box seen edge-on */
				A = box(ibV3(urand(-1, 1), urand(-1, 1), -0.5), IB_QUAT_IDENTITY, ibV3(50, 50, 0.5));
				ibQuat ql = ibQuatMul(axis_angle(z, urand(0, 2 * IB_PI)), axis_angle(rand_unit(), urand(0.0, 0.03)));
				B = box(IB_VEC3_ZERO, ql, hb);
				place(&A, &B, z, gap);
				break;
			}
			}
			compare(&A, &B, &n, family, i);
			compare(&B, &A, &n, family, i);
		}
	}
	printf("box path: %ld pairs, %ld touching, %ld points, %ld regions of >= 3 points; the box path took %ld pairs "
	       "(%ld touching), the rest went to the general path; all equal to the general path\n",
	       n.cases, n.touching, n.points, n.faceRegions, n.boxPath, n.boxTouching);
	assert_true(n.touching > n.cases / 2);
	assert_true(n.faceRegions > n.cases / 20);
	assert_true(n.boxTouching > n.touching / 2);
}

/* The corner keys of the box path come from a table: the hash's values. */
static void test_corner_code_table(void** st)
{
	(void)st;
	for (uint32_t salt = 1u; salt <= 2u; ++salt)
		for (uint32_t id = 0u; id < 8u; ++id) assert_int_equal(ib_box_corner_code(salt, id), ib_feature_code(salt, id, 0u));
}

/* A settled pile as in bench_collision (unit cubes, resting overlap 1e-4, nearly aligned neighbours and
 * random orientations), every pose perturbed by up to 1e-7 (positions and quaternion components): the
 * near ties of nearly parallel edge axes with the face axes, which the box path's edge-axis bound must
 * leave to the exact computation. Both orders, the box path equal to the general path. */
static void test_box_path_perturbed_pile(void** st)
{
	(void)st;
	Counts n = {0, 0, 0, 0, 0, 0};
	const ibVec3 h = ibV3(0.5, 0.5, 0.5);
	const double d = 1e-7;
	for (int i = 0; i < 6000; ++i) {
		ibQuat qa = IB_QUAT_IDENTITY, qb = IB_QUAT_IDENTITY;
		int kind = i % 4;
		if (kind == 3) qa = rand_quat(), qb = rand_quat();
		if (kind == 2) qb = axis_angle(ibV3(0, 0, 1), urand(0, 2 * IB_PI)); /* yawed on top */
		qa = ibQuatNormalize((ibQuat){qa.w + urand(-d, d), qa.x + urand(-d, d), qa.y + urand(-d, d), qa.z + urand(-d, d)});
		qb = ibQuatNormalize((ibQuat){qb.w + urand(-d, d), qb.x + urand(-d, d), qb.y + urand(-d, d), qb.z + urand(-d, d)});
		ibConvex A = box(ibV3(urand(-d, d), urand(-d, d), urand(-d, d)), qa, h), B;
		/* on top (offset within the face), beside (x), or a random direction, at a resting overlap */
		ibVec3 dir = kind == 1 ? ibNormalize(ibV3(1.0, urand(-0.5, 0.5), urand(-1e-3, 1e-3)))
		             : kind == 3 ? rand_unit()
		                         : ibNormalize(ibV3(urand(-0.6, 0.6), urand(-0.6, 0.6), 1.0));
		if (kind == 0 && i % 8 == 0) dir = ibV3(0, 0, 1); /* exactly above: sides within the perturbation */
		B = box(IB_VEC3_ZERO, qb, h);
		place(&A, &B, dir, urand(-1.2e-4, 0.8 * EPS_C));
		B.position = ibAdd(B.position, ibV3(urand(-d, d), urand(-d, d), urand(-d, d)));
		compare(&A, &B, &n, 7, i);
		compare(&B, &A, &n, 7, i);
	}
	printf("perturbed pile: %ld pairs, %ld touching, %ld regions of >= 3 points, box path %ld (%ld touching)\n",
	       n.cases, n.touching, n.faceRegions, n.boxPath, n.boxTouching);
	assert_true(n.touching > n.cases / 2);
	assert_true(n.boxTouching > n.touching / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_box_path_equals_general_path),
	    cmocka_unit_test(test_corner_code_table),
	    cmocka_unit_test(test_box_path_perturbed_pile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
