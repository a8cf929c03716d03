/* The soft sweeps inside the rigid contact loop (issue 7 part 3, §5.4.2 applied to particles).
 *
 * The soft rows (internal rows, rigid–soft joints, user constraints and the particle contacts) are
 * first iterated to their tolerances with the rigid joints (ib_soft_position_begin ... _end in the
 * joint solvers). The rigid contact loop runs afterwards; each of its sweeps ends with one sweep of
 * the joints (contact_joint.c) and, through these entries, one more soft sweep that continues the
 * accumulated impulses of that correction (no reset: same instant, same h, same predictions), so
 * the loop ends only when rigid contacts, joints, soft rows and particle contacts all hold — a
 * rigid body resting on particles and on rigid bodies converges all its contacts together.
 * A resumption is refused unless the correction it continues was begun at the current instant
 * (w->poseEpoch) with the same h (velocity: the same instant). */
#include "soft/soft_internal.h"

bool ib_soft_position_resume_sweep(ibWorld* w, double h)
{
	ibSoftStore* ss = w->soft;
	if (!ss || ss->depth != 0 || !ss->resumePos || ss->resumePosEpoch != w->poseEpoch || ss->resumeH != h) return false;
	if (ss->rowCount == 0 && ss->conCount == 0 && ss->contactCount == 0) return false;
	ss->depth++;
	bool corrected = ib_soft_position_sweep(w, h);
	ib_soft_position_end(w);
	return corrected;
}

bool ib_soft_velocity_resume_sweep(ibWorld* w)
{
	ibSoftStore* ss = w->soft;
	if (!ss || ss->depth != 0 || !ss->resumeVel || ss->resumeVelEpoch != w->poseEpoch) return false;
	if (ss->rowCount == 0 && ss->conCount == 0 && ss->contactCount == 0) return false;
	ss->depth++;
	bool corrected = ib_soft_velocity_sweep(w);
	ib_soft_velocity_end(w);
	return corrected;
}
