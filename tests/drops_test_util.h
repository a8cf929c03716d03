/* Random drops of mixed shapes, shared by test_contact_drops and test_trimesh_contact: a fixed-seed LCG
 * and three bodies of random kind (box, sphere, capsule, cylinder, hull of 8 random points), size, pose,
 * velocity and spin (up to 15 rad/s per axis), started 1.2 m apart above z0.
 * Include after <cmocka.h> (and its prerequisites). */
#ifndef IBDYN_DROPS_TEST_UTIL_H
#define IBDYN_DROPS_TEST_UTIL_H

#include <stdio.h>

#include "ibdyn/ibdyn.h"

static uint64_t rng;
static double rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}
static double uni(double a, double b) { return a + (b - a) * rnd(); }

/* The three bodies of one drop, of material sd->material, the lowest at height z0; desc (may be NULL)
 * gets their kinds and sizes appended at *len. */
static void drop_bodies(ibWorldId w, const ibShapeDef* sd, double z0, char* desc, size_t descSize, int* len)
{
	for (int k = 0; k < 3; ++k) {
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(uni(-0.3, 0.3), uni(-0.3, 0.3), z0 + 1.2 * k);
		ibVec3 ax = ibNormalize(ibV3(uni(-1, 1), uni(-1, 1), uni(-1, 1)));
		bd.rotation = ibQuatFromAxisAngle(ax, uni(0, 3.14));
		bd.linearVelocity = ibV3(uni(-2, 2), uni(-2, 2), uni(-3, 1));
		bd.angularVelocity = ibV3(uni(-15, 15), uni(-15, 15), uni(-15, 15));
		ibBodyId b = ibCreateBody(w, &bd);
		const int kind = (int)(rnd() * 5);
		const double a = uni(0.05, 0.3), c = uni(0.01, 0.3), d = uni(0.05, 0.3);
		ibShapeId s;
		switch (kind) {
		case 0: s = ibCreateBoxShape(b, sd, &(ibBox){ibV3(a, c, d)}); break;
		case 1: s = ibCreateSphereShape(b, sd, &(ibSphere){a}); break;
		case 2: s = ibCreateCapsuleShape(b, sd, &(ibCapsule){c < 0.05 ? 0.05 : c, a}); break;
		case 3: s = ibCreateCylinderShape(b, sd, &(ibCylinder){a, c}); break;
		default: {
			ibVec3 v[8];
			for (int i = 0; i < 8; ++i) v[i] = ibV3(uni(-a, a), uni(-c - 0.05, c + 0.05), uni(-d, d));
			s = ibCreateHullShape(b, sd, &(ibHull){v, 8});
			break;
		}
		}
		assert_true(ibShape_IsValid(s));
		if (desc && *len < (int)descSize) *len += snprintf(desc + *len, descSize - (size_t)*len, " %c(%.2f %.2f %.2f)", "BSKCH"[kind], a, c, d);
	}
}

/* Steps the world 3 s at hz; the largest E - E(0) (J) into *gain, E(0) into *e0; false if a step failed. */
static bool drop_run(ibWorldId w, double hz, double* gain, double* e0)
{
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	*e0 = inv.kineticEnergy + inv.potentialEnergy;
	*gain = -INFINITY;
	bool ok = true;
	const int n = (int)lround(3.0 * hz);
	for (int k = 0; k < n && ok; ++k) {
		ok = ibWorld_Step(w, 1.0 / hz) == IB_OK;
		if (!ok) break;
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		*gain = fmax(*gain, inv.kineticEnergy + inv.potentialEnergy - *e0);
	}
	ibDestroyWorld(w);
	return ok;
}

#endif
