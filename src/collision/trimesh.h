/* Static triangle mesh (IB_SHAPE_TRIMESH): a copy of the triangles and a bounding-volume tree (AABB
 * tree over the triangles, built once at creation, median splits) for box and ray queries in the
 * shape frame. Queries allocate nothing. Internal, not installed. */
#ifndef IBDYN_SRC_TRIMESH_H
#define IBDYN_SRC_TRIMESH_H

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
	size_t bytes;
} ibTriMeshGeom;

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
