/* Contacts with static triangle meshes, one-sided (src/collision/trimesh_contact.c, trimesh_edges.c):
 *  - edge kinds: a flat grid's inner edges are flat, its outer ones outer edges; a roof's ridge is
 *    convex, a valley flat; a soup without shared vertices has only outer edges;
 *  - on a flat mesh every contact normal is the face normal: a box sunk 3 cm across inner edges (the
 *    two-sided triangle test tilted normals towards the edges), a thin plate standing 5 cm deep
 *    in it (pushed sideways or down before: its side is nearer than its end), a sphere over an edge;
 *  - on a ridge a sphere resting on the crest keeps the edge's normal between the two faces, and the peak
 *    of a tent poking 1 mm into a tilted box's face is a contact with that face's normal;
 *  - a thin plate stuck 5 cm deep in a flat mesh comes out upwards without being thrown;
 *  - random drops of three bodies (test_contact_drops' mix) onto a bumpy mesh terrain at 60 and 30 Hz and
 *    onto a flat mesh never diverge and never gain more than 2e-6 of their energy + 1e-4 J. Before, 10
 *    of 1500 drops onto the flat mesh and 9 of 1500 onto the bumpy one gained 50 J to 1e6 J (none onto a
 *    box ground): normals towards triangle edges or through the back of a face, friction taken back
 *    along a reversed sliding direction (contact_collide.c), and no speculative or rim points for mesh
 *    pairs (contact_speculative.c, contact_set.c flat_face_at). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision/collision_world.h"
#include "collision/trimesh.h"
#include "drops_test_util.h"
#include "test_util.h"

/* An n x n grid of squares of side cell at height z(x, y) = amp (sin 1.3x cos 0.9y + sin(2.1y + 0.4x) / 2),
 * centred on the origin, triangles counter-clockwise from above. */
typedef struct Grid {
	ibVec3 v[41 * 41];
	int idx[40 * 40 * 6];
	int nv, nt;
} Grid;

static void make_grid(Grid* g, int n, double cell, double amp)
{
	g->nv = (n + 1) * (n + 1);
	g->nt = 0;
	for (int i = 0; i <= n; ++i)
		for (int j = 0; j <= n; ++j) {
			double x = (i - 0.5 * n) * cell, y = (j - 0.5 * n) * cell;
			g->v[i * (n + 1) + j] = ibV3(x, y, amp * (sin(1.3 * x) * cos(0.9 * y) + 0.5 * sin(2.1 * y + 0.4 * x)));
		}
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j) {
			int a = i * (n + 1) + j, b = a + 1, c = a + n + 1, d = c + 1;
			int t[6] = {a, c, b, b, c, d};
			memcpy(g->idx + 3 * g->nt, t, sizeof t);
			g->nt += 2;
		}
}

/* The library's shape and body behind a shape id. */
static const ibShape* shape_of(ibShapeId id, const ibBody** body)
{
	ibWorld* w;
	const ibShape* s = ib_shape_get(id, &w);
	assert_non_null(s);
	*body = &w->bodies[s->body];
	return s;
}

static const ibTriMeshGeom* mesh_of(ibShapeId id, const ibBody** body, const ibShape** shape)
{
	*shape = shape_of(id, body);
	return (*shape)->trimesh;
}

static ibShapeId mesh_shape(ibWorldId w, const ibVec3* v, int nv, const int* idx, int nt)
{
	ibBodyId b = tu_new_body(w, IB_BODY_STATIC, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	ibShapeDef sd = ibDefaultShapeDef();
	ibShapeId s = ibCreateTriMeshShape(b, &sd, &(ibMesh){v, nv, idx, nt});
	assert_false(IB_IS_NULL(s));
	return s;
}

static void test_edge_kinds(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	static Grid g;
	make_grid(&g, 4, 1.0, 0.0);
	const ibBody* b;
	const ibShape* s;
	const ibTriMeshGeom* t = mesh_of(mesh_shape(w, g.v, g.nv, g.idx, g.nt), &b, &s);
	int outer = 0, flat = 0;
	for (int i = 0; i < 3 * t->triangleCount; ++i) {
		assert_true(t->edgeKind[i] != IB_TRI_EDGE_CONVEX);
		if (t->edgeKind[i] == IB_TRI_EDGE_BOUNDARY) {
			assert_int_equal(t->adjacent[i], -1);
			++outer;
		} else {
			int o = t->adjacent[i];
			assert_true(o >= 0 && o < t->triangleCount);
			bool back = false; /* the neighbour points back */
			for (int k = 0; k < 3; ++k) back |= t->adjacent[3 * o + k] == i / 3;
			assert_true(back);
			++flat;
		}
	}
	assert_int_equal(outer, 16);      /* 4 per side of the grid */
	assert_int_equal(flat, 2 * 40);   /* 40 inner edges (24 grid lines + 16 diagonals), seen from both sides */
	/* a roof (ridge along y at x = 0, faces sloping down to x = +-1) and a valley (the same upside down) */
	const ibVec3 roof[4] = {{0, -1, 0.5}, {0, 1, 0.5}, {1, 0, 0}, {-1, 0, 0}};
	const int rt[6] = {0, 2, 1, 0, 1, 3};
	t = mesh_of(mesh_shape(w, roof, 4, rt, 2), &b, &s);
	assert_int_equal(t->edgeKind[3 * 0 + 2], IB_TRI_EDGE_CONVEX); /* edge 1 -> 0 of triangle 0 */
	assert_int_equal(t->edgeKind[3 * 1 + 0], IB_TRI_EDGE_CONVEX); /* edge 0 -> 1 of triangle 1 */
	const ibVec3 valley[4] = {{0, -1, 0}, {0, 1, 0}, {1, 0, 0.5}, {-1, 0, 0.5}};
	t = mesh_of(mesh_shape(w, valley, 4, rt, 2), &b, &s);
	assert_int_equal(t->edgeKind[3 * 0 + 2], IB_TRI_EDGE_FLAT);
	assert_int_equal(t->edgeKind[3 * 1 + 0], IB_TRI_EDGE_FLAT);
	/* the roof as a soup (no shared vertex): outer edges only */
	const ibVec3 soup[6] = {{0, -1, 0.5}, {1, 0, 0}, {0, 1, 0.5}, {0, -1, 0.5}, {0, 1, 0.5}, {-1, 0, 0}};
	const int st[6] = {0, 1, 2, 3, 4, 5};
	t = mesh_of(mesh_shape(w, soup, 6, st, 2), &b, &s);
	for (int i = 0; i < 6; ++i) assert_int_equal(t->edgeKind[i], IB_TRI_EDGE_BOUNDARY);
	ibDestroyWorld(w);
}

/* Every manifold of the body's shape against the mesh: normal from the mesh to the body within 1e-9 of
 * up (order 0: body first) and points over the mesh's plane z = 0; returns the deepest separation. */
static double check_up(ibShapeId meshId, ibShapeId bodyShape, double tol)
{
	const ibBody *mb, *bb;
	const ibShape *ms, *bs;
	mesh_of(meshId, &mb, &ms);
	bs = shape_of(bodyShape, &bb);
	double deepest = INFINITY;
	for (int order = 0; order < 2; ++order) {
		ibManifold out[16];
		int k = order == 0 ? ib_shape_pair_collide(bb, bs, mb, ms, tol, NULL, out, 16) : ib_shape_pair_collide(mb, ms, bb, bs, tol, NULL, out, 16);
		assert_true(k >= 1);
		for (int i = 0; i < k; ++i) {
			ibVec3 up = order == 0 ? out[i].normal : ibNeg(out[i].normal);
			if (!(ibLength(ibSub(up, ibV3(0, 0, 1))) < 1e-9))
				printf("  manifold %d of %d: normal (%.6f %.6f %.6f)\n", i, k, up.x, up.y, up.z);
			assert_true(ibLength(ibSub(up, ibV3(0, 0, 1))) < 1e-9);
			for (int p = 0; p < out[i].pointCount; ++p) {
				const ibManifoldPoint* mp = &out[i].points[p];
				ibVec3 onMesh = order == 0 ? mp->pointB : mp->pointA;
				assert_true(fabs(onMesh.z) < 1e-9);
				deepest = fmin(deepest, mp->separation);
			}
		}
	}
	return deepest;
}

static void test_flat_mesh_face_normals(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	static Grid g;
	make_grid(&g, 8, 0.5, 0.0);
	ibShapeId mesh = mesh_shape(w, g.v, g.nv, g.idx, g.nt);
	ibShapeDef sd = ibDefaultShapeDef();
	/* a box 3 cm deep, turned about z and tilted by 0.05 rad, its corners across inner edges */
	ibQuat q = ibQuatMul(ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.05), ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.4));
	ibBodyId box = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.02, -0.01, 0.0), q);
	ibShapeId bs = ibCreateBoxShape(box, &sd, &(ibBox){{0.3, 0.2, 0.15}});
	double minz = INFINITY; /* its deepest corner below its centre: the centre is set to put it at -3 cm */
	for (int c = 0; c < 8; ++c) minz = fmin(minz, ibRotate(q, ibV3(c & 1 ? 0.3 : -0.3, c & 2 ? 0.2 : -0.2, c & 4 ? 0.15 : -0.15)).z);
	assert_int_equal(ibBody_SetTransform(box, ibV3(0.02, -0.01, -0.03 - minz), q), IB_OK);
	assert_true(fabs(check_up(mesh, bs, 1e-3) + 0.03) < 1e-9);
	/* a thin plate standing on its 0.6 m x 0.02 m end, 5 cm deep (its side is nearer than its end) */
	ibBodyId plate = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.01, 0.26, 0.3 - 0.05), ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.3));
	ibShapeId ps = ibCreateBoxShape(plate, &sd, &(ibBox){{0.3, 0.01, 0.3}});
	assert_true(fabs(check_up(mesh, ps, 1e-3) + 0.05) < 1e-9);
	/* a sphere 1 cm deep with its centre over an inner edge (x = 0) and a vertex (0, 0.5) */
	ibBodyId ball = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.0, 0.3, 0.09), IB_QUAT_IDENTITY);
	ibShapeId bl = ibCreateSphereShape(ball, &sd, &(ibSphere){0.1});
	assert_true(fabs(check_up(mesh, bl, 1e-3) + 0.01) < 1e-9);
	assert_int_equal(ibBody_SetTransform(ball, ibV3(0.0, 0.5, 0.09), IB_QUAT_IDENTITY), IB_OK);
	assert_true(fabs(check_up(mesh, bl, 1e-3) + 0.01) < 1e-9);
	ibDestroyWorld(w);
}

static void test_ridge_keeps_edge_normal(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	const ibVec3 roof[4] = {{0, -1, 0.5}, {0, 1, 0.5}, {1, 0, 0}, {-1, 0, 0}};
	const int rt[6] = {0, 2, 1, 0, 1, 3};
	ibShapeId mesh = mesh_shape(w, roof, 4, rt, 2);
	ibShapeDef sd = ibDefaultShapeDef();
	/* on the crest, 1 mm deep: one region per face, the normal up (between the faces' normals) */
	ibBodyId ball = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.0, 0.1, 0.5 + 0.1 - 1e-3), IB_QUAT_IDENTITY);
	ibShapeId bl = ibCreateSphereShape(ball, &sd, &(ibSphere){0.1});
	const ibBody *mb, *bb;
	const ibShape *ms, *bs;
	mesh_of(mesh, &mb, &ms);
	bs = shape_of(bl, &bb);
	ibManifold out[4];
	int k = ib_shape_pair_collide(bb, bs, mb, ms, 1e-3, NULL, out, 4);
	assert_true(k >= 1);
	for (int i = 0; i < k; ++i) {
		assert_true(ibLength(ibSub(out[i].normal, ibV3(0, 0, 1))) < 1e-9);
		assert_int_equal(out[i].pointCount, 1);
		assert_true(fabs(out[i].points[0].separation + 1e-3) < 1e-9);
	}
	/* down the +x face: its face normal */
	assert_int_equal(ibBody_SetTransform(ball, ibV3(0.5, 0.1, 0.25 + 0.1 / cos(atan(0.5)) - 1e-3), IB_QUAT_IDENTITY), IB_OK);
	k = ib_shape_pair_collide(bb, bs, mb, ms, 1e-3, NULL, out, 4);
	assert_int_equal(k, 1);
	assert_true(ibLength(ibSub(out[0].normal, ibNormalize(ibV3(0.5, 0, 1)))) < 1e-9);
	ibDestroyWorld(w);
}

/* A box resting tilted (0.05 rad) on the peak of a tent (four faces rising 0.1 m over 1 m to a peak, all
 * edges from the peak ridges): the peak, 1 mm into the box's face, is a contact with the face's normal
 * (a vertex of a convex surface: within the faces' bend of their normals). Without the bend rule only
 * the faces' own normals or the edge-wise cones were kept, and the peak poked into the box unseen. */
static void test_peak_into_box_face(void** state)
{
	(void)state;
	ibWorldId w = tu_new_world();
	const ibVec3 tent[5] = {{0, 0, 0.1}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {-1, -1, 0}};
	const int tt[12] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 1};
	ibShapeId mesh = mesh_shape(w, tent, 5, tt, 4);
	const ibBody *mb, *bb;
	const ibShape *ms, *bs;
	const ibTriMeshGeom* t = mesh_of(mesh, &mb, &ms);
	for (int i = 0; i < 4; ++i) assert_true(t->bend[i] > 0.14 && t->bend[i] < 0.15); /* acos(0.99) to the side faces */
	ibShapeDef sd = ibDefaultShapeDef();
	ibQuat q = ibQuatFromAxisAngle(ibV3(1, 0, 0), 0.05);
	ibVec3 down = ibRotate(q, ibV3(0, 0, -1)); /* the box's bottom face normal */
	ibVec3 c = ibSub(ibV3(0, 0, 0.1), ibScale(0.1 - 1e-3, down)); /* the peak 1 mm into the bottom face */
	ibBodyId box = tu_new_body(w, IB_BODY_DYNAMIC, c, q);
	ibShapeId bsId = ibCreateBoxShape(box, &sd, &(ibBox){{0.3, 0.3, 0.1}});
	bs = shape_of(bsId, &bb);
	ibManifold out[8];
	int k = ib_shape_pair_collide(bb, bs, mb, ms, 1e-4, NULL, out, 8);
	int atPeak = 0;
	for (int i = 0; i < k; ++i)
		for (int p = 0; p < out[i].pointCount; ++p)
			if (ibLength(ibSub(out[i].points[p].pointB, ibV3(0, 0, 0.1))) < 1e-9) {
				assert_true(ibLength(ibAdd(out[i].normal, down)) < 1e-9); /* from the mesh to the box: up the box's axis */
				assert_true(fabs(out[i].points[p].separation + 1e-3) < 1e-9);
				++atPeak;
			}
	assert_int_equal(atPeak, 1); /* found once (the other faces' regions repeat it) */
	ibDestroyWorld(w);
}

/* A thin plate 1.2 m x 0.04 m x 0.6 m standing on its long edge, 5 cm into a flat mesh: it rises out at
 * the recovery speed and stays, never thrown (its energy stays below the start's plus m g (5 cm + 0.1 mm)). */
static void test_plate_stuck_in_mesh_comes_out(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, -9.81);
	ibWorldId w = ibCreateWorld(&wd);
	static Grid g;
	make_grid(&g, 10, 0.5, 0.0);
	mesh_shape(w, g.v, g.nv, g.idx, g.nt);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBodyId plate = tu_new_body(w, IB_BODY_DYNAMIC, ibV3(0.1, 0.07, 0.3 - 0.05), ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.2));
	assert_false(IB_IS_NULL(ibCreateBoxShape(plate, &sd, &(ibBox){{0.6, 0.02, 0.3}})));
	ibWorldInvariants inv;
	assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
	const double e0 = inv.kineticEnergy + inv.potentialEnergy, m = ibBody_GetMass(plate);
	double emax = -INFINITY;
	for (int k = 0; k < 120; ++k) {
		assert_int_equal(ibWorld_Step(w, 1.0 / 60.0), IB_OK);
		assert_int_equal(ibWorld_ComputeInvariants(w, &inv), IB_OK);
		emax = fmax(emax, inv.kineticEnergy + inv.potentialEnergy);
	}
	ibVec3 p = ibBody_GetPosition(plate);
	printf("plate: centre at z = %.6f m after 2 s (resting: 0.3), |v| = %.3g m/s, largest E - E0 - m g 5 cm = %.3g J\n", p.z,
	       ibLength(ibBody_GetLinearVelocity(plate)), emax - e0 - m * 9.81 * 0.05);
	assert_true(fabs(p.z - 0.3) < 2e-3);
	assert_true(ibLength(ibBody_GetLinearVelocity(plate)) < 1e-2);
	assert_true(emax - e0 <= m * 9.81 * (0.05 + 1e-4));
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- random drops */

/* test_contact_drops' drop (three random bodies, 3 s) onto a 10 m x 10 m mesh of 20 x 20 squares with
 * bumps of the given amplitude (0: flat), the bodies started 0.5 m higher. The largest E - E(0) (J). */
static bool drop(int seed, double hz, double amp, double* gain, double* e0)
{
	static Grid g;
	make_grid(&g, 20, 0.5, amp);
	rng = 12345u + (uint64_t)seed * 7919u;
	rnd();
	rnd();
	const double mu = rnd() < 0.3 ? 0.0 : uni(0.1, 0.6), e = rnd() < 0.7 ? 0.0 : uni(0.1, 0.8);
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, -9.81);
	ibWorldId w = ibCreateWorld(&wd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){e, mu, mu};
	ibBodyId ground = tu_new_body(w, IB_BODY_STATIC, IB_VEC3_ZERO, IB_QUAT_IDENTITY);
	assert_false(IB_IS_NULL(ibCreateTriMeshShape(ground, &sd, &(ibMesh){g.v, g.nv, g.idx, g.nt})));
	drop_bodies(w, &sd, 1.1, NULL, 0, NULL);
	return drop_run(w, hz, gain, e0);
}

static void drops(double hz, double amp, int seeds)
{
	int bad = 0;
	double worst = -INFINITY;
	for (int seed = 0; seed < seeds; ++seed) {
		double gain, e0;
		bool ok = drop(seed, hz, amp, &gain, &e0);
		if (!ok || !(gain <= 2e-6 * fabs(e0) + 1e-4)) {
			printf("  seed %d: %s, largest E - E(0) %.4g J of %.4g J\n", seed, ok ? "gained" : "diverged", gain, e0);
			++bad;
		}
		worst = fmax(worst, gain);
	}
	printf("%d random drops onto a %s mesh at %.0f Hz: %d fail; largest E - E(0) %.3e J\n", seeds, amp > 0.0 ? "bumpy" : "flat", hz,
	       bad, worst);
	assert_int_equal(bad, 0);
}

static void test_random_drops_bumpy_60hz(void** state)
{
	(void)state;
	drops(60.0, 0.3, IBDYN_SLOW_TESTS ? 400 : 30);
}

static void test_random_drops_bumpy_30hz(void** state)
{
	(void)state;
	drops(30.0, 0.3, IBDYN_SLOW_TESTS ? 400 : 30);
}

static void test_random_drops_flat_60hz(void** state)
{
	(void)state;
	drops(60.0, 0.0, IBDYN_SLOW_TESTS ? 400 : 30);
}

/* Drops that a probe of 15 000 more (seeds 0-4999 onto bumps of 0.3 and 0.8 m and flat, session 30) found
 * gaining energy, each in one step whose contact position loop diverged (contact_graph.c,
 * IB_CONTACT_DIVERGED): a light hull squeezed by a falling cylinder onto the mesh (94.8 J of 3400 J), and two
 * spinning cylinders crossing at 12-16 degrees wedged in a valley (1.8 kJ of 3166 J, 15.4 kJ of 5494 J).
 * Such a loop's impulses are now taken back and the step reported not converged. */
static void test_diverging_position_loops(void** state)
{
	(void)state;
	const struct {
		int seed;
		double amp;
	} cases[] = {{2330, 0.3}, {1820, 0.8}, {1883, 0.8}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
		double gain, e0;
		assert_true(drop(cases[k].seed, 60.0, cases[k].amp, &gain, &e0));
		printf("drop %d onto %.1f m bumps: largest E - E(0) %.3g J of %.4g J\n", cases[k].seed, cases[k].amp, gain, e0);
		assert_true(gain <= 2e-6 * fabs(e0) + 1e-4);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edge_kinds),
	    cmocka_unit_test(test_flat_mesh_face_normals),
	    cmocka_unit_test(test_ridge_keeps_edge_normal),
	    cmocka_unit_test(test_peak_into_box_face),
	    cmocka_unit_test(test_plate_stuck_in_mesh_comes_out),
	    cmocka_unit_test(test_random_drops_bumpy_60hz),
	    cmocka_unit_test(test_random_drops_bumpy_30hz),
	    cmocka_unit_test(test_random_drops_flat_60hz),
	    cmocka_unit_test(test_diverging_position_loops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
