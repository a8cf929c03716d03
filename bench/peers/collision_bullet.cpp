// Bullet peer of the collision benchmark: btCollisionWorld with btDbvtBroadphase or btAxisSweep3 and the default
// dispatcher; one btCollisionObject (shared btBoxShape) per cube, a static btBoxShape floor.
#include "collision_peers.h"

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <btBulletCollisionCommon.h>

namespace
{

struct BulletCollider {
	btDefaultCollisionConfiguration config;
	btCollisionDispatcher dispatcher{&config};
	std::unique_ptr<btBroadphaseInterface> broadphase;
	std::unique_ptr<btCollisionWorld> world;
	std::unique_ptr<btBoxShape> cubeShape, floorShape;
	std::vector<std::unique_ptr<btCollisionObject>> objects; // cubes, then the floor
	int count = 0;

	~BulletCollider()
	{
		if (world)
			for (auto& o : objects) world->removeCollisionObject(o.get());
	}
};

void bullet_set_poses(void* impl, const double* pos, const double* quat)
{
	auto* b = static_cast<BulletCollider*>(impl);
	for (int i = 0; i < b->count; ++i) {
		const double* p = &pos[3 * i];
		const double* q = &quat[4 * i];
		const btQuaternion rot(static_cast<btScalar>(q[1]), static_cast<btScalar>(q[2]), static_cast<btScalar>(q[3]),
		                       static_cast<btScalar>(q[0]));
		const btVector3 origin(static_cast<btScalar>(p[0]), static_cast<btScalar>(p[1]), static_cast<btScalar>(p[2]));
		b->objects[size_t(i)]->setWorldTransform(btTransform(rot, origin));
	}
}

int bullet_detect(void* impl)
{
	static_cast<BulletCollider*>(impl)->world->performDiscreteCollisionDetection();
	return 0;
}

int bullet_pairs(void* impl, BenchPair* out, int capacity)
{
	auto* b = static_cast<BulletCollider*>(impl);
	int total = 0;
	const int manifolds = b->dispatcher.getNumManifolds();
	for (int k = 0; k < manifolds; ++k) {
		const btPersistentManifold* m = b->dispatcher.getManifoldByIndexInternal(k);
		const int points = m->getNumContacts();
		if (points <= 0) continue;
		const int a = m->getBody0()->getUserIndex(), c = m->getBody1()->getUserIndex();
		if (total < capacity) out[total] = BenchPair{a < c ? a : c, a < c ? c : a, points};
		++total;
	}
	return total;
}

void bullet_destroy(void* impl) { delete static_cast<BulletCollider*>(impl); }

} // namespace

extern "C" int bench_bullet_collider(BenchCollider* c, const BenchCubes* s, int sweep)
{
	std::memset(c, 0, sizeof *c);
	auto* b = new (std::nothrow) BulletCollider();
	if (!b) return -1;
	b->count = s->count;
	if (sweep && s->count > 30000) {
		delete b;
		return -1; // btAxisSweep3 has 16-bit handles
	}
	if (sweep) {
		double top = 0.0;
		for (int i = 0; i < s->count; ++i)
			if (s->start[3 * i + 2] > top) top = s->start[3 * i + 2];
		btVector3 lo(btScalar(-s->floorHalf[0] - 1.0), btScalar(-s->floorHalf[1] - 1.0),
		             btScalar(-2.0 * s->floorHalf[2] - 1.0));
		btVector3 hi(btScalar(s->floorHalf[0] + 1.0), btScalar(s->floorHalf[1] + 1.0), btScalar(top + 5.0));
		b->broadphase = std::make_unique<btAxisSweep3>(lo, hi, static_cast<unsigned short>(s->count + 8));
	} else {
		b->broadphase = std::make_unique<btDbvtBroadphase>();
	}
	b->world = std::make_unique<btCollisionWorld>(&b->dispatcher, b->broadphase.get(), &b->config);
	btScalar h = btScalar(s->half);
	b->cubeShape = std::make_unique<btBoxShape>(btVector3(h, h, h));
	b->floorShape = std::make_unique<btBoxShape>(
	    btVector3(btScalar(s->floorHalf[0]), btScalar(s->floorHalf[1]), btScalar(s->floorHalf[2])));
	b->objects.reserve(size_t(s->count) + 1);
	for (int i = 0; i <= s->count; ++i) {
		auto o = std::make_unique<btCollisionObject>();
		o->setUserIndex(i);
		if (i < s->count) {
			o->setCollisionShape(b->cubeShape.get());
			btTransform t;
			t.setIdentity();
			t.setOrigin(
			    btVector3(btScalar(s->start[3 * i]), btScalar(s->start[3 * i + 1]), btScalar(s->start[3 * i + 2])));
			o->setWorldTransform(t);
		} else {
			o->setCollisionShape(b->floorShape.get());
			o->setCollisionFlags(o->getCollisionFlags() | btCollisionObject::CF_STATIC_OBJECT);
			btTransform t;
			t.setIdentity();
			t.setOrigin(
			    btVector3(btScalar(s->floorCenter[0]), btScalar(s->floorCenter[1]), btScalar(s->floorCenter[2])));
			o->setWorldTransform(t);
		}
		b->world->addCollisionObject(o.get());
		b->objects.push_back(std::move(o));
	}
	c->name = sweep ? "bullet-sap" : "bullet";
	c->impl = b;
	c->setPoses = bullet_set_poses;
	c->detect = bullet_detect;
	c->pairs = bullet_pairs;
	c->destroy = bullet_destroy;
	return 0;
}
