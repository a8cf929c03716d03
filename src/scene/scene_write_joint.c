/* ibdyn_scene writer: joints, in local form, so that load -> save -> load gives back the very same
 * ibJoint_GetDef values.
 *
 * ibCreateJoint normalises the axes and reference vectors (ibNormalize) and the reference rotation
 * (ibQuatNormalize) it is given, and normalising an already normalised vector does not always give
 * it back bit for bit (about a third of all unit vectors move by an ulp). So instead of the stored
 * unit vector u the writer writes a vector p with normalise(p) == u exactly: u itself when that
 * works, otherwise a scaled copy of u (|p| in (1, 2)) whose components are adjusted by a few ulps
 * so that each one rounds back to the component of u. The search uses the very inline functions
 * of ibdyn/math.h that the library uses; it succeeds for all but about 1 in 10^5 vectors, which
 * are then written as stored (and may differ in the last bit after loading). */
#define _POSIX_C_SOURCE 200809L

#include "scene_write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- exact unit vectors */

enum { PREIMAGE_SCALES = 4096, PREIMAGE_ROUNDS = 3, PREIMAGE_ULPS = 4 };

static bool sameBits(const void* a, const void* b, size_t n) { return memcmp(a, b, n) == 0; }

/* A value c near n / r with c * r == n bit for bit (NaN if none within a few ulps). */
static double componentFor(double n, double r)
{
	double c = n / r;
	double v = c * r;
	if (sameBits(&v, &n, sizeof v)) return c;
	double up = c, down = c;
	for (int k = 0; k < PREIMAGE_ULPS; ++k) {
		up = nextafter(up, INFINITY);
		down = nextafter(down, -INFINITY);
		v = up * r;
		if (sameBits(&v, &n, sizeof v)) return up;
		v = down * r;
		if (sameBits(&v, &n, sizeof v)) return down;
	}
	return NAN;
}

/* A vector p with ibNormalize(p) == u bit for bit (u itself if none is found). */
static ibVec3 vectorForUnit(ibVec3 u)
{
	ibVec3 t = ibNormalize(u);
	if (sameBits(&t, &u, sizeof u)) return u;
	for (int k = 1; k < PREIMAGE_SCALES; ++k) {
		ibVec3 p = ibScale(1.0 + (double)k / PREIMAGE_SCALES, u);
		for (int round = 0; round < PREIMAGE_ROUNDS; ++round) {
			double r = 1.0 / ibLength(p);
			ibVec3 q = ibV3(componentFor(u.x, r), componentFor(u.y, r), componentFor(u.z, r));
			if (!ibVec3_IsFinite(q)) break;
			t = ibNormalize(q);
			if (sameBits(&t, &u, sizeof u)) return q;
			p = q;
		}
	}
	return u;
}

/* A quaternion p with ibQuatNormalize(p) == u bit for bit (u itself if none is found). */
static ibQuat quatForUnit(ibQuat u)
{
	ibQuat t = ibQuatNormalize(u);
	if (sameBits(&t, &u, sizeof u)) return u;
	for (int k = 1; k < PREIMAGE_SCALES; ++k) {
		double s = 1.0 + (double)k / PREIMAGE_SCALES;
		ibQuat p = ibQ(s * u.w, s * u.x, s * u.y, s * u.z);
		for (int round = 0; round < PREIMAGE_ROUNDS; ++round) {
			double r = 1.0 / sqrt(ibQuatNormSq(p));
			ibQuat q = ibQ(componentFor(u.w, r), componentFor(u.x, r), componentFor(u.y, r), componentFor(u.z, r));
			if (!ibQuat_IsFinite(q)) break;
			t = ibQuatNormalize(q);
			if (sameBits(&t, &u, sizeof u)) return q;
			p = q;
		}
	}
	return u;
}

/* ---------------------------------------------------------------- elements */

/* True unless v is +0 (the default of the scalar joint fields, which are then left out). */
static bool notPlusZero(double v) { return v != 0.0 || signbit(v); }

static void attrDofs(ibSceneWriter* w, const char* name, unsigned bits)
{
	char text[4];
	size_t n = 0;
	if (bits & IB_DOF_X) text[n++] = 'x';
	if (bits & IB_DOF_Y) text[n++] = 'y';
	if (bits & IB_DOF_Z) text[n++] = 'z';
	text[n] = '\0';
	ibSceneW_AttrText(w, name, text);
}

static void writeMotor(ibSceneWriter* w, const ibMotorDef* m)
{
	const char* mode = ibScene_EnumName(ibScene_MotorModes, (int)m->mode);
	ibSceneW_Puts(w, "    <motor");
	ibSceneW_AttrText(w, "mode", mode != NULL ? mode : "?");
	ibSceneW_AttrReal(w, "target", m->target);
	ibSceneW_AttrReal(w, "gain", m->gain);
	ibSceneW_AttrReal(w, "reset_time", m->resetTime);
	ibSceneW_AttrReal(w, "derivative_time", m->derivativeTime);
	ibSceneW_AttrInt(w, "integral_window", m->integralWindow);
	ibSceneW_AttrReal(w, "max_force", m->maxForce);
	if (m->scheduleCount <= 0) {
		ibSceneW_Puts(w, "/>\n");
		return;
	}
	ibSceneW_Puts(w, ">\n");
	for (int i = 0; i < m->scheduleCount; ++i) {
		ibSceneW_Puts(w, "      <point");
		ibSceneW_AttrReal(w, "t", m->scheduleTimes[i]);
		ibSceneW_AttrReal(w, "value", m->scheduleValues[i]);
		ibSceneW_Puts(w, "/>\n");
	}
	ibSceneW_Puts(w, "    </motor>\n");
}

/* One <joint>; false with *why set if it cannot be written. */
static bool writeJoint(ibSceneWriter* w, const ibJointDef* d, const char* bodyA, const char* bodyB, const char** why)
{
	const char* type = ibScene_EnumName(ibScene_JointTypes, (int)d->type);
	if (type == NULL) {
		*why = "has an unknown type";
		return false;
	}
	ibSceneW_Puts(w, "  <joint");
	ibSceneW_AttrText(w, "type", type);
	if (d->name != NULL && d->name[0] != '\0') ibSceneW_AttrText(w, "name", d->name);
	ibSceneW_AttrText(w, "body_a", bodyA);
	ibSceneW_AttrText(w, "body_b", bodyB);
	ibSceneW_AttrVec3(w, "local_anchor_a", d->localAnchorA);
	ibSceneW_AttrVec3(w, "local_anchor_b", d->localAnchorB);
	ibSceneW_AttrVec3(w, "local_axis_a", vectorForUnit(d->localAxisA));
	ibSceneW_AttrVec3(w, "local_axis_b", vectorForUnit(d->localAxisB));
	ibSceneW_AttrVec3(w, "local_ref_a", vectorForUnit(d->localRefA));
	ibSceneW_AttrVec3(w, "local_ref_b", vectorForUnit(d->localRefB));
	ibSceneW_AttrQuat(w, "reference_rotation", quatForUnit(d->referenceRotation));
	/* Only (0, pi) can be given; other values were computed from the poses and are computed again. */
	if (d->referenceAngle > 0.0 && d->referenceAngle < IB_PI)
		ibSceneW_AttrReal(w, "reference_angle", d->referenceAngle);
	if (notPlusZero(d->distance)) ibSceneW_AttrReal(w, "distance", d->distance);
	if (notPlusZero(d->stiffness)) ibSceneW_AttrReal(w, "stiffness", d->stiffness);
	if (notPlusZero(d->damping)) ibSceneW_AttrReal(w, "damping", d->damping);
	if (d->linearDofs & 7u) attrDofs(w, "linear_dofs", d->linearDofs);
	if (d->angularDofs & 7u) attrDofs(w, "angular_dofs", d->angularDofs);
	if (d->collideConnected) ibSceneW_AttrText(w, "collide_connected", "true");
	if (d->enableLimit) {
		ibSceneW_AttrReal(w, "lower_limit", d->lowerLimit);
		ibSceneW_AttrReal(w, "upper_limit", d->upperLimit);
	}
	if (d->enableConeLimit) {
		ibSceneW_AttrReal(w, "cone_angle", d->coneAngle);
		if (notPlusZero(d->coneAngle2)) ibSceneW_AttrReal(w, "cone_angle2", d->coneAngle2);
	}
	if (d->enableTwistLimit) {
		ibSceneW_AttrReal(w, "lower_twist", d->lowerTwist);
		ibSceneW_AttrReal(w, "upper_twist", d->upperTwist);
	}
	if (notPlusZero(d->limitRestitution)) ibSceneW_AttrReal(w, "limit_restitution", d->limitRestitution);
	if (d->motor.mode == IB_MOTOR_OFF) {
		ibSceneW_Puts(w, "/>\n");
		return true;
	}
	ibSceneW_Puts(w, ">\n");
	writeMotor(w, &d->motor);
	ibSceneW_Puts(w, "  </joint>\n");
	return true;
}

bool ibScene_WriteJoints(ibSceneWriter* w, const ibJointDef* defs, int count, const char* const* bodyNames,
                         ibSceneErr* e)
{
	for (int i = 0; i < count && !w->outOfMemory; ++i) {
		const ibJointDef* d = &defs[i];
		const char* why = NULL;
		w->nonFinite = w->badText = NULL;
		bool done = writeJoint(w, d, bodyNames[2 * i], bodyNames[2 * i + 1], &why);
		if (done && w->nonFinite != NULL)
			why = "has a non-finite value";
		else if (done && w->badText != NULL)
			why = "has a name that is not valid UTF-8 XML text";
		if (why == NULL) continue;
		char label[160];
		if (d->name != NULL && d->name[0] != '\0' && w->badText == NULL)
			snprintf(label, sizeof label, "joint %d '%.100s'", i, d->name);
		else
			snprintf(label, sizeof label, "joint %d", i);
		if (w->nonFinite != NULL)
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "%s %s in '%s'", label, why, w->nonFinite);
		else
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "%s %s", label, why);
		return false;
	}
	return !w->outOfMemory;
}
