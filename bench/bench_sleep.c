/* Sleeping of resting islands (issue 6 part 7, docs/contacts.md "Sleeping"): scatter100 = 100 unit boxes
 * (1 kg) dropped from 0.2 .. 1.2 m with random tilts onto a static ground, on a 10 x 10 grid 2 m apart (not
 * piled: every box comes to rest on its own), at 60 Hz for 6 s, with the bench_contacts settings. The same
 * scene is run with sleeping on (engine=ibdyn) and off (engine=ibdyn-nosleep): mean ms per step over the
 * whole run and over the last second (after settling), when all boxes sleep, the largest exact box
 * penetration (max_error, bench_box_depth, every 10th step), and how far the final poses of the two runs
 * differ (what sleeping changes in the result). Options: --seconds=T, --boxes=N (a square number). */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"
#include "bench_cubes.h"

#include <ibdyn/ibdyn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Run {
	double msAll, msSettled;   /* mean ms per step: whole run, last second */
	double maxPen;             /* largest penetration (m) */
	double allAsleepAt;        /* first time every box sleeps (s), -1 if never */
	int awakeFinal, islandsFinal, pointsFinal, contactSweepsFinal;
	double* pos;               /* final positions (3 n) */
	double drift;              /* tilt 0: largest distance of a final pose from the exact rest (x0, y0, 0.5) (m) */
	int diverged;
} Run;

static double H = 1.0 / 120.0;
static double tilt = 0.0; /* largest initial tilt (rad); tilted boxes currently make the contact solver diverge */
static int boxGround = 0; /* ground: plane (default) or a 100 m x 100 m x 1 m box */
static const double groundC[3] = {0, 0, -0.5}, groundE[3] = {50, 50, 0.5}, ident[4] = {1, 0, 0, 0};
static const double boxE[3] = {0.5, 0.5, 0.5};

static ibWorldId makeWorld(int n, bool sleeping, ibBodyId* bodies)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.velocityTolerance = 1e-4; /* as bench_contacts */
	wd.solver.contact.collisionTolerance = 1e-3;
	wd.solver.contact.contactPositionTolerance = 1e-5;
	wd.solver.contact.shockIterations = 10;
	wd.solver.sleep.enabled = sleeping;
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	gd.position = (ibVec3){groundC[0], groundC[1], groundC[2]};
	ibBodyId g = ibCreateBody(w, &gd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = (ibMaterial){0.0, 0.25, 0.25}; /* mu = 0.5 by the sum rule */
	if (!boxGround) {
		ibPlane pl = {{0, 0, 1}, groundE[2]};
		ibCreatePlaneShape(g, &sd, &pl);
	} else {
		ibBox gb = {{groundE[0], groundE[1], groundE[2]}};
		ibCreateBoxShape(g, &sd, &gb);
	}
	int side = (int)lround(sqrt((double)n));
	for (int i = 0; i < n; ++i) {
		double d[3], h[3];
		bench_direction(BENCH_DIRECTION_SEED, i, d);           /* tilt axis */
		bench_direction(BENCH_DIRECTION_SEED, i + 1000, h);    /* tilt angle and drop height */
		double angle = tilt * fabs(h[0]), drop = 0.2 + fabs(h[1]);
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(2.0 * (i % side - (side - 1) / 2.0), 2.0 * (i / side - (side - 1) / 2.0), 0.87 + drop);
		bd.rotation = ibQuatFromAxisAngle(ibV3(d[0], d[1], d[2]), angle);
		bodies[i] = ibCreateBody(w, &bd);
		sd.mass = 1.0;
		ibBox b = {{boxE[0], boxE[1], boxE[2]}};
		ibCreateBoxShape(bodies[i], &sd, &b);
	}
	return w;
}

static double penetration(int n, const ibBodyId* bodies, double* pos, double* quat)
{
	for (int i = 0; i < n; ++i) {
		ibVec3 p = ibBody_GetPosition(bodies[i]);
		ibQuat q = ibBody_GetRotation(bodies[i]);
		pos[3 * i] = p.x, pos[3 * i + 1] = p.y, pos[3 * i + 2] = p.z;
		quat[4 * i] = q.w, quat[4 * i + 1] = q.x, quat[4 * i + 2] = q.y, quat[4 * i + 3] = q.z;
	}
	double worst = 0.0, r = sqrt(3.0) * 0.5;
	for (int i = 0; i < n; ++i) {
		if (pos[3 * i + 2] - r < 0.0) worst = fmax(worst, bench_box_depth(&pos[3 * i], &quat[4 * i], boxE, groundC, ident, groundE));
		for (int j = i + 1; j < n; ++j) {
			double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1], dz = pos[3 * i + 2] - pos[3 * j + 2];
			if (dx * dx + dy * dy + dz * dz > 4 * r * r) continue;
			worst = fmax(worst, bench_box_depth(&pos[3 * i], &quat[4 * i], boxE, &pos[3 * j], &quat[4 * j], boxE));
		}
	}
	return worst;
}

static Run run(int n, double seconds, bool sleeping)
{
	Run r = {0};
	r.allAsleepAt = -1.0;
	ibBodyId* bodies = malloc(sizeof(ibBodyId) * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	r.pos = malloc(sizeof(double) * 3 * (size_t)n);
	ibWorldId w = makeWorld(n, sleeping, bodies);
	int steps = (int)lround(seconds / H), settled = (int)lround(1.0 / H);
	if (settled > steps) settled = steps;
	double total = 0.0, last = 0.0;
	for (int k = 0; k < steps; ++k) {
		double t0 = bench_now_ms();
		ibResult res = ibWorld_Step(w, H);
		double dt = bench_now_ms() - t0;
		if (res != IB_OK) {
			printf("# scatter%d %s: step %d: %s\n", n, sleeping ? "ibdyn" : "ibdyn-nosleep", k + 1, ibWorld_GetLastError(w));
			r.diverged = 1;
			break;
		}
		total += dt;
		if (k >= steps - settled) last += dt;
		ibStepStats st = ibWorld_GetStepStats(w);
		if (r.allAsleepAt < 0.0 && st.awakeBodies == 0) r.allAsleepAt = (k + 1) * H;
		if (k % 10 == 9 || k == steps - 1) r.maxPen = fmax(r.maxPen, penetration(n, bodies, r.pos, quat));
		r.awakeFinal = st.awakeBodies;
		r.islandsFinal = st.sleepingIslands;
		r.pointsFinal = st.contactPoints;
		r.contactSweepsFinal = st.contactIterations + st.contactVelocityIterations;
	}
	penetration(n, bodies, r.pos, quat);
	int side = (int)lround(sqrt((double)n));
	for (int i = 0; i < n; ++i) {
		double dx = r.pos[3 * i] - 2.0 * (i % side - (side - 1) / 2.0), dy = r.pos[3 * i + 1] - 2.0 * (i / side - (side - 1) / 2.0);
		double dz = r.pos[3 * i + 2] - 0.5;
		r.drift = fmax(r.drift, sqrt(dx * dx + dy * dy + dz * dz));
	}
	r.msAll = total / steps;
	r.msSettled = last / settled;
	ibDestroyWorld(w);
	free(bodies);
	free(quat);
	return r;
}

int main(int argc, char** argv)
{
	double seconds = 6.0;
	int n = 100;
	for (int i = 1; i < argc; ++i) {
		if (strncmp(argv[i], "--seconds=", 10) == 0) seconds = atof(argv[i] + 10);
		else if (strncmp(argv[i], "--boxes=", 8) == 0) n = atoi(argv[i] + 8);
		else if (strncmp(argv[i], "--hz=", 5) == 0) H = 1.0 / atof(argv[i] + 5);
		else if (strncmp(argv[i], "--tilt=", 7) == 0) tilt = atof(argv[i] + 7);
		else if (strcmp(argv[i], "--box-ground") == 0) boxGround = 1;
		else {
			fprintf(stderr, "usage: %s [--seconds=T] [--boxes=N] [--hz=F] [--tilt=RAD] [--box-ground]\n", argv[0]);
			return 2;
		}
	}
	if (!(seconds >= 1.0) || n < 1) {
		fprintf(stderr, "need --seconds >= 1 and --boxes >= 1\n");
		return 2;
	}
	char scene[32];
	snprintf(scene, sizeof scene, "scatter%d", n);
	Run on = run(n, seconds, true), off = run(n, seconds, false);
	double diff = 0.0;
	for (int i = 0; i < 3 * n; i += 3) {
		double dx = on.pos[i] - off.pos[i], dy = on.pos[i + 1] - off.pos[i + 1], dz = on.pos[i + 2] - off.pos[i + 2];
		diff = fmax(diff, sqrt(dx * dx + dy * dy + dz * dz));
	}
	const Run* runs[2] = {&on, &off};
	const char* names[2] = {"ibdyn", "ibdyn-nosleep"};
	for (int e = 0; e < 2; ++e) {
		const Run* r = runs[e];
		bench_print(scene, names[e], r->msAll, r->maxPen,
		            "ms_per_step_settled=%.4g all_asleep_at=%.3g awake_final=%d sleeping_islands_final=%d "
		            "contact_points_final=%d contact_sweeps_final=%d final_drift=%.3g steps=%d h=%.6g bodies=%d tilt=%g%s",
		            r->msSettled, r->allAsleepAt, r->awakeFinal, r->islandsFinal, r->pointsFinal, r->contactSweepsFinal,
		            r->drift, (int)lround(seconds / H), H, n, tilt, r->diverged ? " diverged=1" : "");
	}
	bench_print(scene, "ibdyn-vs-nosleep", on.msAll, diff,
	            "time_ratio=%.3g time_ratio_settled=%.3g final_pose_difference=%.3g", on.msAll / off.msAll,
	            on.msSettled / off.msSettled, diff);
	free(on.pos);
	free(off.pos);
	return on.diverged || off.diverged;
}
