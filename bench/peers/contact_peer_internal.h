/* Shared between contact_bullet.cpp and contact_ode.c: the peer handle and the per-engine functions. */
#ifndef IBDYN_BENCH_CONTACT_PEER_INTERNAL_H
#define IBDYN_BENCH_CONTACT_PEER_INTERNAL_H
#include "contact_peers.h"
#ifdef __cplusplus
struct BulletContact;
extern "C" {
#else
typedef struct BulletContact BulletContact;
#endif
struct OdeContact;
struct ContactPeer {
	int engine; /* 0 = Bullet, 1 = ODE */
	int n;
#ifdef __cplusplus
	::BulletContact* bullet;
#else
	BulletContact* bullet;
#endif
	struct OdeContact* ode;
};
void contact_bullet_step(ContactPeer* p);
void contact_bullet_get(ContactPeer* p, double* pos, double* quat);
void contact_bullet_destroy(ContactPeer* p);
void contact_ode_step(ContactPeer* p);
void contact_ode_get(ContactPeer* p, double* pos, double* quat);
void contact_ode_destroy(ContactPeer* p);
#ifdef __cplusplus
}
#endif
#endif
