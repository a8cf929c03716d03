/* Placeholder joint hooks until the joints module lands. */
#include "dynamics/world.h"

void ib_joints_destroy_store(ibWorld* w) { (void)w; }
void ib_joints_on_body_destroyed(ibWorld* w, int32_t bodyIndex) { (void)w; (void)bodyIndex; }
ibResult ib_joints_before_step(ibWorld* w, double h)
{
	(void)h;
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		w->bodies[i].fext = IB_VEC3_ZERO;
		w->bodies[i].text = IB_VEC3_ZERO;
	}
	return IB_OK;
}
ibResult ib_joints_position_correction(ibWorld* w, double h) { (void)w; (void)h; return IB_OK; }
ibResult ib_joints_velocity_correction(ibWorld* w, double h) { (void)w; (void)h; return IB_OK; }
void ib_joints_measure(ibWorld* w, ibStepStats* stats) { (void)w; (void)stats; }
double ib_joints_spring_energy(ibWorld* w) { (void)w; return 0.0; }
