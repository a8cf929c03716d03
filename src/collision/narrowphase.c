/* Narrowphase dispatch (Chapter 4, exact test of a candidate pair): the closed-form special cases
 * where they exist (collide_special.c), otherwise GJK on the shapes' cores (sphere -> centre,
 * capsule -> segment) with EPA when the cores overlap, the radii being added afterwards. */
#include <math.h>

#include "collision/convex.h"

static ibConvexDistance flip(ibConvexDistance r)
{
	ibVec3 t = r.pointA;
	r.pointA = r.pointB;
	r.pointB = t;
	r.normal = ibNeg(r.normal);
	return r;
}

ibConvexDistance ib_convex_query_gjk(const ibConvex* a, const ibConvex* b, bool cores, ibGjkCache* cache)
{
	double ra = cores ? ib_convex_margin(a) : 0.0, rb = cores ? ib_convex_margin(b) : 0.0;
	ibGjkResult g = ib_gjk_distance(a, b, cores, cache);
	ibConvexDistance r;
	r.iterations = g.iterations;
	if (!g.overlap && g.distance > 0.0) {
		ibVec3 n = ibScale(1.0 / g.distance, ibSub(g.pointA, g.pointB));
		r.distance = g.distance - ra - rb;
		r.normal = n;
		r.pointA = ibMulAdd(g.pointA, -ra, n);
		r.pointB = ibMulAdd(g.pointB, rb, n);
		return r;
	}
	ibConvexDistance e;
	ib_epa_penetration(a, b, cores, &g.simplex, &e);
	r.distance = e.distance - ra - rb;
	r.normal = e.normal;
	r.pointA = ibMulAdd(e.pointA, -ra, e.normal);
	r.pointB = ibMulAdd(e.pointB, rb, e.normal);
	r.iterations += e.iterations;
	return r;
}

ibConvexDistance ib_convex_query(const ibConvex* a, const ibConvex* b, ibGjkCache* cache)
{
	ibConvexType ta = a->type, tb = b->type;
	if (ta == IB_CONVEX_SPHERE && tb == IB_CONVEX_SPHERE) return ib_collide_sphere_sphere(a, b);
	if (ta == IB_CONVEX_SPHERE && tb == IB_CONVEX_BOX) return ib_collide_sphere_box(a, b);
	if (ta == IB_CONVEX_BOX && tb == IB_CONVEX_SPHERE) return flip(ib_collide_sphere_box(b, a));
	if (ta == IB_CONVEX_SPHERE && tb == IB_CONVEX_CAPSULE) return ib_collide_sphere_capsule(a, b);
	if (ta == IB_CONVEX_CAPSULE && tb == IB_CONVEX_SPHERE) return flip(ib_collide_sphere_capsule(b, a));
	if (ta == IB_CONVEX_SPHERE && tb == IB_CONVEX_CYLINDER) return ib_collide_sphere_cylinder(a, b);
	if (ta == IB_CONVEX_CYLINDER && tb == IB_CONVEX_SPHERE) return flip(ib_collide_sphere_cylinder(b, a));
	if (ta == IB_CONVEX_CAPSULE && tb == IB_CONVEX_CAPSULE) return ib_collide_capsule_capsule(a, b);
	if (ta == IB_CONVEX_BOX && tb == IB_CONVEX_BOX) {
		ibConvexDistance r;
		if (ib_collide_box_box_sat(a, b, &r)) return r;
		/* separated: exact distance by GJK (finite for polytopes) */
	}
	return ib_convex_query_gjk(a, b, true, cache);
}
