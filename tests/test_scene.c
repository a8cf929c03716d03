/* Scene files (ibdyn_scene): the example scenes load; load -> save -> load -> save reproduces the
 * text and every getter value bit for bit; a world built in code round-trips; every file of the
 * bad corpus (every XML file in tests/data/bad) fails with its expected "file:line: message" and leaves no
 * world behind; I/O errors; defaults, materials and hooks; two physics checks of the scenes. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibdyn/scene.h"

#define SCENES_DIR IBDYN_SOURCE_DIR "/scenes"
#define BAD_DIR IBDYN_SOURCE_DIR "/tests/data/bad"

enum { MAX_FILES = 256, ERR_SIZE = 1024 };

/* ---------------------------------------------------------------- helpers */

/* Sorted paths of the *.xml files in dir; returns the count. */
static int listXml(const char* dir, char** out, int cap)
{
	DIR* d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	for (struct dirent* e; (e = readdir(d)) != NULL;) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0) continue;
		assert_true(n < cap);
		out[n] = malloc(strlen(dir) + len + 2);
		assert_non_null(out[n]);
		sprintf(out[n], "%s/%s", dir, e->d_name);
		++n;
	}
	closedir(d);
	for (int i = 1; i < n; ++i)
		for (int j = i; j > 0 && strcmp(out[j - 1], out[j]) > 0; --j) {
			char* t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static void freeList(char** list, int n)
{
	for (int i = 0; i < n; ++i) free(list[i]);
}

static char* readText(const char* path)
{
	FILE* f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char* s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Fails unless the n bytes at a and b are identical; doubles are printed with %.17g. */
static void sameBits(const void* a, const void* b, size_t n, const char* fmt, ...)
{
	if (memcmp(a, b, n) == 0) return;
	char what[256], values[512] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (n % sizeof(double) == 0 && n <= 9 * sizeof(double)) {
		const double* x = a;
		const double* y = b;
		for (size_t i = 0; i < n / sizeof(double); ++i) {
			size_t used = strlen(values);
			snprintf(values + used, sizeof values - used, " [%zu] %.17g vs %.17g", i, x[i], y[i]);
		}
	}
	fail_msg("%s differs:%s", what, values);
}

#define SAME(a, b, ...)                                                                                                \
	do {                                                                                                               \
		__typeof__(a) sa_ = (a), sb_ = (b);                                                                            \
		sameBits(&sa_, &sb_, sizeof sa_, __VA_ARGS__);                                                                 \
	} while (0)

static ibShapeId* shapesOf(ibBodyId b, int* n)
{
	*n = ibBody_GetShapeCount(b);
	ibShapeId* s = calloc((size_t)(*n > 0 ? *n : 1), sizeof *s);
	assert_non_null(s);
	assert_int_equal(ibBody_GetShapes(b, s, *n), *n);
	return s;
}

static void compareShapes(ibShapeId a, ibShapeId b, const char* where)
{
	assert_int_equal(ibShape_GetType(a), ibShape_GetType(b));
	switch (ibShape_GetType(a)) {
	case IB_SHAPE_SPHERE:
		SAME(ibShape_GetSphere(a), ibShape_GetSphere(b), "%s sphere", where);
		break;
	case IB_SHAPE_BOX:
		SAME(ibShape_GetBox(a), ibShape_GetBox(b), "%s box", where);
		break;
	case IB_SHAPE_CAPSULE:
		SAME(ibShape_GetCapsule(a), ibShape_GetCapsule(b), "%s capsule", where);
		break;
	case IB_SHAPE_CYLINDER:
		SAME(ibShape_GetCylinder(a), ibShape_GetCylinder(b), "%s cylinder", where);
		break;
	case IB_SHAPE_PLANE:
		SAME(ibShape_GetPlane(a), ibShape_GetPlane(b), "%s plane", where);
		break;
	case IB_SHAPE_HULL: {
		ibHullData ha = ibShape_GetHull(a), hb = ibShape_GetHull(b);
		assert_int_equal(ha.vertexCount, hb.vertexCount);
		assert_int_equal(ha.faceCount, hb.faceCount);
		assert_int_equal(ha.edgeCount, hb.edgeCount);
		sameBits(ha.vertices, hb.vertices, (size_t)ha.vertexCount * sizeof(ibVec3), "%s hull vertices", where);
		sameBits(ha.faces, hb.faces, (size_t)ha.faceCount * sizeof(ibHullFace), "%s hull faces", where);
		sameBits(ha.faceVertices, hb.faceVertices, (size_t)ha.edgeCount * 2 * sizeof(int), "%s hull loops", where);
		break;
	}
	case IB_SHAPE_MESH:
	case IB_SHAPE_TRIMESH: {
		ibMesh ma = ibShape_GetMesh(a), mb = ibShape_GetMesh(b);
		assert_int_equal(ma.vertexCount, mb.vertexCount);
		assert_int_equal(ma.triangleCount, mb.triangleCount);
		sameBits(ma.vertices, mb.vertices, (size_t)ma.vertexCount * sizeof(ibVec3), "%s mesh vertices", where);
		sameBits(ma.indices, mb.indices, (size_t)ma.triangleCount * 3 * sizeof(int), "%s mesh indices", where);
		break;
	}
	default:
		fail_msg("%s: bad shape type", where);
	}
	SAME(ibShape_GetLocalPosition(a), ibShape_GetLocalPosition(b), "%s local position", where);
	SAME(ibShape_GetLocalRotation(a), ibShape_GetLocalRotation(b), "%s local rotation", where);
	SAME(ibShape_GetDensity(a), ibShape_GetDensity(b), "%s density", where);
	SAME(ibShape_GetExplicitMass(a), ibShape_GetExplicitMass(b), "%s explicit mass", where);
	SAME(ibShape_GetMaterial(a), ibShape_GetMaterial(b), "%s material", where);
	SAME(ibShape_GetMassData(a), ibShape_GetMassData(b), "%s mass data", where);
}

static void compareBodies(ibBodyId a, ibBodyId b, int index)
{
	char where[128];
	snprintf(where, sizeof where, "body %d '%s'", index, ibBody_GetName(a));
	assert_int_equal(ibBody_GetType(a), ibBody_GetType(b));
	assert_string_equal(ibBody_GetName(a), ibBody_GetName(b));
	SAME(ibBody_GetPosition(a), ibBody_GetPosition(b), "%s position", where);
	SAME(ibBody_GetRotation(a), ibBody_GetRotation(b), "%s rotation", where);
	SAME(ibBody_GetLinearVelocity(a), ibBody_GetLinearVelocity(b), "%s linear velocity", where);
	SAME(ibBody_GetAngularVelocity(a), ibBody_GetAngularVelocity(b), "%s angular velocity", where);
	SAME(ibBody_GetWorldCenterOfMass(a), ibBody_GetWorldCenterOfMass(b), "%s world centre of mass", where);
	SAME(ibBody_GetLocalCenterOfMass(a), ibBody_GetLocalCenterOfMass(b), "%s local centre of mass", where);
	SAME(ibBody_GetMassData(a), ibBody_GetMassData(b), "%s mass data", where);
	assert_int_equal(ibBody_HasMassOverride(a), ibBody_HasMassOverride(b));
	double la, aa, lb, ab;
	ibBody_GetDamping(a, &la, &aa);
	ibBody_GetDamping(b, &lb, &ab);
	SAME(la, lb, "%s linear damping", where);
	SAME(aa, ab, "%s angular damping", where);
	SAME(ibBody_GetGravityScale(a), ibBody_GetGravityScale(b), "%s gravity scale", where);
	int na, nb;
	ibShapeId* sa = shapesOf(a, &na);
	ibShapeId* sb = shapesOf(b, &nb);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; ++i) {
		char shapeWhere[160];
		snprintf(shapeWhere, sizeof shapeWhere, "%s shape %d", where, i);
		compareShapes(sa[i], sb[i], shapeWhere);
	}
	free(sa);
	free(sb);
}

/* Position of body in its world's ibWorld_GetBodies order (-1 if absent). */
static int bodyIndex(ibBodyId body)
{
	ibWorldId w = ibBody_GetWorld(body);
	int n = ibWorld_GetBodyCount(w);
	ibBodyId* all = calloc((size_t)(n > 0 ? n : 1), sizeof *all);
	assert_non_null(all);
	ibWorld_GetBodies(w, all, n);
	int found = -1;
	for (int i = 0; i < n && found < 0; ++i)
		if (IB_ID_EQUALS(all[i], body)) found = i;
	free(all);
	return found;
}

/* Every field of two joint definitions is bitwise equal (bodies compared by creation index; the
 * motor's parameters only when it is on: a disabled motor's parameters are not saved). */
static void compareJointDefs(const ibJointDef* a, const ibJointDef* b, const char* where)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(bodyIndex(a->bodyA), bodyIndex(b->bodyA));
	assert_int_equal(bodyIndex(a->bodyB), bodyIndex(b->bodyB));
	SAME(a->localAnchorA, b->localAnchorA, "%s local anchor A", where);
	SAME(a->localAnchorB, b->localAnchorB, "%s local anchor B", where);
	SAME(a->localAxisA, b->localAxisA, "%s local axis A", where);
	SAME(a->localAxisB, b->localAxisB, "%s local axis B", where);
	SAME(a->localRefA, b->localRefA, "%s local ref A", where);
	SAME(a->localRefB, b->localRefB, "%s local ref B", where);
	SAME(a->referenceRotation, b->referenceRotation, "%s reference rotation", where);
	SAME(a->referenceAngle, b->referenceAngle, "%s reference angle", where);
	SAME(a->distance, b->distance, "%s distance", where);
	SAME(a->stiffness, b->stiffness, "%s stiffness", where);
	SAME(a->damping, b->damping, "%s damping", where);
	assert_int_equal(a->linearDofs, b->linearDofs);
	assert_int_equal(a->angularDofs, b->angularDofs);
	assert_int_equal(a->collideConnected, b->collideConnected);
	assert_string_equal(a->name != NULL ? a->name : "", b->name != NULL ? b->name : "");
	assert_int_equal(a->enableLimit, b->enableLimit);
	SAME(a->limitRestitution, b->limitRestitution, "%s limit restitution", where);
	if (a->enableLimit) {
		SAME(a->lowerLimit, b->lowerLimit, "%s lower limit", where);
		SAME(a->upperLimit, b->upperLimit, "%s upper limit", where);
	}
	assert_int_equal(a->enableConeLimit, b->enableConeLimit);
	assert_int_equal(a->enableTwistLimit, b->enableTwistLimit);
	if (a->enableConeLimit) {
		SAME(a->coneAngle, b->coneAngle, "%s cone angle", where);
		SAME(a->coneAngle2, b->coneAngle2, "%s cone angle 2", where);
	}
	if (a->enableTwistLimit) {
		SAME(a->lowerTwist, b->lowerTwist, "%s lower twist", where);
		SAME(a->upperTwist, b->upperTwist, "%s upper twist", where);
	}
	const ibMotorDef *ma = &a->motor, *mb = &b->motor;
	assert_int_equal(ma->mode, mb->mode);
	if (ma->mode == IB_MOTOR_OFF) return;
	SAME(ma->target, mb->target, "%s motor target", where);
	SAME(ma->gain, mb->gain, "%s motor gain", where);
	SAME(ma->resetTime, mb->resetTime, "%s motor reset time", where);
	SAME(ma->derivativeTime, mb->derivativeTime, "%s motor derivative time", where);
	assert_int_equal(ma->integralWindow, mb->integralWindow);
	SAME(ma->maxForce, mb->maxForce, "%s motor max force", where);
	assert_int_equal(ma->scheduleCount, mb->scheduleCount);
	if (ma->scheduleCount > 0) {
		sameBits(ma->scheduleTimes, mb->scheduleTimes, (size_t)ma->scheduleCount * sizeof(double), "%s schedule times",
		         where);
		sameBits(ma->scheduleValues, mb->scheduleValues, (size_t)ma->scheduleCount * sizeof(double),
		         "%s schedule values", where);
	}
}

static void compareJoints(ibWorldId a, ibWorldId b)
{
	int n = ibWorld_GetJointCount(a);
	assert_int_equal(n, ibWorld_GetJointCount(b));
	ibJointId* ja = calloc((size_t)(n > 0 ? n : 1), sizeof *ja);
	ibJointId* jb = calloc((size_t)(n > 0 ? n : 1), sizeof *jb);
	assert_non_null(ja);
	assert_non_null(jb);
	ibWorld_GetJoints(a, ja, n);
	ibWorld_GetJoints(b, jb, n);
	for (int i = 0; i < n; ++i) {
		ibJointDef da, db;
		assert_int_equal(ibJoint_GetDef(ja[i], &da), IB_OK);
		assert_int_equal(ibJoint_GetDef(jb[i], &db), IB_OK);
		char where[128];
		snprintf(where, sizeof where, "joint %d '%s'", i, ibJoint_GetName(ja[i]));
		compareJointDefs(&da, &db, where);
	}
	free(ja);
	free(jb);
}

/* Every getter value of the two worlds is bitwise equal. */
static void compareWorlds(ibWorldId a, ibWorldId b)
{
	SAME(ibWorld_GetGravity(a), ibWorld_GetGravity(b), "gravity");
	ibSolverSettings sa = ibWorld_GetSolverSettings(a), sb = ibWorld_GetSolverSettings(b);
	assert_int_equal(sa.integrator, sb.integrator);
	SAME(sa.integratorTolerance, sb.integratorTolerance, "integrator tolerance");
	assert_int_equal(sa.integratorMaxSubsteps, sb.integratorMaxSubsteps);
	SAME(sa.positionTolerance, sb.positionTolerance, "position tolerance");
	SAME(sa.angularTolerance, sb.angularTolerance, "angular tolerance");
	SAME(sa.velocityTolerance, sb.velocityTolerance, "velocity tolerance");
	assert_int_equal(sa.maxPositionIterations, sb.maxPositionIterations);
	assert_int_equal(sa.maxVelocityIterations, sb.maxVelocityIterations);
	SAME(sa.maxCorrectionImpulse, sb.maxCorrectionImpulse, "max correction impulse");
	assert_int_equal(sa.method, sb.method);
	assert_int_equal(sa.warmStart, sb.warmStart);
	int n = ibWorld_GetBodyCount(a);
	assert_int_equal(n, ibWorld_GetBodyCount(b));
	ibBodyId* ba = calloc((size_t)(n > 0 ? n : 1), sizeof *ba);
	ibBodyId* bb = calloc((size_t)(n > 0 ? n : 1), sizeof *bb);
	assert_non_null(ba);
	assert_non_null(bb);
	ibWorld_GetBodies(a, ba, n);
	ibWorld_GetBodies(b, bb, n);
	for (int i = 0; i < n; ++i) compareBodies(ba[i], bb[i], i);
	free(ba);
	free(bb);
	compareJoints(a, b);
}

static char* saveOk(ibWorldId w, const ibSceneSettings* s)
{
	char err[ERR_SIZE] = "x";
	char* xml = NULL;
	ibResult r = ibSaveSceneToMemory(w, s, &xml, err, sizeof err);
	if (r != IB_OK) fail_msg("save failed (%d): %s", r, err);
	assert_non_null(xml);
	assert_string_equal(err, "");
	return xml;
}

static ibWorldId loadOk(const char* xml, const char* name, ibSceneSettings* s)
{
	char err[ERR_SIZE] = "x";
	ibWorldId w = IB_NULL_WORLD;
	ibResult r = ibLoadSceneFromMemory(xml, strlen(xml), name, NULL, &w, s, err, sizeof err);
	if (r != IB_OK) fail_msg("load of %s failed (%d): %s", name, r, err);
	assert_true(ibWorld_IsValid(w));
	assert_string_equal(err, "");
	return w;
}

/* Save w, load the text, save again: identical text and identical getters. */
static void assertRoundTrip(ibWorldId w, const ibSceneSettings* s, const char* name)
{
	char* first = saveOk(w, s);
	ibSceneSettings s2;
	ibWorldId w2 = loadOk(first, name, &s2);
	compareWorlds(w, w2);
	if (s != NULL) {
		SAME(s->timeStep, s2.timeStep, "%s time step", name);
		SAME(s->duration, s2.duration, "%s duration", name);
	}
	char* second = saveOk(w2, s != NULL ? &s2 : NULL);
	if (strcmp(first, second) != 0) {
		size_t i = 0;
		while (first[i] == second[i]) ++i;
		size_t from = i > 60 ? i - 60 : 0;
		fail_msg("%s: the second save differs at byte %zu:\n  first:  ...%.120s\n  second: ...%.120s", name, i,
		         first + from, second + from);
	}
	free(first);
	free(second);
	ibDestroyWorld(w2);
}

/* ---------------------------------------------------------------- counting allocator */

typedef struct Counter {
	long live;
	long total;
} Counter;

static void* countAlloc(size_t size, void* ctx)
{
	Counter* c = ctx;
	c->live++;
	c->total++;
	return malloc(size);
}

static void* countRealloc(void* p, size_t oldSize, size_t newSize, void* ctx)
{
	(void)oldSize;
	Counter* c = ctx;
	if (p == NULL) c->live++, c->total++;
	return realloc(p, newSize);
}

static void countFree(void* p, size_t size, void* ctx)
{
	(void)size;
	Counter* c = ctx;
	if (p != NULL) c->live--;
	free(p);
}

static void countLog(ibLogLevel level, const char* message, void* ctx)
{
	(void)level;
	(void)message;
	++*(int*)ctx;
}

/* ---------------------------------------------------------------- example scenes */

static void test_example_scenes_load(void** state)
{
	(void)state;
	char* files[MAX_FILES];
	int n = listXml(SCENES_DIR, files, MAX_FILES);
	assert_true(n >= 3);
	for (int i = 0; i < n; ++i) {
		char err[ERR_SIZE] = "x";
		ibWorldId w = IB_NULL_WORLD;
		ibSceneSettings s = {0, 0};
		ibResult r = ibLoadScene(files[i], NULL, &w, &s, err, sizeof err);
		if (r != IB_OK) fail_msg("%s: %s", files[i], err);
		assert_string_equal(err, "");
		assert_true(ibWorld_IsValid(w));
		assert_true(ibWorld_GetBodyCount(w) > 0);
		assert_true(s.timeStep > 0.0 && s.duration > 0.0);
		ibDestroyWorld(w);
	}
	freeList(files, n);
}

static void test_example_scenes_round_trip(void** state)
{
	(void)state;
	char* files[MAX_FILES];
	int n = listXml(SCENES_DIR, files, MAX_FILES);
	for (int i = 0; i < n; ++i) {
		char err[ERR_SIZE];
		ibWorldId w = IB_NULL_WORLD;
		ibSceneSettings s;
		ibResult r = ibLoadScene(files[i], NULL, &w, &s, err, sizeof err);
		if (r != IB_OK) fail_msg("%s: %s", files[i], err);
		/* load -> save -> load -> save */
		assertRoundTrip(w, &s, files[i]);
		ibDestroyWorld(w);
	}
	freeList(files, n);
}

/* ---------------------------------------------------------------- a world built in code */

static const ibVec3 octahedron[6] = {{0.2, 0, 0}, {-0.2, 0, 0}, {0, 0.3, 0}, {0, -0.3, 0}, {0, 0, 0.4}, {0, 0, -0.4}};
static const int octahedronTriangles[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};

static ibShapeDef shapeDef(ibVec3 p, ibQuat q, double density, double mass, double e, double mus, double mud)
{
	ibShapeDef d = ibDefaultShapeDef();
	d.localPosition = p;
	d.localRotation = q;
	d.density = density;
	d.mass = mass;
	d.material = (ibMaterial){e, mus, mud};
	return d;
}

static ibWorldId buildWorld(void)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0.1, -0.2, -9.80665);
	wd.solver.integrator = IB_INTEGRATOR_CASH_KARP;
	wd.solver.integratorTolerance = 3.3e-10;
	wd.solver.integratorMaxSubsteps = 77;
	wd.solver.positionTolerance = 1.0 / 3.0 * 1e-5;
	wd.solver.angularTolerance = 2.5e-7;
	wd.solver.velocityTolerance = 7e-6;
	wd.solver.maxPositionIterations = 123;
	wd.solver.maxVelocityIterations = 45;
	wd.solver.maxCorrectionImpulse = 0.75;
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));

	/* one dynamic body with every shape type, local poses, explicit mass and materials */
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.name = "compound & <friends> \"quoted\"\ttab\nnewline";
	bd.position = ibV3(1.0 / 3.0, -2.0 / 7.0, 0.1);
	bd.rotation = ibQuatFromAxisAngle(ibNormalize(ibV3(1, 2, 3)), 0.7);
	bd.linearVelocity = ibV3(0.1, 0.2, -0.3);
	bd.angularVelocity = ibV3(1.0 / 9.0, -3.5, 2.25);
	bd.linearDamping = 0.01;
	bd.angularDamping = 0.02;
	bd.gravityScale = 0.5;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_false(IB_IS_NULL(b));
	ibQuat q1 = ibQuatFromAxisAngle(ibNormalize(ibV3(-1, 0.5, 0.25)), 1.1);
	ibQuat q2 = ibQuatFromAxisAngle(ibV3(0, 1, 0), 1.5707963267948966);
	ibShapeDef d1 = shapeDef(ibV3(0.3, 0, 0), q1, 7800, 0, 0.3, 0.5, 0.4);
	ibShapeDef d2 = shapeDef(ibV3(0, 0.4, 0.1), q2, 600, 0, 0.6, 0.7, 0.65);
	ibShapeDef d3 = shapeDef(ibV3(-0.2, 0, 0.3), IB_QUAT_IDENTITY, 1000, 2.5, 1.0, 0.0, 0.0);
	ibShapeDef d4 = shapeDef(ibV3(0, -0.5, 0), q1, 1100, 0, 0.8, 0.9, 0.8);
	ibShapeDef d5 = shapeDef(ibV3(0.1, 0.1, -0.6), q2, 2700, 0, 0.1, 0.2, 0.1);
	assert_false(IB_IS_NULL(ibCreateSphereShape(b, &d1, &(ibSphere){0.15})));
	assert_false(IB_IS_NULL(ibCreateBoxShape(b, &d2, &(ibBox){{0.1, 0.2, 1.0 / 30.0}})));
	assert_false(IB_IS_NULL(ibCreateCapsuleShape(b, &d3, &(ibCapsule){0.05, 0.2})));
	assert_false(IB_IS_NULL(ibCreateCylinderShape(b, &d4, &(ibCylinder){0.07, 0.11})));
	ibMesh mesh = {octahedron, 6, octahedronTriangles, 8};
	assert_false(IB_IS_NULL(ibCreateMeshShape(b, &d5, &mesh)));

	/* an unnamed dynamic body with a mass override */
	ibBodyDef bo = ibDefaultBodyDef();
	bo.type = IB_BODY_DYNAMIC;
	bo.position = ibV3(0, 0, 2);
	bo.angularVelocity = ibV3(0, 0, 1e-3);
	ibBodyId o = ibCreateBody(w, &bo);
	ibShapeDef plain = ibDefaultShapeDef();
	assert_false(IB_IS_NULL(ibCreateBoxShape(o, &plain, &(ibBox){{0.5, 0.25, 0.125}})));
	ibMassData md = {3.0, ibV3(0.01, -0.02, 0.03), {{{0.4, 0.01, -0.02}, {0.01, 0.5, 0.03}, {-0.02, 0.03, 0.6}}}};
	assert_int_equal(ibBody_SetMassData(o, &md), IB_OK);

	/* a kinematic body with UTF-8 in its name, a static floor, an unnamed body without shapes */
	ibBodyDef bk = ibDefaultBodyDef();
	bk.type = IB_BODY_KINEMATIC;
	bk.name = "K\xc3\xb6rper \xe2\x86\x92 \xf0\x9f\x9a\x80";
	bk.position = ibV3(-1, -1, 0.5);
	bk.linearVelocity = ibV3(0.5, 0, 0);
	bk.angularVelocity = ibV3(0, 0, 0.25);
	ibBodyId k = ibCreateBody(w, &bk);
	assert_false(IB_IS_NULL(ibCreateCylinderShape(k, &plain, &(ibCylinder){0.2, 0.05})));
	ibBodyDef bs = ibDefaultBodyDef();
	bs.name = "floor";
	bs.position = ibV3(0, 0, -0.5);
	ibBodyId s = ibCreateBody(w, &bs);
	assert_false(IB_IS_NULL(ibCreateBoxShape(s, &plain, &(ibBox){{10, 10, 0.5}})));
	ibBodyDef be = ibDefaultBodyDef();
	be.type = IB_BODY_DYNAMIC;
	be.position = ibV3(5, 5, 5);
	be.linearVelocity = ibV3(-1, 0, 0);
	assert_false(IB_IS_NULL(ibCreateBody(w, &be)));
	return w;
}

static void test_code_world_round_trip(void** state)
{
	(void)state;
	ibWorldId w = buildWorld();
	ibSceneSettings s = {1.0 / 480.0, 12.5};
	assertRoundTrip(w, &s, "code world");
	/* without run settings: no <run>, the loader then gives the defaults */
	char* xml = saveOk(w, NULL);
	assert_null(strstr(xml, "<run"));
	ibSceneSettings loaded;
	ibWorldId w2 = loadOk(xml, "no run", &loaded);
	ibSceneSettings def = ibDefaultSceneSettings();
	SAME(loaded.timeStep, def.timeStep, "default time step");
	SAME(loaded.duration, def.duration, "default duration");
	/* unnamed bodies stay unnamed, creation order is kept */
	ibBodyId ids[5];
	assert_int_equal(ibWorld_GetBodies(w2, ids, 5), 5);
	assert_string_equal(ibBody_GetName(ids[1]), "");
	assert_string_equal(ibBody_GetName(ids[3]), "floor");
	assert_string_equal(ibBody_GetName(ids[4]), "");
	assert_true(ibBody_HasMassOverride(ids[1]));
	free(xml);
	ibDestroyWorld(w2);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- joints */

static ibBodyId addBox(ibWorldId w, const char* name, ibBodyType type, ibVec3 p, ibQuat q, ibVec3 v)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = type;
	bd.name = name;
	bd.position = p;
	bd.rotation = q;
	if (type != IB_BODY_STATIC) bd.linearVelocity = v;
	ibBodyId b = ibCreateBody(w, &bd);
	assert_false(IB_IS_NULL(b));
	ibShapeDef sd = ibDefaultShapeDef();
	assert_false(IB_IS_NULL(ibCreateBoxShape(b, &sd, &(ibBox){{0.2, 0.1, 0.05}})));
	return b;
}

static ibJointId addJoint(ibWorldId w, ibJointDef* d)
{
	ibWorld_ClearError(w);
	ibJointId j = ibCreateJoint(w, d);
	if (IB_IS_NULL(j)) fail_msg("ibCreateJoint: %s", ibWorld_GetLastError(w));
	return j;
}

/* A world with every joint type, bodies at generic poses (so the local axes are generic unit
 * vectors), a hinge position motor with a schedule, a slider velocity motor, a spring and a
 * velocity joint; iterative solver without warm start. */
static ibWorldId buildJointWorld(void)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.method = IB_SOLVER_ITERATIVE;
	wd.solver.warmStart = false;
	wd.solver.maxPositionIterations = 200;
	wd.solver.maxVelocityIterations = 200;
	wd.collision.enabled = false; /* joint round trip: the links' boxes overlap */
	ibWorldId w = ibCreateWorld(&wd);
	assert_true(ibWorld_IsValid(w));
	ibBodyId ground = addBox(w, "ground", IB_BODY_STATIC, ibV3(0, 0, 0), IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	enum { N = IB_JOINT_TYPE_COUNT + 1 };
	ibBodyId b[N];
	for (int i = 0; i < N; ++i) {
		char name[32];
		snprintf(name, sizeof name, "b%d", i);
		ibQuat q = ibQuatFromAxisAngle(ibNormalize(ibV3(1.0 + i, 2.0 - 0.3 * i, 0.7 * i - 3.0)), 0.1 + 0.37 * i);
		b[i] =
		    addBox(w, name, IB_BODY_DYNAMIC, ibV3(0.4 * (i + 1), 0.01 * i, -0.05 * i), q, ibV3(0.01 * i, -0.02, 0.03));
	}
	ibVec3 axis = ibNormalize(ibV3(0.3, -1.0, 0.2));
	ibVec3 other = ibNormalize(ibV3(1.0, 0.4, -0.1));
	static const double times[4] = {0.0, 0.1, 0.25, 0.4};
	static const double values[4] = {0.0, 0.5, -0.25, 1.0 / 3.0};
	for (int t = 0; t < N; ++t) {
		ibJointType type = t < IB_JOINT_TYPE_COUNT ? (ibJointType)t : IB_JOINT_BALL;
		ibJointDef d = ibDefaultJointDef(type);
		d.bodyA = t == 0 ? ground : b[t - 1];
		d.bodyB = b[t];
		ibVec3 anchor = ibV3(0.4 * t + 0.2, 0.005 * t, -0.05 * t);
		assert_int_equal(ibJointDef_SetWorldFrame(&d, anchor, axis), IB_OK);
		char name[32];
		snprintf(name, sizeof name, "j%d \"%d\"", t, t);
		d.name = t % 4 == 3 ? NULL : name;
		switch (type) {
		case IB_JOINT_BALL:
			if (t == N - 1) d.distance = 0.125; /* the distance variant */
			d.collideConnected = true;
			d.enableConeLimit = true; /* cone and twist limits (joint_limit_ball.c) */
			d.coneAngle = 0.6;
			if (t != N - 1) {
				d.coneAngle2 = 0.9; /* elliptic */
				d.enableTwistLimit = true;
				d.lowerTwist = -0.4;
				d.upperTwist = 0.55;
				d.limitRestitution = 0.2;
			}
			break;
		case IB_JOINT_DOUBLE_ROTATION:
			assert_int_equal(ibJointDef_SetWorldAxes(&d, axis, other), IB_OK); /* angle from the poses */
			break;
		case IB_JOINT_UNIVERSAL:
			assert_int_equal(ibJointDef_SetWorldAxes(&d, axis, ibNormalize(ibCross(axis, other))), IB_OK);
			d.referenceAngle = 1.25;
			break;
		case IB_JOINT_FIXED:
			d.referenceRotation = ibQ(2.0, 0.1, -0.2, 0.3); /* normalised by the API */
			break;
		case IB_JOINT_HINGE:
			d.motor.mode = IB_MOTOR_POSITION;
			d.motor.gain = 2.5;
			d.motor.resetTime = 0.3;
			d.motor.derivativeTime = 0.05;
			d.motor.integralWindow = 7;
			d.motor.maxForce = 4.0;
			d.motor.scheduleTimes = times;
			d.motor.scheduleValues = values;
			d.motor.scheduleCount = 4;
			d.enableLimit = true; /* joint limits (joint_limit.c) */
			d.lowerLimit = -0.7;
			d.upperLimit = 1.1;
			d.limitRestitution = 0.3;
			break;
		case IB_JOINT_SLIDER:
			d.enableLimit = true;
			d.lowerLimit = -0.25;
			d.upperLimit = 0.4;
			d.motor.mode = IB_MOTOR_VELOCITY;
			d.motor.target = -0.1;
			d.motor.gain = 3.0;
			d.motor.maxForce = 20.0;
			break;
		case IB_JOINT_SPRING:
			assert_int_equal(ibJointDef_SetWorldAnchors(&d, anchor, ibAdd(anchor, ibV3(0.1, 0.2, -0.3))), IB_OK);
			d.distance = 0.3;
			d.stiffness = 150.0;
			d.damping = 0.7;
			break;
		case IB_JOINT_VELOCITY:
			d.linearDofs = IB_DOF_X | IB_DOF_Z;
			d.angularDofs = IB_DOF_Y;
			break;
		default:
			break;
		}
		addJoint(w, &d);
	}
	return w;
}

static void sameBodyStates(ibWorldId a, ibWorldId b, int step)
{
	int n = ibWorld_GetBodyCount(a);
	ibBodyId* ba = calloc((size_t)n, sizeof *ba);
	ibBodyId* bb = calloc((size_t)n, sizeof *bb);
	assert_non_null(ba);
	assert_non_null(bb);
	ibWorld_GetBodies(a, ba, n);
	ibWorld_GetBodies(b, bb, n);
	for (int i = 0; i < n; ++i) {
		SAME(ibBody_GetPosition(ba[i]), ibBody_GetPosition(bb[i]), "step %d body %d position", step, i);
		SAME(ibBody_GetRotation(ba[i]), ibBody_GetRotation(bb[i]), "step %d body %d rotation", step, i);
		SAME(ibBody_GetLinearVelocity(ba[i]), ibBody_GetLinearVelocity(bb[i]), "step %d body %d velocity", step, i);
		SAME(ibBody_GetAngularVelocity(ba[i]), ibBody_GetAngularVelocity(bb[i]), "step %d body %d angular velocity",
		     step, i);
	}
	free(ba);
	free(bb);
}

/* Save, load, compare the definitions, then step both worlds: bitwise the same motion. */
static void test_joint_world_round_trip(void** state)
{
	(void)state;
	ibWorldId w = buildJointWorld();
	assert_int_equal(ibWorld_GetJointCount(w), IB_JOINT_TYPE_COUNT + 1);
	ibSceneSettings s = {0.01, 0.5};
	assertRoundTrip(w, &s, "joint world"); /* includes compareJoints and the text of a second save */
	char* xml = saveOk(w, &s);
	for (int t = 0; t < IB_JOINT_TYPE_COUNT; ++t) {
		char pattern[64];
		snprintf(pattern, sizeof pattern, "<joint type=\"%s\"",
		         (const char*[]){"ball", "line", "plane", "rotation_lock", "axis_align", "double_rotation", "hinge",
		                         "cylindrical", "slider", "universal", "fixed", "spring", "velocity"}[t]);
		if (strstr(xml, pattern) == NULL) fail_msg("no %s in the saved scene", pattern);
	}
	assert_non_null(strstr(xml, "solver=\"iterative\" warm_start=\"false\""));
	assert_non_null(strstr(xml, "linear_dofs=\"xz\" angular_dofs=\"y\""));
	assert_non_null(strstr(xml, "<point t=\"0.25\" value=\"-0.25\"/>"));
	assert_non_null(strstr(xml, "name=\"j0 &quot;0&quot;\""));
	ibWorldId w2 = loadOk(xml, "joint world", NULL);
	free(xml);
	compareWorlds(w, w2);
	for (int i = 1; i <= 50; ++i) {
		ibResult r1 = ibWorld_Step(w, 0.01), r2 = ibWorld_Step(w2, 0.01);
		assert_int_equal(r1, r2);
		assert_true(r1 == IB_OK || r1 == IB_ERR_NOT_CONVERGED);
		sameBodyStates(w, w2, i);
	}
	/* the motors really acted and act alike */
	ibJointId j[IB_JOINT_TYPE_COUNT + 1], k[IB_JOINT_TYPE_COUNT + 1];
	ibWorld_GetJoints(w, j, IB_JOINT_TYPE_COUNT + 1);
	ibWorld_GetJoints(w2, k, IB_JOINT_TYPE_COUNT + 1);
	assert_true(ibJoint_GetMotorOutput(j[IB_JOINT_HINGE]) != 0.0);
	SAME(ibJoint_GetMotorOutput(j[IB_JOINT_HINGE]), ibJoint_GetMotorOutput(k[IB_JOINT_HINGE]), "hinge motor output");
	SAME(ibJoint_GetMotorOutput(j[IB_JOINT_SLIDER]), ibJoint_GetMotorOutput(k[IB_JOINT_SLIDER]), "slider motor output");
	ibDestroyWorld(w2);
	ibDestroyWorld(w);
}

/* Generic local axes and reference rotations (random poses and axes) survive the round trip bit
 * for bit although ibCreateJoint normalises them again. */
static void test_joint_unit_vectors_exact(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	uint64_t x = 0x9e3779b97f4a7c15u;
	double r[8];
	ibBodyId prev = addBox(w, "anchor", IB_BODY_STATIC, IB_VEC3_ZERO, IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	for (int i = 0; i < 150; ++i) {
		for (int k = 0; k < 8; ++k) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			r[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
		}
		char name[32];
		snprintf(name, sizeof name, "r%d", i);
		ibQuat q = ibQuatNormalize(ibQ(r[0], r[1], r[2], r[3]));
		ibBodyId b = addBox(w, name, IB_BODY_DYNAMIC, ibV3(r[4], r[5], r[6]), q, IB_VEC3_ZERO);
		ibJointDef d = ibDefaultJointDef(i % 2 ? IB_JOINT_UNIVERSAL : IB_JOINT_SLIDER);
		d.bodyA = prev;
		d.bodyB = b;
		ibVec3 a1 = ibV3(r[7], r[4] - r[5], r[6] + 0.01);
		assert_int_equal(ibJointDef_SetWorldAxes(&d, a1, ibCross(a1, ibV3(r[1], r[2], r[3]))), IB_OK);
		addJoint(w, &d);
		prev = b;
	}
	/* the test means something: many stored unit vectors are not fixed points of ibNormalize */
	ibJointId joints[150];
	assert_int_equal(ibWorld_GetJoints(w, joints, 150), 150);
	int moved = 0;
	for (int i = 0; i < 150; ++i) {
		ibJointDef d;
		ibJoint_GetDef(joints[i], &d);
		ibVec3 v[4] = {d.localAxisA, d.localAxisB, d.localRefA, d.localRefB};
		for (int k = 0; k < 4; ++k) {
			ibVec3 n = ibNormalize(v[k]);
			moved += memcmp(&n, &v[k], sizeof n) != 0;
		}
		ibQuat q = ibQuatNormalize(d.referenceRotation);
		moved += memcmp(&q, &d.referenceRotation, sizeof q) != 0;
	}
	assert_true(moved > 50);
	assertRoundTrip(w, NULL, "random unit vectors");
	ibDestroyWorld(w);
}

/* World-form attributes are ibJointDef_SetWorldAnchors / SetWorldAxes at the poses in the file;
 * local_ref_* overrides the derived reference vectors; joints may come before their bodies. */
static void test_joint_world_form(void** state)
{
	(void)state;
	const char* xml =
	    "<ibdyn version=\"1\">\n"
	    "  <joint type=\"hinge\" name=\"h\" body_a=\"a\" body_b=\"b\" anchor=\"0.5 0.25 1\" axis=\"0 2 1\"/>\n"
	    "  <joint type=\"universal\" body_a=\"b\" body_b=\"c\" anchor_a=\"1 0 1\" anchor_b=\"1 0 1.5\"\n"
	    "         axis_a=\"1 0 0\" axis_b=\"0 1 0\" local_ref_b=\"0 0 3\"/>\n"
	    "  <body name=\"a\" position=\"0 0 1\"/>\n"
	    "  <body name=\"b\" type=\"dynamic\" position=\"0.5 0 0.5\" rotation_axis_angle=\"1 1 0 0.4\">\n"
	    "    <sphere radius=\"0.1\"/></body>\n"
	    "  <body name=\"c\" type=\"dynamic\" position=\"1 0 0\" rotation=\"0.5 0.5 0.5 0.5\">\n"
	    "    <sphere radius=\"0.1\"/></body>\n"
	    "</ibdyn>\n";
	ibWorldId w = loadOk(xml, "world form", NULL);
	ibBodyId a = ibWorld_FindBody(w, "a"), b = ibWorld_FindBody(w, "b"), c = ibWorld_FindBody(w, "c");
	ibJointId j[2];
	assert_int_equal(ibWorld_GetJoints(w, j, 2), 2);
	ibJointDef got, want = ibDefaultJointDef(IB_JOINT_HINGE);
	want.bodyA = a;
	want.bodyB = b;
	assert_int_equal(ibJointDef_SetWorldFrame(&want, ibV3(0.5, 0.25, 1), ibV3(0, 2, 1)), IB_OK);
	assert_int_equal(ibJoint_GetDef(j[0], &got), IB_OK);
	assert_string_equal(got.name, "h");
	SAME(got.localAnchorA, want.localAnchorA, "hinge anchor A");
	SAME(got.localAnchorB, want.localAnchorB, "hinge anchor B");
	SAME(got.localAxisA, ibNormalize(want.localAxisA), "hinge axis A");
	SAME(got.localAxisB, ibNormalize(want.localAxisB), "hinge axis B");
	SAME(got.localRefA, ibNormalize(want.localRefA), "hinge ref A");
	ibJointDef u = ibDefaultJointDef(IB_JOINT_UNIVERSAL);
	u.bodyA = b;
	u.bodyB = c;
	assert_int_equal(ibJointDef_SetWorldAnchors(&u, ibV3(1, 0, 1), ibV3(1, 0, 1.5)), IB_OK);
	assert_int_equal(ibJointDef_SetWorldAxes(&u, ibV3(1, 0, 0), ibV3(0, 1, 0)), IB_OK);
	assert_int_equal(ibJoint_GetDef(j[1], &got), IB_OK);
	assert_true(got.name == NULL || got.name[0] == '\0');
	SAME(got.localAnchorB, u.localAnchorB, "universal anchor B");
	SAME(got.localAxisB, ibNormalize(u.localAxisB), "universal axis B");
	SAME(got.localRefA, ibNormalize(u.localRefA), "universal ref A (derived)");
	SAME(got.localRefB, ibV3(0, 0, 1), "universal ref B (given)");
	assert_true(fabs(got.referenceAngle - IB_PI / 2) < 1e-12); /* from the poses */
	assertRoundTrip(w, NULL, "world form");
	ibDestroyWorld(w);
}

/* Unnamed bodies that joints use are written as "body<i>" (or "body<i>_<k>" if a body already has
 * that name); the world itself is not changed; unnamed bodies without joints stay unnamed. */
static void test_joint_auto_body_names(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyId b0 = addBox(w, NULL, IB_BODY_STATIC, IB_VEC3_ZERO, IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	ibBodyId b1 = addBox(w, NULL, IB_BODY_DYNAMIC, ibV3(0, 0, -1), IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	addBox(w, "body1", IB_BODY_DYNAMIC, ibV3(5, 0, 0), IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	addBox(w, NULL, IB_BODY_DYNAMIC, ibV3(7, 0, 0), IB_QUAT_IDENTITY, IB_VEC3_ZERO); /* no joint */
	ibJointDef d = ibDefaultJointDef(IB_JOINT_BALL);
	d.bodyA = b0;
	d.bodyB = b1;
	assert_int_equal(ibJointDef_SetWorldAnchors(&d, IB_VEC3_ZERO, IB_VEC3_ZERO), IB_OK);
	addJoint(w, &d);
	char* xml = saveOk(w, NULL);
	assert_non_null(strstr(xml, "<body name=\"body0\" type=\"static\""));
	assert_non_null(strstr(xml, "<body name=\"body1_1\" type=\"dynamic\""));
	assert_non_null(strstr(xml, "<body name=\"body1\" type=\"dynamic\""));
	assert_non_null(strstr(xml, "body_a=\"body0\" body_b=\"body1_1\""));
	assert_string_equal(ibBody_GetName(b0), ""); /* the world is unchanged */
	assert_string_equal(ibBody_GetName(b1), "");
	ibWorldId w2 = loadOk(xml, "auto names", NULL);
	ibBodyId ids[4];
	assert_int_equal(ibWorld_GetBodies(w2, ids, 4), 4);
	assert_string_equal(ibBody_GetName(ids[0]), "body0");
	assert_string_equal(ibBody_GetName(ids[1]), "body1_1");
	assert_string_equal(ibBody_GetName(ids[3]), "");
	compareJoints(w, w2);
	char* again = saveOk(w2, NULL);
	assert_string_equal(xml, again); /* the names are stable from then on */
	free(again);
	free(xml);
	ibDestroyWorld(w2);
	ibDestroyWorld(w);
}

/* A motor with an unlimited (infinite) force cannot be written: numbers in files are finite. */
static void test_joint_save_rejects_infinite_motor(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyId a = addBox(w, "a", IB_BODY_STATIC, IB_VEC3_ZERO, IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	ibBodyId b = addBox(w, "b", IB_BODY_DYNAMIC, ibV3(1, 0, 0), IB_QUAT_IDENTITY, IB_VEC3_ZERO);
	ibJointDef d = ibDefaultJointDef(IB_JOINT_HINGE);
	d.bodyA = a;
	d.bodyB = b;
	d.name = "servo";
	d.motor.mode = IB_MOTOR_VELOCITY;
	d.motor.gain = 1.0;
	d.motor.maxForce = INFINITY;
	addJoint(w, &d);
	char err[ERR_SIZE];
	char* xml = NULL;
	assert_int_equal(ibSaveSceneToMemory(w, NULL, &xml, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	assert_null(xml);
	assert_non_null(strstr(err, "joint 0 'servo' has a non-finite value in 'max_force'"));
	ibDestroyWorld(w);
}

/* The example joint scenes behave: the pendulum swings with the right period, the servo arm follows
 * its schedule, the spring oscillates about its equilibrium. */
static void test_joint_example_scenes(void** state)
{
	(void)state;
	char err[ERR_SIZE];
	ibWorldId w;
	ibSceneSettings s;
	assert_int_equal(ibLoadScene(SCENES_DIR "/pendulum.xml", NULL, &w, &s, err, sizeof err), IB_OK);
	ibBodyId rod = ibWorld_FindBody(w, "rod");
	double lastX = ibBody_GetWorldCenterOfMass(rod).x, firstCrossing = -1.0, secondCrossing = -1.0;
	for (int i = 0; i < 300; ++i) {
		assert_int_equal(ibWorld_Step(w, s.timeStep), IB_OK);
		double xNow = ibBody_GetWorldCenterOfMass(rod).x;
		if (lastX < 0.0 && xNow >= 0.0 && firstCrossing < 0.0)
			firstCrossing = ibWorld_GetTime(w);
		else if (lastX < 0.0 && xNow >= 0.0 && firstCrossing > 0.0 && secondCrossing < 0.0)
			secondCrossing = ibWorld_GetTime(w);
		lastX = xNow;
		assert_true(ibWorld_GetStepStats(w).maxPositionError <= 1e-6);
	}
	assert_true(secondCrossing > 0.0);
	assert_true(fabs(secondCrossing - firstCrossing - 1.753) < 0.03); /* one period at 60 degrees */
	ibDestroyWorld(w);

	assert_int_equal(ibLoadScene(SCENES_DIR "/servo_arm.xml", NULL, &w, &s, err, sizeof err), IB_OK);
	ibJointId servo;
	assert_int_equal(ibWorld_GetJoints(w, &servo, 1), 1);
	for (int i = 0; i < 280; ++i) ibWorld_Step(w, s.timeStep);
	assert_true(fabs(ibJoint_GetMotorValue(servo) - IB_PI / 2) < 0.1); /* holding 90 degrees at t = 2.8 s */
	for (int i = 0; i < 320; ++i) ibWorld_Step(w, s.timeStep);
	assert_true(fabs(ibJoint_GetMotorValue(servo) + IB_PI / 2) < 0.1); /* -90 degrees at t = 6 s */
	ibDestroyWorld(w);

	assert_int_equal(ibLoadScene(SCENES_DIR "/spring_mass.xml", NULL, &w, &s, err, sizeof err), IB_OK);
	ibBodyId ball = ibWorld_FindBody(w, "ball");
	double zmin = 10.0, zmax = -10.0;
	for (int i = 0; i < 628; ++i) { /* one period */
		ibWorld_Step(w, s.timeStep);
		double z = ibBody_GetWorldCenterOfMass(ball).z;
		zmin = fmin(zmin, z);
		zmax = fmax(zmax, z);
	}
	double equilibrium = 2.0 - 0.5 - 9.81 / 100.0;
	assert_true(fabs(0.5 * (zmin + zmax) - equilibrium) < 0.01);
	assert_true(fabs(0.5 * (zmax - zmin) - 0.3) < 0.02);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- planes, hulls, triangle meshes, OBJ */

#define DATA_DIR IBDYN_SOURCE_DIR "/tests/data"

static ibBodyId bodyNamed(ibWorldId w, const char* name)
{
	ibBodyId b = ibWorld_FindBody(w, name);
	assert_false(IB_IS_NULL(b));
	return b;
}

static ibShapeId firstShape(ibBodyId b)
{
	ibShapeId s;
	assert_true(ibBody_GetShapes(b, &s, 1) >= 1);
	return s;
}

static void test_shape_scene(void** state)
{
	(void)state;
	char err[ERR_SIZE] = "x";
	ibWorldId w = IB_NULL_WORLD;
	ibSceneSettings st;
	if (ibLoadScene(DATA_DIR "/shapes.xml", NULL, &w, &st, err, sizeof err) != IB_OK) fail_msg("%s", err);
	ibBodyId ground = bodyNamed(w, "ground");
	ibShapeId gs[3];
	assert_int_equal(ibBody_GetShapes(ground, gs, 3), 3);
	assert_int_equal(ibShape_GetType(gs[0]), IB_SHAPE_PLANE);
	assert_int_equal(ibShape_GetType(gs[1]), IB_SHAPE_TRIMESH);
	assert_int_equal(ibShape_GetType(gs[2]), IB_SHAPE_TRIMESH);
	ibMesh ramp = ibShape_GetMesh(gs[1]);
	assert_int_equal(ramp.vertexCount, 6);
	assert_int_equal(ramp.triangleCount, 4); /* two quads, fan-triangulated */
	int rampIdx[12] = {0, 1, 2, 0, 2, 3, 3, 2, 4, 3, 4, 5};
	assert_memory_equal(ramp.indices, rampIdx, sizeof rampIdx);
	/* the OBJ cube as a closed mesh: 12 triangles, exact box mass */
	ibShapeId cube = firstShape(bodyNamed(w, "cube_from_obj"));
	assert_int_equal(ibShape_GetType(cube), IB_SHAPE_MESH);
	assert_int_equal(ibShape_GetMesh(cube).triangleCount, 12);
	ibMassData md = ibShape_GetMassData(cube), ref;
	ibBox half = {{0.5, 0.5, 0.5}};
	assert_int_equal(ibComputeBoxMass(&half, 500.0, &ref), IB_OK);
	assert_true(fabs(md.mass - ref.mass) < 1e-12 * ref.mass);
	assert_true(fabs(md.inertia.m[0][0] - ref.inertia.m[0][0]) < 1e-12 * ref.inertia.m[0][0]);
	/* hulls: inline (the interior point dropped), from a point cloud, from the cube's vertices */
	ibHullData hi = ibShape_GetHull(firstShape(bodyNamed(w, "hull_inline")));
	assert_int_equal(hi.vertexCount, 5);
	ibShapeId hps = firstShape(bodyNamed(w, "hull_from_obj"));
	ibHullData hp = ibShape_GetHull(hps);
	assert_int_equal(hp.vertexCount, 8);
	assert_int_equal(hp.faceCount, 6);
	assert_true(fabs(ibShape_GetMassData(hps).mass - 2000.0 * 2.0) < 1e-9);
	ibHullData hc = ibShape_GetHull(firstShape(bodyNamed(w, "hull_from_cube")));
	assert_int_equal(hc.vertexCount, 8);
	assert_int_equal(hc.faceCount, 6);
	ibPlane pusher = ibShape_GetPlane(firstShape(bodyNamed(w, "pusher")));
	assert_true(pusher.normal.y == 1.0 && pusher.offset == -5.0);
	assertRoundTrip(w, &st, "shapes.xml");
	ibDestroyWorld(w);

	/* a missing OBJ file is an I/O error at the element's line */
	const char* missing = "<ibdyn version=\"1\">\n<body type=\"static\">\n<trimesh file=\"/nonexistent/x.obj\"/>\n</body>\n</ibdyn>";
	w = (ibWorldId){7, 7};
	assert_int_equal(ibLoadSceneFromMemory(missing, strlen(missing), "m.xml", NULL, &w, NULL, err, sizeof err), IB_ERR_IO);
	assert_true(IB_IS_NULL(w));
	assert_non_null(strstr(err, "m.xml:3: cannot read <trimesh> file '/nonexistent/x.obj': /nonexistent/x.obj: "));
	/* the OBJ reader's own message travels with the scene's */
	w = IB_NULL_WORLD;
	assert_int_equal(ibLoadScene(BAD_DIR "/trimesh_bad_obj.xml", NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_non_null(strstr(err, "/bad_face.obj:4: vertex index 4 is out of range: 3 vertices are defined so far"));
}

static void test_obj_reader(void** state)
{
	(void)state;
	char err[ERR_SIZE] = "x";
	ibMesh m;
	assert_int_equal(ibLoadObj(DATA_DIR "/obj/cube.obj", &m, err, sizeof err), IB_OK);
	assert_string_equal(err, "");
	assert_int_equal(m.vertexCount, 8);
	assert_int_equal(m.triangleCount, 12);
	/* f -5 -1 -2 -6 after 8 vertices: 4 8 7 3 (1-based), fanned */
	int expect[6] = {3, 7, 6, 3, 6, 2};
	assert_memory_equal(m.indices + 24, expect, sizeof expect);
	assert_true(m.vertices[7].x == -0.5 && m.vertices[7].y == 0.5 && m.vertices[7].z == 0.5);
	ibFreeObjMesh(&m);
	assert_null(m.vertices);

	const char* good = "v 1 2 3\r\nv 4 5 6 # comment\nv 7 8 9\n\n  f 1 2 3\nvn 0 0 1\nf 3/1/1 -2/2/1 1//1";
	assert_int_equal(ibLoadObjFromMemory(good, strlen(good), "good", &m, err, sizeof err), IB_OK);
	assert_int_equal(m.triangleCount, 2);
	assert_true(m.indices[3] == 2 && m.indices[4] == 1 && m.indices[5] == 0);
	assert_true(m.vertices[1].x == 4.0 && m.vertices[2].z == 9.0);
	ibFreeObjMesh(&m);

	struct {
		const char* text;
		const char* message;
	} bad[] = {
	    {"v 1 2 3\nv 1 2 x\n", "bad.obj:2: 'x' is not a number"},
	    {"v 1 2 3\nv 1 2\n", "bad.obj:2: a vertex needs 3 coordinates (optionally w, or r g b), got 2"},
	    {"v 1 2 3\nv 1 2 3 4 5 6 7\n", "bad.obj:2: a vertex needs 3 coordinates (optionally w, or r g b), got more than 6"},
	    {"v 1 2 nan\n", "bad.obj:1: 'nan' is not a finite number"},
	    {"v 1 2 1e999\n", "bad.obj:1: '1e999' is not a number"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", "bad.obj:4: a face needs at least 3 vertices, got 2"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "bad.obj:4: vertex index 0 is invalid (OBJ indices start at 1)"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 -4\n", "bad.obj:5: vertex index -4 is out of range: 3 vertices are defined so far"},
	    {"v 0 0 0\nv 1 0 0\nf 1 2 3\nv 0 1 0\n", "bad.obj:3: vertex index 3 is out of range: 2 vertices are defined so far"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n", "bad.obj:4: face vertex '1/1/1/1' has more than 3 fields"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/ 2 3\n", "bad.obj:4: face vertex '1/' has an empty texture index"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/a 2 3\n", "bad.obj:4: 'a' is not a valid texture index"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf /1 2 3\n", "bad.obj:4: face vertex '/1' has no vertex index"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3x\n", "bad.obj:4: '3x' is not a valid vertex index"},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n", "bad.obj:4: vertex index '99999999999999999999' is out of range"},
	    {"v 0 0 0\ncurv 0 1 2\n", "bad.obj:2: unknown statement 'curv'"},
	    {"# nothing\nvt 0 0\n", "bad.obj: no vertices (v statements) in the file"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		m = (ibMesh){(const ibVec3*)1, 1, (const int*)1, 1};
		ibResult r = ibLoadObjFromMemory(bad[i].text, strlen(bad[i].text), "bad.obj", &m, err, sizeof err);
		if (r != IB_ERR_PARSE || strcmp(err, bad[i].message) != 0)
			fail_msg("case %zu: got %d '%s', expected '%s'", i, r, err, bad[i].message);
		assert_null(m.vertices);
		assert_int_equal(m.triangleCount, 0);
	}
	const char* nul = "v 0 0 0\nv 1\0 0 0\n";
	assert_int_equal(ibLoadObjFromMemory(nul, 16, "nul.obj", &m, err, sizeof err), IB_ERR_PARSE);
	assert_string_equal(err, "nul.obj:2: NUL character in the file");
	assert_int_equal(ibLoadObj(DATA_DIR "/no_such.obj", &m, err, sizeof err), IB_ERR_IO);
	assert_non_null(strstr(err, "no_such.obj: cannot open the file"));
	assert_int_equal(ibLoadObj(NULL, &m, err, sizeof err), IB_ERR_IO);
	assert_int_equal(ibLoadObjFromMemory("v 0 0 0", 7, "x", NULL, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	ibFreeObjMesh(NULL);
}

/* ---------------------------------------------------------------- the bad corpus */

/* Parse `<!-- expect: line=N contains="..." -->` from the first line of text. */
static void parseExpectation(const char* text, const char* path, long* line, char* fragment, size_t size)
{
	const char* p = strstr(text, "<!-- expect: line=");
	const char* eol = strchr(text, '\n');
	if (p == NULL || p != text || eol == NULL) fail_msg("%s: the first line must be an expect comment", path);
	*line = strtol(p + strlen("<!-- expect: line="), NULL, 10);
	const char* c = strstr(p, "contains=\"");
	if (c == NULL || c > eol) fail_msg("%s: expect comment without contains=\"...\"", path);
	c += strlen("contains=\"");
	const char* end = strstr(c, "\" -->");
	if (end == NULL || end > eol || (size_t)(end - c) >= size) fail_msg("%s: malformed expect comment", path);
	memcpy(fragment, c, (size_t)(end - c));
	fragment[end - c] = '\0';
	assert_true(*line > 0);
}

static void test_bad_corpus(void** state)
{
	(void)state;
	char* files[MAX_FILES];
	int n = listXml(BAD_DIR, files, MAX_FILES);
	assert_true(n >= 17);
	Counter counter = {0, 0};
	int logs = 0;
	ibWorldDef base = ibDefaultWorldDef();
	base.allocFn = countAlloc;
	base.reallocFn = countRealloc;
	base.freeFn = countFree;
	base.allocContext = &counter;
	base.logFn = countLog;
	base.logContext = &logs;
	for (int i = 0; i < n; ++i) {
		char* text = readText(files[i]);
		long line = 0;
		char fragment[512];
		parseExpectation(text, files[i], &line, fragment, sizeof fragment);
		free(text);
		char err[ERR_SIZE] = "";
		ibWorldId w = {7, 7};
		ibSceneSettings s = {-1, -1};
		ibResult r = ibLoadScene(files[i], &base, &w, &s, err, sizeof err);
		char prefix[600];
		snprintf(prefix, sizeof prefix, "%s:%ld:", files[i], line);
		if (r != IB_ERR_PARSE || strncmp(err, prefix, strlen(prefix)) != 0 || strstr(err, fragment) == NULL)
			fail_msg("%s: got result %d and\n  \"%s\"\nexpected IB_ERR_PARSE and\n  \"%s ... %s ...\"", files[i], r,
			         err, prefix, fragment);
		assert_true(IB_IS_NULL(w));
		assert_false(ibWorld_IsValid(w));
		assert_true(s.timeStep == -1 && s.duration == -1); /* settings untouched on failure */
		/* all-or-nothing: a partially built world was destroyed, nothing of it is left */
		if (counter.live != 0)
			fail_msg("%s: %ld allocations of the partial world are still live", files[i], counter.live);
	}
	assert_true(counter.total > 0); /* the base allocator was used for the partial worlds */
	freeList(files, n);
}

/* ---------------------------------------------------------------- I/O and argument errors */

static void test_io_errors(void** state)
{
	(void)state;
	char err[ERR_SIZE] = "";
	ibWorldId w = {7, 7};
	assert_int_equal(ibLoadScene(NULL, NULL, &w, NULL, err, sizeof err), IB_ERR_IO);
	assert_true(IB_IS_NULL(w));
	assert_non_null(strstr(err, "path is NULL"));

	const char* missing = IBDYN_SOURCE_DIR "/tests/data/no_such_scene.xml";
	w = (ibWorldId){7, 7};
	assert_int_equal(ibLoadScene(missing, NULL, &w, NULL, err, sizeof err), IB_ERR_IO);
	assert_true(IB_IS_NULL(w));
	assert_int_equal(strncmp(err, missing, strlen(missing)), 0);
	assert_non_null(strstr(err, "cannot open"));

	assert_int_equal(ibLoadScene(BAD_DIR, NULL, &w, NULL, err, sizeof err), IB_ERR_IO); /* a directory */
	assert_non_null(strstr(err, "cannot read"));

	/* no error buffer at all, or a tiny one: no crash, message truncated */
	assert_int_equal(ibLoadScene(missing, NULL, &w, NULL, NULL, 0), IB_ERR_IO);
	char tiny[8];
	assert_int_equal(ibLoadScene(missing, NULL, &w, NULL, tiny, sizeof tiny), IB_ERR_IO);
	assert_int_equal(strlen(tiny), sizeof tiny - 1);

	assert_int_equal(ibLoadScene(missing, NULL, NULL, NULL, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	assert_int_equal(ibLoadSceneFromMemory(NULL, 0, "x", NULL, &w, NULL, err, sizeof err), IB_ERR_INVALID_ARGUMENT);

	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId world = ibCreateWorld(&wd);
	assert_int_equal(ibSaveScene(world, NULL, NULL, err, sizeof err), IB_ERR_IO);
	assert_true(strlen(err) > 0);
	const char* unwritable = IBDYN_SOURCE_DIR "/tests/data/no_such_dir/out.xml";
	assert_int_equal(ibSaveScene(world, NULL, unwritable, err, sizeof err), IB_ERR_IO);
	assert_int_equal(strncmp(err, unwritable, strlen(unwritable)), 0);
	assert_int_equal(ibSaveSceneToMemory(world, NULL, NULL, err, sizeof err), IB_ERR_INVALID_ARGUMENT);

	/* a file save and load */
	char path[] = "/tmp/ibdyn_test_scene_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	ibSceneSettings s = {0.002, 3};
	assert_int_equal(ibSaveScene(world, &s, path, err, sizeof err), IB_OK);
	assert_string_equal(err, "");
	ibSceneSettings back;
	assert_int_equal(ibLoadScene(path, NULL, &w, &back, err, sizeof err), IB_OK);
	assert_true(back.timeStep == 0.002 && back.duration == 3);
	compareWorlds(world, w);
	ibDestroyWorld(w);
	remove(path);
	close(fd);

	/* saving a stale world */
	ibDestroyWorld(world);
	char* xml = (char*)1;
	assert_int_equal(ibSaveSceneToMemory(world, NULL, &xml, err, sizeof err), IB_ERR_STALE_HANDLE);
	assert_null(xml);
	assert_true(strlen(err) > 0);
}

static void test_save_rejects_unloadable_worlds(void** state)
{
	(void)state;
	char err[ERR_SIZE];
	char* xml = NULL;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.name = "twin";
	ibCreateBody(w, &bd);
	ibCreateBody(w, &bd);
	assert_int_equal(ibSaveSceneToMemory(w, NULL, &xml, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	assert_null(xml);
	assert_non_null(strstr(err, "body 1 'twin' has the same name"));
	ibDestroyWorld(w);

	w = ibCreateWorld(&wd);
	bd.name = "bell\a";
	ibCreateBody(w, &bd);
	assert_int_equal(ibSaveSceneToMemory(w, NULL, &xml, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err, "not valid UTF-8 XML text"));
	ibDestroyWorld(w);

	w = ibCreateWorld(&wd);
	ibSceneSettings bad = {0.0, 1.0};
	assert_int_equal(ibSaveSceneToMemory(w, &bad, &xml, err, sizeof err), IB_ERR_INVALID_ARGUMENT);
	assert_null(xml);
	ibDestroyWorld(w);
}

/* ---------------------------------------------------------------- semantics */

/* the sleep settings of <world> and the sleep/awake attributes of <body>: read, written where not
 * default, read back equal, and the second save is identical to the first */
static void test_sleep_round_trip(void** state)
{
	(void)state;
	const char* xml = "<ibdyn version=\"1\"><world sleeping=\"true\" sleep_linear_threshold=\"0.02\" "
	                  "sleep_angular_threshold=\"0.03\" sleep_time=\"0.25\"/>"
	                  "<body name=\"a\" type=\"dynamic\" position=\"0 0 2\" awake=\"false\"><box half_extents=\"0.5 0.5 0.5\"/></body>"
	                  "<body name=\"b\" type=\"dynamic\" position=\"3 0 2\" sleep=\"false\"><sphere radius=\"0.5\"/></body>"
	                  "</ibdyn>";
	ibWorldId w = loadOk(xml, "sleep settings", NULL);
	ibSleepSettings z = ibWorld_GetSolverSettings(w).sleep;
	assert_true(z.enabled);
	SAME(z.linearThreshold, 0.02, "sleep linear threshold");
	SAME(z.angularThreshold, 0.03, "sleep angular threshold");
	SAME(z.timeToSleep, 0.25, "sleep time");
	ibBodyId a = ibWorld_FindBody(w, "a"), b = ibWorld_FindBody(w, "b");
	assert_false(ibBody_IsAwake(a));
	assert_true(ibBody_IsSleepEnabled(a));
	assert_true(ibBody_IsAwake(b));
	assert_false(ibBody_IsSleepEnabled(b));
	char* out = saveOk(w, NULL);
	assert_non_null(strstr(out, "awake=\"false\""));
	assert_non_null(strstr(out, "sleep=\"false\""));
	assert_non_null(strstr(out, "sleep_time=\"0.25\""));
	ibWorldId w2 = loadOk(out, "sleep settings saved", NULL);
	ibSleepSettings z2 = ibWorld_GetSolverSettings(w2).sleep;
	assert_true(z.enabled == z2.enabled && z.linearThreshold == z2.linearThreshold &&
	            z.angularThreshold == z2.angularThreshold && z.timeToSleep == z2.timeToSleep);
	assert_false(ibBody_IsAwake(ibWorld_FindBody(w2, "a")));
	assert_false(ibBody_IsSleepEnabled(ibWorld_FindBody(w2, "b")));
	char* out2 = saveOk(w2, NULL);
	assert_string_equal(out, out2);
	free(out2);
	free(out);
	ibDestroyWorld(w2);
	ibDestroyWorld(w);
	/* defaults are not written */
	w = loadOk("<ibdyn version=\"1\"><body type=\"dynamic\"><sphere radius=\"1\"/></body></ibdyn>", "sleep defaults", NULL);
	out = saveOk(w, NULL);
	assert_null(strstr(out, "sleep"));
	assert_null(strstr(out, "awake"));
	free(out);
	ibDestroyWorld(w);
}

/* the contact settings (ibContactSettings) of <world>: read, written where not default, read back equal */
static void test_contact_settings_round_trip(void** state)
{
	(void)state;
	const char* xml = "<ibdyn version=\"1\"><world contacts=\"false\" restitution_law=\"poisson\" "
	                  "restitution_mixing=\"max\" friction_mixing=\"mean\" resting_speed=\"0.02\" "
	                  "collision_tolerance=\"1e-5\" contact_position_tolerance=\"2e-6\" "
	                  "max_collision_iterations=\"77\" max_contact_iterations=\"88\" joint_velocity_sweeps=\"false\" "
	                  "contact_graph=\"false\" shock_iterations=\"20\" contact_warm_start=\"false\" stall_sweeps=\"7\" "
	                  "contact_joint_response=\"false\"/></ibdyn>";
	ibWorldId w = loadOk(xml, "contact settings", NULL);
	ibContactSettings c = ibWorld_GetSolverSettings(w).contact;
	assert_false(c.enabled);
	assert_int_equal(c.restitutionLaw, IB_RESTITUTION_POISSON);
	assert_int_equal(c.restitutionMixing, IB_MIX_MAX);
	assert_int_equal(c.frictionMixing, IB_MIX_MEAN);
	SAME(c.restingSpeed, 0.02, "resting speed");
	SAME(c.collisionTolerance, 1e-5, "collision tolerance");
	SAME(c.contactPositionTolerance, 2e-6, "contact position tolerance");
	assert_int_equal(c.maxCollisionIterations, 77);
	assert_int_equal(c.maxContactIterations, 88);
	assert_false(c.jointVelocitySweeps);
	assert_false(c.contactGraph);
	assert_int_equal(c.shockIterations, 20);
	assert_int_equal(c.stallSweeps, 7);
	assert_false(c.warmStart);
	assert_false(c.jointResponse);
	char* out = saveOk(w, NULL);
	assert_non_null(strstr(out, "shock_iterations=\"20\""));
	assert_non_null(strstr(out, "stall_sweeps=\"7\""));
	assert_non_null(strstr(out, "contact_warm_start=\"false\""));
	assert_non_null(strstr(out, "contact_joint_response=\"false\""));
	ibWorldId w2 = loadOk(out, "contact settings saved", NULL);
	ibContactSettings c2 = ibWorld_GetSolverSettings(w2).contact;
	/* field by field: the struct has padding bytes, which differ between copies */
	assert_true(c.enabled == c2.enabled && c.restitutionLaw == c2.restitutionLaw &&
	            c.restitutionMixing == c2.restitutionMixing && c.frictionMixing == c2.frictionMixing);
	assert_true(c.restingSpeed == c2.restingSpeed && c.collisionTolerance == c2.collisionTolerance &&
	            c.contactPositionTolerance == c2.contactPositionTolerance);
	assert_true(c.maxCollisionIterations == c2.maxCollisionIterations &&
	            c.maxContactIterations == c2.maxContactIterations && c.jointVelocitySweeps == c2.jointVelocitySweeps &&
	            c.contactGraph == c2.contactGraph && c.shockIterations == c2.shockIterations &&
	            c.warmStart == c2.warmStart && c.stallSweeps == c2.stallSweeps && c.jointResponse == c2.jointResponse);
	free(out);
	ibDestroyWorld(w2);
	ibDestroyWorld(w);
	/* defaults are not written */
	w = loadOk("<ibdyn version=\"1\"/>", "defaults", NULL);
	out = saveOk(w, NULL);
	assert_null(strstr(out, "shock_iterations"));
	assert_null(strstr(out, "stall_sweeps"));
	assert_null(strstr(out, "contact_warm_start"));
	assert_null(strstr(out, "contact_joint_response"));
	assert_null(strstr(out, "restitution_law"));
	free(out);
	ibDestroyWorld(w);
	/* a bad enum value is an error */
	ibWorldId bad = {0};
	char err[256];
	const char* badXml = "<ibdyn version=\"1\"><world friction_mixing=\"median\"/></ibdyn>";
	assert_int_not_equal(ibLoadSceneFromMemory(badXml, strlen(badXml), "bad", NULL, &bad, NULL, err, sizeof err), IB_OK);
}

static void test_defaults(void** state)
{
	(void)state;
	ibSceneSettings s;
	const char* minimal = "<ibdyn version=\"1\"/>";
	ibWorldId w = loadOk(minimal, "minimal", &s);
	ibWorldDef def = ibDefaultWorldDef();
	SAME(ibWorld_GetGravity(w), def.gravity, "default gravity");
	ibSolverSettings got = ibWorld_GetSolverSettings(w);
	assert_int_equal(got.integrator, def.solver.integrator);
	SAME(got.positionTolerance, def.solver.positionTolerance, "default position tolerance");
	assert_int_equal(got.maxPositionIterations, def.solver.maxPositionIterations);
	assert_int_equal(ibWorld_GetBodyCount(w), 0);
	SAME(s.timeStep, ibDefaultSceneSettings().timeStep, "default time step");
	ibDestroyWorld(w);

	/* a body without attributes is the default body; a shape without attributes the default shape */
	w = loadOk("<ibdyn version='1'><!-- c --><?pi x?><body><sphere radius='2'/></body></ibdyn>", "body", NULL);
	ibBodyId b;
	assert_int_equal(ibWorld_GetBodies(w, &b, 1), 1);
	ibBodyDef bd = ibDefaultBodyDef();
	ibShapeDef sd = ibDefaultShapeDef();
	assert_int_equal(ibBody_GetType(b), bd.type);
	assert_string_equal(ibBody_GetName(b), "");
	SAME(ibBody_GetGravityScale(b), bd.gravityScale, "default gravity scale");
	ibShapeId sh;
	assert_int_equal(ibBody_GetShapes(b, &sh, 1), 1);
	SAME(ibShape_GetDensity(sh), sd.density, "default density");
	SAME(ibShape_GetMaterial(sh), sd.material, "default material");
	SAME(ibShape_GetLocalRotation(sh), sd.localRotation, "default local rotation");
	ibDestroyWorld(w);
}

static void test_materials_and_rotations(void** state)
{
	(void)state;
	const char* xml = "<ibdyn version=\"1\">\n"
	                  "  <body name=\"b\" type=\"dynamic\" rotation_axis_angle=\"0 0 2 0.5\">\n"
	                  "    <box half_extents=\"1 1 1\" material=\"steel\" restitution=\"0.9\"/>\n"
	                  "    <sphere radius=\"1\" material=\"steel\" density=\"1\" rotation=\"2 0 0 0\"/>\n"
	                  "  </body>\n"
	                  "  <material name=\"steel\" density=\"7800\" restitution=\"0.3\" static_friction=\"0.25\"/>\n"
	                  "</ibdyn>\n";
	ibWorldId w = loadOk(xml, "materials", NULL);
	ibBodyId b = ibWorld_FindBody(w, "b");
	assert_false(IB_IS_NULL(b));
	ibShapeId sh[2];
	assert_int_equal(ibBody_GetShapes(b, sh, 2), 2);
	/* material defaults (defined after use), shape attributes override them */
	SAME(ibShape_GetDensity(sh[0]), 7800.0, "material density");
	ibMaterial m0 = ibShape_GetMaterial(sh[0]);
	SAME(m0.restitution, 0.9, "overridden restitution");
	SAME(m0.staticFriction, 0.25, "material static friction");
	SAME(m0.dynamicFriction, ibDefaultShapeDef().material.dynamicFriction, "default dynamic friction");
	SAME(ibShape_GetDensity(sh[1]), 1.0, "overridden density");
	SAME(ibShape_GetMaterial(sh[1]).restitution, 0.3, "material restitution");
	SAME(ibShape_GetLocalRotation(sh[1]), IB_QUAT_IDENTITY, "normalised rotation");
	/* the axis of rotation_axis_angle is normalised */
	ibQuat expect = ibQuatFromAxisAngle(ibV3(0, 0, 1), 0.5);
	ibQuat got = ibBody_GetRotation(b);
	assert_true(fabs(got.w - expect.w) < 1e-15 && fabs(got.z - expect.z) < 1e-15);
	ibDestroyWorld(w);
}

static void test_memory_errors_and_hooks(void** state)
{
	(void)state;
	char err[ERR_SIZE];
	ibWorldId w;
	const char* bad = "<ibdyn version=\"1\">\n\n  <body type=\"dynamic\" bogus=\"1\"/>\n</ibdyn>";
	assert_int_equal(ibLoadSceneFromMemory(bad, strlen(bad), "inline", NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_string_equal(err, "inline:3: unknown attribute 'bogus' on <body>");
	assert_int_equal(ibLoadSceneFromMemory(bad, strlen(bad), NULL, NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_int_equal(strncmp(err, "<memory>:3: ", 12), 0);
	/* only the first length bytes count */
	assert_int_equal(ibLoadSceneFromMemory(bad, 10, "cut", NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_int_equal(strncmp(err, "cut:1: malformed XML", 20), 0);
	const char* enc = "<?xml version=\"1.0\" encoding=\"no-such-encoding\"?>\n<ibdyn version=\"1\"/>";
	assert_int_equal(ibLoadSceneFromMemory(enc, strlen(enc), "enc", NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_non_null(strstr(err, "malformed XML"));
	assert_int_equal(ibLoadSceneFromMemory("", 0, "empty", NULL, &w, NULL, err, sizeof err), IB_ERR_PARSE);
	assert_int_equal(strncmp(err, "empty:", 6), 0);

	/* the base definition gives hooks and user data; the file alone gives the physics */
	Counter counter = {0, 0};
	int logs = 0, user = 0;
	ibWorldDef base = ibDefaultWorldDef();
	base.allocFn = countAlloc;
	base.reallocFn = countRealloc;
	base.freeFn = countFree;
	base.allocContext = &counter;
	base.logFn = countLog;
	base.logContext = &logs;
	base.userData = &user;
	base.gravity = ibV3(1, 2, 3);
	const char* ok = "<ibdyn version=\"1\"><body type=\"dynamic\"><sphere radius=\"1\"/></body></ibdyn>";
	assert_int_equal(ibLoadSceneFromMemory(ok, strlen(ok), "hooks", &base, &w, NULL, err, sizeof err), IB_OK);
	assert_true(ibWorld_GetUserData(w) == &user);
	assert_true(counter.live > 0);
	SAME(ibWorld_GetGravity(w), ibDefaultWorldDef().gravity, "gravity from the file defaults");
	ibDestroyWorld(w);
	assert_int_equal(counter.live, 0);
}

static void test_numbers(void** state)
{
	(void)state;
	const char* xml = "<ibdyn version=\"+1\">\n"
	                  "  <world gravity=\" -0  +1.5e-3\n\t.25 \" max_position_iterations=\"+7\"/>\n"
	                  "  <body type=\"kinematic\" position=\"4.9e-324 1E2 -2.\" linear_velocity=\"1e-310 0 0\"/>\n"
	                  "</ibdyn>";
	ibWorldId w = loadOk(xml, "numbers", NULL);
	ibVec3 g = ibWorld_GetGravity(w);
	assert_true(g.x == 0.0 && signbit(g.x));
	SAME(g.y, 1.5e-3, "gravity y");
	SAME(g.z, 0.25, "gravity z");
	assert_int_equal(ibWorld_GetSolverSettings(w).maxPositionIterations, 7);
	ibBodyId b;
	ibWorld_GetBodies(w, &b, 1);
	SAME(ibBody_GetLinearVelocity(b).x, 1e-310, "subnormal velocity");
	/* a subnormal survives the round trip as well */
	assertRoundTrip(w, NULL, "numbers");
	ibDestroyWorld(w);

	/* numbers are read and written in the C locale whatever the process locale is */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL || setlocale(LC_NUMERIC, "fr_FR.UTF-8") != NULL) {
		w = loadOk(xml, "numbers in a decimal-comma locale", NULL);
		char* out = saveOk(w, NULL);
		assert_non_null(strstr(out, "gravity=\"-0 0.0015 0.25\""));
		free(out);
		ibDestroyWorld(w);
		setlocale(LC_NUMERIC, "C");
	}
}

/* ---------------------------------------------------------------- the scenes as physics */

static void test_projectile_scene(void** state)
{
	(void)state;
	char err[ERR_SIZE];
	ibWorldId w;
	ibSceneSettings s;
	assert_int_equal(ibLoadScene(SCENES_DIR "/projectile.xml", NULL, &w, &s, err, sizeof err), IB_OK);
	ibBodyId ball = ibWorld_FindBody(w, "ball");
	SAME(ibBody_GetMass(ball), 1.0, "ball mass");
	ibVec3 v0 = ibBody_GetLinearVelocity(ball);
	int steps = (int)(s.duration / s.timeStep + 0.5);
	for (int i = 0; i < steps; ++i) assert_int_equal(ibWorld_Step(w, s.timeStep), IB_OK);
	double t = ibWorld_GetTime(w);
	ibVec3 p = ibBody_GetWorldCenterOfMass(ball);
	assert_true(fabs(p.x - v0.x * t) < 1e-9);
	assert_true(fabs(p.z - (v0.z * t - 0.5 * 9.81 * t * t)) < 1e-9);
	assert_true(fabs(p.z) < 0.01);          /* lands at the end of the run */
	assert_true(fabs(p.x - 40.775) < 0.05); /* v0^2 / g */
	ibDestroyWorld(w);
}

static void test_spinning_top_flips(void** state)
{
	(void)state;
	char err[ERR_SIZE];
	ibWorldId w;
	ibSceneSettings s;
	assert_int_equal(ibLoadScene(SCENES_DIR "/spinning_top_free.xml", NULL, &w, &s, err, sizeof err), IB_OK);
	ibBodyId top = ibWorld_FindBody(w, "t_handle");
	/* the spin axis (body x) is the intermediate principal axis */
	ibMassData md = ibBody_GetMassData(top);
	double ix = md.inertia.m[0][0], iy = md.inertia.m[1][1], iz = md.inertia.m[2][2];
	assert_true((ix > iy && ix < iz) || (ix < iy && ix > iz));
	ibWorldInvariants before, after;
	assert_int_equal(ibWorld_ComputeInvariants(w, &before), IB_OK);
	int steps = (int)(s.duration / s.timeStep + 0.5), flips = 0;
	double last = 1.0;
	for (int i = 0; i < steps; ++i) {
		assert_int_equal(ibWorld_Step(w, s.timeStep), IB_OK);
		ibVec3 wb = ibInvRotate(ibBody_GetRotation(top), ibBody_GetAngularVelocity(top));
		if ((wb.x > 0.0) != (last > 0.0)) ++flips;
		last = wb.x;
	}
	assert_int_equal(ibWorld_ComputeInvariants(w, &after), IB_OK);
	assert_true(flips >= 3);
	assert_true(fabs(after.kineticEnergy - before.kineticEnergy) < 1e-6 * before.kineticEnergy);
	assert_true(ibLength(ibSub(after.angularMomentum, before.angularMomentum)) <
	            1e-6 * ibLength(before.angularMomentum));
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_example_scenes_load),
	    cmocka_unit_test(test_example_scenes_round_trip),
	    cmocka_unit_test(test_code_world_round_trip),
	    cmocka_unit_test(test_joint_world_round_trip),
	    cmocka_unit_test(test_joint_unit_vectors_exact),
	    cmocka_unit_test(test_joint_world_form),
	    cmocka_unit_test(test_joint_auto_body_names),
	    cmocka_unit_test(test_joint_save_rejects_infinite_motor),
	    cmocka_unit_test(test_joint_example_scenes),
	    cmocka_unit_test(test_bad_corpus),
	    cmocka_unit_test(test_shape_scene),
	    cmocka_unit_test(test_obj_reader),
	    cmocka_unit_test(test_io_errors),
	    cmocka_unit_test(test_save_rejects_unloadable_worlds),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_contact_settings_round_trip),
	    cmocka_unit_test(test_sleep_round_trip),
	    cmocka_unit_test(test_materials_and_rotations),
	    cmocka_unit_test(test_memory_errors_and_hooks),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_projectile_scene),
	    cmocka_unit_test(test_spinning_top_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
