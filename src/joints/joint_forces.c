/* Joint force modules run at the start of a step (§6.2.1): external forces are reset, then
 * springs (§3.2.7) and servo motors (§3.2.5) add forces held constant during the step. */
#include "joints/joint_internal.h"

ibResult ib_joints_before_step(ibWorld* w, double h)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		w->bodies[i].fext = IB_VEC3_ZERO;
		w->bodies[i].text = IB_VEC3_ZERO;
	}
	ibJointStore* st = w->joints;
	if (!st) return IB_OK;
	st->limitPhase = 0; /* limit rows act from this step's joint correction on */
	for (int32_t i = 0; i < st->jointHigh; ++i) {
		ibJoint* j = &st->joints[i];
		if (!j->inUse) continue;
		if (j->def.type == IB_JOINT_SPRING) ib_spring_apply(w, j);
		if (j->def.type == IB_JOINT_HINGE || j->def.type == IB_JOINT_SLIDER) ib_motor_apply(w, j, h);
	}
	return IB_OK;
}

double ib_joints_spring_energy(ibWorld* w)
{
	ibJointStore* st = w->joints;
	double e = 0.0;
	if (!st) return e;
	for (int32_t i = 0; i < st->jointHigh; ++i)
		if (st->joints[i].inUse && st->joints[i].def.type == IB_JOINT_SPRING) e += ib_spring_energy(w, &st->joints[i]);
	return e;
}

int32_t ib_joints_warm_count(ibWorld* w)
{
	/* the basic list must be current before a snapshot is sized and taken */
	if (!w->joints || !ib_joints_rebuild_basics(w)) return 0;
	return 2 * w->joints->basicCount;
}

void ib_joints_warm_save(ibWorld* w, ibVec3* out)
{
	ibJointStore* st = w->joints;
	if (!st) return;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		out[2 * k] = st->basics[k].warmPos;
		out[2 * k + 1] = st->basics[k].warmVel;
	}
}

void ib_joints_warm_restore(ibWorld* w, const ibVec3* in, double scale)
{
	ibJointStore* st = w->joints;
	if (!st) return;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		st->basics[k].warmPos = ibScale(scale, in[2 * k]);
		st->basics[k].warmVel = ibScale(scale, in[2 * k + 1]);
	}
}
