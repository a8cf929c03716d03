/* Public API error model: every bad argument is rejected with a message and leaves the world
 * unchanged; stale handles never crash; allocator and log hooks are used. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"

typedef struct Snapshot {
	int bodies;
	ibVec3 pos[8], v[8], w[8];
	ibQuat q[8];
	double mass[8];
	int shapes[8];
} Snapshot;

static Snapshot snap(ibWorldId w)
{
	Snapshot s;
	memset(&s, 0, sizeof s);
	ibBodyId ids[8];
	s.bodies = ibWorld_GetBodies(w, ids, 8);
	for (int i = 0; i < s.bodies && i < 8; ++i) {
		s.pos[i] = ibBody_GetPosition(ids[i]);
		s.q[i] = ibBody_GetRotation(ids[i]);
		s.v[i] = ibBody_GetLinearVelocity(ids[i]);
		s.w[i] = ibBody_GetAngularVelocity(ids[i]);
		s.mass[i] = ibBody_GetMass(ids[i]);
		s.shapes[i] = ibBody_GetShapeCount(ids[i]);
	}
	return s;
}

static void assert_unchanged(ibWorldId w, const Snapshot* before)
{
	Snapshot after = snap(w);
	assert_memory_equal(&after, before, sizeof after);
}

static void assert_error(ibWorldId w, ibResult got, ibResult expect)
{
	assert_int_equal(got, expect);
	assert_true(strlen(ibWorld_GetLastError(w)) > 0);
	ibWorld_ClearError(w);
}

static ibWorldId g_world;
static ibBodyId g_dyn, g_static, g_kin;

static int setup(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	g_world = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0, 0, 1);
	g_dyn = ibCreateBody(g_world, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox box = {{0.5, 0.5, 0.5}};
	ibCreateBoxShape(g_dyn, &sd, &box);
	bd = ibDefaultBodyDef();
	g_static = ibCreateBody(g_world, &bd);
	bd.type = IB_BODY_KINEMATIC;
	g_kin = ibCreateBody(g_world, &bd);
	return 0;
}

static int teardown(void** state)
{
	(void)state;
	ibDestroyWorld(g_world);
	return 0;
}

static void test_version(void** state)
{
	(void)state;
	ibVersion v = ibGetVersion();
	assert_int_equal(v.major * 10000 + v.minor * 100 + v.patch, IBDYN_VERSION);
	assert_string_equal(ibResultString(IB_ERR_STALE_HANDLE), "stale handle");
}

static void test_bad_world_defs(void** state)
{
	(void)state;
	assert_false(ibWorld_IsValid(ibCreateWorld(NULL)));
	ibWorldDef wd = {0};
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd))); /* not from ibDefaultWorldDef */
	char msg[256];
	wd = ibDefaultWorldDef();
	wd.gravity.y = NAN;
	assert_int_equal(ibValidateWorldDef(&wd, msg, sizeof msg), IB_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "gravity"));
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
	wd = ibDefaultWorldDef();
	wd.solver.positionTolerance = -1.0;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
	wd = ibDefaultWorldDef();
	wd.solver.integrator = (ibIntegrator)7;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
	wd = ibDefaultWorldDef();
	wd.solver.maxPositionIterations = 0;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
}

static void test_bad_body_defs(void** state)
{
	(void)state;
	Snapshot s = snap(g_world);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position.x = NAN;
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	bd = ibDefaultBodyDef();
	bd.rotation = ibQ(0, 0, 0, 0);
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	bd = ibDefaultBodyDef();
	bd.linearVelocity = ibV3(1, 0, 0); /* static with velocity */
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.linearDamping = -1;
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	bd = ibDefaultBodyDef();
	bd.type = (ibBodyType)9;
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	bd = ibDefaultBodyDef();
	bd.angularVelocity.z = INFINITY;
	bd.type = IB_BODY_DYNAMIC;
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &bd)));
	assert_false(ibBody_IsValid(ibCreateBody(g_world, NULL)));
	ibBodyDef zero = {0};
	assert_false(ibBody_IsValid(ibCreateBody(g_world, &zero)));
	assert_true(strlen(ibWorld_GetLastError(g_world)) > 0);
	assert_unchanged(g_world, &s);
}

static void test_bad_shapes(void** state)
{
	(void)state;
	Snapshot s = snap(g_world);
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere sp = {-1.0};
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sp.radius = NAN;
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sp.radius = 1.0;
	sd.density = 0.0;
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sd.density = -5.0;
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sd = ibDefaultShapeDef();
	sd.mass = -1.0;
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sd = ibDefaultShapeDef();
	sd.material.restitution = 1.5;
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, &sp)));
	sd = ibDefaultShapeDef();
	ibBox box = {{1.0, 0.0, 1.0}};
	assert_false(ibShape_IsValid(ibCreateBoxShape(g_dyn, &sd, &box)));
	ibCapsule cap = {0.0, 1.0};
	assert_false(ibShape_IsValid(ibCreateCapsuleShape(g_dyn, &sd, &cap)));
	ibCylinder cyl = {1.0, -1.0};
	assert_false(ibShape_IsValid(ibCreateCylinderShape(g_dyn, &sd, &cyl)));
	/* inside-out tetrahedron */
	ibVec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	int tri[12] = {0, 1, 2, 0, 1, 3, 0, 3, 2, 1, 3, 2};
	ibMesh mesh = {v, 4, tri, 4};
	assert_false(ibShape_IsValid(ibCreateMeshShape(g_dyn, &sd, &mesh)));
	int badIdx[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 7};
	mesh.indices = badIdx;
	assert_false(ibShape_IsValid(ibCreateMeshShape(g_dyn, &sd, &mesh)));
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, NULL, &sp)));
	assert_false(ibShape_IsValid(ibCreateSphereShape(g_dyn, &sd, NULL)));
	assert_unchanged(g_world, &s);
	/* a good tetrahedron is accepted */
	int good[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
	mesh.indices = good;
	ibShapeId t = ibCreateMeshShape(g_dyn, &sd, &mesh);
	assert_true(ibShape_IsValid(t));
	assert_int_equal(ibDestroyShape(t), IB_OK);
	Snapshot s2 = snap(g_world);
	for (int i = 0; i < 3; ++i) assert_true(fabs(s2.mass[i] - s.mass[i]) <= 1e-12 * fmax(1.0, s.mass[i]));
}

static void test_bad_body_calls(void** state)
{
	(void)state;
	Snapshot s = snap(g_world);
	ibVec3 nanv = {NAN, 0, 0};
	assert_error(g_world, ibBody_SetLinearVelocity(g_dyn, nanv), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetAngularVelocity(g_dyn, ibV3(0, INFINITY, 0)), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetLinearVelocity(g_static, ibV3(1, 0, 0)), IB_ERR_WRONG_BODY_TYPE);
	assert_error(g_world, ibBody_ApplyForceToCenter(g_static, ibV3(1, 0, 0)), IB_ERR_WRONG_BODY_TYPE);
	assert_error(g_world, ibBody_ApplyImpulseAtPoint(g_kin, ibV3(1, 0, 0), ibV3(0, 0, 0)), IB_ERR_WRONG_BODY_TYPE);
	assert_error(g_world, ibBody_ApplyForce(g_dyn, ibV3(1, 0, 0), nanv), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_ApplyTorque(g_dyn, nanv), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_ApplyAngularImpulse(g_dyn, nanv), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetTransform(g_dyn, nanv, IB_QUAT_IDENTITY), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetTransform(g_dyn, ibV3(0, 0, 0), ibQ(0, 0, 0, 0)), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetDamping(g_dyn, -1, 0), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibBody_SetGravityScale(g_dyn, NAN), IB_ERR_INVALID_ARGUMENT);
	ibMassData md = {-1.0, {0, 0, 0}, ibMat3_Identity()};
	assert_error(g_world, ibBody_SetMassData(g_dyn, &md), IB_ERR_INVALID_ARGUMENT);
	md.mass = 1.0;
	md.inertia = ibMat3_Diag(ibV3(1, 1, 0)); /* degenerate */
	assert_error(g_world, ibBody_SetMassData(g_dyn, &md), IB_ERR_DEGENERATE);
	md.inertia = ibMat3_Diag(ibV3(1, 1, 5)); /* violates triangle inequality */
	assert_error(g_world, ibBody_SetMassData(g_dyn, &md), IB_ERR_DEGENERATE);
	md.inertia = ibMat3_Identity();
	md.inertia.m[0][1] = 0.5; /* not symmetric */
	assert_error(g_world, ibBody_SetMassData(g_dyn, &md), IB_ERR_DEGENERATE);
	md.inertia = ibMat3_Identity();
	assert_error(g_world, ibBody_SetMassData(g_static, &md), IB_ERR_WRONG_BODY_TYPE);
	assert_error(g_world, ibBody_SetMassData(g_dyn, NULL), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibWorld_Step(g_world, 0.0), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibWorld_Step(g_world, NAN), IB_ERR_INVALID_ARGUMENT);
	assert_error(g_world, ibWorld_SetGravity(g_world, nanv), IB_ERR_INVALID_ARGUMENT);
	ibSolverSettings ss = ibWorld_GetSolverSettings(g_world);
	ss.velocityTolerance = 0.0;
	assert_error(g_world, ibWorld_SetSolverSettings(g_world, &ss), IB_ERR_INVALID_ARGUMENT);
	ss = ibWorld_GetSolverSettings(g_world);
	ss.contact.stallSweeps = -1;
	assert_error(g_world, ibWorld_SetSolverSettings(g_world, &ss), IB_ERR_INVALID_ARGUMENT);
	assert_unchanged(g_world, &s);
	assert_false(ibBody_HasMassOverride(g_dyn));
}

static void test_stale_handles(void** state)
{
	(void)state;
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	ibBodyId b = ibCreateBody(g_world, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere sp = {0.1};
	ibShapeId sh = ibCreateSphereShape(b, &sd, &sp);
	assert_int_equal(ibDestroyBody(b), IB_OK);
	assert_false(ibBody_IsValid(b));
	assert_false(ibShape_IsValid(sh));
	Snapshot s = snap(g_world);
	assert_error(g_world, ibBody_SetLinearVelocity(b, ibV3(1, 0, 0)), IB_ERR_STALE_HANDLE);
	assert_error(g_world, ibDestroyBody(b), IB_ERR_STALE_HANDLE);
	assert_error(g_world, ibDestroyShape(sh), IB_ERR_STALE_HANDLE);
	assert_true(ibLength(ibBody_GetPosition(b)) == 0.0);
	assert_false(ibShape_IsValid(ibCreateSphereShape(b, &sd, &sp)));
	/* the slot is reused with a new generation: the old handle stays stale */
	ibBodyId b2 = ibCreateBody(g_world, &bd);
	assert_int_equal(b2.index1, b.index1);
	assert_false(ibBody_IsValid(b));
	assert_true(ibBody_IsValid(b2));
	ibDestroyBody(b2);
	assert_unchanged(g_world, &s);
	/* null handles */
	assert_false(ibBody_IsValid(IB_NULL_BODY));
	assert_false(ibShape_IsValid(IB_NULL_SHAPE));
	assert_false(ibWorld_IsValid(IB_NULL_WORLD));
	assert_int_equal(ibWorld_Step(IB_NULL_WORLD, 0.01), IB_ERR_STALE_HANDLE);
	/* handles of a destroyed world */
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w2 = ibCreateWorld(&wd);
	ibBodyId ob = ibCreateBody(w2, &bd);
	ibDestroyWorld(w2);
	assert_false(ibWorld_IsValid(w2));
	assert_false(ibBody_IsValid(ob));
	assert_int_equal(ibBody_SetLinearVelocity(ob, ibV3(1, 0, 0)), IB_ERR_STALE_HANDLE);
	assert_int_equal(ibWorld_Step(w2, 0.01), IB_ERR_STALE_HANDLE);
}

typedef struct Counter {
	long allocs, frees;
	size_t live;
	int logs;
} Counter;

static void* count_alloc(size_t n, void* ctx)
{
	Counter* c = ctx;
	c->allocs++;
	c->live += n;
	return malloc(n);
}
static void* count_realloc(void* p, size_t o, size_t n, void* ctx)
{
	Counter* c = ctx;
	c->live += n;
	c->live -= p ? o : 0;
	if (!p) c->allocs++;
	return realloc(p, n);
}
static void count_free(void* p, size_t n, void* ctx)
{
	Counter* c = ctx;
	if (p) {
		c->frees++;
		c->live -= n;
	}
	free(p);
}
static void count_log(ibLogLevel l, const char* msg, void* ctx)
{
	(void)l;
	assert_true(strlen(msg) > 0);
	((Counter*)ctx)->logs++;
}

static void test_allocator_and_log_hooks(void** state)
{
	(void)state;
	Counter c = {0};
	ibWorldDef wd = ibDefaultWorldDef();
	wd.allocFn = count_alloc;
	wd.reallocFn = count_realloc;
	wd.freeFn = count_free;
	wd.allocContext = &c;
	wd.logFn = count_log;
	wd.logContext = &c;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.name = "named";
	ibShapeDef sd = ibDefaultShapeDef();
	ibSphere sp = {0.1};
	for (int i = 0; i < 100; ++i) ibCreateSphereShape(ibCreateBody(w, &bd), &sd, &sp);
	assert_true(ibBody_IsValid(ibWorld_FindBody(w, "named")));
	for (int i = 0; i < 10; ++i) ibWorld_Step(w, 0.01);
	ibBody_SetLinearVelocity(IB_NULL_BODY, ibV3(0, 0, 0));
	ibWorld_Step(w, -1.0);
	assert_true(c.logs >= 1);
	ibDestroyWorld(w);
	assert_true(c.allocs > 0);
	assert_int_equal(c.live, 0);
	/* a world def with only some hooks is rejected */
	wd.freeFn = NULL;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
}

static void test_divergence_flag(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0, 0, 1e308);
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	ibBodyId b = ibCreateBody(w, &bd);
	ibResult r = IB_OK;
	for (int i = 0; i < 10 && r == IB_OK; ++i) r = ibWorld_Step(w, 1e3);
	assert_int_equal(r, IB_ERR_DIVERGED);
	assert_true(ibWorld_HasDiverged(w));
	assert_non_null(strstr(ibWorld_GetLastError(w), "diverged"));
	assert_int_equal(ibWorld_Step(w, 0.01), IB_ERR_DIVERGED);
	(void)b;
	ibDestroyWorld(w);
}

/* A blow-up that stays finite: a dynamic body beyond maxLinearSpeed or maxAngularSpeed after a step marks the
 * world diverged like a non-finite state (the 10 000 kg ball-jointed table of test_contact_joint_response
 * reached 2.4e7 rad/s with IB_OK, session 26). 0 switches a bound off; bounds must be finite and >= 0. */
static void test_speed_bounds(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	assert_true(wd.solver.maxLinearSpeed == 1e4 && wd.solver.maxAngularSpeed == 1e5);
	wd.solver.maxLinearSpeed = -1.0;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
	wd.solver.maxLinearSpeed = 1e4;
	wd.solver.maxAngularSpeed = INFINITY;
	assert_false(ibWorld_IsValid(ibCreateWorld(&wd)));
	wd.solver.maxAngularSpeed = 10.0;
	wd.gravity = ibV3(0, 0, -9.81);
	for (int k = 0; k < 4; ++k) {
		ibWorldId w = ibCreateWorld(&wd);
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.name = "probe";
		ibBodyId b = ibCreateBody(w, &bd);
		ibShapeDef sd = ibDefaultShapeDef();
		ibSphere sp = {0.1};
		ibCreateSphereShape(b, &sd, &sp);
		/* just below both bounds: steps; gravity then pushes the body past 1e4 m/s within 0.1 s */
		assert_int_equal(ibBody_SetLinearVelocity(b, ibV3(0, 0, -1e4 + 0.5)), IB_OK);
		assert_int_equal(ibBody_SetAngularVelocity(b, ibV3(0, 9.9, 0)), IB_OK);
		assert_int_equal(ibWorld_Step(w, 0.01), IB_OK);
		assert_false(ibWorld_HasDiverged(w));
		if (k == 1) assert_int_equal(ibBody_SetAngularVelocity(b, ibV3(0, 10.1, 0)), IB_OK);
		if (k == 2) { /* bounds off */
			ibSolverSettings s = ibWorld_GetSolverSettings(w);
			s.maxLinearSpeed = 0.0;
			s.maxAngularSpeed = 0.0;
			assert_int_equal(ibWorld_SetSolverSettings(w, &s), IB_OK);
			assert_int_equal(ibBody_SetAngularVelocity(b, ibV3(0, 20, 0)), IB_OK);
		}
		if (k == 3) { /* a kinematic body is not bounded: the user sets its motion */
			ibBodyDef kd = ibDefaultBodyDef();
			kd.type = IB_BODY_KINEMATIC;
			kd.linearVelocity = ibV3(2e4, 0, 0);
			kd.angularVelocity = ibV3(0, 0, 100);
			ibCreateBody(w, &kd);
			assert_int_equal(ibBody_SetLinearVelocity(b, IB_VEC3_ZERO), IB_OK);
		}
		ibResult r = IB_OK;
		for (int i = 0; i < 20 && r == IB_OK; ++i) r = ibWorld_Step(w, 0.01);
		if (k >= 2) {
			assert_int_equal(r, IB_OK);
			assert_false(ibWorld_HasDiverged(w));
		} else {
			assert_int_equal(r, IB_ERR_DIVERGED);
			assert_true(ibWorld_HasDiverged(w));
			const char* e = ibWorld_GetLastError(w);
			assert_non_null(strstr(e, "diverged"));
			assert_non_null(strstr(e, "probe"));
			assert_non_null(strstr(e, k == 0 ? "maxLinearSpeed" : "maxAngularSpeed"));
			assert_int_equal(ibWorld_Step(w, 0.01), IB_ERR_DIVERGED);
		}
		ibDestroyWorld(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_version),
	    cmocka_unit_test(test_bad_world_defs),
	    cmocka_unit_test_setup_teardown(test_bad_body_defs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_shapes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_body_calls, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stale_handles, setup, teardown),
	    cmocka_unit_test(test_allocator_and_log_hooks),
	    cmocka_unit_test(test_divergence_flag),
	    cmocka_unit_test(test_speed_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
