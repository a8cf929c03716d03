/* ibdyn's collision detection as a BenchCollider (bench_cubes.h), for bench_collision. It drives the internal
 * pipeline of src/collision/collision_world.h (ib_collision_detect, ib_collision_contacts); the one call of it is
 * ibdyn_collide() in bench_collision_ibdyn.c, to be switched to the public ibWorld_Collide once that exists. */
#ifndef IBDYN_BENCH_COLLISION_IBDYN_H
#define IBDYN_BENCH_COLLISION_IBDYN_H

#include "bench_cubes.h"

/** ibdyn world: one static body with a box shape as the floor, one dynamic body with a box shape (default density)
 * per cube; the bodies are never stepped. setPoses = ibBody_SetTransform, detect = ib_collision_detect, pairs from
 * ib_collision_contacts (points = manifold pointCount). Returns 0, or -1 on failure. */
int bench_ibdyn_collider(BenchCollider* out, const BenchCubes* s);

/** IB_MANIFOLD_MAX_POINTS: the most points ibdyn keeps per manifold (the peers get room for as many). */
int bench_ibdyn_max_manifold_points(void);

#endif
