/* Engine-neutral benchmark models and reporting; see bench_common.h. */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double BENCH_PI = 3.14159265358979323846;

static uint64_t splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double unit_double(uint64_t z) { return (double)(z >> 11) * (1.0 / 9007199254740992.0); }

void bench_direction(uint64_t seed, int index, double out[3])
{
	const uint64_t golden = UINT64_C(0x9e3779b97f4a7c15);
	uint64_t s = seed + (uint64_t)(2 * (int64_t)index + 1) * golden;
	double u = unit_double(splitmix64_mix(s));
	double v = unit_double(splitmix64_mix(s + golden));
	double z = 2.0 * u - 1.0;
	double r = sqrt(fmax(0.0, 1.0 - z * z));
	double phi = 2.0 * BENCH_PI * v;
	out[0] = r * cos(phi);
	out[1] = r * sin(phi);
	out[2] = z;
}

void bench_quat_rotate(const double q[4], const double v[3], double out[3])
{
	/* v' = v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z) */
	double w = q[0], ux = q[1], uy = q[2], uz = q[3];
	double tx = 2.0 * (uy * v[2] - uz * v[1]);
	double ty = 2.0 * (uz * v[0] - ux * v[2]);
	double tz = 2.0 * (ux * v[1] - uy * v[0]);
	out[0] = v[0] + w * tx + (uy * tz - uz * ty);
	out[1] = v[1] + w * ty + (uz * tx - ux * tz);
	out[2] = v[2] + w * tz + (ux * ty - uy * tx);
}

static void quat_conj(const double q[4], double out[4])
{
	out[0] = q[0];
	out[1] = -q[1];
	out[2] = -q[2];
	out[3] = -q[3];
}

static void box_inertia(double mass, const double half[3], double inertia[3])
{
	double a = 2.0 * half[0], b = 2.0 * half[1], c = 2.0 * half[2];
	inertia[0] = mass / 12.0 * (b * b + c * c);
	inertia[1] = mass / 12.0 * (a * a + c * c);
	inertia[2] = mass / 12.0 * (a * a + b * b);
}

static int model_alloc(BenchModel* m, const char* name, int n)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	m->bodies = calloc((size_t)n, sizeof *m->bodies);
	m->joints = calloc((size_t)n, sizeof *m->joints);
	if (!m->bodies || !m->joints) {
		bench_model_free(m);
		return -1;
	}
	m->bodyCount = n;
	m->jointCount = n;
	m->isTree = 1;
	m->gravity[0] = 0.0;
	m->gravity[1] = 0.0;
	m->gravity[2] = -9.81;
	return 0;
}

/* Joint j = body j's joint: world anchor given, local points from the set-up poses. */
static void set_joint(BenchModel* m, int j, const double anchor[3])
{
	BenchJoint* jt = &m->joints[j];
	const BenchBody* child = &m->bodies[j];
	double d[3], qc[4];
	jt->parent = child->parent;
	jt->child = j;
	memcpy(jt->anchor, anchor, sizeof jt->anchor);
	if (child->parent < 0) {
		memcpy(jt->localParent, anchor, sizeof jt->localParent);
	} else {
		const BenchBody* p = &m->bodies[child->parent];
		for (int k = 0; k < 3; ++k) d[k] = anchor[k] - p->center[k];
		quat_conj(p->rotation, qc);
		bench_quat_rotate(qc, d, jt->localParent);
	}
	for (int k = 0; k < 3; ++k) d[k] = anchor[k] - child->center[k];
	quat_conj(child->rotation, qc);
	bench_quat_rotate(qc, d, jt->localChild);
}

int bench_make_chain(BenchModel* m, int n)
{
	char name[32];
	if (n < 1) return -1;
	snprintf(name, sizeof name, "chain%d", n);
	if (model_alloc(m, name, n) != 0) return -1;
	for (int i = 0; i < n; ++i) {
		BenchBody* b = &m->bodies[i];
		double dir[3];
		b->parent = i - 1;
		b->depth = i;
		b->center[2] = -((double)i + 0.5) * BENCH_CHAIN_LENGTH;
		b->rotation[0] = 1.0;
		b->halfExtents[0] = 0.5 * BENCH_CHAIN_WIDTH;
		b->halfExtents[1] = 0.5 * BENCH_CHAIN_WIDTH;
		b->halfExtents[2] = 0.5 * BENCH_CHAIN_LENGTH;
		b->mass = BENCH_CHAIN_MASS;
		box_inertia(b->mass, b->halfExtents, b->inertia);
		bench_direction(BENCH_DIRECTION_SEED, i, dir);
		for (int k = 0; k < 3; ++k) b->linearVelocity[k] = BENCH_CHAIN_SPEED * dir[k];
		double anchor[3] = {0.0, 0.0, -(double)i * BENCH_CHAIN_LENGTH};
		set_joint(m, i, anchor);
	}
	return 0;
}

int bench_make_tree(BenchModel* m, int depthCount)
{
	char name[32];
	if (depthCount < 1 || depthCount > 12) return -1;
	int n = (1 << depthCount) - 1;
	int maxDepth = depthCount - 1;
	snprintf(name, sizeof name, "tree%d", n);
	if (model_alloc(m, name, n) != 0) return -1;
	for (int i = 0; i < n; ++i) {
		BenchBody* b = &m->bodies[i];
		int depth = 0;
		for (int k = i; k > 0; k = (k - 1) / 2) ++depth;
		double len = pow(BENCH_TREE_LENGTH_FACTOR, (double)(maxDepth - depth)) * BENCH_TREE_BASE_LENGTH;
		double anchor[3] = {0.0, 0.0, 0.0};
		b->parent = i == 0 ? -1 : (i - 1) / 2;
		b->depth = depth;
		if (b->parent >= 0) {
			const BenchBody* p = &m->bodies[b->parent];
			double side = (i == 2 * b->parent + 1) ? -1.0 : 1.0;
			int axis = (p->depth % 2 == 0) ? 0 : 1;
			anchor[0] = p->center[0];
			anchor[1] = p->center[1];
			anchor[2] = p->center[2] - p->halfExtents[2];
			anchor[axis] += side * 0.5 * BENCH_TREE_WIDTH;
		}
		b->center[0] = anchor[0];
		b->center[1] = anchor[1];
		b->center[2] = anchor[2] - 0.5 * len;
		b->rotation[0] = 1.0;
		b->halfExtents[0] = 0.5 * BENCH_TREE_WIDTH;
		b->halfExtents[1] = 0.5 * BENCH_TREE_WIDTH;
		b->halfExtents[2] = 0.5 * len;
		b->mass = BENCH_TREE_DENSITY * BENCH_TREE_WIDTH * BENCH_TREE_WIDTH * len;
		box_inertia(b->mass, b->halfExtents, b->inertia);
		if (i == 0) {
			b->firstStepTorque[0] = 0.6 * BENCH_TREE_TORQUE;
			b->firstStepTorque[1] = 0.8 * BENCH_TREE_TORQUE;
		}
		set_joint(m, i, anchor);
	}
	return 0;
}

/* Rotation taking the x axis to the unit vector u (w, x, y, z). */
static void quat_from_x_to(const double u[3], double q[4])
{
	/* axis = x cross u = (0, -u_z, u_y), angle = atan2(|axis|, u_x) */
	double ax[3] = {0.0, -u[2], u[1]};
	double s = sqrt(ax[1] * ax[1] + ax[2] * ax[2]);
	q[0] = 1.0;
	q[1] = q[2] = q[3] = 0.0;
	if (s < 1e-12) {
		if (u[0] < 0.0) { /* half turn about z */
			q[0] = 0.0;
			q[3] = 1.0;
		}
		return;
	}
	double half = 0.5 * atan2(s, u[0]);
	q[0] = cos(half);
	for (int k = 0; k < 3; ++k) q[1 + k] = sin(half) * ax[k] / s;
}

/* Local point/axis of a joint in body b's frame (world if b < 0). */
static void to_local(const BenchModel* m, int b, const double w[3], int isPoint, double out[3])
{
	double d[3], qc[4];
	if (b < 0) {
		memcpy(out, w, sizeof(double) * 3);
		return;
	}
	const BenchBody* bb = &m->bodies[b];
	for (int k = 0; k < 3; ++k) d[k] = w[k] - (isPoint ? bb->center[k] : 0.0);
	quat_conj(bb->rotation, qc);
	bench_quat_rotate(qc, d, out);
}

static void set_general_joint(BenchModel* m, int j, int type, int parent, int child, const double anchor[3],
                              const double axis[3])
{
	BenchJoint* jt = &m->joints[j];
	jt->type = type;
	jt->parent = parent;
	jt->child = child;
	memcpy(jt->anchor, anchor, sizeof jt->anchor);
	to_local(m, parent, anchor, 1, jt->localParent);
	to_local(m, child, anchor, 1, jt->localChild);
	if (type == BENCH_JOINT_HINGE) {
		memcpy(jt->axis, axis, sizeof jt->axis);
		to_local(m, parent, axis, 0, jt->localAxisParent);
		to_local(m, child, axis, 0, jt->localAxisChild);
	}
}

int bench_make_loops3(BenchModel* m)
{
	const int n = 12, nj = 15;
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "loops3");
	m->bodies = calloc((size_t)n, sizeof *m->bodies);
	m->joints = calloc((size_t)nj, sizeof *m->joints);
	if (!m->bodies || !m->joints) {
		bench_model_free(m);
		return -1;
	}
	m->bodyCount = n;
	m->jointCount = nj;
	m->isTree = 0;
	m->gravity[2] = -9.81;
	const double yAxis[3] = {0.0, 1.0, 0.0};
	int j = 0;
	for (int loop = 0; loop < 3; ++loop) {
		double y = 0.5 * loop;
		double P[4][3] = {{-0.5, y, 0.0}, {0.5, y, 0.0}, {0.4, y, -1.0}, {-0.6, y, -0.8}};
		for (int i = 0; i < 4; ++i) {
			BenchBody* b = &m->bodies[4 * loop + i];
			const double* p = P[i];
			const double* q = P[(i + 1) % 4];
			double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
			double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			for (int k = 0; k < 3; ++k) {
				b->center[k] = 0.5 * (p[k] + q[k]);
				d[k] /= len;
			}
			b->parent = -1;
			b->depth = 0;
			quat_from_x_to(d, b->rotation);
			b->halfExtents[0] = 0.5 * len;
			b->halfExtents[1] = 0.5 * BENCH_LOOP_WIDTH;
			b->halfExtents[2] = 0.5 * BENCH_LOOP_WIDTH;
			b->mass = BENCH_LOOP_DENSITY * len * BENCH_LOOP_WIDTH * BENCH_LOOP_WIDTH;
			box_inertia(b->mass, b->halfExtents, b->inertia);
			if (i == 2) {
				b->angularVelocity[0] = 0.5 * loop;
				b->angularVelocity[1] = 2.0;
				b->angularVelocity[2] = 0.3;
			}
		}
		for (int i = 0; i < 4; ++i)
			set_general_joint(m, j++, BENCH_JOINT_HINGE, 4 * loop + i, 4 * loop + (i + 1) % 4, P[(i + 1) % 4], yAxis);
		double top[3] = {0.0, y, 0.0};
		set_general_joint(m, j++, BENCH_JOINT_BALL, -1, 4 * loop, top, NULL);
	}
	return 0;
}

double bench_joint_axis_error(const BenchModel* m, int j, const double* quat)
{
	const BenchJoint* jt = &m->joints[j];
	double a[3], b[3];
	if (jt->type != BENCH_JOINT_HINGE) return 0.0;
	if (jt->parent < 0)
		memcpy(a, jt->localAxisParent, sizeof a);
	else
		bench_quat_rotate(&quat[4 * jt->parent], jt->localAxisParent, a);
	bench_quat_rotate(&quat[4 * jt->child], jt->localAxisChild, b);
	double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
	double s = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
	return atan2(s, a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
}

double bench_max_axis_error(const BenchModel* m, const double* quat)
{
	double worst = 0.0;
	for (int j = 0; j < m->jointCount; ++j) {
		double e = bench_joint_axis_error(m, j, quat);
		if (!isfinite(e)) return NAN;
		if (e > worst) worst = e;
	}
	return worst;
}

void bench_model_free(BenchModel* m)
{
	free(m->bodies);
	free(m->joints);
	m->bodies = NULL;
	m->joints = NULL;
	m->bodyCount = 0;
	m->jointCount = 0;
}

double bench_joint_error(const BenchModel* m, int j, const double* pos, const double* quat)
{
	const BenchJoint* jt = &m->joints[j];
	double pa[3], pb[3];
	if (jt->parent < 0) {
		memcpy(pa, jt->localParent, sizeof pa);
	} else {
		bench_quat_rotate(&quat[4 * jt->parent], jt->localParent, pa);
		for (int k = 0; k < 3; ++k) pa[k] += pos[3 * jt->parent + k];
	}
	bench_quat_rotate(&quat[4 * jt->child], jt->localChild, pb);
	for (int k = 0; k < 3; ++k) pb[k] += pos[3 * jt->child + k];
	double dx = pb[0] - pa[0], dy = pb[1] - pa[1], dz = pb[2] - pa[2];
	return sqrt(dx * dx + dy * dy + dz * dz);
}

double bench_max_joint_error(const BenchModel* m, const double* pos, const double* quat)
{
	double worst = 0.0;
	for (int j = 0; j < m->jointCount; ++j) {
		double e = bench_joint_error(m, j, pos, quat);
		if (!isfinite(e)) return NAN;
		if (e > worst) worst = e;
	}
	return worst;
}

void bench_system_com(const BenchModel* m, const double* pos, double out[3])
{
	double total = 0.0;
	out[0] = out[1] = out[2] = 0.0;
	for (int i = 0; i < m->bodyCount; ++i) {
		total += m->bodies[i].mass;
		for (int k = 0; k < 3; ++k) out[k] += m->bodies[i].mass * pos[3 * i + k];
	}
	if (total > 0.0)
		for (int k = 0; k < 3; ++k) out[k] /= total;
}

double bench_energy(const BenchModel* m, const double* pos, const double* quat, const double* lin, const double* ang)
{
	double e = 0.0;
	for (int i = 0; i < m->bodyCount; ++i) {
		const BenchBody* b = &m->bodies[i];
		const double* v = &lin[3 * i];
		double qc[4], wl[3];
		quat_conj(&quat[4 * i], qc);
		bench_quat_rotate(qc, &ang[3 * i], wl); /* body-frame angular velocity */
		e += 0.5 * b->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
		e += 0.5 * (b->inertia[0] * wl[0] * wl[0] + b->inertia[1] * wl[1] * wl[1] + b->inertia[2] * wl[2] * wl[2]);
		for (int k = 0; k < 3; ++k) e -= b->mass * m->gravity[k] * (pos[3 * i + k] - b->center[k]);
	}
	return e;
}

int bench_energy_blowup(const BenchResult* r)
{
	if (!isfinite(r->energyFirst) || !isfinite(r->energyFinal)) return 1;
	return r->energyFinal - r->energyFirst > fmax(fabs(r->energyFirst), 0.01);
}

double bench_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void print_head(const char* scene, const char* engine, double ms, double maxErr)
{
	printf("bench: scene=%s engine=%s ms_per_step=%.4f max_error=%.3e", scene, engine, ms, maxErr);
}

void bench_print(const char* scene, const char* engine, double ms, double maxErr, const char* extraFmt, ...)
{
	print_head(scene, engine, ms, maxErr);
	if (extraFmt && extraFmt[0]) {
		va_list ap;
		va_start(ap, extraFmt);
		putchar(' ');
		vprintf(extraFmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}

void bench_print_result(const char* scene, const char* engine, const BenchResult* r, double h, const char* extraFmt,
                        ...)
{
	print_head(scene, engine, r->msPerStep, r->maxError);
	printf(" steps=%d h=%.6f iterations=%d final_error=%.3e energy_first=%.4g energy_final=%.4g", r->steps, h,
	       r->iterations, r->finalError, r->energyFirst, r->energyFinal);
	if (r->diverged) printf(" diverged=1");
	if (!r->diverged && bench_energy_blowup(r)) printf(" unstable=1");
	if (extraFmt && extraFmt[0]) {
		va_list ap;
		va_start(ap, extraFmt);
		putchar(' ');
		vprintf(extraFmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}

static void print_ratio_head(const char* scene, const char* ours, double oursMs, const char* peer, double peerMs)
{
	printf("bench: scene=%s ratio ours=%s peer=%s time_ratio=%.4f", scene, ours, peer,
	       peerMs > 0.0 ? oursMs / peerMs : NAN);
}

void bench_ratio(const char* scene, const char* ours, double oursMs, const char* peer, double peerMs)
{
	print_ratio_head(scene, ours, oursMs, peer, peerMs);
	putchar('\n');
	fflush(stdout);
}

void bench_ratio_ex(const char* scene, const char* ours, double oursMs, const char* peer, double peerMs,
                    const char* extraFmt, ...)
{
	print_ratio_head(scene, ours, oursMs, peer, peerMs);
	if (extraFmt && extraFmt[0]) {
		va_list ap;
		va_start(ap, extraFmt);
		putchar(' ');
		vprintf(extraFmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}
