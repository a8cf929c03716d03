/* Shape-type dispatch of the narrowphase: world poses, convex views, AABBs and the manifolds of a
 * shape pair (phases 2-3 of Chapter 4).
 *
 *   convex  - convex   ib_manifold_build (sphere, box, capsule, cylinder, mesh as its hull, hull)
 *   convex  - plane    ib_manifold_plane (either order; normal B -> A)
 *   convex  - trimesh  every triangle whose box overlaps A's box (+ tolerance), found with the
 *                      mesh's tree, as an IB_CONVEX_HULL of its 3 world vertices through
 *                      ib_manifold_build: one manifold per touching triangle, up to capacity
 *   plane/trimesh - plane/trimesh   never (both have infinite mass) */
#include <math.h>

#include "collision/collision_world.h"
#include "collision/hull.h"
#include "collision/trimesh.h"

void ib_shape_world_pose(const ibBody* b, const ibShape* s, ibVec3* pos, ibQuat* rot)
{
	ibVec3 bp = ib_body_user_position(b);
	ibQuat bq = ib_body_user_rotation(b);
	const ibVec3 lp = s->localPosition;
	const ibQuat lq = s->localRotation;
	if (lp.x == 0.0 && lp.y == 0.0 && lp.z == 0.0 && lq.w == 1.0 && lq.x == 0.0 && lq.y == 0.0 && lq.z == 0.0) {
		*pos = bp; /* the shape at the body's origin: the same values without the products */
		*rot = bq;
		return;
	}
	*pos = ibAdd(bp, ibRotate(bq, s->localPosition));
	*rot = ibQuatMul(bq, s->localRotation);
}

bool ib_shape_convex(const ibBody* b, const ibShape* s, ibConvex* out)
{
	ibVec3 p;
	ibQuat q;
	ib_shape_world_pose(b, s, &p, &q);
	return ib_shape_convex_at(s, p, q, out);
}

bool ib_shape_convex_at(const ibShape* s, ibVec3 p, ibQuat q, ibConvex* out)
{
	switch (s->type) {
	case IB_SHAPE_SPHERE:
		ib_convex_init(out, IB_CONVEX_SPHERE, p, q);
		out->radius = s->g.sphere.radius;
		return true;
	case IB_SHAPE_BOX:
		ib_convex_init(out, IB_CONVEX_BOX, p, q);
		out->halfExtents = s->g.box.halfExtents;
		return true;
	case IB_SHAPE_CAPSULE:
		ib_convex_init(out, IB_CONVEX_CAPSULE, p, q);
		out->radius = s->g.capsule.radius;
		out->halfLength = s->g.capsule.halfLength;
		return true;
	case IB_SHAPE_CYLINDER:
		ib_convex_init(out, IB_CONVEX_CYLINDER, p, q);
		out->radius = s->g.cylinder.radius;
		out->halfLength = s->g.cylinder.halfLength;
		return true;
	case IB_SHAPE_MESH: /* closed mesh: collides as the convex hull of its vertices */
		ib_convex_init(out, IB_CONVEX_HULL, p, q);
		out->vertices = s->meshVertices;
		out->vertexCount = s->meshVertexCount;
		return true;
	case IB_SHAPE_HULL:
		ib_convex_init(out, IB_CONVEX_HULL, p, q);
		out->hull = &s->hull->view;
		out->vertices = s->hull->view.vertices;
		out->vertexCount = s->hull->view.vertexCount;
		return true;
	case IB_SHAPE_PLANE:
	case IB_SHAPE_TRIMESH:
	case IB_SHAPE_TYPE_COUNT:
		break;
	}
	return false;
}

/* World plane of a plane shape: {x : dot(n, x) = offset}, solid below. */
static void plane_world(const ibBody* b, const ibShape* s, ibVec3* n, double* offset)
{
	ibVec3 p;
	ibQuat q;
	ib_shape_world_pose(b, s, &p, &q);
	*n = ibNormalize(ibRotate(q, s->g.plane.normal));
	*offset = s->g.plane.offset + ibDot(*n, p);
}

/* Box around a box given in another frame (x_w = p + R x). */
static ibAABB aabb_transform(ibAABB box, ibVec3 p, const ibMat3* R)
{
	ibVec3 c = ibScale(0.5, ibAdd(box.lo, box.hi)), e = ibScale(0.5, ibSub(box.hi, box.lo));
	ibVec3 wc = ibAdd(p, ibMat3_MulV(*R, c));
	ibVec3 we = {fabs(R->m[0][0]) * e.x + fabs(R->m[0][1]) * e.y + fabs(R->m[0][2]) * e.z,
	             fabs(R->m[1][0]) * e.x + fabs(R->m[1][1]) * e.y + fabs(R->m[1][2]) * e.z,
	             fabs(R->m[2][0]) * e.x + fabs(R->m[2][1]) * e.y + fabs(R->m[2][2]) * e.z};
	return (ibAABB){ibSub(wc, we), ibAdd(wc, we)};
}

ibAABB ib_shape_world_aabb(const ibBody* b, const ibShape* s)
{
	ibConvex c;
	if (ib_shape_convex(b, s, &c)) return ib_convex_aabb(&c);
	const double big = 1e30;
	ibAABB box = {{-big, -big, -big}, {big, big, big}};
	if (s->type == IB_SHAPE_PLANE) {
		/* half-space below the plane: bounded on one side where the normal is along an axis */
		ibVec3 n;
		double off;
		plane_world(b, s, &n, &off);
		if (n.x == 0.0 && n.y == 0.0) {
			if (n.z > 0.0)
				box.hi.z = off / n.z;
			else
				box.lo.z = off / n.z;
		} else if (n.x == 0.0 && n.z == 0.0) {
			if (n.y > 0.0)
				box.hi.y = off / n.y;
			else
				box.lo.y = off / n.y;
		} else if (n.y == 0.0 && n.z == 0.0) {
			if (n.x > 0.0)
				box.hi.x = off / n.x;
			else
				box.lo.x = off / n.x;
		}
	} else if (s->type == IB_SHAPE_TRIMESH) {
		ibVec3 p;
		ibQuat q;
		ib_shape_world_pose(b, s, &p, &q);
		ibMat3 R = ibMat3_FromQuat(ibQuatNormalize(q));
		box = aabb_transform(ib_trimesh_bounds(s->trimesh), p, &R);
	}
	return box;
}

/* convex (A or B) against a plane: ib_manifold_plane has the convex first; flip when the plane is A. */
static int collide_plane(const ibConvex* c, const ibBody* bp, const ibShape* sp, bool planeIsA, double tolerance,
                         ibManifold* out)
{
	ibVec3 n;
	double off;
	plane_world(bp, sp, &n, &off);
	int k = ib_manifold_plane(c, n, off, tolerance, out);
	if (k <= 0) return 0;
	if (planeIsA) {
		out->normal = ibNeg(out->normal);
		for (int i = 0; i < out->pointCount; ++i) {
			ibVec3 t = out->points[i].pointA;
			out->points[i].pointA = out->points[i].pointB;
			out->points[i].pointB = t;
		}
	}
	return 1;
}

typedef struct trimeshVisit {
	const ibTriMeshGeom* mesh;
	const ibConvex* convex;
	ibVec3 p; /* mesh pose */
	ibMat3 R;
	double tolerance;
	ibManifold* out;
	int capacity, count;
} trimeshVisit;

/* True if a region of an earlier triangle of this pair has the point (a shape vertex over a shared edge
 * is over both triangles) with the same normal; the regions have the convex first. */
static bool seen_point(const trimeshVisit* v, ibVec3 normal, ibVec3 onConvex)
{
	for (int j = 0; j < v->count; ++j) {
		const ibManifold* o = &v->out[j];
		if (ibDot(o->normal, normal) < 1.0 - 1e-9) continue;
		for (int q = 0; q < o->pointCount; ++q)
			if (ibLengthSq(ibSub(o->points[q].pointA, onConvex)) <= 1e-18) return true;
	}
	return false;
}

static bool visit_triangle(void* ctx, int tri)
{
	trimeshVisit* v = ctx;
	ibManifold* m = &v->out[v->count];
	if (ib_trimesh_triangle_contact(v->mesh, tri, v->p, &v->R, v->convex, v->tolerance, m) <= 0) return true;
	int keep = 0;
	for (int i = 0; i < m->pointCount; ++i)
		if (!seen_point(v, m->normal, m->points[i].pointA)) m->points[keep++] = m->points[i];
	m->pointCount = keep;
	if (keep > 0) v->count++;
	return v->count < v->capacity;
}

static int collide_trimesh(const ibConvex* c, const ibBody* bm, const ibShape* sm, bool meshIsA, double tolerance,
                           ibManifold* out, int capacity)
{
	ibVec3 p;
	ibQuat q;
	ib_shape_world_pose(bm, sm, &p, &q);
	q = ibQuatNormalize(q);
	/* the convex in the mesh's frame, for a tight query box */
	ibConvex local = *c;
	ibQuat qc = ibQuatConj(q);
	local.position = ibRotate(qc, ibSub(c->position, p));
	local.rotation = ibQuatNormalize(ibQuatMul(qc, c->rotation));
	local.R = ibMat3_FromQuat(local.rotation);
	local.cornersValid = false; /* other pose */
	ibAABB box = ib_aabb_fatten(ib_convex_aabb(&local), tolerance);
	trimeshVisit v = {sm->trimesh, c, p, ibMat3_FromQuat(q), tolerance, out, capacity, 0};
	ib_trimesh_query_aabb(sm->trimesh, box, visit_triangle, &v);
	if (meshIsA) /* the mesh first: normal from the convex (B) to the mesh (A) */
		for (int j = 0; j < v.count; ++j) {
			ibManifold* m = &out[j];
			m->normal = ibNeg(m->normal);
			for (int i = 0; i < m->pointCount; ++i) {
				ibVec3 t = m->points[i].pointA;
				m->points[i].pointA = m->points[i].pointB;
				m->points[i].pointB = t;
			}
		}
	return v.count;
}

int ib_shape_pair_collide_views(const ibBody* ba, const ibShape* sa, const ibConvex* ca, const ibBody* bb,
                                const ibShape* sb, const ibConvex* cb, double tolerance, ibPairCache* cache,
                                ibManifold* out, int capacity)
{
	if (capacity < 1) return 0;
	if (ca && cb) return ib_manifold_build(ca, cb, tolerance, cache ? &cache->gjk : NULL, out) > 0 ? 1 : 0;
	if (ca && sb->type == IB_SHAPE_PLANE) return collide_plane(ca, bb, sb, false, tolerance, out);
	if (cb && sa->type == IB_SHAPE_PLANE) return collide_plane(cb, ba, sa, true, tolerance, out);
	if (ca && sb->type == IB_SHAPE_TRIMESH) return collide_trimesh(ca, bb, sb, false, tolerance, out, capacity);
	if (cb && sa->type == IB_SHAPE_TRIMESH) return collide_trimesh(cb, ba, sa, true, tolerance, out, capacity);
	return 0; /* plane/trimesh against plane/trimesh: never */
}

int ib_shape_pair_collide(const ibBody* ba, const ibShape* sa, const ibBody* bb, const ibShape* sb, double tolerance,
                          ibPairCache* cache, ibManifold* out, int capacity)
{
	if (capacity < 1) return 0;
	ibConvex ca, cb;
	bool convexA = ib_shape_convex(ba, sa, &ca), convexB = ib_shape_convex(bb, sb, &cb);
	return ib_shape_pair_collide_views(ba, sa, convexA ? &ca : NULL, bb, sb, convexB ? &cb : NULL, tolerance, cache,
	                                   out, capacity);
}
