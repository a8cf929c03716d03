/* Force modules (§6.2.1): evaluated once at the start of a step and held constant during it.
 * Order: gravity, user forces/torques, linear and angular damping. Springs and servo motors add
 * their contributions in ib_joints_before_step, which runs before this. */
#include "dynamics/world.h"

void ib_apply_force_modules(ibWorld* w, double h)
{
	(void)h;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		ibBody* b = &w->bodies[i];
		if (!b->inUse || !ib_is_dynamic(b)) continue;
		ibVec3 f = ibAdd(b->fext, ibScale(b->mass * b->gravityScale, w->gravity));
		f = ibAdd(f, b->userForce);
		ibVec3 t = ibAdd(b->text, b->userTorque);
		if (b->linearDamping > 0.0) f = ibMulAdd(f, -b->linearDamping * b->mass, b->st.v);
		if (b->angularDamping > 0.0) {
			ibVec3 wl = ibMat3_MulTV(b->R, b->st.w);
			t = ibMulAdd(t, -b->angularDamping, ibMat3_MulV(b->R, ibMulCW(b->inertiaP, wl)));
		}
		b->fext = f;
		b->text = t;
	}
	ib_soft_apply_forces(w);
}
