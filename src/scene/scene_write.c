/* ibdyn_scene writer: any world, read through the public getters, as a scene file that loads back
 * into the same world (joints: scene_write_joint.c). Every value is written explicitly; each number with the fewest
 * significant digits (15, 16 or 17) that strtod maps back to the very same double, so load -> save -> load is exact.
 * Text is escaped so that attribute-value normalisation cannot alter it. */
#define _POSIX_C_SOURCE 200809L

#include "scene_write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/hash.h>

static void put(ibSceneWriter* w, const char* s, size_t n)
{
	if (w->outOfMemory) return;
	if (w->len + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n + 1) cap *= 2;
		char* grown = realloc(w->buf, cap);
		if (grown == NULL) {
			w->outOfMemory = true;
			return;
		}
		w->buf = grown;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

void ibSceneW_Puts(ibSceneWriter* w, const char* s) { put(w, s, strlen(s)); }

/* Shortest of %.15g, %.16g, %.17g that reads back bit for bit (%.17g always does). */
static void putNumber(ibSceneWriter* w, double v)
{
	char s[40];
	for (int digits = 15; digits <= 17; ++digits) {
		snprintf(s, sizeof s, "%.*g", digits, v);
		if (digits == 17 || strtod(s, NULL) == v) break;
	}
	ibSceneW_Puts(w, s);
}

static void putNumbers(ibSceneWriter* w, const char* name, const double* v, int n)
{
	for (int i = 0; i < n; ++i) {
		if (!isfinite(v[i]) && w->nonFinite == NULL) w->nonFinite = name;
		if (i > 0) put(w, " ", 1);
		putNumber(w, v[i]);
	}
}

void ibSceneW_AttrReals(ibSceneWriter* w, const char* name, const double* v, int n)
{
	put(w, " ", 1);
	ibSceneW_Puts(w, name);
	put(w, "=\"", 2);
	putNumbers(w, name, v, n);
	put(w, "\"", 1);
}

void ibSceneW_AttrReal(ibSceneWriter* w, const char* name, double v) { ibSceneW_AttrReals(w, name, &v, 1); }

void ibSceneW_AttrVec3(ibSceneWriter* w, const char* name, ibVec3 v)
{
	double a[3] = {v.x, v.y, v.z};
	ibSceneW_AttrReals(w, name, a, 3);
}

void ibSceneW_AttrQuat(ibSceneWriter* w, const char* name, ibQuat q)
{
	double a[4] = {q.w, q.x, q.y, q.z};
	ibSceneW_AttrReals(w, name, a, 4);
}

void ibSceneW_AttrInt(ibSceneWriter* w, const char* name, int v)
{
	char s[64];
	snprintf(s, sizeof s, " %s=\"%d\"", name, v);
	ibSceneW_Puts(w, s);
}

/* Length of the UTF-8 sequence at s encoding a character allowed in XML 1.0 (0 if none). */
static size_t xmlCharLength(const unsigned char* s)
{
	unsigned c = s[0];
	if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
	size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
	if (n == 0 || c > 0xF4) return 0;
	unsigned cp = c & (0x3Fu >> (n - 1));
	for (size_t i = 1; i < n; ++i) {
		if ((s[i] & 0xC0) != 0x80) return 0;
		cp = (cp << 6) | (s[i] & 0x3Fu);
	}
	static const unsigned minimum[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < minimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
	return n;
}

void ibSceneW_AttrText(ibSceneWriter* w, const char* name, const char* text)
{
	put(w, " ", 1);
	ibSceneW_Puts(w, name);
	put(w, "=\"", 2);
	const unsigned char* s = (const unsigned char*)text;
	while (*s) {
		size_t n = xmlCharLength(s);
		if (n == 0) {
			if (w->badText == NULL) w->badText = name;
			break;
		}
		switch (*s) {
		case '&':
			ibSceneW_Puts(w, "&amp;");
			break;
		case '<':
			ibSceneW_Puts(w, "&lt;");
			break;
		case '>':
			ibSceneW_Puts(w, "&gt;");
			break;
		case '"':
			ibSceneW_Puts(w, "&quot;");
			break;
		case '\t':
			ibSceneW_Puts(w, "&#9;");
			break;
		case '\n':
			ibSceneW_Puts(w, "&#10;");
			break;
		case '\r':
			ibSceneW_Puts(w, "&#13;");
			break;
		default:
			put(w, (const char*)s, n);
			break;
		}
		s += n;
	}
	put(w, "\"", 1);
}

/* ---------------------------------------------------------------- elements */

static void writeWorld(ibSceneWriter* w, ibWorldId world)
{
	ibSolverSettings s = ibWorld_GetSolverSettings(world);
	const char* integrator = ibScene_EnumName(ibScene_Integrators, (int)s.integrator);
	ibSceneW_Puts(w, "  <world");
	ibSceneW_AttrVec3(w, "gravity", ibWorld_GetGravity(world));
	ibSceneW_AttrText(w, "integrator", integrator != NULL ? integrator : "?");
	ibSceneW_AttrReal(w, "integrator_tolerance", s.integratorTolerance);
	ibSceneW_AttrInt(w, "integrator_max_substeps", s.integratorMaxSubsteps);
	ibSceneW_AttrReal(w, "position_tolerance", s.positionTolerance);
	ibSceneW_AttrReal(w, "angular_tolerance", s.angularTolerance);
	ibSceneW_AttrReal(w, "velocity_tolerance", s.velocityTolerance);
	ibSceneW_AttrInt(w, "max_position_iterations", s.maxPositionIterations);
	ibSceneW_AttrInt(w, "max_velocity_iterations", s.maxVelocityIterations);
	ibSceneW_AttrReal(w, "max_correction_impulse", s.maxCorrectionImpulse);
	const char* method = ibScene_EnumName(ibScene_Solvers, (int)s.method);
	ibSceneW_AttrText(w, "solver", method != NULL ? method : "?");
	ibSceneW_AttrText(w, "warm_start", s.warmStart ? "true" : "false");
	ibSceneW_AttrInt(w, "order", s.order);
	ibSceneW_AttrInt(w, "max_step_subdivisions", s.maxStepSubdivisions);
	/* collision settings only where they differ from the defaults (older files stay byte-identical) */
	ibCollisionSettings c = ibWorld_GetCollisionSettings(world), d = ibDefaultCollisionSettings();
	if (c.enabled != d.enabled) ibSceneW_AttrText(w, "collision", c.enabled ? "true" : "false");
	if (c.contactTolerance != d.contactTolerance) ibSceneW_AttrReal(w, "contact_tolerance", c.contactTolerance);
	const char* bp = ibScene_EnumName(ibScene_Broadphases, (int)c.broadphase);
	if (c.broadphase != d.broadphase) ibSceneW_AttrText(w, "broadphase", bp != NULL ? bp : "?");
	const char* toi = ibScene_EnumName(ibScene_ToiModes, (int)c.toiMode);
	if (c.toiMode != d.toiMode) ibSceneW_AttrText(w, "toi", toi != NULL ? toi : "?");
	if (c.conservativeAdvancement != d.conservativeAdvancement)
		ibSceneW_AttrText(w, "conservative_advancement", c.conservativeAdvancement ? "true" : "false");
	if (c.maxToiSubsteps != d.maxToiSubsteps) ibSceneW_AttrInt(w, "max_toi_substeps", c.maxToiSubsteps);
	if (c.maxToiIterations != d.maxToiIterations) ibSceneW_AttrInt(w, "max_toi_iterations", c.maxToiIterations);
	if (c.speculativeApproach != d.speculativeApproach)
		ibSceneW_AttrText(w, "speculative_approach", c.speculativeApproach ? "true" : "false");
	ibSceneW_AttrReal(w, "max_rotation_per_step", s.maxRotationPerStep);
	ibSolverSettings sd = ibDefaultSolverSettings();
	if (s.maxLinearSpeed != sd.maxLinearSpeed) ibSceneW_AttrReal(w, "max_linear_speed", s.maxLinearSpeed);
	if (s.maxAngularSpeed != sd.maxAngularSpeed) ibSceneW_AttrReal(w, "max_angular_speed", s.maxAngularSpeed);
	/* contact settings, also only where they differ from the defaults */
	ibContactSettings k = s.contact, kd = ibDefaultWorldDef().solver.contact;
	if (k.enabled != kd.enabled) ibSceneW_AttrText(w, "contacts", k.enabled ? "true" : "false");
	const char* law = ibScene_EnumName(ibScene_RestitutionLaws, (int)k.restitutionLaw);
	if (k.restitutionLaw != kd.restitutionLaw) ibSceneW_AttrText(w, "restitution_law", law != NULL ? law : "?");
	const char* rmix = ibScene_EnumName(ibScene_MixRules, (int)k.restitutionMixing);
	if (k.restitutionMixing != kd.restitutionMixing) ibSceneW_AttrText(w, "restitution_mixing", rmix != NULL ? rmix : "?");
	const char* fmix = ibScene_EnumName(ibScene_MixRules, (int)k.frictionMixing);
	if (k.frictionMixing != kd.frictionMixing) ibSceneW_AttrText(w, "friction_mixing", fmix != NULL ? fmix : "?");
	if (k.restingSpeed != kd.restingSpeed) ibSceneW_AttrReal(w, "resting_speed", k.restingSpeed);
	if (k.collisionTolerance != kd.collisionTolerance) ibSceneW_AttrReal(w, "collision_tolerance", k.collisionTolerance);
	if (k.contactPositionTolerance != kd.contactPositionTolerance)
		ibSceneW_AttrReal(w, "contact_position_tolerance", k.contactPositionTolerance);
	if (k.maxCollisionIterations != kd.maxCollisionIterations)
		ibSceneW_AttrInt(w, "max_collision_iterations", k.maxCollisionIterations);
	if (k.maxContactIterations != kd.maxContactIterations)
		ibSceneW_AttrInt(w, "max_contact_iterations", k.maxContactIterations);
	if (k.jointVelocitySweeps != kd.jointVelocitySweeps)
		ibSceneW_AttrText(w, "joint_velocity_sweeps", k.jointVelocitySweeps ? "true" : "false");
	if (k.contactGraph != kd.contactGraph) ibSceneW_AttrText(w, "contact_graph", k.contactGraph ? "true" : "false");
	if (k.shockIterations != kd.shockIterations) ibSceneW_AttrInt(w, "shock_iterations", k.shockIterations);
	if (k.stallSweeps != kd.stallSweeps) ibSceneW_AttrInt(w, "stall_sweeps", k.stallSweeps);
	/* sleep settings, only where they differ from the defaults */
	ibSleepSettings z = s.sleep, zd = ibDefaultWorldDef().solver.sleep;
	if (z.enabled != zd.enabled) ibSceneW_AttrText(w, "sleeping", z.enabled ? "true" : "false");
	if (z.linearThreshold != zd.linearThreshold) ibSceneW_AttrReal(w, "sleep_linear_threshold", z.linearThreshold);
	if (z.angularThreshold != zd.angularThreshold) ibSceneW_AttrReal(w, "sleep_angular_threshold", z.angularThreshold);
	if (z.timeToSleep != zd.timeToSleep) ibSceneW_AttrReal(w, "sleep_time", z.timeToSleep);
	if (k.warmStart != kd.warmStart) ibSceneW_AttrText(w, "contact_warm_start", k.warmStart ? "true" : "false");
	if (k.directSolve != kd.directSolve) ibSceneW_AttrText(w, "contact_direct_solve", k.directSolve ? "true" : "false");
	if (k.jointResponse != kd.jointResponse) ibSceneW_AttrText(w, "contact_joint_response", k.jointResponse ? "true" : "false");
	if (k.directFollow != kd.directFollow) ibSceneW_AttrText(w, "contact_direct_follow", k.directFollow ? "true" : "false");
	ibSceneW_Puts(w, "/>\n");
	int top = ibWorld_GetMaxOverriddenGroup(world);
	for (int g = 0; g <= top; ++g) {
		ibJointSolver m;
		if (!ibWorld_GetGroupSolver(world, g, &m)) continue;
		const char* name = ibScene_EnumName(ibScene_Solvers, (int)m);
		ibSceneW_Puts(w, "  <solver_group");
		ibSceneW_AttrInt(w, "id", g);
		ibSceneW_AttrText(w, "solver", name != NULL ? name : "?");
		ibSceneW_Puts(w, "/>\n");
	}
}

static void writeMeshGeometry(ibSceneWriter* w, ibMesh m)
{
	ibSceneW_Puts(w, " vertices=\"");
	for (int i = 0; i < m.vertexCount; ++i) {
		double v[3] = {m.vertices[i].x, m.vertices[i].y, m.vertices[i].z};
		if (i > 0) put(w, "  ", 2); /* two spaces between vertices */
		putNumbers(w, "vertices", v, 3);
	}
	ibSceneW_Puts(w, "\" triangles=\"");
	for (int i = 0; i < 3 * m.triangleCount; ++i) {
		char s[24];
		snprintf(s, sizeof s, "  %d", m.indices[i]); /* two spaces between triangles */
		ibSceneW_Puts(w, i == 0 ? s + 2 : i % 3 == 0 ? s : s + 1);
	}
	put(w, "\"", 1);
}

static bool writeShape(ibSceneWriter* w, ibShapeId shape)
{
	static const char* const names[IB_SHAPE_TYPE_COUNT] = {"sphere", "box",   "capsule", "cylinder",
	                                                       "mesh",   "hull", "plane",   "trimesh"};
	ibShapeType type = ibShape_GetType(shape);
	if ((int)type < 0 || type >= IB_SHAPE_TYPE_COUNT) return false;
	ibSceneW_Puts(w, "    <");
	ibSceneW_Puts(w, names[type]);
	switch (type) {
	case IB_SHAPE_SPHERE:
		ibSceneW_AttrReal(w, "radius", ibShape_GetSphere(shape).radius);
		break;
	case IB_SHAPE_BOX:
		ibSceneW_AttrVec3(w, "half_extents", ibShape_GetBox(shape).halfExtents);
		break;
	case IB_SHAPE_CAPSULE: {
		ibCapsule c = ibShape_GetCapsule(shape);
		ibSceneW_AttrReal(w, "radius", c.radius);
		ibSceneW_AttrReal(w, "half_length", c.halfLength);
		break;
	}
	case IB_SHAPE_CYLINDER: {
		ibCylinder c = ibShape_GetCylinder(shape);
		ibSceneW_AttrReal(w, "radius", c.radius);
		ibSceneW_AttrReal(w, "half_length", c.halfLength);
		break;
	}
	case IB_SHAPE_MESH:
	case IB_SHAPE_TRIMESH:
		writeMeshGeometry(w, ibShape_GetMesh(shape));
		break;
	case IB_SHAPE_HULL: { /* the hull's own vertices: their hull is the same (canonical face order) */
		ibHullData h = ibShape_GetHull(shape);
		ibSceneW_Puts(w, " points=\"");
		for (int i = 0; i < h.vertexCount; ++i) {
			double v[3] = {h.vertices[i].x, h.vertices[i].y, h.vertices[i].z};
			if (i > 0) put(w, "  ", 2);
			putNumbers(w, "points", v, 3);
		}
		put(w, "\"", 1);
		break;
	}
	case IB_SHAPE_PLANE: {
		ibPlane p = ibShape_GetPlane(shape);
		ibSceneW_AttrVec3(w, "normal", p.normal);
		ibSceneW_AttrReal(w, "offset", p.offset);
		break;
	}
	case IB_SHAPE_TYPE_COUNT:
		break;
	}
	ibSceneW_AttrVec3(w, "position", ibShape_GetLocalPosition(shape));
	ibSceneW_AttrQuat(w, "rotation", ibShape_GetLocalRotation(shape));
	ibSceneW_AttrReal(w, "density", ibShape_GetDensity(shape));
	double mass = ibShape_GetExplicitMass(shape);
	if (mass != 0.0) ibSceneW_AttrReal(w, "mass", mass);
	ibMaterial m = ibShape_GetMaterial(shape);
	ibSceneW_AttrReal(w, "restitution", m.restitution);
	ibSceneW_AttrReal(w, "static_friction", m.staticFriction);
	ibSceneW_AttrReal(w, "dynamic_friction", m.dynamicFriction);
	ibSceneW_Puts(w, "/>\n");
	return true;
}

static void writeMass(ibSceneWriter* w, ibBodyId body)
{
	ibMassData md = ibBody_GetMassData(body);
	const ibMat3* I = &md.inertia;
	double inertia[6] = {I->m[0][0], I->m[1][1], I->m[2][2], I->m[0][1], I->m[0][2], I->m[1][2]};
	ibSceneW_Puts(w, "    <mass");
	ibSceneW_AttrReal(w, "value", md.mass);
	ibSceneW_AttrVec3(w, "center", md.center);
	ibSceneW_AttrReals(w, "inertia", inertia, 6);
	ibSceneW_Puts(w, "/>\n");
}

/* One <body> under the given name ("" = none); returns false with *why set if it cannot be written. */
static bool writeBody(ibSceneWriter* w, ibBodyId body, const char* name, const char** why)
{
	const char* type = ibScene_EnumName(ibScene_BodyTypes, (int)ibBody_GetType(body));
	double linear = 0.0, angular = 0.0;
	ibBody_GetDamping(body, &linear, &angular);
	ibSceneW_Puts(w, "  <body");
	if (name[0] != '\0') ibSceneW_AttrText(w, "name", name);
	ibSceneW_AttrText(w, "type", type != NULL ? type : "?");
	ibSceneW_AttrVec3(w, "position", ibBody_GetPosition(body));
	ibSceneW_AttrQuat(w, "rotation", ibBody_GetRotation(body));
	ibSceneW_AttrVec3(w, "linear_velocity", ibBody_GetLinearVelocity(body));
	ibSceneW_AttrVec3(w, "angular_velocity", ibBody_GetAngularVelocity(body));
	ibSceneW_AttrReal(w, "linear_damping", linear);
	ibSceneW_AttrReal(w, "angular_damping", angular);
	ibSceneW_AttrReal(w, "gravity_scale", ibBody_GetGravityScale(body));
	if (ibBody_GetSolverGroup(body) != 0) ibSceneW_AttrInt(w, "solver_group", ibBody_GetSolverGroup(body));
	if (!ibBody_IsSleepEnabled(body)) ibSceneW_AttrText(w, "sleep", "false");
	if (!ibBody_IsAwake(body)) ibSceneW_AttrText(w, "awake", "false");
	int count = ibBody_GetShapeCount(body);
	bool override = ibBody_HasMassOverride(body);
	if (count == 0 && !override) {
		ibSceneW_Puts(w, "/>\n");
		return true;
	}
	ibSceneW_Puts(w, ">\n");
	ibShapeId* shapes = count > 0 ? malloc((size_t)count * sizeof *shapes) : NULL;
	if (count > 0 && shapes == NULL) {
		w->outOfMemory = true;
		return false;
	}
	count = ibBody_GetShapes(body, shapes, count);
	bool ok = true;
	for (int i = 0; i < count && ok; ++i) ok = writeShape(w, shapes[i]);
	free(shapes);
	if (!ok) {
		*why = "has a shape of unknown type";
		return false;
	}
	if (override) writeMass(w, body);
	ibSceneW_Puts(w, "  </body>\n");
	return true;
}

/* Every body in creation order; autoNames[i] (may be NULL) is written for an unnamed body. */
static bool writeBodies(ibSceneWriter* w, const ibBodyId* bodies, int count, char* const* autoNames, ibSceneErr* e)
{
	xmlHashTable* names = xmlHashCreate(16);
	bool ok = names != NULL;
	if (!ok) w->outOfMemory = true;
	for (int i = 0; ok && i < count; ++i) {
		const char* name = ibBody_GetName(bodies[i]);
		const char* written = name[0] == '\0' && autoNames[i] != NULL ? autoNames[i] : name;
		const char* why = NULL;
		w->nonFinite = w->badText = NULL;
		if (name[0] != '\0' && xmlHashLookup(names, (const xmlChar*)name) != NULL) {
			why = "has the same name as an earlier body (scene files need unique names)";
		} else if (name[0] != '\0' && xmlHashAddEntry(names, (const xmlChar*)name, (void*)&bodies[i]) != 0) {
			w->outOfMemory = true;
		} else {
			bool done = writeBody(w, bodies[i], written, &why);
			if (!done && why == NULL)
				why = "cannot be written";
			else if (done && w->nonFinite != NULL)
				why = "has a non-finite value";
			else if (done && w->badText != NULL)
				why = "has a name that is not valid UTF-8 XML text";
		}
		if (w->outOfMemory) break;
		if (why != NULL) {
			char label[160];
			if (name[0] != '\0' && w->badText == NULL)
				snprintf(label, sizeof label, "body %d '%.100s'", i, name);
			else
				snprintf(label, sizeof label, "body %d", i);
			if (w->nonFinite != NULL)
				ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "%s %s in '%s'", label, why, w->nonFinite);
			else
				ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "%s %s", label, why);
			ok = false;
		}
	}
	if (names != NULL) xmlHashFree(names, NULL);
	return ok && !w->outOfMemory;
}

/* ---------------------------------------------------------------- joints and body names */

/* Everything the writer reads from the world before writing. */
typedef struct worldContents {
	ibBodyId* bodies; /* ibWorld_GetBodies (creation = index order) */
	int bodyCount;
	char** autoNames;   /* per body: the name written for an unnamed body a joint uses (malloc'd), else NULL */
	ibJointDef* joints; /* ibJoint_GetDef of every joint, ibWorld_GetJoints order */
	int jointCount;
	const char** jointBodyNames; /* 2 per joint: the names written for bodies A and B */
} worldContents;

static void freeContents(worldContents* c)
{
	for (int i = 0; c->autoNames != NULL && i < c->bodyCount; ++i) free(c->autoNames[i]);
	free(c->autoNames);
	free(c->bodies);
	free(c->joints);
	free(c->jointBodyNames);
}

/* Position of body in the creation-ordered list (binary search on the index; -1 if absent). */
static int bodyPosition(const worldContents* c, ibBodyId body)
{
	int lo = 0, hi = c->bodyCount - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		ibBodyId m = c->bodies[mid];
		if (IB_ID_EQUALS(m, body)) return mid;
		if (m.index1 < body.index1)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* "body<i>" for unnamed body i, or "body<i>_<k>" with the smallest k >= 1 that no body uses. */
static char* autoName(xmlHashTable* used, int i)
{
	char name[48];
	snprintf(name, sizeof name, "body%d", i);
	for (int k = 1; xmlHashLookup(used, (const xmlChar*)name) != NULL; ++k)
		snprintf(name, sizeof name, "body%d_%d", i, k);
	char* copy = malloc(strlen(name) + 1);
	if (copy == NULL || xmlHashAddEntry(used, (const xmlChar*)name, copy) != 0) {
		free(copy);
		return NULL;
	}
	return strcpy(copy, name);
}

/* Read bodies and joints; give the unnamed bodies that joints use their file names. */
static bool readContents(ibWorldId world, worldContents* c, ibSceneWriter* w, ibSceneErr* e)
{
	memset(c, 0, sizeof *c);
	int n = ibWorld_GetBodyCount(world);
	int nj = ibWorld_GetJointCount(world);
	c->bodies = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->bodies);
	c->autoNames = calloc((size_t)(n > 0 ? n : 1), sizeof *c->autoNames);
	c->joints = malloc((size_t)(nj > 0 ? nj : 1) * sizeof *c->joints);
	c->jointBodyNames = calloc((size_t)(nj > 0 ? nj : 1) * 2, sizeof *c->jointBodyNames);
	ibJointId* ids = malloc((size_t)(nj > 0 ? nj : 1) * sizeof *ids);
	xmlHashTable* used = xmlHashCreate(16);
	bool ok = c->bodies != NULL && c->autoNames != NULL && c->joints != NULL && c->jointBodyNames != NULL &&
	          ids != NULL && used != NULL;
	if (ok) {
		c->bodyCount = ibWorld_GetBodies(world, c->bodies, n);
		nj = ibWorld_GetJoints(world, ids, nj);
		for (int i = 0; i < c->bodyCount; ++i) {
			const char* name = ibBody_GetName(c->bodies[i]);
			if (name[0] != '\0') xmlHashAddEntry(used, (const xmlChar*)name, &c->bodies[i]); /* duplicates: later */
		}
	}
	for (int j = 0; ok && j < nj; ++j) {
		ibJointDef* d = &c->joints[j];
		if (ibJoint_GetDef(ids[j], d) != IB_OK) {
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "joint %d cannot be read", j);
			ok = false;
			break;
		}
		c->jointCount = j + 1;
		ibBodyId ends[2] = {d->bodyA, d->bodyB};
		for (int k = 0; k < 2 && ok; ++k) {
			int i = bodyPosition(c, ends[k]);
			if (i < 0) {
				ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "joint %d refers to a body that is not in the world", j);
				ok = false;
				break;
			}
			const char* name = ibBody_GetName(c->bodies[i]);
			if (name[0] == '\0' && c->autoNames[i] == NULL) {
				c->autoNames[i] = autoName(used, i);
				if (c->autoNames[i] == NULL) {
					w->outOfMemory = true;
					ok = false;
					break;
				}
			}
			c->jointBodyNames[2 * j + k] = name[0] != '\0' ? name : c->autoNames[i];
		}
	}
	/* bodies of rigid–soft joints need names too */
	int nc = ok ? ibWorld_GetConstraints(world, NULL, 0) : 0;
	ibConstraintId* cons = nc > 0 ? malloc(sizeof *cons * (size_t)nc) : NULL;
	if (nc > 0 && cons == NULL) ok = false;
	if (cons != NULL) nc = ibWorld_GetConstraints(world, cons, nc);
	for (int j = 0; ok && j < nc; ++j) {
		ibSoftJointDef d;
		if (ibSoftJoint_GetDef(cons[j], &d) != IB_OK) continue; /* user constraint: reported by the soft writer */
		int i = bodyPosition(c, d.body);
		if (i < 0 || ibBody_GetName(c->bodies[i])[0] != '\0' || c->autoNames[i] != NULL) continue;
		c->autoNames[i] = autoName(used, i);
		if (c->autoNames[i] == NULL) {
			w->outOfMemory = true;
			ok = false;
		}
	}
	free(cons);
	if (used != NULL) xmlHashFree(used, NULL);
	free(ids);
	if (!ok && e->result == IB_OK) w->outOfMemory = true;
	return ok;
}

/* Name written for a body (ibScene_WriteSoft callback). */
static const char* writtenBodyName(void* ctx, ibBodyId body)
{
	const worldContents* c = ctx;
	int i = bodyPosition(c, body);
	if (i < 0) return NULL;
	const char* name = ibBody_GetName(c->bodies[i]);
	return name[0] != '\0' ? name : c->autoNames[i];
}

static ibResult writeScene(ibSceneWriter* w, ibWorldId world, const ibSceneSettings* settings, ibSceneErr* e)
{
	if (!ibWorld_IsValid(world)) {
		ibScene_Fail(e, IB_ERR_STALE_HANDLE, 0, "the world handle is null or stale");
		return e->result;
	}
	if (settings != NULL && !(settings->timeStep > 0.0 && isfinite(settings->timeStep) && settings->duration > 0.0 &&
	                          isfinite(settings->duration))) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "run settings need a finite timeStep > 0 and duration > 0");
		return e->result;
	}
	ibSceneW_Puts(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ibdyn version=\"1\">\n");
	writeWorld(w, world);
	if (w->nonFinite != NULL) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "world setting '%s' is not finite", w->nonFinite);
		return e->result;
	}
	if (settings != NULL) {
		ibSceneW_Puts(w, "  <run");
		ibSceneW_AttrReal(w, "timestep", settings->timeStep);
		ibSceneW_AttrReal(w, "duration", settings->duration);
		ibSceneW_Puts(w, "/>\n");
	}
	worldContents c;
	bool ok = readContents(world, &c, w, e) && writeBodies(w, c.bodies, c.bodyCount, c.autoNames, e) &&
	          ibScene_WriteJoints(w, c.joints, c.jointCount, c.jointBodyNames, e) &&
	          ibScene_WriteSoft(w, world, writtenBodyName, &c, e);
	freeContents(&c);
	if (!ok && e->result != IB_OK) return e->result;
	ibSceneW_Puts(w, "</ibdyn>\n");
	if (w->outOfMemory) {
		ibScene_Fail(e, IB_ERR_OUT_OF_MEMORY, 0, "out of memory");
		return e->result;
	}
	return IB_OK;
}

/* The scene as a malloc'd string (NULL after an error). */
static char* saveToString(ibWorldId world, const ibSceneSettings* settings, ibSceneErr* e, size_t* outLength)
{
	ibSceneLocale locale;
	if (!ibScene_EnterCLocale(&locale)) {
		ibScene_Fail(e, IB_ERR_OUT_OF_MEMORY, 0, "cannot create the C locale");
		return NULL;
	}
	ibSceneWriter w = {0};
	ibResult r = writeScene(&w, world, settings, e);
	ibScene_LeaveCLocale(&locale);
	if (r != IB_OK) {
		free(w.buf);
		return NULL;
	}
	*outLength = w.len;
	return w.buf;
}

ibResult ibSaveSceneToMemory(ibWorldId world, const ibSceneSettings* settings, char** outXml, char* err, size_t errSize)
{
	ibSceneErr e = {"ibSaveSceneToMemory", err, errSize, IB_OK};
	if (err != NULL && errSize > 0) err[0] = '\0';
	if (outXml == NULL) {
		ibScene_Fail(&e, IB_ERR_INVALID_ARGUMENT, 0, "outXml is NULL");
		return e.result;
	}
	*outXml = NULL;
	size_t length = 0;
	*outXml = saveToString(world, settings, &e, &length);
	return *outXml != NULL ? IB_OK : e.result;
}

static ibResult ioError(ibSceneErr* e, const char* what, int errnum)
{
	ibScene_IoError(e, what, errnum);
	return e->result;
}

ibResult ibSaveScene(ibWorldId world, const ibSceneSettings* settings, const char* path, char* err, size_t errSize)
{
	ibSceneErr e = {path != NULL ? path : "ibSaveScene", err, errSize, IB_OK};
	if (err != NULL && errSize > 0) err[0] = '\0';
	if (path == NULL) {
		ibScene_Fail(&e, IB_ERR_IO, 0, "no file name given (path is NULL)");
		return e.result;
	}
	size_t length = 0;
	char* xml = saveToString(world, settings, &e, &length);
	if (xml == NULL) return e.result;
	FILE* f = fopen(path, "wb");
	if (f == NULL) {
		free(xml);
		return ioError(&e, "cannot open the file for writing", errno);
	}
	size_t written = fwrite(xml, 1, length, f);
	int writeErrno = written != length ? errno : 0;
	free(xml);
	bool closeFailed = fclose(f) != 0;
	int closeErrno = errno;
	if (written != length) return ioError(&e, "cannot write the file", writeErrno);
	if (closeFailed) return ioError(&e, "cannot write the file", closeErrno);
	return IB_OK;
}
