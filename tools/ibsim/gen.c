/* ibsim gen: chain and tree models of the joint benchmarks (Bender, §3.3.3.1; bench/bench_common.c
 * builds the same geometry for the engine comparison), built through the public API and saved with
 * ibSaveScene / ibSaveSceneToMemory. */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ibdyn/scene.h>

#include "cli_args.h"

/* ---------------------------------------------------------------- directions */

/* The splitmix64 output function (finaliser). */
static uint64_t splitmix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Top 53 bits as a double in [0, 1). */
static double unitInterval(uint64_t z) { return (double)(z >> 11) * (1.0 / 9007199254740992.0); }

void ibsimDirection(uint64_t seed, int index, double out[3])
{
	const uint64_t step = UINT64_C(0x9e3779b97f4a7c15); /* golden-ratio increment of splitmix64 */
	uint64_t state = seed + (uint64_t)(2 * (int64_t)index + 1) * step;
	double u = unitInterval(splitmix64(state));
	double v = unitInterval(splitmix64(state + step));
	double z = 2.0 * u - 1.0; /* uniform z and azimuth: uniform on the sphere (Archimedes) */
	double r = sqrt(fmax(0.0, 1.0 - z * z));
	double phi = 2.0 * IB_PI * v;
	out[0] = r * cos(phi);
	out[1] = r * sin(phi);
	out[2] = z;
}

/* ---------------------------------------------------------------- models */

typedef struct builder {
	ibWorldId world;
	ibResult result;
	char* msg;
	size_t msgSize;
} builder;

static void failed(builder* b, const char* what)
{
	if (b->result != IB_OK) return;
	b->result = IB_ERR_INVALID_ARGUMENT;
	snprintf(b->msg, b->msgSize, "gen: %s failed: %s", what, ibWorld_GetLastError(b->world));
}

static bool beginWorld(builder* b, char* msg, size_t msgSize)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.gravity = ibV3(0.0, 0.0, -9.81);
	wd.solver.positionTolerance = 1e-6; /* eps_d of the dissertation */
	wd.solver.angularTolerance = 1e-6;
	wd.solver.velocityTolerance = 1e-6; /* eps_v */
	wd.collision.enabled = false;       /* joint models of §3.3: the links' shapes overlap, no contacts */
	*b = (builder){ibCreateWorld(&wd), IB_OK, msg, msgSize};
	if (IB_IS_NULL(b->world)) {
		snprintf(msg, msgSize, "gen: cannot create the world");
		b->result = IB_ERR_OUT_OF_MEMORY;
		return false;
	}
	return true;
}

/* A dynamic box body (frame at its centre, identity rotation); mass > 0 is explicit, else density. */
static ibBodyId addBox(builder* b, const char* name, ibVec3 center, ibVec3 halfExtents, double mass, double density,
                       ibVec3 velocity)
{
	if (b->result != IB_OK) return IB_NULL_BODY;
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.name = name;
	bd.position = center;
	bd.linearVelocity = velocity;
	ibBodyId body = ibCreateBody(b->world, &bd);
	if (IB_IS_NULL(body)) {
		failed(b, name);
		return body;
	}
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = mass;
	if (density > 0.0) sd.density = density;
	if (IB_IS_NULL(ibCreateBoxShape(body, &sd, &(ibBox){halfExtents}))) failed(b, name);
	/* adding the shape keeps the centre of mass at the frame origin; the velocity stays as given */
	return body;
}

static ibBodyId addGround(builder* b)
{
	ibBodyDef bd = ibDefaultBodyDef(); /* static, at the origin */
	bd.name = "ground";
	ibBodyId ground = ibCreateBody(b->world, &bd);
	if (IB_IS_NULL(ground)) failed(b, "ground");
	return ground;
}

static void addBall(builder* b, const char* name, ibBodyId a, ibBodyId c, ibVec3 anchor)
{
	if (b->result != IB_OK) return;
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL);
	jd.name = name;
	jd.bodyA = a;
	jd.bodyB = c;
	if (ibJointDef_SetWorldAnchors(&jd, anchor, anchor) != IB_OK || IB_IS_NULL(ibCreateJoint(b->world, &jd)))
		failed(b, name);
}

static ibResult finish(builder* b, ibWorldId* outWorld)
{
	if (b->result != IB_OK) {
		if (!IB_IS_NULL(b->world)) ibDestroyWorld(b->world);
		return b->result;
	}
	*outWorld = b->world;
	return IB_OK;
}

/* Chain (§3.3.3.1, Fig. 3.27): n boxes 1 m x 0.1 m x 0.1 m of 1 kg hang straight down from a static
 * body at the origin; body i has its centre at (0, 0, -(i + 1/2)) and its long axis along z; ball
 * joint i at (0, 0, -i) joins body i-1 (the static body for i = 0) and body i. Each body starts
 * with the centre-of-mass velocity 2 m/s along ibsimDirection(IBSIM_DIRECTION_SEED, i). */
ibResult ibsimBuildChain(int n, ibWorldId* outWorld, char* msg, size_t msgSize)
{
	*outWorld = IB_NULL_WORLD;
	builder b;
	if (n < 1 || n > IBSIM_GEN_MAX_CHAIN) {
		snprintf(msg, msgSize, "gen: chain length %d out of range", n);
		return IB_ERR_INVALID_ARGUMENT;
	}
	if (!beginWorld(&b, msg, msgSize)) return b.result;
	ibBodyId previous = addGround(&b);
	for (int i = 0; i < n && b.result == IB_OK; ++i) {
		char name[32], joint[32];
		snprintf(name, sizeof name, "link%d", i);
		snprintf(joint, sizeof joint, "joint%d", i);
		double d[3];
		ibsimDirection(IBSIM_DIRECTION_SEED, i, d);
		ibVec3 v = ibV3(2.0 * d[0], 2.0 * d[1], 2.0 * d[2]);
		ibBodyId body = addBox(&b, name, ibV3(0.0, 0.0, -((double)i + 0.5)), ibV3(0.05, 0.05, 0.5), 1.0, 0.0, v);
		addBall(&b, joint, previous, body, ibV3(0.0, 0.0, -(double)i));
		previous = body;
	}
	return finish(&b, outWorld);
}

/* Tree (§3.3.3.1, Fig. 3.29): a binary tree of 2^depthCount - 1 boxes in heap order (parent of i is
 * (i-1)/2). A body of depth d is 4 cm x 4 cm x l(d), l(d) = 1.5^(maxDepth - d) * 0.1 m, long axis
 * vertical, 600 kg/m^3. The root ("root") hangs from a static body at the origin by a ball joint
 * at its top end; the two children of a body hang from its lower face at -/+ 2 cm from its axis,
 * along x below bodies of even depth and along y below odd depth, each by a ball joint at its own
 * top end (the layout of bench_make_tree in bench/bench_common.c). */
ibResult ibsimBuildTree(int depthCount, ibWorldId* outWorld, char* msg, size_t msgSize)
{
	*outWorld = IB_NULL_WORLD;
	builder b;
	if (depthCount < 1 || depthCount > IBSIM_GEN_MAX_TREE_DEPTH) {
		snprintf(msg, msgSize, "gen: tree depth %d out of range", depthCount);
		return IB_ERR_INVALID_ARGUMENT;
	}
	int n = (1 << depthCount) - 1, maxDepth = depthCount - 1;
	ibBodyId* bodies = calloc((size_t)n, sizeof *bodies);
	ibVec3* centers = calloc((size_t)n, sizeof *centers);
	double* halfLengths = calloc((size_t)n, sizeof *halfLengths);
	int* depths = calloc((size_t)n, sizeof *depths);
	if (bodies == NULL || centers == NULL || halfLengths == NULL || depths == NULL) {
		free(bodies), free(centers), free(halfLengths), free(depths);
		snprintf(msg, msgSize, "gen: out of memory");
		return IB_ERR_OUT_OF_MEMORY;
	}
	if (beginWorld(&b, msg, msgSize)) {
		ibBodyId ground = addGround(&b);
		for (int i = 0; i < n && b.result == IB_OK; ++i) {
			int depth = 0;
			for (int k = i; k > 0; k = (k - 1) / 2) ++depth;
			double length = pow(1.5, (double)(maxDepth - depth)) * 0.1;
			ibVec3 anchor = ibV3(0.0, 0.0, 0.0);
			int parent = i == 0 ? -1 : (i - 1) / 2;
			if (parent >= 0) {
				double side = i == 2 * parent + 1 ? -1.0 : 1.0;
				anchor = ibV3(centers[parent].x, centers[parent].y, centers[parent].z - halfLengths[parent]);
				if (depths[parent] % 2 == 0)
					anchor.x += side * 0.02;
				else
					anchor.y += side * 0.02;
			}
			depths[i] = depth;
			halfLengths[i] = 0.5 * length;
			centers[i] = ibV3(anchor.x, anchor.y, anchor.z - 0.5 * length);
			char name[32], joint[32];
			if (i == 0)
				snprintf(name, sizeof name, "root");
			else
				snprintf(name, sizeof name, "node%d", i);
			snprintf(joint, sizeof joint, "joint%d", i);
			bodies[i] = addBox(&b, name, centers[i], ibV3(0.02, 0.02, halfLengths[i]), 0.0, 600.0, IB_VEC3_ZERO);
			addBall(&b, joint, parent >= 0 ? bodies[parent] : ground, bodies[i], anchor);
		}
	}
	free(bodies), free(centers), free(halfLengths), free(depths);
	return finish(&b, outWorld);
}

/* ---------------------------------------------------------------- ibsim gen */

typedef struct genOptions {
	int positional;     /* positional arguments seen */
	int model;          /* 0 chain, 1 tree */
	long long size;     /* N or DEPTH */
	const char* output; /* -o FILE, NULL = stdout */
	bool hasDt;
	double dt;
	bool hasDuration;
	double duration;
} genOptions;

static const char* const kModels[] = {"chain", "tree"};

static bool acceptGenArg(void* ctx, const char* arg, char* msg, size_t msgSize)
{
	genOptions* o = ctx;
	if (o->positional == 0) {
		if (!ibsimParseChoice(arg, kModels, 2, &o->model)) {
			snprintf(msg, msgSize, "unknown model '%s' (expected chain or tree)", arg);
			return false;
		}
	} else if (o->positional == 1) {
		long long max = o->model == 0 ? IBSIM_GEN_MAX_CHAIN : IBSIM_GEN_MAX_TREE_DEPTH;
		if (!ibsimParseInteger(arg, 1, max, &o->size)) {
			snprintf(msg, msgSize, "%s '%s': expected an integer in [1, %lld]", o->model == 0 ? "N" : "DEPTH", arg,
			         max);
			return false;
		}
	} else {
		snprintf(msg, msgSize, "unexpected argument '%s'", arg);
		return false;
	}
	++o->positional;
	return true;
}

static bool applyOutput(void* ctx, const char* value, char* msg, size_t msgSize)
{
	genOptions* o = ctx;
	if (o->output != NULL) {
		snprintf(msg, msgSize, "the output file is given twice (-o and --output)");
		return false;
	}
	if (value[0] == '\0') {
		snprintf(msg, msgSize, "expected a file name");
		return false;
	}
	o->output = value;
	return true;
}

static bool applyGenDt(void* ctx, const char* value, char* msg, size_t msgSize)
{
	genOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->dt)) {
		snprintf(msg, msgSize, "expected a finite step size in seconds > 0");
		return false;
	}
	o->hasDt = true;
	return true;
}

static bool applyGenDuration(void* ctx, const char* value, char* msg, size_t msgSize)
{
	genOptions* o = ctx;
	if (!ibsimParsePositiveDouble(value, &o->duration)) {
		snprintf(msg, msgSize, "expected a finite number of seconds > 0");
		return false;
	}
	o->hasDuration = true;
	return true;
}

static const ibsimOption kGenOptions[] = {
    {"-o", "FILE", "write the scene to FILE instead of stdout", applyOutput},
    {"--output", "FILE", "same as -o", applyOutput},
    {"--dt", "H", "<run> time step (default: 0.01 s for chains, 1/30 s for trees)", applyGenDt},
    {"--duration", "T", "<run> duration (default: 10 s for chains, 500 steps for trees)", applyGenDuration},
};
enum { IBSIM_GEN_OPTION_COUNT = (int)(sizeof kGenOptions / sizeof kGenOptions[0]) };

void ibsimPrintGenUsage(FILE* out)
{
	fprintf(out,
	        "usage: ibsim gen chain N [-o FILE] [--dt H] [--duration T]\n"
	        "       ibsim gen tree DEPTH [-o FILE] [--dt H] [--duration T]\n"
	        "\n"
	        "Build a joint benchmark model of the dissertation (3.3.3.1) and write it as a scene file\n"
	        "(stdout unless -o is given):\n"
	        "  chain N     N boxes 1 m x 0.1 m x 0.1 m of 1 kg hanging straight down from a static body\n"
	        "              by ball joints, each starting at 2 m/s in its own direction; h = 0.01 s\n"
	        "  tree DEPTH  binary tree of 2^DEPTH - 1 boxes (4 cm x 4 cm, length 1.5^(maxDepth-depth) 0.1 m,\n"
	        "              600 kg/m^3) joined by ball joints, root body 'root'; h = 1/30 s, 500 steps.\n"
	        "              The benchmark's 10 N m on the root for one step: ibsim run --kick-torque \"6 8 0\"\n"
	        "Tolerances 1e-6 (m, rad, m/s), solver auto. N in [1, %d], DEPTH in [1, %d].\n"
	        "\n"
	        "options:\n",
	        IBSIM_GEN_MAX_CHAIN, IBSIM_GEN_MAX_TREE_DEPTH);
	ibsimPrintOptions(out, kGenOptions, IBSIM_GEN_OPTION_COUNT);
}

int ibsimGen(int argc, char** argv)
{
	genOptions o = {0};
	char msg[1024] = "";
	switch (ibsimParseOptions(argc, argv, kGenOptions, IBSIM_GEN_OPTION_COUNT, acceptGenArg, &o, msg, sizeof msg)) {
	case IBSIM_PARSE_HELP:
		ibsimPrintGenUsage(stdout);
		return IBSIM_EXIT_OK;
	case IBSIM_PARSE_ERROR:
		fprintf(stderr, "ibsim: error: %s\n", msg);
		fprintf(stderr, "usage: ibsim gen chain N | tree DEPTH [-o FILE]   (ibsim gen --help for more)\n");
		return IBSIM_EXIT_USAGE;
	case IBSIM_PARSE_OK:
		break;
	}
	if (o.positional < 2) {
		fprintf(stderr, "ibsim: error: %s\n",
		        o.positional == 0 ? "gen needs a model (chain or tree)"
		        : o.model == 0    ? "gen chain needs N (number of bodies)"
		                          : "gen tree needs DEPTH (number of levels)");
		fprintf(stderr, "usage: ibsim gen chain N | tree DEPTH [-o FILE]   (ibsim gen --help for more)\n");
		return IBSIM_EXIT_USAGE;
	}
	ibWorldId world = IB_NULL_WORLD;
	ibResult r = o.model == 0 ? ibsimBuildChain((int)o.size, &world, msg, sizeof msg)
	                          : ibsimBuildTree((int)o.size, &world, msg, sizeof msg);
	if (r != IB_OK) {
		fprintf(stderr, "ibsim: error: %s\n", msg);
		return IBSIM_EXIT_FAILURE;
	}
	ibSceneSettings settings = ibDefaultSceneSettings();
	settings.timeStep = o.hasDt ? o.dt : o.model == 0 ? 0.01 : 1.0 / 30.0;
	settings.duration = o.hasDuration ? o.duration : o.model == 0 ? 10.0 : 500.0 * settings.timeStep;
	int code = IBSIM_EXIT_OK;
	if (o.output != NULL) {
		r = ibSaveScene(world, &settings, o.output, msg, sizeof msg);
		if (r != IB_OK) {
			fprintf(stderr, "%s\n", msg);
			code = r == IB_ERR_IO ? IBSIM_EXIT_USAGE : IBSIM_EXIT_FAILURE;
		}
	} else {
		char* xml = NULL;
		r = ibSaveSceneToMemory(world, &settings, &xml, msg, sizeof msg);
		if (r != IB_OK) {
			fprintf(stderr, "%s\n", msg);
			code = IBSIM_EXIT_FAILURE;
		} else {
			size_t length = strlen(xml);
			if (fwrite(xml, 1, length, stdout) != length || fflush(stdout) != 0) {
				fprintf(stderr, "ibsim: error: cannot write the scene to stdout\n");
				code = IBSIM_EXIT_FAILURE;
			}
			free(xml);
		}
	}
	ibDestroyWorld(world);
	return code;
}
