/* Rigid bodies: creation, state access, forces and impulses (§3.1, §3.2.2). */
#include <math.h>
#include <string.h>

#include "dynamics/sleep.h"
#include "dynamics/world.h"

#define GET_BODY_OR(ret)                       \
	ibWorld* w;                                \
	ibBody* b = ib_body_get(id, &w);           \
	if (!b) return ret

#define REQUIRE_FINITE_V(v, what)                 \
	if (!ibVec3_IsFinite(v))                      \
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "%s must be finite", what)

#define REQUIRE_DYNAMIC(what)                                                                          \
	if (!ib_is_dynamic(b))                                                                             \
		return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "%s: body '%s' is not dynamic", what, b->name ? b->name : "")

/* a user call changed the body's state: its island wakes (sleep.c); moving a static or kinematic
 * body wakes the sleeping bodies it touches or is jointed to */
#define WAKE() ib_sleep_wake_body(w, id.index1 - 1)

static ibResult validate_def(ibWorld* w, const ibBodyDef* d)
{
	if (!d) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body definition is NULL");
	if (d->internalValue != IB_DEF_MAGIC)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body definition not initialised with ibDefaultBodyDef()");
	if (d->type != IB_BODY_STATIC && d->type != IB_BODY_KINEMATIC && d->type != IB_BODY_DYNAMIC)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown body type %d", (int)d->type);
	if (!ibVec3_IsFinite(d->position)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body position must be finite");
	double qn = ibQuatNormSq(d->rotation);
	if (!ibQuat_IsFinite(d->rotation) || !(qn > 1e-300) || !isfinite(qn))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body rotation must be a finite non-zero quaternion");
	if (!ibVec3_IsFinite(d->linearVelocity) || !ibVec3_IsFinite(d->angularVelocity))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "body velocities must be finite");
	if (d->type == IB_BODY_STATIC && (ibLengthSq(d->linearVelocity) > 0.0 || ibLengthSq(d->angularVelocity) > 0.0))
		return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "a static body cannot have a velocity");
	if (!(isfinite(d->linearDamping) && d->linearDamping >= 0.0 && isfinite(d->angularDamping) &&
	      d->angularDamping >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "damping must be finite and >= 0");
	if (!isfinite(d->gravityScale)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "gravity scale must be finite");
	if (d->solverGroup < 0 || d->solverGroup > IB_MAX_SOLVER_GROUP)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver group must be in [0, %d] (got %d)", IB_MAX_SOLVER_GROUP, d->solverGroup);
	return IB_OK;
}

ibBodyId ibCreateBody(ibWorldId worldId, const ibBodyDef* d)
{
	ibWorld* w = ib_world_get(worldId);
	if (!w) return IB_NULL_BODY;
	if (validate_def(w, d) != IB_OK) return IB_NULL_BODY;
	int32_t index = w->bodyFree;
	if (index == IB_NULL_INDEX) {
		if (!ib_grow(w, (void**)&w->bodies, &w->bodyCapacity, w->bodyHigh + 1, sizeof(ibBody))) {
			ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating body");
			return IB_NULL_BODY;
		}
		index = w->bodyHigh;
	}
	char* name = ib_strdup(w, d->name);
	if (d->name && *d->name && !name) {
		ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating body");
		return IB_NULL_BODY;
	}
	if (index == w->bodyHigh) {
		/* Fresh slots start at a world-dependent generation so that handles of a destroyed world
		 * are unlikely to match bodies of a new world in the same slot. */
		w->bodies[index].generation = (uint16_t)(w->generation * 7919u);
		w->bodyHigh++;
	} else
		w->bodyFree = w->bodies[index].nextFree;
	ibBody* b = &w->bodies[index];
	uint16_t gen = (uint16_t)(b->generation + 1u);
	memset(b, 0, sizeof *b);
	b->generation = gen ? gen : 1;
	b->inUse = true;
	b->type = d->type;
	b->name = name;
	b->userData = d->userData;
	b->linearDamping = d->linearDamping;
	b->angularDamping = d->angularDamping;
	b->gravityScale = d->gravityScale;
	b->solverGroup = d->solverGroup;
	if (d->solverGroup != 0) w->solverGroupsVersion++;
	b->enableSleep = d->enableSleep;
	b->sleepHead = b->sleepNext = IB_NULL_INDEX;
	b->firstShape = b->lastShape = IB_NULL_INDEX;
	b->nextFree = IB_NULL_INDEX;
	b->qPrincipal = IB_QUAT_IDENTITY;
	b->st.q = ib_quat_unit(d->rotation);
	b->st.s = d->position;
	if (d->type != IB_BODY_STATIC) {
		b->st.v = d->linearVelocity;
		b->st.w = d->angularVelocity;
	}
	ib_body_update_mass(w, b); /* cannot fail: no shapes, no override */
	if (!d->isAwake && d->type == IB_BODY_DYNAMIC && d->enableSleep) { /* created asleep: an island of its own */
		ib_sleep_mark_asleep(w, b);
		b->sleepHead = index;
	}
	w->bodyCount++;
	return ib_body_id(w, index);
}

ibResult ibDestroyBody(ibBodyId id)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	ib_sleep_wake_neighbours(w, id.index1 - 1);
	ib_joints_on_body_destroyed(w, id.index1 - 1);
	ib_soft_on_body_destroyed(w, id.index1 - 1);
	while (b->firstShape != IB_NULL_INDEX) {
		int32_t s = b->firstShape;
		ibDestroyShape((ibShapeId){s + 1, w->slot, w->shapes[s].generation});
	}
	ib_strfree(w, b->name);
	b->name = NULL;
	b->inUse = false;
	b->nextFree = w->bodyFree;
	w->bodyFree = id.index1 - 1;
	w->bodyCount--;
	return IB_OK;
}

bool ibBody_IsValid(ibBodyId id)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (!w || id.index1 <= 0 || id.index1 > w->bodyHigh) return false;
	ibBody* b = &w->bodies[id.index1 - 1];
	return b->inUse && b->generation == id.generation;
}

ibWorldId ibBody_GetWorld(ibBodyId id)
{
	GET_BODY_OR(IB_NULL_WORLD);
	(void)b;
	return (ibWorldId){(uint16_t)(w->slot + 1), w->generation};
}

ibBodyType ibBody_GetType(ibBodyId id)
{
	GET_BODY_OR(IB_BODY_STATIC);
	return b->type;
}

const char* ibBody_GetName(ibBodyId id)
{
	GET_BODY_OR("");
	return b->name ? b->name : "";
}

ibVec3 ibBody_GetPosition(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return ib_body_user_position(b);
}

ibQuat ibBody_GetRotation(ibBodyId id)
{
	GET_BODY_OR(IB_QUAT_IDENTITY);
	return ib_body_user_rotation(b);
}

ibResult ibBody_SetTransform(ibBodyId id, ibVec3 position, ibQuat rotation)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(position, "position");
	double qn = ibQuatNormSq(rotation);
	if (!ibQuat_IsFinite(rotation) || !(qn > 1e-300) || !isfinite(qn))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "rotation must be a finite non-zero quaternion");
	ibQuat qu = ib_quat_unit(rotation);
	ib_sleep_wake_neighbours(w, id.index1 - 1); /* at the old pose */
	b->st.q = ibQuatNormalize(ibQuatMul(qu, b->qPrincipal));
	b->st.s = ibAdd(position, ibRotate(qu, b->localCom));
	b->userPos = position;
	b->userRot = qu;
	b->userPoseExact = true;
	b->substepHint = 0.0;
	ib_body_update_derived(b);
	w->poseEpoch++;
	ib_sleep_wake_neighbours(w, id.index1 - 1); /* at the new pose */
	return IB_OK;
}

ibVec3 ibBody_GetWorldCenterOfMass(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->st.s;
}

ibVec3 ibBody_GetLocalCenterOfMass(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->localCom;
}

ibVec3 ibBody_GetLinearVelocity(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->st.v;
}

ibResult ibBody_SetLinearVelocity(ibBodyId id, ibVec3 v)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(v, "linear velocity");
	if (b->type == IB_BODY_STATIC) return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "a static body cannot have a velocity");
	if (b->type != IB_BODY_DYNAMIC) ib_sleep_wake_neighbours(w, id.index1 - 1);
	WAKE();
	b->st.v = v;
	return IB_OK;
}

ibVec3 ibBody_GetAngularVelocity(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->st.w;
}

ibResult ibBody_SetAngularVelocity(ibBodyId id, ibVec3 av)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(av, "angular velocity");
	if (b->type == IB_BODY_STATIC) return ib_error(w, IB_ERR_WRONG_BODY_TYPE, "a static body cannot have a velocity");
	if (b->type != IB_BODY_DYNAMIC) ib_sleep_wake_neighbours(w, id.index1 - 1);
	WAKE();
	b->st.w = av;
	return IB_OK;
}

ibVec3 ibBody_GetPointVelocity(ibBodyId id, ibVec3 p)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return ibAdd(b->st.v, ibCross(b->st.w, ibSub(p, b->st.s)));
}

ibVec3 ibBody_GetWorldPoint(ibBodyId id, ibVec3 lp)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return ibAdd(ib_body_user_position(b), ibRotate(ib_body_user_rotation(b), lp));
}

ibVec3 ibBody_GetLocalPoint(ibBodyId id, ibVec3 wp)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return ibInvRotate(ib_body_user_rotation(b), ibSub(wp, ib_body_user_position(b)));
}

ibVec3 ibBody_GetWorldVector(ibBodyId id, ibVec3 lv)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return ibRotate(ib_body_user_rotation(b), lv);
}

double ibBody_GetMass(ibBodyId id)
{
	GET_BODY_OR(0.0);
	return b->mass;
}

ibMassData ibBody_GetMassData(ibBodyId id)
{
	ibMassData z = {0};
	GET_BODY_OR(z);
	if (!ib_is_dynamic(b)) return z;
	if (b->massOverride) return b->overrideData;
	ibMassData principal = {b->mass, IB_VEC3_ZERO, ibMat3_Diag(b->inertiaP)};
	return ibMassData_Transform(&principal, b->localCom, b->qPrincipal);
}

ibResult ibBody_SetMassData(ibBodyId id, const ibMassData* md)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_DYNAMIC("set mass data");
	if (!md) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "mass data is NULL");
	ibResult r = ib_check_mass_data(w, md);
	if (r != IB_OK) return r;
	bool oldFlag = b->massOverride;
	ibMassData oldData = b->overrideData;
	b->massOverride = true;
	b->overrideData = *md;
	WAKE();
	r = ib_body_update_mass(w, b);
	if (r != IB_OK) {
		b->massOverride = oldFlag;
		b->overrideData = oldData;
	}
	return r;
}

ibResult ibBody_ResetMassData(ibBodyId id)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	if (!b->massOverride) return IB_OK;
	b->massOverride = false;
	WAKE();
	ibResult r = ib_body_update_mass(w, b);
	if (r != IB_OK) b->massOverride = true;
	return r;
}

bool ibBody_HasMassOverride(ibBodyId id)
{
	GET_BODY_OR(false);
	return b->massOverride;
}

ibVec3 ibBody_GetPrincipalInertia(ibBodyId id, ibQuat* axes)
{
	if (axes) *axes = IB_QUAT_IDENTITY;
	GET_BODY_OR(IB_VEC3_ZERO);
	if (axes) *axes = b->qPrincipal;
	return b->inertiaP;
}

void ib_body_apply_impulse_moment(ibBody* b, ibVec3 p, ibVec3 l)
{
	if (!ib_is_dynamic(b)) return;
	b->velVersion++;
	b->st.v = ibMulAdd(b->st.v, b->invMass, p);
	b->st.w = ibAdd(b->st.w, ibMat3_MulV(b->invInertiaW, l));
}

ibBody ib_body_at_state(const ibBody* b, const ibRigidState* st)
{
	ibBody t = *b;
	t.st = *st;
	t.userPoseExact = false;
	ib_body_update_derived(&t);
	return t;
}

void ib_body_apply_impulse(ibBody* b, ibVec3 p, ibVec3 worldPoint)
{
	ib_body_apply_impulse_moment(b, p, ibCross(ibSub(worldPoint, b->st.s), p));
}

double ib_body_kinetic_energy(const ibBody* b)
{
	ibMat3 J = ibMat3_RotateDiag(b->R, b->inertiaP);
	return 0.5 * (b->mass * ibLengthSq(b->st.v) + ibDot(b->st.w, ibMat3_MulV(J, b->st.w)));
}

double ib_bodies_kinetic_energy(const ibWorld* w)
{
	double e = 0.0;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		e += ib_body_kinetic_energy(b);
	}
	return e;
}

void ib_body_apply_angular_impulse(ibBody* b, ibVec3 l)
{
	if (!ib_is_dynamic(b)) return;
	b->velVersion++;
	b->st.w = ibAdd(b->st.w, ibMat3_MulV(b->invInertiaW, l));
}

ibResult ibBody_ApplyForce(ibBodyId id, ibVec3 f, ibVec3 p)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(f, "force");
	REQUIRE_FINITE_V(p, "point");
	REQUIRE_DYNAMIC("apply force");
	WAKE();
	b->userForce = ibAdd(b->userForce, f);
	b->userTorque = ibAdd(b->userTorque, ibCross(ibSub(p, b->st.s), f));
	return IB_OK;
}

ibResult ibBody_ApplyForceToCenter(ibBodyId id, ibVec3 f)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(f, "force");
	REQUIRE_DYNAMIC("apply force");
	WAKE();
	b->userForce = ibAdd(b->userForce, f);
	return IB_OK;
}

ibResult ibBody_ApplyTorque(ibBodyId id, ibVec3 t)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(t, "torque");
	REQUIRE_DYNAMIC("apply torque");
	WAKE();
	b->userTorque = ibAdd(b->userTorque, t);
	return IB_OK;
}

ibResult ibBody_ApplyImpulseAtPoint(ibBodyId id, ibVec3 p, ibVec3 point)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(p, "impulse");
	REQUIRE_FINITE_V(point, "point");
	REQUIRE_DYNAMIC("apply impulse");
	WAKE();
	ib_body_apply_impulse(b, p, point);
	return IB_OK;
}

ibResult ibBody_ApplyAngularImpulse(ibBodyId id, ibVec3 l)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	REQUIRE_FINITE_V(l, "angular impulse");
	REQUIRE_DYNAMIC("apply angular impulse");
	WAKE();
	ib_body_apply_angular_impulse(b, l);
	return IB_OK;
}

ibVec3 ibBody_GetAppliedForce(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->userForce;
}

ibVec3 ibBody_GetAppliedTorque(ibBodyId id)
{
	GET_BODY_OR(IB_VEC3_ZERO);
	return b->userTorque;
}

ibResult ibBody_SetDamping(ibBodyId id, double lin, double ang)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	if (!(isfinite(lin) && lin >= 0.0 && isfinite(ang) && ang >= 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "damping must be finite and >= 0");
	b->linearDamping = lin;
	b->angularDamping = ang;
	return IB_OK;
}

void ibBody_GetDamping(ibBodyId id, double* lin, double* ang)
{
	if (lin) *lin = 0.0;
	if (ang) *ang = 0.0;
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	if (!b) return;
	if (lin) *lin = b->linearDamping;
	if (ang) *ang = b->angularDamping;
}

ibResult ibBody_SetGravityScale(ibBodyId id, double s)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	if (!isfinite(s)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "gravity scale must be finite");
	b->gravityScale = s;
	WAKE();
	return IB_OK;
}

double ibBody_GetGravityScale(ibBodyId id)
{
	GET_BODY_OR(0.0);
	return b->gravityScale;
}

double ibBody_GetKineticEnergy(ibBodyId id)
{
	GET_BODY_OR(0.0);
	if (!ib_is_dynamic(b)) return 0.0;
	ibVec3 wl = ibMat3_MulTV(b->R, b->st.w);
	return 0.5 * b->mass * ibLengthSq(b->st.v) + 0.5 * ibDot(wl, ibMulCW(b->inertiaP, wl));
}

int ibBody_GetShapeCount(ibBodyId id)
{
	GET_BODY_OR(0);
	return b->shapeCount;
}

int ibBody_GetShapes(ibBodyId id, ibShapeId* out, int capacity)
{
	GET_BODY_OR(0);
	int n = 0;
	for (int32_t s = b->firstShape; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) {
		if (out && n < capacity) out[n] = (ibShapeId){s + 1, w->slot, w->shapes[s].generation};
		++n;
	}
	return n;
}

void* ibBody_GetUserData(ibBodyId id)
{
	GET_BODY_OR(NULL);
	return b->userData;
}

ibResult ibBody_SetUserData(ibBodyId id, void* ud)
{
	GET_BODY_OR(IB_ERR_STALE_HANDLE);
	b->userData = ud;
	return IB_OK;
}
