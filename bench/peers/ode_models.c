/* ODE peer of the joint benchmark: a BenchModel as ODE bodies (dMassSetBoxTotal) and ball / hinge joints, no geoms;
 * stepped with dWorldQuickStep or dWorldStep. */
#include "peers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ode/ode.h>

void bench_ode_init(void) { dInitODE2(0); }

void bench_ode_close(void) { dCloseODE(); }

void bench_ode_defaults(double* erp, double* cfm)
{
	dWorldID w = dWorldCreate();
	*erp = (double)dWorldGetERP(w);
	*cfm = (double)dWorldGetCFM(w);
	dWorldDestroy(w);
}

/* Copy the ODE body states into pos/quat/lin/ang; returns 0 if all finite. */
static int read_states(const BenchModel* m, dBodyID* bodies, double* pos, double* quat, double* lin, double* ang)
{
	int bad = 0;
	for (int i = 0; i < m->bodyCount; ++i) {
		const dReal* p = dBodyGetPosition(bodies[i]);
		const dReal* q = dBodyGetQuaternion(bodies[i]);
		const dReal* v = dBodyGetLinearVel(bodies[i]);
		const dReal* w = dBodyGetAngularVel(bodies[i]);
		for (int k = 0; k < 3; ++k) pos[3 * i + k] = (double)p[k];
		for (int k = 0; k < 4; ++k) quat[4 * i + k] = (double)q[k];
		for (int k = 0; k < 3; ++k) lin[3 * i + k] = (double)v[k];
		for (int k = 0; k < 3; ++k) ang[3 * i + k] = (double)w[k];
		for (int k = 0; k < 3; ++k) bad |= !isfinite(pos[3 * i + k]);
	}
	return bad;
}

int bench_ode_run(const BenchModel* m, double h, int steps, int quick, int iterations, BenchResult* out)
{
	memset(out, 0, sizeof *out);
	dBodyID* bodies = calloc((size_t)m->bodyCount, sizeof *bodies);
	double* pos = malloc(sizeof(double) * 3 * (size_t)m->bodyCount);
	double* quat = malloc(sizeof(double) * 4 * (size_t)m->bodyCount);
	double* lin = malloc(sizeof(double) * 3 * (size_t)m->bodyCount);
	double* ang = malloc(sizeof(double) * 3 * (size_t)m->bodyCount);
	if (!bodies || !pos || !quat || !lin || !ang) {
		free(bodies);
		free(pos);
		free(quat);
		free(lin);
		free(ang);
		return -1;
	}

	dRandSetSeed(0); /* quickstep's constraint reordering draws from ODE's global generator: same for every run */
	dWorldID world = dWorldCreate();
	dWorldSetGravity(world, m->gravity[0], m->gravity[1], m->gravity[2]);
	if (quick && iterations > 0) dWorldSetQuickStepNumIterations(world, iterations);

	for (int i = 0; i < m->bodyCount; ++i) {
		const BenchBody* b = &m->bodies[i];
		dMass mass;
		dBodyID body = dBodyCreate(world);
		dMassSetBoxTotal(&mass, b->mass, 2.0 * b->halfExtents[0], 2.0 * b->halfExtents[1], 2.0 * b->halfExtents[2]);
		dBodySetMass(body, &mass);
		dBodySetPosition(body, b->center[0], b->center[1], b->center[2]);
		dQuaternion q = {b->rotation[0], b->rotation[1], b->rotation[2], b->rotation[3]};
		dBodySetQuaternion(body, q);
		dBodySetLinearVel(body, b->linearVelocity[0], b->linearVelocity[1], b->linearVelocity[2]);
		dBodySetAngularVel(body, b->angularVelocity[0], b->angularVelocity[1], b->angularVelocity[2]);
		bodies[i] = body;
	}
	for (int j = 0; j < m->jointCount; ++j) {
		const BenchJoint* jt = &m->joints[j];
		/* body 1 = child, body 2 = parent or 0 (the static environment) */
		if (jt->type == BENCH_JOINT_HINGE) {
			dJointID joint = dJointCreateHinge(world, 0);
			dJointAttach(joint, bodies[jt->child], jt->parent >= 0 ? bodies[jt->parent] : 0);
			dJointSetHingeAnchor(joint, jt->anchor[0], jt->anchor[1], jt->anchor[2]);
			dJointSetHingeAxis(joint, jt->axis[0], jt->axis[1], jt->axis[2]);
		} else {
			dJointID joint = dJointCreateBall(world, 0);
			dJointAttach(joint, bodies[jt->child], jt->parent >= 0 ? bodies[jt->parent] : 0);
			dJointSetBallAnchor(joint, jt->anchor[0], jt->anchor[1], jt->anchor[2]);
		}
	}

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	int diverged = 0;
	for (int s = 0; s < steps && !diverged; ++s) {
		if (s == 0) {
			for (int i = 0; i < m->bodyCount; ++i) {
				const double* t = m->bodies[i].firstStepTorque;
				if (t[0] != 0.0 || t[1] != 0.0 || t[2] != 0.0) dBodyAddTorque(bodies[i], t[0], t[1], t[2]);
			}
		}
		double t0 = bench_now_ms();
		if (quick)
			dWorldQuickStep(world, h);
		else
			dWorldStep(world, h);
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		if (read_states(m, bodies, pos, quat, lin, ang)) {
			diverged = 1;
			err = NAN;
			break;
		}
		err = bench_max_joint_error(m, pos, quat);
		if (err > maxErr) maxErr = err;
		if (s == 0) out->energyFirst = bench_energy(m, pos, quat, lin, ang);
	}

	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->iterations = quick ? dWorldGetQuickStepNumIterations(world) : 0;
	out->diverged = diverged;
	bench_system_com(m, pos, out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos, quat, lin, ang);

	dWorldDestroy(world); /* destroys bodies and joints */
	free(bodies);
	free(pos);
	free(quat);
	free(lin);
	free(ang);
	return 0;
}
