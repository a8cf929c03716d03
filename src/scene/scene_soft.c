/* <soft> (ibSoftBodyDef, inline vertex/triangle/tetrahedron/edge lists) and <soft_joint>
 * (ibSoftJointDef) elements of the scene format; see docs/scene-format.md and docs/soft.md. */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/hash.h>

#include "ibdyn/ibdyn.h"

typedef struct softAttrs {
	const char* name;
	ibSceneRealList vertices;
	ibSceneIntList triangles, tetrahedra, edges, pinned;
	ibSceneRealList masses;
	double density, stretch, bendingCompliance, volumeCompliance, damping, gravityScale, tolerance;
	ibVec3 velocity;
	int bending, maxIterations;
	bool preserveVolume;
} softAttrs;

static const ibSceneEnum bendingModels[] = {{"none", IB_SOFT_BENDING_NONE}, {"distance", IB_SOFT_BENDING_DISTANCE},
                                            {"dihedral", IB_SOFT_BENDING_DIHEDRAL}, {NULL, 0}};

/* clang-format off */
#define SA(n, k, f) {.name = n, .kind = k, .offset = offsetof(softAttrs, f)}
#define SL(n, k, f, c) {.name = n, .kind = k, .offset = offsetof(softAttrs, f), .count = c}
static const ibSceneAttr softAttrTable[] = {
	SA("name", IB_ATTR_STRING, name),
	{.name = "vertices", .kind = IB_ATTR_REAL_LIST, .offset = offsetof(softAttrs, vertices), .count = 3, .flags = IB_ATTR_REQUIRED},
	SL("triangles", IB_ATTR_INT_LIST, triangles, 3),   SL("tetrahedra", IB_ATTR_INT_LIST, tetrahedra, 4),
	SL("edges", IB_ATTR_INT_LIST, edges, 2),           SL("pinned", IB_ATTR_INT_LIST, pinned, 1),
	SL("masses", IB_ATTR_REAL_LIST, masses, 1),
	SA("density", IB_ATTR_REAL, density),              SA("stretch_compliance", IB_ATTR_REAL, stretch),
	{.name = "bending", .kind = IB_ATTR_ENUM, .offset = offsetof(softAttrs, bending), .values = bendingModels},
	SA("bending_compliance", IB_ATTR_REAL, bendingCompliance),
	SA("preserve_volume", IB_ATTR_BOOL, preserveVolume), SA("volume_compliance", IB_ATTR_REAL, volumeCompliance),
	SA("damping", IB_ATTR_REAL, damping),              SA("gravity_scale", IB_ATTR_REAL, gravityScale),
	SA("tolerance", IB_ATTR_REAL, tolerance),          SA("max_iterations", IB_ATTR_INT, maxIterations),
	SA("velocity", IB_ATTR_VEC3, velocity),
};
/* clang-format on */

static void freeSoftAttrs(softAttrs* a)
{
	free(a->vertices.data);
	free(a->triangles.data);
	free(a->tetrahedra.data);
	free(a->edges.data);
	free(a->pinned.data);
	free(a->masses.data);
}

bool ibScene_ReadSoft(ibSceneLoader* L, const xmlNode* node)
{
	ibSoftBodyDef d = ibDefaultSoftBodyDef();
	softAttrs a;
	memset(&a, 0, sizeof a);
	a.density = d.density;
	a.gravityScale = d.gravityScale;
	ibSceneAttrSet set = {softAttrTable, (int)(sizeof softAttrTable / sizeof softAttrTable[0]), &a, NULL};
	bool ok = ibScene_CheckContent(L->err, node, false) && ibScene_ReadAttributes(L->err, node, &set, 1);
	int nv = a.vertices.count / 3;
	if (ok && a.masses.data && a.masses.count != nv) {
		ibScene_NodeError(L->err, node, "'masses' has %d entries for %d vertices", a.masses.count, nv);
		ok = false;
	}
	ibVec3* v = ok ? malloc(sizeof(ibVec3) * (size_t)(nv > 0 ? nv : 1)) : NULL;
	if (ok && !v) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
		ok = false;
	}
	if (ok) {
		for (int i = 0; i < nv; ++i) v[i] = ibV3(a.vertices.data[3 * i], a.vertices.data[3 * i + 1], a.vertices.data[3 * i + 2]);
		d.vertices = v;
		d.vertexCount = nv;
		d.triangles = a.triangles.data;
		d.triangleCount = a.triangles.count / 3;
		d.tetrahedra = a.tetrahedra.data;
		d.tetrahedronCount = a.tetrahedra.count / 4;
		d.edges = a.edges.data;
		d.edgeCount = a.edges.count / 2;
		d.pinned = a.pinned.data;
		d.pinnedCount = a.pinned.count;
		d.vertexMasses = a.masses.data;
		d.density = a.density;
		d.stretchCompliance = a.stretch;
		d.bending = (ibSoftBending)a.bending;
		d.bendingCompliance = a.bendingCompliance;
		d.preserveVolume = a.preserveVolume;
		d.volumeCompliance = a.volumeCompliance;
		d.linearDamping = a.damping;
		d.gravityScale = a.gravityScale;
		d.positionTolerance = a.tolerance;
		d.maxIterations = a.maxIterations;
		d.linearVelocity = a.velocity;
		d.name = a.name;
		if (a.name && !IB_IS_NULL(ibWorld_FindSoftBody(L->world, a.name))) {
			ibScene_NodeError(L->err, node, "duplicate soft body name '%s'", a.name);
			ok = false;
		} else if (IB_IS_NULL(ibCreateSoftBody(L->world, &d))) {
			ibScene_NodeError(L->err, node, "cannot create <soft>: %s", ibWorld_GetLastError(L->world));
			ok = false;
		}
	}
	free(v);
	freeSoftAttrs(&a);
	return ok;
}

typedef struct softJointAttrs {
	int type;
	const char *name, *body, *soft;
	int triangle, vertex;
	ibVec3 point;
} softJointAttrs;

static const ibSceneEnum softJointTypes[] = {{"triangle", IB_SOFT_JOINT_TRIANGLE}, {"vertex", IB_SOFT_JOINT_VERTEX}, {NULL, 0}};

/* clang-format off */
#define SJ(n, k, f) {.name = n, .kind = k, .offset = offsetof(softJointAttrs, f)}
static const ibSceneAttr softJointAttrTable[] = {
	{.name = "type", .kind = IB_ATTR_ENUM, .offset = offsetof(softJointAttrs, type), .values = softJointTypes, .flags = IB_ATTR_REQUIRED},
	SJ("name", IB_ATTR_STRING, name),
	{.name = "body", .kind = IB_ATTR_STRING, .offset = offsetof(softJointAttrs, body), .flags = IB_ATTR_REQUIRED},
	{.name = "soft", .kind = IB_ATTR_STRING, .offset = offsetof(softJointAttrs, soft), .flags = IB_ATTR_REQUIRED},
	SJ("triangle", IB_ATTR_INT, triangle), SJ("vertex", IB_ATTR_INT, vertex), SJ("point", IB_ATTR_VEC3, point),
};
/* clang-format on */
enum { SJ_POINT = 6, SJ_COUNT = sizeof softJointAttrTable / sizeof softJointAttrTable[0] };

bool ibScene_ReadSoftJoint(ibSceneLoader* L, const xmlNode* node)
{
	softJointAttrs a;
	memset(&a, 0, sizeof a);
	bool present[SJ_COUNT] = {false};
	ibSceneAttrSet set = {softJointAttrTable, SJ_COUNT, &a, present};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	const ibBodyId* body = xmlHashLookup(L->bodyIds, (const xmlChar*)a.body);
	if (!body) {
		ibScene_NodeError(L->err, node, "unknown body '%s' in <soft_joint>", a.body);
		return false;
	}
	ibSoftBodyId soft = ibWorld_FindSoftBody(L->world, a.soft);
	if (IB_IS_NULL(soft)) {
		ibScene_NodeError(L->err, node, "unknown soft body '%s' in <soft_joint>", a.soft);
		return false;
	}
	if (a.type == IB_SOFT_JOINT_TRIANGLE && !present[SJ_POINT]) {
		ibScene_NodeError(L->err, node, "a triangle <soft_joint> needs 'point' (the world attachment point)");
		return false;
	}
	ibSoftJointDef d = ibDefaultSoftJointDef();
	d.type = (ibSoftJointType)a.type;
	d.body = *body;
	d.soft = soft;
	d.triangle = a.triangle;
	d.vertex = a.vertex;
	d.worldPoint = a.point;
	d.useWorldPoint = present[SJ_POINT];
	d.name = a.name;
	if (IB_IS_NULL(ibCreateSoftJoint(L->world, &d))) {
		ibScene_NodeError(L->err, node, "cannot create <soft_joint>: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	return true;
}
