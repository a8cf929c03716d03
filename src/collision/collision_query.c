/* Scene queries (include/ibdyn/collision.h): ray casts (closest and all hits), overlaps of a box or a
 * shape at a pose, closest points between two shapes and between a shape and a point. Phase 1 through
 * the world's broadphase (brought up to the current poses first), phase 2 exactly per shape. */
#include <math.h>
#include <string.h>

#include "collision/collision_world_internal.h"

static bool query_accepts(ibQueryFilter q, ibFilter f)
{
	return (q.maskBits & f.categoryBits) != 0 && (q.categoryBits & f.maskBits) != 0;
}

static ibRayResult no_hit(void)
{
	ibRayResult r;
	memset(&r, 0, sizeof r);
	r.fraction = 1.0;
	return r;
}

/* Exact hits of the broadphase's candidates, ordered by fraction; calls fn per hit in order of the
 * candidates' box entry (a hit can only be preceded by candidates entered earlier). */
typedef struct RayCtx {
	ibRayResult* out;
	int capacity, count;
	bool closestOnly;
	ibRayResult best;
} RayCtx;

static void insert_sorted(RayCtx* c, ibRayResult r)
{
	if (c->count < c->capacity) {
		int i = c->count;
		while (i > 0 && c->out[i - 1].fraction > r.fraction) {
			c->out[i] = c->out[i - 1];
			--i;
		}
		c->out[i] = r;
	} else if (c->capacity > 0 && r.fraction < c->out[c->capacity - 1].fraction) {
		int i = c->capacity - 1;
		while (i > 0 && c->out[i - 1].fraction > r.fraction) {
			c->out[i] = c->out[i - 1];
			--i;
		}
		c->out[i] = r;
	}
	c->count++;
}

static ibResult ray_query(ibWorldId id, ibVec3 origin, ibVec3 translation, ibQueryFilter filter, RayCtx* c)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!ibVec3_IsFinite(origin) || !ibVec3_IsFinite(translation))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "ray origin and translation must be finite");
	ibResult r = ib_collision_sync(w);
	if (r != IB_OK) return r;
	ibCollisionWorld* cw = w->collision;
	int32_t n;
	const ibRayHit* hits = ib_broadphase_raycast(cw->bp, origin, ibAdd(origin, translation), &n);
	if (n < 0) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in ray cast");
	for (int32_t k = 0; k < n; ++k) {
		if (c->closestOnly && c->best.hit && hits[k].t > c->best.fraction) break; /* boxes entered later */
		int32_t si = ib_broadphase_user_id(cw->bp, hits[k].proxy);
		const ibShape* s = &w->shapes[si];
		if (!query_accepts(filter, s->filter)) continue;
		ibConvex cv;
		if (!ib_shape_convex(&w->bodies[s->body], s, &cv)) continue;
		double t;
		ibVec3 nrm;
		double maxT = c->closestOnly && c->best.hit ? c->best.fraction : 1.0;
		if (!ib_ray_convex(&cv, origin, translation, maxT, &t, &nrm)) continue;
		ibRayResult h = {ib_shape_handle(w, si), ibMulAdd(origin, t, translation), nrm, t, true};
		if (c->closestOnly) {
			if (!c->best.hit || t < c->best.fraction) c->best = h;
		} else {
			insert_sorted(c, h);
		}
	}
	return IB_OK;
}

ibRayResult ibWorld_CastRayClosest(ibWorldId id, ibVec3 origin, ibVec3 translation, ibQueryFilter filter)
{
	RayCtx c = {NULL, 0, 0, true, no_hit()};
	ray_query(id, origin, translation, filter, &c);
	return c.best;
}

int ibWorld_CastRayAll(ibWorldId id, ibVec3 origin, ibVec3 translation, ibQueryFilter filter, ibRayResult* out,
                       int capacity)
{
	RayCtx c = {out, out ? (capacity > 0 ? capacity : 0) : 0, 0, false, no_hit()};
	if (ray_query(id, origin, translation, filter, &c) != IB_OK) return -1;
	return c.count;
}

typedef struct OverlapCtx {
	ibWorld* w;
	ibQueryFilter filter;
	const ibConvex* shape; /* NULL: boxes only */
	ibShapeId* out;
	int capacity, count;
} OverlapCtx;

static bool overlap_cb(void* vctx, int32_t proxy)
{
	OverlapCtx* c = vctx;
	ibWorld* w = c->w;
	int32_t si = ib_broadphase_user_id(w->collision->bp, proxy);
	const ibShape* s = &w->shapes[si];
	if (!query_accepts(c->filter, s->filter)) return true;
	if (c->shape) {
		ibConvex cv;
		if (!ib_shape_convex(&w->bodies[s->body], s, &cv)) return true;
		if (!(ib_convex_query(c->shape, &cv, NULL).distance <= 0.0)) return true;
	}
	if (c->out && c->count < c->capacity) c->out[c->count] = ib_shape_handle(w, si);
	c->count++;
	return true;
}

typedef struct BoundsCtx {
	OverlapCtx base;
	ibAABB box;
} BoundsCtx;

static bool bounds_cb(void* vctx, int32_t proxy)
{
	BoundsCtx* c = vctx;
	ibWorld* w = c->base.w;
	int32_t si = ib_broadphase_user_id(w->collision->bp, proxy);
	const ibShape* s = &w->shapes[si];
	if (!ib_aabb_overlap(ib_shape_world_aabb(&w->bodies[s->body], s), c->box)) return true;
	return overlap_cb(&c->base, proxy);
}

static bool bounds_valid(ibBounds b)
{
	return ibVec3_IsFinite(b.lower) && ibVec3_IsFinite(b.upper) && b.lower.x <= b.upper.x && b.lower.y <= b.upper.y &&
	       b.lower.z <= b.upper.z;
}

int ibWorld_OverlapBounds(ibWorldId id, ibBounds bounds, ibQueryFilter filter, ibShapeId* out, int capacity)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return -1;
	if (!bounds_valid(bounds)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "bounds must be finite with lower <= upper");
		return -1;
	}
	if (ib_collision_sync(w) != IB_OK) return -1;
	BoundsCtx c = {{w, filter, NULL, out, capacity > 0 ? capacity : 0, 0}, {bounds.lower, bounds.upper}};
	ib_broadphase_query(w->collision->bp, c.box, bounds_cb, &c);
	return c.base.count;
}

/* Convex view of a query shape; false with an error on bad geometry. */
static bool query_convex(ibWorld* w, const ibQueryShape* q, ibVec3 pos, ibQuat rot, ibConvex* out)
{
	double qn = ibQuatNormSq(rot);
	if (!q || !ibVec3_IsFinite(pos) || !ibQuat_IsFinite(rot) || !(qn > 1e-300) || !isfinite(qn)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "query shape is NULL or its pose is not finite");
		return false;
	}
	bool ok = false;
	switch (q->type) {
	case IB_SHAPE_SPHERE:
		*out = ib_convex_make(IB_CONVEX_SPHERE, pos, rot);
		out->radius = q->sphere.radius;
		ok = isfinite(out->radius) && out->radius >= 0.0;
		break;
	case IB_SHAPE_BOX:
		*out = ib_convex_make(IB_CONVEX_BOX, pos, rot);
		out->halfExtents = q->box.halfExtents;
		ok = ibVec3_IsFinite(out->halfExtents) && out->halfExtents.x >= 0.0 && out->halfExtents.y >= 0.0 &&
		     out->halfExtents.z >= 0.0;
		break;
	case IB_SHAPE_CAPSULE:
		*out = ib_convex_make(IB_CONVEX_CAPSULE, pos, rot);
		out->radius = q->capsule.radius;
		out->halfLength = q->capsule.halfLength;
		ok = isfinite(out->radius) && out->radius >= 0.0 && isfinite(out->halfLength) && out->halfLength >= 0.0;
		break;
	case IB_SHAPE_CYLINDER:
		*out = ib_convex_make(IB_CONVEX_CYLINDER, pos, rot);
		out->radius = q->cylinder.radius;
		out->halfLength = q->cylinder.halfLength;
		ok = isfinite(out->radius) && out->radius > 0.0 && isfinite(out->halfLength) && out->halfLength > 0.0;
		break;
	case IB_SHAPE_MESH:
		*out = ib_convex_make(IB_CONVEX_HULL, pos, rot);
		out->vertices = q->points;
		out->vertexCount = q->pointCount;
		ok = q->points && q->pointCount >= 1;
		for (int i = 0; ok && i < q->pointCount; ++i) ok = ibVec3_IsFinite(q->points[i]);
		break;
	default: break;
	}
	if (!ok) ib_error(w, IB_ERR_INVALID_ARGUMENT, "invalid query shape geometry");
	return ok;
}

int ibWorld_OverlapShape(ibWorldId id, const ibQueryShape* shape, ibVec3 position, ibQuat rotation,
                         ibQueryFilter filter, ibShapeId* out, int capacity)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return -1;
	ibConvex qc;
	if (!query_convex(w, shape, position, rotation, &qc)) return -1;
	if (ib_collision_sync(w) != IB_OK) return -1;
	OverlapCtx c = {w, filter, &qc, out, capacity > 0 ? capacity : 0, 0};
	ib_broadphase_query(w->collision->bp, ib_convex_aabb(&qc), overlap_cb, &c);
	return c.count;
}

static void fill_distance(ibDistanceOutput* out, const ibConvexDistance* d)
{
	out->pointA = d->pointA;
	out->pointB = d->pointB;
	out->normal = d->normal;
	out->distance = d->distance;
}

ibResult ibShape_Distance(ibShapeId a, ibShapeId b, ibDistanceOutput* out)
{
	ibWorld *wa, *wb;
	ibShape* sa = ib_shape_get(a, &wa);
	if (!sa) return IB_ERR_STALE_HANDLE;
	ibShape* sb = ib_shape_get(b, &wb);
	if (!sb) return IB_ERR_STALE_HANDLE;
	if (wa != wb) return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "shapes belong to different worlds");
	if (!out) return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "output is NULL");
	ibConvex ca, cb;
	if (!ib_shape_convex(&wa->bodies[sa->body], sa, &ca) || !ib_shape_convex(&wa->bodies[sb->body], sb, &cb))
		return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "distance queries need convex shapes");
	ibConvexDistance d = ib_convex_query(&ca, &cb, NULL);
	if (!isfinite(d.distance)) return ib_error(wa, IB_ERR_INVALID_ARGUMENT, "shape poses are not finite");
	fill_distance(out, &d);
	return IB_OK;
}

ibResult ibShape_ClosestPoint(ibShapeId id, ibVec3 point, ibDistanceOutput* out)
{
	ibWorld* w;
	ibShape* s = ib_shape_get(id, &w);
	if (!s) return IB_ERR_STALE_HANDLE;
	if (!out || !ibVec3_IsFinite(point)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "point must be finite, output non-NULL");
	ibConvex cs;
	if (!ib_shape_convex(&w->bodies[s->body], s, &cs))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "closest-point queries need a convex shape");
	ibConvex pt = ib_convex_make(IB_CONVEX_SPHERE, point, IB_QUAT_IDENTITY);
	pt.radius = 0.0;
	ibConvexDistance d = ib_convex_query(&cs, &pt, NULL);
	fill_distance(out, &d);
	out->pointB = point;
	return IB_OK;
}
