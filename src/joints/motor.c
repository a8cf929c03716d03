/* Servo motors (§3.2.5): a hinge with a torque, or a slider with a force, along the joint axis,
 * from a PID controller (eq. 3.23) whose integral part sums a bounded window of past errors.
 * Measured value: hinge angle of B relative to A from the reference vectors,
 * theta = atan2((rA x rB).axis, rA.rB) (unwrapped over turns), slider position (b - a).axis.
 * The output u (clamped to +-maxForce) acts as +u on body B and -u on body A, so momentum is kept. */
#include <math.h>

#include "joints/joint_internal.h"

double ib_schedule_eval(const double* t, const double* v, int n, double time, double fallback)
{
	if (n <= 0) return fallback;
	if (time <= t[0]) return v[0];
	if (time >= t[n - 1]) return v[n - 1];
	int lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (t[mid] <= time) lo = mid;
		else hi = mid;
	}
	double s = (time - t[lo]) / (t[hi] - t[lo]);
	return v[lo] + s * (v[hi] - v[lo]);
}

static void measure(ibWorld* w, ibJoint* j, ibVec3* axisOut)
{
	ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	ibQuat qa = ib_body_user_rotation(A), qb = ib_body_user_rotation(B);
	ibVec3 axis = ibRotate(qa, j->def.localAxisA);
	*axisOut = axis;
	if (j->def.type == IB_JOINT_HINGE) {
		ibVec3 ra = ibRotate(qa, j->def.localRefA), rb = ibRotate(qb, j->def.localRefB);
		double theta = atan2(ibDot(ibCross(ra, rb), axis), ibDot(ra, rb));
		if (!j->angleInit) {
			j->unwrappedAngle = theta;
			j->angleInit = true;
		} else {
			double prev = remainder(j->unwrappedAngle, 2.0 * IB_PI);
			j->unwrappedAngle += remainder(theta - prev, 2.0 * IB_PI);
		}
		j->motorValue = j->unwrappedAngle;
		j->motorSpeed = ibDot(ibSub(B->st.w, A->st.w), axis);
	} else {
		ibVec3 a = ibAdd(ib_body_user_position(A), ibRotate(qa, j->def.localAnchorA));
		ibVec3 b = ibAdd(ib_body_user_position(B), ibRotate(qb, j->def.localAnchorB));
		j->motorValue = ibDot(ibSub(b, a), axis);
		ibVec3 ua = ibAdd(A->st.v, ibCross(A->st.w, ibSub(a, A->st.s)));
		ibVec3 ub = ibAdd(B->st.v, ibCross(B->st.w, ibSub(b, B->st.s)));
		j->motorSpeed = ibDot(ibSub(ub, ua), axis);
	}
}

void ib_motor_measure(ibWorld* w, ibJoint* j)
{
	if (j->def.type != IB_JOINT_HINGE && j->def.type != IB_JOINT_SLIDER) return;
	ibVec3 axis;
	measure(w, j, &axis);
}

void ib_motor_apply(ibWorld* w, ibJoint* j, double h)
{
	ibVec3 axis;
	measure(w, j, &axis);
	const ibMotorDef* m = &j->def.motor;
	j->motorOutput = 0.0;
	if (m->mode == IB_MOTOR_OFF) return;
	double target = ib_schedule_eval(j->schedTimes, j->schedValues, j->schedCount, w->time, m->target);
	j->motorTarget = target;
	double e = target - (m->mode == IB_MOTOR_POSITION ? j->motorValue : j->motorSpeed);
	double sum = 0.0;
	for (int i = 0; i < j->windowLen; ++i) sum += j->window[i];
	double u = e;
	if (m->resetTime > 0.0) u += h / m->resetTime * sum;
	if (j->hasPrevError) u += m->derivativeTime / h * (e - j->prevError);
	u *= m->gain;
	if (u > m->maxForce) u = m->maxForce;
	if (u < -m->maxForce) u = -m->maxForce;
	/* push e into the window of past deviations (used from the next step on) */
	j->window[j->windowHead] = e;
	j->windowHead = (j->windowHead + 1) % j->windowCap;
	if (j->windowLen < j->windowCap) j->windowLen++;
	j->prevError = e;
	j->hasPrevError = true;
	j->motorOutput = u;
	ibBody* A = &w->bodies[j->def.bodyA.index1 - 1];
	ibBody* B = &w->bodies[j->def.bodyB.index1 - 1];
	ibVec3 f = ibScale(u, axis);
	if (j->def.type == IB_JOINT_HINGE) {
		if (ib_is_dynamic(B)) B->text = ibAdd(B->text, f);
		if (ib_is_dynamic(A)) A->text = ibSub(A->text, f);
	} else { /* +f on B and -f on A, both at B's anchor: equal and opposite on one line, so no net torque */
		ibVec3 b = ibAdd(ib_body_user_position(B), ibRotate(ib_body_user_rotation(B), j->def.localAnchorB));
		if (ib_is_dynamic(B)) {
			B->fext = ibAdd(B->fext, f);
			B->text = ibAdd(B->text, ibCross(ibSub(b, B->st.s), f));
		}
		if (ib_is_dynamic(A)) {
			A->fext = ibSub(A->fext, f);
			A->text = ibSub(A->text, ibCross(ibSub(b, A->st.s), f));
		}
	}
}
