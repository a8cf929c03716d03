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
	s.maxLinearSpeed = 1e4;
	s.maxAngularSpeed = 1e5;
	s.order = 1;
	s.contact.enabled = true;
	s.contact.restitutionLaw = IB_RESTITUTION_NEWTON;
	s.contact.restitutionMixing = IB_MIX_PRODUCT;
	s.contact.frictionMixing = IB_MIX_SUM;
	s.contact.restingSpeed = 0.0;
	s.contact.collisionTolerance = 1e-6;
	s.contact.contactPositionTolerance = 1e-6;
	s.contact.maxCollisionIterations = 1000;
	s.contact.maxContactIterations = 1000;
	s.contact.jointVelocitySweeps = true;
	s.contact.contactGraph = true;
	s.contact.shockIterations = 0;
	s.contact.stallSweeps = 50;
	s.sleep.enabled = false; /* opt-in: sleeping drops the residual motion of slow bodies (docs/contacts.md) */
	s.sleep.linearThreshold = 0.05;
	s.sleep.angularThreshold = 0.05;
	s.sleep.timeToSleep = 0.5;
	s.contact.warmStart = true;
	s.contact.directSolve = true;
	s.contact.jointResponse = true;
	s.contact.directFollow = true;
	return s;
}

ibCollisionSettings ibDefaultCollisionSettings(void)
{
	ibCollisionSettings c;
	c.contactTolerance = 1e-4;
	c.broadphase = IB_BROADPHASE_SWEEP_AND_PRUNE;
	c.toiMode = IB_TOI_INTERPOLATION;
	c.conservativeAdvancement = true;
	c.maxToiSubsteps = 8;
	c.maxToiIterations = 40;
	c.speculativeApproach = false;
	c.enabled = true;
	return c;
}

ibFilter ibDefaultFilter(void) { return (ibFilter){1u, 0xFFFFFFFFu, 0}; }

ibWorldDef ibDefaultWorldDef(void)
{
	ibWorldDef d = {0};
	d.gravity = ibV3(0.0, 0.0, -9.81);
	d.solver = ibDefaultSolverSettings();
	d.collision = ibDefaultCollisionSettings();
	d.workerCount = 1;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

ibBodyDef ibDefaultBodyDef(void)
{
	ibBodyDef d = {0};
	d.type = IB_BODY_STATIC;
	d.rotation = IB_QUAT_IDENTITY;
	d.gravityScale = 1.0;
	d.enableSleep = true;
	d.isAwake = true;
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
	d.filter = ibDefaultFilter();
	d.internalValue = IB_DEF_MAGIC;
	return d;
}
