/* Mouse dragging (§3.2.6): a kinematic helper body at the grab point, joined to the grabbed body by
 * a velocity-only joint on the three translational DOFs (digest item 14: the helper is kinematic). */
#include "joints/joint_internal.h"

ibJointId ibWorld_BeginDrag(ibBodyId body, ibVec3 p)
{
	ibWorld* w;
	ibBody* b = ib_body_get(body, &w);
	if (!b) return IB_NULL_JOINT;
	if (!ibVec3_IsFinite(p)) {
		ib_error(w, IB_ERR_INVALID_ARGUMENT, "drag point must be finite");
		return IB_NULL_JOINT;
	}
	if (!ib_is_dynamic(b)) {
		ib_error(w, IB_ERR_WRONG_BODY_TYPE, "only dynamic bodies can be dragged");
		return IB_NULL_JOINT;
	}
	ibWorldId wid = {(uint16_t)(w->slot + 1), w->generation};
	ibBodyDef hd = ibDefaultBodyDef();
	hd.type = IB_BODY_KINEMATIC;
	hd.position = p;
	ibBodyId helper = ibCreateBody(wid, &hd);
	if (!ibBody_IsValid(helper)) return IB_NULL_JOINT;
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_VELOCITY);
	jd.bodyA = body;
	jd.bodyB = helper;
	jd.linearDofs = IB_DOF_X | IB_DOF_Y | IB_DOF_Z;
	ibJointDef_SetWorldAnchors(&jd, p, p);
	ibJointId j = ibCreateJoint(wid, &jd);
	if (!ibJoint_IsValid(j)) {
		ibDestroyBody(helper);
		return IB_NULL_JOINT;
	}
	w->joints->joints[j.index1 - 1].dragHelper = helper.index1 - 1;
	return j;
}

ibResult ibWorld_UpdateDrag(ibJointId id, ibVec3 target, double h)
{
	ibWorld* w;
	ibJoint* j = ib_joint_get(id, &w);
	if (!j) return IB_ERR_STALE_HANDLE;
	if (j->dragHelper < 0) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint is not a drag joint");
	if (!ibVec3_IsFinite(target) || !(h > 0.0)) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "bad drag target or step");
	ibBodyId helper = j->def.bodyB;
	ibVec3 cur = ibBody_GetPosition(helper);
	return ibBody_SetLinearVelocity(helper, ibScale(1.0 / h, ibSub(target, cur)));
}

ibResult ibWorld_EndDrag(ibJointId id)
{
	ibWorld* w;
	ibJoint* j = ib_joint_get(id, &w);
	if (!j) return IB_ERR_STALE_HANDLE;
	if (j->dragHelper < 0) return ib_error(w, IB_ERR_INVALID_ARGUMENT, "joint is not a drag joint");
	return ibDestroyBody(j->def.bodyB); /* also destroys the joint */
}
