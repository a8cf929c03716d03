/* [IMPL] Sparse direct solve of the contact joints (beyond the thesis; docs/contacts.md "Direct solve").
 *
 * A pile of boxes is a stiff, statically indeterminate system: each box rests on two boxes, each
 * face contact has four points, and Gauss-Seidel sweeps over single points need hundreds of sweeps
 * to bring a 20-row pyramid to eps_d = 1e-6 m (they move an error from point to point). Before the
 * sweeps of a loop, the resting points are gathered into blocks: a face contact whose points all
 * stick becomes one 6-dof block (the wrench (F, M) about its centre c against the relative twist at
 * c, as a temporary fixed joint, contact_patch.c), another sticking point a 3-dof block (a ball
 * joint), a frictionless point a 1-dof normal block; sliding points stay with the sweeps. With G_k the blocks' Jacobians and A = G M^-1 G^T,
 * the loop solves
 *   position (at t0):  h A dl = -e(l),  e = predicted errors at t0+h (gaps, static-friction offsets;
 *                      of a face block their least-squares rigid fit: offset d at c and rotation theta)
 *   velocity (t0+h):   A dl = -u,      u = relative velocities (of a face block: at c, and omega)
 * iterated with one factorisation (the predictions are non-linear) until the errors are below a tenth
 * of the tolerance. A pile has more rows than degrees of freedom (2400 vs 1260 for pyramid20), so A is
 * singular: it is scaled to a unit diagonal and regularised by DIR_REG I, which gives a solution near
 * the minimum-norm one (no self-equilibrated internal forces) and is refined by the iteration itself.
 * The blocks' impulses are then distributed to the points (least-squares loads of a face,
 * ib_contact_patch_loads), projected onto N >= 0 and the friction cones, and handed to the sweeps as
 * their starting iterate: the sweeps keep every clamp and every tolerance of the iterative method, so
 * where the equality solution was admissible they end after one sweep, and where it was not (a corner
 * lifts, a point slides) they continue from it. The factor is our block Cholesky (math/block_chol.h) on
 * the blocks; its analysis is made once per block pattern. */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "contact/contact_internal.h"
#include "joints/joint_internal.h"
#include "math/block_chol.h"

enum { DIR_MAX_ITERATIONS = 12, DIR_PASSES = 3, DIR_MAX_COLUMN = 48 };
#define DIR_REG 1e-8
#define DIR_FRICTION_WEIGHT 100.0
#define DIR_TILT_WEIGHT 10.0
#define DIR_SLOW 0.5
/* [IMPL] the warm start "holds" (IB_DIRECT_HELD, the caller may skip its confirming sweep) where every
 * resting point is within DIR_HELD of the tolerance. The sweep's sub-tolerance corrections damp: without
 * them a rocking mode of a 10-box stack grew (x2.7 per 5 s) until the errors reached the threshold; at
 * 0.1 the stack's top then wandered by 2e-5 m in 60 s (4.7e-7 with the sweep, 2.1e-7 at 0.02) */
#define DIR_HELD 0.02
/* [IMPL] Where every point the system could hold is within this fraction of its loop's tolerance the warm
 * start stands and the sweeps go on alone (position 0.1, velocity 0.3). A pile standing still regains
 * errors of this order every step from its warm start (the resting faces' friction spread over the loads,
 * contact_warm.c): awake pyramid20 of bench_contacts started its velocity loops at 2-4e-5 m/s, 0.2-0.4 of
 * eps_v. At 0.1 its velocity loop solved nearly every step, and the solves whose pass 0 left a corner
 * load negative analysed and factored new patterns (952 factorisations in 3600 steps, 3.4 ms/step); at
 * 0.3, 46 (2.4 ms/step), the sweeps' one pass holding the rest within eps_v. */
#define DIR_WITHIN_POSITION 0.1
#define DIR_WITHIN_VELOCITY 0.3

typedef struct DBlock {
	int32_t pt[IB_CONTACT_PATCH_MAX]; /* its points (rows of cs->pts): a face's group, then any folded in */
	int16_t m;       /* points of a face block, else 1 */
	int16_t group;   /* face block: points of its manifold group (pt[0 .. group-1]) */
	uint8_t dim;     /* 6 face, 3 sticking point, 1 normal */
	int32_t off;     /* first scalar row of the system */
	int32_t body[2]; /* dynamic bodies of side 1 / 2, -1 if not dynamic */
	ibPatchGeom pg;  /* face block: geometry of its group at the loop's instant (centre pg.c: its wrench, twist) */
	ibVec3 fc;       /* face block: centre of all its points (rigid fit of their errors) */
	ibMat3 Sinv;     /* face block: inverse of sum(|r|^2 I - r r^T), r about fc */
	double G[2][36]; /* rows (dim x 6, row-major) of the Jacobian per side: (linear, angular) */
	double W[2][36]; /* rows of M^-1 G^T per side */
	ibVec3 e[3];     /* the rows' directions: n, t1, t2 (forces; a face's moments likewise) */
	double lam[6];   /* impulses of the direct solve so far, in the frame e */
	double N[IB_CONTACT_PATCH_MAX]; /* the points' loads after the pass (demote), applied by distribute */
	ibVec3 T[IB_CONTACT_PATCH_MAX];
} DBlock;

typedef struct FaceKey {
	int64_t key; /* body pair */
	int32_t blk;
} FaceKey;

/* [IMPL] What every call builds afresh (blocks, face keys, A's values, right-hand side, solve scratch) is
 * shared by the systems (one per loop and pass): one copy is touched instead of one per system. A
 * first-touched page costs ~11 us on the benchmark VM, and pyramid20's first step touched 17 MB (4150
 * faults, a third of its 600 steps). */
typedef struct ibContactDirectScratch {
	DBlock* blk;
	int32_t blkCap;
	FaceKey* faceKey; /* body pairs of the face blocks (sorted) */
	int32_t faceKeyCap;
	double *Ad, *Ao, *rhs, *tmp; /* A's diagonal and coupling blocks (block_chol.h layout) */
	int32_t AdCap, AoCap, rhsCap, tmpCap;
	int32_t posDemoted; /* the last position loop succeeded in a later pass: cs->count then, else -1 */
} ibContactDirectScratch;

typedef struct ibContactDirect {
	ibBlockChol F;         /* block factor of the scaled, regularised A (analysed per block pattern) */
	ibContactDirectScratch* S; /* cs->directScratch: its blocks are this system's while it is built and solved */
	int32_t nblk;
	int32_t *bodyStart, *bodyBlk, *nbrStart, *nbr, *dim, *diagOff, *offOff, *sig;
	int32_t bodyStartCap, bodyBlkCap, nbrStartCap, nbrCap, dimCap, diagOffCap, offOffCap, sigCap, sigLen;
	uint8_t* mode; /* per point of cs->pts, see point_ok */
	int32_t modeCap;
	double* gref; /* the blocks' G when the numeric factor was made */
	int32_t grefCap;
	double* scale; /* of the numeric factor */
	int32_t scaleCap;
	int32_t m;
	bool analysed, numeric; /* symbolic / numeric factor valid for the pattern in sig */
} ibContactDirect;

/* the factor's arrays are written before they are read (block_chol.c): not zeroed when grown */
static bool al_grow(void* ctx, void** a, int32_t* cap, int32_t need, size_t elem) { return ib_grow_raw(ctx, a, cap, need, elem); }
static void al_release(void* ctx, void* p, size_t size) { ib_free(ctx, p, size); }
static ibBlockAlloc world_alloc(ibWorld* w)
{
	ibBlockAlloc al = {w, al_grow, al_release};
	return al;
}

static void direct_free(ibWorld* w, ibContactDirect* D)
{
	if (!D) return;
	ibBlockAlloc al = world_alloc(w);
	ib_bchol_free(&D->F, &al);
	int32_t* iv[] = {D->bodyStart, D->bodyBlk, D->nbrStart, D->nbr, D->dim, D->diagOff, D->offOff, D->sig};
	int32_t ic[] = {D->bodyStartCap, D->bodyBlkCap, D->nbrStartCap, D->nbrCap, D->dimCap, D->diagOffCap, D->offOffCap, D->sigCap};
	for (int k = 0; k < 8; ++k) ib_free(w, iv[k], (size_t)ic[k] * sizeof(int32_t));
	ib_free(w, D->scale, (size_t)D->scaleCap * sizeof(double));
	ib_free(w, D->mode, (size_t)D->modeCap);
	ib_free(w, D->gref, (size_t)D->grefCap * sizeof(double));
	ib_free(w, D, sizeof *D);
}

static void scratch_free(ibWorld* w, ibContactDirectScratch* S)
{
	if (!S) return;
	ib_free(w, S->blk, (size_t)S->blkCap * sizeof(DBlock));
	ib_free(w, S->faceKey, (size_t)S->faceKeyCap * sizeof(FaceKey));
	ib_free(w, S->Ad, (size_t)S->AdCap * sizeof(double));
	ib_free(w, S->Ao, (size_t)S->AoCap * sizeof(double));
	ib_free(w, S->rhs, (size_t)S->rhsCap * sizeof(double));
	ib_free(w, S->tmp, (size_t)S->tmpCap * sizeof(double));
	ib_free(w, S, sizeof *S);
}

void ib_contacts_direct_destroy(ibWorld* w, ibContactStore* cs)
{
	for (int k = 0; k < IB_CONTACT_DIRECT_SYSTEMS; ++k) {
		direct_free(w, cs->direct[k]);
		cs->direct[k] = NULL;
	}
	scratch_free(w, cs->directScratch);
	cs->directScratch = NULL;
}

/* [IMPL] one system (pattern, factor) per loop and active-set pass (slot 2 pass + loop, loop 0 position,
 * 1 velocity): the position and velocity loops differ where points changed state between them, and a
 * pass's demoted points change the pattern; with one system every call re-analysed (pyramid20: 240 of
 * 240). With one system for passes 1 and 2 together, a pile whose position loops needed all three
 * passes in consecutive steps analysed and factored both later patterns anew in each of them
 * (pyramid20 of bench_contacts, steps 161-173: 14 of its 14 analyses in steps 150-300). */
static ibContactDirect* direct_of(ibWorld* w, ibContactStore* cs, int slot)
{
	if (cs->direct[slot]) return cs->direct[slot];
	if (!cs->directScratch) {
		ibContactDirectScratch* S = ib_alloc(w, sizeof *S);
		if (!S) return NULL;
		memset(S, 0, sizeof *S);
		S->posDemoted = -1;
		cs->directScratch = S;
	}
	ibContactDirect* D = ib_alloc(w, sizeof *D);
	if (!D) return NULL;
	memset(D, 0, sizeof *D);
	D->S = cs->directScratch;
	cs->direct[slot] = D;
	return D;
}

static bool grow_i(ibWorld* w, int32_t** a, int32_t* cap, int32_t need) { return ib_grow(w, (void**)a, cap, need, sizeof(int32_t)); }
/* the value arrays (scale, tmp, Ad, Ao, gref, rhs) are written before they are read: not zeroed */
static bool grow_d(ibWorld* w, double** a, int32_t* cap, int32_t need) { return ib_grow_raw(w, (void**)a, cap, need, sizeof(double)); }

/* ---------------------------------------------------------------- blocks */

/* mode of a point in this loop's system (D->mode), bits: MODE_NORMAL = normal row only (its friction
 * left to the sweeps), MODE_OUT = left out (to the sweeps), MODE_SINGLE = not part of a face block */
enum { MODE_NORMAL = 1, MODE_OUT = 2, MODE_SINGLE = 4 };
static bool point_ok(const ibContactRow* c) { return c->kind == IB_CONTACT_RESTING && c->spec == 0 && !c->frozen && !c->lift; }

/* [IMPL] a point may be held as sticking by the direct solve if it sticks, or slides slower than
 * IB_CONTACT_STICK_SPEED * eps_rc at its velocity when the solve runs (classification noise: with eps_v =
 * 1e-6 m/s the points of a resting face
 * flipped between sticking and sliding, and the face between one block and single points, so that
 * nearly every loop needed a new symbolic analysis); the loads' admissibility (the cone) decides. */
static bool stickable(const ibWorld* w, const ibContactRow* c)
{
	if (!(c->mus > 0.0)) return false;
	if (c->sticking) return true;
	ibVec3 ut = ib_contact_tangential(ib_contact_rel_velocity(w, c), c->n);
	return ibLength(ut) <= IB_CONTACT_STICK_SPEED * ib_contact_resting_speed(w);
}

static bool face_group(const ibWorld* w, const ibContactStore* cs, const uint8_t* mode, int32_t k)
{
	const ibContactRow* c = &cs->pts[k];
	if (c->gIdx != 0 || c->gCount < 3 || c->gCount > IB_CONTACT_PATCH_MAX || k + c->gCount > cs->count) return false;
	for (int32_t i = k; i < k + c->gCount; ++i) {
		const ibContactRow* q = &cs->pts[i];
		if (!point_ok(q) || mode[i] != 0 || !stickable(w, q)) return false;
	}
	return true;
}

/* Jacobian rows of side p of a block at the current poses. */
static void block_jacobian(const ibWorld* w, const ibContactStore* cs, DBlock* B, int p)
{
	const ibContactRow* c = &cs->pts[B->pt[0]];
	int32_t bi = p == 0 ? c->b1 : c->b2;
	const ibBody* b = &w->bodies[bi];
	B->body[p] = ib_is_dynamic(b) ? bi : -1;
	if (B->body[p] < 0) return;
	double sg = p == 0 ? 1.0 : -1.0;
	ibVec3 q = B->dim == 6 ? B->pg.c : p == 0 ? c->a : c->b, r = ibSub(q, b->st.s);
	for (int k = 0; k < B->dim; ++k) {
		ibVec3 lin, ang;
		if (k < 3) {
			lin = B->e[k];
			ang = ibCross(r, lin);
		} else {
			lin = IB_VEC3_ZERO;
			ang = B->e[k - 3];
		}
		lin = ibScale(sg, lin);
		ang = ibScale(sg, ang);
		ibVec3 wl = ibScale(b->invMass, lin), wa = ibMat3_MulV(b->invInertiaW, ang);
		double* g = B->G[p] + 6 * k;
		double* v = B->W[p] + 6 * k;
		g[0] = lin.x, g[1] = lin.y, g[2] = lin.z, g[3] = ang.x, g[4] = ang.y, g[5] = ang.z;
		v[0] = wl.x, v[1] = wl.y, v[2] = wl.z, v[3] = wa.x, v[4] = wa.y, v[5] = wa.z;
	}
}

/* the rigid fit of a face block's points: their centre fc and Sinv; false if degenerate */
static bool face_fit(const ibContactStore* cs, DBlock* B)
{
	ibVec3 c = IB_VEC3_ZERO;
	for (int i = 0; i < B->m; ++i) c = ibAdd(c, cs->pts[B->pt[i]].a);
	B->fc = ibScale(1.0 / B->m, c);
	ibMat3 S = ibMat3_Zero();
	for (int i = 0; i < B->m; ++i) {
		ibVec3 q = ibSub(cs->pts[B->pt[i]].a, B->fc);
		double q2 = ibLengthSq(q), v[3] = {q.x, q.y, q.z};
		for (int r = 0; r < 3; ++r)
			for (int s = 0; s < 3; ++s) S.m[r][s] += (r == s ? q2 : 0.0) - v[r] * v[s];
	}
	return ibMat3_InverseSym(S, &B->Sinv);
}

static bool add_block(ibWorld* w, ibContactStore* cs, ibContactDirect* D, int32_t first, int m, int dim)
{
	if (!ib_grow(w, (void**)&D->S->blk, &D->S->blkCap, D->nblk + 1, sizeof(DBlock))) return false;
	DBlock* B = &D->S->blk[D->nblk];
	for (int i = 0; i < m; ++i) B->pt[i] = first + i;
	B->m = (int16_t)m;
	B->group = (int16_t)m;
	B->dim = (uint8_t)dim;
	B->off = D->m;
	memset(B->lam, 0, sizeof B->lam);
	memset(B->G, 0, sizeof B->G);
	B->e[0] = cs->pts[first].n;
	B->e[1] = ibPerpendicular(B->e[0]);
	B->e[2] = ibCross(B->e[0], B->e[1]);
	if (dim == 6) {
		const ibContactRow* g[IB_CONTACT_PATCH_MAX];
		for (int i = 0; i < m; ++i) g[i] = &cs->pts[first + i];
		if (!ib_contact_patch_geometry(g, m, w->collisionSettings.contactTolerance, &B->pg) || !face_fit(cs, B))
			return true; /* collinear (or of no size): the caller uses points */
	}
	block_jacobian(w, cs, B, 0);
	block_jacobian(w, cs, B, 1);
	if (B->body[0] < 0 && B->body[1] < 0) return true;
	D->nblk++;
	D->m += dim;
	return true;
}

static int cmp_key(const void* x, const void* y)
{
	int64_t a = ((const FaceKey*)x)->key, b = ((const FaceKey*)y)->key;
	return (a > b) - (a < b);
}
static int64_t pair_key(const ibContactRow* c) { return (int64_t)c->b1 * ((int64_t)INT32_MAX + 1) + c->b2; }

/* [IMPL] A single point (a group of one) of a pair that has a face block joins that block: its error
 * enters the block's rigid fit, its impulse becomes 0 (the block's loads go to the face's own group,
 * and its wrench and twist stay at the group's centre: the Jacobian, and so the factor, do not change).
 * Such points (added by contact_speculative.c at the pair's larger margin: the manifold of a pair sunk
 * by more than eps_c has only the points near its deepest one) come and go from loop to loop; as 3-dof
 * blocks of their own they changed the block pattern of pyramid20 in ~3 of 4 loops (a new analysis and
 * factorisation each), and their loads, redundant with the face's, were mostly outside the cone; with a
 * share of the face's loads the load they took vanished with them (pyramid20 moved by 1.7e-6 m, not
 * 1.3e-7 m). */
static bool fold_point(const ibWorld* w, const ibContactStore* cs, ibContactDirect* D, int32_t nface, int32_t k, const uint8_t* mode)
{
	const ibContactRow* c = &cs->pts[k];
	if (nface == 0 || c->gCount != 1 || mode[k] != 0 || !point_ok(c) || !stickable(w, c)) return false;
	FaceKey key = {pair_key(c), 0};
	const FaceKey* f = bsearch(&key, D->S->faceKey, (size_t)nface, sizeof(FaceKey), cmp_key);
	if (!f) return false;
	DBlock* B = &D->S->blk[f->blk];
	const ibContactRow* g = &cs->pts[B->pt[0]];
	if (B->m >= IB_CONTACT_PATCH_MAX || g->s1 != c->s1 || g->s2 != c->s2 || !(ibDot(g->n, c->n) > 0.999)) return false;
	ibVec3 fc = B->fc;
	ibMat3 Sinv = B->Sinv;
	B->pt[B->m++] = k;
	if (face_fit(cs, B)) return true;
	B->m--;
	B->fc = fc;
	B->Sinv = Sinv;
	return false;
}

/* The blocks in the order of the points; a single point of a pair whose face block came before it
 * joins that block (fold_point). */
static bool build_blocks(ibWorld* w, ibContactStore* cs, ibContactDirect* D, const uint8_t* mode)
{
	D->nblk = 0;
	D->m = 0;
	FaceKey* fk = D->S->faceKey;
	int32_t nface = 0;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (face_group(w, cs, mode, k)) {
			int32_t before = D->nblk;
			if (!add_block(w, cs, D, k, c->gCount, 6)) return false;
			if (D->nblk > before) {
				/* kept sorted by insertion (a pair has one face group as a rule) */
				if (!ib_grow(w, (void**)&D->S->faceKey, &D->S->faceKeyCap, nface + 1, sizeof(FaceKey))) return false;
				fk = D->S->faceKey;
				FaceKey key = {pair_key(c), before};
				int32_t z = nface++;
				while (z > 0 && fk[z - 1].key > key.key) {
					fk[z] = fk[z - 1];
					--z;
				}
				fk[z] = key;
				k += c->gCount - 1;
				continue;
			}
		}
		if (!point_ok(c) || (mode[k] & MODE_OUT)) continue;
		if (fold_point(w, cs, D, nface, k, mode)) continue;
		bool frictionless = c->mus <= 0.0 && c->mud <= 0.0;
		if (frictionless) {
			if (!add_block(w, cs, D, k, 1, 1)) return false;
		} else if (stickable(w, c) && !(mode[k] & MODE_NORMAL)) {
			if (!add_block(w, cs, D, k, 1, 3)) return false;
		}
		/* [IMPL] a sliding point is left to the sweeps: its dynamic friction follows each increment of its
		 * normal impulse (eq. 5.8), and solving the normal rows first and the friction after changed the
		 * braking distances of Table 5.2 by 5e-3 m */
	}
	return true;
}

/* ---------------------------------------------------------------- pattern, analysis, factorisation */

static int cmp_i32(const void* x, const void* y) { return (*(const int32_t*)x > *(const int32_t*)y) - (*(const int32_t*)x < *(const int32_t*)y); }

static bool build_pattern(ibWorld* w, ibContactDirect* D)
{
	int32_t nb = w->bodyHigh;
	if (!grow_i(w, &D->bodyStart, &D->bodyStartCap, nb + 2) || !grow_i(w, &D->bodyBlk, &D->bodyBlkCap, 2 * D->nblk + 1) ||
	    !grow_i(w, &D->nbrStart, &D->nbrStartCap, D->nblk + 1))
		return false;
	memset(D->bodyStart, 0, (size_t)(nb + 2) * sizeof(int32_t));
	for (int32_t i = 0; i < D->nblk; ++i)
		for (int p = 0; p < 2; ++p)
			if (D->S->blk[i].body[p] >= 0) D->bodyStart[D->S->blk[i].body[p] + 2]++;
	/* a bound of the entries before any list is made: the rows meeting at one body couple pairwise */
	int64_t bound = 0;
	memset(D->bodyStart, 0, (size_t)(nb + 2) * sizeof(int32_t));
	for (int32_t i = 0; i < D->nblk; ++i)
		for (int p = 0; p < 2; ++p)
			if (D->S->blk[i].body[p] >= 0) D->bodyStart[D->S->blk[i].body[p] + 2] += D->S->blk[i].dim;
	for (int32_t i = 0; i < nb; ++i) bound += (int64_t)D->bodyStart[i + 2] * D->bodyStart[i + 2];
	if (bound > 2 * DIR_MAX_COLUMN * (int64_t)D->m) return false;
	memset(D->bodyStart, 0, (size_t)(nb + 2) * sizeof(int32_t));
	for (int32_t i = 0; i < D->nblk; ++i)
		for (int p = 0; p < 2; ++p)
			if (D->S->blk[i].body[p] >= 0) D->bodyStart[D->S->blk[i].body[p] + 2]++;
	for (int32_t i = 2; i < nb + 2; ++i) D->bodyStart[i] += D->bodyStart[i - 1];
	for (int32_t i = 0; i < D->nblk; ++i)
		for (int p = 0; p < 2; ++p)
			if (D->S->blk[i].body[p] >= 0) D->bodyBlk[D->bodyStart[D->S->blk[i].body[p] + 1]++] = i;
	/* neighbours of each block with a smaller index (blocks are in body order within a body's list) */
	int32_t count = 0;
	for (int pass = 0; pass < 2; ++pass) {
		count = 0;
		for (int32_t j = 0; j < D->nblk; ++j) {
			if (pass == 1) D->nbrStart[j] = count;
			int32_t start = count;
			for (int p = 0; p < 2; ++p) {
				int32_t b = D->S->blk[j].body[p];
				if (b < 0) continue;
				for (int32_t e = D->bodyStart[b]; e < D->bodyStart[b + 1]; ++e) {
					int32_t i = D->bodyBlk[e];
					if (i >= j) continue;
					if (pass == 1) {
						bool dup = false;
						for (int32_t z = start; z < count && !dup; ++z) dup = D->nbr[z] == i;
						if (dup) continue;
						D->nbr[count] = i;
					}
					++count;
				}
			}
			if (pass == 1) qsort(D->nbr + start, (size_t)(count - start), sizeof(int32_t), cmp_i32);
		}
		if (pass == 0 && !grow_i(w, &D->nbr, &D->nbrCap, count + 1)) return false;
	}
	D->nbrStart[D->nblk] = count;
	/* the values' layout (block_chol.h): diagonal blocks, then the coupling blocks (nbr order) */
	int64_t nnz = 0;
	for (int32_t j = 0; j < D->nblk; ++j) {
		int32_t rows = 0;
		for (int32_t z = D->nbrStart[j]; z < D->nbrStart[j + 1]; ++z) rows += D->S->blk[D->nbr[z]].dim;
		int d = D->S->blk[j].dim;
		nnz += (int64_t)d * rows + (int64_t)d * (d + 1) / 2;
	}
	if (nnz > INT32_MAX / 4 || nnz > DIR_MAX_COLUMN * (int64_t)D->m) return false;
	if (!grow_i(w, &D->dim, &D->dimCap, D->nblk + 1) || !grow_i(w, &D->diagOff, &D->diagOffCap, D->nblk + 1) ||
	    !grow_i(w, &D->offOff, &D->offOffCap, count + 1) || !grow_d(w, &D->scale, &D->scaleCap, D->m + 1))
		return false;
	for (int32_t j = 0; j < D->nblk; ++j) D->dim[j] = D->S->blk[j].dim;
	ib_bchol_value_sizes(D->nblk, D->dim, D->nbrStart, D->nbr, D->diagOff, D->offOff);
	return true;
}

/* same block pattern as the analysed one: (dim, bodies) of every block in order */
static bool same_pattern(ibWorld* w, ibContactDirect* D, bool* ok)
{
	*ok = true;
	int32_t len = 3 * D->nblk;
	bool same = D->sigLen == len;
	for (int32_t i = 0; same && i < D->nblk; ++i)
		same = D->sig[3 * i] == D->S->blk[i].dim && D->sig[3 * i + 1] == D->S->blk[i].body[0] && D->sig[3 * i + 2] == D->S->blk[i].body[1];
	if (same) return true;
	if (!grow_i(w, &D->sig, &D->sigCap, len + 1)) {
		*ok = false;
		return false;
	}
	for (int32_t i = 0; i < D->nblk; ++i) {
		D->sig[3 * i] = D->S->blk[i].dim;
		D->sig[3 * i + 1] = D->S->blk[i].body[0];
		D->sig[3 * i + 2] = D->S->blk[i].body[1];
	}
	D->sigLen = len;
	return false;
}

static double dot6(const double* a, const double* b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* A(I row r, J row s): the sum over the bodies the blocks share */
static double entry(const DBlock* I, int r, const DBlock* J, int s)
{
	double a = 0.0;
	for (int p = 0; p < 2; ++p) {
		if (I->body[p] < 0) continue;
		for (int q = 0; q < 2; ++q)
			if (J->body[q] == I->body[p]) a += dot6(I->G[p] + 6 * r, J->W[q] + 6 * s);
	}
	return a;
}

/* Makes a factor usable for the present blocks: a new pattern is analysed and factored, the same
 * pattern keeps its factor (from an earlier instant: the iteration corrects for the change) unless
 * force. *fresh: factored now, at the present poses. */
/* [IMPL] Weights of the regularisation: among the impulses with the same effect on the bodies the
 * solve picks the one of least sum w_i x_i^2; friction (tangential forces, a face's twist) weighs
 * DIR_FRICTION_WEIGHT times more than normal loads, so that an indeterminate pile is held by normal loads
 * and not by friction squeezing its boxes (which left the cones at the top of pyramid20 with mu = 0.5).
 * A face's tilting moments weigh DIR_TILT_WEIGHT: with weight 1 the faces of standing pyramid20 passed
 * moments to each other, a centre of pressure left its face now and then (a corner load negative), and
 * the next active-set pass analysed and factored a new pattern with that face split into points (awake,
 * 600 steps: 55-99 steps above 2.5 ms; 10-54 at 10, 3 at 100). The weight also damps the system's small
 * eigenvalues: at 30 and 100 the standing 28-stone wall of test_contact_wall no longer held in one
 * sweep (3075 sweeps instead of 12) and gained energy; at 10^4 pyramid20 did not converge either. */
static double row_weight(const DBlock* B, int k)
{
	if (B->dim == 6 && k >= 4) return DIR_TILT_WEIGHT;
	return (k == 1 || k == 2 || k == 3) && B->dim > 1 ? DIR_FRICTION_WEIGHT : 1.0;
}

static bool factor(ibWorld* w, ibContactStore* cs, ibContactDirect* D, bool force, bool* fresh)
{
	bool ok = true;
	*fresh = false;
	if (!same_pattern(w, D, &ok)) {
		D->numeric = false;
		D->analysed = false;
		/* [IMPL] only sparse systems (build_pattern refuses others, and the pattern stays refused until
		 * it changes): many contacts at one body (a heap of overlapping spheres) couple all their rows,
		 * and a dense factor costs more than the sweeps */
		if (!ok || !build_pattern(w, D)) return false;
		ibBlockAlloc al = world_alloc(w);
		/* [IMPL] the pattern of another loop's system (the velocity loop after a position loop with the
		 * same blocks): its analysis is copied, not made again (the same ordering: the same factor) */
		const ibContactDirect* E = NULL;
		for (int k = 0; k < IB_CONTACT_DIRECT_SYSTEMS && !E; ++k) {
			const ibContactDirect* X = cs->direct[k];
			if (X && X != D && X->analysed && X->sigLen == D->sigLen &&
			    memcmp(X->sig, D->sig, (size_t)D->sigLen * sizeof(int32_t)) == 0)
				E = X;
		}
		D->analysed = (E ? ib_bchol_copy_analysis(&D->F, &E->F, &al)
		                 : ib_bchol_analyse(&D->F, &al, D->nblk, D->dim, D->nbrStart, D->nbr)) &&
		              D->F.lnz <= 4 * (int64_t)DIR_MAX_COLUMN * D->m;
		if (!D->analysed) return false;
	} else if (!D->analysed) {
		return false; /* the same pattern as a rejected one */
	} else if (D->numeric && !force) {
		/* the factor's geometry must still be close: lever arms and normals within 1e-3 (relative) */
		bool close = true;
		for (int32_t k = 0; k < D->nblk && close; ++k) {
			const double* G = &D->S->blk[k].G[0][0];
			const double* R = D->gref + 72 * (size_t)k;
			/* rows 0..2 hold all of the geometry (e_k, r x e_k; a face's rows 3..5 are (0, e_k)) */
			int len = 6 * (D->S->blk[k].dim < 3 ? D->S->blk[k].dim : 3);
			for (int p = 0; p < 2 && close; ++p)
				for (int q = 0; q < len; ++q) close &= fabs(G[36 * p + q] - R[36 * p + q]) <= 1e-3 * (1.0 + fabs(R[36 * p + q]));
		}
		if (close) return true;
	}
	*fresh = true;
	D->numeric = false;
	ibContactDirectScratch* S = D->S;
	if (!grow_d(w, &D->gref, &D->grefCap, 72 * D->nblk + 1) || !grow_d(w, &S->Ad, &S->AdCap, D->diagOff[D->nblk] + 1) ||
	    !grow_d(w, &S->Ao, &S->AoCap, D->offOff[D->nbrStart[D->nblk]] + 1))
		return false;
	for (int32_t k = 0; k < D->nblk; ++k) memcpy(D->gref + 72 * (size_t)k, &D->S->blk[k].G[0][0], 72 * sizeof(double));
	for (int32_t j = 0; j < D->nblk; ++j) {
		const DBlock* J = &D->S->blk[j];
		for (int s = 0; s < J->dim; ++s) {
			double d = entry(J, s, J, s);
			D->scale[J->off + s] = d > 0.0 ? 1.0 / sqrt(d) : 0.0;
		}
	}
	for (int32_t j = 0; j < D->nblk; ++j) {
		const DBlock* J = &D->S->blk[j];
		const double* sj = D->scale + J->off;
		double* a = S->Ad + D->diagOff[j];
		for (int r = 0; r < J->dim; ++r) {
			for (int s = 0; s < r; ++s) a[J->dim * r + s] = a[J->dim * s + r] = D->scale[J->off + r] * sj[s] * entry(J, r, J, s);
			a[J->dim * r + r] = 1.0 + DIR_REG * row_weight(J, r); /* the regularisation */
		}
		for (int32_t e = D->nbrStart[j]; e < D->nbrStart[j + 1]; ++e) {
			const DBlock* I = &D->S->blk[D->nbr[e]];
			double* b = S->Ao + D->offOff[e];
			for (int r = 0; r < I->dim; ++r)
				for (int s = 0; s < J->dim; ++s) b[J->dim * r + s] = D->scale[I->off + r] * sj[s] * entry(I, r, J, s);
		}
	}
	D->numeric = ib_bchol_factor(&D->F, S->Ad, S->Ao);
	return D->numeric;
}

/* ---------------------------------------------------------------- errors, solve, apply */

/* predicted relative displacement a' - b' still to be removed at a point (gap and static-friction
 * offset beyond their allowances), as the sweeps measure it (contact_joint.c, correct_point) */
static ibVec3 position_error(ibWorld* w, ibContactStore* cs, const ibContactRow* c, double h, bool friction)
{
	ibVec3 a, b, n;
	if (!friction) {
		ib_contact_predicted_points(w, cs, c, h, &a, &b, &n);
		return ibScale(ibDot(ibSub(a, b), n) + c->allowN, n);
	}
	ibVec3 d = ib_contact_tangential(ibNeg(ib_contact_predicted_both(w, cs, c, h, &a, &b, &n)), n);
	ibVec3 e = ibScale(ibDot(ibSub(a, b), n) + c->allowN, n);
	double l = ibLength(d);
	return l > c->allowT ? ibMulAdd(e, 1.0 - c->allowT / l, d) : e;
}

/* right-hand side of block B (rhs[0..dim-1]); returns its largest point error */
static double block_rhs(ibWorld* w, ibContactStore* cs, const DBlock* B, double h, bool velocity, double* rhs)
{
	const ibContactRow* g = &cs->pts[B->pt[0]];
	double err = 0.0;
	if (B->dim == 6) {
		ibVec3 d = IB_VEC3_ZERO, t = IB_VEC3_ZERO;
		if (velocity) {
			const ibBody* x = &w->bodies[g->b1];
			const ibBody* y = &w->bodies[g->b2];
			ibVec3 c = B->pg.c;
			d = ibSub(ibAdd(x->st.v, ibCross(x->st.w, ibSub(c, x->st.s))), ibAdd(y->st.v, ibCross(y->st.w, ibSub(c, y->st.s))));
			t = ibSub(x->st.w, y->st.w);
			for (int i = 0; i < B->m; ++i) err = ib_fmax(err, ibLength(ib_contact_rel_velocity(w, &cs->pts[B->pt[i]])));
		} else {
			/* the rigid fit (offset d at fc, rotation t) of the points' errors, its offset moved to pg.c */
			ibVec3 mom = IB_VEC3_ZERO;
			for (int i = 0; i < B->m; ++i) {
				const ibContactRow* q = &cs->pts[B->pt[i]];
				ibVec3 e = position_error(w, cs, q, h, true);
				err = ib_fmax(err, ibLength(e));
				d = ibAdd(d, e);
				mom = ibAdd(mom, ibCross(ibSub(q->a, B->fc), e));
			}
			d = ibScale(1.0 / (B->m * h), d);
			t = ibScale(1.0 / h, ibMat3_MulV(B->Sinv, mom));
			d = ibAdd(d, ibCross(t, ibSub(B->pg.c, B->fc)));
		}
		for (int k = 0; k < 3; ++k) {
			rhs[k] = -ibDot(d, B->e[k]);
			rhs[3 + k] = -ibDot(t, B->e[k]);
		}
		return err;
	}
	ibVec3 e = velocity ? ib_contact_rel_velocity(w, g) : position_error(w, cs, g, h, B->dim == 3);
	if (B->dim == 3) {
		double s = velocity ? 1.0 : 1.0 / h;
		for (int k = 0; k < 3; ++k) rhs[k] = -s * ibDot(e, B->e[k]);
		return ibLength(e);
	}
	double en = ibDot(e, g->n);
	rhs[0] = velocity ? -en : -en / h;
	return fabs(en);
}

static void apply_block(ibWorld* w, const DBlock* B, const double* dl)
{
	for (int p = 0; p < 2; ++p) {
		if (B->body[p] < 0) continue;
		ibBody* b = &w->bodies[B->body[p]];
		double dv[6] = {0, 0, 0, 0, 0, 0};
		for (int k = 0; k < B->dim; ++k)
			for (int q = 0; q < 6; ++q) dv[q] += dl[k] * B->W[p][6 * k + q];
		b->st.v = ibAdd(b->st.v, ibV3(dv[0], dv[1], dv[2]));
		b->st.w = ibAdd(b->st.w, ibV3(dv[3], dv[4], dv[5]));
		b->velVersion++;
	}
}

/* Impulses for the right-hand side in D->S->rhs (overwritten). The rows of a pile are dependent and the
 * errors never exactly consistent: y = (A + d I)^-1 b carries the inconsistent part b_0 (in the null
 * space of A = of G^T: self-equilibrated impulses that move no body) amplified by 1/d. The second solve
 * x = (A + d W)^-1 A y = (A + d W)^-1 (b - d W y) removes it (its components are b_i l_i / (l_i + d)^2 on the eigenvectors of A):
 * x is the regularised least-squares solution of nearly minimum norm. */
static bool solve(ibContactDirect* D)
{
	int32_t m = D->m;
	double* v = D->S->rhs;
	double* b = D->S->tmp;
	for (int32_t i = 0; i < m; ++i) b[i] = v[i] *= D->scale[i];
	ib_bchol_solve(&D->F, v, v);
	/* A y = (A + d W) y - d W y = b - d W y: no product with A (its rounding is of the same order) */
	for (int32_t j = 0; j < D->nblk; ++j)
		for (int r = 0; r < D->S->blk[j].dim; ++r) {
			int32_t i = D->S->blk[j].off + r;
			v[i] = b[i] - DIR_REG * row_weight(&D->S->blk[j], r) * v[i];
		}
	ib_bchol_solve(&D->F, v, v);
	for (int32_t i = 0; i < m; ++i) {
		v[i] *= D->scale[i];
		if (!isfinite(v[i])) return false;
	}
	return true;
}

/* ---------------------------------------------------------------- distribution to the points */

/* The bodies already carry (N, T) at point q: projected onto N >= 0 and the cone, the difference is
 * applied and the point's accumulated impulses set. */
static void set_point(ibWorld* w, ibContactRow* q, double N, ibVec3 T, bool velocity)
{
	double Np = ib_fmax(0.0, N);
	ibVec3 Tp = ib_contact_tangential(T, q->n);
	double lt = ibLength(Tp), lim = ib_fmax(0.0, q->mus) * Np;
	if (lt > lim) Tp = lt > 0.0 && lim > 0.0 ? ibScale(lim / lt, Tp) : IB_VEC3_ZERO;
	ibVec3 corr = ibMulAdd(ibSub(Tp, T), Np - N, q->n);
	if (ibLengthSq(corr) > 0.0) ib_contact_apply(w, q, corr);
	if (velocity) q->accVN += Np - q->accN;
	q->accN = Np;
	q->accT = Tp;
	if (q->mus > 0.0 && !q->sticking) q->sticking = true; /* held by the solve inside its cone (stickable) */
}

/* the block's impulse components q .. q+2 as a world vector */
static ibVec3 frame_vec(const DBlock* B, int q)
{
	return ibAdd(ibScale(B->lam[q], B->e[0]), ibAdd(ibScale(B->lam[q + 1], B->e[1]), ibScale(B->lam[q + 2], B->e[2])));
}

/* The points' loads of block B (its points' impulses so far plus the block's); true if admissible */
static bool block_loads(const ibContactStore* cs, const DBlock* B, double* N, ibVec3* T)
{
	const ibContactRow* g = &cs->pts[B->pt[0]];
	if (B->dim == 6) {
		const ibContactRow* gp[IB_CONTACT_PATCH_MAX];
		ibVec3 n = B->pg.n, F = frame_vec(B, 0), M = frame_vec(B, 3);
		for (int i = 0; i < B->m; ++i) {
			gp[i] = &cs->pts[B->pt[i]];
			ibVec3 p = ibMulAdd(ib_contact_tangential(gp[i]->accT, n), gp[i]->accN, n);
			F = ibAdd(F, p);
			M = ibAdd(M, ibCross(ibSub(gp[i]->a, B->pg.c), p));
		}
		for (int i = B->group; i < B->m; ++i) N[i] = 0.0, T[i] = IB_VEC3_ZERO; /* folded points: none */
		return ib_contact_patch_loads(gp, &B->pg, F, M, N, T) == 1;
	}
	if (B->dim == 3) {
		ibVec3 p = ibAdd(ibMulAdd(g->accT, g->accN, g->n), frame_vec(B, 0));
		N[0] = ibDot(p, g->n);
		T[0] = ib_contact_tangential(p, g->n);
		return N[0] >= 0.0 && ibLength(T[0]) <= g->mus * N[0];
	}
	N[0] = g->accN + B->lam[0];
	T[0] = g->accT;
	return N[0] >= 0.0;
}

/* The blocks' loads (kept for distribute); the points of the inadmissible blocks change mode for the
 * next pass. False if all are admissible. */
static bool demote(const ibContactStore* cs, ibContactDirect* D, uint8_t* mode)
{
	bool any = false;
	for (int32_t k = 0; k < D->nblk; ++k) {
		DBlock* B = &D->S->blk[k];
		const double* N = B->N;
		const ibVec3* T = B->T;
		if (block_loads(cs, B, B->N, B->T)) continue;
		any = true;
		for (int i = 0; i < B->m; ++i) {
			uint8_t* md = &mode[B->pt[i]];
			if (B->dim == 6) *md |= MODE_SINGLE; /* the face as single points */
			if (N[i] < 0.0) *md |= MODE_OUT;    /* separates (a lifting corner) */
			else if (B->dim == 3 && ibLength(T[i]) > cs->pts[B->pt[i]].mus * N[i]) *md |= MODE_NORMAL; /* slides: to the sweeps */
		}
	}
	return any;
}

/* the loads demote() found admissible become the points' impulses */
static void distribute(ibWorld* w, ibContactStore* cs, ibContactDirect* D, bool velocity)
{
	for (int32_t k = 0; k < D->nblk; ++k) {
		DBlock* B = &D->S->blk[k];
		const double* N = B->N;
		const ibVec3* T = B->T;
		if (B->dim == 6) {
			/* the loads replace the points' impulses; their wrench equals (F, M) up to the points'
			 * offsets along n, and that remainder is applied so that the bodies carry exactly the loads */
			ibVec3 n = B->pg.n, F = frame_vec(B, 0), M = frame_vec(B, 3);
			for (int i = 0; i < B->m; ++i) {
				const ibContactRow* q = &cs->pts[B->pt[i]];
				ibVec3 p0 = ibMulAdd(ib_contact_tangential(q->accT, n), q->accN, n), p1 = ibMulAdd(T[i], N[i], n);
				ibVec3 d = ibSub(p1, p0);
				F = ibSub(F, d);
				M = ibSub(M, ibCross(ibSub(q->a, B->pg.c), d));
			}
			double rest[6];
			for (int q = 0; q < 3; ++q) rest[q] = -ibDot(F, B->e[q]), rest[3 + q] = -ibDot(M, B->e[q]);
			apply_block(w, B, rest);
		}
		for (int i = 0; i < B->m; ++i) set_point(w, &cs->pts[B->pt[i]], N[i], T[i], velocity);
	}
}

static void undo(ibWorld* w, ibContactDirect* D)
{
	for (int32_t k = 0; k < D->nblk; ++k) {
		DBlock* B = &D->S->blk[k];
		double neg[6];
		for (int q = 0; q < B->dim; ++q) neg[q] = -B->lam[q];
		apply_block(w, B, neg);
	}
}

/* One pass: Newton-type iteration of the present blocks; returns 1 if impulses were applied, 0 if the
 * errors were within tolerance, -1 on failure (nothing applied then). */
static int iterate(ibWorld* w, ibContactStore* cs, ibContactDirect* D, double h, bool velocity, double tol, double* final)
{
	double last = INFINITY, first = -1.0, err = 0.0;
	bool ready = false, fresh = false, ran = false;
	for (int it = 0;; ++it) {
		err = 0.0; /* also the final error when the loop ends: nothing is applied after this evaluation */
		for (int32_t k = 0; k < D->nblk; ++k) err = ib_fmax(err, block_rhs(w, cs, &D->S->blk[k], h, velocity, D->S->rhs + D->S->blk[k].off));
		if (first < 0.0) first = err;
		if (!(err > 0.1 * tol) || it == DIR_MAX_ITERATIONS) break;
		bool slow = it >= 1 && err > DIR_SLOW * last; /* a stale factor that no longer halves the error */
		if (slow && fresh) break; /* stagnates with a factor of the present poses: the sweeps go on */
		last = err;
		/* a factor of an earlier instant (last loop, last step) serves while it converges fast */
		if ((!ready || slow) && !factor(w, cs, D, slow, &fresh)) break;
		ready = true;
		if (!solve(D)) {
			D->numeric = false;
			break;
		}
		ran = true;
		for (int32_t k = 0; k < D->nblk; ++k) {
			DBlock* B = &D->S->blk[k];
			const double* dl = D->S->rhs + B->off;
			apply_block(w, B, dl);
			for (int q = 0; q < B->dim; ++q) B->lam[q] += dl[q];
		}
	}
	*final = err;
	if (!ran) return 0;
	if (!(err < first)) { /* no better than before (a diverging iteration): take it back */
		undo(w, D);
		return -1;
	}
	return 1;
}

/* every point a block could hold is within lim: what iterate's first evaluation would find (its block
 * errors are these points' errors or their normal parts), without building the blocks. *all: every
 * resting point is such a point; *worst: their largest error (when true). */
static bool within(ibWorld* w, ibContactStore* cs, double h, bool velocity, double lim, bool* all, double* worst)
{
	*all = true;
	*worst = 0.0;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if (!point_ok(c)) {
			if (c->kind == IB_CONTACT_RESTING) *all = false;
			continue;
		}
		ibVec3 e = velocity ? ib_contact_rel_velocity(w, c) : position_error(w, cs, c, h, true);
		double l = ibLength(e);
		if (!(l <= lim)) return false;
		if (l > *worst) *worst = l; /* (finite here) */
	}
	return true;
}

/* [IMPL] With joints, the points of a jointed dynamic body are left out of the system (MODE_OUT: to the
 * sweeps, which alternate with the joint sweeps): the system knows nothing of the joints, and its
 * impulses on a jointed body would open the joints. The rest of a pile is solved as without joints
 * (wall252: a stone wall hit by a pendulum ball on a ball joint; only the ball's points are swept alone).
 * A static or kinematic body takes no impulse, so a joint to it (a door hinged to the ground) does not
 * take the pile on that body out. */
static bool exclude_jointed(ibWorld* w, ibContactStore* cs, uint8_t* mode)
{
	if (!ib_contacts_mark_jointed(w, cs)) return false;
	for (int32_t k = 0; k < cs->count; ++k) {
		const ibContactRow* c = &cs->pts[k];
		if ((c->b1 >= 0 && cs->jointed[c->b1]) || (c->b2 >= 0 && cs->jointed[c->b2])) mode[k] = MODE_OUT;
	}
	return true;
}

/* [IMPL] every resting point is held by a block of the system (none left to the sweeps: sliding,
 * separating, speculative or frozen). After a solve to within DIR_HELD of the tolerance the position
 * loop's confirming sweep would only apply corrections of the solve's rounding (~1e-11 m on pyramid20),
 * and it is skipped as where the warm start holds. */
static bool holds_all(const ibContactStore* cs, const ibContactDirect* D)
{
	int32_t held = 0, resting = 0;
	for (int32_t k = 0; k < D->nblk; ++k) held += D->S->blk[k].m;
	for (int32_t k = 0; k < cs->count; ++k) resting += cs->pts[k].kind == IB_CONTACT_RESTING;
	return held == resting;
}

/* no resting point was warm-started (a pile's first step) */
static bool cold(const ibContactStore* cs)
{
	for (int32_t k = 0; k < cs->count; ++k)
		if (cs->pts[k].kind == IB_CONTACT_RESTING && cs->pts[k].warm >= 0) return false;
	return true;
}

ibDirectResult ib_contacts_direct(ibWorld* w, ibContactStore* cs, double h, bool velocity)
{
	const ibContactSettings* set = &w->solver.contact;
	if (!set->directSolve || ib_soft_active(w)) return IB_DIRECT_NONE;
	ibContactDirect* D0 = direct_of(w, cs, velocity ? 1 : 0);
	if (!D0 || !ib_grow(w, (void**)&D0->mode, &D0->modeCap, cs->count + 1, 1)) return IB_DIRECT_NONE;
	uint8_t* mode = D0->mode;
	memset(mode, 0, (size_t)cs->count);
	ibContactDirectScratch* S = D0->S;
	if (w->joints && w->joints->basicCount > 0 && !exclude_jointed(w, cs, mode)) return IB_DIRECT_NONE;
	/* [IMPL] on a cold start (no point warm-started) the velocity loop after a position loop that had to
	 * demote starts from that loop's final active set (the same points in the same step): pyramid20's
	 * first step needed the same second pass in both loops, four factorisations on fresh pages. Always
	 * doing so left the sliding-then-resting cubes of Table 5.2 at 2e-8 instead of 1e-14 m/s and the
	 * 20-cube rain's resting bound at 1.0e-4 m (of 1.1e-4; 2.8e-5 before) */
	int first = 0;
	if (!velocity) {
		S->posDemoted = -1;
	} else if (S->posDemoted == cs->count && cs->direct[0] && cs->direct[0]->modeCap > cs->count && cold(cs)) {
		memcpy(mode, cs->direct[0]->mode, (size_t)cs->count);
		first = 1;
	}
	double tol = velocity ? w->solver.velocityTolerance : set->contactPositionTolerance;
	bool all = false;
	double worst = 0.0;
	if (within(w, cs, h, velocity, (velocity ? DIR_WITHIN_VELOCITY : DIR_WITHIN_POSITION) * tol, &all, &worst)) /* the warm start holds: nothing to solve */
		return all && worst <= DIR_HELD * tol ? IB_DIRECT_HELD : IB_DIRECT_NONE;
	/* active set: a pass whose loads are not all admissible is taken back, its offending points change
	 * mode (a face to single points, a sliding point to its normal row, a separating point out) */
	for (int pass = first; pass < DIR_PASSES; ++pass) {
		/* (the cold start's velocity passes use the position loop's later-pass system: its factor serves
		 * while it converges) */
		ibContactDirect* D = pass == 0 ? D0 : direct_of(w, cs, 2 * pass + (velocity && first == 0 ? 1 : 0));
		if (!D || !build_blocks(w, cs, D, mode) || D->nblk == 0) return IB_DIRECT_NONE;
		if (!grow_d(w, &S->rhs, &S->rhsCap, D->m + 1) || !grow_d(w, &S->tmp, &S->tmpCap, D->m + 1)) return IB_DIRECT_NONE;
		double err = INFINITY;
		int r = iterate(w, cs, D, h, velocity, tol, &err);
		if (r <= 0) return IB_DIRECT_NONE;
		if (!demote(cs, D, mode)) {
			distribute(w, cs, D, velocity);
			if (!velocity && pass > 0) S->posDemoted = cs->count;
			return !velocity && err <= DIR_HELD * tol && holds_all(cs, D) ? IB_DIRECT_HELD : IB_DIRECT_SOLVED;
		}
		undo(w, D);
	}
	return IB_DIRECT_NONE;
}
