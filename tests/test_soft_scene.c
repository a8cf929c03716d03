/* Scene format: <soft> and <soft_joint> elements create a soft body and a rigid–soft triangle
 * joint; bad input is rejected with the line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ibdyn/ibdyn.h"
#include "ibdyn/scene.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_load_and_step), cmocka_unit_test(test_bad_soft)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
