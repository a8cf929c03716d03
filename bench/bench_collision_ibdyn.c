/* The ibdyn side of bench_collision: ibdyn's collision pipeline as a BenchCollider, through the public API only
 * (ibWorld_Collide, ibWorld_GetContacts). */
#include "bench_collision_ibdyn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibdyn/ibdyn.h"

int bench_ibdyn_max_manifold_points(void) { return IB_MAX_CONTACT_POINTS; }

typedef struct IbdynCollider {
	ibWorldId id;
	ibBodyId* bodies; /* cubes */
	int count;
	int* cubeOfBody; /* body index -> cube index (count = the floor, -1 = none) */
	int bodyIndices;
	ibContactData* contacts; /* ibWorld_GetContacts output (untimed) */
	int contactCap;
	/* BENCH_COLLISION_HASH set: a hash of every contact's bits (shapes, normal, points, separations) over the
	 * frames of the checked run, printed at the end (`bench-hash:`), to see that an optimisation left the
	 * contact set bit for bit as it was */
	int hashOn;
	uint64_t hash;
	long hashedContacts;
} IbdynCollider;

static void hash_bytes(uint64_t* h, const void* p, size_t n)
{
	const unsigned char* b = p;
	for (size_t i = 0; i < n; ++i) *h = (*h ^ b[i]) * 0x100000001B3ull;
}

static void hash_contact(IbdynCollider* c, const ibContactData* d)
{
	const double v[3] = {d->normal.x, d->normal.y, d->normal.z};
	hash_bytes(&c->hash, &d->shapeA.index1, sizeof d->shapeA.index1);
	hash_bytes(&c->hash, &d->shapeB.index1, sizeof d->shapeB.index1);
	hash_bytes(&c->hash, v, sizeof v);
	hash_bytes(&c->hash, &d->pointCount, sizeof d->pointCount);
	for (int i = 0; i < d->pointCount; ++i) {
		const ibContactPoint* q = &d->points[i];
		const double w[7] = {q->pointA.x, q->pointA.y, q->pointA.z, q->pointB.x, q->pointB.y, q->pointB.z, q->separation};
		hash_bytes(&c->hash, w, sizeof w);
	}
	++c->hashedContacts;
}

static int body_index(ibBodyId b) { return b.index1 - 1; }

/* ibdyn's collision detection, all three phases: the public ibWorld_Collide, the only timed call. */
static ibResult ibdyn_collide(IbdynCollider* c) { return ibWorld_Collide(c->id); }

static void ibdyn_set_poses(void* impl, const double* pos, const double* quat)
{
	IbdynCollider* c = impl;
	for (int i = 0; i < c->count; ++i) {
		const double* p = &pos[3 * i];
		const double* q = &quat[4 * i];
		ibBody_SetTransform(c->bodies[i], ibV3(p[0], p[1], p[2]), (ibQuat){q[0], q[1], q[2], q[3]});
	}
}

static int ibdyn_detect(void* impl) { return ibdyn_collide(impl) == IB_OK ? 0 : -1; }

static int ibdyn_pairs(void* impl, BenchPair* out, int capacity)
{
	IbdynCollider* c = impl;
	int n = ibWorld_GetContacts(c->id, NULL, 0), total = 0;
	if (n > c->contactCap) {
		ibContactData* grown = realloc(c->contacts, sizeof *grown * (size_t)n);
		if (!grown) return 0;
		c->contacts = grown;
		c->contactCap = n;
	}
	n = ibWorld_GetContacts(c->id, c->contacts, c->contactCap);
	for (int k = 0; c->hashOn && k < n; ++k) hash_contact(c, &c->contacts[k]);
	for (int k = 0; k < n; ++k) {
		int ba = body_index(ibShape_GetBody(c->contacts[k].shapeA)), bb = body_index(ibShape_GetBody(c->contacts[k].shapeB));
		int a = ba >= 0 && ba < c->bodyIndices ? c->cubeOfBody[ba] : -1;
		int b = bb >= 0 && bb < c->bodyIndices ? c->cubeOfBody[bb] : -1;
		if (a < 0 || b < 0) continue;
		if (total < capacity) out[total] = (BenchPair){a < b ? a : b, a < b ? b : a, c->contacts[k].pointCount};
		++total;
	}
	return total;
}

static void ibdyn_destroy(void* impl)
{
	IbdynCollider* c = impl;
	if (!c) return;
	if (c->hashOn)
		printf("bench-hash: engine=ibdyn contacts=%ld hash=%016llx\n", c->hashedContacts, (unsigned long long)c->hash);
	if (ibWorld_IsValid(c->id)) ibDestroyWorld(c->id);
	free(c->bodies);
	free(c->cubeOfBody);
	free(c->contacts);
	free(c);
}

/* ibdyn world: one static body with a box shape as the floor, one dynamic body with a unit-cube box shape per
 * cube (default density; the bodies are never stepped). */
int bench_ibdyn_collider(BenchCollider* out, const BenchCubes* s)
{
	memset(out, 0, sizeof *out);
	IbdynCollider* c = calloc(1, sizeof *c);
	if (!c) return -1;
	c->count = s->count;
	c->hashOn = getenv("BENCH_COLLISION_HASH") != NULL;
	c->hash = 0xCBF29CE484222325ull;
	c->bodies = calloc((size_t)s->count, sizeof *c->bodies);
	ibWorldDef wd = ibDefaultWorldDef();
	c->id = ibCreateWorld(&wd);
	if (!c->bodies || !ibWorld_IsValid(c->id)) goto fail;
	ibBodyDef fd = ibDefaultBodyDef();
	fd.name = "floor";
	fd.position = ibV3(s->floorCenter[0], s->floorCenter[1], s->floorCenter[2]);
	ibBodyId floorBody = ibCreateBody(c->id, &fd);
	ibShapeDef sd = ibDefaultShapeDef();
	ibBox floorBox = {ibV3(s->floorHalf[0], s->floorHalf[1], s->floorHalf[2])};
	if (!ibBody_IsValid(floorBody) || IB_IS_NULL(ibCreateBoxShape(floorBody, &sd, &floorBox))) goto fail;
	int maxIndex = body_index(floorBody);
	ibBox cube = {ibV3(s->half, s->half, s->half)};
	for (int i = 0; i < s->count; ++i) {
		ibBodyDef bd = ibDefaultBodyDef();
		bd.type = IB_BODY_DYNAMIC;
		bd.position = ibV3(s->start[3 * i], s->start[3 * i + 1], s->start[3 * i + 2]);
		c->bodies[i] = ibCreateBody(c->id, &bd);
		if (!ibBody_IsValid(c->bodies[i]) || IB_IS_NULL(ibCreateBoxShape(c->bodies[i], &sd, &cube))) goto fail;
		if (body_index(c->bodies[i]) > maxIndex) maxIndex = body_index(c->bodies[i]);
	}
	c->bodyIndices = maxIndex + 1;
	c->cubeOfBody = malloc(sizeof(int) * (size_t)c->bodyIndices);
	if (!c->cubeOfBody) goto fail;
	for (int k = 0; k < c->bodyIndices; ++k) c->cubeOfBody[k] = -1;
	c->cubeOfBody[body_index(floorBody)] = s->count;
	for (int i = 0; i < s->count; ++i) c->cubeOfBody[body_index(c->bodies[i])] = i;
	out->name = "ibdyn";
	out->impl = c;
	out->setPoses = ibdyn_set_poses;
	out->detect = ibdyn_detect;
	out->pairs = ibdyn_pairs;
	out->destroy = ibdyn_destroy;
	return 0;
fail:
	fprintf(stderr, "bench: could not build the ibdyn world\n");
	ibdyn_destroy(c);
	return -1;
}
