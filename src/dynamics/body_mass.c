/* Body frames and mass properties. The user gives pose, shapes and anchors in the user body frame;
 * internally a dynamic body lives in its principal frame: origin at the centre of mass, axes along
 * the principal axes, so J_l is diagonal (§3.1.1). x_user = localCom + qPrincipal x_principal. */
#include <math.h>

#include "dynamics/world.h"
#include "math/quat_inline.h"

void ib_body_update_derived(ibBody* b)
{
	ib_mat3_from_quat(b->st.q, &b->R);
	ib_body_update_inertia(b);
}

void ib_body_update_inertia(ibBody* b)
{
	if (ib_is_dynamic(b))
		b->invInertiaW = ibMat3_RotateDiag(b->R, b->invInertiaP);
	else
		b->invInertiaW = ibMat3_Zero();
}

ibQuat ib_body_user_rotation(const ibBody* b)
{
	return b->userPoseExact ? b->userRot : ibQuatMul(b->st.q, ibQuatConj(b->qPrincipal));
}

ibVec3 ib_body_user_position(const ibBody* b)
{
	return b->userPoseExact ? b->userPos : ibSub(b->st.s, ibRotate(ib_body_user_rotation(b), b->localCom));
}

ibResult ib_check_mass_data(ibWorld* w, const ibMassData* md)
{
	if (!(isfinite(md->mass) && md->mass > 0.0))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "mass must be finite and > 0 (got %g)", md->mass);
	if (!ibVec3_IsFinite(md->center) || !ibMat3_IsFinite(md->inertia))
		return ib_error(w, IB_ERR_INVALID_ARGUMENT, "centre of mass and inertia must be finite");
	const double(*I)[3] = md->inertia.m;
	double asym = fabs(I[0][1] - I[1][0]) + fabs(I[0][2] - I[2][0]) + fabs(I[1][2] - I[2][1]);
	double scale = fabs(I[0][0]) + fabs(I[1][1]) + fabs(I[2][2]);
	if (asym > 1e-9 * scale) return ib_error(w, IB_ERR_DEGENERATE, "inertia tensor is not symmetric");
	ibVec3 ev;
	ibMat3 V;
	ibMat3_EigenSym(md->inertia, &ev, &V);
	if (!(ev.x > 1e-12 * scale)) return ib_error(w, IB_ERR_DEGENERATE, "inertia tensor is not positive definite");
	/* Triangle inequality of principal moments (any real mass distribution satisfies it). */
	if (ev.x + ev.y < ev.z * (1.0 - 1e-9))
		return ib_error(w, IB_ERR_DEGENERATE, "principal moments violate the triangle inequality (%g + %g < %g)",
		                ev.x, ev.y, ev.z);
	return IB_OK;
}

/* Recompute mass, COM and principal frame from shapes (or the override) while keeping the user
 * frame's pose; the COM velocity follows the rigid motion (v + w x (s_new - s_old)). */
ibResult ib_body_update_mass(ibWorld* w, ibBody* b)
{
	ibVec3 userPos = ib_body_user_position(b);
	ibQuat userRot = ib_body_user_rotation(b);
	ibVec3 oldS = b->st.s;
	ibMassData md;
	if (!ib_is_dynamic(b)) {
		b->mass = b->invMass = 0.0;
		b->inertiaP = b->invInertiaP = IB_VEC3_ZERO;
		b->inertiaClass = (int8_t)ib_inertia_class(b->inertiaP);
		b->localCom = IB_VEC3_ZERO;
		b->qPrincipal = IB_QUAT_IDENTITY;
	} else {
		if (b->massOverride) {
			md = b->overrideData;
		} else if (b->shapeCount == 0) {
			md = (ibMassData){1.0, IB_VEC3_ZERO, ibMat3_Identity()}; /* placeholder until shapes arrive */
		} else {
			/* Pairwise accumulation: Combine is associative, so no bound on the shape count. */
			int32_t s0 = b->firstShape;
			md = w->shapes[s0].massData;
			for (int32_t s = w->shapes[s0].nextInBody; s != IB_NULL_INDEX; s = w->shapes[s].nextInBody) {
				ibMassData pair[2] = {md, w->shapes[s].massData};
				md = ibMassData_Combine(pair, 2);
			}
		}
		ibVec3 ev;
		ibMat3 V;
		ibMat3_EigenSym(md.inertia, &ev, &V);
		if (!(md.mass > 0.0) || !(ev.x > 0.0)) return ib_error(w, IB_ERR_DEGENERATE, "degenerate mass properties");
		b->mass = md.mass;
		b->invMass = 1.0 / md.mass;
		b->inertiaP = ev;
		b->inertiaClass = (int8_t)ib_inertia_class(ev);
		b->invInertiaP = ibV3(1.0 / ev.x, 1.0 / ev.y, 1.0 / ev.z);
		b->localCom = md.center;
		b->qPrincipal = ibQuatNormalize(ibQuat_FromMat3(V));
	}
	b->st.q = ibQuatNormalize(ibQuatMul(userRot, b->qPrincipal));
	b->st.s = ibAdd(userPos, ibRotate(userRot, b->localCom));
	b->st.v = ibAdd(b->st.v, ibCross(b->st.w, ibSub(b->st.s, oldS)));
	b->userPos = userPos;
	b->userRot = userRot;
	b->userPoseExact = true;
	b->substepHint = 0.0;
	ib_body_update_derived(b);
	w->poseEpoch++;
	w->massEpoch++;
	return IB_OK;
}
