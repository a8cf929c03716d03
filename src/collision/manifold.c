/* Contact regions of convex pairs (§4.5.1.3, §4.5.2.1; digest §15.5 item 3).
 * PLACEHOLDER: one point from the exact distance query; to be replaced by full contact regions. */
#include <math.h>

#include "collision/collision_world.h"

int ib_manifold_build(const ibConvex* a, const ibConvex* b, double tolerance, ibGjkCache* cache, ibManifold* out)
{
	ibConvexDistance d = ib_convex_query(a, b, cache);
	out->pointCount = 0;
	if (!(d.distance <= tolerance)) return 0;
	out->normal = d.normal;
	out->points[0] = (ibManifoldPoint){d.pointA, d.pointB, d.distance, 0u};
	out->pointCount = 1;
	return 1;
}

int ib_manifold_plane(const ibConvex* a, ibVec3 n, double offset, double tolerance, ibManifold* out)
{
	ibVec3 pa = ib_convex_support(a, ibNeg(n));
	double sep = ibDot(n, pa) - offset;
	out->pointCount = 0;
	if (!(sep <= tolerance)) return 0;
	out->normal = n;
	out->points[0] = (ibManifoldPoint){pa, ibMulAdd(pa, -sep, n), sep, 0u};
	out->pointCount = 1;
	return 1;
}
