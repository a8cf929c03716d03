/* Shape-type dispatch of the narrowphase: world poses, convex views, AABBs and the manifolds of a
 * shape pair (phases 2-3 of Chapter 4). */
#include <math.h>

#include "collision/collision_world.h"

void ib_shape_world_pose(const ibBody* b, const ibShape* s, ibVec3* pos, ibQuat* rot)
{
	ibVec3 bp = ib_body_user_position(b);
	ibQuat bq = ib_body_user_rotation(b);
	*pos = ibAdd(bp, ibRotate(bq, s->localPosition));
	*rot = ibQuatMul(bq, s->localRotation);
}

bool ib_shape_convex(const ibBody* b, const ibShape* s, ibConvex* out)
{
	ibVec3 p;
	ibQuat q;
	ib_shape_world_pose(b, s, &p, &q);
	switch (s->type) {
	case IB_SHAPE_SPHERE:
		*out = ib_convex_make(IB_CONVEX_SPHERE, p, q);
		out->radius = s->g.sphere.radius;
		return true;
	case IB_SHAPE_BOX:
		*out = ib_convex_make(IB_CONVEX_BOX, p, q);
		out->halfExtents = s->g.box.halfExtents;
		return true;
	case IB_SHAPE_CAPSULE:
		*out = ib_convex_make(IB_CONVEX_CAPSULE, p, q);
		out->radius = s->g.capsule.radius;
		out->halfLength = s->g.capsule.halfLength;
		return true;
	case IB_SHAPE_CYLINDER:
		*out = ib_convex_make(IB_CONVEX_CYLINDER, p, q);
		out->radius = s->g.cylinder.radius;
		out->halfLength = s->g.cylinder.halfLength;
		return true;
	case IB_SHAPE_MESH: /* closed mesh: collides as the convex hull of its vertices */
		*out = ib_convex_make(IB_CONVEX_HULL, p, q);
		out->vertices = s->meshVertices;
		out->vertexCount = s->meshVertexCount;
		return true;
	default:
		return false;
	}
}

ibAABB ib_shape_world_aabb(const ibBody* b, const ibShape* s)
{
	ibConvex c;
	if (ib_shape_convex(b, s, &c)) return ib_convex_aabb(&c);
	double big = 1e30;
	return (ibAABB){{-big, -big, -big}, {big, big, big}};
}

int ib_shape_pair_collide(const ibBody* ba, const ibShape* sa, const ibBody* bb, const ibShape* sb, double tolerance,
                          ibPairCache* cache, ibManifold* out, int capacity)
{
	if (capacity < 1) return 0;
	ibConvex ca, cb;
	if (ib_shape_convex(ba, sa, &ca) && ib_shape_convex(bb, sb, &cb))
		return ib_manifold_build(&ca, &cb, tolerance, cache ? &cache->gjk : NULL, out) > 0 ? 1 : 0;
	return 0;
}
