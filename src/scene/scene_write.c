/* ibdyn_scene writer: any world, read through the public getters, as a scene file that loads back
 * into the same world. Every value is written explicitly; each number with the fewest significant
 * digits (15, 16 or 17) that strtod maps back to the very same double, so load -> save -> load is
 * exact. Text is escaped so that attribute-value normalisation cannot alter it. */
#define _POSIX_C_SOURCE 200809L

#include "scene_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/hash.h>

typedef struct sceneWriter {
	char* buf;
	size_t len, cap;
	bool outOfMemory;
	const char* nonFinite; /* first attribute of the current element with a non-finite value */
	const char* badText;   /* first attribute whose text cannot be represented in XML */
} sceneWriter;

static void put(sceneWriter* w, const char* s, size_t n)
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

static void puts_(sceneWriter* w, const char* s) { put(w, s, strlen(s)); }

/* Shortest of %.15g, %.16g, %.17g that reads back bit for bit (%.17g always does). */
static void putNumber(sceneWriter* w, double v)
{
	char s[40];
	for (int digits = 15; digits <= 17; ++digits) {
		snprintf(s, sizeof s, "%.*g", digits, v);
		if (digits == 17 || strtod(s, NULL) == v) break;
	}
	puts_(w, s);
}

static void putNumbers(sceneWriter* w, const char* name, const double* v, int n)
{
	for (int i = 0; i < n; ++i) {
		if (!isfinite(v[i]) && w->nonFinite == NULL) w->nonFinite = name;
		if (i > 0) put(w, " ", 1);
		putNumber(w, v[i]);
	}
}

static void attrReals(sceneWriter* w, const char* name, const double* v, int n)
{
	put(w, " ", 1);
	puts_(w, name);
	put(w, "=\"", 2);
	putNumbers(w, name, v, n);
	put(w, "\"", 1);
}

static void attrReal(sceneWriter* w, const char* name, double v) { attrReals(w, name, &v, 1); }

static void attrVec3(sceneWriter* w, const char* name, ibVec3 v)
{
	double a[3] = {v.x, v.y, v.z};
	attrReals(w, name, a, 3);
}

static void attrQuat(sceneWriter* w, const char* name, ibQuat q)
{
	double a[4] = {q.w, q.x, q.y, q.z};
	attrReals(w, name, a, 4);
}

static void attrInt(sceneWriter* w, const char* name, int v)
{
	char s[64];
	snprintf(s, sizeof s, " %s=\"%d\"", name, v);
	puts_(w, s);
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

static void attrText(sceneWriter* w, const char* name, const char* text)
{
	put(w, " ", 1);
	puts_(w, name);
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
			puts_(w, "&amp;");
			break;
		case '<':
			puts_(w, "&lt;");
			break;
		case '>':
			puts_(w, "&gt;");
			break;
		case '"':
			puts_(w, "&quot;");
			break;
		case '\t':
			puts_(w, "&#9;");
			break;
		case '\n':
			puts_(w, "&#10;");
			break;
		case '\r':
			puts_(w, "&#13;");
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

static void writeWorld(sceneWriter* w, ibWorldId world)
{
	ibSolverSettings s = ibWorld_GetSolverSettings(world);
	const char* integrator = ibScene_EnumName(ibScene_Integrators, (int)s.integrator);
	puts_(w, "  <world");
	attrVec3(w, "gravity", ibWorld_GetGravity(world));
	attrText(w, "integrator", integrator != NULL ? integrator : "?");
	attrReal(w, "integrator_tolerance", s.integratorTolerance);
	attrInt(w, "integrator_max_substeps", s.integratorMaxSubsteps);
	attrReal(w, "position_tolerance", s.positionTolerance);
	attrReal(w, "angular_tolerance", s.angularTolerance);
	attrReal(w, "velocity_tolerance", s.velocityTolerance);
	attrInt(w, "max_position_iterations", s.maxPositionIterations);
	attrInt(w, "max_velocity_iterations", s.maxVelocityIterations);
	attrReal(w, "max_correction_impulse", s.maxCorrectionImpulse);
	puts_(w, "/>\n");
}

static void writeMeshGeometry(sceneWriter* w, ibMesh m)
{
	puts_(w, " vertices=\"");
	for (int i = 0; i < m.vertexCount; ++i) {
		double v[3] = {m.vertices[i].x, m.vertices[i].y, m.vertices[i].z};
		if (i > 0) put(w, "  ", 2); /* two spaces between vertices */
		putNumbers(w, "vertices", v, 3);
	}
	puts_(w, "\" triangles=\"");
	for (int i = 0; i < 3 * m.triangleCount; ++i) {
		char s[24];
		snprintf(s, sizeof s, "  %d", m.indices[i]); /* two spaces between triangles */
		puts_(w, i == 0 ? s + 2 : i % 3 == 0 ? s : s + 1);
	}
	put(w, "\"", 1);
}

static bool writeShape(sceneWriter* w, ibShapeId shape)
{
	static const char* const names[IB_SHAPE_TYPE_COUNT] = {"sphere", "box", "capsule", "cylinder", "mesh"};
	ibShapeType type = ibShape_GetType(shape);
	if ((int)type < 0 || type >= IB_SHAPE_TYPE_COUNT) return false;
	puts_(w, "    <");
	puts_(w, names[type]);
	switch (type) {
	case IB_SHAPE_SPHERE:
		attrReal(w, "radius", ibShape_GetSphere(shape).radius);
		break;
	case IB_SHAPE_BOX:
		attrVec3(w, "half_extents", ibShape_GetBox(shape).halfExtents);
		break;
	case IB_SHAPE_CAPSULE: {
		ibCapsule c = ibShape_GetCapsule(shape);
		attrReal(w, "radius", c.radius);
		attrReal(w, "half_length", c.halfLength);
		break;
	}
	case IB_SHAPE_CYLINDER: {
		ibCylinder c = ibShape_GetCylinder(shape);
		attrReal(w, "radius", c.radius);
		attrReal(w, "half_length", c.halfLength);
		break;
	}
	case IB_SHAPE_MESH:
		writeMeshGeometry(w, ibShape_GetMesh(shape));
		break;
	case IB_SHAPE_TYPE_COUNT:
		break;
	}
	attrVec3(w, "position", ibShape_GetLocalPosition(shape));
	attrQuat(w, "rotation", ibShape_GetLocalRotation(shape));
	attrReal(w, "density", ibShape_GetDensity(shape));
	double mass = ibShape_GetExplicitMass(shape);
	if (mass != 0.0) attrReal(w, "mass", mass);
	ibMaterial m = ibShape_GetMaterial(shape);
	attrReal(w, "restitution", m.restitution);
	attrReal(w, "static_friction", m.staticFriction);
	attrReal(w, "dynamic_friction", m.dynamicFriction);
	puts_(w, "/>\n");
	return true;
}

static void writeMass(sceneWriter* w, ibBodyId body)
{
	ibMassData md = ibBody_GetMassData(body);
	const ibMat3* I = &md.inertia;
	double inertia[6] = {I->m[0][0], I->m[1][1], I->m[2][2], I->m[0][1], I->m[0][2], I->m[1][2]};
	puts_(w, "    <mass");
	attrReal(w, "value", md.mass);
	attrVec3(w, "center", md.center);
	attrReals(w, "inertia", inertia, 6);
	puts_(w, "/>\n");
}

/* One <body>; returns false with *why set if it cannot be written. */
static bool writeBody(sceneWriter* w, ibBodyId body, const char** why)
{
	const char* type = ibScene_EnumName(ibScene_BodyTypes, (int)ibBody_GetType(body));
	const char* name = ibBody_GetName(body);
	double linear = 0.0, angular = 0.0;
	ibBody_GetDamping(body, &linear, &angular);
	puts_(w, "  <body");
	if (name[0] != '\0') attrText(w, "name", name);
	attrText(w, "type", type != NULL ? type : "?");
	attrVec3(w, "position", ibBody_GetPosition(body));
	attrQuat(w, "rotation", ibBody_GetRotation(body));
	attrVec3(w, "linear_velocity", ibBody_GetLinearVelocity(body));
	attrVec3(w, "angular_velocity", ibBody_GetAngularVelocity(body));
	attrReal(w, "linear_damping", linear);
	attrReal(w, "angular_damping", angular);
	attrReal(w, "gravity_scale", ibBody_GetGravityScale(body));
	int count = ibBody_GetShapeCount(body);
	bool override = ibBody_HasMassOverride(body);
	if (count == 0 && !override) {
		puts_(w, "/>\n");
		return true;
	}
	puts_(w, ">\n");
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
	puts_(w, "  </body>\n");
	return true;
}

static bool writeBodies(sceneWriter* w, ibWorldId world, ibSceneErr* e)
{
	int count = ibWorld_GetBodyCount(world);
	ibBodyId* bodies = count > 0 ? malloc((size_t)count * sizeof *bodies) : NULL;
	xmlHashTable* names = xmlHashCreate(16);
	bool ok = names != NULL && (count == 0 || bodies != NULL);
	if (!ok) w->outOfMemory = true;
	if (ok) count = ibWorld_GetBodies(world, bodies, count);
	for (int i = 0; ok && i < count; ++i) {
		const char* name = ibBody_GetName(bodies[i]);
		const char* why = NULL;
		w->nonFinite = w->badText = NULL;
		if (name[0] != '\0' && xmlHashLookup(names, (const xmlChar*)name) != NULL) {
			why = "has the same name as an earlier body (scene files need unique names)";
		} else if (name[0] != '\0' && xmlHashAddEntry(names, (const xmlChar*)name, bodies) != 0) {
			w->outOfMemory = true;
		} else {
			bool written = writeBody(w, bodies[i], &why);
			if (!written && why == NULL)
				why = "cannot be written";
			else if (written && w->nonFinite != NULL)
				why = "has a non-finite value";
			else if (written && w->badText != NULL)
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
	free(bodies);
	return ok && !w->outOfMemory;
}

static ibResult writeScene(sceneWriter* w, ibWorldId world, const ibSceneSettings* settings, ibSceneErr* e)
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
	puts_(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ibdyn version=\"1\">\n");
	writeWorld(w, world);
	if (w->nonFinite != NULL) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "world setting '%s' is not finite", w->nonFinite);
		return e->result;
	}
	if (settings != NULL) {
		puts_(w, "  <run");
		attrReal(w, "timestep", settings->timeStep);
		attrReal(w, "duration", settings->duration);
		puts_(w, "/>\n");
	}
	if (!writeBodies(w, world, e) && e->result != IB_OK) return e->result;
	puts_(w, "</ibdyn>\n");
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
	sceneWriter w = {0};
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
