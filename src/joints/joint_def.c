/* Joint definitions: defaults and helpers that derive the local frames from world data. */
#include <math.h>

#include "joints/joint_internal.h"

ibMotorDef ibDefaultMotorDef(void)
{
	ibMotorDef m = {0};
	m.mode = IB_MOTOR_OFF;
	m.integralWindow = 10;
	m.maxForce = 1e30;
	return m;
}

ibJointDef ibDefaultJointDef(ibJointType type)
{
	ibJointDef d = {0};
	d.type = type;
	d.localAxisA = d.localAxisB = ibV3(1, 0, 0);
	d.localRefA = d.localRefB = ibV3(0, 1, 0);
	d.referenceRotation = (ibQuat){0, 0, 0, 0};
	d.referenceAngle = NAN;
	d.motor = ibDefaultMotorDef();
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

static ibResult bodies_of(const ibJointDef* d, ibBody** A, ibBody** B, ibWorld** w)
{
	if (!d) return IB_ERR_INVALID_ARGUMENT;
	*A = ib_body_get(d->bodyA, w);
	if (!*A) return IB_ERR_STALE_HANDLE;
	*B = ib_body_get(d->bodyB, w);
	if (!*B) return IB_ERR_STALE_HANDLE;
	return IB_OK;
}

static ibVec3 to_local_vector(const ibBody* b, ibVec3 v) { return ibInvRotate(ib_body_user_rotation(b), v); }
static ibVec3 to_local_point(const ibBody* b, ibVec3 p)
{
	return ibInvRotate(ib_body_user_rotation(b), ibSub(p, ib_body_user_position(b)));
}

ibResult ibJointDef_SetWorldAnchors(ibJointDef* d, ibVec3 anchorA, ibVec3 anchorB)
{
	ibBody *A, *B;
	ibWorld* w;
	ibResult r = bodies_of(d, &A, &B, &w);
	if (r != IB_OK) return r;
	if (!ibVec3_IsFinite(anchorA) || !ibVec3_IsFinite(anchorB))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint anchors must be finite");
	d->localAnchorA = to_local_point(A, anchorA);
	d->localAnchorB = to_local_point(B, anchorB);
	return IB_OK;
}

ibResult ibJointDef_SetWorldAxes(ibJointDef* d, ibVec3 axisA, ibVec3 axisB)
{
	ibBody *A, *B;
	ibWorld* w;
	ibResult r = bodies_of(d, &A, &B, &w);
	if (r != IB_OK) return r;
	if (!ibVec3_IsFinite(axisA) || !ibVec3_IsFinite(axisB) || !(ibLength(axisA) > 1e-12) || !(ibLength(axisB) > 1e-12))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint axes must be finite and non-zero");
	axisA = ibNormalize(axisA);
	axisB = ibNormalize(axisB);
	d->localAxisA = to_local_vector(A, axisA);
	d->localAxisB = to_local_vector(B, axisB);
	ibVec3 ref = ibPerpendicular(axisA);
	d->localRefA = to_local_vector(A, ref);
	d->localRefB = to_local_vector(B, ibNormalize(ibSub(ref, ibScale(ibDot(ref, axisB), axisB))));
	return IB_OK;
}

ibResult ibJointDef_SetWorldFrame(ibJointDef* d, ibVec3 anchor, ibVec3 axis)
{
	ibResult r = ibJointDef_SetWorldAnchors(d, anchor, anchor);
	return r != IB_OK ? r : ibJointDef_SetWorldAxes(d, axis, axis);
}
