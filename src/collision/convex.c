/* Support functions and bounding boxes of the convex primitives (Chapter 4): sphere, box, capsule,
 * cylinder and convex hull, in world space. The "core" of a sphere is its centre and that of a
 * capsule its inner segment; the narrowphase runs GJK/EPA on cores and adds the radii (margins),
 * which is exact because a sphere/capsule is its core swept by a ball. */
#include <math.h>

#include "collision/convex.h"

/* Local support of the shape (core == true: sphere/capsule without their radius). */
static ibVec3 support_local(const ibConvex* c, ibVec3 d, bool core)
{
	switch (c->type) {
	case IB_CONVEX_SPHERE: {
		if (core) return IB_VEC3_ZERO;
		double l = ibLength(d);
		return l > 0.0 ? ibScale(c->radius / l, d) : ibV3(0.0, 0.0, c->radius);
	}
	case IB_CONVEX_BOX:
		return ibV3(d.x >= 0.0 ? c->halfExtents.x : -c->halfExtents.x, d.y >= 0.0 ? c->halfExtents.y : -c->halfExtents.y,
		            d.z >= 0.0 ? c->halfExtents.z : -c->halfExtents.z);
	case IB_CONVEX_CAPSULE: {
		ibVec3 p = ibV3(0.0, 0.0, d.z >= 0.0 ? c->halfLength : -c->halfLength);
		if (core) return p;
		double l = ibLength(d);
		return l > 0.0 ? ibMulAdd(p, c->radius / l, d) : ibV3(0.0, 0.0, p.z + (d.z >= 0.0 ? c->radius : -c->radius));
	}
	case IB_CONVEX_CYLINDER: {
		double rho = sqrt(d.x * d.x + d.y * d.y);
		double z = d.z >= 0.0 ? c->halfLength : -c->halfLength;
		/* rho == 0: every point of the cap is a support point; the centre is returned. */
		if (rho > 0.0) return ibV3(c->radius * d.x / rho, c->radius * d.y / rho, z);
		return ibV3(0.0, 0.0, z);
	}
	case IB_CONVEX_HULL: {
		if (c->vertexCount <= 0 || !c->vertices) return IB_VEC3_ZERO;
		int best = 0;
		double bestDot = ibDot(c->vertices[0], d);
		for (int i = 1; i < c->vertexCount; ++i) {
			double t = ibDot(c->vertices[i], d);
			if (t > bestDot) {
				bestDot = t;
				best = i;
			}
		}
		return c->vertices[best];
	}
	}
	return IB_VEC3_ZERO;
}

ibVec3 ib_convex_support(const ibConvex* c, ibVec3 dir)
{
	ibVec3 s = support_local(c, ibMat3_MulTV(c->R, dir), false);
	return ibAdd(c->position, ibMat3_MulV(c->R, s));
}

ibVec3 ib_convex_support_core(const ibConvex* c, ibVec3 dir)
{
	ibVec3 s = support_local(c, ibMat3_MulTV(c->R, dir), true);
	return ibAdd(c->position, ibMat3_MulV(c->R, s));
}

double ib_convex_margin(const ibConvex* c)
{
	return (c->type == IB_CONVEX_SPHERE || c->type == IB_CONVEX_CAPSULE) ? c->radius : 0.0;
}


ibAABB ib_convex_aabb(const ibConvex* c)
{
	const ibMat3* R = &c->R;
	ibVec3 e = IB_VEC3_ZERO; /* half extent around the position */
	switch (c->type) {
	case IB_CONVEX_SPHERE:
		e = ibV3(c->radius, c->radius, c->radius);
		break;
	case IB_CONVEX_BOX:
		return ib_convex_box_aabb(c);
	case IB_CONVEX_CAPSULE: {
		double r = c->radius, l = c->halfLength;
		e = ibV3(fabs(R->m[0][2]) * l + r, fabs(R->m[1][2]) * l + r, fabs(R->m[2][2]) * l + r);
		break;
	}
	case IB_CONVEX_CYLINDER: {
		/* disc of radius r with unit normal a: extent along axis i is r sqrt(1 - a_i^2) */
		double r = c->radius, l = c->halfLength;
		for (int i = 0; i < 3; ++i) {
			double ai = R->m[i][2];
			double ei = l * fabs(ai) + r * sqrt(ib_fmax(0.0, 1.0 - ai * ai));
			if (i == 0) e.x = ei;
			else if (i == 1) e.y = ei;
			else e.z = ei;
		}
		break;
	}
	case IB_CONVEX_HULL: {
		if (c->vertexCount <= 0 || !c->vertices) return (ibAABB){c->position, c->position};
		ibVec3 p = ib_convex_to_world(c, c->vertices[0]);
		ibAABB box = {p, p};
		for (int i = 1; i < c->vertexCount; ++i) {
			p = ib_convex_to_world(c, c->vertices[i]);
			box.lo = ibV3(ib_fmin(box.lo.x, p.x), ib_fmin(box.lo.y, p.y), ib_fmin(box.lo.z, p.z));
			box.hi = ibV3(ib_fmax(box.hi.x, p.x), ib_fmax(box.hi.y, p.y), ib_fmax(box.hi.z, p.z));
		}
		return box;
	}
	}
	return (ibAABB){ibSub(c->position, e), ibAdd(c->position, e)};
}
