/* The cloth-on-a-swinging-bar scene shared by test_soft_cloth_bar.c and bench/bench_soft.c:
 * an n x n cloth hangs from a rigid bar by two rigid–soft triangle joints (attachment points
 * delta = 1 cm in front of the cloth); the bar is hinged at its centre to the ground (axis z) and
 * swung by a velocity servo motor following a triangle wave of +-2 rad/s, period 4 s. */
#ifndef IBDYN_TESTS_SOFT_BAR_SCENE_H
#define IBDYN_TESTS_SOFT_BAR_SCENE_H

#include "soft_test_util.h"

typedef struct BarScene {
	ibWorldId w;
	ibBodyId bar;
	ibJointId hinge;
	ibSoftBodyId cloth;
	ibConstraintId att[2];
	SoftGrid g;
	double schedT[41], schedV[41];
} BarScene;

static inline bool bar_scene_ex(BarScene* s, int n, ibJointSolver method, double eps, double clothTol, int clothIter,
                                double stretchCompliance, ibSoftSolver clothSolver)
{
	ibWorldDef wd = ibDefaultWorldDef();
	wd.solver.method = method;
	wd.solver.positionTolerance = eps;
	s->w = ibCreateWorld(&wd);
	ibBodyDef gd = ibDefaultBodyDef();
	ibBodyId ground = ibCreateBody(s->w, &gd);
	ibBodyDef bd = ibDefaultBodyDef();
	bd.type = IB_BODY_DYNAMIC;
	s->bar = ibCreateBody(s->w, &bd);
	ibShapeDef sd = ibDefaultShapeDef();
	sd.mass = 1.0;
	ibBox box = {{0.55, 0.02, 0.02}};
	ibCreateBoxShape(s->bar, &sd, &box);
	for (int k = 0; k <= 40; ++k) {
		s->schedT[k] = k;
		s->schedV[k] = 2.0 * ((k % 4 == 1) - (k % 4 == 3));
	}
	ibJointDef jd = ibDefaultJointDef(IB_JOINT_HINGE);
	jd.bodyA = ground;
	jd.bodyB = s->bar;
	ibJointDef_SetWorldFrame(&jd, IB_VEC3_ZERO, ibV3(0, 0, 1));
	jd.motor.mode = IB_MOTOR_VELOCITY;
	jd.motor.gain = 20.0;
	jd.motor.maxForce = 200.0;
	jd.motor.scheduleTimes = s->schedT;
	jd.motor.scheduleValues = s->schedV;
	jd.motor.scheduleCount = 41;
	s->hinge = ibCreateJoint(s->w, &jd);
	s->g = soft_grid(n, 1.0, ibV3(-0.5, 0, 0), ibV3(1, 0, 0), ibV3(0, 0, -1));
	/* columns sag by up to 5 cm so that the top edge between the attachments has slack (a straight,
	 * inextensible edge between two held points could not carry its own weight) */
	for (int j = 0; j <= n; ++j)
		for (int i = 0; i <= n; ++i) s->g.v[j * (n + 1) + i].z -= 0.05 * sin(3.14159265358979 * i / n);
	ibSoftBodyDef cd = ibDefaultSoftBodyDef();
	cd.vertices = s->g.v;
	cd.vertexCount = s->g.nv;
	cd.triangles = s->g.t;
	cd.triangleCount = s->g.nt;
	cd.density = 0.2;
	cd.stretchCompliance = stretchCompliance;
	cd.bending = IB_SOFT_BENDING_DIHEDRAL;
	cd.bendingCompliance = 1.0;
	cd.linearDamping = 0.1;
	cd.positionTolerance = clothTol;
	cd.maxIterations = clothIter;
	cd.solver = clothSolver;
	s->cloth = ibCreateSoftBody(s->w, &cd);
	double c = 1.0 / n;
	for (int k = 0; k < 2; ++k) {
		ibSoftJointDef sj = ibDefaultSoftJointDef();
		sj.body = s->bar;
		sj.soft = s->cloth;
		sj.triangle = k == 0 ? 0 : 2 * (n - 1);
		sj.worldPoint = ibV3(k == 0 ? -0.5 + 0.6 * c : 0.5 - 0.4 * c, 0.01, -0.2 * c);
		s->att[k] = ibCreateSoftJoint(s->w, &sj);
	}
	return ibJoint_IsValid(s->hinge) && ibSoftBody_IsValid(s->cloth) && ibConstraint_IsValid(s->att[0]) &&
	       ibConstraint_IsValid(s->att[1]);
}

static inline bool bar_scene(BarScene* s, int n, ibJointSolver method, double eps, double clothTol, int clothIter,
                             double stretchCompliance)
{
	return bar_scene_ex(s, n, method, eps, clothTol, clothIter, stretchCompliance, IB_SOFT_SOLVER_GAUSS_SEIDEL);
}

static inline void bar_scene_free(BarScene* s)
{
	soft_grid_free(&s->g);
	ibDestroyWorld(s->w);
}

#endif
