/* Damped spring between anchor a (body A) and b (body B), §3.2.7 with the digest's corrected
 * damping sign (item 6): F_A = D (|d| - l0) d/|d| + mu_F (u_b - u_a) at a, F_B = -F_A at b,
 * d = b - a; evaluated at the start of the step and held constant (footnote 3, first option). */
#include "joints/joint_internal.h"

static void anchors(ibWorld* w, const ibJoint* j, ibBody** A, ibBody** B, ibVec3* a, ibVec3* b)
{
	*A = &w->bodies[j->def.bodyA.index1 - 1];
	*B = &w->bodies[j->def.bodyB.index1 - 1];
	*a = ibAdd(ib_body_user_position(*A), ibRotate(ib_body_user_rotation(*A), j->def.localAnchorA));
	*b = ibAdd(ib_body_user_position(*B), ibRotate(ib_body_user_rotation(*B), j->def.localAnchorB));
}

void ib_spring_apply(ibWorld* w, ibJoint* j)
{
	ibBody *A, *B;
	ibVec3 a, b;
	anchors(w, j, &A, &B, &a, &b);
	ibVec3 d = ibSub(b, a);
	double l = ibLength(d);
	ibVec3 f = IB_VEC3_ZERO;
	if (l > 1e-300) f = ibScale(j->def.stiffness * (l - j->def.distance) / l, d);
	ibVec3 ua = ibAdd(A->st.v, ibCross(A->st.w, ibSub(a, A->st.s)));
	ibVec3 ub = ibAdd(B->st.v, ibCross(B->st.w, ibSub(b, B->st.s)));
	f = ibMulAdd(f, j->def.damping, ibSub(ub, ua));
	if (ib_is_dynamic(A)) {
		A->fext = ibAdd(A->fext, f);
		A->text = ibAdd(A->text, ibCross(ibSub(a, A->st.s), f));
	}
	if (ib_is_dynamic(B)) {
		B->fext = ibSub(B->fext, f);
		B->text = ibSub(B->text, ibCross(ibSub(b, B->st.s), f));
	}
	j->motorOutput = ibLength(f);
}

double ib_spring_energy(ibWorld* w, const ibJoint* j)
{
	ibBody *A, *B;
	ibVec3 a, b;
	anchors(w, j, &A, &B, &a, &b);
	double x = ibDistance(a, b) - j->def.distance;
	return 0.5 * j->def.stiffness * x * x;
}
