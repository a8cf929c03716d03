/* The ibdyn side of the benchmarks (bench_ibdyn.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_ibdyn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run is stopped once its energy exceeds the first step's by this factor times max(|E_first|, 0.01 J). */
#define IBDYN_BLOWUP_FACTOR 1000.0

static ibVec3 v3(const double* a) { return ibV3(a[0], a[1], a[2]); }

static void put3(ibVec3 v, double* out)
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

/* Build the model in a new ibdyn world: one dynamic body per BenchBody (frame = principal frame, origin at the
 * COM, one box shape with the model's half extents and explicit mass), one static body at the origin for the
 * world-fixed joints, one ball joint per BenchJoint (body A = parent, body B = child, both anchors at the world
 * joint point). Steps it `steps` times; the wall time is taken around ibWorld_Step only, the joint error after
 * every step from the body poses with bench_max_joint_error (as for the peers) and, as a cross-check, from
 * ibBody_GetWorldPoint of the local anchors ibBody_GetLocalPoint gave at set-up.
 * Returns 0, or -1 if the model could not be built. */
int bench_run_ibdyn(const BenchModel* m, double h, int steps, double tol, const IbdynEngine* e, double budgetS,
                    BenchResult* out, IbdynStats* st)
{
	double tStart = bench_now_ms();
	memset(out, 0, sizeof *out);
	memset(st, 0, sizeof *st);
	const int n = m->bodyCount, nj = m->jointCount;
	ibBodyId* bodies = calloc((size_t)n, sizeof *bodies);
	ibBodyId* jointA = calloc((size_t)nj, sizeof *jointA);
	ibBodyId* jointB = calloc((size_t)nj, sizeof *jointB);
	ibVec3* localA = calloc((size_t)nj, sizeof *localA);
	ibVec3* localB = calloc((size_t)nj, sizeof *localB);
	double* pos = malloc(sizeof(double) * 3 * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	double* lin = malloc(sizeof(double) * 3 * (size_t)n);
	double* ang = malloc(sizeof(double) * 3 * (size_t)n);
	int rc = -1;
	ibWorldId world = IB_NULL_WORLD;
	if (!bodies || !jointA || !jointB || !localA || !localB || !pos || !quat || !lin || !ang) goto done;

	ibWorldDef wd = ibDefaultWorldDef();
	wd.collision.enabled = false; /* joint-only model: no contacts between links */
	wd.gravity = v3(m->gravity);
	wd.solver.method = e->method;
	wd.solver.warmStart = e->warmStart;
	wd.solver.positionTolerance = tol;
	wd.solver.angularTolerance = tol;
	wd.solver.velocityTolerance = tol;
	wd.solver.maxPositionIterations = e->maxIterations;
	wd.solver.maxVelocityIterations = e->maxIterations;
	if (e->subdivisions >= 0) wd.solver.maxStepSubdivisions = e->subdivisions;
	st->subdivCap = wd.solver.maxStepSubdivisions;
	world = ibCreateWorld(&wd);
	if (!ibWorld_IsValid(world)) {
		fprintf(stderr, "bench: ibCreateWorld failed\n");
		goto done;
	}
	ibBodyDef gd = ibDefaultBodyDef(); /* static, at the origin, identity rotation */
	gd.name = "ground";
	ibBodyId ground = ibCreateBody(world, &gd);
	if (!ibBody_IsValid(ground)) goto fail;

	for (int i = 0; i < n; ++i) {
		const BenchBody* b = &m->bodies[i];
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = v3(b->center);
		bd.rotation = (ibQuat){b->rotation[0], b->rotation[1], b->rotation[2], b->rotation[3]};
		bd.linearVelocity = v3(b->linearVelocity);
		bd.angularVelocity = v3(b->angularVelocity);
		bodies[i] = ibCreateBody(world, &bd);
		if (!ibBody_IsValid(bodies[i])) goto fail;
		ibShapeDef sd = ibDefaultShapeDef();
		sd.mass = b->mass;
		ibBox box = {v3(b->halfExtents)};
		if (IB_IS_NULL(ibCreateBoxShape(bodies[i], &sd, &box))) goto fail;
		ibMassData md = ibBody_GetMassData(bodies[i]);
		for (int k = 0; k < 3; ++k) {
			double dev = fabs(md.inertia.m[k][k] - b->inertia[k]) / b->inertia[k];
			if (dev > st->inertiaMismatch) st->inertiaMismatch = dev;
		}
		double com = ibLength(md.center) + fabs(md.mass - b->mass);
		if (com > st->setupMismatch) st->setupMismatch = com;
	}
	for (int j = 0; j < nj; ++j) {
		const BenchJoint* jt = &m->joints[j];
		ibJointDef jd = ibDefaultJointDef(jt->type == BENCH_JOINT_HINGE ? IB_JOINT_HINGE : IB_JOINT_BALL);
		jd.bodyA = jt->parent >= 0 ? bodies[jt->parent] : ground;
		jd.bodyB = bodies[jt->child];
		ibVec3 anchor = v3(jt->anchor);
		ibResult jr = jt->type == BENCH_JOINT_HINGE ? ibJointDef_SetWorldFrame(&jd, anchor, v3(jt->axis))
		                                            : ibJointDef_SetWorldAnchors(&jd, anchor, anchor);
		if (jr != IB_OK) goto fail;
		if (!ibJoint_IsValid(ibCreateJoint(world, &jd))) goto fail;
		jointA[j] = jd.bodyA;
		jointB[j] = jd.bodyB;
		localA[j] = ibBody_GetLocalPoint(jd.bodyA, anchor);
		localB[j] = ibBody_GetLocalPoint(jd.bodyB, anchor);
		double d = fmax(ibDistance(localA[j], v3(jt->localParent)), ibDistance(localB[j], v3(jt->localChild)));
		if (d > st->setupMismatch) st->setupMismatch = d;
	}

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	long posSum = 0, velSum = 0;
	int diverged = 0;
	for (int s = 0; s < steps; ++s) {
		if (s == 0)
			for (int i = 0; i < n; ++i) {
				const double* t = m->bodies[i].firstStepTorque;
				if (t[0] != 0.0 || t[1] != 0.0 || t[2] != 0.0) ibBody_ApplyTorque(bodies[i], v3(t));
			}
		double t0 = bench_now_ms();
		ibResult r = ibWorld_Step(world, h);
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		ibStepStats ss = ibWorld_GetStepStats(world);
		posSum += ss.positionIterations;
		velSum += ss.velocityIterations;
		if (ss.positionIterations > st->posIterMax) st->posIterMax = ss.positionIterations;
		if (ss.velocityIterations > st->velIterMax) st->velIterMax = ss.velocityIterations;
		if (!ss.converged) {
			if (st->nonconverged == 0) st->firstNonconverged = s + 1;
			st->nonconverged++;
		}
		if (ss.stepSubdivisions > 1) st->subdividedSteps++;
		if (ss.stepSubdivisions > st->substepsMax) st->substepsMax = ss.stepSubdivisions;
		if (r != IB_OK || ibWorld_HasDiverged(world)) {
			if (!ibWorld_HasDiverged(world))
				fprintf(stderr, "bench: %s %s: ibWorld_Step: %s\n", m->name, e->name, ibWorld_GetLastError(world));
			diverged = 1;
			err = NAN;
			break;
		}
		if (ss.maxPositionError > st->ownMaxError) st->ownMaxError = ss.maxPositionError;
		if (ss.maxAngularError > st->ownMaxAngularError) st->ownMaxAngularError = ss.maxAngularError;
		for (int i = 0; i < n; ++i) {
			ibQuat q = ibBody_GetRotation(bodies[i]);
			put3(ibBody_GetPosition(bodies[i]), &pos[3 * i]);
			quat[4 * i + 0] = q.w;
			quat[4 * i + 1] = q.x;
			quat[4 * i + 2] = q.y;
			quat[4 * i + 3] = q.z;
			put3(ibBody_GetLinearVelocity(bodies[i]), &lin[3 * i]);
			put3(ibBody_GetAngularVelocity(bodies[i]), &ang[3 * i]);
		}
		err = bench_max_joint_error(m, pos, quat);
		if (!isfinite(err)) {
			diverged = 1;
			break;
		}
		if (err > maxErr) maxErr = err;
		double ax = bench_max_axis_error(m, quat);
		if (ax > st->maxAxisError) st->maxAxisError = ax;
		for (int j = 0; j < nj; ++j) {
			double d =
			    ibDistance(ibBody_GetWorldPoint(jointA[j], localA[j]), ibBody_GetWorldPoint(jointB[j], localB[j]));
			if (d > st->worldPointError) st->worldPointError = d;
		}
		if (s == 0) out->energyFirst = bench_energy(m, pos, quat, lin, ang);
		/* A run whose mechanical energy has grown by orders of magnitude has blown up; its next steps would
		 * only burn the iteration caps (up to maxStepSubdivisions levels of 100000 sweeps): stop it there. */
		if (s > 0 && s + 1 < steps &&
		    bench_energy(m, pos, quat, lin, ang) - out->energyFirst >
		        IBDYN_BLOWUP_FACTOR * fmax(fabs(out->energyFirst), 0.01)) {
			st->stoppedAt = s + 1;
			break;
		}
		if (budgetS > 0.0 && s + 1 < steps && elapsed > 1e3 * budgetS) {
			st->stoppedBudget = s + 1;
			break;
		}
	}
	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->diverged = diverged;
	st->posIter = out->steps > 0 ? (double)posSum / out->steps : 0.0;
	st->velIter = out->steps > 0 ? (double)velSum / out->steps : 0.0;
	out->iterations = (int)lround(st->posIter + st->velIter);
	bench_system_com(m, pos, out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos, quat, lin, ang);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "bench: %s %s: building the ibdyn model failed: %s\n", m->name, e->name,
	        ibWorld_GetLastError(world));
done:
	if (ibWorld_IsValid(world)) ibDestroyWorld(world);
	free(bodies);
	free(jointA);
	free(jointB);
	free(localA);
	free(localB);
	free(pos);
	free(quat);
	free(lin);
	free(ang);
	st->wallSeconds = (bench_now_ms() - tStart) * 1e-3;
	return rc;
}
