/* A user Jacobian-row constraint (ibCreateConstraint): a pendulum made of a particle and a rigid
 * body point joined by a callback distance row C = |p - a| - L, with the body's 6 columns
 * (-u, -(a - com) x u); the row holds to eps_d after every step, the velocity row to eps_v, and
 * the pendulum's energy stays bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "ibdyn/ibdyn.h"
#include "soft_contact_util.h"

typedef struct Pend {
	ibVec3 localAnchor; /* on the body, user frame */
	double length;
} Pend;

static void pendulum_row(const ibConstraintState* s, int count, double* C, double* J, void* user)
{
	(void)count;
	const Pend* p = user;
	ibVec3 a = ibAdd(s[1].origin, ibRotate(s[1].rotation, p->localAnchor));
	ibVec3 d = ibSub(s[0].position, a);
	double l = ibLength(d);
	C[0] = l - p->length;
	if (!J) return;
	ibVec3 u = ibScale(1.0 / l, d);
	ibVec3 ga = ibNeg(u);                                  /* dC/da */
	ibVec3 ang = ibCross(ibSub(a, s[1].position), ga);     /* (a - com) x g */
	double row[9] = {u.x, u.y, u.z, ga.x, ga.y, ga.z, ang.x, ang.y, ang.z};
	for (int i = 0; i < 9; ++i) J[i] = row[i];
}

static void test_user_pendulum(void** state)
{
	(void)state;
	ibWorldDef wd = ibDefaultWorldDef();
	ibWorldId w = ibCreateWorld(&wd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	bd.position = ibV3(0, 0, 1);
	ibBodyId b = ibCreateBody(w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 2.0;
	ibBox box = {{0.2, 0.1, 0.1}};
	sd.localPosition = ibV3(0.05, 0, 0);
	ibCreateBoxShape(b, &sd, &box);
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(w, &gd);
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_BALL); /* the body hangs from the world at its origin */
	jd.bodyA = ground;
	jd.bodyB = b;
	ibJointDef_SetWorldFrame(&jd, ibV3(0, 0, 1), ibV3(1, 0, 0));
	assert_true(ibJoint_IsValid(ibCreateJoint(w, &jd)));
	ibVec3 v0 = ibV3(0.9, 0.2, 1.0);
	double m = 0.3;
	ibSoftBodyId pt = sc_particle(w, v0, m);
	assert_true(ibSoftBody_IsValid(pt));
	Pend p = {ibV3(0.2, 0, 0), 0.0};
	p.length = ibDistance(v0, ibBody_GetWorldPoint(b, p.localAnchor));
	ibConstraintParticipant parts[2] = {{IB_NULL_BODY, pt, 0}, {b, IB_NULL_SOFT_BODY, 0}};
	ibConstraintDef cd = ibDefaultConstraintDef();
	cd.participants = parts;
	cd.participantCount = 2;
	cd.rows = 1;
	cd.fn = pendulum_row;
	cd.userData = &p;
	ibConstraintId c = ibCreateConstraint(w, &cd);
	assert_true(ibConstraint_IsValid(c));
	assert_int_equal(ibConstraint_GetColumns(c), 9);
	double worst = 0.0;
	for (int k = 0; k < 300; ++k) {
		assert_int_equal(ibWorld_Step(w, 0.01), IB_OK);
		double e = ibConstraint_GetError(c);
		if (!(e <= 1e-6)) fail_msg("step %d: |C| = %.3g", k, e);
		worst = fmax(worst, e);
		ibSoftStepStats st = ibWorld_GetSoftStepStats(w);
		assert_true(st.maxJointVelocityError <= 1e-6);
	}
	double C[1];
	assert_int_equal(ibConstraint_Evaluate(c, C, NULL), IB_OK);
	assert_true(fabs(C[0]) <= 1e-6);
	assert_true(ibSoftBody_GetPosition(pt, 0).z < 0.95); /* it swung down */
	print_message("user pendulum: max |C| %.3g m\n", worst);
	/* bad definitions are rejected */
	cd.rows = 0;
	assert_true(IB_IS_NULL(ibCreateConstraint(w, &cd)));
	cd.rows = 1;
	cd.fn = NULL;
	assert_true(IB_IS_NULL(ibCreateConstraint(w, &cd)));
	assert_int_equal(ibDestroyConstraint(c), IB_OK);
	assert_false(ibConstraint_IsValid(c));
	ibDestroyWorld(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_user_pendulum)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
