/* MuJoCo peer of the LGS benchmark: a tree-structured BenchModel (chains, trees) written as MJCF (nested <body>
 * elements with ball joints: MuJoCo's reduced coordinates), loaded with mj_loadXML from a temporary file and
 * stepped with mj_step. Only this file includes MuJoCo; it is built when CMake finds the package. */
#define _POSIX_C_SOURCE 200809L
#include "peers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

/* MuJoCo 2.2.2's XML parser (tinyxml2) rejects elements nested deeper than ~100 (XML_ELEMENT_DEPTH_EXCEEDED); a
 * nested <body> per chain link hits that for chain100. */
#define BENCH_MUJOCO_MAX_DEPTH 95

/* A growing string buffer for the MJCF text. */
typedef struct Text {
	char* s;
	size_t len, cap;
	int failed;
} Text;

static void text_add(Text* t, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void text_add(Text* t, const char* fmt, ...)
{
	if (t->failed) return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (k < 0) {
			t->failed = 1;
			return;
		}
		if (t->len + (size_t)k < t->cap) {
			t->len += (size_t)k;
			return;
		}
		size_t cap = 2 * t->cap + (size_t)k + 256;
		char* s = realloc(t->s, cap);
		if (!s) {
			t->failed = 1;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
}

/* Body i and, recursively, its children: body frame = the box's centre (identity rotation at set-up, checked by
 * the caller), position relative to the parent's frame; the ball joint at the joint point in the body's frame. */
static void emit_body(Text* t, const BenchModel* m, int i, int depth)
{
	const BenchBody* b = &m->bodies[i];
	const BenchJoint* j = &m->joints[i];
	double rel[3];
	for (int k = 0; k < 3; ++k) rel[k] = b->center[k] - (b->parent >= 0 ? m->bodies[b->parent].center[k] : 0.0);
	text_add(t, "%*s<body name=\"b%d\" pos=\"%.17g %.17g %.17g\">\n", 2 * depth, "", i, rel[0], rel[1], rel[2]);
	text_add(t, "%*s<joint name=\"j%d\" type=\"ball\" pos=\"%.17g %.17g %.17g\"/>\n", 2 * depth + 1, "", i,
	         j->localChild[0], j->localChild[1], j->localChild[2]);
	text_add(t, "%*s<geom type=\"box\" size=\"%.17g %.17g %.17g\" mass=\"%.17g\"/>\n", 2 * depth + 1, "",
	         b->halfExtents[0], b->halfExtents[1], b->halfExtents[2], b->mass);
	for (int c = i + 1; c < m->bodyCount; ++c)
		if (m->bodies[c].parent == i) emit_body(t, m, c, depth + 1);
	text_add(t, "%*s</body>\n", 2 * depth, "");
}

/* The MJCF text (malloc'ed) or NULL. */
static char* make_mjcf(const BenchModel* m, double h, BenchMujocoIntegrator integrator)
{
	Text t = {NULL, 0, 0, 0};
	text_add(&t, "<mujoco model=\"%s\">\n", m->name);
	text_add(&t, " <compiler inertiafromgeom=\"true\"/>\n");
	text_add(&t, " <option timestep=\"%.17g\" gravity=\"%.17g %.17g %.17g\" integrator=\"%s\">\n", h, m->gravity[0],
	         m->gravity[1], m->gravity[2], integrator == BENCH_MUJOCO_RK4 ? "RK4" : "Euler");
	text_add(&t, "  <flag contact=\"disable\" energy=\"enable\"/>\n </option>\n <worldbody>\n");
	for (int i = 0; i < m->bodyCount; ++i)
		if (m->bodies[i].parent < 0) emit_body(&t, m, i, 1);
	text_add(&t, " </worldbody>\n</mujoco>\n");
	if (t.failed) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

static int representable(const BenchModel* m)
{
	if (!m->isTree || m->jointCount != m->bodyCount) return 0;
	for (int i = 0; i < m->bodyCount; ++i) {
		const BenchBody* b = &m->bodies[i];
		const BenchJoint* j = &m->joints[i];
		if (j->type != BENCH_JOINT_BALL || j->child != i || j->parent != b->parent || b->parent >= i) return 0;
		if (b->rotation[0] != 1.0 || b->rotation[1] != 0.0 || b->rotation[2] != 0.0 || b->rotation[3] != 0.0) return 0;
	}
	return 1;
}

static mjModel* load(const BenchModel* m, double h, BenchMujocoIntegrator integrator)
{
	char* xml = make_mjcf(m, h, integrator);
	if (!xml) return NULL;
	char path[] = "/tmp/ibdyn_bench_mjcf_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		free(xml);
		return NULL;
	}
	FILE* f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		free(xml);
		return NULL;
	}
	int ok = fputs(xml, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	free(xml);
	mjModel* model = NULL;
	if (ok) {
		char err[1000] = "";
		model = mj_loadXML(path, NULL, err, (int)sizeof err);
		if (!model) fprintf(stderr, "bench: mujoco: mj_loadXML: %s\n", err);
	}
	unlink(path);
	return model;
}

/* Reads the poses (body frames) and velocities of the bench bodies; returns 1 if some state is non-finite. */
static int read_states(const mjModel* mm, mjData* d, const BenchModel* m, const int* id, double* pos, double* quat,
                       double* lin, double* ang)
{
	int bad = 0;
	for (int i = 0; i < m->bodyCount; ++i) {
		mjtNum v[6];
		mj_objectVelocity(mm, d, mjOBJ_BODY, id[i], v, 0); /* (rot, lin), world orientation, at the body's COM */
		for (int k = 0; k < 3; ++k) {
			pos[3 * i + k] = d->xpos[3 * id[i] + k];
			ang[3 * i + k] = v[k];
			lin[3 * i + k] = v[3 + k];
			bad |= !isfinite(pos[3 * i + k]);
		}
		for (int k = 0; k < 4; ++k) quat[4 * i + k] = d->xquat[4 * id[i] + k];
	}
	return bad;
}

int bench_mujoco_run(const BenchModel* m, double h, int steps, BenchMujocoIntegrator integrator, BenchResult* out,
                     double* mjEnergyFirst, double* mjEnergyFinal, int* version)
{
	memset(out, 0, sizeof *out);
	if (version) *version = mj_version();
	if (!representable(m)) return -1;
	for (int i = 0; i < m->bodyCount; ++i)
		if (m->bodies[i].depth > BENCH_MUJOCO_MAX_DEPTH) return -2;
	mjModel* mm = load(m, h, integrator);
	if (!mm) return -1;
	mjData* d = mj_makeData(mm);
	const int n = m->bodyCount, nv = mm->nv;
	int* id = malloc(sizeof(int) * (size_t)n);
	double* pos = malloc(sizeof(double) * 3 * (size_t)n);
	double* quat = malloc(sizeof(double) * 4 * (size_t)n);
	double* lin = malloc(sizeof(double) * 3 * (size_t)n);
	double* ang = malloc(sizeof(double) * 3 * (size_t)n);
	mjtNum* jacp = malloc(sizeof(mjtNum) * 3 * (size_t)nv);
	mjtNum* jacr = malloc(sizeof(mjtNum) * 3 * (size_t)nv);
	mjtNum* tau = calloc((size_t)nv, sizeof(mjtNum));
	int rc = -1;
	if (!d || !id || !pos || !quat || !lin || !ang || !jacp || !jacr || !tau) goto done;
	for (int i = 0; i < n; ++i) {
		char name[32];
		snprintf(name, sizeof name, "b%d", i);
		id[i] = mj_name2id(mm, mjOBJ_BODY, name);
		if (id[i] < 0) goto done;
	}

	/* Initial velocities: generalised impulse of the COM momenta m v and angular momenta J w, through M^-1. */
	mj_forward(mm, d);
	for (int i = 0; i < n; ++i) {
		const BenchBody* b = &m->bodies[i];
		mj_jacBodyCom(mm, d, jacp, jacr, id[i]);
		for (int k = 0; k < 3; ++k) {
			double p = b->mass * b->linearVelocity[k], l = b->inertia[k] * b->angularVelocity[k];
			for (int c = 0; c < nv; ++c) tau[c] += jacp[k * nv + c] * p + jacr[k * nv + c] * l;
		}
	}
	mj_solveM(mm, d, d->qvel, tau, 1);
	mj_forward(mm, d);

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	int diverged = 0;
	for (int s = 0; s < steps; ++s) {
		for (int i = 0; i < n; ++i)
			for (int k = 0; k < 3; ++k) d->xfrc_applied[6 * id[i] + 3 + k] = s == 0 ? m->bodies[i].firstStepTorque[k] : 0.0;
		double t0 = bench_now_ms();
		mj_step(mm, d);
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		/* mj_step leaves the kinematics of the state before the integration: recompute them (not timed). */
		mj_forward(mm, d);
		if (read_states(mm, d, m, id, pos, quat, lin, ang)) {
			diverged = 1;
			err = NAN;
			break;
		}
		err = bench_max_joint_error(m, pos, quat);
		if (err > maxErr) maxErr = err;
		if (s == 0) {
			out->energyFirst = bench_energy(m, pos, quat, lin, ang);
			if (mjEnergyFirst) *mjEnergyFirst = d->energy[0] + d->energy[1];
		}
	}
	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->iterations = 0;
	out->diverged = diverged;
	bench_system_com(m, pos, out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos, quat, lin, ang);
	if (mjEnergyFinal) *mjEnergyFinal = diverged ? NAN : d->energy[0] + d->energy[1];
	rc = 0;
done:
	free(id);
	free(pos);
	free(quat);
	free(lin);
	free(ang);
	free(jacp);
	free(jacr);
	free(tau);
	if (d) mj_deleteData(d);
	mj_deleteModel(mm);
	return rc;
}
