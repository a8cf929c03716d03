/* Detection of soft–rigid contacts at t0 (issue 7 part 3), with the rigid contacts (step.c
 * collide_t0, also in every TOI sub-step). Speculative: everything within the reach eps_c plus
 * the distance the soft points and the fastest body point can travel in the step becomes a row (a
 * row with a positive gap does nothing unless its prediction penetrates).
 *  - Vertices: every particle against the shapes the broadphase returns for its box; the exact
 *    test is point vs. plane, point vs. convex (GJK/EPA with a zero-radius sphere) or point vs.
 *    trimesh (closest point of the nearest triangle of the mesh's tree, one-sided).
 *  - Faces and edges: every triangle of a soft body (cloth or closed surface) against the convex
 *    shapes near it: the contact region of the shape and the triangle (ib_manifold_build with the
 *    reach as tolerance, the triangle as a 3-vertex hull) gives points on the triangle with
 *    barycentric weights; points at a vertex of the triangle are left to the vertex contacts.
 *    So a rigid corner, edge or small sphere cannot pass between two cloth vertices. Planes and
 *    trimeshes are flat: their contact with a soft triangle is at its vertices.
 * Particles of a soft body do not touch bodies it is attached to by a rigid–soft joint. */
#include <math.h>

#include "collision/broadphase.h"
#include "collision/collision_world.h"
#include "collision/convex.h"
#include "collision/trimesh.h"
#include "soft/soft_internal.h"

bool ib_soft_attached(const ibSoftStore* ss, int32_t soft, int32_t body)
{
	for (int32_t i = 0; i < ss->conHigh; ++i) {
		const ibSoftCon* c = &ss->cons[i];
		if (!c->inUse) continue;
		bool hasBody = false, hasSoft = false;
		for (int k = 0; k < c->count; ++k) {
			if (c->parts[k].isBody)
				hasBody |= c->parts[k].index == body;
			else
				hasSoft |= ss->particles[c->parts[k].index].soft == soft;
		}
		if (hasBody && hasSoft) return true;
	}
	return false;
}

/* Closest point of triangle abc to p (Voronoi regions of the vertices, edges and the face). */
ibVec3 ib_soft_closest_on_triangle(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c)
{
	ibVec3 ab = ibSub(b, a), ac = ibSub(c, a), ap = ibSub(p, a);
	double d1 = ibDot(ab, ap), d2 = ibDot(ac, ap);
	if (d1 <= 0.0 && d2 <= 0.0) return a;
	ibVec3 bp = ibSub(p, b);
	double d3 = ibDot(ab, bp), d4 = ibDot(ac, bp);
	if (d3 >= 0.0 && d4 <= d3) return b;
	double vc = d1 * d4 - d3 * d2;
	if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return ibMulAdd(a, d1 / (d1 - d3), ab);
	ibVec3 cp = ibSub(p, c);
	double d5 = ibDot(ab, cp), d6 = ibDot(ac, cp);
	if (d6 >= 0.0 && d5 <= d6) return c;
	double vb = d5 * d2 - d1 * d6;
	if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return ibMulAdd(a, d2 / (d2 - d6), ac);
	double va = d3 * d6 - d5 * d4;
	if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) return ibMulAdd(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), ibSub(c, b));
	double den = 1.0 / (va + vb + vc);
	return ibAdd(a, ibAdd(ibScale(vb * den, ab), ibScale(vc * den, ac)));
}

typedef struct MeshCtx {
	const ibTriMeshGeom* mesh;
	ibVec3 x;    /* the point in the shape frame */
	double best; /* distance to the nearest triangle so far */
	double dist; /* its signed distance (< 0: behind its face) */
	ibVec3 q, n;
	bool found;
} MeshCtx;

static bool mesh_cb(void* vctx, int tri)
{
	MeshCtx* c = vctx;
	const int* k = c->mesh->indices + 3 * tri;
	ibVec3 a = c->mesh->vertices[k[0]], b = c->mesh->vertices[k[1]], d = c->mesh->vertices[k[2]];
	ibVec3 q = ib_soft_closest_on_triangle(c->x, a, b, d);
	ibVec3 r = ibSub(c->x, q);
	double l = ibLength(r);
	if (!(l < c->best)) return true;
	ibVec3 fn = ibCross(ibSub(b, a), ibSub(d, a));
	double fl = ibLength(fn);
	if (!(fl > 0.0)) return true; /* degenerate triangle */
	fn = ibScale(1.0 / fl, fn);
	/* one-sided, as for rigid shapes (src/collision/trimesh_contact.c): over the face the signed
	 * distance along its normal (a particle that has passed through is pushed back out); off the face
	 * (the nearest point on an edge or a vertex) only from the front, the normal towards the point */
	double sd = ibDot(r, fn);
	bool over = fabs(fabs(sd) - l) <= 1e-12 * (1.0 + l);
	if (!over && sd < 0.0) return true;
	c->n = over || !(l > 1e-12) ? fn : ibScale(1.0 / l, r);
	c->dist = over ? sd : l;
	c->best = l;
	c->q = q;
	c->found = true;
	return true;
}

bool ib_soft_point_shape(const ibBody* b, const ibShape* s, ibVec3 x, double reach, double* dist, ibVec3* q, ibVec3* n)
{
	if (s->type == IB_SHAPE_PLANE) {
		ibVec3 pos;
		ibQuat rot;
		ib_shape_world_pose(b, s, &pos, &rot);
		ibVec3 nw = ibRotate(rot, s->g.plane.normal);
		ibVec3 p0 = ibAdd(pos, ibScale(s->g.plane.offset, nw));
		*dist = ibDot(ibSub(x, p0), nw);
		*q = ibMulAdd(x, -*dist, nw);
		*n = nw;
		return true;
	}
	if (s->type == IB_SHAPE_TRIMESH) {
		if (!s->trimesh) return false;
		ibVec3 pos;
		ibQuat rot;
		ib_shape_world_pose(b, s, &pos, &rot);
		rot = ibQuatNormalize(rot);
		MeshCtx c = {s->trimesh, ibRotate(ibQuatConj(rot), ibSub(x, pos)), reach, 0.0, IB_VEC3_ZERO, IB_VEC3_ZERO, false};
		ibVec3 e = ibV3(reach, reach, reach);
		ibAABB box = {ibSub(c.x, e), ibAdd(c.x, e)};
		ib_trimesh_query_aabb(s->trimesh, box, mesh_cb, &c);
		if (!c.found) return false;
		*dist = c.dist;
		*q = ibAdd(pos, ibRotate(rot, c.q));
		*n = ibRotate(rot, c.n);
		return true;
	}
	ibConvex cv;
	if (!ib_shape_convex(b, s, &cv)) return false;
	ibConvex pt = ib_convex_make(IB_CONVEX_SPHERE, x, IB_QUAT_IDENTITY);
	pt.radius = 0.0;
	ibConvexDistance d = ib_convex_query(&cv, &pt, NULL);
	if (!ibVec3_IsFinite(d.normal) || !(ibLengthSq(d.normal) > 0.5)) return false;
	*dist = d.distance;
	*q = d.pointA;
	*n = ibNeg(d.normal); /* d.normal points from the point (B) to the shape (A) */
	return true;
}

typedef struct DetectCtx {
	ibWorld* w;
	ibSoftStore* ss;
	int32_t particle; /* vertex query, or -1 */
	int32_t soft, tri; /* face query: soft body and triangle */
	double h, reach;
	bool oom;
} DetectCtx;

static ibSoftContact* new_contact(DetectCtx* c)
{
	ibSoftStore* ss = c->ss;
	if (!ib_grow(c->w, (void**)&ss->contacts, &ss->contactCapacity, ss->contactCount + 1, sizeof(ibSoftContact))) {
		c->oom = true;
		return NULL;
	}
	return &ss->contacts[ss->contactCount++];
}

static bool vertex_cb(void* vctx, int32_t proxy)
{
	DetectCtx* c = vctx;
	ibWorld* w = c->w;
	ibSoftStore* ss = c->ss;
	int32_t si = ib_broadphase_user_id(ib_collision_broadphase(w), proxy);
	const ibShape* s = &w->shapes[si];
	const ibBody* b = &w->bodies[s->body];
	const ibParticle* p = &ss->particles[c->particle];
	double dist;
	ibVec3 q, n;
	if (!ib_soft_point_shape(b, s, p->x, c->reach, &dist, &q, &n)) return true;
	if (dist > c->reach) return true;
	if (ib_soft_attached(ss, p->soft, s->body)) return true;
	ibSoftContact* k = new_contact(c);
	if (!k) return false;
	k->np = 1;
	k->p[0] = k->p[1] = k->p[2] = c->particle;
	k->wt[0] = 1.0;
	k->wt[1] = k->wt[2] = 0.0;
	k->body = s->body;
	k->shape = si;
	k->sphere = false;
	if (!ib_soft_contact_finish(w, ss, k, q, n, dist)) ss->contactCount--;
	return true;
}

/* Barycentric weights of p (on the triangle) in abc, clamped to the triangle. */
void ib_soft_barycentric(ibVec3 p, ibVec3 a, ibVec3 b, ibVec3 c, double wt[3])
{
	ibVec3 v0 = ibSub(b, a), v1 = ibSub(c, a), v2 = ibSub(p, a);
	double d00 = ibDot(v0, v0), d01 = ibDot(v0, v1), d11 = ibDot(v1, v1), d20 = ibDot(v2, v0), d21 = ibDot(v2, v1);
	double den = d00 * d11 - d01 * d01;
	double v = den > 0.0 ? (d11 * d20 - d01 * d21) / den : 0.0;
	double u = den > 0.0 ? (d00 * d21 - d01 * d20) / den : 0.0;
	wt[1] = fmax(0.0, v);
	wt[2] = fmax(0.0, u);
	wt[0] = fmax(0.0, 1.0 - v - u);
	double s = wt[0] + wt[1] + wt[2];
	for (int i = 0; i < 3; ++i) wt[i] /= s;
}

static bool face_cb(void* vctx, int32_t proxy)
{
	DetectCtx* c = vctx;
	ibWorld* w = c->w;
	ibSoftStore* ss = c->ss;
	int32_t si = ib_broadphase_user_id(ib_collision_broadphase(w), proxy);
	const ibShape* s = &w->shapes[si];
	const ibBody* b = &w->bodies[s->body];
	ibConvex cv;
	if (s->type == IB_SHAPE_PLANE || s->type == IB_SHAPE_TRIMESH || !ib_shape_convex(b, s, &cv)) return true;
	if (ib_soft_attached(ss, c->soft, s->body)) return true;
	const ibSoftBody* sb = &ss->softs[c->soft];
	int32_t pi[3];
	ibVec3 tv[3];
	for (int i = 0; i < 3; ++i) {
		pi[i] = sb->first + sb->tris[3 * c->tri + i];
		tv[i] = ss->particles[pi[i]].x;
	}
	ibConvex t = ib_convex_make(IB_CONVEX_HULL, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	t.vertices = tv;
	t.vertexCount = 3;
	ibManifold m;
	int count = ib_manifold_build(&cv, &t, c->reach, NULL, &m);
	if (count <= 0 || !ibVec3_IsFinite(m.normal)) return true;
	ibVec3 n = ibNeg(m.normal); /* m.normal points from the triangle (B) to the shape (A) */
	for (int j = 0; j < count; ++j) {
		const ibManifoldPoint* mp = &m.points[j];
		if (!(mp->separation <= c->reach)) continue;
		double wt[3];
		ib_soft_barycentric(mp->pointB, tv[0], tv[1], tv[2], wt);
		/* at a vertex: its vertex contact (a sphere's face row follows the closest point, so it is kept) */
		if (cv.type != IB_CONVEX_SPHERE && fmax(wt[0], fmax(wt[1], wt[2])) > 1.0 - 1e-6) continue;
		ibSoftContact* k = new_contact(c);
		if (!k) return false;
		k->np = 3;
		for (int i = 0; i < 3; ++i) {
			k->p[i] = pi[i];
			k->wt[i] = wt[i];
		}
		k->body = s->body;
		k->shape = si;
		k->sphere = cv.type == IB_CONVEX_SPHERE;
		if (k->sphere) {
			k->radius = cv.radius;
			k->lc = ibMat3_MulTV(b->R, ibSub(cv.position, b->st.s));
		}
		if (!ib_soft_contact_finish(w, ss, k, mp->pointA, n, mp->separation))
			ss->contactCount--;
		else
			ss->faceContactCount++;
	}
	return true;
}

void ib_soft_contacts_detect(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!ss) return;
	ss->contactCount = 0;
	ss->faceContactCount = 0;
	if (ss->particleCount == 0 || !w->solver.contact.enabled || !w->collisionSettings.enabled || w->shapeCount == 0)
		return;
	if (ib_collision_sync(w) != IB_OK) return;
	ibBroadphase* bp = ib_collision_broadphase(w);
	if (!bp) return;
	/* the fastest body point: |v| + |w| (distance of the shape's box corners from the COM) */
	double vb = 0.0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		const ibShape* s = &w->shapes[i];
		if (!s->inUse) continue;
		const ibBody* b = &w->bodies[s->body];
		if (b->type == IB_BODY_STATIC) continue;
		ibAABB box = ib_shape_world_aabb(b, s);
		ibVec3 c = ibScale(0.5, ibAdd(box.lo, box.hi));
		double r = ibLength(ibSub(c, b->st.s)) + 0.5 * ibLength(ibSub(box.hi, box.lo));
		if (!isfinite(r)) r = 0.0;
		vb = fmax(vb, ibLength(b->st.v) + ibLength(b->st.w) * r);
	}
	double g = ibLength(w->gravity);
	double eps = w->collisionSettings.contactTolerance;
	for (int32_t i = 0; i < ss->particleCount; ++i) {
		const ibParticle* p = &ss->particles[i];
		double reach = eps + h * (ibLength(p->v) + vb) + h * h * (g * fabs(p->gravityScale) + ibLength(p->f) * p->invMass);
		ibVec3 e = ibV3(reach, reach, reach);
		ibAABB box = {ibSub(p->x, e), ibAdd(p->x, e)};
		DetectCtx c = {w, ss, i, -1, -1, h, reach, false};
		ib_broadphase_query(bp, box, vertex_cb, &c);
		if (c.oom) return;
	}
	for (int32_t si = 0; si < ss->softHigh; ++si) {
		const ibSoftBody* sb = &ss->softs[si];
		if (!sb->inUse || sb->triCount == 0) continue;
		for (int t = 0; t < sb->triCount; ++t) {
			double reach = 0.0;
			ibAABB box = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
			for (int k = 0; k < 3; ++k) {
				const ibParticle* p = &ss->particles[sb->first + sb->tris[3 * t + k]];
				reach = fmax(reach, eps + h * (ibLength(p->v) + vb) +
				                        h * h * (g * fabs(p->gravityScale) + ibLength(p->f) * p->invMass));
				box.lo = ibV3(fmin(box.lo.x, p->x.x), fmin(box.lo.y, p->x.y), fmin(box.lo.z, p->x.z));
				box.hi = ibV3(fmax(box.hi.x, p->x.x), fmax(box.hi.y, p->x.y), fmax(box.hi.z, p->x.z));
			}
			ibVec3 e = ibV3(reach, reach, reach);
			box.lo = ibSub(box.lo, e);
			box.hi = ibAdd(box.hi, e);
			DetectCtx c = {w, ss, -1, si, t, h, reach, false};
			ib_broadphase_query(bp, box, face_cb, &c);
			if (c.oom) return;
		}
	}
}
