/* Method per independent system of joints (§6.2.1): the world default ibSolverSettings.method and
 * per-solver-group overrides. The joint graph is split into islands (bodies connected by joints;
 * static and kinematic bodies do not connect, they are the "world"); an island takes the method of
 * the lowest-numbered group with an override among its dynamic bodies, else the world default. The
 * basic joints are stored grouped by method class (joint.c), so each solver runs on one contiguous
 * range (solver_select.c). */
#include <string.h>

#include "joints/joint_internal.h"
#include "math/union_find.h"

ibResult ibWorld_SetGroupSolver(ibWorldId id, int group, ibJointSolver method)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (group < 0 || group > IB_MAX_SOLVER_GROUP)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver group must be in [0, %d] (got %d)", IB_MAX_SOLVER_GROUP, group);
	if ((unsigned)method > (unsigned)IB_SOLVER_LGS_SPARSE)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "unknown joint solver %d", (int)method);
	int32_t old = w->groupMethodCapacity;
	if (!ib_grow(w, (void**)&w->groupMethod, &w->groupMethodCapacity, group + 1, sizeof(int32_t)))
		return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory setting a group solver");
	for (int32_t g = old; g < w->groupMethodCapacity; ++g) w->groupMethod[g] = -1;
	if (w->groupMethod[group] != (int32_t)method) w->solverGroupsVersion++;
	w->groupMethod[group] = (int32_t)method;
	return IB_OK;
}

ibResult ibWorld_ClearGroupSolver(ibWorldId id, int group)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return IB_ERR_STALE_HANDLE;
	if (group < 0 || group > IB_MAX_SOLVER_GROUP)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver group must be in [0, %d] (got %d)", IB_MAX_SOLVER_GROUP, group);
	if (group < w->groupMethodCapacity && w->groupMethod[group] >= 0) {
		w->groupMethod[group] = -1;
		w->solverGroupsVersion++;
	}
	return IB_OK;
}

bool ibWorld_GetGroupSolver(ibWorldId id, int group, ibJointSolver* method)
{
	ibWorld* w = ib_world_get(id);
	if (!w || group < 0 || group >= w->groupMethodCapacity || w->groupMethod[group] < 0) return false;
	if (method) *method = (ibJointSolver)w->groupMethod[group];
	return true;
}

int ibWorld_GetMaxOverriddenGroup(ibWorldId id)
{
	ibWorld* w = ib_world_get(id);
	if (!w) return -1;
	for (int32_t g = w->groupMethodCapacity - 1; g >= 0; --g)
		if (w->groupMethod[g] >= 0) return g;
	return -1;
}

ibResult ibBody_SetSolverGroup(ibBodyId id, int group)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	if (!b) return IB_ERR_STALE_HANDLE;
	if (group < 0 || group > IB_MAX_SOLVER_GROUP)
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "solver group must be in [0, %d] (got %d)", IB_MAX_SOLVER_GROUP, group);
	if (b->solverGroup != group) w->solverGroupsVersion++;
	b->solverGroup = group;
	return IB_OK;
}

int ibBody_GetSolverGroup(ibBodyId id)
{
	ibWorld* w;
	ibBody* b = ib_body_get(id, &w);
	return b ? b->solverGroup : 0;
}


static ibSolverClass class_of(ibJointSolver m)
{
	return m == IB_SOLVER_ITERATIVE ? IB_CLASS_ITERATIVE : m == IB_SOLVER_LGS_SPARSE ? IB_CLASS_SPARSE : IB_CLASS_TREE;
}

/* Method class of every in-use joint's island into cls[joint]; islands per class into islands[].
 * work: 3 * (bodyHigh + 1) ints. */
void ib_joints_island_classes(ibWorld* w, const ibJointStore* st, int8_t* cls, int32_t* work, int islands[IB_CLASS_COUNT])
{
	int32_t nb = w->bodyHigh;
	int32_t *parent = work, *best = work + nb + 1; /* best: lowest overridden group of a root, INT32_MAX none */
	int32_t* seen = work + 2 * (nb + 1);           /* island already counted */
	for (int32_t i = 0; i <= nb; ++i) parent[i] = i;
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		const ibJoint* j = &st->joints[i];
		if (!j->inUse) continue;
		int32_t a = j->def.bodyA.index1 - 1, b = j->def.bodyB.index1 - 1;
		if (!ib_is_dynamic(&w->bodies[a]) || !ib_is_dynamic(&w->bodies[b])) continue;
		int32_t ra = ib_uf_find(parent, a), rb = ib_uf_find(parent, b);
		if (ra != rb) parent[ra] = rb;
	}
	for (int32_t i = 0; i <= nb; ++i) best[i] = INT32_MAX, seen[i] = 0;
	for (int32_t i = 0; i < nb; ++i) {
		const ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		int32_t g = b->solverGroup;
		if (g >= w->groupMethodCapacity || w->groupMethod[g] < 0) continue;
		int32_t r = ib_uf_find(parent, i);
		if (g < best[r]) best[r] = g;
	}
	for (int c = 0; c < IB_CLASS_COUNT; ++c) islands[c] = 0;
	ibSolverClass def = class_of(w->solver.method);
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		const ibJoint* j = &st->joints[i];
		if (!j->inUse) continue;
		int32_t a = j->def.bodyA.index1 - 1, b = j->def.bodyB.index1 - 1;
		int32_t bi = ib_is_dynamic(&w->bodies[a]) ? a : ib_is_dynamic(&w->bodies[b]) ? b : -1;
		if (bi < 0) {
			cls[i] = (int8_t)def;
			continue;
		}
		int32_t r = ib_uf_find(parent, bi);
		ibSolverClass c = best[r] == INT32_MAX ? def : class_of((ibJointSolver)w->groupMethod[best[r]]);
		cls[i] = (int8_t)c;
		if (!seen[r]) islands[c]++;
		seen[r] = 1;
	}
}
