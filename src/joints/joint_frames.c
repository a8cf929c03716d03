/* Frames shared by the joints: principal-frame local data and orthonormal projection bases. */
#include <math.h>

#include "joints/joint_internal.h"

void ib_orthonormal_basis(ibVec3 x, ibVec3* y, ibVec3* z)
{
	/* w with |x.w| != 1 (§3.2.3; the thesis' condition needs the absolute value, digest item 4) */
	*y = ibPerpendicular(x);
	*z = ibNormalize(ibCross(x, *y));
}

ibVec3 ib_user_to_principal_point(const ibBody* b, ibVec3 p) { return ibInvRotate(b->qPrincipal, ibSub(p, b->localCom)); }

ibVec3 ib_user_to_principal_vector(const ibBody* b, ibVec3 v) { return ibInvRotate(b->qPrincipal, v); }

ibPose ib_body_pose(const ibBody* b) { return (ibPose){b->st.s, b->st.q, b->R}; }
