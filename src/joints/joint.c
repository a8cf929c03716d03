/* Public joints: creation, validation, decomposition into basic joints (§3.2.4), getters. */
#include <math.h>
#include <string.h>

#include "joints/joint_internal.h"

ibJointStore* ib_joint_store(ibWorld* w, bool create)
{
	if (!w->joints && create) {
		ibJointStore* st = ib_alloc(w, sizeof *st);
		if (!st) return NULL;
		memset(st, 0, sizeof *st);
		st->jointFree = IB_NULL_INDEX;
		w->joints = st;
	}
	return w->joints;
}

void ib_joint_free_data(ibWorld* w, ibJoint* j)
{
	ib_strfree(w, j->name);
	ib_free(w, j->schedTimes, (size_t)j->schedCount * sizeof(double));
	ib_free(w, j->schedValues, (size_t)j->schedCount * sizeof(double));
	ib_free(w, j->window, (size_t)j->windowCap * sizeof(double));
	j->name = NULL;
	j->schedTimes = j->schedValues = j->window = NULL;
	j->schedCount = j->windowCap = 0;
}

void ib_joints_destroy_store(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st) return;
	for (int32_t i = 0; i < st->jointHigh; ++i)
		if (st->joints[i].inUse) ib_joint_free_data(w, &st->joints[i]);
	ib_free(w, st->joints, (size_t)st->jointCapacity * sizeof(ibJoint));
	ib_free(w, st->basics, (size_t)st->basicCapacity * sizeof(ibBasic));
	ib_free(w, st->pred, (size_t)st->predCapacity * sizeof(ibPredicted));
	ib_free(w, st->predQueue, (size_t)st->predQueueCapacity * sizeof(int32_t));
	ib_free(w, st->rhs, (size_t)st->rhsCapacity * sizeof(ibVec3));
	ib_lgs_free(w);
	ib_lgs_sparse_free(w);
	ib_joints_follow_free(w);
	ib_free(w, st, sizeof *st);
	w->joints = NULL;
}

ibJoint* ib_joint_get(ibJointId id, ibWorld** outWorld)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	if (outWorld) *outWorld = w;
	ibJointStore* st = w ? w->joints : NULL;
	if (!st || id.index1 <= 0 || id.index1 > st->jointHigh) {
		if (w && id.index1 != 0) ib_error(w, IB_ERR_STALE_HANDLE, "stale joint handle");
		return NULL;
	}
	ibJoint* j = &st->joints[id.index1 - 1];
	if (!j->inUse || j->generation != id.generation) {
		ib_error(w, IB_ERR_STALE_HANDLE, "stale joint handle (index %d)", (int)id.index1 - 1);
		return NULL;
	}
	return j;
}

ibJointId ib_joint_id(const ibWorld* w, int32_t i)
{
	return (ibJointId){i + 1, w->slot, w->joints->joints[i].generation};
}

/* ---------------------------------------------------------------- basic joints */

static void add_basic(ibWorld* w, ibJointStore* st, int32_t ji, const ibBasicType* type, ibVec3 la, ibVec3 lb,
                      ibVec3 lx1, ibVec3 lx2)
{
	ibJoint* j = &st->joints[ji];
	const ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	const ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	ibBasic* c = &st->basics[st->basicCount];
	memset(c, 0, sizeof *c);
	c->type = type;
	c->joint = ji;
	c->b1 = j->def.bodyA.index1 - 1;
	c->b2 = j->def.bodyB.index1 - 1;
	c->la = ib_user_to_principal_point(A, la);
	c->lb = ib_user_to_principal_point(B, lb);
	c->lx1 = ib_user_to_principal_vector(A, ibNormalize(lx1));
	c->lx2 = ib_user_to_principal_vector(B, ibNormalize(lx2));
	c->dist = j->def.distance;
	c->alpha0 = j->def.referenceAngle;
	/* qrel0 (principal frames) = qP2^-1 (q2u^-1 q1u)(0) qP1 */
	c->qrel0 = ibQuatMul(ibQuatMul(ibQuatConj(B->qPrincipal), j->def.referenceRotation), A->qPrincipal);
	for (int k = 0; k < 3; ++k)
		c->lu1[k] = ib_user_to_principal_vector(A, k == 0 ? ibV3(1, 0, 0) : k == 1 ? ibV3(0, 1, 0) : ibV3(0, 0, 1));
	j->basic[j->basicCount++] = st->basicCount++;
}

/* The basic joints a public joint is made of (§3.2.4) and, for velocity-only rows, their DOF masks. */
static int joint_parts(const ibJointDef* d, const ibBasicType* parts[2], unsigned masks[2])
{
	static const ibBasicType* const kParts[IB_JOINT_TYPE_COUNT][2] = {
	    [IB_JOINT_BALL] = {&ib_basic_ball},
	    [IB_JOINT_LINE] = {&ib_basic_line},
	    [IB_JOINT_PLANE] = {&ib_basic_plane},
	    [IB_JOINT_ROTATION_LOCK] = {&ib_basic_rotation_lock},
	    [IB_JOINT_AXIS_ALIGN] = {&ib_basic_axis_align},
	    [IB_JOINT_DOUBLE_ROTATION] = {&ib_basic_double_rotation},
	    [IB_JOINT_HINGE] = {&ib_basic_ball, &ib_basic_axis_align},
	    [IB_JOINT_CYLINDRICAL] = {&ib_basic_line, &ib_basic_axis_align},
	    [IB_JOINT_SLIDER] = {&ib_basic_line, &ib_basic_rotation_lock},
	    [IB_JOINT_UNIVERSAL] = {&ib_basic_ball, &ib_basic_double_rotation},
	    [IB_JOINT_FIXED] = {&ib_basic_ball, &ib_basic_rotation_lock},
	};
	masks[0] = masks[1] = 0;
	if (d->type == IB_JOINT_VELOCITY) {
		int n = 0;
		if (d->linearDofs) parts[n] = &ib_basic_velocity_linear, masks[n++] = d->linearDofs;
		if (d->angularDofs) parts[n] = &ib_basic_velocity_angular, masks[n++] = d->angularDofs;
		return n;
	}
	int n = 0;
	for (int k = 0; k < 2 && kParts[d->type][k]; ++k) parts[n++] = kParts[d->type][k];
	/* distance variants (footnote 1 of §3.2.3) */
	if (d->distance > 0 && d->type == IB_JOINT_BALL) parts[0] = &ib_basic_distance;
	if (d->distance > 0 && d->type == IB_JOINT_LINE) parts[0] = &ib_basic_line_distance;
	return n;
}

/* Rebuild the flat list of basic joints (after joint creation/destruction or a body's mass frame
 * changed). Warm-start impulses of surviving joints are kept. */
bool ib_joints_rebuild_basics(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st) return true;
	if (!ib_grow(w, (void**)&st->pred, &st->predCapacity, w->bodyHigh + 1, sizeof(ibPredicted)) ||
	    !ib_grow(w, (void**)&st->predQueue, &st->predQueueCapacity, w->bodyHigh + 1, sizeof(int32_t)))
		return false;
	if (!st->basicsDirty && st->builtMassEpoch == w->massEpoch && st->builtGroupsVersion == w->solverGroupsVersion)
		return true;
	int32_t need = 0;
	for (int32_t i = 0; i < st->jointHigh; ++i)
		if (st->joints[i].inUse) need += 2;
	/* keep old warm starts by joint */
	int32_t oldCap = st->basicCapacity;
	ibBasic* old = st->basics;
	int32_t oldCount = st->basicCount;
	st->basics = NULL;
	st->basicCapacity = 0;
	if (!ib_grow(w, (void**)&st->basics, &st->basicCapacity, need + 1, sizeof(ibBasic))) {
		st->basics = old;
		st->basicCapacity = oldCap;
		return false;
	}
	/* method class of each joint's island: basics are stored class by class */
	size_t clsBytes = (size_t)st->jointHigh + 1, workBytes = (size_t)3 * (size_t)(w->bodyHigh + 1) * sizeof(int32_t);
	int8_t* cls = ib_alloc(w, clsBytes);
	int32_t* work = ib_alloc(w, workBytes);
	if (!cls || !work) {
		ib_free(w, cls, clsBytes);
		ib_free(w, work, workBytes);
		ib_free(w, st->basics, (size_t)st->basicCapacity * sizeof(ibBasic));
		st->basics = old;
		st->basicCapacity = oldCap;
		return false;
	}
	ib_joints_island_classes(w, st, cls, work, st->classIslands);
	st->basicCount = 0;
	for (int32_t ji = 0; ji < IB_CLASS_COUNT * st->jointHigh; ++ji) {
		int32_t i = ji % st->jointHigh, pass = ji / st->jointHigh;
		if (i == 0) st->classStart[pass] = st->basicCount;
		ibJoint* j = &st->joints[i];
		if (!j->inUse || cls[i] != pass) continue;
		int32_t firstOld[2] = {j->basic[0], j->basic[1]};
		int oldN = j->basicCount;
		j->basicCount = 0;
		j->basic[0] = j->basic[1] = IB_NULL_INDEX;
		const ibJointDef* d = &j->def;
		const ibBasicType* parts[2];
		unsigned masks[2];
		int n = joint_parts(d, parts, masks);
		for (int k = 0; k < n; ++k) {
			add_basic(w, st, i, parts[k], d->localAnchorA, d->localAnchorB, d->localAxisA, d->localAxisB);
			st->basics[j->basic[k]].dofMask = masks[k];
		}
		for (int k = 0; k < j->basicCount && k < oldN; ++k) {
			if (firstOld[k] < 0 || firstOld[k] >= oldCount) continue;
			st->basics[j->basic[k]].warmPos = old[firstOld[k]].warmPos;
			st->basics[j->basic[k]].warmVel = old[firstOld[k]].warmVel;
		}
	}
	if (st->jointHigh == 0)
		for (int c = 0; c < IB_CLASS_COUNT; ++c) st->classStart[c] = 0;
	st->classStart[IB_CLASS_COUNT] = st->basicCount;
	ib_free(w, cls, clsBytes);
	ib_free(w, work, workBytes);
	ib_free(w, old, (size_t)oldCap * sizeof(ibBasic));
	if (!ib_grow(w, (void**)&st->rhs, &st->rhsCapacity, st->basicCount + 1, sizeof(ibVec3))) return false;
	st->hasVelocityOnly = false;
	for (int32_t k = 0; k < st->basicCount; ++k)
		if (st->basics[k].type->velocityOnly) st->hasVelocityOnly = true;
	st->layoutVersion++;
	st->basicsDirty = false;
	st->builtGroupsVersion = w->solverGroupsVersion;
	st->builtMassEpoch = w->massEpoch;
	return true;
}
