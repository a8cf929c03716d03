/* Peer engines of the collision benchmark (bench_collision, scene cubes1000): collision detection only, on the
 * poses the bench sets. Each fills a BenchCollider (bench_cubes.h); the floor is a static box. */
#ifndef IBDYN_BENCH_COLLISION_PEERS_H
#define IBDYN_BENCH_COLLISION_PEERS_H

#include "../bench_cubes.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bullet btCollisionWorld + btCollisionDispatcher (btDefaultCollisionConfiguration: box-box by
 * btBoxBoxCollisionAlgorithm) with btDbvtBroadphase (sweep = 0) or btAxisSweep3 (sweep = 1), one
 * btCollisionObject with a btBoxShape per cube; detect = performDiscreteCollisionDetection; pairs = the
 * dispatcher's manifolds with at least one point. Returns 0, or -1 on failure. */
int bench_bullet_collider(BenchCollider* c, const BenchCubes* s, int sweep);

/** ODE: body-less box geoms (dCreateBox) in a dHashSpace (sap = 0) or dSweepAndPruneSpace (sap = 1);
 * detect = dSpaceCollide whose callback calls dCollide with room for maxContacts contacts per pair.
 * Returns 0, or -1 on failure. */
int bench_ode_collider(BenchCollider* c, const BenchCubes* s, int sap, int maxContacts);

#ifdef __cplusplus
}
#endif

#endif
