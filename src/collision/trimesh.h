/* Static triangle mesh (IB_SHAPE_TRIMESH): a copy of the triangles, a bounding-volume tree (AABB
 * tree over the triangles, built once at creation, median splits) for box and ray queries in the
 * shape frame, and the triangles across each edge with the edges' kinds (trimesh_edges.c) for the
 * one-sided contacts (trimesh_contact.c). Queries allocate nothing. Internal, not installed. */
#ifndef IBDYN_SRC_TRIMESH_H
#define IBDYN_SRC_TRIMESH_H

#include "collision/collision_world.h"
#include "collision/convex.h"
#include "dynamics/world.h"

/* Tree depth bound: median splits give depth <= log2(triangles) + 1, far below this. */
#define IB_TRIMESH_MAX_DEPTH 64
/* Triangles per leaf. */
#define IB_TRIMESH_LEAF_SIZE 4

typedef struct ibTriMeshNode {
	ibAABB box;    /* bounds of the node's triangles (shape frame) */
	int32_t first; /* leaf: first slot in order[]; inner: index of the left child (right = first + 1) */
	int32_t count; /* leaf: number of triangles (> 0); inner: 0 */
} ibTriMeshNode;

/* One world-allocator block: this header, then the arrays. */
typedef struct ibTriMeshGeom {
	ibVec3* vertices;
	int* indices; /* 3 per triangle */
	int vertexCount, triangleCount;
	ibTriMeshNode* nodes; /* nodes[0] is the root */
	int nodeCount;
	int* order;     /* triangle indices, leaf by leaf */
	ibAABB* triBox; /* bounds of each triangle */
	int32_t* adjacent; /* 3 per triangle: the triangle across edge k (vertices k, k+1), -1 if none */
	uint8_t* edgeKind; /* 3 per triangle: ibTriEdgeKind of edge k (trimesh_edges.c) */
	double* bend;      /* per triangle: the largest angle (rad) between its normal and a neighbour's across a ridge */
	size_t bytes;
} ibTriMeshGeom;

/* Edges of a mesh by the dihedral angle to the triangle across them (trimesh_edges.c). */
typedef enum ibTriEdgeKind {
	IB_TRI_EDGE_BOUNDARY = 0, /* no triangle across it (or more than one): an outer edge of the surface */
	IB_TRI_EDGE_CONVEX = 1,   /* a ridge: contact normals between the two faces' normals are real */
	IB_TRI_EDGE_FLAT = 2,     /* flat or concave (a valley): only the faces' own normals are real */
} ibTriEdgeKind;

/* Bytes of scratch per edge that ib_trimesh_classify_edges needs. */
#define IB_TRIMESH_EDGE_TEMP_BYTES 16

/* Fills adjacent, edgeKind and bend of a built mesh from its indices (edges shared by index); temp holds
 * 3 * triangleCount * IB_TRIMESH_EDGE_TEMP_BYTES bytes. */
void ib_trimesh_classify_edges(ibTriMeshGeom* t, void* temp);

/* A triangle on whose plane (within tol) the point l (shape frame) lies, inside it: its unit normal and
 * offset (shape frame). False if none (an edge of the mesh, or off the surface). */
bool ib_trimesh_face_at(const ibTriMeshGeom* t, ibVec3 l, double tol, ibVec3* normal, double* offset);

/* The contact region of a convex shape c and triangle tri of mesh t posed at p, R (world), as
 * ib_manifold_build gives it, with the normal a one-sided mesh allows (trimesh_contact.c): the region
 * is kept where its normal is within the triangle's bend of the face's or lies in the normal cone of an
 * outer edge it touches; otherwise (the side of a flat or concave edge, the back of the face) it is replaced by the
 * region of c against the face's plane within the triangle. A the convex, normal from the mesh to
 * it. Returns the point count (0: no contact). */
int ib_trimesh_triangle_contact(const ibTriMeshGeom* t, int tri, ibVec3 p, const ibMat3* R, const ibConvex* c,
                                double tolerance, ibManifold* out);

/* Copy the mesh and build its tree; on failure records an error on w and returns it. */
ibResult ib_trimesh_build(ibWorld* w, const ibMesh* mesh, ibTriMeshGeom** out);
void ib_trimesh_free(ibWorld* w, ibTriMeshGeom* t);

/* Bounds of the whole mesh (shape frame). */
static inline ibAABB ib_trimesh_bounds(const ibTriMeshGeom* t) { return t->nodes[0].box; }

/* Calls fn(ctx, triangle) for every triangle whose bounding box overlaps box (shape frame), until
 * fn returns false. Returns the number of calls. */
typedef bool ibTriMeshVisitFn(void* ctx, int triangle);
int ib_trimesh_query_aabb(const ibTriMeshGeom* t, ibAABB box, ibTriMeshVisitFn* fn, void* ctx);

/* Closest hit of the ray origin + s dir, s in [0, maxS] (shape frame), with either side of any
 * triangle. Returns false if none; else the parameter s, the triangle and its unit normal (the
 * triangle's counter-clockwise normal, not flipped towards the ray). */
typedef struct ibTriMeshHit {
	double s;
	int triangle;
	ibVec3 normal;
} ibTriMeshHit;
bool ib_trimesh_raycast(const ibTriMeshGeom* t, ibVec3 origin, ibVec3 dir, double maxS, ibTriMeshHit* hit);
/* The ray-triangle test the ray cast uses (Moeller-Trumbore, both sides): true with *s on a hit in [0, maxS]. */
bool ib_ray_triangle(ibVec3 origin, ibVec3 dir, ibVec3 a, ibVec3 b, ibVec3 c, double maxS, double* s);

#endif
