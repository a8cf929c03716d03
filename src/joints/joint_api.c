/* Joint creation, destruction and getters. */
#include <math.h>
#include <string.h>

#include "dynamics/sleep.h"
#include "joints/joint_internal.h"

#define GET_JOINT_OR(ret)                \
	ibWorld* w;                          \
	ibJoint* j = ib_joint_get(id, &w);   \
	if (!j) return ret

/* creating, destroying or changing a joint wakes the islands of its bodies (src/dynamics/sleep.c) */
static void wake_bodies(ibWorld* w, const ibJointDef* d)
{
	ib_sleep_wake_body(w, d->bodyA.index1 - 1);
	ib_sleep_wake_body(w, d->bodyB.index1 - 1);
}

static bool unit_ok(ibVec3 v) { return ibVec3_IsFinite(v) && ibLength(v) > 1e-12; }

static ibResult validate(ibWorld* w, const ibJointDef* d, ibBody** A, ibBody** B)
{
	if (!d) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint definition is NULL");
	if (d->internalValue != IB_DEF_MAGIC)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint definition not initialised with ibDefaultJointDef()");
	if ((unsigned)d->type >= IB_JOINT_TYPE_COUNT) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown joint type %d", (int)d->type);
	ibWorld* wa;
	*A = ib_body_get(d->bodyA, &wa);
	if (!*A || wa != w) return ib_error(w, IB_ERR_STALE_HANDLE, "joint body A is not a live body of this world");
	*B = ib_body_get(d->bodyB, &wa);
	if (!*B || wa != w) return ib_error(w, IB_ERR_STALE_HANDLE, "joint body B is not a live body of this world");
	if (*A == *B) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "a joint needs two different bodies");
	if (!ib_is_dynamic(*A) && !ib_is_dynamic(*B))
		return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "at least one body of a joint must be dynamic");
	if (!ibVec3_IsFinite(d->localAnchorA) || !ibVec3_IsFinite(d->localAnchorB))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint anchors must be finite");
	if (!unit_ok(d->localAxisA) || !unit_ok(d->localAxisB) || !unit_ok(d->localRefA) || !unit_ok(d->localRefB))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint axes and reference vectors must be finite and non-zero");
	if (!(isfinite(d->distance) && d->distance >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint distance must be finite and >= 0");
	if (!(isfinite(d->stiffness) && d->stiffness >= 0.0 && isfinite(d->damping) && d->damping >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "spring stiffness and damping must be finite and >= 0");
	double rn = ibQuatNormSq(d->referenceRotation);
	if (!ibQuat_IsFinite(d->referenceRotation) || (rn != 0.0 && !(rn > 1e-300)))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "reference rotation must be finite (all zero = current poses)");
	if (!isnan(d->referenceAngle) && !(isfinite(d->referenceAngle) && d->referenceAngle > 0.0 && d->referenceAngle < IB_PI))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "reference angle must be in (0, pi) or NaN");
	if (d->type == IB_JOINT_VELOCITY && (d->linearDofs > 7u || d->angularDofs > 7u || (d->linearDofs | d->angularDofs) == 0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "velocity joint needs DOF bits (1..7) for linear and/or angular rows");
	if (ib_limit_validate(w, d->type, d->enableLimit, d->lowerLimit, d->upperLimit, d->limitRestitution) != IB_OK) return IB_ERR_INVALID_ARGUMENT;
	if (ib_ball_limit_validate(w, d) != IB_OK) return IB_ERR_INVALID_ARGUMENT;
	const ibMotorDef* m = &d->motor;
	if (m->mode != IB_MOTOR_OFF) {
		if (d->type != IB_JOINT_HINGE && d->type != IB_JOINT_SLIDER)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motors exist only on hinge and slider joints");
		if (m->mode != IB_MOTOR_POSITION && m->mode != IB_MOTOR_VELOCITY)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown motor mode %d", (int)m->mode);
		if (!(isfinite(m->gain) && m->gain >= 0.0 && isfinite(m->resetTime) && m->resetTime >= 0.0 &&
		      isfinite(m->derivativeTime) && m->derivativeTime >= 0.0 && isfinite(m->target)))
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor gain, times and target must be finite and >= 0");
		if (!(m->maxForce > 0.0) || isnan(m->maxForce))
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor maxForce must be > 0");
		if (m->integralWindow < 1 || m->integralWindow > 100000)
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor integral window must be in 1..100000");
		if (m->scheduleCount < 0 || (m->scheduleCount > 0 && (!m->scheduleTimes || !m->scheduleValues)))
			return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor schedule arrays missing");
		for (int i = 0; i < m->scheduleCount; ++i) {
			if (!isfinite(m->scheduleTimes[i]) || !isfinite(m->scheduleValues[i]) ||
			    (i > 0 && !(m->scheduleTimes[i] > m->scheduleTimes[i - 1])))
				return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor schedule times must be finite and strictly increasing");
		}
	}
	return IB_OK;
}

static ibResult set_motor(ibWorld* w, ibJoint* j, const ibMotorDef* m)
{
	int n = m->mode != IB_MOTOR_OFF ? m->scheduleCount : 0;
	double* t = NULL;
	double* v = NULL;
	double* win = NULL;
	int wcap = m->mode != IB_MOTOR_OFF ? m->integralWindow : 0;
	if (n > 0) {
		t = ib_alloc(w, (size_t)n * sizeof(double));
		v = ib_alloc(w, (size_t)n * sizeof(double));
	}
	if (wcap > 0) win = ib_alloc(w, (size_t)wcap * sizeof(double));
	if ((n > 0 && (!t || !v)) || (wcap > 0 && !win)) {
		ib_free(w, t, (size_t)n * sizeof(double));
		ib_free(w, v, (size_t)n * sizeof(double));
		ib_free(w, win, (size_t)wcap * sizeof(double));
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory for motor");
	}
	if (n > 0) {
		memcpy(t, m->scheduleTimes, (size_t)n * sizeof(double));
		memcpy(v, m->scheduleValues, (size_t)n * sizeof(double));
	}
	ib_free(w, j->schedTimes, (size_t)j->schedCount * sizeof(double));
	ib_free(w, j->schedValues, (size_t)j->schedCount * sizeof(double));
	ib_free(w, j->window, (size_t)j->windowCap * sizeof(double));
	j->schedTimes = t;
	j->schedValues = v;
	j->schedCount = n;
	j->window = win;
	j->windowCap = wcap;
	j->windowLen = j->windowHead = 0;
	j->hasPrevError = false;
	j->def.motor = *m;
	j->def.motor.scheduleTimes = t;
	j->def.motor.scheduleValues = v;
	j->def.motor.scheduleCount = n;
	return IB_OK;
}

ibJointId ibCreateJoint(ibWorldId worldId, const ibJointDef* d)
{
	ibWorld* w = ib_world_get(worldId);
	if (!w) return IB_NULL_JOINT;
	ibBody *A, *B;
	if (validate(w, d, &A, &B) != IB_OK) return IB_NULL_JOINT;
	ibJointStore* st = ib_joint_store(w, true);
	if (!st) {
		ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating joint");
		return IB_NULL_JOINT;
	}
	int32_t index = st->jointFree;
	if (index == IB_NULL_INDEX) {
		if (!ib_grow(w, (void**)&st->joints, &st->jointCapacity, st->jointHigh + 1, sizeof(ibJoint))) {
			ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating joint");
			return IB_NULL_JOINT;
		}
		index = st->jointHigh++;
		st->joints[index].generation = (uint16_t)(w->generation * 7919u);
	} else {
		st->jointFree = st->joints[index].nextFree;
	}
	ibJoint* j = &st->joints[index];
	uint16_t gen = (uint16_t)(j->generation + 1u);
	memset(j, 0, sizeof *j);
	j->generation = gen ? gen : 1;
	j->inUse = true;
	j->def = *d;
	j->def.localAxisA = ibNormalize(d->localAxisA);
	j->def.localAxisB = ibNormalize(d->localAxisB);
	j->def.localRefA = ibNormalize(d->localRefA);
	j->def.localRefB = ibNormalize(d->localRefB);
	j->basic[0] = j->basic[1] = IB_NULL_INDEX;
	j->dragHelper = IB_NULL_INDEX;
	if (ibQuatNormSq(d->referenceRotation) == 0.0)
		j->def.referenceRotation = ibQuatMul(ibQuatConj(ib_body_user_rotation(B)), ib_body_user_rotation(A));
	j->def.referenceRotation = ibQuatNormalize(j->def.referenceRotation);
	if (isnan(d->referenceAngle)) {
		ibVec3 x = ibRotate(ib_body_user_rotation(A), j->def.localAxisA);
		ibVec3 y = ibRotate(ib_body_user_rotation(B), j->def.localAxisB);
		j->def.referenceAngle = atan2(ibLength(ibCross(x, y)), ibDot(x, y));
	}
	j->name = ib_strdup(w, d->name);
	j->def.name = j->name;
	j->def.motor.scheduleCount = 0;
	j->def.motor.scheduleTimes = j->def.motor.scheduleValues = NULL;
	if (set_motor(w, j, &d->motor) != IB_OK) {
		ib_strfree(w, j->name);
		j->inUse = false;
		j->nextFree = st->jointFree;
		st->jointFree = index;
		return IB_NULL_JOINT;
	}
	st->jointCount++;
	st->basicsDirty = true;
	ib_limits_count(st);
	ib_motor_measure(w, j); /* ibJoint_GetMotorValue before the first step */
	wake_bodies(w, &j->def);
	return ib_joint_id(w, index);
}

ibResult ibDestroyJoint(ibJointId id)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	ibJointStore* st = w->joints;
	wake_bodies(w, &j->def);
	ib_joint_free_data(w, j);
	j->inUse = false;
	j->nextFree = st->jointFree;
	st->jointFree = id.index1 - 1;
	st->jointCount--;
	st->basicsDirty = true;
	ib_limits_count(st);
	return IB_OK;
}

void ib_joints_on_body_destroyed(ibWorld* w, int32_t bodyIndex)
{
	ibJointStore* st = w->joints;
	if (!st) return;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (j->inUse && (j->def.bodyA.index1 - 1 == bodyIndex || j->def.bodyB.index1 - 1 == bodyIndex))
			ibDestroyJoint(ib_joint_id(w, i));
	}
}

bool ibJoint_IsValid(ibJointId id)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	ibJointStore* st = w ? w->joints : NULL;
	if (!st || id.index1 <= 0 || id.index1 > st->jointHigh) return false;
	ibJoint* j = &st->joints[id.index1 - 1];
	return j->inUse && j->generation == id.generation;
}

ibJointType ibJoint_GetType(ibJointId id)
{
	GET_JOINT_OR(IB_JOINT_TYPE_COUNT);
	return j->def.type;
}

ibResult ibJoint_GetDef(ibJointId id, ibJointDef* out)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	if (!out) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "output is NULL");
	*out = j->def;
	return IB_OK;
}

ibBodyId ibJoint_GetBodyA(ibJointId id)
{
	GET_JOINT_OR(IB_NULL_BODY);
	return j->def.bodyA;
}

ibBodyId ibJoint_GetBodyB(ibJointId id)
{
	GET_JOINT_OR(IB_NULL_BODY);
	return j->def.bodyB;
}

const char* ibJoint_GetName(ibJointId id)
{
	GET_JOINT_OR("");
	return j->name ? j->name : "";
}

double ibJoint_GetPositionError(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->posError;
}

double ibJoint_GetAngularError(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->angError;
}

double ibJoint_GetVelocityError(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->velError;
}

int ibJoint_GetIterations(ibJointId id)
{
	GET_JOINT_OR(0);
	return j->iterations;
}

double ibJoint_GetMotorValue(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->motorValue;
}

double ibJoint_GetMotorSpeed(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->motorSpeed;
}

double ibJoint_GetMotorOutput(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return j->motorOutput;
}

double ibJoint_GetMotorTarget(ibJointId id)
{
	GET_JOINT_OR(0.0);
	return ib_schedule_eval(j->schedTimes, j->schedValues, j->schedCount, w->time, j->def.motor.target);
}

ibResult ibJoint_SetMotor(ibJointId id, const ibMotorDef* m)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	if (!m) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "motor definition is NULL");
	ibJointDef d = j->def;
	d.motor = *m;
	ibBody *A, *B;
	ibResult r = validate(w, &d, &A, &B);
	if (r != IB_OK) return r;
	wake_bodies(w, &j->def);
	return set_motor(w, j, m);
}

int ibWorld_GetJointCount(ibWorldId wid)
{
	ibWorld* w = ib_world_get(wid);
	return (w && w->joints) ? w->joints->jointCount : 0;
}

int ibWorld_GetJoints(ibWorldId wid, ibJointId* out, int capacity)
{
	ibWorld* w = ib_world_get(wid);
	if (!w || !w->joints) return 0;
	int n = 0;
	for (int32_t i = 0; i < w->joints->jointHigh; ++i) {
		if (!w->joints->joints[i].inUse) continue;
		if (out && n < capacity) out[n] = ib_joint_id(w, i);
		++n;
	}
	return n;
}

ibResult ibJoint_SetLimit(ibJointId id, bool enable, double lower, double upper)
{
	ibWorld* w;
	ibJoint* j = ib_joint_get(id, &w);
	if (!j) return IB_ERR_STALE_HANDLE;
	ibResult r = ib_limit_validate(w, j->def.type, enable, lower, upper, j->def.limitRestitution);
	if (r != IB_OK) return r;
	j->def.enableLimit = enable;
	j->def.lowerLimit = lower;
	j->def.upperLimit = upper;
	j->limitSide = 0;
	j->limitAcc = j->limitAccVel = j->limitImpulse = 0.0;
	ib_limits_count(w->joints);
	wake_bodies(w, &j->def);
	return IB_OK;
}

bool ibJoint_GetLimit(ibJointId id, double* lower, double* upper)
{
	ibJoint* j = ib_joint_get(id, NULL);
	if (!j) return false;
	if (lower) *lower = j->def.lowerLimit;
	if (upper) *upper = j->def.upperLimit;
	return j->def.enableLimit;
}

ibResult ibJoint_SetLimitRestitution(ibJointId id, double e)
{
	ibWorld* w;
	ibJoint* j = ib_joint_get(id, &w);
	if (!j) return IB_ERR_STALE_HANDLE;
	ibResult r = ib_limit_validate(w, j->def.type, false, 0.0, 0.0, e);
	if (r != IB_OK) return r;
	j->def.limitRestitution = e;
	return IB_OK;
}

double ibJoint_GetLimitRestitution(ibJointId id)
{
	ibJoint* j = ib_joint_get(id, NULL);
	return j ? j->def.limitRestitution : 0.0;
}

double ibJoint_GetLimitImpulse(ibJointId id)
{
	ibJoint* j = ib_joint_get(id, NULL);
	return j ? j->limitImpulse : 0.0;
}

ibResult ibJoint_SetConeLimit(ibJointId id, bool enable, double angle, double angle2)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	ibJointDef d = j->def;
	d.enableConeLimit = enable;
	d.coneAngle = angle;
	d.coneAngle2 = angle2;
	ibResult r = ib_ball_limit_validate(w, &d);
	if (r != IB_OK) return r;
	j->def = d;
	j->coneRow = (ibLimitRow){0};
	ib_limits_count(w->joints);
	return IB_OK;
}

ibResult ibJoint_SetTwistLimit(ibJointId id, bool enable, double lower, double upper)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	ibJointDef d = j->def;
	d.enableTwistLimit = enable;
	d.lowerTwist = lower;
	d.upperTwist = upper;
	ibResult r = ib_ball_limit_validate(w, &d);
	if (r != IB_OK) return r;
	j->def = d;
	j->twistRow = (ibLimitRow){0};
	ib_limits_count(w->joints);
	return IB_OK;
}

ibResult ibJoint_GetSwingTwist(ibJointId id, double* swing, double* twist)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	if (j->def.type == IB_JOINT_SPRING || j->def.type == IB_JOINT_VELOCITY)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "spring and velocity joints have no joint frames");
	ib_ball_swing_twist(w, j, swing, twist);
	return IB_OK;
}

ibResult ibJoint_GetBallLimitImpulses(ibJointId id, double* cone, double* twist)
{
	GET_JOINT_OR(IB_ERR_STALE_HANDLE);
	if (cone) *cone = j->coneRow.impulse;
	if (twist) *twist = j->twistRow.impulse;
	return IB_OK;
}
