/* Ray casts against convex shapes: closed forms for spheres, boxes, capsules and cylinders (in the
 * shape frame), and for hulls the plane-stepping ray cast on the exact point-shape distance (each step
 * moves to the supporting plane at the closest point, so it never passes the surface). */
#include <math.h>

#include "collision/collision_world_internal.h"
#include "math/fminmax.h"

/* smallest root in [0, maxT] of |m + t d|_perp^2 = r^2 style quadratics a t^2 + 2 b t + c = 0 */
static bool quad_entry(double a, double b, double c, double maxT, double* t)
{
	if (c <= 0.0) {
		*t = 0.0;
		return true;
	}
	if (a <= 0.0 || b >= 0.0) return false;
	double disc = b * b - a * c;
	if (disc < 0.0) return false;
	double r = (-b - sqrt(disc)) / a;
	if (r < 0.0 || r > maxT) return false;
	*t = r;
	return true;
}

static bool ray_sphere(ibVec3 m, ibVec3 d, double r, double maxT, double* t, ibVec3* n)
{
	if (!quad_entry(ibDot(d, d), ibDot(m, d), ibDot(m, m) - r * r, maxT, t)) return false;
	ibVec3 p = ibMulAdd(m, *t, d);
	double l = ibLength(p);
	*n = l > 0.0 ? ibScale(1.0 / l, p) : ibNormalize(ibNeg(d));
	return true;
}

static bool ray_box(ibVec3 o, ibVec3 d, ibVec3 h, double maxT, double* t, ibVec3* n)
{
	double tmin = 0.0, tmax = maxT;
	int axis = -1;
	double sign = 0.0;
	const double oa[3] = {o.x, o.y, o.z}, da[3] = {d.x, d.y, d.z}, ha[3] = {h.x, h.y, h.z};
	for (int k = 0; k < 3; ++k) {
		if (da[k] == 0.0) {
			if (oa[k] < -ha[k] || oa[k] > ha[k]) return false;
			continue;
		}
		double t1 = (-ha[k] - oa[k]) / da[k], t2 = (ha[k] - oa[k]) / da[k];
		double s = -1.0;
		if (t1 > t2) {
			double x = t1;
			t1 = t2;
			t2 = x;
			s = 1.0;
		}
		if (t1 > tmin) {
			tmin = t1;
			axis = k;
			sign = s;
		}
		tmax = ib_fmin(tmax, t2);
		if (tmin > tmax) return false;
	}
	*t = tmin;
	double v[3] = {0, 0, 0};
	if (axis >= 0) {
		v[axis] = sign;
		*n = (ibVec3){v[0], v[1], v[2]};
	} else { /* inside: nearest face */
		ibVec3 q = o;
		double best = INFINITY;
		for (int k = 0; k < 3; ++k) {
			double qa = k == 0 ? q.x : k == 1 ? q.y : q.z;
			double gap = ha[k] - fabs(qa);
			if (gap < best) {
				best = gap;
				v[0] = v[1] = v[2] = 0.0;
				v[k] = qa >= 0.0 ? 1.0 : -1.0;
			}
		}
		*n = (ibVec3){v[0], v[1], v[2]};
	}
	return true;
}

/* infinite cylinder x^2 + y^2 = r^2 restricted to |z| <= hl; (hit side only) */
static bool ray_tube(ibVec3 o, ibVec3 d, double r, double hl, double maxT, double* t, ibVec3* n)
{
	double a = d.x * d.x + d.y * d.y, b = o.x * d.x + o.y * d.y, c = o.x * o.x + o.y * o.y - r * r;
	if (c <= 0.0 || a <= 0.0 || b >= 0.0) return false; /* inside the tube or parallel: caller handles */
	double disc = b * b - a * c;
	if (disc < 0.0) return false;
	double s = (-b - sqrt(disc)) / a;
	if (s < 0.0 || s > maxT) return false;
	double z = o.z + s * d.z;
	if (z < -hl || z > hl) return false;
	*t = s;
	ibVec3 p = ibMulAdd(o, s, d);
	*n = ibNormalize((ibVec3){p.x, p.y, 0.0});
	return true;
}

static bool ray_capsule(ibVec3 o, ibVec3 d, double r, double hl, double maxT, double* t, ibVec3* n)
{
	/* inside? distance to the segment */
	double zc = ib_fmax(-hl, ib_fmin(hl, o.z));
	ibVec3 off = {o.x, o.y, o.z - zc};
	if (ibDot(off, off) <= r * r) {
		*t = 0.0;
		double l = ibLength(off);
		*n = l > 0.0 ? ibScale(1.0 / l, off) : ibNormalize(ibNeg(d));
		return true;
	}
	bool hit = false;
	double best = maxT, tt;
	ibVec3 nn;
	if (ray_tube(o, d, r, hl, best, &tt, &nn)) {
		hit = true;
		best = tt;
		*n = nn;
	}
	for (int s = -1; s <= 1; s += 2) {
		ibVec3 m = {o.x, o.y, o.z - s * hl};
		if (ray_sphere(m, d, r, best, &tt, &nn) && (!hit || tt < best)) {
			hit = true;
			best = tt;
			*n = nn;
		}
	}
	*t = best;
	return hit;
}

static bool ray_cylinder(ibVec3 o, ibVec3 d, double r, double hl, double maxT, double* t, ibVec3* n)
{
	if (o.x * o.x + o.y * o.y <= r * r && fabs(o.z) <= hl) {
		*t = 0.0;
		double side = r - sqrt(o.x * o.x + o.y * o.y), cap = hl - fabs(o.z);
		*n = cap <= side ? (ibVec3){0, 0, o.z >= 0.0 ? 1.0 : -1.0} : ibNormalize((ibVec3){o.x, o.y, 0.0});
		if (!ibVec3_IsFinite(*n)) *n = (ibVec3){0, 0, 1};
		return true;
	}
	bool hit = false;
	double best = maxT, tt;
	ibVec3 nn;
	if (ray_tube(o, d, r, hl, best, &tt, &nn)) {
		hit = true;
		best = tt;
		*n = nn;
	}
	if (d.z != 0.0)
		for (int s = -1; s <= 1; s += 2) {
			double z = s * hl;
			if ((o.z - z) * s < 0.0) continue; /* cap seen from inside the slab */
			tt = (z - o.z) / d.z;
			if (tt < 0.0 || tt > best) continue;
			double x = o.x + tt * d.x, y = o.y + tt * d.y;
			if (x * x + y * y > r * r) continue;
			hit = true;
			best = tt;
			*n = (ibVec3){0, 0, (double)s};
		}
	*t = best;
	return hit;
}

static bool ray_generic(const ibConvex* c, ibVec3 p0, ibVec3 d, double maxT, double* t, ibVec3* n)
{
	ibConvex pt = ib_convex_make(IB_CONVEX_SPHERE, p0, IB_QUAT_IDENTITY);
	pt.radius = 0.0;
	ibAABB box = ib_convex_aabb(c);
	double scale = ib_fmax(1.0, ibLength(ibSub(box.hi, box.lo)));
	double tt = 0.0;
	ibGjkCache cache = {0};
	for (int it = 0; it < 100; ++it) {
		pt.position = ibMulAdd(p0, tt, d);
		ibConvexDistance q = ib_convex_query(&pt, c, &cache); /* normal from the shape towards the point */
		if (q.distance <= 1e-12 * scale) {
			*t = tt;
			*n = q.normal;
			return true;
		}
		double rate = -ibDot(d, q.normal);
		if (rate <= 0.0) return false;
		tt += q.distance / rate;
		if (tt > maxT) return false;
	}
	return false;
}

bool ib_ray_convex(const ibConvex* c, ibVec3 p0, ibVec3 d, double maxT, double* t, ibVec3* normal)
{
	ibVec3 o = ib_convex_to_local(c, p0);
	ibVec3 dl = ibMat3_MulTV(c->R, d);
	ibVec3 nl;
	bool hit;
	switch (c->type) {
	case IB_CONVEX_SPHERE: hit = ray_sphere(o, dl, c->radius, maxT, t, &nl); break;
	case IB_CONVEX_BOX: hit = ray_box(o, dl, c->halfExtents, maxT, t, &nl); break;
	case IB_CONVEX_CAPSULE: hit = ray_capsule(o, dl, c->radius, c->halfLength, maxT, t, &nl); break;
	case IB_CONVEX_CYLINDER: hit = ray_cylinder(o, dl, c->radius, c->halfLength, maxT, t, &nl); break;
	default: return ray_generic(c, p0, d, maxT, t, normal);
	}
	if (hit) *normal = ibMat3_MulV(c->R, nl);
	return hit;
}
