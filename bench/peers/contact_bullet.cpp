// Bullet peer of bench_contacts: btDiscreteDynamicsWorld with the sequential-impulse solver.
#include "contact_peers.h"
#include "contact_peer_internal.h"

#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <vector>

struct BulletContact {
	btDefaultCollisionConfiguration config;
	btCollisionDispatcher dispatcher{&config};
	btDbvtBroadphase broadphase;
	btSequentialImpulseConstraintSolver solver;
	btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
	std::vector<btCollisionShape*> shapes;
	std::vector<btRigidBody*> bodies; // bodies[0] = ground
	std::vector<btDefaultMotionState*> states;
	double h = 0.0;
	~BulletContact()
	{
		for (btRigidBody* b : bodies) {
			world.removeRigidBody(b);
			delete b;
		}
		for (btDefaultMotionState* m : states) delete m;
		for (btCollisionShape* c : shapes) delete c;
	}
};

static btRigidBody* addBox(BulletContact* w, const double* c, const double* q, const double* e, double mass, double mu, int sleep)
{
	btCollisionShape* shape = new btBoxShape(btVector3(e[0], e[1], e[2]));
	w->shapes.push_back(shape);
	btVector3 inertia(0, 0, 0);
	if (mass > 0) shape->calculateLocalInertia(mass, inertia);
	btTransform t;
	t.setIdentity();
	t.setOrigin(btVector3(c[0], c[1], c[2]));
	t.setRotation(btQuaternion(q[1], q[2], q[3], q[0]));
	btDefaultMotionState* ms = new btDefaultMotionState(t);
	w->states.push_back(ms);
	btRigidBody::btRigidBodyConstructionInfo info(mass, ms, shape, inertia);
	info.m_friction = mu;
	info.m_restitution = 0.0;
	btRigidBody* b = new btRigidBody(info);
	if (!sleep && mass > 0) b->setActivationState(DISABLE_DEACTIVATION);
	w->world.addRigidBody(b);
	w->bodies.push_back(b);
	return b;
}

extern "C" ContactPeer* contact_bullet_create(const ContactScene* s)
{
	ContactPeer* p = new ContactPeer();
	BulletContact* w = new BulletContact();
	p->bullet = w;
	p->n = s->n;
	w->h = s->h;
	w->world.setGravity(btVector3(0, 0, -9.81));
	w->world.getSolverInfo().m_numIterations = 10;
	const double id[4] = {1, 0, 0, 0};
	// friction of a pair = product of the two bodies' frictions in Bullet: sqrt(mu) each
	double muBody = std::sqrt(s->mu);
	addBox(w, s->groundCenter, id, s->groundHalf, 0.0, muBody, s->sleep);
	for (int i = 0; i < s->n; ++i) addBox(w, &s->pos[3 * i], &s->quat[4 * i], &s->half[3 * i], s->mass[i], muBody, s->sleep);
	return p;
}

void contact_bullet_step(ContactPeer* p) { p->bullet->world.stepSimulation(p->bullet->h, 1, p->bullet->h); }

void contact_bullet_get(ContactPeer* p, double* pos, double* quat)
{
	for (int i = 0; i < p->n; ++i) {
		const btTransform& t = p->bullet->bodies[(size_t)i + 1]->getWorldTransform();
		btQuaternion q = t.getRotation();
		pos[3 * i] = t.getOrigin().x();
		pos[3 * i + 1] = t.getOrigin().y();
		pos[3 * i + 2] = t.getOrigin().z();
		quat[4 * i] = q.w();
		quat[4 * i + 1] = q.x();
		quat[4 * i + 2] = q.y();
		quat[4 * i + 3] = q.z();
	}
}

void contact_bullet_destroy(ContactPeer* p)
{
	delete p->bullet;
	delete p;
}
