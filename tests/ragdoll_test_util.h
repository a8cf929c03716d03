/* A humanoid ragdoll for the tests (test_contact_ragdoll.c): 11 bodies (pelvis, chest, head, upper / lower arms,
 * thighs, shins), ball joints with circular swing cones and twist limits at the waist, neck, shoulders and
 * hips, limited hinges at elbows and knees. Built in a standing rest pose about the pelvis, then rotated by
 * q and moved so that the pelvis is at p. */
#ifndef IBDYN_RAGDOLL_TEST_UTIL_H
#define IBDYN_RAGDOLL_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ibdyn/ibdyn.h"

enum { RD_BODIES = 11, RD_JOINTS = 10 };

typedef struct Ragdoll {
	ibBodyId body[RD_BODIES];
	ibJointId joint[RD_JOINTS];
	int kind[RD_BODIES];     /* 0 box, 1 capsule, 2 sphere */
	ibVec3 half[RD_BODIES];  /* box half extents; capsule (radius, halfLength, 0); sphere (radius) */
	double cone[RD_JOINTS], twLo[RD_JOINTS], twHi[RD_JOINTS], lo[RD_JOINTS], hi[RD_JOINTS];
	bool ball[RD_JOINTS];
} Ragdoll;

static inline ibVec3 rd_rot(ibQuat q, ibVec3 v) { return ibRotate(q, v); }

static inline ibBodyId rd_body(ibWorldId w, Ragdoll* r, int i, ibQuat q, ibVec3 p, ibVec3 rest, int kind, ibVec3 size,
                        ibMaterial mat, const char* name)
{
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibAdd(p, rd_rot(q, rest));
	bd.rotation = q;
	bd.name = name;
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.density = 1000.0;
	sd.material = mat;
	if (kind == 0) {
		ibBox bx = {size};
		ibCreateBoxShape(b, &sd, &bx);
	} else if (kind == 1) {
		ibCapsule c = {size.x, size.y};
		ibCreateCapsuleShape(b, &sd, &c);
	} else {
		ibSphere s = {size.x};
		ibCreateSphereShape(b, &sd, &s);
	}
	r->body[i] = b;
	r->kind[i] = kind;
	r->half[i] = size;
	return b;
}

/* anchor and axis in the rest pose (world = pelvis frame before q); limits as given */
static inline void rd_joint(ibWorldId w, Ragdoll* r, int j, int a, int b, ibVec3 restA, ibVec3 restB, ibVec3 anchor, bool ball,
                     ibVec3 axis, ibVec3 ref, double x0, double x1, double x2)
{
	ibJointDef jd = ibDefaultJointDef(ball ? IB_JOINT_BALL : IB_JOINT_HINGE);
	jd.bodyA = r->body[a];
	jd.bodyB = r->body[b];
	jd.localAnchorA = ibSub(anchor, restA); /* body frames are the rest frame rotated by q: local = rest offsets */
	jd.localAnchorB = ibSub(anchor, restB);
	jd.localAxisA = jd.localAxisB = axis;
	jd.localRefA = jd.localRefB = ref;
	r->ball[j] = ball;
	if (ball) {
		jd.enableConeLimit = true;
		jd.coneAngle = x0;
		jd.enableTwistLimit = true;
		jd.lowerTwist = x1;
		jd.upperTwist = x2;
		r->cone[j] = x0, r->twLo[j] = x1, r->twHi[j] = x2;
	} else {
		jd.enableLimit = true;
		jd.lowerLimit = x0;
		jd.upperLimit = x1;
		r->lo[j] = x0, r->hi[j] = x1;
	}
	r->joint[j] = ibCreateJoint(w, &jd);
}

static inline void rd_build(ibWorldId w, Ragdoll* r, ibQuat q, ibVec3 p, ibMaterial mat)
{
	memset(r, 0, sizeof *r);
	const ibVec3 z0 = ibV3(0, 0, 1.02); /* pelvis rest position: everything below is relative to it */
	ibVec3 rest[RD_BODIES] = {
	    {0, 0, 1.02},                                          /* 0 pelvis (box) */
	    {0, 0, 1.35},                                          /* 1 chest (box) */
	    {0, 0, 1.68},                                          /* 2 head (sphere) */
	    {-0.24, 0, 1.33}, {0.24, 0, 1.33},                     /* 3, 4 upper arms */
	    {-0.24, 0, 1.0},  {0.24, 0, 1.0},                      /* 5, 6 lower arms */
	    {-0.09, 0, 0.75}, {0.09, 0, 0.75},                     /* 7, 8 thighs */
	    {-0.09, 0, 0.33}, {0.09, 0, 0.33},                     /* 9, 10 shins */
	};
	for (int i = 0; i < RD_BODIES; ++i) rest[i] = ibSub(rest[i], z0);
	const char* names[RD_BODIES] = {"pelvis", "chest", "head", "upper_arm_l", "upper_arm_r", "lower_arm_l",
	                                "lower_arm_r", "thigh_l", "thigh_r", "shin_l", "shin_r"};
	rd_body(w, r, 0, q, p, rest[0], 0, ibV3(0.15, 0.09, 0.08), mat, names[0]);
	rd_body(w, r, 1, q, p, rest[1], 0, ibV3(0.17, 0.1, 0.2), mat, names[1]);
	rd_body(w, r, 2, q, p, rest[2], 2, ibV3(0.1, 0, 0), mat, names[2]);
	for (int s = 0; s < 2; ++s) {
		rd_body(w, r, 3 + s, q, p, rest[3 + s], 1, ibV3(0.05, 0.12, 0), mat, names[3 + s]);
		rd_body(w, r, 5 + s, q, p, rest[5 + s], 1, ibV3(0.045, 0.11, 0), mat, names[5 + s]);
		rd_body(w, r, 7 + s, q, p, rest[7 + s], 1, ibV3(0.07, 0.13, 0), mat, names[7 + s]);
		rd_body(w, r, 9 + s, q, p, rest[9 + s], 1, ibV3(0.055, 0.16, 0), mat, names[9 + s]);
	}
	const ibVec3 X = {1, 0, 0}, Z = {0, 0, 1}, mZ = {0, 0, -1};
	rd_joint(w, r, 0, 0, 1, rest[0], rest[1], ibSub(ibV3(0, 0, 1.12), z0), true, Z, X, 0.5, -0.4, 0.4);
	rd_joint(w, r, 1, 1, 2, rest[1], rest[2], ibSub(ibV3(0, 0, 1.57), z0), true, Z, X, 0.6, -0.8, 0.8);
	for (int s = 0; s < 2; ++s) {
		double x = s ? 0.24 : -0.24, xl = s ? 0.09 : -0.09;
		rd_joint(w, r, 2 + s, 1, 3 + s, rest[1], rest[3 + s], ibSub(ibV3(x, 0, 1.5), z0), true, mZ, X, 1.5, -0.8, 0.8);
		rd_joint(w, r, 4 + s, 3 + s, 5 + s, rest[3 + s], rest[5 + s], ibSub(ibV3(x, 0, 1.165), z0), false, X, Z,
		         0.0, 2.4, 0);
		rd_joint(w, r, 6 + s, 0, 7 + s, rest[0], rest[7 + s], ibSub(ibV3(xl, 0, 0.95), z0), true, mZ, X, 1.2, -0.5, 0.5);
		rd_joint(w, r, 8 + s, 7 + s, 9 + s, rest[7 + s], rest[9 + s], ibSub(ibV3(xl, 0, 0.54), z0), false, X, Z,
		         -2.3, 0.0, 0);
	}
}

/* lowest point of body i (m) */
static inline double rd_lowest(const Ragdoll* r, int i)
{
	ibVec3 c = ibBody_GetPosition(r->body[i]);
	ibQuat q = ibBody_GetRotation(r->body[i]);
	if (r->kind[i] == 2) return c.z - r->half[i].x;
	if (r->kind[i] == 1) {
		ibVec3 ax = ibRotate(q, ibV3(0, 0, r->half[i].y));
		return c.z - fabs(ax.z) - r->half[i].x;
	}
	ibVec3 h = r->half[i];
	double m = 0.0;
	for (int k = 0; k < 3; ++k) {
		ibVec3 e = ibRotate(q, ibV3(k == 0 ? h.x : 0, k == 1 ? h.y : 0, k == 2 ? h.z : 0));
		m += fabs(e.z);
	}
	return c.z - m;
}

#endif
