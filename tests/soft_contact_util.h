/* Helpers of the soft-contact tests: distance of a point to a soft triangle (reference: the plane
 * distance when the projection is inside, else the nearest of the three edges). */
#ifndef IBDYN_TESTS_SOFT_CONTACT_UTIL_H
#define IBDYN_TESTS_SOFT_CONTACT_UTIL_H

#include <math.h>

#include "ibdyn/ibdyn.h"

static inline double sc_segment_distance(ibVec3 p, ibVec3 a, ibVec3 b)
{
	ibVec3 ab = ibSub(b, a);
	double l2 = ibDot(ab, ab);
	double t = l2 > 0.0 ? ibDot(ibSub(p, a), ab) / l2 : 0.0;
	t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
	return ibLength(ibSub(p, ibMulAdd(a, t, ab)));
}

static inline double sc_triangle_distance(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c)
{
	ibVec3 n = ibCross(ibSub(b, a), ibSub(c, a));
	double nl = ibLength(n);
	if (nl > 0.0) {
		n = ibScale(1.0 / nl, n);
		double d = ibDot(ibSub(p, a), n);
		ibVec3 q = ibMulAdd(p, -d, n);
		/* inside if q is on the same side of all three edges */
		double s0 = ibDot(ibCross(ibSub(b, a), ibSub(q, a)), n);
		double s1 = ibDot(ibCross(ibSub(c, b), ibSub(q, b)), n);
		double s2 = ibDot(ibCross(ibSub(a, c), ibSub(q, c)), n);
		if (s0 >= 0.0 && s1 >= 0.0 && s2 >= 0.0) return fabs(d);
	}
	return fmin(sc_segment_distance(p, a, b), fmin(sc_segment_distance(p, b, c), sc_segment_distance(p, c, a)));
}

/* Distance of p to triangle tri (3 local indices) of soft body sb at its current positions. */
static inline double soft_triangle_distance(ibSoftBodyId sb, const int* tri, ibVec3 p)
{
	return sc_triangle_distance(p, ibSoftBody_GetPosition(sb, tri[0]), ibSoftBody_GetPosition(sb, tri[1]),
	                            ibSoftBody_GetPosition(sb, tri[2]));
}

/* The 8 vertices of a cube of edge a centred at c and turned by q, split into five tetrahedra (the
 * corners 0, 3, 5, 6 with their neighbours, and the centre 1, 2, 4, 7): a soft body definition with
 * the soft-contact tests' common settings (density 100, volume rows, damping 0.5, tolerance 1e-7 m). */
/* A soft body of one free particle of mass m at x (id null if refused). */
static inline ibSoftBodyId sc_particle(ibWorldId w, ibVec3 x, double m)
{
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = &x;
	sd.vertexCount = 1;
	sd.vertexMasses = &m;
	return ibCreateSoftBody(w, &sd);
}

static inline ibSoftBodyDef sc_tet_cube_def(ibVec3 v[8], ibVec3 c, double a, ibQuat q, double compliance)
{
	static const int tets[20] = {0, 1, 2, 4, 3, 1, 2, 7, 5, 1, 4, 7, 6, 2, 4, 7, 1, 2, 4, 7};
	for (int i = 0; i < 8; ++i)
		v[i] = ibAdd(c, ibRotate(q, ibV3(a * ((i & 1) - 0.5), a * (((i >> 1) & 1) - 0.5), a * (((i >> 2) & 1) - 0.5))));
	ibSoftBodyDef sd = ibDefaultSoftBodyDef();
	sd.vertices = v;
	sd.vertexCount = 8;
	sd.tetrahedra = tets;
	sd.tetrahedronCount = 5;
	sd.density = 100.0;
	sd.stretchCompliance = compliance;
	sd.preserveVolume = true;
	sd.volumeCompliance = compliance;
	sd.linearDamping = 0.5;
	sd.positionTolerance = 1e-7;
	return sd;
}

#endif
