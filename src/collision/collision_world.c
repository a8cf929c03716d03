/* The world's collision pipeline. PLACEHOLDER: brute force over all shape pairs (phase 1 is an AABB
 * test only); to be replaced by the broadphase with a persistent pair cache. */
#include <math.h>
#include <string.h>

#include "collision/collision_world.h"

typedef struct ibCollisionWorld {
	ibContactPair* contacts;
	int32_t contactCount, contactCapacity;
} ibCollisionWorld;

static ibCollisionWorld* get_cw(ibWorld* w)
{
	if (!w->collision) {
		w->collision = ib_alloc(w, sizeof(ibCollisionWorld));
		if (w->collision) memset(w->collision, 0, sizeof(ibCollisionWorld));
	}
	return w->collision;
}

void ib_collision_destroy(ibWorld* w)
{
	ibCollisionWorld* cw = w->collision;
	if (!cw) return;
	ib_free(w, cw->contacts, (size_t)cw->contactCapacity * sizeof(ibContactPair));
	ib_free(w, cw, sizeof *cw);
	w->collision = NULL;
}

static bool pair_candidate(const ibWorld* w, int32_t i, int32_t j)
{
	const ibShape *si = &w->shapes[i], *sj = &w->shapes[j];
	if (si->body == sj->body) return false;
	const ibBody *bi = &w->bodies[si->body], *bj = &w->bodies[sj->body];
	if (!ib_is_dynamic(bi) && !ib_is_dynamic(bj)) return false;
	return ib_aabb_overlap(ib_aabb_fatten(ib_shape_world_aabb(bi, si), w->contactTolerance),
	                       ib_shape_world_aabb(bj, sj));
}

ibResult ib_collision_detect(ibWorld* w)
{
	ibCollisionWorld* cw = get_cw(w);
	if (!cw) return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
	cw->contactCount = 0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		if (!w->shapes[i].inUse) continue;
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			if (!w->shapes[j].inUse || !pair_candidate(w, i, j)) continue;
			ibManifold m;
			const ibShape *si = &w->shapes[i], *sj = &w->shapes[j];
			if (ib_shape_pair_collide(&w->bodies[si->body], si, &w->bodies[sj->body], sj, w->contactTolerance, NULL,
			                          &m, 1) == 0)
				continue;
			if (!ib_grow(w, (void**)&cw->contacts, &cw->contactCapacity, cw->contactCount + 1, sizeof(ibContactPair)))
				return ib_error(w, IB_ERR_OUT_OF_MEMORY, "out of memory in collision detection");
			cw->contacts[cw->contactCount++] = (ibContactPair){i, j, si->body, sj->body, m};
		}
	}
	return IB_OK;
}

int ib_collision_contacts(ibWorld* w, ibContactPair** out)
{
	ibCollisionWorld* cw = w->collision;
	*out = cw ? cw->contacts : NULL;
	return cw ? cw->contactCount : 0;
}

double ib_collision_max_penetration(ibWorld* w)
{
	double worst = 0.0;
	for (int32_t i = 0; i < w->shapeHigh; ++i) {
		if (!w->shapes[i].inUse) continue;
		for (int32_t j = i + 1; j < w->shapeHigh; ++j) {
			if (!w->shapes[j].inUse || !pair_candidate(w, i, j)) continue;
			const ibShape *si = &w->shapes[i], *sj = &w->shapes[j];
			ibManifold m;
			if (ib_shape_pair_collide(&w->bodies[si->body], si, &w->bodies[sj->body], sj, 0.0, NULL, &m, 1) == 0)
				continue;
			for (int k = 0; k < m.pointCount; ++k) worst = fmax(worst, -m.points[k].separation);
		}
	}
	return worst;
}
