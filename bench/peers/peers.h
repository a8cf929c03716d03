/* Peer engines of the joint benchmark: each builds a BenchModel, steps it and measures itself with the
 * same rules (wall time around the step calls only; joint error from the engine's body poses). */
#ifndef IBDYN_BENCH_PEERS_H
#define IBDYN_BENCH_PEERS_H

#include "../bench_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default iteration counts of the peers. */
#define BENCH_ODE_QUICKSTEP_ITERATIONS 20
#define BENCH_BULLET_ITERATIONS 10

/** dInitODE2 / dCloseODE; call once around all ODE runs. */
void bench_ode_init(void);
void bench_ode_close(void);

/** ODE: ball joints (dJointCreateBall), bodies with dMassSetBoxTotal, no geoms. quick != 0: dWorldQuickStep
 * with `iterations` SOR iterations (<= 0: ODE's default, reported); quick == 0: dWorldStep.
 * ERP/CFM are ODE's defaults. Returns 0, or -1 on failure. */
int bench_ode_run(const BenchModel* m, double h, int steps, int quick, int iterations, BenchResult* out);

/** ODE's world ERP and CFM defaults (for the report). */
void bench_ode_defaults(double* erp, double* cfm);

/** Bullet: btDiscreteDynamicsWorld + btSequentialImpulseConstraintSolver, one btPoint2PointConstraint per
 * joint, collision filter mask 0 (no pairs), stepSimulation(h, 0). iterations <= 0: Bullet's default
 * (reported). Returns 0, or -1 on failure. */
int bench_bullet_run(const BenchModel* m, double h, int steps, int iterations, BenchResult* out);

/** Bullet Featherstone (btMultiBody, spherical joints) for tree-structured models whose joints are ordered
 * parent-before-child. Initial COM velocities are applied as the impulses m v at the COMs (projected
 * onto the joint manifold through the articulated-body inverse mass). Returns 0, -1 on failure, -2 if
 * Featherstone is not available in this build. */
int bench_bullet_multibody_run(const BenchModel* m, double h, int steps, BenchResult* out);

/** Precision of the Bullet build linked (8 = double, 4 = float). */
int bench_bullet_real_size(void);

#ifdef __cplusplus
}
#endif

#endif
