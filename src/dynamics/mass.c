/* Mass properties of the primitive shapes and of closed triangle meshes, plus the frame change,
 * combination and rescaling of ibMassData.
 *
 * Sources:
 * - Primitive inertia tensors: thesis App. D.1 (DIGEST §30). The capsule is composed from a cylinder
 *   and two hemispheres: hemisphere COM at 3r/8 from its base, moved with the parallel-axis theorem.
 * - Meshes: divergence theorem over the closed surface, i.e. the sum of signed tetrahedra spanned by a
 *   reference point and each triangle, with the exact tetrahedron moments
 *     int 1 = V,  int x = V s/4,  int x x^T = V/20 (sum_k v_k v_k^T + s s^T),  s = sum_k v_k
 *   (F. Tonon, "Explicit exact formulas for the 3-D tetrahedron inertia tensor in terms of its vertex
 *   coordinates", J. Math. & Stat. 1(1), 2005). This gives the same exact volume integrals as
 *   B. Mirtich, "Fast and accurate computation of polyhedral mass properties", JGT 1(2), 1996.
 *   The integrals are taken relative to the vertex mean and shifted to the COM afterwards, which
 *   keeps the cancellation error independent of where the mesh sits in space. */
#include "ibdyn/ibdyn.h"

#include <float.h>

static const double ibPi = 3.14159265358979323846;

static bool ibPositiveFinite(double v) { return isfinite(v) && v > 0.0; }

/* Writes a diagonal result if it is usable: overflow -> invalid argument, underflow -> degenerate. */
static ibResult ibFinishDiag(double mass, ibVec3 moments, ibMassData* out)
{
	if (!isfinite(mass) || !ibVec3_IsFinite(moments)) return IB_ERR_INVALID_ARGUMENT;
	if (!(mass > 0.0) || !(moments.x > 0.0) || !(moments.y > 0.0) || !(moments.z > 0.0)) return IB_ERR_DEGENERATE;
	out->mass = mass;
	out->center = IB_VEC3_ZERO;
	out->inertia = ibMat3_Diag(moments);
	return IB_OK;
}

IB_API ibResult ibComputeSphereMass(const ibSphere* s, double density, ibMassData* out)
{
	if (s == NULL || out == NULL || !ibPositiveFinite(density) || !ibPositiveFinite(s->radius)) return IB_ERR_INVALID_ARGUMENT;
	double r = s->radius;
	double m = density * (4.0 / 3.0) * ibPi * r * r * r;
	double i = 0.4 * m * r * r;
	return ibFinishDiag(m, ibV3(i, i, i), out);
}

IB_API ibResult ibComputeBoxMass(const ibBox* b, double density, ibMassData* out)
{
	if (b == NULL || out == NULL || !ibPositiveFinite(density)) return IB_ERR_INVALID_ARGUMENT;
	ibVec3 h = b->halfExtents;
	if (!ibPositiveFinite(h.x) || !ibPositiveFinite(h.y) || !ibPositiveFinite(h.z)) return IB_ERR_INVALID_ARGUMENT;
	double m = density * 8.0 * h.x * h.y * h.z;
	/* edges a = 2hx etc.: m (b^2 + c^2)/12 = m (hy^2 + hz^2)/3 */
	double k = m / 3.0;
	return ibFinishDiag(m, ibV3(k * (h.y * h.y + h.z * h.z), k * (h.x * h.x + h.z * h.z), k * (h.x * h.x + h.y * h.y)), out);
}

IB_API ibResult ibComputeCylinderMass(const ibCylinder* c, double density, ibMassData* out)
{
	if (c == NULL || out == NULL || !ibPositiveFinite(density) || !ibPositiveFinite(c->radius) ||
	    !ibPositiveFinite(c->halfLength))
		return IB_ERR_INVALID_ARGUMENT;
	double r2 = c->radius * c->radius, h = c->halfLength;
	double m = density * ibPi * r2 * 2.0 * h;
	/* length l = 2h: m (r^2/4 + l^2/12) = m (r^2/4 + h^2/3) */
	double ixx = m * (0.25 * r2 + h * h / 3.0);
	return ibFinishDiag(m, ibV3(ixx, ixx, 0.5 * m * r2), out);
}

IB_API ibResult ibComputeCapsuleMass(const ibCapsule* c, double density, ibMassData* out)
{
	if (c == NULL || out == NULL || !ibPositiveFinite(density) || !ibPositiveFinite(c->radius) ||
	    !isfinite(c->halfLength) || c->halfLength < 0.0)
		return IB_ERR_INVALID_ARGUMENT;
	double r = c->radius, r2 = r * r, h = c->halfLength;
	double mc = density * ibPi * r2 * 2.0 * h;          /* cylinder part */
	double ms = density * (4.0 / 3.0) * ibPi * r2 * r;  /* both hemispheres together */
	/* One hemisphere (mass ms/2): about its base centre 2/5 (ms/2) r^2 (half a sphere); about its own COM
	 * (at 3r/8 from the base) subtract (ms/2)(3r/8)^2; at distance h + 3r/8 from the origin add
	 * (ms/2)(h + 3r/8)^2. Both caps: ms (2r^2/5 - 9r^2/64 + (h + 3r/8)^2) = ms (2r^2/5 + h^2 + 3hr/4). */
	double ixx = mc * (0.25 * r2 + h * h / 3.0) + ms * (0.4 * r2 + h * h + 0.75 * h * r);
	double izz = 0.5 * mc * r2 + 0.4 * ms * r2;
	return ibFinishDiag(mc + ms, ibV3(ixx, ixx, izz), out);
}

IB_API ibResult ibComputeMeshMass(const ibMesh* m, double density, ibMassData* out)
{
	if (m == NULL || out == NULL || !ibPositiveFinite(density) || m->vertices == NULL || m->indices == NULL ||
	    m->vertexCount < 4 || m->triangleCount < 4)
		return IB_ERR_INVALID_ARGUMENT;
	const int nv = m->vertexCount;
	const size_t nIdx = 3u * (size_t)m->triangleCount;

	/* Validate; reference point p = vertex mean. */
	ibVec3 p = IB_VEC3_ZERO;
	for (int i = 0; i < nv; ++i) {
		if (!ibVec3_IsFinite(m->vertices[i])) return IB_ERR_INVALID_ARGUMENT;
		p = ibAdd(p, m->vertices[i]);
	}
	p = ibScale(1.0 / (double)nv, p);
	if (!ibVec3_IsFinite(p)) return IB_ERR_INVALID_ARGUMENT; /* overflow of the sum */
	for (size_t k = 0; k < nIdx; ++k)
		if (m->indices[k] < 0 || m->indices[k] >= nv) return IB_ERR_INVALID_ARGUMENT;

	double extent2 = 0.0; /* squared radius about p, for the relative volume test */
	for (int i = 0; i < nv; ++i) {
		double d2 = ibLengthSq(ibSub(m->vertices[i], p));
		if (d2 > extent2) extent2 = d2;
	}

	/* Sums over signed tetrahedra (p, a, b, c), coordinates relative to p; d = 6 V_tet. */
	double six = 0.0;                 /* sum d = 6 V */
	ibVec3 first = IB_VEC3_ZERO;      /* sum d (a+b+c) = 24 int x */
	double second[3][3] = {{0.0}};    /* sum d (a a^T + b b^T + c c^T + s s^T) = 120 int x x^T */
	ibVec3 areaSum = IB_VEC3_ZERO;    /* sum of 2 * vector area; zero for a closed surface */
	double areaAbs = 0.0;
	for (int t = 0; t < m->triangleCount; ++t) {
		const int* tri = m->indices + 3 * (size_t)t;
		ibVec3 a = ibSub(m->vertices[tri[0]], p);
		ibVec3 b = ibSub(m->vertices[tri[1]], p);
		ibVec3 c = ibSub(m->vertices[tri[2]], p);
		ibVec3 n = ibCross(ibSub(b, a), ibSub(c, a));
		areaSum = ibAdd(areaSum, n);
		areaAbs += ibLength(n);
		double d = ibDot(a, ibCross(b, c));
		ibVec3 s = ibAdd(ibAdd(a, b), c);
		six += d;
		first = ibMulAdd(first, d, s);
		double va[3] = {a.x, a.y, a.z}, vb[3] = {b.x, b.y, b.z}, vc[3] = {c.x, c.y, c.z}, vs[3] = {s.x, s.y, s.z};
		for (int i = 0; i < 3; ++i)
			for (int j = i; j < 3; ++j) second[i][j] += d * (va[i] * va[j] + vb[i] * vb[j] + vc[i] * vc[j] + vs[i] * vs[j]);
	}

	double volume = six / 6.0;
	if (!isfinite(volume) || !isfinite(areaAbs)) return IB_ERR_INVALID_ARGUMENT;
	/* Open surface: the net vector area of a closed one vanishes (and only then is the volume
	 * independent of p). Inside-out, flat or tiny: volume not clearly positive. */
	if (!(areaAbs > 0.0) || ibLength(areaSum) > 1e-9 * areaAbs) return IB_ERR_DEGENERATE;
	if (!(volume > 1e3 * DBL_EPSILON * extent2 * sqrt(extent2))) return IB_ERR_DEGENERATE;

	ibVec3 com = ibScale(1.0 / (24.0 * volume), first); /* relative to p */
	double cv[3] = {com.x, com.y, com.z};
	double cov[3][3]; /* int (x - com)(x - com)^T dV */
	for (int i = 0; i < 3; ++i)
		for (int j = i; j < 3; ++j) {
			cov[i][j] = second[i][j] / 120.0 - volume * cv[i] * cv[j];
			cov[j][i] = cov[i][j];
		}
	double trace = cov[0][0] + cov[1][1] + cov[2][2];
	ibMassData md;
	md.mass = density * volume;
	md.center = ibAdd(p, com);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) md.inertia.m[i][j] = density * ((i == j ? trace : 0.0) - cov[i][j]);
	if (!isfinite(md.mass) || !ibVec3_IsFinite(md.center) || !ibMat3_IsFinite(md.inertia)) return IB_ERR_INVALID_ARGUMENT;
	if (!(md.mass > 0.0)) return IB_ERR_DEGENERATE;
	*out = md;
	return IB_OK;
}

static ibMat3 ibRotationMatrix(ibQuat q)
{
	return ibMat3_FromColumns(ibRotate(q, ibV3(1, 0, 0)), ibRotate(q, ibV3(0, 1, 0)), ibRotate(q, ibV3(0, 0, 1)));
}

static ibMat3 ibSymmetrize(ibMat3 A)
{
	for (int i = 0; i < 3; ++i)
		for (int j = i + 1; j < 3; ++j) A.m[i][j] = A.m[j][i] = 0.5 * (A.m[i][j] + A.m[j][i]);
	return A;
}

IB_API ibMassData ibMassData_Transform(const ibMassData* md, ibVec3 position, ibQuat rotation)
{
	ibMassData r = {0.0, IB_VEC3_ZERO, ibMat3_Zero()};
	if (md == NULL) return r;
	ibMat3 R = ibRotationMatrix(rotation);
	r.mass = md->mass;
	r.center = ibAdd(position, ibMat3_MulV(R, md->center));
	r.inertia = ibSymmetrize(ibMat3_Mul(ibMat3_Mul(R, md->inertia), ibMat3_Transpose(R)));
	return r;
}

/* m (|d|^2 E - d d^T): inertia of a point mass m at offset d. */
static ibMat3 ibPointInertia(double m, ibVec3 d)
{
	double v[3] = {d.x, d.y, d.z}, d2 = ibLengthSq(d);
	ibMat3 A;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) A.m[i][j] = m * ((i == j ? d2 : 0.0) - v[i] * v[j]);
	return A;
}

IB_API ibMassData ibMassData_Combine(const ibMassData* parts, int count)
{
	ibMassData r = {0.0, IB_VEC3_ZERO, ibMat3_Zero()};
	if (parts == NULL || count <= 0) return r;
	double total = 0.0;
	ibVec3 weighted = IB_VEC3_ZERO;
	for (int k = 0; k < count; ++k) {
		total += parts[k].mass;
		weighted = ibMulAdd(weighted, parts[k].mass, parts[k].center);
	}
	if (!(total > 0.0)) return r;
	r.mass = total;
	r.center = ibScale(1.0 / total, weighted);
	for (int k = 0; k < count; ++k)
		r.inertia = ibMat3_Add(r.inertia, ibMat3_Add(parts[k].inertia, ibPointInertia(parts[k].mass, ibSub(parts[k].center, r.center))));
	return r;
}

IB_API ibMassData ibMassData_ScaleToMass(const ibMassData* md, double mass)
{
	ibMassData r = {0.0, IB_VEC3_ZERO, ibMat3_Zero()};
	if (md == NULL) return r;
	r = *md;
	/* Nothing to scale from a massless input, and a bad target is ignored: return the input. */
	if (!(md->mass > 0.0) || !ibPositiveFinite(mass)) return r;
	r.inertia = ibMat3_Scale(mass / md->mass, md->inertia);
	r.mass = mass;
	return r;
}
