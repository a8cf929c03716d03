/* Mass properties: primitive closed forms (DIGEST §30, App. D.1), capsule by quadrature, exact
 * mesh integrals against boxes and tetrahedra, frame change, combination and rescaling. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"

static const double kPi = 3.14159265358979323846;

/* ---------------------------------------------------------------- helpers */

static double mat_maxabs(ibMat3 A)
{
	double m = 0.0;
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j)
			if (fabs(A.m[i][j]) > m) m = fabs(A.m[i][j]);
	return m;
}

static void assert_rel(double a, double b, double rel)
{
	double tol = rel * fmax(fabs(a), fabs(b));
	if (!(fabs(a - b) <= tol)) {
		print_error("%.17g vs %.17g (rel %.3g > %.3g)\n", a, b, fabs(a - b) / fmax(fabs(a), fabs(b)), rel);
		fail();
	}
}

static void assert_abs(double a, double b, double tol)
{
	if (!(fabs(a - b) <= tol)) {
		print_error("%.17g vs %.17g (diff %.3g > %.3g)\n", a, b, fabs(a - b), tol);
		fail();
	}
}

static void assert_vec(ibVec3 a, ibVec3 b, double tol)
{
	assert_abs(a.x, b.x, tol);
	assert_abs(a.y, b.y, tol);
	assert_abs(a.z, b.z, tol);
}

/* Entry-wise, relative to the largest entry of B (off-diagonal zeros need an absolute scale). */
static void assert_mat(ibMat3 A, ibMat3 B, double rel)
{
	double tol = rel * mat_maxabs(B);
	for (int i = 0; i < 3; ++i)
		for (int j = 0; j < 3; ++j) assert_abs(A.m[i][j], B.m[i][j], tol);
}

static void assert_md(const ibMassData* a, const ibMassData* b, double rel, double lengthScale)
{
	assert_rel(a->mass, b->mass, rel);
	assert_vec(a->center, b->center, rel * lengthScale);
	assert_mat(a->inertia, b->inertia, rel);
}

static ibMassData sentinel(void)
{
	ibMassData md;
	memset(&md, 0x5a, sizeof md);
	return md;
}

static void assert_untouched(const ibMassData* md)
{
	ibMassData s = sentinel();
	assert_memory_equal(md, &s, sizeof s);
}

static ibMat3 rot_matrix(ibQuat q)
{
	return ibMat3_FromColumns(ibRotate(q, ibV3(1, 0, 0)), ibRotate(q, ibV3(0, 1, 0)), ibRotate(q, ibV3(0, 0, 1)));
}

/* Make every triangle of a convex mesh counter-clockwise seen from outside (interior point c). */
static void orient_convex(const ibVec3* v, int* idx, int triCount, ibVec3 c)
{
	for (int t = 0; t < triCount; ++t) {
		int* tri = idx + 3 * t;
		ibVec3 a = v[tri[0]], b = v[tri[1]], d = v[tri[2]];
		ibVec3 n = ibCross(ibSub(b, a), ibSub(d, a));
		if (ibDot(n, ibSub(a, c)) < 0.0) {
			int tmp = tri[1];
			tri[1] = tri[2];
			tri[2] = tmp;
		}
	}
}

static void reverse_all(int* idx, int triCount)
{
	for (int t = 0; t < triCount; ++t) {
		int tmp = idx[3 * t + 1];
		idx[3 * t + 1] = idx[3 * t + 2];
		idx[3 * t + 2] = tmp;
	}
}

/* 12-triangle box mesh with half extents h, rotated by q and moved to pos. */
static void box_mesh(ibVec3 h, ibVec3 pos, ibQuat q, ibVec3 v[8], int idx[36])
{
	ibVec3 local[8];
	for (int i = 0; i < 8; ++i) {
		local[i] = ibV3((i & 1) ? h.x : -h.x, (i & 2) ? h.y : -h.y, (i & 4) ? h.z : -h.z);
		v[i] = ibAdd(pos, ibRotate(q, local[i]));
	}
	int n = 0;
	for (int axis = 0; axis < 3; ++axis) {
		int bit = 1 << axis, u = 1 << ((axis + 1) % 3), w = 1 << ((axis + 2) % 3);
		for (int side = 0; side < 2; ++side) {
			int base = side ? bit : 0;
			int quad[4] = {base, base | u, base | u | w, base | w};
			int tris[6] = {quad[0], quad[1], quad[2], quad[0], quad[2], quad[3]};
			for (int k = 0; k < 6; ++k) idx[n++] = tris[k];
		}
	}
	orient_convex(local, idx, 12, IB_VEC3_ZERO);
}

/* UV sphere: nlat bands, nlon segments; returns vertex/triangle counts through the pointers. */
static void sphere_mesh(double r, int nlat, int nlon, ibVec3** vOut, int** iOut, int* nv, int* nt)
{
	*nv = 2 + (nlat - 1) * nlon;
	*nt = 2 * nlon * (nlat - 1);
	ibVec3* v = malloc(sizeof *v * (size_t)*nv);
	int* idx = malloc(sizeof *idx * 3 * (size_t)*nt);
	assert_non_null(v);
	assert_non_null(idx);
	v[0] = ibV3(0, 0, r);
	v[*nv - 1] = ibV3(0, 0, -r);
	for (int i = 1; i < nlat; ++i) {
		double th = kPi * i / nlat;
		for (int j = 0; j < nlon; ++j) {
			double ph = 2.0 * kPi * j / nlon;
			v[1 + (i - 1) * nlon + j] = ibV3(r * sin(th) * cos(ph), r * sin(th) * sin(ph), r * cos(th));
		}
	}
	int n = 0;
	for (int j = 0; j < nlon; ++j) {
		int j1 = (j + 1) % nlon;
		idx[n++] = 0, idx[n++] = 1 + j, idx[n++] = 1 + j1;
		int last = 1 + (nlat - 2) * nlon;
		idx[n++] = *nv - 1, idx[n++] = last + j, idx[n++] = last + j1;
		for (int i = 1; i < nlat - 1; ++i) {
			int a = 1 + (i - 1) * nlon + j, b = 1 + (i - 1) * nlon + j1, c = 1 + i * nlon + j, d = 1 + i * nlon + j1;
			idx[n++] = a, idx[n++] = c, idx[n++] = d;
			idx[n++] = a, idx[n++] = d, idx[n++] = b;
		}
	}
	assert_int_equal(n, 3 * *nt);
	orient_convex(v, idx, *nt, IB_VEC3_ZERO);
	*vOut = v;
	*iOut = idx;
}

/* ---------------------------------------------------------------- primitives */

static void test_sphere_closed_form(void** state)
{
	(void)state;
	ibSphere s = {0.37};
	double rho = 2700.0;
	ibMassData md;
	assert_int_equal(ibComputeSphereMass(&s, rho, &md), IB_OK);
	double m = rho * 4.0 / 3.0 * kPi * pow(0.37, 3);
	double i = 2.0 / 5.0 * m * 0.37 * 0.37;
	ibMassData ref = {m, IB_VEC3_ZERO, ibMat3_Diag(ibV3(i, i, i))};
	assert_md(&md, &ref, 1e-12, 1.0);
}

static void test_box_closed_form(void** state)
{
	(void)state;
	ibBox b = {{0.5, 0.15, 2.25}};
	double rho = 600.0, a = 1.0, bb = 0.3, c = 4.5;
	ibMassData md;
	assert_int_equal(ibComputeBoxMass(&b, rho, &md), IB_OK);
	double m = rho * a * bb * c;
	ibMassData ref = {m, IB_VEC3_ZERO, ibMat3_Diag(ibV3(m * (bb * bb + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + bb * bb) / 12))};
	assert_md(&md, &ref, 1e-12, 1.0);
}

static void test_cylinder_closed_form(void** state)
{
	(void)state;
	ibCylinder cy = {0.2, 0.75};
	double rho = 1000.0, r = 0.2, l = 1.5;
	ibMassData md;
	assert_int_equal(ibComputeCylinderMass(&cy, rho, &md), IB_OK);
	double m = rho * kPi * r * r * l;
	double ixx = m * (r * r / 4 + l * l / 12);
	ibMassData ref = {m, IB_VEC3_ZERO, ibMat3_Diag(ibV3(ixx, ixx, m * r * r / 2))};
	assert_md(&md, &ref, 1e-12, 1.0);
}

/* Capsule by slicing into discs along z: a disc of radius a at height z contributes
 * dm = rho pi a^2 dz, dIzz = dm a^2/2, dIxx = dm (a^2/4 + z^2). On each cap a(z)^2 is quadratic in z,
 * so the integrands are polynomials of degree <= 4 and 3-point Gauss-Legendre is exact. */
static void capsule_by_quadrature(double r, double h, double rho, double* m, double* ixx, double* izz, double* mz)
{
	static const double node[3] = {-0.77459666924148337704, 0.0, 0.77459666924148337704};
	static const double weight[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
	double lo[3] = {-h - r, -h, h}, hi[3] = {-h, h, h + r};
	*m = *ixx = *izz = *mz = 0.0;
	for (int piece = 0; piece < 3; ++piece) {
		const int sub = 7;
		double len = (hi[piece] - lo[piece]) / sub;
		for (int s = 0; s < sub; ++s) {
			double mid = lo[piece] + (s + 0.5) * len;
			for (int k = 0; k < 3; ++k) {
				double z = mid + 0.5 * len * node[k], wq = 0.5 * len * weight[k];
				double dz = piece == 1 ? 0.0 : (piece == 0 ? z + h : z - h);
				double a2 = piece == 1 ? r * r : r * r - dz * dz;
				double dm = rho * kPi * a2 * wq;
				*m += dm;
				*mz += dm * z;
				*izz += dm * a2 / 2.0;
				*ixx += dm * (a2 / 4.0 + z * z);
			}
		}
	}
}

static void test_capsule_closed_form(void** state)
{
	(void)state;
	const double cases[][2] = {{0.3, 0.8}, {1.0, 0.0}, {0.05, 3.0}, {2.0, 0.1}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		double r = cases[c][0], h = cases[c][1], rho = 1234.5;
		ibCapsule cap = {r, h};
		ibMassData md;
		assert_int_equal(ibComputeCapsuleMass(&cap, rho, &md), IB_OK);
		double m, ixx, izz, mz;
		capsule_by_quadrature(r, h, rho, &m, &ixx, &izz, &mz);
		ibMassData ref = {m, ibV3(0, 0, mz / m), ibMat3_Diag(ibV3(ixx, ixx, izz))};
		assert_md(&md, &ref, 1e-12, r + h);
	}
	/* halfLength 0 is a sphere */
	ibCapsule cap = {0.6, 0.0};
	ibSphere sp = {0.6};
	ibMassData a, b;
	assert_int_equal(ibComputeCapsuleMass(&cap, 50.0, &a), IB_OK);
	assert_int_equal(ibComputeSphereMass(&sp, 50.0, &b), IB_OK);
	assert_md(&a, &b, 1e-12, 1.0);
}

/* ---------------------------------------------------------------- meshes */

static void test_box_mesh_equals_box(void** state)
{
	(void)state;
	ibBox b = {{0.5, 0.15, 2.25}};
	ibVec3 v[8];
	int idx[36];
	box_mesh(b.halfExtents, IB_VEC3_ZERO, IB_QUAT_IDENTITY, v, idx);
	ibMesh mesh = {v, 8, idx, 12};
	ibMassData mm, mb;
	assert_int_equal(ibComputeMeshMass(&mesh, 600.0, &mm), IB_OK);
	assert_int_equal(ibComputeBoxMass(&b, 600.0, &mb), IB_OK);
	assert_md(&mm, &mb, 1e-12, 2.25);
}

static void test_box_mesh_transformed(void** state)
{
	(void)state;
	ibBox b = {{0.7, 0.2, 1.1}};
	const ibVec3 positions[] = {{12.5, -3.25, 7.0}, {0.0, 0.0, 0.0}, {-1e3, 250.0, 4e2}};
	const ibQuat rotations[] = {{0.3, -0.5, 0.7, 0.2}, {1.0, 0.0, 0.0, 0.0}, {0.1, 0.9, -0.05, 0.4}};
	ibMassData mb;
	assert_int_equal(ibComputeBoxMass(&b, 800.0, &mb), IB_OK);
	for (int k = 0; k < 3; ++k) {
		ibQuat q = ibQuatNormalize(rotations[k]);
		ibVec3 v[8];
		int idx[36];
		box_mesh(b.halfExtents, positions[k], q, v, idx);
		ibMesh mesh = {v, 8, idx, 12};
		ibMassData mm;
		assert_int_equal(ibComputeMeshMass(&mesh, 800.0, &mm), IB_OK);
		ibMassData ref = ibMassData_Transform(&mb, positions[k], q);
		assert_md(&mm, &ref, 1e-12, fmax(1.0, ibLength(positions[k])));
		/* symmetric */
		for (int i = 0; i < 3; ++i)
			for (int j = 0; j < 3; ++j) assert_abs(mm.inertia.m[i][j], mm.inertia.m[j][i], 1e-13 * mat_maxabs(ref.inertia));
	}
}

static void test_tetrahedron(void** state)
{
	(void)state;
	/* right-angled corner tetrahedron with legs a, b, c, shifted away from the origin */
	const double a = 2.0, b = 0.5, c = 1.5;
	const ibVec3 off = {1e3, -2e3, 5e2};
	ibVec3 v[4] = {off, ibAdd(off, ibV3(a, 0, 0)), ibAdd(off, ibV3(0, b, 0)), ibAdd(off, ibV3(0, 0, c))};
	int idx[12] = {0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3};
	ibVec3 centroid = ibScale(0.25, ibAdd(ibAdd(v[0], v[1]), ibAdd(v[2], v[3])));
	orient_convex(v, idx, 4, centroid);
	ibMesh mesh = {v, 4, idx, 4};
	ibMassData md;
	assert_int_equal(ibComputeMeshMass(&mesh, 3.0, &md), IB_OK);
	assert_rel(md.mass, 3.0 * a * b * c / 6.0, 1e-12);
	assert_vec(md.center, ibAdd(off, ibV3(a / 4, b / 4, c / 4)), 1e-12 * ibLength(off));

	/* regular tetrahedron, edge 2 sqrt(2), volume 8/3: I = m e^2 / 20 about any centroidal axis */
	ibVec3 w[4] = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
	orient_convex(w, idx, 4, IB_VEC3_ZERO);
	mesh.vertices = w;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_OK);
	assert_rel(md.mass, 8.0 / 3.0, 1e-12);
	assert_vec(md.center, IB_VEC3_ZERO, 1e-14);
	double iso = md.mass * 8.0 / 20.0;
	ibMat3 ref = ibMat3_Diag(ibV3(iso, iso, iso));
	assert_mat(md.inertia, ref, 1e-12);
}

static void test_sphere_mesh_approximates_sphere(void** state)
{
	(void)state;
	ibVec3* v;
	int* idx;
	int nv, nt;
	sphere_mesh(0.8, 64, 128, &v, &idx, &nv, &nt);
	ibMesh mesh = {v, nv, idx, nt};
	ibSphere s = {0.8};
	ibMassData mm, ms;
	assert_int_equal(ibComputeMeshMass(&mesh, 1000.0, &mm), IB_OK);
	assert_int_equal(ibComputeSphereMass(&s, 1000.0, &ms), IB_OK);
	/* the inscribed polyhedron is slightly smaller (O(1/n^2)) */
	assert_true(mm.mass < ms.mass);
	assert_md(&mm, &ms, 5e-3, 0.8);
	free(v);
	free(idx);
}

static void test_bad_meshes_rejected(void** state)
{
	(void)state;
	ibVec3 v[8];
	int idx[36];
	box_mesh(ibV3(1, 2, 3), ibV3(5, 0, 0), IB_QUAT_IDENTITY, v, idx);
	ibMesh mesh = {v, 8, idx, 12};
	ibMassData md = sentinel();

	reverse_all(idx, 12); /* inside-out */
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_DEGENERATE);
	assert_untouched(&md);
	reverse_all(idx, 12);

	mesh.triangleCount = 11; /* open: one triangle missing */
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_DEGENERATE);
	mesh.triangleCount = 12;

	ibVec3 flat[8]; /* closed but flat: volume zero */
	for (int i = 0; i < 8; ++i) flat[i] = ibV3(v[i].x, v[i].y, 0.0);
	mesh.vertices = flat;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_DEGENERATE);
	mesh.vertices = v;

	idx[7] = 8; /* index out of range */
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	idx[7] = -1;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	box_mesh(ibV3(1, 2, 3), ibV3(5, 0, 0), IB_QUAT_IDENTITY, v, idx);
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_OK);

	md = sentinel();
	v[3].y = NAN;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	v[3].y = INFINITY;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	box_mesh(ibV3(1, 2, 3), ibV3(5, 0, 0), IB_QUAT_IDENTITY, v, idx);
	assert_int_equal(ibComputeMeshMass(&mesh, -1.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeMeshMass(&mesh, NAN, &md), IB_ERR_INVALID_ARGUMENT);
	mesh.vertexCount = 3;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	mesh.vertexCount = 8;
	mesh.triangleCount = 3;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	mesh.triangleCount = 12;
	mesh.indices = NULL;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	mesh.indices = idx;
	mesh.vertices = NULL;
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	mesh.vertices = v;
	assert_int_equal(ibComputeMeshMass(NULL, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeMeshMass(&mesh, 1.0, NULL), IB_ERR_INVALID_ARGUMENT);
	assert_untouched(&md);
}

static void test_invalid_primitives(void** state)
{
	(void)state;
	ibMassData md = sentinel();
	ibSphere s = {NAN};
	assert_int_equal(ibComputeSphereMass(&s, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	s.radius = -1.0;
	assert_int_equal(ibComputeSphereMass(&s, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	s.radius = 1.0;
	assert_int_equal(ibComputeSphereMass(&s, INFINITY, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeSphereMass(&s, 0.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeSphereMass(NULL, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeSphereMass(&s, 1.0, NULL), IB_ERR_INVALID_ARGUMENT);

	ibBox b = {{1.0, 1.0, 1.0}};
	assert_int_equal(ibComputeBoxMass(&b, -5.0, &md), IB_ERR_INVALID_ARGUMENT);
	b.halfExtents.y = 0.0;
	assert_int_equal(ibComputeBoxMass(&b, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	b.halfExtents.y = INFINITY;
	assert_int_equal(ibComputeBoxMass(&b, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	b.halfExtents.y = 1e200; /* finite, but the mass overflows */
	b.halfExtents.z = 1e200;
	assert_int_equal(ibComputeBoxMass(&b, 1.0, &md), IB_ERR_INVALID_ARGUMENT);

	ibCapsule c = {1.0, -0.1};
	assert_int_equal(ibComputeCapsuleMass(&c, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	c.halfLength = NAN;
	assert_int_equal(ibComputeCapsuleMass(&c, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	c = (ibCapsule){0.0, 1.0};
	assert_int_equal(ibComputeCapsuleMass(&c, 1.0, &md), IB_ERR_INVALID_ARGUMENT);

	ibCylinder cy = {1.0, 0.0};
	assert_int_equal(ibComputeCylinderMass(&cy, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	cy = (ibCylinder){NAN, 1.0};
	assert_int_equal(ibComputeCylinderMass(&cy, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibComputeCylinderMass(NULL, 1.0, &md), IB_ERR_INVALID_ARGUMENT);
	assert_untouched(&md);

	s.radius = 1e-120; /* mass underflows to zero */
	assert_int_equal(ibComputeSphereMass(&s, 1.0, &md), IB_ERR_DEGENERATE);
	assert_untouched(&md);
}

/* ---------------------------------------------------------------- transform, combine, scale */

static void test_combine_two_boxes(void** state)
{
	(void)state;
	ibBox half = {{0.5, 0.3, 0.2}}, full = {{1.0, 0.3, 0.2}};
	ibMassData h, f;
	assert_int_equal(ibComputeBoxMass(&half, 700.0, &h), IB_OK);
	assert_int_equal(ibComputeBoxMass(&full, 700.0, &f), IB_OK);
	ibVec3 p = {3.0, -1.0, 2.0};
	ibMassData parts[2] = {ibMassData_Transform(&h, ibAdd(p, ibV3(-0.5, 0, 0)), IB_QUAT_IDENTITY),
	                       ibMassData_Transform(&h, ibAdd(p, ibV3(0.5, 0, 0)), IB_QUAT_IDENTITY)};
	ibMassData c = ibMassData_Combine(parts, 2);
	ibMassData ref = ibMassData_Transform(&f, p, IB_QUAT_IDENTITY);
	assert_md(&c, &ref, 1e-12, 4.0);

	/* same, with the pair rotated as a whole */
	ibQuat q = ibQuatNormalize(ibQ(0.8, 0.1, -0.3, 0.5));
	ibMassData rp[2] = {ibMassData_Transform(&parts[0], IB_VEC3_ZERO, q), ibMassData_Transform(&parts[1], IB_VEC3_ZERO, q)};
	c = ibMassData_Combine(rp, 2);
	ref = ibMassData_Transform(&ref, IB_VEC3_ZERO, q);
	assert_md(&c, &ref, 1e-12, 4.0);

	ibMassData z = ibMassData_Combine(parts, 0);
	assert_true(z.mass == 0.0);
	assert_vec(z.center, IB_VEC3_ZERO, 0.0);
	assert_true(mat_maxabs(z.inertia) == 0.0);
	z = ibMassData_Combine(NULL, 3);
	assert_true(z.mass == 0.0);
}

static void test_combine_order_invariant(void** state)
{
	(void)state;
	ibMassData base[4];
	ibBox b = {{0.4, 0.1, 0.9}};
	ibSphere s = {0.3};
	ibCylinder cy = {0.25, 0.6};
	ibCapsule ca = {0.1, 0.5};
	assert_int_equal(ibComputeBoxMass(&b, 500.0, &base[0]), IB_OK);
	assert_int_equal(ibComputeSphereMass(&s, 7800.0, &base[1]), IB_OK);
	assert_int_equal(ibComputeCylinderMass(&cy, 1000.0, &base[2]), IB_OK);
	assert_int_equal(ibComputeCapsuleMass(&ca, 2000.0, &base[3]), IB_OK);
	const ibVec3 pos[4] = {{1, 2, 3}, {-0.5, 0.2, 0}, {0, -1.5, 0.7}, {2, 2, -2}};
	const ibQuat rot[4] = {{1, 0.2, 0, 0}, {0.3, 0.3, 0.3, 0.3}, {0, 0, 1, 0}, {0.5, -0.2, 0.7, 0.1}};
	ibMassData parts[4], perm[4];
	for (int k = 0; k < 4; ++k) parts[k] = ibMassData_Transform(&base[k], pos[k], ibQuatNormalize(rot[k]));
	const int order[4] = {2, 0, 3, 1};
	for (int k = 0; k < 4; ++k) perm[k] = parts[order[k]];
	ibMassData a = ibMassData_Combine(parts, 4), c = ibMassData_Combine(perm, 4);
	assert_md(&a, &c, 1e-12, 5.0);

	/* Combine is associative: ((0,1),(2,3)) equals all four */
	ibMassData pair[2] = {ibMassData_Combine(parts, 2), ibMassData_Combine(parts + 2, 2)};
	ibMassData d = ibMassData_Combine(pair, 2);
	assert_md(&d, &a, 1e-12, 5.0);

	/* total mass is the plain sum */
	double m = 0.0;
	for (int k = 0; k < 4; ++k) m += parts[k].mass;
	assert_rel(a.mass, m, 1e-14);
}

static void test_transform_round_trip(void** state)
{
	(void)state;
	ibBox b = {{0.4, 0.1, 0.9}};
	ibMassData md;
	assert_int_equal(ibComputeBoxMass(&b, 500.0, &md), IB_OK);
	md = ibMassData_Transform(&md, ibV3(0.1, 0.2, -0.3), ibQuatNormalize(ibQ(0.9, 0.1, 0.2, 0.3))); /* non-diagonal */
	ibVec3 p = {4.0, -7.5, 1.25};
	ibQuat q = ibQuatNormalize(ibQ(-0.2, 0.6, 0.1, -0.7));
	ibMassData t = ibMassData_Transform(&md, p, q);
	ibMat3 R = rot_matrix(q);
	/* centre by the definition x_B = p + R x_A; inertia trace is invariant */
	assert_vec(t.center, ibAdd(p, ibRotate(q, md.center)), 1e-13 * ibLength(p));
	assert_rel(t.inertia.m[0][0] + t.inertia.m[1][1] + t.inertia.m[2][2], md.inertia.m[0][0] + md.inertia.m[1][1] + md.inertia.m[2][2], 1e-13);
	ibMassData back = ibMassData_Transform(&t, ibNeg(ibMat3_MulTV(R, p)), ibQuatConj(q));
	assert_md(&back, &md, 1e-12, ibLength(p));
	/* identity leaves it unchanged */
	ibMassData id = ibMassData_Transform(&md, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	assert_md(&id, &md, 1e-15, 1.0);
}

static void test_scale_to_mass(void** state)
{
	(void)state;
	ibCylinder cy = {0.25, 0.6};
	ibMassData md;
	assert_int_equal(ibComputeCylinderMass(&cy, 1000.0, &md), IB_OK);
	md = ibMassData_Transform(&md, ibV3(1, 2, 3), ibQuatNormalize(ibQ(1, 1, 0, 0)));
	ibMassData s = ibMassData_ScaleToMass(&md, 5.0);
	assert_rel(s.mass, 5.0, 1e-15);
	assert_vec(s.center, md.center, 0.0);
	assert_mat(s.inertia, ibMat3_Scale(5.0 / md.mass, md.inertia), 1e-14);
	/* same as computing with the matching density */
	ibMassData d;
	assert_int_equal(ibComputeCylinderMass(&cy, 1000.0 * 5.0 / md.mass, &d), IB_OK);
	d = ibMassData_Transform(&d, ibV3(1, 2, 3), ibQuatNormalize(ibQ(1, 1, 0, 0)));
	assert_md(&s, &d, 1e-12, 3.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sphere_closed_form),
	    cmocka_unit_test(test_box_closed_form),
	    cmocka_unit_test(test_cylinder_closed_form),
	    cmocka_unit_test(test_capsule_closed_form),
	    cmocka_unit_test(test_box_mesh_equals_box),
	    cmocka_unit_test(test_box_mesh_transformed),
	    cmocka_unit_test(test_tetrahedron),
	    cmocka_unit_test(test_sphere_mesh_approximates_sphere),
	    cmocka_unit_test(test_bad_meshes_rejected),
	    cmocka_unit_test(test_invalid_primitives),
	    cmocka_unit_test(test_combine_two_boxes),
	    cmocka_unit_test(test_combine_order_invariant),
	    cmocka_unit_test(test_transform_round_trip),
	    cmocka_unit_test(test_scale_to_mass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
