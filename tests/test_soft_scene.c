/* Scene format: <soft> and <soft_joint> elements create a soft body and a rigid–soft triangle
 * joint; bad input is rejected with the line; soft bodies from OBJ files (scene and API); soft
 * bodies and soft joints written by ibSaveScene: load -> save -> load gives the identical state. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/scene.h"

#define DATA_DIR IBDYN_SOURCE_DIR "/tests/data"

static const char* kScene =
    "<ibdyn version=\"1\">\n"
    "  <world gravity=\"0 0 -9.81\"/>\n"
    "  <body name=\"bar\" type=\"dynamic\" position=\"0 0 0\"><box half_extents=\"0.5 0.02 0.02\" mass=\"1\"/></body>\n"
    "  <body name=\"ground\"/>\n"
    "  <joint type=\"ball\" body_a=\"ground\" body_b=\"bar\" anchor=\"0 0 0\"/>\n"
    "  <soft name=\"cloth\" vertices=\"-0.5 0 0  0.5 0 0  -0.5 0 -1  0.5 0 -1\" triangles=\"0 2 3  0 3 1\"\n"
    "        density=\"0.2\" bending=\"dihedral\" bending_compliance=\"1\" tolerance=\"1e-7\"/>\n"
    "  <soft_joint type=\"triangle\" body=\"bar\" soft=\"cloth\" triangle=\"0\" point=\"-0.4 0.01 -0.05\"/>\n"
    "  <soft_joint type=\"vertex\" body=\"bar\" soft=\"cloth\" vertex=\"1\"/>\n"
    "</ibdyn>\n";

static void test_load_and_step(void** state)
{
	(void)state;
	ibWorldId w;
	char err[512] = "";
	ibResult r = ibLoadSceneFromMemory(kScene, strlen(kScene), "soft.xml", NULL, &w, NULL, err, sizeof err);
	if (r != IB_OK) fail_msg("load: %s", err);
	ibSoftBodyId sb = ibWorld_FindSoftBody(w, "cloth");
	assert_true(ibSoftBody_IsValid(sb));
	assert_int_equal(ibSoftBody_GetParticleCount(sb), 4);
	assert_int_equal(ibSoftBody_GetConstraintCount(sb), 5 + 1); /* 5 edges + 1 dihedral */
	for (int k = 0; k < 100; ++k) assert_int_equal(ibWorld_Step(w, 0.01), IB_OK);
	ibSoftStepStats st = ibWorld_GetSoftStepStats(w);
	assert_true(st.maxJointError <= 1e-6);
	assert_true(ibSoftBody_GetPosition(sb, 2).z < -0.5); /* hangs */
	ibDestroyWorld(w);
}

static void test_bad_soft(void** state)
{
	(void)state;
	const char* bad[] = {
	    "<ibdyn version=\"1\"><soft vertices=\"0 0 0 1 0 0 0 1 0\" triangles=\"0 1 5\"/></ibdyn>",
	    "<ibdyn version=\"1\"><soft vertices=\"0 0 0 1 0 0\" triangles=\"0 1\"/></ibdyn>",
	    "<ibdyn version=\"1\"><body name=\"b\" type=\"dynamic\"><sphere radius=\"1\"/></body>"
	    "<soft name=\"s\" vertices=\"0 0 0 1 0 0 0 1 0\" triangles=\"0 1 2\"/>"
	    "<soft_joint type=\"triangle\" body=\"b\" soft=\"nope\" triangle=\"0\" point=\"0 0 0\"/></ibdyn>",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		ibWorldId w = IB_NULL_WORLD;
		char err[512] = "";
		ibResult r = ibLoadSceneFromMemory(bad[i], strlen(bad[i]), "bad.xml", NULL, &w, NULL, err, sizeof err);
		print_message("bad %zu: %s\n", i, err);
		assert_int_not_equal(r, IB_OK);
		assert_true(strlen(err) > 0);
	}
}


/* Every soft quantity of two worlds, bit for bit. */
static void assert_same_soft(ibWorldId a, ibWorldId b)
{
	int n = ibWorld_GetSoftBodies(a, NULL, 0);
	assert_int_equal(ibWorld_GetSoftBodies(b, NULL, 0), n);
	ibSoftBodyId sa[8], sb[8];
	assert_true(n <= 8);
	ibWorld_GetSoftBodies(a, sa, 8);
	ibWorld_GetSoftBodies(b, sb, 8);
	for (int k = 0; k < n; ++k) {
		int np = ibSoftBody_GetParticleCount(sa[k]);
		assert_int_equal(ibSoftBody_GetParticleCount(sb[k]), np);
		assert_int_equal(ibSoftBody_GetConstraintCount(sb[k]), ibSoftBody_GetConstraintCount(sa[k]));
		for (int i = 0; i < np; ++i) {
			ibVec3 xa = ibSoftBody_GetPosition(sa[k], i), xb = ibSoftBody_GetPosition(sb[k], i);
			ibVec3 va = ibSoftBody_GetVelocity(sa[k], i), vb = ibSoftBody_GetVelocity(sb[k], i);
			assert_true(xa.x == xb.x && xa.y == xb.y && xa.z == xb.z);
			assert_true(va.x == vb.x && va.y == vb.y && va.z == vb.z);
			assert_true(ibSoftBody_GetParticleMass(sa[k], i) == ibSoftBody_GetParticleMass(sb[k], i));
			assert_int_equal(ibSoftBody_IsPinned(sa[k], i), ibSoftBody_IsPinned(sb[k], i));
		}
		ibSoftBodyDef da, db;
		assert_int_equal(ibSoftBody_GetDef(sa[k], &da), IB_OK);
		assert_int_equal(ibSoftBody_GetDef(sb[k], &db), IB_OK);
		for (int i = 0; i < np; ++i) {
			assert_true(da.vertices[i].x == db.vertices[i].x && da.vertices[i].y == db.vertices[i].y &&
			            da.vertices[i].z == db.vertices[i].z);
			assert_true(da.vertexMasses[i] == db.vertexMasses[i]);
		}
		assert_int_equal(da.triangleCount, db.triangleCount);
		assert_int_equal(da.tetrahedronCount, db.tetrahedronCount);
		assert_int_equal(da.edgeCount, db.edgeCount);
		assert_int_equal(da.solver, db.solver);
		assert_int_equal(da.bending, db.bending);
		assert_true(da.stretchCompliance == db.stretchCompliance && da.bendingCompliance == db.bendingCompliance &&
		            da.linearDamping == db.linearDamping && da.positionTolerance == db.positionTolerance &&
		            da.preserveVolume == db.preserveVolume && da.volumeCompliance == db.volumeCompliance);
	}
	int nc = ibWorld_GetConstraints(a, NULL, 0);
	assert_int_equal(ibWorld_GetConstraints(b, NULL, 0), nc);
	ibConstraintId ca[8], cb[8];
	assert_true(nc <= 8);
	ibWorld_GetConstraints(a, ca, 8);
	ibWorld_GetConstraints(b, cb, 8);
	for (int j = 0; j < nc; ++j) {
		ibSoftJointDef ja, jb;
		assert_int_equal(ibSoftJoint_GetDef(ca[j], &ja), IB_OK);
		assert_int_equal(ibSoftJoint_GetDef(cb[j], &jb), IB_OK);
		assert_int_equal(ja.type, jb.type);
		assert_int_equal(ja.triangle, jb.triangle);
		assert_int_equal(ja.vertex, jb.vertex);
		assert_memory_equal(ja.coordinates, jb.coordinates, sizeof ja.coordinates);
		assert_true(ja.localAnchor.x == jb.localAnchor.x && ja.localAnchor.y == jb.localAnchor.y &&
		            ja.localAnchor.z == jb.localAnchor.z);
		double Ca[3], Cb[3];
		assert_int_equal(ibConstraint_Evaluate(ca[j], Ca, NULL), IB_OK);
		assert_int_equal(ibConstraint_Evaluate(cb[j], Cb, NULL), IB_OK);
		assert_memory_equal(Ca, Cb, sizeof Ca);
	}
}

static const char* kRoundTrip =
    "<ibdyn version=\"1\">\n"
    "  <world gravity=\"0 0 -9.81\"/>\n"
    "  <body name=\"bar\" type=\"dynamic\" position=\"0 0 0\"><box half_extents=\"0.5 0.02 0.02\" mass=\"1\"/></body>\n"
    "  <body name=\"ground\"/>\n"
    "  <body/>\n"
    "  <joint type=\"ball\" body_a=\"ground\" body_b=\"bar\" anchor=\"0 0 0\"/>\n"
    "  <soft name=\"cloth\" vertices=\"-0.5 0 0  0.5 0 0  -0.5 0 -1  0.5 0 -1\" triangles=\"0 2 3  0 3 1\"\n"
    "        density=\"0.2\" bending=\"dihedral\" bending_compliance=\"1\" tolerance=\"1e-7\" solver=\"sparse\"/>\n"
    "  <soft vertices=\"0 0 -2  0.3 0 -2  0 0.3 -2  0 0 -1.7\" tetrahedra=\"0 1 2 3\" edges=\"1 3\" preserve_volume=\"true\"\n"
    "        density=\"500\" pinned=\"2\" damping=\"0.3\" max_iterations=\"50\" velocity=\"0.1 0 0\"/>\n"
    "  <soft_joint type=\"triangle\" body=\"bar\" soft=\"cloth\" triangle=\"0\" point=\"-0.4 0.01 -0.05\"/>\n"
    "  <soft_joint type=\"vertex\" name=\"v\" body=\"bar\" soft=\"cloth\" vertex=\"1\"/>\n"
    "</ibdyn>\n";

static void test_round_trip(void** state)
{
	(void)state;
	char err[512] = "";
	ibWorldId w0;
	if (ibLoadSceneFromMemory(kRoundTrip, strlen(kRoundTrip), "rt.xml", NULL, &w0, NULL, err, sizeof err) != IB_OK)
		fail_msg("load: %s", err);
	/* a vertex joint to the unnamed static body (needs a written name) and an unnamed soft body in a joint */
	ibBodyId bodies[3];
	assert_int_equal(ibWorld_GetBodies(w0, bodies, 3), 3);
	ibSoftBodyId softs[2];
	assert_int_equal(ibWorld_GetSoftBodies(w0, softs, 2), 2);
	ibSoftJointDef jd = ibDefaultSoftJointDef();
	jd.type = IB_SOFT_JOINT_VERTEX;
	jd.body = bodies[2];
	jd.soft = softs[1];
	jd.vertex = 0;
	assert_false(IB_IS_NULL(ibCreateSoftJoint(w0, &jd)));
	for (int k = 0; k < 15; ++k) assert_int_equal(ibWorld_Step(w0, 0.01), IB_OK);
	char* xml1 = NULL;
	if (ibSaveSceneToMemory(w0, NULL, &xml1, err, sizeof err) != IB_OK) fail_msg("save: %s", err);
	assert_non_null(strstr(xml1, "<soft "));
	assert_non_null(strstr(xml1, "<soft_joint "));
	ibWorldId w1;
	if (ibLoadSceneFromMemory(xml1, strlen(xml1), "rt1.xml", NULL, &w1, NULL, err, sizeof err) != IB_OK)
		fail_msg("reload: %s\n%s", err, xml1);
	assert_same_soft(w0, w1);
	char* xml2 = NULL;
	assert_int_equal(ibSaveSceneToMemory(w1, NULL, &xml2, err, sizeof err), IB_OK);
	ibWorldId w2;
	assert_int_equal(ibLoadSceneFromMemory(xml2, strlen(xml2), "rt2.xml", NULL, &w2, NULL, err, sizeof err), IB_OK);
	assert_same_soft(w1, w2);
	/* the reloaded world steps on like the original one (no warm start: impulses are not saved) */
	ibSolverSettings s0 = ibWorld_GetSolverSettings(w0), s1 = ibWorld_GetSolverSettings(w1);
	s0.warmStart = s1.warmStart = false;
	ibWorld_SetSolverSettings(w0, &s0);
	ibWorld_SetSolverSettings(w1, &s1);
	for (int k = 0; k < 5; ++k) {
		assert_int_equal(ibWorld_Step(w0, 0.01), IB_OK);
		assert_int_equal(ibWorld_Step(w1, 0.01), IB_OK);
	}
	assert_same_soft(w0, w1);
	free(xml1);
	free(xml2);
	ibDestroyWorld(w0);
	ibDestroyWorld(w1);
	ibDestroyWorld(w2);
}

static void zero_row(const ibConstraintState* st, int count, double* C, double* J, void* user)
{
	(void)st, (void)count, (void)user;
	C[0] = 0.0;
	if (J) J[0] = J[1] = J[2] = 0.0;
}

static void test_user_constraint_not_saved(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibVec3 v = ibV3(0, 0, 0);
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	d.vertices = &v;
	d.vertexCount = 1;
	double m = 1.0;
	d.vertexMasses = &m;
	ibSoftBodyId sb = ibCreateSoftBody(w, &d);
	ibConstraintParticipant part = {IB_NULL_BODY, sb, 0};
	ibConstraintDef cd = ibDefaultConstraintDef();
	cd.participants = &part;
	cd.participantCount = 1;
	cd.fn = zero_row;
	assert_false(IB_IS_NULL(ibCreateConstraint(w, &cd)));
	char err[512] = "";
	char* xml = NULL;
	assert_int_not_equal(ibSaveSceneToMemory(w, NULL, &xml, err, sizeof err), IB_OK);
	assert_null(xml);
	assert_non_null(strstr(err, "user constraint"));
	ibDestroyWorld(w);
}

static void test_obj_scene(void** state)
{
	(void)state;
	char err[512] = "";
	ibWorldId w;
	if (ibLoadScene(DATA_DIR "/soft_obj.xml", NULL, &w, NULL, err, sizeof err) != IB_OK) fail_msg("load: %s", err);
	ibSoftBodyId sb = ibWorld_FindSoftBody(w, "panel");
	assert_true(ibSoftBody_IsValid(sb));
	assert_int_equal(ibSoftBody_GetParticleCount(sb), 9);
	assert_int_equal(ibSoftBody_GetTriangles(sb, NULL, 0), 8);
	assert_int_equal(ibSoftBody_GetConstraintCount(sb), 16 + 8); /* 16 edges, 8 interior edges bent */
	assert_true(ibSoftBody_IsPinned(sb, 0) && ibSoftBody_IsPinned(sb, 2));
	ibVec3 x4 = ibSoftBody_GetPosition(sb, 4);
	assert_true(x4.x == 0.5 && x4.y == 0.5 && x4.z == 1.0);
	for (int k = 0; k < 25; ++k) assert_int_equal(ibWorld_Step(w, 0.01), IB_OK);
	assert_true(ibSoftBody_GetPosition(sb, 8).z < 0.9); /* the free edge swings down */
	assert_true(ibSoftBody_GetPosition(sb, 0).z == 1.0);
	ibDestroyWorld(w);
	/* errors: both vertices and file; a missing file */
	const char* both = "<ibdyn version=\"1\"><soft file=\"x.obj\" vertices=\"0 0 0\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(both, strlen(both), "b.xml", NULL, &w, NULL, err, sizeof err), IB_OK);
	assert_non_null(strstr(err, "either"));
	const char* missing = "<ibdyn version=\"1\"><soft file=\"no_such.obj\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(missing, strlen(missing), "m.xml", NULL, &w, NULL, err, sizeof err), IB_OK);
	assert_non_null(strstr(err, "no_such.obj"));
}

/* API: ibLoadObj + ibSoftBodyDef_SetMesh, a closed surface with volume preservation. */
static void test_obj_api(void** state)
{
	(void)state;
	char err[512] = "";
	ibMesh m;
	if (ibLoadObj(DATA_DIR "/obj/soft_octahedron.obj", &m, err, sizeof err) != IB_OK) fail_msg("%s", err);
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	ibSoftBodyDef_SetMesh(&d, &m);
	d.preserveVolume = true;
	d.density = 100.0;
	ibSoftBodyId sb = ibCreateSoftBody(w, &d);
	if (!ibSoftBody_IsValid(sb)) fail_msg("%s", ibWorld_GetLastError(w));
	assert_int_equal(ibSoftBody_GetParticleCount(sb), 6);
	assert_int_equal(ibSoftBody_GetConstraintCount(sb), 12 + 1); /* edges + enclosed volume */
	/* mass = density x volume of the octahedron (4/3 r^3) */
	assert_true(fabs(ibSoftBody_GetMass(sb) - 100.0 * 4.0 / 3.0 * 0.008) < 1e-12);
	ibFreeObjMesh(&m);
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_load_and_step), cmocka_unit_test(test_bad_soft),
	                                   cmocka_unit_test(test_round_trip), cmocka_unit_test(test_user_constraint_not_saved),
	                                   cmocka_unit_test(test_obj_scene), cmocka_unit_test(test_obj_api)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
