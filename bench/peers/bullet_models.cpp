// Bullet peer of the joint benchmark: a BenchModel as btRigidBody boxes joined by btPoint2PointConstraint in a
// btDiscreteDynamicsWorld (btSequentialImpulseConstraintSolver, no collision pairs), and optionally as a
// Featherstone btMultiBody with spherical joints.
#include "peers.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <btBulletDynamicsCommon.h>

#if defined(__has_include)
#if __has_include(<BulletDynamics/Featherstone/btMultiBody.h>) && \
	__has_include(<BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>)
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#define BENCH_HAVE_MULTIBODY 1
#endif
#endif

namespace
{

// The world's infrastructure; no pair is ever created (all bodies use collision mask 0).
struct BulletInfra {
	btDefaultCollisionConfiguration config;
	btCollisionDispatcher dispatcher{&config};
	btDbvtBroadphase broadphase;
};

void copy_pose(const btVector3& p, const btQuaternion& q, double* pos, double* quat)
{
	pos[0] = (double)p.x();
	pos[1] = (double)p.y();
	pos[2] = (double)p.z();
	quat[0] = (double)q.w();
	quat[1] = (double)q.x();
	quat[2] = (double)q.y();
	quat[3] = (double)q.z();
}

void copy_vec(const btVector3& v, double* out)
{
	out[0] = (double)v.x();
	out[1] = (double)v.y();
	out[2] = (double)v.z();
}

bool finite_pose(const double* pos) { return std::isfinite(pos[0]) && std::isfinite(pos[1]) && std::isfinite(pos[2]); }

btVector3 v3(const double* a) { return btVector3((btScalar)a[0], (btScalar)a[1], (btScalar)a[2]); }

} // namespace

extern "C" int bench_bullet_real_size(void) { return (int)sizeof(btScalar); }

extern "C" int bench_bullet_run(const BenchModel* m, double h, int steps, int iterations, BenchResult* out)
{
	std::memset(out, 0, sizeof *out);
	const int n = m->bodyCount;
	std::vector<double> pos(3 * (size_t)n), quat(4 * (size_t)n), lin(3 * (size_t)n), ang(3 * (size_t)n);

	auto infra = std::make_unique<BulletInfra>();
	btSequentialImpulseConstraintSolver solver;
	btDiscreteDynamicsWorld world(&infra->dispatcher, &infra->broadphase, &solver, &infra->config);
	world.setGravity(v3(m->gravity));
	if (iterations > 0) world.getSolverInfo().m_numIterations = iterations;

	std::vector<std::unique_ptr<btBoxShape>> shapes;
	std::vector<std::unique_ptr<btRigidBody>> bodies;
	std::vector<std::unique_ptr<btTypedConstraint>> joints;
	int inertiaMismatch = 0;
	for (int i = 0; i < n; ++i) {
		const BenchBody& b = m->bodies[i];
		shapes.push_back(std::make_unique<btBoxShape>(v3(b.halfExtents)));
		btVector3 inertia(0, 0, 0);
		shapes.back()->calculateLocalInertia((btScalar)b.mass, inertia);
		for (int k = 0; k < 3; ++k)
			if (std::fabs((double)inertia[k] - b.inertia[k]) > 1e-6 * b.inertia[k]) inertiaMismatch = 1;
		btTransform start(btQuaternion((btScalar)b.rotation[1], (btScalar)b.rotation[2], (btScalar)b.rotation[3],
		                               (btScalar)b.rotation[0]),
		                  v3(b.center));
		btRigidBody::btRigidBodyConstructionInfo info((btScalar)b.mass, nullptr, shapes.back().get(), inertia);
		info.m_startWorldTransform = start;
		info.m_linearDamping = 0;
		info.m_angularDamping = 0;
		bodies.push_back(std::make_unique<btRigidBody>(info));
		btRigidBody* body = bodies.back().get();
		body->setActivationState(DISABLE_DEACTIVATION);
		body->setLinearVelocity(v3(b.linearVelocity));
		body->setAngularVelocity(v3(b.angularVelocity));
		world.addRigidBody(body, 1, 0); // group 1, mask 0: never in a broadphase pair
	}
	if (inertiaMismatch) std::fprintf(stderr, "bench: warning: btBoxShape inertia differs from the box formula\n");
	for (int j = 0; j < m->jointCount; ++j) {
		const BenchJoint& jt = m->joints[j];
		btRigidBody* child = bodies[(size_t)jt.child].get();
		if (jt.type == BENCH_JOINT_HINGE) {
			if (jt.parent < 0)
				joints.push_back(std::make_unique<btHingeConstraint>(*child, v3(jt.localChild), v3(jt.localAxisChild)));
			else
				joints.push_back(std::make_unique<btHingeConstraint>(*bodies[(size_t)jt.parent], *child,
				                                                     v3(jt.localParent), v3(jt.localChild),
				                                                     v3(jt.localAxisParent), v3(jt.localAxisChild)));
		} else if (jt.parent < 0)
			joints.push_back(std::make_unique<btPoint2PointConstraint>(*child, v3(jt.localChild)));
		else
			joints.push_back(std::make_unique<btPoint2PointConstraint>(*bodies[(size_t)jt.parent], *child,
			                                                           v3(jt.localParent), v3(jt.localChild)));
		world.addConstraint(joints.back().get(), true);
	}

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	int diverged = 0;
	for (int s = 0; s < steps; ++s) {
		if (s == 0)
			for (int i = 0; i < n; ++i) {
				const double* t = m->bodies[i].firstStepTorque;
				if (t[0] != 0.0 || t[1] != 0.0 || t[2] != 0.0) bodies[(size_t)i]->applyTorque(v3(t));
			}
		double t0 = bench_now_ms();
		world.stepSimulation((btScalar)h, 0); // maxSubSteps 0: exactly one internal step of length h
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		for (int i = 0; i < n; ++i) {
			const btRigidBody* body = bodies[(size_t)i].get();
			copy_pose(body->getCenterOfMassPosition(), body->getOrientation(), &pos[3 * (size_t)i],
			          &quat[4 * (size_t)i]);
			copy_vec(body->getLinearVelocity(), &lin[3 * (size_t)i]);
			copy_vec(body->getAngularVelocity(), &ang[3 * (size_t)i]);
			if (!finite_pose(&pos[3 * (size_t)i])) diverged = 1;
		}
		if (diverged) {
			err = NAN;
			break;
		}
		err = bench_max_joint_error(m, pos.data(), quat.data());
		if (err > maxErr) maxErr = err;
		if (s == 0) out->energyFirst = bench_energy(m, pos.data(), quat.data(), lin.data(), ang.data());
	}
	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->iterations = world.getSolverInfo().m_numIterations;
	out->diverged = diverged;
	bench_system_com(m, pos.data(), out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos.data(), quat.data(), lin.data(), ang.data());

	if (world.getBroadphase()->getOverlappingPairCache()->getNumOverlappingPairs() != 0)
		std::fprintf(stderr, "bench: warning: bullet created broadphase pairs despite mask 0\n");
	for (auto& c : joints) world.removeConstraint(c.get());
	for (auto& b : bodies) world.removeRigidBody(b.get());
	return 0;
}

#if defined(BENCH_HAVE_MULTIBODY)

namespace
{

// Dense Cholesky solve of the SPD system A x = b in place (A n x n row-major, b overwritten by x).
bool cholesky_solve(std::vector<double>& a, std::vector<double>& b, int n)
{
	for (int j = 0; j < n; ++j) {
		double d = a[(size_t)j * n + j];
		for (int k = 0; k < j; ++k) d -= a[(size_t)j * n + k] * a[(size_t)j * n + k];
		if (!(d > 0.0)) return false;
		d = std::sqrt(d);
		a[(size_t)j * n + j] = d;
		for (int i = j + 1; i < n; ++i) {
			double s = a[(size_t)i * n + j];
			for (int k = 0; k < j; ++k) s -= a[(size_t)i * n + k] * a[(size_t)j * n + k];
			a[(size_t)i * n + j] = s / d;
		}
	}
	for (int i = 0; i < n; ++i) {
		double s = b[(size_t)i];
		for (int k = 0; k < i; ++k) s -= a[(size_t)i * n + k] * b[(size_t)k];
		b[(size_t)i] = s / a[(size_t)i * n + i];
	}
	for (int i = n - 1; i >= 0; --i) {
		double s = b[(size_t)i];
		for (int k = i + 1; k < n; ++k) s -= a[(size_t)k * n + i] * b[(size_t)k];
		b[(size_t)i] = s / a[(size_t)i * n + i];
	}
	return true;
}

// Generalised velocities (relative angular velocity u_k of every ball joint, world frame) produced by the
// impulses p_i = m_i v_i, L_i = J_i w_i at the COMs: solve M u = sum_i J_i^T (p_i, L_i), where body i moves with
// w_i = sum_{k in path(i)} u_k and v_i = sum_{k in path(i)} u_k x (c_i - a_k). Valid at the set-up pose with
// all bodies' frames aligned with the world (checked by the caller).
bool project_initial_velocities(const BenchModel* m, std::vector<double>& u)
{
	const int n = m->bodyCount, dof = 3 * n;
	std::vector<double> M((size_t)dof * dof, 0.0), Q((size_t)dof, 0.0);
	std::vector<int> path;
	for (int i = 0; i < n; ++i) {
		const BenchBody& b = m->bodies[i];
		path.clear();
		for (int k = i; k >= 0; k = m->bodies[k].parent) path.push_back(k);
		// J_i columns for joint k: [w; v] = [I; -[r_k]x] u_k with r_k = c_i - a_k, i.e. v = u x r = -r x u.
		// Generalised impulse: Q_k += L_i + r_k x p_i; mass: M_kl += I_i + m r_k^T-cross terms.
		double p[3] = {b.mass * b.linearVelocity[0], b.mass * b.linearVelocity[1], b.mass * b.linearVelocity[2]};
		double L[3] = {b.inertia[0] * b.angularVelocity[0], b.inertia[1] * b.angularVelocity[1],
		               b.inertia[2] * b.angularVelocity[2]};
		for (int k : path) {
			const double* a = m->joints[k].anchor;
			double r[3] = {b.center[0] - a[0], b.center[1] - a[1], b.center[2] - a[2]};
			Q[3 * (size_t)k + 0] += L[0] + r[1] * p[2] - r[2] * p[1];
			Q[3 * (size_t)k + 1] += L[1] + r[2] * p[0] - r[0] * p[2];
			Q[3 * (size_t)k + 2] += L[2] + r[0] * p[1] - r[1] * p[0];
		}
		for (int k : path) {
			const double* ak = m->joints[k].anchor;
			double rk[3] = {b.center[0] - ak[0], b.center[1] - ak[1], b.center[2] - ak[2]};
			for (int l : path) {
				const double* al = m->joints[l].anchor;
				double rl[3] = {b.center[0] - al[0], b.center[1] - al[1], b.center[2] - al[2]};
				// block = I_i + m [rk]x^T [rl]x = I_i + m ((rk . rl) E - rl rk^T)
				double dot = rk[0] * rl[0] + rk[1] * rl[1] + rk[2] * rl[2];
				for (int r = 0; r < 3; ++r)
					for (int c = 0; c < 3; ++c) {
						double v = b.mass * ((r == c ? dot : 0.0) - rl[r] * rk[c]);
						if (r == c) v += b.inertia[r];
						M[(size_t)(3 * k + r) * dof + (size_t)(3 * l + c)] += v;
					}
			}
		}
	}
	if (!cholesky_solve(M, Q, dof)) return false;
	u = Q;
	return true;
}

} // namespace

extern "C" int bench_bullet_multibody_run(const BenchModel* m, double h, int steps, BenchResult* out)
{
	std::memset(out, 0, sizeof *out);
	const int n = m->bodyCount;
	if (m->jointCount != n || !m->isTree) return -1;
	for (int i = 0; i < n; ++i) {
		const BenchBody& b = m->bodies[i];
		if (b.parent >= i || m->joints[i].child != i || m->joints[i].parent != b.parent) return -1;
		if (b.rotation[0] != 1.0 || b.rotation[1] != 0.0 || b.rotation[2] != 0.0 || b.rotation[3] != 0.0) return -1;
		if (b.parent < 0 && i != 0) return -1; // one root, attached to the world
	}
	std::vector<double> u;
	if (!project_initial_velocities(m, u)) return -1;

	std::vector<double> pos(3 * (size_t)n), quat(4 * (size_t)n), lin(3 * (size_t)n), ang(3 * (size_t)n);
	auto infra = std::make_unique<BulletInfra>();
	btMultiBodyConstraintSolver solver;
	btMultiBodyDynamicsWorld world(&infra->dispatcher, &infra->broadphase, &solver, &infra->config);
	world.setGravity(v3(m->gravity));

	// Fixed, massless base at the root joint point; link i = body i, spherical joint i.
	auto mb = std::make_unique<btMultiBody>(n, (btScalar)0, btVector3(0, 0, 0), true, false);
	mb->setBasePos(v3(m->joints[0].anchor));
	mb->setWorldToBaseRot(btQuaternion(0, 0, 0, 1));
	const btQuaternion identity(0, 0, 0, 1);
	for (int i = 0; i < n; ++i) {
		const BenchBody& b = m->bodies[i];
		const double* a = m->joints[i].anchor;
		const double* parentCom = b.parent < 0 ? m->joints[0].anchor : m->bodies[b.parent].center;
		double toPivot[3] = {a[0] - parentCom[0], a[1] - parentCom[1], a[2] - parentCom[2]};
		double toCom[3] = {b.center[0] - a[0], b.center[1] - a[1], b.center[2] - a[2]};
		mb->setupSpherical(i, (btScalar)b.mass, v3(b.inertia), b.parent, identity, v3(toPivot), v3(toCom), true);
	}
	mb->finalizeMultiDof();
	mb->setCanSleep(false);
	mb->setLinearDamping(0);
	mb->setAngularDamping(0);
	mb->setHasSelfCollision(false);
	for (int i = 0; i < n; ++i) {
		// Spherical joint rates are the relative angular velocity in the link frame (= world frame at set-up).
		btScalar qd[3] = {(btScalar)u[3 * (size_t)i], (btScalar)u[3 * (size_t)i + 1], (btScalar)u[3 * (size_t)i + 2]};
		mb->setJointVelMultiDof(i, qd);
	}
	world.addMultiBody(mb.get(), 1, 0);
	std::vector<btVector3> omega((size_t)n + 1), vel((size_t)n + 1);

	double elapsed = 0.0, maxErr = 0.0, err = 0.0;
	int diverged = 0;
	for (int s = 0; s < steps; ++s) {
		if (s == 0)
			for (int i = 0; i < n; ++i) {
				const double* t = m->bodies[i].firstStepTorque;
				if (t[0] != 0.0 || t[1] != 0.0 || t[2] != 0.0) mb->addLinkTorque(i, v3(t));
			}
		double t0 = bench_now_ms();
		world.stepSimulation((btScalar)h, 0);
		elapsed += bench_now_ms() - t0;
		out->steps = s + 1;
		mb->compTreeLinkVelocities(omega.data(), vel.data()); // link frames; index 0 = base
		for (int i = 0; i < n; ++i) {
			copy_vec(mb->localDirToWorld(i, vel[(size_t)i + 1]), &lin[3 * (size_t)i]);
			copy_vec(mb->localDirToWorld(i, omega[(size_t)i + 1]), &ang[3 * (size_t)i]);
			btMatrix3x3 R = mb->localFrameToWorld(i, btMatrix3x3::getIdentity());
			btQuaternion q;
			R.getRotation(q);
			copy_pose(mb->localPosToWorld(i, btVector3(0, 0, 0)), q, &pos[3 * (size_t)i], &quat[4 * (size_t)i]);
			if (!finite_pose(&pos[3 * (size_t)i])) diverged = 1;
		}
		if (diverged) {
			err = NAN;
			break;
		}
		err = bench_max_joint_error(m, pos.data(), quat.data());
		if (err > maxErr) maxErr = err;
		if (s == 0) out->energyFirst = bench_energy(m, pos.data(), quat.data(), lin.data(), ang.data());
	}
	out->msPerStep = out->steps > 0 ? elapsed / out->steps : 0.0;
	out->maxError = diverged ? NAN : maxErr;
	out->finalError = err;
	out->iterations = 0; // reduced coordinates: no joint iterations
	out->diverged = diverged;
	bench_system_com(m, pos.data(), out->finalCom);
	out->energyFinal = diverged ? NAN : bench_energy(m, pos.data(), quat.data(), lin.data(), ang.data());
	world.removeMultiBody(mb.get());
	return 0;
}

#else

extern "C" int bench_bullet_multibody_run(const BenchModel* m, double h, int steps, BenchResult* out)
{
	(void)m;
	(void)h;
	(void)steps;
	std::memset(out, 0, sizeof *out);
	return -2;
}

#endif
