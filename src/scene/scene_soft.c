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
	const char *name, *file;
	ibSceneRealList vertices, positions, velocities;
	ibSceneIntList triangles, tetrahedra, edges, pinned;
	ibSceneRealList masses;
	double density, stretch, bendingCompliance, volumeCompliance, damping, gravityScale, tolerance;
	ibVec3 velocity;
	int bending, maxIterations, solver;
	bool preserveVolume;
} softAttrs;

static const ibSceneEnum softSolvers[] = {{"gauss_seidel", IB_SOFT_SOLVER_GAUSS_SEIDEL}, {"sparse", IB_SOFT_SOLVER_SPARSE}, {"auto", IB_SOFT_SOLVER_AUTO}, {NULL, 0}};
static const ibSceneEnum bendingModels[] = {{"none", IB_SOFT_BENDING_NONE}, {"distance", IB_SOFT_BENDING_DISTANCE},
                                            {"dihedral", IB_SOFT_BENDING_DIHEDRAL}, {NULL, 0}};

/* clang-format off */
#define SA(n, k, f) {.name = n, .kind = k, .offset = offsetof(softAttrs, f)}
#define SL(n, k, f, c) {.name = n, .kind = k, .offset = offsetof(softAttrs, f), .count = c}
static const ibSceneAttr softAttrTable[] = {
	SA("name", IB_ATTR_STRING, name),
	SL("vertices", IB_ATTR_REAL_LIST, vertices, 3),    SA("file", IB_ATTR_STRING, file),
	SL("positions", IB_ATTR_REAL_LIST, positions, 3),  SL("velocities", IB_ATTR_REAL_LIST, velocities, 3),
	{.name = "solver", .kind = IB_ATTR_ENUM, .offset = offsetof(softAttrs, solver), .values = softSolvers},
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
	free(a->positions.data);
	free(a->velocities.data);
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
	a.solver = d.solver;
	ibSceneAttrSet set = {softAttrTable, (int)(sizeof softAttrTable / sizeof softAttrTable[0]), &a, NULL};
	bool ok = ibScene_CheckContent(L->err, node, false) && ibScene_ReadAttributes(L->err, node, &set, 1);
	ibMesh mesh = {0};
	bool fromFile = false;
	if (ok && (a.file != NULL) == (a.vertices.data != NULL)) {
		ibScene_NodeError(L->err, node, "<soft> needs either 'vertices' or 'file' (an OBJ triangle mesh)");
		ok = false;
	} else if (ok && a.file) {
		if (a.triangles.data) {
			ibScene_NodeError(L->err, node, "<soft file=...> takes its triangles from the file; drop 'triangles'");
			ok = false;
		} else if ((ok = ibScene_LoadObjFile(L, node, a.file, &mesh))) {
			fromFile = true;
			double* xyz = malloc(sizeof(double) * 3 * (size_t)(mesh.vertexCount > 0 ? mesh.vertexCount : 1));
			int* tri = malloc(sizeof(int) * 3 * (size_t)(mesh.triangleCount > 0 ? mesh.triangleCount : 1));
			if (!xyz || !tri) {
				free(xyz);
				free(tri);
				ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
				ok = false;
			} else {
				for (int i = 0; i < mesh.vertexCount; ++i) {
					xyz[3 * i] = mesh.vertices[i].x;
					xyz[3 * i + 1] = mesh.vertices[i].y;
					xyz[3 * i + 2] = mesh.vertices[i].z;
				}
				memcpy(tri, mesh.indices, sizeof(int) * 3 * (size_t)mesh.triangleCount);
				a.vertices = (ibSceneRealList){xyz, 3 * mesh.vertexCount};
				a.triangles = (ibSceneIntList){tri, 3 * mesh.triangleCount};
			}
		}
	}
	if (fromFile) ibFreeObjMesh(&mesh);
	int nv = a.vertices.count / 3;
	if (ok && ((a.positions.data && a.positions.count != 3 * nv) || (a.velocities.data && a.velocities.count != 3 * nv))) {
		ibScene_NodeError(L->err, node, "'positions' and 'velocities' need 3 numbers for each of the %d vertices", nv);
		ok = false;
	}
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
		d.solver = (ibSoftSolver)a.solver;
		d.linearVelocity = a.velocity;
		d.name = a.name;
		ibSoftBodyId sb = IB_NULL_SOFT_BODY;
		if (a.name && !IB_IS_NULL(ibWorld_FindSoftBody(L->world, a.name))) {
			ibScene_NodeError(L->err, node, "duplicate soft body name '%s'", a.name);
			ok = false;
		} else if (IB_IS_NULL(sb = ibCreateSoftBody(L->world, &d))) {
			ibScene_NodeError(L->err, node, "cannot create <soft>: %s", ibWorld_GetLastError(L->world));
			ok = false;
		}
		/* current state (written by ibSaveScene): positions and velocities beside the rest shape */
		for (int i = 0; ok && i < nv; ++i) {
			const double* x = a.positions.data ? a.positions.data + 3 * i : NULL;
			const double* u = a.velocities.data ? a.velocities.data + 3 * i : NULL;
			if (x && ibSoftBody_SetPosition(sb, i, ibV3(x[0], x[1], x[2])) != IB_OK) ok = false;
			if (ok && u && !ibSoftBody_IsPinned(sb, i) && ibSoftBody_SetVelocity(sb, i, ibV3(u[0], u[1], u[2])) != IB_OK)
				ok = false;
			if (!ok) ibScene_NodeError(L->err, node, "<soft> vertex %d: %s", i, ibWorld_GetLastError(L->world));
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
	ibVec3 point, anchor;
	double coordinates[4];
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
	{.name = "coordinates", .kind = IB_ATTR_REALS, .offset = offsetof(softJointAttrs, coordinates), .count = 4},
	SJ("anchor", IB_ATTR_VEC3, anchor),
};
/* clang-format on */
enum { SJ_POINT = 6, SJ_COORDINATES = 7, SJ_ANCHOR = 8, SJ_COUNT = sizeof softJointAttrTable / sizeof softJointAttrTable[0] };

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
	bool local = present[SJ_ANCHOR];
	if (local && a.type == IB_SOFT_JOINT_TRIANGLE && !present[SJ_COORDINATES]) {
		ibScene_NodeError(L->err, node, "a triangle <soft_joint> with 'anchor' needs 'coordinates' (alpha beta gamma delta)");
		return false;
	}
	if (present[SJ_COORDINATES] && !local) {
		ibScene_NodeError(L->err, node, "<soft_joint> 'coordinates' need 'anchor' (the body-frame anchor)");
		return false;
	}
	if (local && present[SJ_POINT]) {
		ibScene_NodeError(L->err, node, "<soft_joint> takes either 'point' or 'anchor' (with 'coordinates'), not both");
		return false;
	}
	if (a.type == IB_SOFT_JOINT_TRIANGLE && !present[SJ_POINT] && !local) {
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
	d.useCoordinates = local;
	memcpy(d.coordinates, a.coordinates, sizeof d.coordinates);
	d.localAnchor = a.anchor;
	d.name = a.name;
	if (IB_IS_NULL(ibCreateSoftJoint(L->world, &d))) {
		ibScene_NodeError(L->err, node, "cannot create <soft_joint>: %s", ibWorld_GetLastError(L->world));
		return false;
	}
	return true;
}
