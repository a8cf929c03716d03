/* ibdyn_scene loader: <body>, its shapes (<sphere>, <box>, <capsule>, <cylinder>, <mesh>, <hull>,
 * <plane>, <trimesh>) and the optional <mass> override, each built with the public API. Shape
 * attributes override the values of the <material> they name, which override ibDefaultShapeDef().
 * Mesh, hull and trimesh geometry is given inline or as file="x.obj" (relative to the scene file). */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shapes */

typedef struct shapeAttrs {
	ibShapeDef def;
	const char* material;
} shapeAttrs;

enum {
	SHAPE_POSITION,
	SHAPE_ROTATION,
	SHAPE_AXIS_ANGLE,
	SHAPE_DENSITY,
	SHAPE_MASS,
	SHAPE_MATERIAL,
	SHAPE_RESTITUTION,
	SHAPE_STATIC_FRICTION,
	SHAPE_DYNAMIC_FRICTION,
	SHAPE_ATTR_COUNT
};

/* clang-format off */
#define SHAPE_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(shapeAttrs, f)}
static const ibSceneAttr shapeAttrTable[SHAPE_ATTR_COUNT] = {
	[SHAPE_POSITION] = SHAPE_ATTR("position", IB_ATTR_VEC3, def.localPosition),
	[SHAPE_ROTATION] = {.name = "rotation", .kind = IB_ATTR_QUAT, .offset = offsetof(shapeAttrs, def.localRotation),
	                    .excludes = "rotation_axis_angle"},
	[SHAPE_AXIS_ANGLE] = SHAPE_ATTR("rotation_axis_angle", IB_ATTR_AXIS_ANGLE, def.localRotation),
	[SHAPE_DENSITY] = SHAPE_ATTR("density", IB_ATTR_REAL, def.density),
	[SHAPE_MASS] = SHAPE_ATTR("mass", IB_ATTR_REAL, def.mass),
	[SHAPE_MATERIAL] = SHAPE_ATTR("material", IB_ATTR_STRING, material),
	[SHAPE_RESTITUTION] = SHAPE_ATTR("restitution", IB_ATTR_REAL, def.material.restitution),
	[SHAPE_STATIC_FRICTION] = SHAPE_ATTR("static_friction", IB_ATTR_REAL, def.material.staticFriction),
	[SHAPE_DYNAMIC_FRICTION] = SHAPE_ATTR("dynamic_friction", IB_ATTR_REAL, def.material.dynamicFriction),
};
/* clang-format on */

typedef struct shapeGeometry {
	ibSphere sphere;
	ibBox box;
	ibCapsule capsule;
	ibCylinder cylinder;
	ibSceneRealList vertices;
	ibSceneIntList triangles;
	ibSceneRealList points;
	const char* file;
	ibPlane plane;
} shapeGeometry;

/* clang-format off */
#define GEOMETRY_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(shapeGeometry, f), .flags = IB_ATTR_REQUIRED}
static const ibSceneAttr sphereAttrs[] = {GEOMETRY_ATTR("radius", IB_ATTR_REAL, sphere.radius)};
static const ibSceneAttr boxAttrs[] = {GEOMETRY_ATTR("half_extents", IB_ATTR_VEC3, box.halfExtents)};
static const ibSceneAttr capsuleAttrs[] = {GEOMETRY_ATTR("radius", IB_ATTR_REAL, capsule.radius),
                                           GEOMETRY_ATTR("half_length", IB_ATTR_REAL, capsule.halfLength)};
static const ibSceneAttr cylinderAttrs[] = {GEOMETRY_ATTR("radius", IB_ATTR_REAL, cylinder.radius),
                                            GEOMETRY_ATTR("half_length", IB_ATTR_REAL, cylinder.halfLength)};
static const ibSceneAttr meshAttrs[] = {
	{.name = "vertices", .kind = IB_ATTR_REAL_LIST, .offset = offsetof(shapeGeometry, vertices), .count = 3,
	 .excludes = "file"},
	{.name = "triangles", .kind = IB_ATTR_INT_LIST, .offset = offsetof(shapeGeometry, triangles), .count = 3,
	 .excludes = "file"},
	{.name = "file", .kind = IB_ATTR_STRING, .offset = offsetof(shapeGeometry, file)},
};
static const ibSceneAttr hullAttrs[] = {
	{.name = "points", .kind = IB_ATTR_REAL_LIST, .offset = offsetof(shapeGeometry, points), .count = 3,
	 .excludes = "file"},
	{.name = "file", .kind = IB_ATTR_STRING, .offset = offsetof(shapeGeometry, file)},
};
static const ibSceneAttr planeAttrs[] = {
	GEOMETRY_ATTR("normal", IB_ATTR_VEC3, plane.normal),
	{.name = "offset", .kind = IB_ATTR_REAL, .offset = offsetof(shapeGeometry, plane.offset)},
};
/* clang-format on */

typedef ibShapeId shapeCreateFn(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                                const shapeGeometry* g);

static ibShapeId createSphere(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                              const shapeGeometry* g)
{
	(void)L, (void)node;
	return ibCreateSphereShape(body, def, &g->sphere);
}

static ibShapeId createBox(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                           const shapeGeometry* g)
{
	(void)L, (void)node;
	return ibCreateBoxShape(body, def, &g->box);
}

static ibShapeId createCapsule(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                               const shapeGeometry* g)
{
	(void)L, (void)node;
	return ibCreateCapsuleShape(body, def, &g->capsule);
}

static ibShapeId createCylinder(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                                const shapeGeometry* g)
{
	(void)L, (void)node;
	return ibCreateCylinderShape(body, def, &g->cylinder);
}

/* Resolve file against the scene file's directory (absolute paths and memory loads: as given). */
static char* resolvePath(const ibSceneLoader* L, const char* file)
{
	const char* slash = L->path != NULL && file[0] != '/' ? strrchr(L->path, '/') : NULL;
	size_t dir = slash != NULL ? (size_t)(slash - L->path) + 1 : 0;
	char* full = malloc(dir + strlen(file) + 1);
	if (full == NULL) return NULL;
	memcpy(full, L->path != NULL ? L->path : "", dir);
	strcpy(full + dir, file);
	return full;
}

/* The mesh of an OBJ file named by the element (all-or-nothing; the error names the element's line). */
bool ibScene_LoadObjFile(ibSceneLoader* L, const xmlNode* node, const char* file, ibMesh* out)
{
	char* path = resolvePath(L, file);
	if (path == NULL) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
		return false;
	}
	char msg[600];
	ibResult r = ibLoadObj(path, out, msg, sizeof msg);
	free(path);
	if (r != IB_OK) {
		ibScene_Fail(L->err, r, ibScene_Line(node), "cannot read <%s> file '%s': %s",
		             (const char*)node->name, file, msg);
		return false;
	}
	return true;
}

/* Inline vertices/triangles or an OBJ file: the triangles as a mesh (v malloc'd when inline). */
static bool meshGeometry(ibSceneLoader* L, const xmlNode* node, const shapeGeometry* g, ibMesh* mesh, bool* fromFile)
{
	*fromFile = g->file != NULL;
	if (g->file != NULL) {
		if (!ibScene_LoadObjFile(L, node, g->file, mesh)) return false;
		if (mesh->triangleCount == 0) {
			ibScene_NodeError(L->err, node, "file '%s' has no faces", g->file);
			ibFreeObjMesh(mesh);
			return false;
		}
		return true;
	}
	if (g->vertices.count == 0 || g->triangles.count == 0) {
		ibScene_NodeError(L->err, node, "<%s> needs 'vertices' and 'triangles', or 'file'", (const char*)node->name);
		return false;
	}
	int vertexCount = g->vertices.count / 3;
	for (int i = 0; i < g->triangles.count; ++i) {
		int k = g->triangles.data[i];
		if (k < 0 || k >= vertexCount) {
			ibScene_NodeError(L->err, node,
			                  "triangle index %d (entry %d of 'triangles') is out of range: the mesh has %d vertices",
			                  k, i, vertexCount);
			return false;
		}
	}
	ibVec3* v = malloc((size_t)vertexCount * sizeof *v);
	if (v == NULL) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
		return false;
	}
	const double* p = g->vertices.data;
	for (int i = 0; i < vertexCount; ++i) v[i] = ibV3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
	*mesh = (ibMesh){v, vertexCount, g->triangles.data, g->triangles.count / 3};
	return true;
}

static void freeMeshGeometry(ibMesh* mesh, bool fromFile)
{
	if (fromFile)
		ibFreeObjMesh(mesh);
	else
		free((void*)mesh->vertices);
}

static ibShapeId createMesh(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                            const shapeGeometry* g)
{
	ibMesh mesh;
	bool fromFile;
	if (!meshGeometry(L, node, g, &mesh, &fromFile)) return IB_NULL_SHAPE;
	ibShapeId s = ibCreateMeshShape(body, def, &mesh);
	freeMeshGeometry(&mesh, fromFile);
	return s;
}

static ibShapeId createTriMesh(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                               const shapeGeometry* g)
{
	ibMesh mesh;
	bool fromFile;
	if (!meshGeometry(L, node, g, &mesh, &fromFile)) return IB_NULL_SHAPE;
	ibShapeId s = ibCreateTriMeshShape(body, def, &mesh);
	freeMeshGeometry(&mesh, fromFile);
	return s;
}

static ibShapeId createHull(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                            const shapeGeometry* g)
{
	ibMesh obj = {NULL, 0, NULL, 0};
	ibHull hull;
	ibVec3* v = NULL;
	if (g->file != NULL) { /* the file's vertices; its faces, if any, are not needed */
		if (!ibScene_LoadObjFile(L, node, g->file, &obj)) return IB_NULL_SHAPE;
		hull = (ibHull){obj.vertices, obj.vertexCount};
	} else {
		if (g->points.count == 0) {
			ibScene_NodeError(L->err, node, "<hull> needs 'points' or 'file'");
			return IB_NULL_SHAPE;
		}
		int n = g->points.count / 3;
		v = malloc((size_t)n * sizeof *v);
		if (v == NULL) {
			ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
			return IB_NULL_SHAPE;
		}
		for (int i = 0; i < n; ++i) v[i] = ibV3(g->points.data[3 * i], g->points.data[3 * i + 1], g->points.data[3 * i + 2]);
		hull = (ibHull){v, n};
	}
	ibShapeId s = ibCreateHullShape(body, def, &hull);
	free(v);
	ibFreeObjMesh(&obj);
	return s;
}

static ibShapeId createPlane(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibShapeDef* def,
                             const shapeGeometry* g)
{
	(void)L, (void)node;
	return ibCreatePlaneShape(body, def, &g->plane);
}

typedef struct shapeKind {
	const char* name;
	const ibSceneAttr* attrs;
	int count;
	shapeCreateFn* create;
} shapeKind;

/* clang-format off */
#define SHAPE_KIND(n, table, fn) {n, table, (int)(sizeof table / sizeof table[0]), fn}
static const shapeKind shapeKinds[] = {
	SHAPE_KIND("sphere", sphereAttrs, createSphere),       SHAPE_KIND("box", boxAttrs, createBox),
	SHAPE_KIND("capsule", capsuleAttrs, createCapsule),    SHAPE_KIND("cylinder", cylinderAttrs, createCylinder),
	SHAPE_KIND("mesh", meshAttrs, createMesh),             SHAPE_KIND("hull", hullAttrs, createHull),
	SHAPE_KIND("plane", planeAttrs, createPlane),          SHAPE_KIND("trimesh", meshAttrs, createTriMesh),
};
/* clang-format on */

/* Values the shape does not give itself come from its material. */
static bool applyMaterial(ibSceneLoader* L, const xmlNode* node, shapeAttrs* a, const bool* present)
{
	if (a->material == NULL) return true;
	const ibSceneMaterial* m = xmlHashLookup(L->materials, (const xmlChar*)a->material);
	if (m == NULL) {
		ibScene_NodeError(L->err, node, "unknown material '%s'", a->material);
		return false;
	}
	if (!present[SHAPE_DENSITY]) a->def.density = m->density;
	if (!present[SHAPE_RESTITUTION]) a->def.material.restitution = m->surface.restitution;
	if (!present[SHAPE_STATIC_FRICTION]) a->def.material.staticFriction = m->surface.staticFriction;
	if (!present[SHAPE_DYNAMIC_FRICTION]) a->def.material.dynamicFriction = m->surface.dynamicFriction;
	return true;
}

static bool readShape(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const shapeKind* kind)
{
	shapeAttrs a = {ibDefaultShapeDef(), NULL};
	shapeGeometry g;
	memset(&g, 0, sizeof g);
	bool present[SHAPE_ATTR_COUNT];
	ibSceneAttrSet sets[2] = {{shapeAttrTable, SHAPE_ATTR_COUNT, &a, present}, {kind->attrs, kind->count, &g, NULL}};
	bool ok = ibScene_CheckContent(L->err, node, false) && ibScene_ReadAttributes(L->err, node, sets, 2) &&
	          applyMaterial(L, node, &a, present);
	if (ok) {
		ibWorld_ClearError(L->world);
		ibShapeId s = kind->create(L, node, body, &a.def, &g);
		if (IB_IS_NULL(s)) {
			ibScene_NodeError(L->err, node, "cannot create <%s>: %s", kind->name, ibWorld_GetLastError(L->world));
			ok = false;
		}
	}
	free(g.vertices.data);
	free(g.triangles.data);
	free(g.points.data);
	return ok;
}

/* ---------------------------------------------------------------- <mass> */

typedef struct massAttrs {
	double value;
	ibVec3 center;
	double inertia[6]; /* Ixx Iyy Izz Ixy Ixz Iyz */
} massAttrs;

/* clang-format off */
static const ibSceneAttr massAttrTable[] = {
	{.name = "value", .kind = IB_ATTR_REAL, .offset = offsetof(massAttrs, value), .flags = IB_ATTR_REQUIRED},
	{.name = "center", .kind = IB_ATTR_VEC3, .offset = offsetof(massAttrs, center)},
	{.name = "inertia", .kind = IB_ATTR_REALS, .offset = offsetof(massAttrs, inertia), .count = 6,
	 .flags = IB_ATTR_REQUIRED},
};
/* clang-format on */

static bool readMass(ibSceneLoader* L, const xmlNode* node, ibBodyId body)
{
	massAttrs a = {0.0, IB_VEC3_ZERO, {0}};
	ibSceneAttrSet set = {massAttrTable, (int)(sizeof massAttrTable / sizeof massAttrTable[0]), &a, NULL};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	const double* I = a.inertia;
	ibMassData md = {a.value, a.center, {{{I[0], I[3], I[4]}, {I[3], I[1], I[5]}, {I[4], I[5], I[2]}}}};
	ibWorld_ClearError(L->world);
	if (ibBody_SetMassData(body, &md) != IB_OK) {
		ibScene_NodeError(L->err, node, "cannot set <mass>: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- <body> */

typedef struct bodyAttrs {
	ibBodyDef def;
	int type;
	const char* name;
} bodyAttrs;

/* clang-format off */
#define BODY_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(bodyAttrs, f)}
static const ibSceneAttr bodyAttrTable[] = {
	BODY_ATTR("name", IB_ATTR_STRING, name),
	{.name = "type", .kind = IB_ATTR_ENUM, .offset = offsetof(bodyAttrs, type), .values = ibScene_BodyTypes},
	BODY_ATTR("position", IB_ATTR_VEC3, def.position),
	{.name = "rotation", .kind = IB_ATTR_QUAT, .offset = offsetof(bodyAttrs, def.rotation),
	 .excludes = "rotation_axis_angle"},
	BODY_ATTR("rotation_axis_angle", IB_ATTR_AXIS_ANGLE, def.rotation),
	BODY_ATTR("linear_velocity", IB_ATTR_VEC3, def.linearVelocity),
	BODY_ATTR("angular_velocity", IB_ATTR_VEC3, def.angularVelocity),
	BODY_ATTR("linear_damping", IB_ATTR_REAL, def.linearDamping),
	BODY_ATTR("angular_damping", IB_ATTR_REAL, def.angularDamping),
	BODY_ATTR("gravity_scale", IB_ATTR_REAL, def.gravityScale),
	BODY_ATTR("solver_group", IB_ATTR_INT, def.solverGroup),
	BODY_ATTR("sleep", IB_ATTR_BOOL, def.enableSleep),
	BODY_ATTR("awake", IB_ATTR_BOOL, def.isAwake),
};
/* clang-format on */

static bool registerName(ibSceneLoader* L, const xmlNode* node, const char* name)
{
	const void* first = xmlHashLookup(L->bodyNames, (const xmlChar*)name);
	if (first != NULL) {
		ibScene_NodeError(L->err, node, "duplicate body name '%s' (first defined on line %ld)", name,
		                  (long)(intptr_t)first);
		return false;
	}
	long line = ibScene_Line(node);
	if (xmlHashAddEntry(L->bodyNames, (const xmlChar*)name, (void*)(intptr_t)(line > 0 ? line : 1)) != 0) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, line, "out of memory");
		return false;
	}
	return true;
}

/* The handle of a named body, for the joints that refer to it. */
static bool rememberBody(ibSceneLoader* L, const xmlNode* node, const char* name, ibBodyId body)
{
	ibBodyId* id = malloc(sizeof *id);
	if (id == NULL || (*id = body, xmlHashAddEntry(L->bodyIds, (const xmlChar*)name, id) != 0)) {
		free(id);
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
		return false;
	}
	return true;
}

/* Shapes in document order, then the <mass> override, then the pose and velocities again: adding
 * mass moves the centre of mass and the principal frame (each time rounding the body frame's pose
 * a little), and the file gives the final pose and centre-of-mass velocity. */
static bool readBodyContent(ibSceneLoader* L, const xmlNode* node, ibBodyId body, const ibBodyDef* def)
{
	const xmlNode* massNode = NULL;
	for (const xmlNode* c = node->children; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE) continue;
		if (ibScene_IsElement(c, "mass")) {
			if (massNode != NULL) {
				ibScene_NodeError(L->err, c, "duplicate <mass> element in <body>");
				return false;
			}
			massNode = c;
			continue;
		}
		const shapeKind* kind = NULL;
		for (size_t k = 0; k < sizeof shapeKinds / sizeof shapeKinds[0] && kind == NULL; ++k)
			if (ibScene_IsElement(c, shapeKinds[k].name)) kind = &shapeKinds[k];
		if (kind == NULL) {
			ibScene_BadElement(L->err, node, c);
			return false;
		}
		if (!readShape(L, c, body, kind)) return false;
	}
	if (massNode != NULL && !readMass(L, massNode, body)) return false;
	ibWorld_ClearError(L->world);
	if (ibBody_SetTransform(body, def->position, def->rotation) != IB_OK) {
		ibScene_NodeError(L->err, node, "cannot set the pose: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	if (def->type == IB_BODY_STATIC) return true;
	if (ibBody_SetLinearVelocity(body, def->linearVelocity) != IB_OK ||
	    ibBody_SetAngularVelocity(body, def->angularVelocity) != IB_OK) {
		ibScene_NodeError(L->err, node, "cannot set the velocity: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	return true;
}

static bool isZero(ibVec3 v) { return v.x == 0.0 && v.y == 0.0 && v.z == 0.0; }

bool ibScene_ReadBody(ibSceneLoader* L, const xmlNode* node)
{
	bodyAttrs a = {ibDefaultBodyDef(), 0, NULL};
	a.type = (int)a.def.type;
	ibSceneAttrSet set = {bodyAttrTable, (int)(sizeof bodyAttrTable / sizeof bodyAttrTable[0]), &a, NULL};
	if (!ibScene_CheckContent(L->err, node, true) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	a.def.type = (ibBodyType)a.type;
	a.def.name = a.name;
	if (a.name != NULL && !registerName(L, node, a.name)) return false;
	if (a.def.type == IB_BODY_STATIC && (!isZero(a.def.linearVelocity) || !isZero(a.def.angularVelocity))) {
		ibScene_NodeError(L->err, node, "a static body cannot have a velocity");
		return false;
	}
	ibWorld_ClearError(L->world);
	ibBodyId body = ibCreateBody(L->world, &a.def);
	if (IB_IS_NULL(body)) {
		ibScene_NodeError(L->err, node, "cannot create <body>: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	if (a.name != NULL && !rememberBody(L, node, a.name, body)) return false;
	if (!a.def.isAwake) { /* asleep at the end of the load (setting the pose and velocity wakes it) */
		if (L->asleepCount == L->asleepCapacity) {
			int cap = L->asleepCapacity * 2 + 8;
			ibBodyId* p = realloc(L->asleep, (size_t)cap * sizeof *p);
			if (p == NULL) {
				ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
				return false;
			}
			L->asleep = p;
			L->asleepCapacity = cap;
		}
		L->asleep[L->asleepCount++] = body;
	}
	return readBodyContent(L, node, body, &a.def);
}
