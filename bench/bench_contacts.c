/* Contact benchmarks (issue 6, "Scenes and benchmark"): pyramid20 and rain1000 at 60 Hz with ibdyn, Bullet and
 * ODE quickstep in the same run; wall252 (DIGEST 23.2, scenes/wall252.xml) with and without shock propagation.
 * Every engine is measured the same way: wall time around the step call, the bench's own exact box-box
 * penetration (bench_box_depth) and a standing test from the poses. See bench/README.md. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"
#include "bench_cubes.h"
#include "contact_peers.h"

#include <ibdyn/ibdyn.h>
#include <ibdyn/scene.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct RunResult {
	double ms;
	int steps;
	double maxPen;
	double maxDisp;  /* largest displacement from the start (m) */
	double maxSpeed; /* largest speed in the last step (m/s, from the poses) */
	double minZ;     /* lowest centre (m) */
	int diverged;
} RunResult;

static double budgetS = 10.0;
static int stepsOverride = 0;
static int ibdynWarm = 1; /* contact warm start of the ibdyn engine (--warm=0|1) */
static int ibdynShock = 0; /* shockIterations of the ibdyn engine on the box scenes (--shock=N) */
static int ibdynToiSubsteps = -1; /* --max-toi-substeps=N: ibCollisionSettings.maxToiSubsteps of the ibdyn worlds (box scenes, funnel; -1 = default) */
static int ibdynStall = -1; /* --stall=N: ibContactSettings.stallSweeps (default: the library's) */
static double ibdynPosTol = 1e-5; /* --pos-tol=X: contactPositionTolerance eps_d of the ibdyn box worlds (m) */
static double ibdynVelTol = 1e-4; /* --vel-tol=X: velocityTolerance of the ibdyn box worlds (m/s) */
static int ibdynCaps = 0; /* --caps=N: cap every contact loop of the ibdyn box worlds at N sweeps (0 = the library's caps) */
static int ibdynSpec = 1; /* --spec=0|1: ibCollisionSettings.speculativeApproach of the ibdyn box worlds (default on) */
static int sleepAll = 0; /* --sleep=0|1: every engine of the box scenes lets resting bodies sleep (ContactScene.sleep) */
static int ibdynJointResponse = 1; /* --joint-response=0|1: ibContactSettings.jointResponse of the ibdyn wall252 worlds */
static int ibdynSubdiv = -1; /* --subdiv=N: ibSolverSettings.maxStepSubdivisions of the ibdyn wall252 worlds (-1 = the library's) */
static int ibdynVariants = 1; /* also run ibdyn-nowarm (warm start off) and ibdyn-shock10 (--no-variants: off) */

/* max penetration among the boxes and against the ground (bounding-sphere reject, then bench_box_depth) */
static double penetration(const ContactScene* s, const double* pos, const double* quat)
{
	double worst = 0.0;
	const double id[4] = {1, 0, 0, 0};
	for (int i = 0; i < s->n; ++i) {
		const double* ei = &s->half[3 * i];
		double ri = sqrt(ei[0] * ei[0] + ei[1] * ei[1] + ei[2] * ei[2]);
		if (pos[3 * i + 2] - ri < s->groundCenter[2] + s->groundHalf[2]) {
			double d = bench_box_depth(&pos[3 * i], &quat[4 * i], ei, s->groundCenter, id, s->groundHalf);
			if (d > worst) worst = d;
		}
		for (int j = i + 1; j < s->n; ++j) {
			const double* ej = &s->half[3 * j];
			double rj = sqrt(ej[0] * ej[0] + ej[1] * ej[1] + ej[2] * ej[2]);
			double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1], dz = pos[3 * i + 2] - pos[3 * j + 2];
			if (dx * dx + dy * dy + dz * dz > (ri + rj) * (ri + rj)) continue;
			double d = bench_box_depth(&pos[3 * i], &quat[4 * i], ei, &pos[3 * j], &quat[4 * j], ej);
			if (d > worst) worst = d;
		}
	}
	return worst;
}

static void finish(const ContactScene* s, const double* pos, const double* prev, RunResult* r)
{
	r->maxDisp = 0.0;
	r->maxSpeed = 0.0;
	r->minZ = INFINITY;
	for (int i = 0; i < s->n; ++i) {
		double d = 0.0, v = 0.0;
		for (int k = 0; k < 3; ++k) {
			double a = pos[3 * i + k] - s->pos[3 * i + k], b = pos[3 * i + k] - prev[3 * i + k];
			d += a * a;
			v += b * b;
		}
		if (!isfinite(d)) r->diverged = 1;
		if (sqrt(d) > r->maxDisp) r->maxDisp = sqrt(d);
		if (sqrt(v) / s->h > r->maxSpeed) r->maxSpeed = sqrt(v) / s->h;
		if (pos[3 * i + 2] < r->minZ) r->minZ = pos[3 * i + 2];
	}
}

/* the ibdyn world of a box scene: ground and boxes with mu/2 each (sum rule), thesis-like contact settings */
static ibWorldId ibdynWorld(const ContactScene* s, int shock, int warm, ibBodyId* bodies)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.contact.warmStart = warm != 0;
	wd.solver.velocityTolerance = ibdynVelTol;
	wd.solver.contact.collisionTolerance = 1e-3;
	wd.solver.contact.contactPositionTolerance = ibdynPosTol;
	wd.solver.contact.shockIterations = shock;
	if (ibdynStall >= 0) wd.solver.contact.stallSweeps = ibdynStall;
	if (ibdynCaps > 0) wd.solver.contact.maxCollisionIterations = wd.solver.contact.maxContactIterations = ibdynCaps;
	if (ibdynToiSubsteps >= 0) wd.collision.maxToiSubsteps = ibdynToiSubsteps;
	wd.collision.speculativeApproach = ibdynSpec != 0;
	wd.solver.sleep.enabled = s->sleep != 0;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = (ibVec3){s->groundCenter[0], s->groundCenter[1], s->groundCenter[2]};
	ibBodyId g = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material.staticFriction = sd.material.dynamicFriction = s->mu / 2;
	sd.material.restitution = 0.0;
	ibBox gb = {{s->groundHalf[0], s->groundHalf[1], s->groundHalf[2]}};
	ibCreateBoxShape(g, &sd, &gb);
	for (int i = 0; i < s->n; ++i) {
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = (ibVec3){s->pos[3 * i], s->pos[3 * i + 1], s->pos[3 * i + 2]};
		bd.rotation = (ibQuat){s->quat[4 * i], s->quat[4 * i + 1], s->quat[4 * i + 2], s->quat[4 * i + 3]};
		bodies[i] = ibCreateBody(w, &bd);
		sd.mass = s->mass[i];
		ibBox b = {{s->half[3 * i], s->half[3 * i + 1], s->half[3 * i + 2]}};
		ibCreateBoxShape(bodies[i], &sd, &b);
	}
	return w;
}

static void getIbdyn(int n, const ibBodyId* bodies, double* pos, double* quat)
{
	for (int i = 0; i < n; ++i) {
		ibVec3 p = ibBody_GetPosition(bodies[i]);
		ibQuat q = ibBody_GetRotation(bodies[i]);
		pos[3 * i] = p.x, pos[3 * i + 1] = p.y, pos[3 * i + 2] = p.z;
		quat[4 * i] = q.w, quat[4 * i + 1] = q.x, quat[4 * i + 2] = q.y, quat[4 * i + 3] = q.z;
	}
}

/* engine 0 = ibdyn, 1 = Bullet, 2 = ODE; warm: ibdyn's contact warm start */
/* IBDYN_BENCH_TRACE=1: one line of ibStepStats per ibdyn step on stderr (diagnosis, not timing) */
static int traceSteps;

static void traceStep(ibWorldId w, int step, double ms)
{
	ibStepStats st = ibWorld_GetStepStats(w);
	fprintf(stderr,
	        "trace: step=%d ms=%.2f det=%.2f coll=%.2f cont=%.2f pts=%d colliding=%d resting=%d it_c=%d it_r=%d it_v=%d sub=%d "
	        "res_c=%.2e res_r=%.2e res_v=%.2e\n",
	        step, ms, st.detectionMs, st.collisionMs, st.contactMs, st.contactPoints, st.collidingPoints, st.restingPoints,
	        st.collisionIterations, st.contactIterations, st.contactVelocityIterations, st.stepSubdivisions, st.collisionResidual,
	        st.contactResidual, st.contactVelocityResidual);
}

static RunResult runBoxes(const ContactScene* s, int engine, int shock, int warm)
{
	RunResult r = {0};
	int n = s->n, steps = stepsOverride > 0 ? stepsOverride : s->steps;
	double* pos = malloc(sizeof(double) * 3 * (size_t)n);
	double* prev = malloc(sizeof(double) * 3 * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	ibBodyId* bodies = malloc(sizeof(ibBodyId) * (size_t)n);
	ibWorldId w = {0};
	ContactPeer* p = NULL;
	if (engine == 0) w = ibdynWorld(s, shock, warm, bodies);
	else p = engine == 1 ? contact_bullet_create(s) : contact_ode_create(s);
	memcpy(prev, s->pos, sizeof(double) * 3 * (size_t)n);
	double total = 0.0;
	for (int k = 0; k < steps; ++k) {
		double t0 = bench_now_ms();
		if (engine == 0) {
			if (ibWorld_Step(w, s->h) != IB_OK) {
				printf("# %s ibdyn: step %d: %s\n", s->name, k + 1, ibWorld_GetLastError(w));
				r.diverged = 1;
				break;
			}
		} else {
			contact_peer_step(p);
		}
		double dt = bench_now_ms() - t0;
		total += dt;
		if (engine == 0 && traceSteps) traceStep(w, k + 1, dt);
		r.steps = k + 1;
		memcpy(prev, pos, sizeof(double) * 3 * (size_t)n);
		if (engine == 0) getIbdyn(n, bodies, pos, quat);
		else contact_peer_get(p, pos, quat);
		if (k == 0) memcpy(prev, s->pos, sizeof(double) * 3 * (size_t)n);
		if (k % 10 == 9 || k == steps - 1) {
			double d = penetration(s, pos, quat);
			if (d > r.maxPen) r.maxPen = d;
		}
		if (total > budgetS * 1000.0) break;
	}
	double d = penetration(s, pos, quat);
	if (d > r.maxPen) r.maxPen = d;
	finish(s, pos, prev, &r);
	r.ms = r.steps > 0 ? total / r.steps : NAN;
	if (engine == 0) ibDestroyWorld(w);
	else contact_peer_destroy(p);
	free(pos), free(prev), free(quat), free(bodies);
	return r;
}

static void printRunEx(const ContactScene* s, const char* engine, const RunResult* r, int standing, const char* extra)
{
	int steps = stepsOverride > 0 ? stepsOverride : s->steps;
	bench_print(s->name, engine, r->ms, 0.0,
	            "standing=%s max_penetration=%.3g steps=%d steps_scene=%d h=%.6g bodies=%d max_displacement=%.3g "
	            "final_max_speed=%.3g min_z=%.3g%s%s",
	            standing ? "yes" : "no", r->maxPen, r->steps, steps, s->h, s->n, r->maxDisp, r->maxSpeed, r->minZ,
	            r->diverged ? " diverged=1" : "", extra);
}

static void printRun(const ContactScene* s, const char* engine, const RunResult* r, int standing)
{
	printRunEx(s, engine, r, standing, "");
}

static void makePyramid(ContactScene* s, int rows)
{
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "pyramid%d", rows);
	s->n = rows * (rows + 1) / 2;
	s->pos = malloc(sizeof(double) * 3 * (size_t)s->n);
	s->quat = malloc(sizeof(double) * 4 * (size_t)s->n);
	s->half = malloc(sizeof(double) * 3 * (size_t)s->n);
	s->mass = malloc(sizeof(double) * (size_t)s->n);
	int i = 0;
	for (int k = 0; k < rows; ++k)
		for (int j = 0; j < rows - k; ++j, ++i) {
			double c[3] = {(j - (rows - 1 - k) / 2.0) * 1.02, 0.0, 0.5 + k};
			memcpy(&s->pos[3 * i], c, sizeof c);
			s->quat[4 * i] = 1, s->quat[4 * i + 1] = s->quat[4 * i + 2] = s->quat[4 * i + 3] = 0;
			s->half[3 * i] = s->half[3 * i + 1] = s->half[3 * i + 2] = 0.5;
			s->mass[i] = 1.0;
		}
	s->groundCenter[2] = -0.5;
	s->groundHalf[0] = s->groundHalf[1] = 50.0, s->groundHalf[2] = 0.5;
	s->mu = 0.5;
	s->h = 1.0 / 60.0;
	s->steps = 300;
}

static int makeRain(ContactScene* s, int count)
{
	BenchCubes c;
	if (bench_cubes_make(&c, count, BENCH_CUBES_SEED) != 0) return -1;
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "rain%d", count);
	s->n = count;
	s->pos = malloc(sizeof(double) * 3 * (size_t)count);
	s->quat = malloc(sizeof(double) * 4 * (size_t)count);
	s->half = malloc(sizeof(double) * 3 * (size_t)count);
	s->mass = malloc(sizeof(double) * (size_t)count);
	memcpy(s->pos, c.start, sizeof(double) * 3 * (size_t)count);
	memcpy(s->quat, c.quat, sizeof(double) * 4 * (size_t)count);
	for (int i = 0; i < count; ++i) s->half[3 * i] = s->half[3 * i + 1] = s->half[3 * i + 2] = c.half, s->mass[i] = 1.0;
	s->groundCenter[2] = -0.5;
	s->groundHalf[0] = s->groundHalf[1] = 50.0, s->groundHalf[2] = 0.5;
	s->mu = 0.5;
	s->h = 1.0 / 60.0;
	s->steps = 300;
	bench_cubes_free(&c);
	return 0;
}

static void freeScene(ContactScene* s)
{
	free(s->pos), free(s->quat), free(s->half), free(s->mass);
}

static int isStanding(const RunResult* r, int pyramid)
{
	return !r->diverged && (pyramid ? r->maxDisp < 0.1 : (r->minZ > 0.0 && r->maxSpeed < 0.5));
}

static void boxScene(ContactScene* s, int pyramid, int peers)
{
	static const char* names[3] = {"ibdyn", "bullet", "ode-quickstep"};
	RunResult r[3];
	int standing[3];
	s->sleep = sleepAll;
	for (int e = 0; e < (peers ? 3 : 1); ++e) {
		r[e] = runBoxes(s, e, e == 0 ? ibdynShock : 10, e == 0 ? ibdynWarm : 1);
		/* pyramid: no box moved by more than 0.1 m; rain: nothing fell through and the pile is at rest */
		standing[e] = isStanding(&r[e], pyramid);
		char extra[192];
		if (e == 0)
			snprintf(extra, sizeof extra, " sleep=%s warm=%s shock=%d max_toi_substeps=%d spec=%d stall=%d caps=%d pos_tol=%g vel_tol=%g", s->sleep ? "on" : "off",
			         ibdynWarm ? "on" : "off", ibdynShock,
			         ibdynToiSubsteps >= 0 ? ibdynToiSubsteps : ibDefaultCollisionSettings().maxToiSubsteps, ibdynSpec,
			         ibdynStall >= 0 ? ibdynStall : ibDefaultSolverSettings().contact.stallSweeps, ibdynCaps, ibdynPosTol, ibdynVelTol);
		else
			snprintf(extra, sizeof extra, " sleep=%s", s->sleep ? "on" : "off");
		printRunEx(s, names[e], &r[e], standing[e], extra);
		fflush(stdout);
	}
	/* the effect of the contact warm start and of shock propagation (issue 6 part 7) */
	for (int v = 0; ibdynVariants && v < 2; ++v) {
		int shock = v == 0 ? ibdynShock : 10, warm = v == 0 ? 0 : 1;
		if (v == 0 && !ibdynWarm) continue; /* the main run already is the one without warm start */
		if (v == 1 && ibdynShock == 10) continue;
		RunResult rv = runBoxes(s, 0, shock, warm);
		char extra[64];
		snprintf(extra, sizeof extra, " warm=%s shock=%d", warm ? "on" : "off", shock);
		printRunEx(s, v == 0 ? "ibdyn-nowarm" : "ibdyn-shock10", &rv, isStanding(&rv, pyramid), extra);
		if (v == 0) bench_ratio_ex(s->name, "ibdyn", r[0].ms, "ibdyn-nowarm", rv.ms, "warm=on/off");
		fflush(stdout);
	}
	for (int e = 1; peers && e < 3; ++e)
		bench_ratio_ex(s->name, "ibdyn", r[0].ms, names[e], r[e].ms, "ours_steps=%d peer_steps=%d ours_standing=%s peer_standing=%s sleep=%s",
		               r[0].steps, r[e].steps, standing[0] ? "yes" : "no", standing[e] ? "yes" : "no", s->sleep ? "on" : "off");
	/* sleeping (issue 6 part 7): the same runs with every engine's sleeping on, each with its own thresholds */
	if (ibdynVariants && !sleepAll) {
		static const char* sleepNames[3] = {"ibdyn-sleep", "bullet-sleep", "ode-quickstep-sleep"};
		s->sleep = 1;
		for (int e = 0; e < (peers ? 3 : 1); ++e) {
			r[e] = runBoxes(s, e, e == 0 ? ibdynShock : 10, e == 0 ? ibdynWarm : 1);
			standing[e] = isStanding(&r[e], pyramid);
			printRunEx(s, sleepNames[e], &r[e], standing[e], " sleep=on");
			fflush(stdout);
		}
		for (int e = 1; peers && e < 3; ++e)
			bench_ratio_ex(s->name, sleepNames[0], r[0].ms, sleepNames[e], r[e].ms,
			               "ours_steps=%d peer_steps=%d ours_standing=%s peer_standing=%s sleep=on", r[0].steps, r[e].steps,
			               standing[0] ? "yes" : "no", standing[e] ? "yes" : "no");
		s->sleep = 0;
	}
}

/* wall252 from scenes/wall252.xml: stones only (bodies with one box shape) enter the penetration measure */
static void wallScene(int shock)
{
	char path[1024], err[512];
	snprintf(path, sizeof path, "%s/scenes/large/wall252.xml", IBDYN_SOURCE_DIR);
	ibWorldId w;
	ibSceneSettings set;
	if (ibLoadScene(path, NULL, &w, &set, err, sizeof err) != IB_OK) {
		printf("# wall252: %s\n", err);
		return;
	}
	ibSolverSettings ss = ibWorld_GetSolverSettings(w);
	ss.contact.shockIterations = shock;
	if (ibdynSubdiv >= 0) ss.maxStepSubdivisions = ibdynSubdiv;
	ss.contact.jointResponse = ibdynJointResponse != 0;
	ibWorld_SetSolverSettings(w, &ss);
	int nb = ibWorld_GetBodyCount(w);
	ibBodyId* all = malloc(sizeof(ibBodyId) * (size_t)nb);
	ibBodyId* stones = malloc(sizeof(ibBodyId) * (size_t)nb);
	ibWorld_GetBodies(w, all, nb);
	ContactScene s;
	memset(&s, 0, sizeof s);
	snprintf(s.name, sizeof s.name, "wall252");
	s.half = malloc(sizeof(double) * 3 * (size_t)nb);
	s.pos = malloc(sizeof(double) * 3 * (size_t)nb);
	s.quat = malloc(sizeof(double) * 4 * (size_t)nb);
	s.mass = NULL;
	for (int i = 0; i < nb; ++i) {
		const char* name = ibBody_GetName(all[i]);
		if (name[0] != 's' || ibBody_GetType(all[i]) != IB_BODY_DYNAMIC) continue;
		s.half[3 * s.n] = 0.5, s.half[3 * s.n + 1] = 0.2, s.half[3 * s.n + 2] = 0.15;
		stones[s.n++] = all[i];
	}
	getIbdyn(s.n, stones, s.pos, s.quat);
	s.groundCenter[2] = -0.5;
	s.groundHalf[0] = s.groundHalf[1] = 50.0, s.groundHalf[2] = 0.5;
	s.h = set.timeStep;
	s.steps = (int)lround(set.duration / set.timeStep);
	int steps = stepsOverride > 0 ? stepsOverride : s.steps;
	double* pos = malloc(sizeof(double) * 3 * (size_t)s.n);
	double* prev = malloc(sizeof(double) * 3 * (size_t)s.n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)s.n);
	memcpy(pos, s.pos, sizeof(double) * 3 * (size_t)s.n);
	RunResult r = {0};
	double total = 0.0;
	for (int k = 0; k < steps; ++k) {
		double t0 = bench_now_ms();
		if (ibWorld_Step(w, s.h) != IB_OK) {
			printf("# wall252 ibdyn: step %d: %s\n", k + 1, ibWorld_GetLastError(w));
			r.diverged = 1;
			break;
		}
		double dt = bench_now_ms() - t0;
		total += dt;
		if (traceSteps) traceStep(w, k + 1, dt);
		r.steps = k + 1;
		memcpy(prev, pos, sizeof(double) * 3 * (size_t)s.n);
		getIbdyn(s.n, stones, pos, quat);
		if (k % 10 == 9) {
			double d = penetration(&s, pos, quat);
			if (d > r.maxPen) r.maxPen = d;
		}
		if (total > budgetS * 1000.0) break;
	}
	double d = penetration(&s, pos, quat);
	if (d > r.maxPen) r.maxPen = d;
	finish(&s, pos, prev, &r);
	r.ms = r.steps > 0 ? total / r.steps : NAN;
	/* the wall is hit, so "standing" here means: no stone fell through the ground and nothing diverged */
	int standing = !r.diverged && r.minZ > 0.0;
	printRun(&s, shock ? "ibdyn" : "ibdyn-noshock", &r, standing);
	printf("# wall252 %s: %.1f s wall for %.3f s simulated (thesis: 91 s with, 998 s without shock propagation for 5 s)\n",
	       shock ? "shock" : "noshock", total / 1000.0, r.steps * s.h);
	fflush(stdout);
	free(pos), free(prev), free(quat), free(all), free(stones);
	freeScene(&s);
	ibDestroyWorld(w);
}

/* funnel1000 (DIGEST 23.1, Fig. 5.7, Table 5.1; scenes/large/funnel1000.xml): per-step wall times of the
 * collision detection, the collision resolution and the contact joints (ibStepStats.detectionMs,
 * collisionMs, contactMs) and the numbers of colliding points and contact joints, next to the thesis'
 * Table 5.1. Steps: the scene's 8 s at h = 1e-3 unless --steps=N, and never beyond --budget-s of step time.
 * max_penetration: the bench's exact box-box depth among the cubes and against the ground (every 100
 * steps and at the end; the funnel slabs are not in it); max_error: the solver's largest remaining
 * predicted penetration (ibStepStats.contactResidual). standing: nothing diverged or fell through the ground. */
static void funnelScene(void)
{
	char path[1024], err[512];
	snprintf(path, sizeof path, "%s/scenes/large/funnel1000.xml", IBDYN_SOURCE_DIR);
	ibWorldId w;
	ibSceneSettings set;
	if (ibLoadScene(path, NULL, &w, &set, err, sizeof err) != IB_OK) {
		printf("# funnel1000: %s\n", err);
		return;
	}
	if (ibdynToiSubsteps >= 0) {
		ibCollisionSettings cset = ibWorld_GetCollisionSettings(w);
		cset.maxToiSubsteps = ibdynToiSubsteps;
		ibWorld_SetCollisionSettings(w, &cset);
	}
	int nb = ibWorld_GetBodyCount(w);
	ibBodyId* all = malloc(sizeof(ibBodyId) * (size_t)nb);
	ibBodyId* cubes = malloc(sizeof(ibBodyId) * (size_t)nb);
	ibWorld_GetBodies(w, all, nb);
	ContactScene s;
	memset(&s, 0, sizeof s);
	snprintf(s.name, sizeof s.name, "funnel1000");
	s.half = malloc(sizeof(double) * 3 * (size_t)nb);
	s.pos = malloc(sizeof(double) * 3 * (size_t)nb);
	s.quat = malloc(sizeof(double) * 4 * (size_t)nb);
	for (int i = 0; i < nb; ++i) {
		if (ibBody_GetType(all[i]) != IB_BODY_DYNAMIC) continue;
		s.half[3 * s.n] = s.half[3 * s.n + 1] = s.half[3 * s.n + 2] = 0.5;
		cubes[s.n++] = all[i];
	}
	getIbdyn(s.n, cubes, s.pos, s.quat);
	s.groundCenter[2] = -0.5;
	s.groundHalf[0] = s.groundHalf[1] = 50.0, s.groundHalf[2] = 0.5;
	s.h = set.timeStep;
	s.steps = (int)lround(set.duration / set.timeStep);
	int steps = stepsOverride > 0 ? stepsOverride : s.steps;
	double* pos = malloc(sizeof(double) * 3 * (size_t)s.n);
	double* prev = malloc(sizeof(double) * 3 * (size_t)s.n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)s.n);
	memcpy(pos, s.pos, sizeof(double) * 3 * (size_t)s.n);
	RunResult r = {0};
	double total = 0.0, sum[3] = {0, 0, 0}, mx[3] = {0, 0, 0}, maxRes = 0.0;
	long sumCol = 0, sumRest = 0;
	int maxCol = 0, maxRest = 0;
	for (int k = 0; k < steps; ++k) {
		double t0 = bench_now_ms();
		if (ibWorld_Step(w, s.h) != IB_OK) {
			printf("# funnel1000 ibdyn: step %d: %s\n", k + 1, ibWorld_GetLastError(w));
			r.diverged = 1;
			break;
		}
		total += bench_now_ms() - t0;
		r.steps = k + 1;
		ibStepStats st = ibWorld_GetStepStats(w);
		double t[3] = {st.detectionMs, st.collisionMs, st.contactMs};
		for (int q = 0; q < 3; ++q) sum[q] += t[q], mx[q] = fmax(mx[q], t[q]);
		sumCol += st.collidingPoints, sumRest += st.restingPoints;
		if (st.collidingPoints > maxCol) maxCol = st.collidingPoints;
		if (st.restingPoints > maxRest) maxRest = st.restingPoints;
		maxRes = fmax(maxRes, st.contactResidual);
		memcpy(prev, pos, sizeof(double) * 3 * (size_t)s.n);
		getIbdyn(s.n, cubes, pos, quat);
		if (k % 100 == 99) {
			double d = penetration(&s, pos, quat);
			if (d > r.maxPen) r.maxPen = d;
		}
		if (total > budgetS * 1000.0) break;
	}
	double d = penetration(&s, pos, quat);
	if (d > r.maxPen) r.maxPen = d;
	finish(&s, pos, prev, &r);
	r.ms = r.steps > 0 ? total / r.steps : NAN;
	int n = r.steps > 0 ? r.steps : 1;
	int standing = !r.diverged && r.minZ > 0.0;
	bench_print("funnel1000", "ibdyn", r.ms, maxRes,
	            "standing=%s max_penetration=%.3g steps=%d steps_scene=%d h=%.6g bodies=%d sim_time=%.3f "
	            "detection_ms_mean=%.3g detection_ms_max=%.3g collision_ms_mean=%.3g collision_ms_max=%.3g "
	            "contact_ms_mean=%.3g contact_ms_max=%.3g colliding_mean=%.1f colliding_max=%d resting_mean=%.1f "
	            "resting_max=%d min_z=%.3g final_max_speed=%.3g max_toi_substeps=%d%s",
	            standing ? "yes" : "no", r.maxPen, r.steps, s.steps, s.h, s.n, r.steps * s.h, sum[0] / n, mx[0],
	            sum[1] / n, mx[1], sum[2] / n, mx[2], (double)sumCol / n, maxCol, (double)sumRest / n, maxRest, r.minZ,
	            r.maxSpeed, ibWorld_GetCollisionSettings(w).maxToiSubsteps, r.diverged ? " diverged=1" : "");
	printf("# funnel1000 thesis (Table 5.1, 8 s at h = 0.001, 2007 hardware): collisions max 332 / mean 38 per step, "
	       "time max 61.02 ms / mean 2.02 ms; resting contacts max 2813 / mean 879, time max 69.87 ms / mean 10.02 ms\n");
	printf("# funnel1000 ibdyn (%.3f s simulated): colliding points max %d / mean %.1f, collision resolution max %.2f ms / "
	       "mean %.2f ms; contact joints max %d / mean %.1f, time max %.2f ms / mean %.2f ms; detection max %.2f ms / "
	       "mean %.2f ms\n",
	       r.steps * s.h, maxCol, (double)sumCol / n, mx[1], sum[1] / n, maxRest, (double)sumRest / n, mx[2], sum[2] / n,
	       mx[0], sum[0] / n);
	fflush(stdout);
	free(pos), free(prev), free(quat), free(all), free(cubes);
	freeScene(&s);
	ibDestroyWorld(w);
}

int main(int argc, char** argv)
{
	int peers = 1, want[3] = {0, 0, 0}, any = 0, funnel = 0;
	const char* trace = getenv("IBDYN_BENCH_TRACE");
	traceSteps = trace && trace[0] == '1';
	for (int i = 1; i < argc; ++i) {
		if (strncmp(argv[i], "--budget-s=", 11) == 0) budgetS = atof(argv[i] + 11);
		else if (strncmp(argv[i], "--steps=", 8) == 0) stepsOverride = atoi(argv[i] + 8);
		else if (strcmp(argv[i], "--no-peers") == 0) peers = 0;
		else if (strncmp(argv[i], "--warm=", 7) == 0) ibdynWarm = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--shock=", 8) == 0) ibdynShock = atoi(argv[i] + 8);
		else if (strcmp(argv[i], "--no-variants") == 0) ibdynVariants = 0;
		else if (strncmp(argv[i], "--max-toi-substeps=", 19) == 0) ibdynToiSubsteps = atoi(argv[i] + 19);
		else if (strncmp(argv[i], "--spec=", 7) == 0) ibdynSpec = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--stall=", 8) == 0) ibdynStall = atoi(argv[i] + 8);
		else if (strncmp(argv[i], "--caps=", 7) == 0) ibdynCaps = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--pos-tol=", 10) == 0) ibdynPosTol = atof(argv[i] + 10);
		else if (strncmp(argv[i], "--vel-tol=", 10) == 0) ibdynVelTol = atof(argv[i] + 10);
		else if (strncmp(argv[i], "--sleep=", 8) == 0) sleepAll = atoi(argv[i] + 8);
		else if (strncmp(argv[i], "--subdiv=", 9) == 0) ibdynSubdiv = atoi(argv[i] + 9);
		else if (strncmp(argv[i], "--joint-response=", 17) == 0) ibdynJointResponse = atoi(argv[i] + 17);
		else if (strcmp(argv[i], "pyramid20") == 0) want[0] = any = 1;
		else if (strcmp(argv[i], "rain1000") == 0) want[1] = any = 1;
		else if (strcmp(argv[i], "wall252") == 0) want[2] = any = 1;
		else if (strcmp(argv[i], "funnel1000") == 0) funnel = any = 1; /* only on request: steps take ~0.5 s */
		else {
			fprintf(stderr, "usage: bench_contacts [pyramid20] [rain1000] [wall252] [funnel1000] [--budget-s=S] [--steps=N] [--no-peers] [--warm=0|1] [--shock=N] [--no-variants] [--max-toi-substeps=N] [--spec=0|1] [--stall=N] [--caps=N] [--pos-tol=M] [--vel-tol=V] [--sleep=0|1] [--subdiv=N] [--joint-response=0|1]\n");
			return 2;
		}
	}
	double t0 = bench_now_ms();
	ContactScene s;
	if (!any || want[0]) {
		makePyramid(&s, 20);
		boxScene(&s, 1, peers);
		freeScene(&s);
	}
	if ((!any || want[1]) && makeRain(&s, 1000) == 0) {
		boxScene(&s, 0, peers);
		freeScene(&s);
	}
	/* wall252 only on request: its 1000 steps take ~100 s with shock propagation and ~190 s without (2-core VM) */
	if (want[2]) {
		wallScene(10);
		wallScene(0);
	}
	if (funnel) funnelScene();
	printf("# bench_contacts: total wall time %.1f s\n", (bench_now_ms() - t0) / 1000.0);
	return 0;
}
