/* Convex hull of a point set (IB_SHAPE_HULL): built once with qhull, then kept as a polyhedron with
 * its faces (convex polygons, counter-clockwise outward), edges and adjacency (face-edge-vertex).
 * Internal, not installed; the public view is ibHullData (ibShape_GetHull). */
#ifndef IBDYN_SRC_HULL_H
#define IBDYN_SRC_HULL_H

#include "dynamics/world.h"

/* One world-allocator block: this header, then the arrays the view points into. */
typedef struct ibHullGeom {
	ibHullData view;
	size_t bytes; /* size of the whole block */
} ibHullGeom;

/* Hull of points (copied) through the world allocator. On failure records an error on w
 * (IB_ERR_INVALID_ARGUMENT: fewer than 4 or non-finite points; IB_ERR_DEGENERATE: coplanar,
 * collinear or coincident points, or qhull's own failure) and returns it; *out is then NULL.
 * qhull writes nothing to stdout/stderr: its messages go to a memory buffer and into the error. */
ibResult ib_hull_build(ibWorld* w, const ibVec3* points, int count, ibHullGeom** out);
void ib_hull_free(ibWorld* w, ibHullGeom* h);
/* Exact mass properties of the hull polyhedron in the shape frame (mesh integrals on its triangles). */
ibResult ib_hull_mass(const ibHullGeom* h, double density, ibMassData* out);

#endif
