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

/** MuJoCo integrators of bench_mujoco_run. */
typedef enum BenchMujocoIntegrator { BENCH_MUJOCO_EULER = 0, BENCH_MUJOCO_RK4 = 1 } BenchMujocoIntegrator;

/** MuJoCo (only built when CMake found MuJoCo; IBDYN_BENCH_HAVE_MUJOCO is then defined): the model as MJCF
 * written from the BenchModel (nested <body> per body, <joint type="ball"> at the joint point, one box geom with
 * the body's mass, contacts disabled, energy enabled, the given integrator and timestep h), loaded with
 * mj_loadXML from a temporary file and stepped with mj_step. Tree-structured ball-joint models with identity
 * set-up rotations only (chains, trees). Initial COM velocities are applied as the impulses m v at the COMs,
 * projected onto the joints with MuJoCo's mass matrix (qvel = M^-1 sum_i J_i^T m_i v_i). *mjEnergyFirst /
 * *mjEnergyFinal (may be NULL): MuJoCo's own potential + kinetic energy (mjData.energy) after the first / last
 * step. *version: mj_version(). Returns 0, -1 on failure (model not representable or MuJoCo error), -2 if the
 * body nesting is deeper than MuJoCo 2.2.2's XML parser accepts (~100 levels: chain100). */
int bench_mujoco_run(const BenchModel* m, double h, int steps, BenchMujocoIntegrator integrator, BenchResult* out,
                     double* mjEnergyFirst, double* mjEnergyFinal, int* version);

#ifdef __cplusplus
}
#endif

#endif
