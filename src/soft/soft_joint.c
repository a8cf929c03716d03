/* Public constraints on particles and rigid bodies: the rigid–soft ball joint on a triangle (the
 * Russian article: alpha, beta, gamma and delta from the world attachment point at creation), the
 * rigid–vertex ball joint, and user Jacobian-row constraints (callback for C and J). */
#include <math.h>
#include <string.h>

#include "soft/soft_internal.h"

ibSoftJointDef ibDefaultSoftJointDef(void)
{
	ibSoftJointDef d;
	memset(&d, 0, sizeof d);
	d.type = IB_SOFT_JOINT_TRIANGLE;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

ibConstraintDef ibDefaultConstraintDef(void)
{
	ibConstraintDef d;
	memset(&d, 0, sizeof d);
	d.rows = 1;
	d.velocityCorrection = true;
	d.internalValue = IB_DEF_MAGIC;
	return d;
}

/* A free constraint slot with parts and J allocated; -1 (error recorded) on failure. */
static int32_t alloc_con(ibWorld* w, ibSoftStore* ss, int rows, int count, const ibSoftPart* parts, const char* name)
{
	int cols = 0;
	for (int k = 0; k < count; ++k) cols += parts[k].isBody ? 6 : 3;
	if (!ib_soft_ensure_scratch(w, ss, count, rows * cols)) goto oom;
	int32_t i = ss->conFree;
	if (i == IB_NULL_INDEX) {
		if (!ib_grow(w, (void**)&ss->cons, &ss->conCapacity, ss->conHigh + 1, sizeof(ibSoftCon))) goto oom;
		i = ss->conHigh;
		memset(&ss->cons[i], 0, sizeof(ibSoftCon));
	}
	ibSoftPart* p = ib_alloc(w, sizeof(ibSoftPart) * (size_t)count);
	double* J = ib_alloc(w, sizeof(double) * (size_t)(rows * cols));
	char* nm = ib_strdup(w, name);
	if (!p || !J || (name && *name && !nm)) {
		ib_free(w, p, sizeof(ibSoftPart) * (size_t)count);
		ib_free(w, J, sizeof(double) * (size_t)(rows * cols));
		ib_strfree(w, nm);
		goto oom;
	}
	if (i == ss->conHigh)
		ss->conHigh++;
	else
		ss->conFree = ss->cons[i].nextFree;
	ibSoftCon* c = &ss->cons[i];
	uint16_t gen = (uint16_t)(c->generation + 1u);
	memset(c, 0, sizeof *c);
	c->inUse = true;
	c->generation = gen ? gen : 1;
	c->nextFree = IB_NULL_INDEX;
	c->rows = rows;
	c->count = count;
	c->cols = cols;
	c->parts = p;
	memcpy(p, parts, sizeof(ibSoftPart) * (size_t)count);
	c->J = J;
	c->name = nm;
	c->velocity = true;
	ss->conCount++;
	ss->layout++;
	w->poseEpoch++;
	return i;
oom:
	ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating constraint");
	return -1;
}

static ibConstraintId con_id(const ibWorld* w, int32_t i)
{
	return (ibConstraintId){i + 1, w->slot, w->soft->cons[i].generation};
}

/* user-frame coordinates of a world point of body b */
static ibVec3 user_local(const ibBody* b, ibVec3 p)
{
	return ibAdd(b->localCom, ibRotate(b->qPrincipal, ibMat3_MulTV(b->R, ibSub(p, b->st.s))));
}

ibConstraintId ibCreateSoftJoint(ibWorldId worldId, const ibSoftJointDef* d)
{
	ibWorld* w = ib_world_get(worldId);
	if (!w) return IB_NULL_CONSTRAINT;
	if (!d || d->internalValue != IB_DEF_MAGIC) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint definition NULL or not initialised with ibDefaultSoftJointDef()");
		return IB_NULL_CONSTRAINT;
	}
	ibWorld* wb;
	ibBody* b = ib_body_get(d->body, &wb);
	if (!b || wb != w) {
		ib_error(w, IB_ERR_STALE_HANDLE, "soft joint: invalid rigid body");
		return IB_NULL_CONSTRAINT;
	}
	ibWorld* ws;
	ibSoftBody* s = ib_soft_get(d->soft, &ws);
	if (!s || ws != w) {
		ib_error(w, IB_ERR_STALE_HANDLE, "soft joint: invalid soft body");
		return IB_NULL_CONSTRAINT;
	}
	ibSoftStore* ss = w->soft;
	if (d->useCoordinates && (!ibVec3_IsFinite(d->localAnchor) || !isfinite(d->coordinates[0]) ||
	                          !isfinite(d->coordinates[1]) || !isfinite(d->coordinates[2]) || !isfinite(d->coordinates[3]))) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint: coordinates and local anchor must be finite");
		return IB_NULL_CONSTRAINT;
	}
	if (!ibVec3_IsFinite(d->worldPoint)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint: world point must be finite");
		return IB_NULL_CONSTRAINT;
	}
	int32_t bi = d->body.index1 - 1;
	if (d->type == IB_SOFT_JOINT_VERTEX) {
		if (d->vertex < 0 || d->vertex >= s->count) {
			ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint: vertex %d out of range [0, %d)", d->vertex, (int)s->count);
			return IB_NULL_CONSTRAINT;
		}
		ibSoftPart parts[2] = {{s->first + d->vertex, 0}, {bi, 1}};
		ibVec3 p = d->useWorldPoint ? d->worldPoint : ss->particles[s->first + d->vertex].x;
		int32_t i = alloc_con(w, ss, 3, 2, parts, d->name);
		if (i < 0) return IB_NULL_CONSTRAINT;
		ss->cons[i].kind = IB_CON_VERTEX;
		ss->cons[i].localUser = d->useCoordinates ? d->localAnchor : user_local(b, p);
		ss->cons[i].softIndex = d->soft.index1 - 1;
		ss->cons[i].element = d->vertex;
		return con_id(w, i);
	}
	if (d->type != IB_SOFT_JOINT_TRIANGLE) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint: unknown type %d", (int)d->type);
		return IB_NULL_CONSTRAINT;
	}
	if (d->triangle < 0 || d->triangle >= s->triCount) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "soft joint: triangle %d out of range [0, %d)", d->triangle, s->triCount);
		return IB_NULL_CONSTRAINT;
	}
	const int* t = s->tris + 3 * d->triangle;
	ibVec3 A = ss->particles[s->first + t[0]].x, B = ss->particles[s->first + t[1]].x, C = ss->particles[s->first + t[2]].x;
	ibVec3 n = ibCross(ibSub(B, A), ibSub(C, A));
	double ln = ibLength(n);
	double scale = fmax(ibLengthSq(ibSub(B, A)), ibLengthSq(ibSub(C, A)));
	if (!(ln > 1e-12 * scale) || !(ln > 0.0)) {
		ib_error(w, IB_ERR_DEGENERATE, "soft joint: triangle %d is degenerate", d->triangle);
		return IB_NULL_CONSTRAINT;
	}
	ibVec3 nh = ibScale(1.0 / ln, n);
	ibVec3 p = d->worldPoint;
	double delta = ibDot(ibSub(p, A), nh);
	ibVec3 q = ibMulAdd(p, -delta, nh); /* projection onto the triangle's plane */
	double al = ibDot(nh, ibCross(ibSub(C, B), ibSub(q, B))) / ln;
	double be = ibDot(nh, ibCross(ibSub(A, C), ibSub(q, C))) / ln;
	ibSoftPart parts[4] = {{s->first + t[0], 0}, {s->first + t[1], 0}, {s->first + t[2], 0}, {bi, 1}};
	int32_t i = alloc_con(w, ss, 3, 4, parts, d->name);
	if (i < 0) return IB_NULL_CONSTRAINT;
	ibSoftCon* c = &ss->cons[i];
	c->kind = IB_CON_TRIANGLE;
	c->bary[0] = al;
	c->bary[1] = be;
	c->bary[2] = 1.0 - al - be;
	c->bary[3] = delta;
	c->localUser = user_local(b, p);
	if (d->useCoordinates) {
		memcpy(c->bary, d->coordinates, sizeof c->bary);
		c->localUser = d->localAnchor;
	}
	c->softIndex = d->soft.index1 - 1;
	c->element = d->triangle;
	return con_id(w, i);
}

ibConstraintId ibCreateConstraint(ibWorldId worldId, const ibConstraintDef* d)
{
	ibWorld* w = ib_world_get(worldId);
	if (!w) return IB_NULL_CONSTRAINT;
	if (!d || d->internalValue != IB_DEF_MAGIC) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "constraint definition NULL or not initialised with ibDefaultConstraintDef()");
		return IB_NULL_CONSTRAINT;
	}
	if (d->rows < 1 || d->rows > IB_CONSTRAINT_MAX_ROWS || !d->fn || d->participantCount < 1 || !d->participants ||
	    !(isfinite(d->compliance) && d->compliance >= 0.0)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "constraint needs 1..%d rows, a callback, >= 1 participant, compliance >= 0",
		         IB_CONSTRAINT_MAX_ROWS);
		return IB_NULL_CONSTRAINT;
	}
	ibSoftStore* ss = ib_soft_store(w, true);
	size_t bytes = sizeof(ibSoftPart) * (size_t)d->participantCount;
	ibSoftPart* parts = ib_alloc(w, bytes);
	if (!ss || !parts) {
		ib_free(w, parts, bytes);
		ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory creating constraint");
		return IB_NULL_CONSTRAINT;
	}
	for (int k = 0; k < d->participantCount; ++k) {
		const ibConstraintParticipant* q = &d->participants[k];
		ibWorld* o = NULL;
		if (!IB_IS_NULL(q->body)) {
			if (!ib_body_get(q->body, &o) || o != w) goto bad;
			parts[k] = (ibSoftPart){q->body.index1 - 1, 1};
		} else {
			ibSoftBody* s = ib_soft_get(q->soft, &o);
			if (!s || o != w || q->particle < 0 || q->particle >= s->count) goto bad;
			parts[k] = (ibSoftPart){s->first + q->particle, 0};
		}
	}
	int32_t i = alloc_con(w, ss, d->rows, d->participantCount, parts, d->name);
	ib_free(w, parts, bytes);
	if (i < 0) return IB_NULL_CONSTRAINT;
	ibSoftCon* c = &ss->cons[i];
	c->kind = IB_CON_USER;
	c->fn = d->fn;
	c->userData = d->userData;
	c->compliance = d->compliance;
	c->velocity = d->velocityCorrection;
	return con_id(w, i);
bad:
	ib_free(w, parts, bytes);
	ib_error(w, IB_ERR_STALE_HANDLE, "constraint participant is not a live body or particle of this world");
	return IB_NULL_CONSTRAINT;
}

ibResult ibDestroyConstraint(ibConstraintId id)
{
	ibWorld* w;
	if (!ib_soft_con_get(id, &w)) return IB_ERR_STALE_HANDLE;
	ib_soft_con_free(w, w->soft, id.index1 - 1);
	return IB_OK;
}

bool ibConstraint_IsValid(ibConstraintId id)
{
	ibWorld* w = ib_world_from_slot(id.world0);
	ibSoftStore* ss = w ? w->soft : NULL;
	if (!ss || id.index1 <= 0 || id.index1 > ss->conHigh) return false;
	return ss->cons[id.index1 - 1].inUse && ss->cons[id.index1 - 1].generation == id.generation;
}

double ibConstraint_GetError(ibConstraintId id)
{
	ibSoftCon* c = ib_soft_con_get(id, NULL);
	return c ? c->err : 0.0;
}

int ibConstraint_GetRows(ibConstraintId id)
{
	ibSoftCon* c = ib_soft_con_get(id, NULL);
	return c ? c->rows : 0;
}

int ibConstraint_GetColumns(ibConstraintId id)
{
	ibSoftCon* c = ib_soft_con_get(id, NULL);
	return c ? c->cols : 0;
}

ibResult ibConstraint_Evaluate(ibConstraintId id, double* C, double* J)
{
	ibWorld* w;
	ibSoftCon* c = ib_soft_con_get(id, &w);
	if (!c) return IB_ERR_STALE_HANDLE;
	if (!C) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "C is NULL");
	ibSoftView v = ib_soft_con_view(c);
	double* Jt = w->soft->scratchJ;
	ib_soft_view_eval(w, w->soft, &v, ib_soft_gather(w, w->soft, &v, false, 0.0), C, J ? Jt : NULL);
	if (J) memcpy(J, Jt, sizeof(double) * (size_t)(c->rows * c->cols));
	return IB_OK;
}

ibResult ibConstraint_GetTriangleCoordinates(ibConstraintId id, double* al, double* be, double* ga, double* de)
{
	ibWorld* w;
	ibSoftCon* c = ib_soft_con_get(id, &w);
	if (!c) return IB_ERR_STALE_HANDLE;
	if (c->kind != IB_CON_TRIANGLE) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "not a triangle joint");
	if (al) *al = c->bary[0];
	if (be) *be = c->bary[1];
	if (ga) *ga = c->bary[2];
	if (de) *de = c->bary[3];
	return IB_OK;
}

ibResult ibConstraint_GetImpulse(ibConstraintId id, double* impulse)
{
	ibWorld* w;
	ibSoftCon* c = ib_soft_con_get(id, &w);
	if (!c) return IB_ERR_STALE_HANDLE;
	if (!impulse) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "impulse is NULL");
	for (int r = 0; r < c->rows; ++r) impulse[r] = c->warm[r] + c->warmVel[r];
	return IB_OK;
}

ibResult ibSoftJoint_GetDef(ibConstraintId id, ibSoftJointDef* out)
{
	ibWorld* w;
	ibSoftCon* c = ib_soft_con_get(id, &w);
	if (!c) return IB_ERR_STALE_HANDLE;
	if (!out) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "out is NULL");
	if (c->kind == IB_CON_USER) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "a user constraint is not a soft joint");
	const ibSoftStore* ss = w->soft;
	ibSoftJointDef d = ibDefaultSoftJointDef();
	d.type = c->kind == IB_CON_TRIANGLE ? IB_SOFT_JOINT_TRIANGLE : IB_SOFT_JOINT_VERTEX;
	d.body = ib_body_id(w, c->parts[c->count - 1].index);
	d.soft = (ibSoftBodyId){c->softIndex + 1, w->slot, ss->softs[c->softIndex].generation};
	if (c->kind == IB_CON_TRIANGLE)
		d.triangle = c->element;
	else
		d.vertex = c->element;
	d.useCoordinates = true;
	memcpy(d.coordinates, c->bary, sizeof d.coordinates);
	d.localAnchor = c->localUser;
	d.name = c->name;
	*out = d;
	return IB_OK;
}

int ibWorld_GetConstraints(ibWorldId world, ibConstraintId* out, int capacity)
{
	ibWorld* w = ib_world_get(world);
	if (!w || !w->soft) return 0;
	int n = 0;
	for (int32_t i = 0; i < w->soft->conHigh; ++i) {
		if (!w->soft->cons[i].inUse) continue;
		if (out && n < capacity) out[n] = (ibConstraintId){i + 1, w->slot, w->soft->cons[i].generation};
		++n;
	}
	return n;
}
