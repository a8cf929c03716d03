/* Debug drawing (ibWorld_Draw): shapes through drawShape (or wireframes through drawSegment), their
 * AABBs and the contact points of the last detection. */
#include <math.h>

#include "collision/collision_world_internal.h"

enum { COLOR_STATIC = 0x7fbf7f, COLOR_KINEMATIC = 0x7f7fff, COLOR_DYNAMIC = 0xe6e6b3, COLOR_BOUNDS = 0xe68080,
       COLOR_CONTACT = 0xff3030, COLOR_NORMAL = 0x30ff30 };

ibDebugDraw ibDefaultDebugDraw(void)
{
	ibDebugDraw d = {0};
	d.drawShapes = d.drawBounds = d.drawContacts = true;
	return d;
}

static void box_edges(const ibDebugDraw* d, ibVec3 c[8], uint32_t color)
{
	static const int e[12][2] = {{0, 1}, {1, 3}, {3, 2}, {2, 0}, {4, 5}, {5, 7}, {7, 6}, {6, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
	for (int k = 0; k < 12; ++k) d->drawSegment(c[e[k][0]], c[e[k][1]], color, d->context);
}

static void circle(const ibDebugDraw* d, const ibConvex* c, double r, double z, int plane, uint32_t color)
{
	const int n = 24;
	ibVec3 prev = {0, 0, 0};
	for (int i = 0; i <= n; ++i) {
		double a = 2.0 * 3.14159265358979323846 * i / n;
		ibVec3 l = plane == 0 ? (ibVec3){r * cos(a), r * sin(a), z} : plane == 1 ? (ibVec3){r * cos(a), z, r * sin(a)}
		                                                                       : (ibVec3){z, r * cos(a), r * sin(a)};
		ibVec3 p = ib_convex_to_world(c, l);
		if (i > 0) d->drawSegment(prev, p, color, d->context);
		prev = p;
	}
}

static void wireframe(const ibDebugDraw* d, const ibShape* s, const ibConvex* c, uint32_t color)
{
	switch (c->type) {
	case IB_CONVEX_BOX: {
		ibVec3 h = c->halfExtents, k[8];
		for (int i = 0; i < 8; ++i)
			k[i] = ib_convex_to_world(c, (ibVec3){i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z});
		box_edges(d, k, color);
		break;
	}
	case IB_CONVEX_SPHERE:
		for (int p = 0; p < 3; ++p) circle(d, c, c->radius, 0.0, p, color);
		break;
	case IB_CONVEX_CAPSULE:
	case IB_CONVEX_CYLINDER:
		circle(d, c, c->radius, c->halfLength, 0, color);
		circle(d, c, c->radius, -c->halfLength, 0, color);
		for (int i = 0; i < 4; ++i) {
			double a = 0.5 * 3.14159265358979323846 * i;
			ibVec3 u = {c->radius * cos(a), c->radius * sin(a), 0.0};
			d->drawSegment(ib_convex_to_world(c, (ibVec3){u.x, u.y, -c->halfLength}),
			               ib_convex_to_world(c, (ibVec3){u.x, u.y, c->halfLength}), color, d->context);
		}
		break;
	default:
		for (int t = 0; t < s->meshTriangleCount; ++t)
			for (int k = 0; k < 3; ++k)
				d->drawSegment(ib_convex_to_world(c, s->meshVertices[s->meshIndices[3 * t + k]]),
				               ib_convex_to_world(c, s->meshVertices[s->meshIndices[3 * t + (k + 1) % 3]]), color,
				               d->context);
		break;
	}
}

ibResult ibWorld_Draw(ibWorldId id, const ibDebugDraw* d)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (!d) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "debug draw is NULL");
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		const ibShape* s = &w->shapes[i];
		if (!s->inUse) continue;
		const ibBody* b = &w->bodies[s->body];
		uint32_t color = b->type == IB_BODY_STATIC ? COLOR_STATIC : b->type == IB_BODY_KINEMATIC ? COLOR_KINEMATIC
		                                                                                         : COLOR_DYNAMIC;
		ibVec3 p;
		ibQuat q;
		ib_shape_world_pose(b, s, &p, &q);
		if (!ibVec3_IsFinite(p) || !ibQuat_IsFinite(q)) continue;
		if (d->drawShapes) {
			ibConvex c;
			if (d->drawShape)
				d->drawShape(p, q, ib_shape_handle(w, i), color, d->context);
			else if (d->drawSegment && ib_shape_convex(b, s, &c))
				wireframe(d, s, &c, color);
		}
		if (d->drawBounds && d->drawSegment) {
			ibAABB a = ib_shape_world_aabb(b, s);
			ibVec3 k[8];
			for (int j = 0; j < 8; ++j)
				k[j] = (ibVec3){j & 1 ? a.hi.x : a.lo.x, j & 2 ? a.hi.y : a.lo.y, j & 4 ? a.hi.z : a.lo.z};
			box_edges(d, k, COLOR_BOUNDS);
		}
	}
	if (d->drawContacts) {
		ibContactPair* c;
		int n = ib_collision_contacts(w, &c);
		for (int i = 0; i < n; ++i)
			for (int k = 0; k < c[i].manifold.pointCount; ++k) {
				const ibManifoldPoint* p = &c[i].manifold.points[k];
				if (d->drawContact) {
					d->drawContact(p->pointB, c[i].manifold.normal, p->separation, d->context);
					continue;
				}
				if (d->drawPoint) d->drawPoint(p->pointB, 0.01, COLOR_CONTACT, d->context);
				if (d->drawSegment)
					d->drawSegment(p->pointB, ibMulAdd(p->pointB, 0.1, c[i].manifold.normal), COLOR_NORMAL, d->context);
			}
	}
	return IB_OK;
}
