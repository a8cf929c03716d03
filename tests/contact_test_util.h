/* Scene builders shared by the contact tests: a static ground box with its top face at the origin
 * (optionally tilted about y), balls, and blocks standing on four small corner spheres (so that every
 * block has a four-point contact region independent of the box-box manifold). */
#ifndef IBDYN_CONTACT_TEST_UTIL_H
#define IBDYN_CONTACT_TEST_UTIL_H

#include <math.h>

#include "ibdyn/ibdyn.h"

#define CT_FOOT_R 0.05     /* corner sphere radius */
#define CT_FOOT_OUT 0.01   /* how far a foot reaches below the block's box */

static inline ibWorldId ct_world_v(double eps_c, double eps_d, double eps_v)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.contact.enabled = true;
	wd.collision.contactTolerance = eps_c;
	wd.solver.contact.contactPositionTolerance = eps_d;
	wd.solver.velocityTolerance = eps_v;
	return ibCreateWorld(&wd);
}

static inline ibWorldId ct_world(double h_eps_c, double eps_d)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.contact.enabled = true;
	wd.collision.contactTolerance = h_eps_c;
	wd.solver.contact.contactPositionTolerance = eps_d;
	wd.solver.velocityTolerance = 1e-10; /* resting bodies creep with the residual velocity: keep it far below 1e-6 m / 10 s */
	ibWorldId w = ibCreateWorld(&wd);
	return w;
}

static inline ibMaterial ct_mat(double e, double mus, double mud) { return (ibMaterial){e, mus, mud}; }

/* static ground: top face through the origin with normal R_y(theta) e_z */
static inline ibBodyId ct_ground(ibWorldId w, double theta, ibMaterial m)
{
	ibBodyDef bd = ibDefaultBodyDef();
	ibQuat q = ibQuatFromAxisAngle(ibV3(0, 1, 0), theta);
	bd.rotation = q;
	bd.position = ibRotate(q, ibV3(0, 0, -0.5));
	ibBodyId g = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = m;
	ibBox box = {{100.0, 100.0, 0.5}};
	ibCreateBoxShape(g, &sd, &box);
	return g;
}

static inline ibBodyId ct_ball(ibWorldId w, ibVec3 pos, double r, ibMaterial m)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = pos;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = m;
	ibSphere s = {r};
	ibCreateSphereShape(b, &sd, &s);
	return b;
}

/* block of edge 2*half (1 kg box) on four feet; pos = centre of the box; total height 2*half + CT_FOOT_OUT */
static inline ibBodyId ct_block(ibWorldId w, ibVec3 pos, ibQuat q, double half, ibMaterial m)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = pos;
	bd.rotation = q;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.material = m;
	sd.mass = 1.0;
	ibBox box = {{half, half, half}};
	ibCreateBoxShape(b, &sd, &box);
	sd.mass = 0.01;
	ibSphere s = {CT_FOOT_R};
	double c = half - CT_FOOT_R;
	for (int i = 0; i < 4; ++i) {
		sd.localPosition = ibV3((i & 1) ? c : -c, (i & 2) ? c : -c, -half - CT_FOOT_OUT + CT_FOOT_R);
		ibCreateSphereShape(b, &sd, &s);
	}
	return b;
}

#endif
