/* ODE peer of the collision benchmark: box geoms without bodies in a hash or sweep-and-prune space,
 * dSpaceCollide + dCollide. Call bench_ode_init() (peers.h) before creating it. */
#include "collision_peers.h"

#include <stdlib.h>
#include <string.h>

#include <ode/ode.h>

typedef struct OdeCollider {
	dSpaceID space;
	dGeomID* geoms; /* count cubes, then the floor */
	int count;
	int maxContacts;
	dContactGeom* contacts; /* scratch of dCollide */
	BenchPair* pairs;
	int pairCount, pairCap;
	int failed;
} OdeCollider;

static void ode_set_poses(void* impl, const double* pos, const double* quat)
{
	OdeCollider* o = impl;
	for (int i = 0; i < o->count; ++i) {
		const double* p = &pos[3 * i];
		const double* q = &quat[4 * i];
		dQuaternion dq = {q[0], q[1], q[2], q[3]}; /* ODE: (w, x, y, z) */
		dGeomSetPosition(o->geoms[i], p[0], p[1], p[2]);
		dGeomSetQuaternion(o->geoms[i], dq);
	}
}

static void near_callback(void* data, dGeomID g1, dGeomID g2)
{
	OdeCollider* o = data;
	int n = dCollide(g1, g2, o->maxContacts, o->contacts, (int)sizeof(dContactGeom));
	if (n <= 0) return;
	if (o->pairCount == o->pairCap) {
		int nc = o->pairCap ? 2 * o->pairCap : 1024;
		BenchPair* p = realloc(o->pairs, sizeof *p * (size_t)nc);
		if (!p) {
			o->failed = 1;
			return;
		}
		o->pairs = p;
		o->pairCap = nc;
	}
	int a = (int)(intptr_t)dGeomGetData(g1), b = (int)(intptr_t)dGeomGetData(g2);
	o->pairs[o->pairCount++] = (BenchPair){a < b ? a : b, a < b ? b : a, n};
}

static int ode_detect(void* impl)
{
	OdeCollider* o = impl;
	o->pairCount = 0;
	o->failed = 0;
	dSpaceCollide(o->space, o, near_callback);
	return o->failed ? -1 : 0;
}

static int ode_pairs(void* impl, BenchPair* out, int capacity)
{
	OdeCollider* o = impl;
	int n = o->pairCount < capacity ? o->pairCount : capacity;
	if (n > 0) memcpy(out, o->pairs, sizeof *out * (size_t)n);
	return o->pairCount;
}

static void ode_destroy(void* impl)
{
	OdeCollider* o = impl;
	if (!o) return;
	if (o->space) dSpaceDestroy(o->space); /* destroys the geoms too (cleanup mode on) */
	free(o->geoms);
	free(o->contacts);
	free(o->pairs);
	free(o);
}

int bench_ode_collider(BenchCollider* c, const BenchCubes* s, int sap, int maxContacts)
{
	memset(c, 0, sizeof *c);
	OdeCollider* o = calloc(1, sizeof *o);
	if (!o) return -1;
	o->count = s->count;
	o->maxContacts = maxContacts < 1 ? 1 : maxContacts;
	o->geoms = calloc((size_t)s->count + 1, sizeof *o->geoms);
	o->contacts = calloc((size_t)o->maxContacts, sizeof *o->contacts);
	if (!o->geoms || !o->contacts) {
		ode_destroy(o);
		return -1;
	}
	o->space = sap ? dSweepAndPruneSpaceCreate(0, dSAP_AXES_XYZ) : dHashSpaceCreate(0);
	dSpaceSetCleanup(o->space, 1);
	const double edge = 2.0 * s->half;
	for (int i = 0; i <= s->count; ++i) {
		dGeomID g = i < s->count
		                ? dCreateBox(o->space, edge, edge, edge)
		                : dCreateBox(o->space, 2.0 * s->floorHalf[0], 2.0 * s->floorHalf[1], 2.0 * s->floorHalf[2]);
		dGeomSetData(g, (void*)(intptr_t)i);
		o->geoms[i] = g;
	}
	dGeomSetPosition(o->geoms[s->count], s->floorCenter[0], s->floorCenter[1], s->floorCenter[2]);
	c->name = sap ? "ode-sap" : "ode";
	c->impl = o;
	c->setPoses = ode_set_poses;
	c->detect = ode_detect;
	c->pairs = ode_pairs;
	c->destroy = ode_destroy;
	return 0;
}
