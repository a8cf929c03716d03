/* ibdyn — impulse-based dynamic simulation of multibody systems (after J. Bender, 2007).
 * The one header users include. Units are SI (m, kg, s, rad, N, N m, N s).
 *
 * Error model: functions that can fail return ibResult; the world keeps a human-readable message
 * of its last error (ibWorld_GetLastError). Getters called with a stale handle return a neutral
 * value (zero vector, identity rotation, 0) and record an error. Rejected calls leave the world
 * unchanged. */
#ifndef IBDYN_IBDYN_H
#define IBDYN_IBDYN_H

#include "base.h"
#include "id.h"
#include "math.h"
#include "types.h"
#include "joint.h"
#include "collision.h"
#include "soft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- world */

/** Create a world; returns the null handle on a bad definition (the message goes to def->logFn). */
IB_API ibWorldId ibCreateWorld(const ibWorldDef* def);
/** Check a world definition; writes a message into msg (may be NULL) on failure. */
IB_API ibResult ibValidateWorldDef(const ibWorldDef* def, char* msg, size_t msgSize);
/** Destroy a world and everything in it; all its handles become stale. */
IB_API void ibDestroyWorld(ibWorldId world);
/** True if the handle refers to a live world. */
IB_API bool ibWorld_IsValid(ibWorldId world);
/** Advance the world by h seconds (h > 0, finite). Returns IB_ERR_DIVERGED if the state became non-finite or a
 * dynamic body or particle exceeded ibSolverSettings.maxLinearSpeed / maxAngularSpeed. */
IB_API ibResult ibWorld_Step(ibWorldId world, double h);
/** Message of the world's last error ("" if none since the last ibWorld_ClearError). */
IB_API const char* ibWorld_GetLastError(ibWorldId world);
/** Clear the world's last error message. */
IB_API void ibWorld_ClearError(ibWorldId world);
/** True once a step produced a non-finite state or a speed beyond the solver's bounds; the world then refuses
 * to step (no silent reset). */
IB_API bool ibWorld_HasDiverged(ibWorldId world);
/** Simulated time (s) accumulated by ibWorld_Step. */
IB_API double ibWorld_GetTime(ibWorldId world);
/** Set the gravitational acceleration (m/s^2). */
IB_API ibResult ibWorld_SetGravity(ibWorldId world, ibVec3 gravity);
/** Gravitational acceleration (m/s^2). */
IB_API ibVec3 ibWorld_GetGravity(ibWorldId world);
/** Replace the solver settings (validated as in ibCreateWorld). */
IB_API ibResult ibWorld_SetSolverSettings(ibWorldId world, const ibSolverSettings* settings);
/** Current solver settings. */
IB_API ibSolverSettings ibWorld_GetSolverSettings(ibWorldId world);
/** Highest solver group number allowed (groups are 0 .. IB_MAX_SOLVER_GROUP). */
#define IB_MAX_SOLVER_GROUP 65535
/** Joint method for the islands of a solver group (overrides the world default ibSolverSettings.method).
 * An island (bodies connected by joints; static and kinematic bodies do not connect) takes the method of
 * the lowest-numbered group with an override among its dynamic bodies, else the world default. */
IB_API ibResult ibWorld_SetGroupSolver(ibWorldId world, int group, ibJointSolver method);
/** Remove a group's override (its islands follow the world default again). */
IB_API ibResult ibWorld_ClearGroupSolver(ibWorldId world, int group);
/** True if the group has an override; its method goes to *method (may be NULL). */
IB_API bool ibWorld_GetGroupSolver(ibWorldId world, int group, ibJointSolver* method);
/** Highest group number with an override, -1 if none. */
IB_API int ibWorld_GetMaxOverriddenGroup(ibWorldId world);
/** Statistics of the last step. */
IB_API ibStepStats ibWorld_GetStepStats(ibWorldId world);
/** Number of live bodies. */
IB_API int ibWorld_GetBodyCount(ibWorldId world);
/** Write up to capacity live body handles (creation order) into out; returns the number of live bodies. */
IB_API int ibWorld_GetBodies(ibWorldId world, ibBodyId* out, int capacity);
/** Find a body by name (the first one created with that name); null if none. */
IB_API ibBodyId ibWorld_FindBody(ibWorldId world, const char* name);
/** Energies and momenta of all dynamic and kinematic bodies (and springs). */
IB_API ibResult ibWorld_ComputeInvariants(ibWorldId world, ibWorldInvariants* out);
/** The world definition's user pointer. */
IB_API void* ibWorld_GetUserData(ibWorldId world);

/* ---------------------------------------------------------------- bodies */

/** Create a body; returns the null handle and records an error on a bad definition. */
IB_API ibBodyId ibCreateBody(ibWorldId world, const ibBodyDef* def);
/** Destroy a body, its shapes and the joints attached to it. */
IB_API ibResult ibDestroyBody(ibBodyId body);
/** True if the handle refers to a live body. */
IB_API bool ibBody_IsValid(ibBodyId body);
/** World of the body (null if stale). */
IB_API ibWorldId ibBody_GetWorld(ibBodyId body);
/** Body type. */
IB_API ibBodyType ibBody_GetType(ibBodyId body);
/** Body name ("" if none). */
IB_API const char* ibBody_GetName(ibBodyId body);
/** Origin of the body frame in world coordinates (m). */
IB_API ibVec3 ibBody_GetPosition(ibBodyId body);
/** Body frame to world rotation. */
IB_API ibQuat ibBody_GetRotation(ibBodyId body);
/** Teleport the body frame to position (m) / rotation (normalised); velocities are kept. */
IB_API ibResult ibBody_SetTransform(ibBodyId body, ibVec3 position, ibQuat rotation);
/** Centre of mass in world coordinates (m). */
IB_API ibVec3 ibBody_GetWorldCenterOfMass(ibBodyId body);
/** Centre of mass in the body frame (m). */
IB_API ibVec3 ibBody_GetLocalCenterOfMass(ibBodyId body);
/** Velocity of the centre of mass (m/s). */
IB_API ibVec3 ibBody_GetLinearVelocity(ibBodyId body);
/** Set the velocity of the centre of mass (m/s); not allowed for static bodies. */
IB_API ibResult ibBody_SetLinearVelocity(ibBodyId body, ibVec3 v);
/** Angular velocity in world coordinates (rad/s). */
IB_API ibVec3 ibBody_GetAngularVelocity(ibBodyId body);
/** Set the angular velocity in world coordinates (rad/s); not allowed for static bodies. */
IB_API ibResult ibBody_SetAngularVelocity(ibBodyId body, ibVec3 w);
/** Velocity of a world point moving with the body (m/s). */
IB_API ibVec3 ibBody_GetPointVelocity(ibBodyId body, ibVec3 worldPoint);
/** World coordinates of a point given in the body frame (m). */
IB_API ibVec3 ibBody_GetWorldPoint(ibBodyId body, ibVec3 localPoint);
/** Body-frame coordinates of a world point (m). */
IB_API ibVec3 ibBody_GetLocalPoint(ibBodyId body, ibVec3 worldPoint);
/** World direction of a body-frame vector. */
IB_API ibVec3 ibBody_GetWorldVector(ibBodyId body, ibVec3 localVector);
/** Mass (kg); 0 for static and kinematic bodies. */
IB_API double ibBody_GetMass(ibBodyId body);
/** Mass, centre of mass and inertia about it, in the body frame (zero mass for non-dynamic bodies). */
IB_API ibMassData ibBody_GetMassData(ibBodyId body);
/** Override the mass properties (body frame); mass > 0, inertia symmetric positive definite. Dynamic only. */
IB_API ibResult ibBody_SetMassData(ibBodyId body, const ibMassData* massData);
/** Recompute the mass properties from the shapes (undoes ibBody_SetMassData). */
IB_API ibResult ibBody_ResetMassData(ibBodyId body);
/** True if the mass properties were set explicitly with ibBody_SetMassData. */
IB_API bool ibBody_HasMassOverride(ibBodyId body);
/** Principal moments of inertia (kg m^2), ascending, and the principal axes as a rotation (body frame). */
IB_API ibVec3 ibBody_GetPrincipalInertia(ibBodyId body, ibQuat* principalAxes);
/** Accumulate a force (N, world) at a world point for the next step; cleared after the step. Dynamic only. */
IB_API ibResult ibBody_ApplyForce(ibBodyId body, ibVec3 force, ibVec3 worldPoint);
/** Accumulate a force (N, world) at the centre of mass for the next step. Dynamic only. */
IB_API ibResult ibBody_ApplyForceToCenter(ibBodyId body, ibVec3 force);
/** Accumulate a torque (N m, world) for the next step. Dynamic only. */
IB_API ibResult ibBody_ApplyTorque(ibBodyId body, ibVec3 torque);
/** Apply a linear impulse (N s, world) at a world point now: changes v and w immediately. Dynamic only. */
IB_API ibResult ibBody_ApplyImpulseAtPoint(ibBodyId body, ibVec3 impulse, ibVec3 worldPoint);
/** Apply an angular impulse (N m s, world) now. Dynamic only. */
IB_API ibResult ibBody_ApplyAngularImpulse(ibBodyId body, ibVec3 impulse);
/** Force accumulated for the next step (N, world). */
IB_API ibVec3 ibBody_GetAppliedForce(ibBodyId body);
/** Torque accumulated for the next step about the centre of mass (N m, world). */
IB_API ibVec3 ibBody_GetAppliedTorque(ibBodyId body);
/** Set linear (1/s) and angular (1/s) damping rates, both >= 0. */
IB_API ibResult ibBody_SetDamping(ibBodyId body, double linear, double angular);
/** Linear and angular damping rates (1/s). */
IB_API void ibBody_GetDamping(ibBodyId body, double* linear, double* angular);
/** Set the gravity scale (finite). */
IB_API ibResult ibBody_SetGravityScale(ibBodyId body, double scale);
/** Gravity scale. */
IB_API double ibBody_GetGravityScale(ibBodyId body);
/** Set the body's solver group (0 .. IB_MAX_SOLVER_GROUP), see ibWorld_SetGroupSolver. */
IB_API ibResult ibBody_SetSolverGroup(ibBodyId body, int group);
/** The body's solver group (0 if stale). */
IB_API int ibBody_GetSolverGroup(ibBodyId body);
/** Wake the body's island (awake = true) or put it to sleep now (false; its island — bodies connected
 * to it by the last step's contacts and by joints — sleeps with it, velocities set to zero). Dynamic bodies only;
 * putting a body with sleep disabled to sleep is an error. */
IB_API ibResult ibBody_SetAwake(ibBodyId body, bool awake);
/** False while the body sleeps (static and kinematic bodies are always awake). */
IB_API bool ibBody_IsAwake(ibBodyId body);
/** Allow or forbid sleeping for this body (forbidding wakes it). */
IB_API ibResult ibBody_EnableSleep(ibBodyId body, bool enable);
/** True if the body may sleep. */
IB_API bool ibBody_IsSleepEnabled(ibBodyId body);
/** Kinetic energy (J). */
IB_API double ibBody_GetKineticEnergy(ibBodyId body);
/** Number of shapes on the body. */
IB_API int ibBody_GetShapeCount(ibBodyId body);
/** Write up to capacity shape handles (creation order); returns the number of shapes. */
IB_API int ibBody_GetShapes(ibBodyId body, ibShapeId* out, int capacity);
/** User pointer. */
IB_API void* ibBody_GetUserData(ibBodyId body);
/** Set the user pointer. */
IB_API ibResult ibBody_SetUserData(ibBodyId body, void* userData);

/* ---------------------------------------------------------------- shapes */

/** Attach a sphere; a dynamic body's mass properties are updated (unless overridden). */
IB_API ibShapeId ibCreateSphereShape(ibBodyId body, const ibShapeDef* def, const ibSphere* sphere);
/** Attach a box. */
IB_API ibShapeId ibCreateBoxShape(ibBodyId body, const ibShapeDef* def, const ibBox* box);
/** Attach a capsule. */
IB_API ibShapeId ibCreateCapsuleShape(ibBodyId body, const ibShapeDef* def, const ibCapsule* capsule);
/** Attach a cylinder. */
IB_API ibShapeId ibCreateCylinderShape(ibBodyId body, const ibShapeDef* def, const ibCylinder* cylinder);
/** Attach a closed triangle mesh (data are copied; volume must be positive). */
IB_API ibShapeId ibCreateMeshShape(ibBodyId body, const ibShapeDef* def, const ibMesh* mesh);
/** Attach the convex hull of a point set (qhull; exact mass properties of the hull polyhedron).
 * Fails with IB_ERR_INVALID_ARGUMENT for fewer than 4 or non-finite points and IB_ERR_DEGENERATE for
 * points in one plane (or too close together for a solid hull). */
IB_API ibShapeId ibCreateHullShape(ibBodyId body, const ibShapeDef* def, const ibHull* hull);
/** Attach an infinite plane (no mass); static and kinematic bodies only (IB_ERR_WRONG_BODY_TYPE otherwise). */
IB_API ibShapeId ibCreatePlaneShape(ibBodyId body, const ibShapeDef* def, const ibPlane* plane);
/** Attach a triangle mesh of any topology (open or closed soup; copied, with a bounding-volume tree over
 * its triangles; no mass); static and kinematic bodies only. Other shapes collide with each triangle. */
IB_API ibShapeId ibCreateTriMeshShape(ibBodyId body, const ibShapeDef* def, const ibMesh* mesh);
/** Detach and destroy a shape; the body's mass properties are updated. */
IB_API ibResult ibDestroyShape(ibShapeId shape);
/** True if the handle refers to a live shape. */
IB_API bool ibShape_IsValid(ibShapeId shape);
/** Shape type (IB_SHAPE_TYPE_COUNT if stale). */
IB_API ibShapeType ibShape_GetType(ibShapeId shape);
/** Body the shape is attached to. */
IB_API ibBodyId ibShape_GetBody(ibShapeId shape);
/** Sphere geometry (zero if not a sphere). */
IB_API ibSphere ibShape_GetSphere(ibShapeId shape);
/** Box geometry. */
IB_API ibBox ibShape_GetBox(ibShapeId shape);
/** Capsule geometry. */
IB_API ibCapsule ibShape_GetCapsule(ibShapeId shape);
/** Cylinder geometry. */
IB_API ibCylinder ibShape_GetCylinder(ibShapeId shape);
/** Mesh geometry of a mesh or triangle-mesh shape; the pointers stay valid while the shape lives. */
IB_API ibMesh ibShape_GetMesh(ibShapeId shape);
/** Hull data (vertices, faces, edges, adjacency) of a hull shape (all zero if not a hull). */
IB_API ibHullData ibShape_GetHull(ibShapeId shape);
/** Plane of a plane shape (normal unit; zero if not a plane). */
IB_API ibPlane ibShape_GetPlane(ibShapeId shape);
/** Shape origin in the body frame (m). */
IB_API ibVec3 ibShape_GetLocalPosition(ibShapeId shape);
/** Shape to body frame rotation. */
IB_API ibQuat ibShape_GetLocalRotation(ibShapeId shape);
/** Density (kg/m^3) the shape was created with. */
IB_API double ibShape_GetDensity(ibShapeId shape);
/** Explicit mass given at creation (0 if from density). */
IB_API double ibShape_GetExplicitMass(ibShapeId shape);
/** Mass properties of this shape alone, in the body frame. */
IB_API ibMassData ibShape_GetMassData(ibShapeId shape);
/** Surface material. */
IB_API ibMaterial ibShape_GetMaterial(ibShapeId shape);
/** Set the surface material (restitution in [0,1], friction >= 0). */
IB_API ibResult ibShape_SetMaterial(ibShapeId shape, ibMaterial material);
/** User pointer. */
IB_API void* ibShape_GetUserData(ibShapeId shape);

/* ---------------------------------------------------------------- mass properties */

/** Mass properties of a sphere of the given density (kg/m^3), in the shape frame. */
IB_API ibResult ibComputeSphereMass(const ibSphere* s, double density, ibMassData* out);
/** Mass properties of a box, in the shape frame. */
IB_API ibResult ibComputeBoxMass(const ibBox* b, double density, ibMassData* out);
/** Mass properties of a capsule (axis z), in the shape frame. */
IB_API ibResult ibComputeCapsuleMass(const ibCapsule* c, double density, ibMassData* out);
/** Mass properties of a cylinder (axis z), in the shape frame. */
IB_API ibResult ibComputeCylinderMass(const ibCylinder* c, double density, ibMassData* out);
/** Mass properties of a closed triangle mesh (exact volume integrals, Mirtich 1996), in the shape frame. */
IB_API ibResult ibComputeMeshMass(const ibMesh* m, double density, ibMassData* out);
/** Express mass properties given in frame A in frame B, where x_B = position + rotation x_A. */
IB_API ibMassData ibMassData_Transform(const ibMassData* md, ibVec3 position, ibQuat rotation);
/** Combine several mass properties given in one frame (parallel-axis theorem). */
IB_API ibMassData ibMassData_Combine(const ibMassData* parts, int count);
/** Scale mass properties to a new total mass (> 0). */
IB_API ibMassData ibMassData_ScaleToMass(const ibMassData* md, double mass);

#ifdef __cplusplus
}
#endif
#endif
