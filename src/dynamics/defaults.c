/* ibDefault*Def(): the starting point of every definition struct. */
#include "dynamics/world.h"

ibSolverSettings ibDefaultSolverSettings(void)
{
	ibSolverSettings s;
	s.method = IB_SOLVER_AUTO;
	s.integrator = IB_INTEGRATOR_RK4;
	s.integratorTolerance = 1e-9;
	s.integratorMaxSubsteps = 1000;
	s.positionTolerance = 1e-6;
	s.angularTolerance = 1e-6;
	s.velocityTolerance = 1e-6;
	s.maxPositionIterations = 1000;
	s.maxVelocityIterations = 1000;
	s.maxCorrectionImpulse = 0.0;
	s.warmStart = true;
	s.maxStepSubdivisions = 4;
	s.maxRotationPerStep = 0.5;
	s.order = 1;
	return s;
}

ibWorldDef ibDefaultWorldDef(void)
{
	ibWorldDef d = {0};
	d.gravity = ibV3(0.0, 0.0, -9.81);
	d.solver = ibDefaultSolverSettings();
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

ibBodyDef ibDefaultBodyDef(void)
{
	ibBodyDef d = {0};
	d.type = IB_BODY_STATIC;
	d.rotation = IB_QUAT_IDENTITY;
	d.gravityScale = 1.0;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

ibShapeDef ibDefaultShapeDef(void)
{
	ibShapeDef d = {0};
	d.localRotation = IB_QUAT_IDENTITY;
	d.density = 1000.0;
	d.material.restitution = 0.0;
	d.material.staticFriction = 0.5;
	d.material.dynamicFriction = 0.5;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}
