/* Peer engines (Bullet, ODE) of bench_contacts: boxes on a static ground box, stepped with contacts.
 * Positions (m) and quaternions (w, x, y, z), body -> world; z is up. */
#ifndef IBDYN_BENCH_CONTACT_PEERS_H
#define IBDYN_BENCH_CONTACT_PEERS_H

#ifdef __cplusplus
extern "C" {
#endif

/** A box scene: n dynamic boxes and one static ground box; every pair has friction mu, restitution 0. */
typedef struct ContactScene {
	char name[32];
	int n;
	double* pos;   /**< 3 n start centres */
	double* quat;  /**< 4 n start orientations */
	double* half;  /**< 3 n half extents */
	double* mass;  /**< n masses */
	double groundCenter[3];
	double groundHalf[3];
	double mu;     /**< friction coefficient of every pair */
	double h;      /**< step (s) */
	int steps;     /**< steps of the default run */
	int sleep;     /**< 1: every engine lets resting bodies sleep (Bullet deactivation, ODE auto-disable, ibdyn
	                *   ibSleepSettings), each with its own default thresholds; 0: no engine sleeps */
} ContactScene;

typedef struct ContactPeer ContactPeer;

/** Build the scene in Bullet (btDiscreteDynamicsWorld, sequential impulse, 10 iterations) or ODE (quickstep,
 * 20 iterations, dHashSpace); NULL on failure. */
ContactPeer* contact_bullet_create(const ContactScene* s);
ContactPeer* contact_ode_create(const ContactScene* s);
/** One step of h. */
void contact_peer_step(ContactPeer* p);
/** Current poses. */
void contact_peer_get(ContactPeer* p, double* pos, double* quat);
void contact_peer_destroy(ContactPeer* p);

/** Dispatch (a peer is either engine; the tag is in the struct). */
#ifdef __cplusplus
}
#endif
#endif
