/* Round contact points (spheres, capsules, cylinders' sides and rims), a disc's rim on a flat face, and what the
 * normal of a point turns with (nBody). */
#include <math.h>
#include <string.h>

#include "collision/hull.h"
#include "collision/trimesh.h"
#include "contact/contact_internal.h"

/* Round contact points: a shape whose surface is a core carried with the body (a point, a segment, a
 * circle) swept by a radius. Its contact point is found anew on that surface at every predicted pose
 * (ib_contact_points_at), not carried as a material point of the surface, which runs on a cycloid when
 * the body rolls. Sphere: the centre; capsule: the point of its segment a + r o (o the shape's outward
 * normal at the point a); cylinder on its side or its rim: the point of its axis at the same height (side)
 * or the centre of the end face (rim), and the point is found again with the radial direction of n at the
 * predicted pose (*axis: the cylinder's axis in the principal frame). A cylinder standing on an end face
 * (n within ~6 degrees of the axis) or touching at a point that is not the rim's or side's deepest keeps
 * material points. Returns the radius, 0 where the point is not round. */
static double round_point(const ibShape* s, const ibBody* b, ibVec3 p, ibVec3 o, ibVec3* core, ibVec3* axis)
{
	*axis = ibV3(0, 0, 0);
	if (s->type == IB_SHAPE_SPHERE || s->type == IB_SHAPE_CAPSULE) {
		double r = s->type == IB_SHAPE_SPHERE ? s->g.sphere.radius : s->g.capsule.radius;
		*core = ibMat3_MulTV(b->R, ibSub(ibMulAdd(p, -r, o), b->st.s));
		return r;
	}
	if (s->type != IB_SHAPE_CYLINDER) return 0.0;
	const double r = s->g.cylinder.radius, hl = s->g.cylinder.halfLength;
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(b, s, &sp, &sq);
	ibVec3 z = ibRotate(sq, ibV3(0, 0, 1));
	ibVec3 u = ibMulAdd(o, -ibDot(o, z), z);
	double lu = ibLength(u);
	if (!(lu >= 0.1)) return 0.0;
	/* the point of the axis (side) or the end face's centre (rim); within 1e-3 r of it (the manifold's normal
	 * may lean by ~1e-4 rad from the exact one; a carried rim point 1e-3 rad away from the deepest is 5e-7 r
	 * above it), projected onto the axis */
	ibVec3 d = ibSub(ibMulAdd(p, -r / lu, u), sp);
	double along = ibDot(d, z), tol = 1e-3 * r;
	if (ibLengthSq(ibMulAdd(d, -along, z)) > tol * tol || fabs(along) > hl + tol) return 0.0;
	ibVec3 c = ibMulAdd(sp, ib_fmax(-hl, ib_fmin(hl, along)), z);
	*core = ibMat3_MulTV(b->R, ibSub(c, b->st.s));
	*axis = ibMat3_MulTV(b->R, z);
	return r;
}

bool ib_contact_set_round(const ibWorld* w, ibContactRow* c)
{
	const ibBody* x = &w->bodies[c->b1];
	const ibBody* y = &w->bodies[c->b2];
	c->rad1 = round_point(&w->shapes[c->s1], x, c->a, ibNeg(c->n), &c->lc1, &c->ax1); /* n: from body 2 to body 1 */
	c->rad2 = round_point(&w->shapes[c->s2], y, c->b, c->n, &c->lc2, &c->ax2);
	if (!(c->rad1 > 0.0) && !(c->rad2 > 0.0)) return false;
	ibVec3 a = c->rad1 > 0.0 ? ib_contact_round_at(x->st.s, &x->R, c->lc1, -c->rad1, c->ax1, c->n) : c->a;
	ibVec3 b = c->rad2 > 0.0 ? ib_contact_round_at(y->st.s, &y->R, c->lc2, c->rad2, c->ax2, c->n) : c->b;
	c->gap += ibDot(ibSub(ibSub(a, c->a), ibSub(b, c->b)), c->n);
	c->a = a;
	c->b = b;
	return true;
}

/* n lies across the axis ax (principal frame) of a cylinder on body i (within 1e-6): a point of its side */
static bool across_axis(const ibWorld* w, int32_t i, ibVec3 ax, ibVec3 n) { return fabs(ibDot(n, ibMat3_MulV(w->bodies[i].R, ax))) <= 1e-6; }

bool ib_contact_rim_sample(const ibWorld* w, const ibContactStore* cs, int32_t first, int32_t last, const ibContactRow* c)
{
	for (int side = 0; side < 2; ++side) {
		int32_t s = side ? c->s2 : c->s1;
		if (w->shapes[s].type != IB_SHAPE_CYLINDER || (side ? c->rad2 : c->rad1) > 0.0) continue;
		const ibBody* b = &w->bodies[side ? c->b2 : c->b1];
		ibVec3 l = ibMat3_MulTV(b->R, ibSub(side ? c->b : c->a, b->st.s));
		double tol = 1e-6 * w->shapes[s].g.cylinder.radius;
		for (int32_t k = first; k < last; ++k) { /* a round point in the sample's end plane */
			const ibContactRow* o = &cs->pts[k];
			if (o == c || !((side ? o->rad2 : o->rad1) > 0.0)) continue;
			ibVec3 ax = side ? o->ax2 : o->ax1;
			if (fabs(ibDot(ibSub(l, side ? o->lc2 : o->lc1), ax)) <= tol) return true;
			/* a round point of the side (n across the axis): the side's line of contact is the round points'
			 * segment, and any other point of that cylinder in the region (the speculative region's clipped
			 * points, carried with a cylinder spinning about its axis) only doubles it */
			if (across_axis(w, side ? c->b2 : c->b1, ax, o->n)) return true;
		}
	}
	return false;
}

/* A box or hull shape (flat faces) and, if so, whether its point p lies on exactly one face (within 1e-9 of
 * its size), not on an edge or a corner. */
static bool flat_shape(const ibShape* s) { return s->type == IB_SHAPE_BOX || (s->type == IB_SHAPE_HULL && s->hull); }

static bool on_one_face(const ibWorld* w, int32_t shape, ibVec3 p)
{
	const ibShape* s = &w->shapes[shape];
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(&w->bodies[s->body], s, &sp, &sq);
	ibVec3 q = ibInvRotate(sq, ibSub(p, sp));
	if (s->type == IB_SHAPE_BOX) {
		ibVec3 he = s->g.box.halfExtents;
		double tol = 1e-9 * (he.x + he.y + he.z);
		return (fabs(q.x) >= he.x - tol) + (fabs(q.y) >= he.y - tol) + (fabs(q.z) >= he.z - tol) == 1;
	}
	const ibHullData* h = &s->hull->view;
	double size = 0.0;
	for (int i = 0; i < h->vertexCount; ++i) size = ib_fmax(size, ibLength(h->vertices[i]));
	int faces = 0;
	for (int f = 0; f < h->faceCount && faces < 2; ++f) faces += fabs(ibDot(h->faces[f].normal, q) - h->faces[f].offset) <= 1e-9 * size;
	return faces == 1;
}

/* Whether q lies on a flat face of a shape (box or hull face, a cylinder's end face inside its rim, a plane,
 * a triangle of a mesh; within 1e-9 of the shape's size of exactly one face, and within its boundary), and if
 * so that face's plane (outward world normal *pn, offset *pd; either may be NULL). On a mesh any triangle
 * counts whose plane holds q: the rim points of ib_contact_flat_rim, projected onto the first one's plane,
 * stay only where a coplanar triangle lies under them. */
static bool flat_face_at(const ibWorld* w, int32_t shape, ibVec3 q, ibVec3* pn, double* pd)
{
	const ibShape* s = &w->shapes[shape];
	ibVec3 sp;
	ibQuat sq;
	ib_shape_world_pose(&w->bodies[s->body], s, &sp, &sq);
	ibVec3 l = ibInvRotate(sq, ibSub(q, sp)), nl;
	double off;
	switch (s->type) {
	case IB_SHAPE_PLANE:
		nl = ibNormalize(s->g.plane.normal), off = s->g.plane.offset;
		break;
	case IB_SHAPE_BOX: {
		if (!on_one_face(w, shape, q)) return false;
		ibVec3 he = s->g.box.halfExtents;
		double tol = 1e-9 * (he.x + he.y + he.z);
		int k = fabs(l.x) >= he.x - tol ? 0 : fabs(l.y) >= he.y - tol ? 1 : 2;
		double c[3] = {l.x, l.y, l.z}, e[3] = {he.x, he.y, he.z}, m[3] = {0, 0, 0};
		m[k] = c[k] > 0.0 ? 1.0 : -1.0;
		nl = ibV3(m[0], m[1], m[2]), off = e[k];
		break;
	}
	case IB_SHAPE_CYLINDER: {
		double r = s->g.cylinder.radius, hl = s->g.cylinder.halfLength, tol = 1e-9 * (r + hl);
		if (!(fabs(fabs(l.z) - hl) <= tol) || !(l.x * l.x + l.y * l.y < (r - tol) * (r - tol))) return false;
		nl = ibV3(0, 0, l.z > 0.0 ? 1.0 : -1.0), off = hl;
		break;
	}
	case IB_SHAPE_HULL: {
		if (!s->hull) return false;
		const ibHullData* hd = &s->hull->view;
		double size = 0.0;
		for (int i = 0; i < hd->vertexCount; ++i) size = ib_fmax(size, ibLength(hd->vertices[i]));
		int face = -1, on = 0;
		for (int f = 0; f < hd->faceCount; ++f) {
			double d = ibDot(hd->faces[f].normal, l) - hd->faces[f].offset;
			if (d > 1e-9 * size) return false; /* outside */
			if (d >= -1e-9 * size) face = f, ++on;
		}
		if (on != 1) return false;
		nl = hd->faces[face].normal, off = hd->faces[face].offset;
		break;
	}
	case IB_SHAPE_TRIMESH: { /* a triangle's plane; the rim's points must lie on the same plane */
		ibAABB bb = ib_trimesh_bounds(s->trimesh);
		if (!ib_trimesh_face_at(s->trimesh, l, 1e-9 * (1.0 + ibLength(ibSub(bb.hi, bb.lo))), &nl, &off)) return false;
		break;
	}
	default: return false;
	}
	ibVec3 nw = ibRotate(sq, nl);
	if (pn) *pn = nw;
	if (pd) *pd = off + ibDot(nw, sp);
	return true;
}

/* a material point of the row's body side (0: body 1) at world point p, its partner fq on the flat face;
 * otherwise (bodies, materials, manifold group) as row c */
static void rim_material_point(const ibWorld* w, const ibContactRow* c, int side, ibVec3 p, ibVec3 fq, ibContactRow* f)
{
	*f = *c;
	f->a = side ? fq : p;
	f->b = side ? p : fq;
	f->gap = ibDot(ibSub(f->a, f->b), c->n);
	if (side) f->rad2 = 0.0;
	else f->rad1 = 0.0;
	const ibBody *x = &w->bodies[c->b1], *y = &w->bodies[c->b2];
	f->la = f->ta = ibMat3_MulTV(x->R, ibSub(f->a, x->st.s));
	f->lb = f->tb = ibMat3_MulTV(y->R, ibSub(f->b, y->st.s));
	ib_contact_set_normal(w, f);
	f->K = ib_contact_response(w, f->b1, f->a, f->b2, f->b);
	f->nKn = ibDot(f->n, ibMat3_MulV(f->K, f->n));
	f->kinv = 0;
	f->accN = f->accVN = 0.0;
	f->accT = IB_VEC3_ZERO;
}

int ib_contact_flat_rim(const ibWorld* w, ibContactRow* c, double reach, ibContactRow f[3])
{
	for (int side = 0; side < 2; ++side) {
		double rad = side ? c->rad2 : c->rad1;
		ibVec3 ax = side ? c->ax2 : c->ax1;
		int32_t bi = side ? c->b2 : c->b1, other = side ? c->s1 : c->s2;
		if (!(rad > 0.0) || ibLengthSq(ax) == 0.0 || across_axis(w, bi, ax, c->n)) continue; /* not a rim */
		ibVec3 p = side ? c->b : c->a, q = side ? c->a : c->b; /* the round point and its partner */
		ibVec3 pn;
		double pd;
		if (!flat_face_at(w, other, q, &pn, &pd)) continue;
		double pnn = ibDot(pn, c->n);
		if (!(fabs(pnn) > 0.5)) continue;
		const ibBody* b = &w->bodies[bi];
		ibVec3 core = ibAdd(b->st.s, ibMat3_MulV(b->R, side ? c->lc2 : c->lc1));
		ibVec3 r = ibSub(p, core), z = ibMat3_MulV(b->R, ax), t = ibCross(z, r);
		const ibVec3 pts[3] = {ibSub(core, r), ibAdd(core, t), ibSub(core, t)}; /* 180 and +-90 degrees round the rim */
		/* their height over the face's plane (the far one first), beyond the round point's */
		double h0 = ibDot(pn, p) - pd;
		if (!(ibDot(pn, pts[0]) - pd - h0 <= reach)) return -1;
		int k = 0;
		for (int i = 0; i < 3; ++i) {
			ibVec3 fq = ibMulAdd(pts[i], (pd - ibDot(pn, pts[i])) / pnn, c->n); /* along n onto the face's plane */
			if (!flat_face_at(w, other, fq, NULL, NULL)) continue; /* beyond the face's edge */
			rim_material_point(w, c, side, pts[i], fq, &f[k]);
			f[k].key = c->key ^ (0x9e3779b9u * (uint32_t)(i + 1));
			f[k].gIdx = 0; /* a point of its own, not of c's manifold group */
			f[k].gCount = 1;
			++k;
		}
		rim_material_point(w, c, side, p, q, c); /* the round point itself */
		return k;
	}
	return -1;
}

/* [IMPL] What the normal of a point between two dynamic bodies turns with (ibContactRow.nBody), where
 * either shape is round. Turning with a sphere, the normal spun with it: a ball rolling at 2 m/s on a
 * dynamic board slowed to 0.77 m/s in 2 s and sank 5.5 mm, a ball spinning at 20 rad/s pushed its
 * frictionless neighbour 4.4 cm away in 2 s.
 * - two spheres or capsules: the line of their cores (3);
 * - a sphere or capsule on a face of a box or hull, a cylinder's round point on anything not round: the
 *   other body;
 * - a sphere or capsule on an edge or corner of a box or hull: the line from its core to the other's
 *   carried point (4: core on body 1, 5: on body 2). Turning with the box there, the 10-course wall of test_contact_wall
 *   (a pendulum ball hitting stones that tumble) penetrated 3.9e-3 m at the impact;
 * - a sphere or capsule on a cylinder's side: the line of the cores across the cylinder's axis (6, 7);
 * - two cylinders side to side (n across both axes): with parallel axes (IB_CYLINDERS_CROSSING) the line of the
 *   cores across body 2's axis (8), else the direction across both axes at t0, held for the step (9; z1 x z2 at
 *   the predicted poses turned with a fast-turning cylinder and made the loops diverge). Turning with a
 *   cylinder spinning about its axis, the normal pushed a frictionless neighbour lying beside it 4.4 cm
 *   away in 2 s;
 * - a sphere or capsule on a cylinder's rim (a round point whose n is not across the axis): from the
 *   nearest point of the rim's circle to its core (10: the rim on body 2, 11: on body 1). Turning with a
 *   disc spinning about its axis, the normal pushed a frictionless ball touching its upper rim 0.18 m
 *   away in 2 s;
 * - else (meshes, a cylinder's rim on another cylinder) body 2, as between other shapes. */
static int normal_body(const ibWorld* w, const ibContactRow* c)
{
	const bool p1 = c->rad1 > 0.0 && ibLengthSq(c->ax1) == 0.0, p2 = c->rad2 > 0.0 && ibLengthSq(c->ax2) == 0.0;
	if (p1 && p2) return 3;
	if (p2 && !(c->rad1 > 0.0)) {
		if (!flat_shape(&w->shapes[c->s1])) return 2;
		return on_one_face(w, c->s1, c->a) ? 1 : 5;
	}
	if (p1 && !(c->rad2 > 0.0)) {
		if (!flat_shape(&w->shapes[c->s2])) return 2;
		return on_one_face(w, c->s2, c->b) ? 2 : 4;
	}
	/* a sphere or capsule on a cylinder's side (n across its axis): the line of the cores without its
	 * part along the cylinder's axis (6: the cylinder is body 2, 7: body 1) */
	if (p1 && c->rad2 > 0.0 && across_axis(w, c->b2, c->ax2, c->n)) return 6;
	if (p2 && c->rad1 > 0.0 && across_axis(w, c->b1, c->ax1, c->n)) return 7;
	if (p1 && c->rad2 > 0.0) return 10; /* on a rim: the core outside the rim's radius (round_point) */
	if (p2 && c->rad1 > 0.0) return 11;
	if (c->rad2 > 0.0 && !(c->rad1 > 0.0)) return 1; /* a cylinder's round point */
	if (c->rad1 > 0.0 && c->rad2 > 0.0 && across_axis(w, c->b1, c->ax1, c->n) && across_axis(w, c->b2, c->ax2, c->n)) {
		/* two cylinders, side to side: parallel or crossing axes (IB_CYLINDERS_CROSSING; it was 1e-6, and a
		 * 3-2-1 pile of logs gained 787 J in its first step, one log on two 248 J after 2 s) */
		ibVec3 z1 = ibMat3_MulV(w->bodies[c->b1].R, c->ax1), z2 = ibMat3_MulV(w->bodies[c->b2].R, c->ax2);
		return ibLength(ibCross(z1, z2)) <= IB_CYLINDERS_CROSSING ? 8 : 9;
	}
	return 2;
}

void ib_contact_set_normal(const ibWorld* w, ibContactRow* c)
{
	const ibBody* x = &w->bodies[c->b1];
	const ibBody* y = &w->bodies[c->b2];
	/* the normal rotates with body 2 unless body 2 moves and body 1 does not */
	c->nBody = (ib_is_dynamic(y) && !ib_is_dynamic(x)) ? 1 : 2;
	if (ib_is_dynamic(x) && ib_is_dynamic(y)) c->nBody = normal_body(w, c);
	c->ln = ibMat3_MulTV(c->nBody == 1 || c->nBody == 4 ? x->R : y->R, c->n);
}

