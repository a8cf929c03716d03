/* Collision benchmark (Bender's dissertation §4.6, DIGEST §15.6): 1000 cubes falling onto the floor, collision
 * detection only (phase 1 broadphase, phase 2 exact test, phase 3 contact region). The same deterministic pose
 * sequence (bench_cubes.h) goes to ibdyn's collision pipeline, to Bullet's btCollisionWorld and to ODE's
 * dSpaceCollide/dCollide; the wall time of the detection call is measured per frame, the pair sets are checked
 * against an exact separating-axis reference and against each other.
 * Usage: bench_collision [--cubes=N] [--repeats=N] [--settled-frames=N] [--no-peers] [--trace] [--flip-quats]
 *                        [--drift=X] [--only=ENGINE] (see bench/README.md) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "bench_collision_ibdyn.h"
#include "bench_cubes.h"
#include "collision_peers.h"
#include "peers.h"

/* Pairs every engine must report (reference depth >= MUST_DEPTH) and may report (depth >= -ALLOW_GAP). */
#define MUST_DEPTH (0.5 * BENCH_CUBES_OVERLAP)
#define ALLOW_GAP 1e-3
/* Repeats of an engine stop once its detection time adds up to this (ms); at least one run. */
#define REPEAT_BUDGET_MS 4000.0

/* Thesis (§4.6): ms per collision and the time for 500 collisions (< 25 ms, ~1000 contact points), 3.4 GHz P4. */
static const double THESIS_VCLIP_MS_PER_PAIR = 0.047, THESIS_SOLID_MS_PER_PAIR = 0.049;

/* ---- measurement */

/* CPU time of this thread (ms): unlike the wall time, it does not count time slices other processes took. */
static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct Phase {
	double ms;          /* sum over the phase's frames of the per-frame fastest detection time */
	double cpuMs;       /* the same for the thread CPU time */
	long pairs, points; /* summed over the frames */
	int pairsMax, pairsFinal, pointsFinal;
	double sx, sy, sxx, sxy; /* least-squares fit time = a + b pairs over the frames with pairs > 0 */
	int fitCount;
	int frames;
} Phase;

typedef struct EngineRun {
	const char* name;
	int ok;
	int repeats;
	Phase run, settled;
	long missing, extra; /* vs the reference: must pairs not reported / reported pairs outside the allowed set */
	long diffIbdyn;      /* symmetric difference of the pair sets vs ibdyn, summed over frames (-1: not compared) */
	double maxPointsPerPair;
	double* frameMs;    /* per frame: fastest detection time (ms) */
	double* frameCpuMs; /* per frame: fastest thread CPU time of the detection (ms) */
	int *framePairs, *framePoints;
} EngineRun;

typedef struct Frames {
	int count, fall;   /* all frames; fall frames (the rest repeat the settled pile) */
	int flipQuats;     /* --flip-quats: every other frame gets the negated quaternions (same rotations) */
	double drift;      /* --drift=X: every frame's positions (m) and quaternion components get a fresh uniform
	                    * perturbation in +/- X (quaternions renormalised): a settled pile that moves a little */
	BenchPairRef* ref; /* per distinct pose: frames 0 .. fall (the settled pile is ref[fall]) */
	int64_t** ibdynKeys;
	int* ibdynCount;
} Frames;

/* Deterministic uniform number in [-1, 1] of (frame, index, component). */
static double drift_unit(int f, int i, int k)
{
	uint64_t h = (uint64_t)f * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^ (uint64_t)k * 0x94D049BB133111EBull;
	h ^= h >> 31;
	h *= 0xD6E8FEB86659FD93ull;
	h ^= h >> 32;
	return (double)(h >> 11) * 0x1.0p-52 - 1.0;
}

static void apply_drift(int n, int f, double x, double* pos, double* quat)
{
	for (int i = 0; i < n; ++i) {
		double* p = &pos[3 * i];
		double* q = &quat[4 * i];
		for (int k = 0; k < 3; ++k) p[k] += x * drift_unit(f, i, k);
		double l = 0.0;
		for (int k = 0; k < 4; ++k) {
			q[k] += x * drift_unit(f, i, 3 + k);
			l += q[k] * q[k];
		}
		l = 1.0 / sqrt(l);
		for (int k = 0; k < 4; ++k) q[k] *= l;
	}
}

static const BenchPairRef* frame_ref(const Frames* fr, int f) { return &fr->ref[f < fr->fall ? f : fr->fall]; }

static void phase_add(Phase* p, double ms, double cpuMs, int pairs, int points)
{
	p->ms += ms;
	p->cpuMs += cpuMs;
	p->pairs += pairs;
	p->points += points;
	if (pairs > p->pairsMax) p->pairsMax = pairs;
	p->pairsFinal = pairs;
	p->pointsFinal = points;
	p->frames++;
	if (pairs > 0) {
		p->sx += pairs;
		p->sy += ms;
		p->sxx += (double)pairs * pairs;
		p->sxy += (double)pairs * ms;
		p->fitCount++;
	}
}

/* Least-squares slope (ms per pair) and intercept over the frames with pairs; NaN if degenerate. */
static void phase_fit(const Phase* p, double* slope, double* intercept)
{
	double n = p->fitCount, den = n * p->sxx - p->sx * p->sx;
	*slope = *intercept = NAN;
	if (p->fitCount < 3 || !(fabs(den) > 1e-9 * n * p->sxx)) return;
	*slope = (n * p->sxy - p->sx * p->sy) / den;
	*intercept = (p->sy - *slope * p->sx) / n;
}

static int cmp_pair(const void* x, const void* y)
{
	const BenchPair *a = x, *b = y;
	if (a->a != b->a) return (a->a > b->a) - (a->a < b->a);
	return (a->b > b->b) - (a->b < b->b);
}

/* Run the whole pose sequence through one engine `repeats` times (fewer if the budget is used up). Per frame the
 * fastest detection time counts; the pair sets are checked in the first run (the runs are deterministic). */
static int run_engine(BenchCollider* c, const BenchCubes* s, Frames* fr, int repeats, int storeIbdyn, EngineRun* er)
{
	memset(er, 0, sizeof *er);
	er->name = c->name;
	er->diffIbdyn = storeIbdyn ? 0 : -1;
	const int n = s->count;
	double* pos = malloc(sizeof(double) * 3 * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	double* best = er->frameMs = malloc(sizeof(double) * (size_t)fr->count);
	double* bestCpu = er->frameCpuMs = malloc(sizeof(double) * (size_t)fr->count);
	int* pairCount = er->framePairs = calloc((size_t)fr->count, sizeof(int));
	int* pointCount = er->framePoints = calloc((size_t)fr->count, sizeof(int));
	int cap = 4 * n + 64;
	BenchPair* pairs = malloc(sizeof *pairs * (size_t)cap);
	int64_t* keys = malloc(sizeof *keys * (size_t)cap);
	int rc = -1;
	if (!pos || !quat || !best || !bestCpu || !pairCount || !pointCount || !pairs || !keys) goto done;
	double spent = 0.0;
	for (int r = 0; r < repeats && (r == 0 || spent < REPEAT_BUDGET_MS); ++r) {
		for (int f = 0; f < fr->count; ++f) {
			bench_cubes_pose(s, f, pos, quat);
			if (fr->flipQuats && ((r * fr->count + f) & 1))
				for (int i = 0; i < 4 * n; ++i) quat[i] = -quat[i];
			if (fr->drift > 0.0) apply_drift(n, f, fr->drift, pos, quat);
			c->setPoses(c->impl, pos, quat);
			double t0 = bench_now_ms(), c0 = thread_cpu_ms();
			int bad = c->detect(c->impl);
			double ms = bench_now_ms() - t0, cpu = thread_cpu_ms() - c0;
			spent += ms;
			if (bad) {
				fprintf(stderr, "bench: %s: detection failed at frame %d\n", c->name, f);
				goto done;
			}
			best[f] = r == 0 ? ms : fmin(best[f], ms);
			bestCpu[f] = r == 0 ? cpu : fmin(bestCpu[f], cpu);
			if (r > 0) continue;
			int np = c->pairs(c->impl, pairs, cap);
			if (np > cap) {
				int nc = np + np / 2;
				BenchPair* p2 = realloc(pairs, sizeof *pairs * (size_t)nc);
				int64_t* k2 = p2 ? realloc(keys, sizeof *keys * (size_t)nc) : NULL;
				if (p2) pairs = p2;
				if (!k2) goto done;
				keys = k2;
				cap = nc;
				np = c->pairs(c->impl, pairs, cap);
			}
			qsort(pairs, (size_t)np, sizeof *pairs, cmp_pair);
			int points = 0;
			for (int k = 0; k < np; ++k) {
				points += pairs[k].points;
				if (pairs[k].points > er->maxPointsPerPair) er->maxPointsPerPair = pairs[k].points;
				keys[k] = bench_pair_key(n, pairs[k].a, pairs[k].b);
			}
			bench_sort_keys(keys, np); /* (a, b)-order is key order already; keeps duplicates adjacent */
			pairCount[f] = np;
			pointCount[f] = points;
			const BenchPairRef* ref = frame_ref(fr, f);
			er->missing += bench_keys_missing(ref->must, ref->mustCount, keys, np);
			er->extra += bench_keys_missing(keys, np, ref->allow, ref->allowCount);
			if (storeIbdyn) {
				fr->ibdynKeys[f] = malloc(sizeof(int64_t) * (size_t)(np > 0 ? np : 1));
				if (!fr->ibdynKeys[f]) goto done;
				memcpy(fr->ibdynKeys[f], keys, sizeof(int64_t) * (size_t)np);
				fr->ibdynCount[f] = np;
			} else if (fr->ibdynKeys && fr->ibdynKeys[f]) {
				er->diffIbdyn += bench_keys_missing(keys, np, fr->ibdynKeys[f], fr->ibdynCount[f]) +
				                 bench_keys_missing(fr->ibdynKeys[f], fr->ibdynCount[f], keys, np);
			}
		}
		er->repeats = r + 1;
	}
	for (int f = 0; f < fr->count; ++f)
		phase_add(f < fr->fall ? &er->run : &er->settled, best[f], bestCpu[f], pairCount[f], pointCount[f]);
	er->ok = 1;
	rc = 0;
done:
	free(pos);
	free(quat);
	free(pairs);
	free(keys);
	return rc;
}

/* ---- reporting */

static double ratio(double ours, double peer) { return peer > 0.0 ? ours / peer : NAN; }

static void print_phase(const char* scene, const EngineRun* er, const Phase* p, const char* phase,
                        const EngineRun* runs, int nRuns, int isOurs)
{
	double ms = p->frames ? p->ms / p->frames : NAN;
	double pairs = p->frames ? (double)p->pairs / p->frames : 0.0;
	double points = p->frames ? (double)p->points / p->frames : 0.0;
	double slope, icpt;
	phase_fit(p, &slope, &icpt);
	printf("bench: scene=%s engine=%s ms_per_step=%.4f max_error=0 phase=%s steps=%d pairs=%.1f points=%.1f "
	       "ms_per_pair=%.6f pairs_max=%d pairs_final=%d points_final=%d",
	       scene, er->name, ms, phase, p->frames, pairs, points, p->pairs > 0 ? p->ms / (double)p->pairs : NAN,
	       p->pairsMax, p->pairsFinal, p->pointsFinal);
	if (strcmp(phase, "run") == 0) {
		printf(" fit_ms_per_pair=%.6f fit_ms_at_0=%.4f", slope, icpt);
		if (p->pairsMax >= 500) printf(" fit_ms_at_500=%.4f", icpt + 500.0 * slope);
		printf(" missing=%ld extra=%ld mismatches=%ld", er->missing, er->extra, er->missing + er->extra);
		if (er->diffIbdyn >= 0) printf(" diff_vs_ibdyn=%ld", er->diffIbdyn);
		printf(" max_points_per_pair=%.0f", er->maxPointsPerPair);
	}
	printf(" cpu_ms_per_step=%.4f repeats=%d", p->frames ? p->cpuMs / p->frames : NAN, er->repeats);
	if (isOurs)
		for (int k = 0; k < nRuns; ++k) {
			if (&runs[k] == er || !runs[k].ok) continue;
			const Phase* q = strcmp(phase, "run") == 0 ? &runs[k].run : &runs[k].settled;
			printf(" ratio_%s=%.4f", runs[k].name, ratio(p->ms, q->ms));
		}
	putchar('\n');
	fflush(stdout);
}

/* One line per frame with every engine's time and counts (for a plot like the thesis' Fig. 4.7). */
static void print_trace(const char* scene, const Frames* fr, const EngineRun* runs, int nRuns, double h)
{
	for (int f = 0; f < fr->count; ++f) {
		const BenchPairRef* ref = frame_ref(fr, f);
		printf("trace: scene=%s frame=%d t=%.4f phase=%s must_pairs=%d", scene, f, f * h,
		       f < fr->fall ? "run" : "settled", ref->mustCount);
		for (int k = 0; k < nRuns; ++k)
			if (runs[k].ok)
				printf(" %s_ms=%.4f %s_pairs=%d %s_points=%d", runs[k].name, runs[k].frameMs[f], runs[k].name,
				       runs[k].framePairs[f], runs[k].name, runs[k].framePoints[f]);
		putchar('\n');
	}
}

static void print_thesis(const char* scene, const char* engine, double msPerPair)
{
	printf("bench: scene=%s engine=%s ms_per_step=%.2f max_error=nan pairs=500 points=1000 ms_per_pair=%.3f "
	       "source=sec4.6 hardware=pentium4-3.4GHz\n",
	       scene, engine, 500.0 * msPerPair, msPerPair);
}

static int parse_int(const char* arg, const char* name, const char* next, int* out, int* consumed)
{
	size_t len = strlen(name);
	*consumed = 0;
	if (strncmp(arg, name, len) != 0) return 0;
	const char* v = NULL;
	if (arg[len] == '=')
		v = arg + len + 1;
	else if (arg[len] == '\0' && next) {
		v = next;
		*consumed = 1;
	} else
		return 0;
	char* end = NULL;
	long x = strtol(v, &end, 10);
	if (!end || *end || x < 0 || x > 1000000) return -1;
	*out = (int)x;
	return 1;
}

static int parse_double(const char* arg, const char* name, double* out)
{
	size_t len = strlen(name);
	if (strncmp(arg, name, len) != 0 || arg[len] != '=') return 0;
	char* end = NULL;
	double x = strtod(arg + len + 1, &end);
	if (!end || *end || !(x >= 0.0 && x <= 1.0)) return -1;
	*out = x;
	return 1;
}

int main(int argc, char** argv)
{
	int cubes = 1000, repeats = 3, settledFrames = 60, peers = 1, trace = 0, flipQuats = 0;
	double drift = 0.0;
	const char* only = NULL; /* --only=ENGINE: ibdyn and that peer only (e.g. for callgrind) */
	for (int i = 1; i < argc; ++i) {
		const char* next = i + 1 < argc ? argv[i + 1] : NULL;
		int used = 0, r;
		if ((r = parse_int(argv[i], "--cubes", next, &cubes, &used)) ||
		    (r = parse_int(argv[i], "--repeats", next, &repeats, &used)) ||
		    (r = parse_int(argv[i], "--settled-frames", next, &settledFrames, &used))) {
			if (r < 0) {
				fprintf(stderr, "bench_collision: bad value in %s\n", argv[i]);
				return 2;
			}
			i += used;
		} else if (strcmp(argv[i], "--no-peers") == 0) {
			peers = 0;
		} else if (strcmp(argv[i], "--trace") == 0) {
			trace = 1;
		} else if (strcmp(argv[i], "--flip-quats") == 0) {
			flipQuats = 1;
		} else if (strncmp(argv[i], "--only=", 7) == 0) {
			only = argv[i] + 7;
		} else if ((r = parse_double(argv[i], "--drift", &drift)) != 0) {
			if (r < 0) {
				fprintf(stderr, "bench_collision: bad value in %s (0 <= X <= 1)\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench_collision [--cubes=N] [--repeats=N] [--settled-frames=N] [--no-peers] "
			                "[--trace] [--flip-quats] [--drift=X] [--only=ENGINE]\n");
			return 2;
		}
	}
	if (cubes < 1 || repeats < 1) {
		fprintf(stderr, "bench_collision: --cubes and --repeats must be >= 1\n");
		return 2;
	}
	double tStart = bench_now_ms();
	char scene[32];
	int sl = snprintf(scene, sizeof scene, flipQuats ? "cubes%d-flipq" : "cubes%d", cubes);
	if (drift > 0.0 && sl > 0 && sl < (int)sizeof scene) snprintf(scene + sl, sizeof scene - (size_t)sl, "-drift%.0e", drift);
	BenchCubes s;
	if (bench_cubes_make(&s, cubes, BENCH_CUBES_SEED)) {
		fprintf(stderr, "bench_collision: could not build the scene\n");
		return 1;
	}
	Frames fr = {0};
	fr.fall = s.fallFrames;
	fr.count = s.fallFrames + settledFrames;
	fr.flipQuats = flipQuats;
	fr.drift = drift;
	fr.ref = calloc((size_t)fr.fall + 1, sizeof *fr.ref);
	fr.ibdynKeys = calloc((size_t)fr.count, sizeof *fr.ibdynKeys);
	fr.ibdynCount = calloc((size_t)fr.count, sizeof *fr.ibdynCount);
	double* pos = malloc(sizeof(double) * 3 * (size_t)cubes);
	double* quat = malloc(sizeof(double) * 4 * (size_t)cubes);
	int rc = 1;
	if (!fr.ref || !fr.ibdynKeys || !fr.ibdynCount || !pos || !quat) goto done;

	/* Reference pair sets of every distinct pose, and the trajectory's own check: nothing penetrates deeper than
	 * the resting overlap. */
	double maxDepth = 0.0, pileTop = 0.0;
	for (int f = 0; f <= fr.fall; ++f) {
		bench_cubes_pose(&s, f, pos, quat);
		if (bench_cubes_reference(&s, pos, quat, MUST_DEPTH, ALLOW_GAP, &fr.ref[f])) goto done;
		maxDepth = fmax(maxDepth, fr.ref[f].maxDepth);
	}
	for (int i = 0; i < cubes; ++i) pileTop = fmax(pileTop, s.rest[3 * i + 2]);
	const BenchPairRef* pile = &fr.ref[fr.fall];
	printf("# %s: %d cubes (edge %.2f m, %d flat, %d random orientations), %d layers of %dx%d, h=%.6f s, "
	       "fall_frames=%d settled_frames=%d; settled pile: must_pairs=%d allowed_pairs=%d highest_centre=%.3f m; "
	       "max_reference_depth=%.3e m (resting overlap %.1e m)\n",
	       scene, cubes, 2.0 * s.half, s.flatCount, cubes - s.flatCount, s.layers, s.side, s.side, s.h, fr.fall,
	       settledFrames, pile->mustCount, pile->allowCount, pileTop, maxDepth, BENCH_CUBES_OVERLAP);
	if (maxDepth > 2.0 * BENCH_CUBES_OVERLAP) {
		fprintf(stderr, "bench_collision: the generated trajectory interpenetrates by %.3e m\n", maxDepth);
		goto done;
	}

	enum { MAX_ENGINES = 5 };
	BenchCollider cols[MAX_ENGINES];
	EngineRun runs[MAX_ENGINES];
	int nEngines = 0;
	memset(runs, 0, sizeof runs);
	if (bench_ibdyn_collider(&cols[nEngines], &s)) goto done;
	++nEngines;
	if (peers) {
		bench_ode_init();
		if (bench_bullet_collider(&cols[nEngines], &s, 0) == 0) ++nEngines;
		if (bench_bullet_collider(&cols[nEngines], &s, 1) == 0) ++nEngines;
		if (bench_ode_collider(&cols[nEngines], &s, 0, bench_ibdyn_max_manifold_points()) == 0) ++nEngines;
		if (bench_ode_collider(&cols[nEngines], &s, 1, bench_ibdyn_max_manifold_points()) == 0) ++nEngines;
	}
	int failed = 0;
	for (int k = 0; k < nEngines; ++k) {
		if (k > 0 && only && strcmp(cols[k].name, only) != 0) {
			cols[k].destroy(cols[k].impl);
			continue;
		}
		if (run_engine(&cols[k], &s, &fr, repeats, k == 0, &runs[k])) failed = 1;
		cols[k].destroy(cols[k].impl);
	}
	if (peers) bench_ode_close();
	for (int k = 0; k < nEngines; ++k)
		if (runs[k].ok) print_phase(scene, &runs[k], &runs[k].run, "run", runs, nEngines, k == 0);
	for (int k = 0; k < nEngines; ++k)
		if (runs[k].ok) print_phase(scene, &runs[k], &runs[k].settled, "settled", runs, nEngines, k == 0);
	print_thesis(scene, "thesis-vclip", THESIS_VCLIP_MS_PER_PAIR);
	print_thesis(scene, "thesis-solid", THESIS_SOLID_MS_PER_PAIR);
	if (runs[0].ok)
		for (int k = 1; k < nEngines; ++k) {
			if (!runs[k].ok) continue;
			bench_ratio_ex(scene, "ibdyn", runs[0].run.ms, runs[k].name, runs[k].run.ms,
			               "phase=run cpu_time_ratio=%.4f", ratio(runs[0].run.cpuMs, runs[k].run.cpuMs));
			bench_ratio_ex(scene, "ibdyn", runs[0].settled.ms, runs[k].name, runs[k].settled.ms,
			               "phase=settled cpu_time_ratio=%.4f", ratio(runs[0].settled.cpuMs, runs[k].settled.cpuMs));
		}
	if (trace) print_trace(scene, &fr, runs, nEngines, s.h);
	for (int k = 0; k < nEngines; ++k) {
		free(runs[k].frameMs);
		free(runs[k].frameCpuMs);
		free(runs[k].framePairs);
		free(runs[k].framePoints);
	}
	printf("# bench_collision: total wall time %.1f s\n", (bench_now_ms() - tStart) / 1000.0);
	rc = failed;
done:
	if (fr.ref)
		for (int f = 0; f <= fr.fall; ++f) bench_pair_ref_free(&fr.ref[f]);
	if (fr.ibdynKeys)
		for (int f = 0; f < fr.count; ++f) free(fr.ibdynKeys[f]);
	free(fr.ref);
	free(fr.ibdynKeys);
	free(fr.ibdynCount);
	free(pos);
	free(quat);
	bench_cubes_free(&s);
	return rc;
}
