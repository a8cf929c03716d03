/* ODE peer of bench_contacts: dWorldQuickStep (20 iterations), dHashSpace, box geoms, contact joints with
 * Coulomb friction (dContactApprox1), default ERP/CFM. Also the engine dispatch of contact_peers.h. */
#include "contact_peer_internal.h"

#include <ode/ode.h>
#include <stdlib.h>

enum { ODE_MAX_CONTACTS = 8 };

struct OdeContact {
	dWorldID world;
	dSpaceID space;
	dJointGroupID group;
	dBodyID* bodies;
	double h, mu;
};

static void nearCallback(void* data, dGeomID a, dGeomID b)
{
	struct OdeContact* w = data;
	dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
	if (ba == NULL && bb == NULL) return;
	dContact c[ODE_MAX_CONTACTS];
	int n = dCollide(a, b, ODE_MAX_CONTACTS, &c[0].geom, sizeof(dContact));
	for (int i = 0; i < n; ++i) {
		c[i].surface.mode = dContactApprox1;
		c[i].surface.mu = w->mu;
		dJointID j = dJointCreateContact(w->world, w->group, &c[i]);
		dJointAttach(j, ba, bb);
	}
}

ContactPeer* contact_ode_create(const ContactScene* s)
{
	static int initialised = 0; /* dInitODE2 once per process (ODE's own global state) */
	if (!initialised) {
		dInitODE2(0);
		initialised = 1;
	}
	ContactPeer* p = calloc(1, sizeof *p);
	struct OdeContact* w = calloc(1, sizeof *w);
	if (p == NULL || w == NULL) {
		free(p);
		free(w);
		return NULL;
	}
	w->bodies = calloc((size_t)s->n, sizeof *w->bodies);
	p->engine = 1;
	p->n = s->n;
	p->ode = w;
	w->h = s->h;
	w->mu = s->mu;
	w->world = dWorldCreate();
	dWorldSetGravity(w->world, 0, 0, -9.81);
	dWorldSetQuickStepNumIterations(w->world, 20);
	dWorldSetAutoDisableFlag(w->world, s->sleep ? 1 : 0);
	w->space = dHashSpaceCreate(0);
	w->group = dJointGroupCreate(0);
	dGeomID g = dCreateBox(w->space, 2 * s->groundHalf[0], 2 * s->groundHalf[1], 2 * s->groundHalf[2]);
	dGeomSetPosition(g, s->groundCenter[0], s->groundCenter[1], s->groundCenter[2]);
	for (int i = 0; i < s->n; ++i) {
		const double* e = &s->half[3 * i];
		dBodyID b = dBodyCreate(w->world);
		dMass m;
		dMassSetBoxTotal(&m, s->mass[i], 2 * e[0], 2 * e[1], 2 * e[2]);
		dBodySetMass(b, &m);
		dBodySetPosition(b, s->pos[3 * i], s->pos[3 * i + 1], s->pos[3 * i + 2]);
		dQuaternion q = {s->quat[4 * i], s->quat[4 * i + 1], s->quat[4 * i + 2], s->quat[4 * i + 3]};
		dBodySetQuaternion(b, q);
		dGeomID bg = dCreateBox(w->space, 2 * e[0], 2 * e[1], 2 * e[2]);
		dGeomSetBody(bg, b);
		w->bodies[i] = b;
	}
	return p;
}

void contact_ode_step(ContactPeer* p)
{
	struct OdeContact* w = p->ode;
	dSpaceCollide(w->space, w, nearCallback);
	dWorldQuickStep(w->world, w->h);
	dJointGroupEmpty(w->group);
}

void contact_ode_get(ContactPeer* p, double* pos, double* quat)
{
	for (int i = 0; i < p->n; ++i) {
		const dReal* x = dBodyGetPosition(p->ode->bodies[i]);
		const dReal* q = dBodyGetQuaternion(p->ode->bodies[i]);
		for (int k = 0; k < 3; ++k) pos[3 * i + k] = x[k];
		for (int k = 0; k < 4; ++k) quat[4 * i + k] = q[k];
	}
}

void contact_ode_destroy(ContactPeer* p)
{
	struct OdeContact* w = p->ode;
	dJointGroupDestroy(w->group);
	dSpaceDestroy(w->space);
	dWorldDestroy(w->world);
	free(w->bodies);
	free(w);
	free(p);
}

void contact_peer_step(ContactPeer* p)
{
	if (p->engine == 1) contact_ode_step(p);
	else contact_bullet_step(p);
}

void contact_peer_get(ContactPeer* p, double* pos, double* quat)
{
	if (p->engine == 1) contact_ode_get(p, pos, quat);
	else contact_bullet_get(p, pos, quat);
}

void contact_peer_destroy(ContactPeer* p)
{
	if (p->engine == 1) contact_ode_destroy(p);
	else contact_bullet_destroy(p);
}
