/* Shapes attached to bodies: geometry, local pose, density/mass and material (§4.1: compound
 * bodies are several shapes on one body). Creating or destroying a shape updates the body's mass. */
#include <math.h>
#include <string.h>

#include "collision/hull.h"
#include "collision/trimesh.h"
#include "dynamics/world.h"

static ibResult validate_def(ibWorld* w, const ibShapeDef* d)
{
	if (!d) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape definition is NULL");
	if (d->internalValue != IB_DEF_MAGIC)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape definition not initialised with ibDefaultShapeDef()");
	if (!ibVec3_IsFinite(d->localPosition)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape position must be finite");
	double qn = ibQuatNormSq(d->localRotation);
	if (!ibQuat_IsFinite(d->localRotation) || !(qn > 1e-300) || !isfinite(qn))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape rotation must be a finite non-zero quaternion");
	if (!(isfinite(d->density) && d->density > 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "density must be finite and > 0 (got %g)", d->density);
	if (!(isfinite(d->mass) && d->mass >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape mass must be finite and >= 0 (0 = from density), got %g",
		                d->mass);
	const ibMaterial* m = &d->material;
	if (!(isfinite(m->restitution) && m->restitution >= 0.0 && m->restitution <= 1.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "restitution must be in [0, 1] (got %g)", m->restitution);
	if (!(isfinite(m->staticFriction) && m->staticFriction >= 0.0 && isfinite(m->dynamicFriction) &&
	      m->dynamicFriction >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "friction coefficients must be finite and >= 0");
	return IB_OK;
}

static const char* const shapeNames[IB_SHAPE_TYPE_COUNT] = {"sphere", "box",   "capsule", "cylinder",
                                                            "mesh",   "hull", "plane",   "triangle mesh"};

void ib_shape_free_data(ibWorld* w, ibShape* s)
{
	ib_free(w, s->meshVertices, (size_t)s->meshVertexCount * sizeof(ibVec3));
	ib_free(w, s->meshIndices, (size_t)s->meshTriangleCount * 3 * sizeof(int));
	ib_hull_free(w, s->hull);
	ib_trimesh_free(w, s->trimesh);
	s->meshVertices = NULL;
	s->meshIndices = NULL;
	s->hull = NULL;
	s->trimesh = NULL;
}

/* Geometry data built before create_shape (hull, triangle tree): owned by the new shape on
 * success, freed by create_shape on failure. */
typedef struct ownedGeometry {
	ibHullGeom* hull;
	ibTriMeshGeom* trimesh;
} ownedGeometry;

static void free_owned(ibWorld* w, ownedGeometry* o)
{
	if (!o) return;
	ib_hull_free(w, o->hull);
	ib_trimesh_free(w, o->trimesh);
}

/* Common part of all ibCreate*Shape: md is the geometry's mass data (shape frame) at the def's
 * density (mass == NULL: massless shape for static/kinematic bodies only); mesh data (copied here)
 * may be NULL; own (may be NULL) passes built geometry to the new shape. */
static ibShapeId create_shape(ibBodyId bodyId, const ibShapeDef* d, ibShapeType type, const void* geom,
                              size_t geomSize, ibResult (*mass)(const void*, double, ibMassData*), const ibMesh* mesh,
                              ownedGeometry* own)
{
	ibWorld* w;
	ibBody* b = ib_body_get(bodyId, &w);
	if (!b) return IB_NULL_SHAPE; /* callers with own data checked the body first */
	if (validate_def(w, d) != IB_OK) {
		free_owned(w, own);
		return IB_NULL_SHAPE;
	}
	if (!geom) {
		free_owned(w, own);
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape geometry is NULL");
		return IB_NULL_SHAPE;
	}
	ibMassData md = {0.0, IB_VEC3_ZERO, ibMat3_Zero()};
	if (!mass && ib_is_dynamic(b)) {
		free_owned(w, own);
		ib_error(w, IB_ERR_WRONG_BODY_TYPE, "a %s shape has no mass: only static and kinematic bodies can have one",
		         shapeNames[type]);
		return IB_NULL_SHAPE;
	}
	ibResult r = mass ? mass(geom, d->density, &md) : IB_OK;
	if (r != IB_OK) {
		free_owned(w, own);
		if (type == IB_SHAPE_HULL)
			ib_error(w, r, "hull points are nearly coplanar: the hull's volume is not clearly positive");
		else
			ib_error(w, r, "invalid %s geometry (non-finite, non-positive size or degenerate mesh)", shapeNames[type]);
		return IB_NULL_SHAPE;
	}
	if (d->mass > 0.0 && mass) md = ibMassData_ScaleToMass(&md, d->mass);
	ibQuat lr = ib_quat_unit(d->localRotation);
	if (mass) md = ibMassData_Transform(&md, d->localPosition, lr);

	ibVec3* verts = NULL;
	int* idx = NULL;
	if (mesh) {
		verts = ib_alloc(w, (size_t)mesh->vertexCount * sizeof(ibVec3));
		idx = ib_alloc(w, (size_t)mesh->triangleCount * 3 * sizeof(int));
		if (!verts || !idx) {
			ib_free(w, verts, (size_t)mesh->vertexCount * sizeof(ibVec3));
			ib_free(w, idx, (size_t)mesh->triangleCount * 3 * sizeof(int));
			free_owned(w, own);
			ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory copying mesh");
			return IB_NULL_SHAPE;
		}
		memcpy(verts, mesh->vertices, (size_t)mesh->vertexCount * sizeof(ibVec3));
		memcpy(idx, mesh->indices, (size_t)mesh->triangleCount * 3 * sizeof(int));
	}
	int32_t index = w->shapeFree;
	if (index == IB_NULL_INDEX &&
	    !ib_grow(w, (void**)&w->shapes, &w->shapeCapacity, w->shapeHigh + 1, sizeof(ibShape))) {
		ib_free(w, verts, mesh ? (size_t)mesh->vertexCount * sizeof(ibVec3) : 0);
		ib_free(w, idx, mesh ? (size_t)mesh->triangleCount * 3 * sizeof(int) : 0);
		free_owned(w, own);
		ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating shape");
		return IB_NULL_SHAPE;
	}
	b = &w->bodies[bodyId.index1 - 1]; /* bodies array unchanged, but keep the pattern safe */
	if (index == IB_NULL_INDEX) {
		index = w->shapeHigh++;
		w->shapes[index].generation = (uint16_t)(w->generation * 7919u);
	} else {
		w->shapeFree = w->shapes[index].nextFree;
	}
	ibShape* s = &w->shapes[index];
	uint16_t gen = (uint16_t)(s->generation + 1u);
	memset(s, 0, sizeof *s);
	s->generation = gen ? gen : 1;
	s->inUse = true;
	s->type = type;
	memcpy(&s->g, geom, geomSize);
	s->meshVertices = verts;
	s->meshIndices = idx;
	s->meshVertexCount = mesh ? mesh->vertexCount : 0;
	s->meshTriangleCount = mesh ? mesh->triangleCount : 0;
	s->hull = own ? own->hull : NULL;
	s->trimesh = own ? own->trimesh : NULL;
	s->body = bodyId.index1 - 1;
	s->nextInBody = IB_NULL_INDEX;
	s->nextFree = IB_NULL_INDEX;
	s->localPosition = d->localPosition;
	s->localRotation = lr;
	s->density = d->density;
	s->explicitMass = d->mass;
	s->material = d->material;
	s->filter = d->filter;
	s->massData = md;
	s->userData = d->userData;
	/* link at the tail (creation order) */
	if (b->lastShape == IB_NULL_INDEX)
		b->firstShape = index;
	else
		w->shapes[b->lastShape].nextInBody = index;
	b->lastShape = index;
	b->shapeCount++;
	w->shapeCount++;
	w->sleepStamp++; /* no proxy yet: the broadphase cannot answer wake queries for it */
	ibShapeId id = {index + 1, w->slot, s->generation};
	if (ib_is_dynamic(b) && !b->massOverride && ib_body_update_mass(w, b) != IB_OK) {
		char msg[sizeof w->lastError];
		memcpy(msg, w->lastError, sizeof msg);
		ibDestroyShape(id);
		ib_error(w, IB_ERR_DEGENERATE, "%s", msg);
		return IB_NULL_SHAPE;
	}
	return id;
}

static ibResult sphere_mass(const void* g, double rho, ibMassData* md) { return ibComputeSphereMass(g, rho, md); }
static ibResult box_mass(const void* g, double rho, ibMassData* md) { return ibComputeBoxMass(g, rho, md); }
static ibResult capsule_mass(const void* g, double rho, ibMassData* md) { return ibComputeCapsuleMass(g, rho, md); }
static ibResult cylinder_mass(const void* g, double rho, ibMassData* md) { return ibComputeCylinderMass(g, rho, md); }
static ibResult mesh_mass(const void* g, double rho, ibMassData* md) { return ibComputeMeshMass(g, rho, md); }

ibShapeId ibCreateSphereShape(ibBodyId body, const ibShapeDef* d, const ibSphere* g)
{
	return create_shape(body, d, IB_SHAPE_SPHERE, g, sizeof *g, sphere_mass, NULL, NULL);
}

ibShapeId ibCreateBoxShape(ibBodyId body, const ibShapeDef* d, const ibBox* g)
{
	return create_shape(body, d, IB_SHAPE_BOX, g, sizeof *g, box_mass, NULL, NULL);
}

ibShapeId ibCreateCapsuleShape(ibBodyId body, const ibShapeDef* d, const ibCapsule* g)
{
	return create_shape(body, d, IB_SHAPE_CAPSULE, g, sizeof *g, capsule_mass, NULL, NULL);
}

ibShapeId ibCreateCylinderShape(ibBodyId body, const ibShapeDef* d, const ibCylinder* g)
{
	return create_shape(body, d, IB_SHAPE_CYLINDER, g, sizeof *g, cylinder_mass, NULL, NULL);
}

ibShapeId ibCreateMeshShape(ibBodyId body, const ibShapeDef* d, const ibMesh* g)
{
	ibWorld* w;
	if (!ib_body_get(body, &w)) return IB_NULL_SHAPE;
	if (!g || !g->vertices || !g->indices || g->vertexCount < 4 || g->triangleCount < 4) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "mesh needs >= 4 vertices and >= 4 triangles with non-NULL arrays");
		return IB_NULL_SHAPE;
	}
	return create_shape(body, d, IB_SHAPE_MESH, g, 0, mesh_mass, g, NULL);
}

static ibResult hull_mass(const void* g, double rho, ibMassData* md) { return ib_hull_mass(g, rho, md); }

ibShapeId ibCreateHullShape(ibBodyId body, const ibShapeDef* d, const ibHull* g)
{
	ibWorld* w;
	if (!ib_body_get(body, &w)) return IB_NULL_SHAPE;
	if (!g) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape geometry is NULL");
		return IB_NULL_SHAPE;
	}
	if (validate_def(w, d) != IB_OK) return IB_NULL_SHAPE; /* before the (costly) hull */
	ownedGeometry own = {NULL, NULL};
	if (ib_hull_build(w, g->points, g->pointCount, &own.hull) != IB_OK) return IB_NULL_SHAPE;
	return create_shape(body, d, IB_SHAPE_HULL, own.hull, 0, hull_mass, NULL, &own);
}

ibShapeId ibCreatePlaneShape(ibBodyId body, const ibShapeDef* d, const ibPlane* g)
{
	ibWorld* w;
	if (!ib_body_get(body, &w)) return IB_NULL_SHAPE;
	if (!g) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "shape geometry is NULL");
		return IB_NULL_SHAPE;
	}
	double len = ibLength(g->normal);
	if (!ibVec3_IsFinite(g->normal) || !isfinite(g->offset) || !(len > 1e-150) || !isfinite(len)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "plane needs a finite non-zero normal and a finite offset");
		return IB_NULL_SHAPE;
	}
	/* unit normal, unchanged when it already is one to rounding (bit-exact round trips) */
	double l2 = ibLengthSq(g->normal) - 1.0;
	ibPlane p = {(l2 <= 4.5e-16 && l2 >= -4.5e-16) ? g->normal : ibScale(1.0 / len, g->normal), g->offset};
	return create_shape(body, d, IB_SHAPE_PLANE, &p, sizeof p, NULL, NULL, NULL);
}

ibShapeId ibCreateTriMeshShape(ibBodyId body, const ibShapeDef* d, const ibMesh* g)
{
	ibWorld* w;
	ibBody* b = ib_body_get(body, &w);
	if (!b) return IB_NULL_SHAPE;
	if (validate_def(w, d) != IB_OK) return IB_NULL_SHAPE;
	if (ib_is_dynamic(b)) {
		ib_error(w, IB_ERR_WRONG_BODY_TYPE,
		         "a triangle mesh shape has no mass: only static and kinematic bodies can have one");
		return IB_NULL_SHAPE;
	}
	ownedGeometry own = {NULL, NULL};
	if (ib_trimesh_build(w, g, &own.trimesh) != IB_OK) return IB_NULL_SHAPE;
	return create_shape(body, d, IB_SHAPE_TRIMESH, own.trimesh, 0, NULL, NULL, &own);
}

ibResult ibDestroyShape(ibShapeId id)
{
	ibWorld* w;
	ibShape* s = ib_shape_get(id, &w);
	if (!s) return IB_ERR_STALE_HANDLE;
	ibBody* b = &w->bodies[s->body];
	int32_t index = id.index1 - 1, prev = IB_NULL_INDEX;
	for (int32_t c = b->firstShape; c != index; c = w->shapes[c].nextInBody) prev = c;
	if (prev == IB_NULL_INDEX)
		b->firstShape = s->nextInBody;
	else
		w->shapes[prev].nextInBody = s->nextInBody;
	if (b->lastShape == index) b->lastShape = prev;
	b->shapeCount--;
	ib_shape_free_data(w, s);
	s->inUse = false;
	s->nextFree = w->shapeFree;
	w->shapeFree = index;
	w->shapeCount--;
	if (ib_is_dynamic(b) && !b->massOverride) ib_body_update_mass(w, b);
	return IB_OK;
}

bool ibShape_IsValid(ibShapeId id)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (!w || id.index1 <= 0 || id.index1 > w->shapeHigh) return false;
	ibShape* s = &w->shapes[id.index1 - 1];
	return s->inUse && s->generation == id.generation;
}

#define GET_SHAPE_OR(ret)                 \
	ibWorld* w;                           \
	ibShape* s = ib_shape_get(id, &w);    \
	if (!s) return ret

ibShapeType ibShape_GetType(ibShapeId id)
{
	GET_SHAPE_OR(IB_SHAPE_TYPE_COUNT);
	return s->type;
}

ibBodyId ibShape_GetBody(ibShapeId id)
{
	GET_SHAPE_OR(IB_NULL_BODY);
	return ib_body_id(w, s->body);
}

ibSphere ibShape_GetSphere(ibShapeId id)
{
	ibSphere z = {0};
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_SPHERE ? s->g.sphere : z;
}

ibBox ibShape_GetBox(ibShapeId id)
{
	ibBox z = {{0, 0, 0}};
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_BOX ? s->g.box : z;
}

ibCapsule ibShape_GetCapsule(ibShapeId id)
{
	ibCapsule z = {0, 0};
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_CAPSULE ? s->g.capsule : z;
}

ibCylinder ibShape_GetCylinder(ibShapeId id)
{
	ibCylinder z = {0, 0};
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_CYLINDER ? s->g.cylinder : z;
}

ibMesh ibShape_GetMesh(ibShapeId id)
{
	ibMesh z = {NULL, 0, NULL, 0};
	GET_SHAPE_OR(z);
	if (s->type == IB_SHAPE_TRIMESH)
		return (ibMesh){s->trimesh->vertices, s->trimesh->vertexCount, s->trimesh->indices, s->trimesh->triangleCount};
	if (s->type != IB_SHAPE_MESH) return z;
	return (ibMesh){s->meshVertices, s->meshVertexCount, s->meshIndices, s->meshTriangleCount};
}

ibHullData ibShape_GetHull(ibShapeId id)
{
	ibHullData z;
	memset(&z, 0, sizeof z);
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_HULL ? s->hull->view : z;
}

ibPlane ibShape_GetPlane(ibShapeId id)
{
	ibPlane z = {{0, 0, 0}, 0};
	GET_SHAPE_OR(z);
	return s->type == IB_SHAPE_PLANE ? s->g.plane : z;
}

ibVec3 ibShape_GetLocalPosition(ibShapeId id)
{
	GET_SHAPE_OR(IB_VEC3_ZERO);
	return s->localPosition;
}

ibQuat ibShape_GetLocalRotation(ibShapeId id)
{
	GET_SHAPE_OR(IB_QUAT_IDENTITY);
	return s->localRotation;
}

double ibShape_GetDensity(ibShapeId id)
{
	GET_SHAPE_OR(0.0);
	return s->density;
}

double ibShape_GetExplicitMass(ibShapeId id)
{
	GET_SHAPE_OR(0.0);
	return s->explicitMass;
}

ibMassData ibShape_GetMassData(ibShapeId id)
{
	ibMassData z = {0};
	GET_SHAPE_OR(z);
	return s->massData;
}

ibMaterial ibShape_GetMaterial(ibShapeId id)
{
	ibMaterial z = {0, 0, 0};
	GET_SHAPE_OR(z);
	return s->material;
}

ibResult ibShape_SetMaterial(ibShapeId id, ibMaterial m)
{
	GET_SHAPE_OR(IB_ERR_STALE_HANDLE);
	if (!(isfinite(m.restitution) && m.restitution >= 0.0 && m.restitution <= 1.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "restitution must be in [0, 1] (got %g)", m.restitution);
	if (!(isfinite(m.staticFriction) && m.staticFriction >= 0.0 && isfinite(m.dynamicFriction) &&
	      m.dynamicFriction >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "friction coefficients must be finite and >= 0");
	s->material = m;
	return IB_OK;
}

void* ibShape_GetUserData(ibShapeId id)
{
	GET_SHAPE_OR(NULL);
	return s->userData;
}
