/* The joints' follow of a contact impulse, solved directly (contact_joint_response.c).
 *
 * A contact point whose step size is the joint system's response K_eff is corrected by an impulse after which
 * the joints must pass it on at once: the follow sweeps (joint velocity rows, the limit rows at their stops)
 * run until they hold. On a ragdoll lying on the ground with a cone at its stop they needed ~65 sweeps per
 * follow (Gauss-Seidel down a chain of ten bodies to 1e-6 m/s), ~500 follows per step, and one step took
 * ~150 ms (seed 36 of the ragdoll probe, docs/contacts.md "Ragdolls").
 *
 * [IMPL] Here the follow's rows of the bodies joined to the point's two bodies (their joint-connected
 * components) are solved as one dense system A x = b, A = J M^-1 J^T at the current poses: every basic joint
 * row (b its relative velocity, as ib_joints_velocity_sweep removes it) and the limit rows that the follow
 * sweeps act on in this phase of the step (ib_limits_follow_rows), with their targets and accumulators. The
 * limit rows are one-sided (their accumulated impulse >= 0): an active-set loop takes a row out where its
 * impulse would pull (its impulse then released to zero, as the sweep does) and puts one in where the others
 * drive it past its target, as the hinge block of joint_limit.c does for one joint. The sweeps still run after
 * it: they confirm the solution (one sweep where it holds) and finish whatever it left. It does nothing (the
 * sweeps alone follow, as before) where the rows are more than FOLLOW_MAX_ROWS (512), where A restricted to the
 * active rows is singular (closed loops: redundant rows), or where the active set does not settle. */
#include <math.h>
#include <string.h>

#include "joints/joint_internal.h"
#include "math/union_find.h"

enum { FOLLOW_MAX_ROWS = 512, FOLLOW_PASSES = 8, FOLLOW_NEWTON = 12 /* Newton steps of a position follow at most */ };

typedef struct ibFollow {
	int32_t* parent; /* union-find over the bodies (joined by basic joints between dynamic bodies) */
	uint8_t* in;     /* the bodies of the two components */
	uint8_t* root;   /* ib_joints_project_direct: 1 at the root of a group not yet solved */
	int32_t* head;   /* per body: its first row side in the lists of build_rows (-1 between calls) */
	ibVec3 *lin, *ang; /* per body: the impulse to apply */
	int32_t bodyCap;
	ibFollowRow rows[FOLLOW_MAX_ROWS];
	double *A, *L;  /* stride x stride each, grown to the largest group (up to FOLLOW_MAX_ROWS) */
	int32_t stride;
	double x[FOLLOW_MAX_ROWS], y[FOLLOW_MAX_ROWS];
	int32_t idx[FOLLOW_MAX_ROWS];
	int32_t first[FOLLOW_MAX_ROWS]; /* per active row i: its first nonzero column in A, and so in L (the envelope) */
	int32_t basic[FOLLOW_MAX_ROWS]; /* position rows: the basic joint of the row (its accPos takes the impulse), else -1 */
	int32_t next[2 * FOLLOW_MAX_ROWS], stamp[FOLLOW_MAX_ROWS]; /* build_rows: the rows of each body, as lists */
	int32_t held[FOLLOW_MAX_ROWS]; /* solve_active: the rows out of the set with an impulse to give back */
	uint8_t use[FOLLOW_MAX_ROWS];
	/* The rows of A are kept while the rows' bodies and Jacobians are the same as those A was built for (the poses of
	 * the loop's instant), from the first row on: the basic rows come first and are the same in the follows, the
	 * position follows and the probes of one loop, the limit rows after them differ. The rows of the factor L are
	 * kept likewise while the active set of the rows before them is the same too. */
	struct { int32_t body[2]; double J[2][6]; } key[FOLLOW_MAX_ROWS];
	int32_t keyCount;      /* rows A was built for */
	uint32_t keyMassEpoch; /* w->massEpoch A was built at */
	uint8_t factored[FOLLOW_MAX_ROWS]; /* the active set L was made for */
	int32_t factoredRows;  /* L holds the active rows among the first factoredRows rows */
} ibFollow;

static void free_bodies(ibWorld* w, ibFollow* f)
{
	ib_free(w, f->parent, (size_t)f->bodyCap * sizeof(int32_t));
	ib_free(w, f->in, (size_t)f->bodyCap);
	ib_free(w, f->root, (size_t)f->bodyCap);
	ib_free(w, f->head, (size_t)f->bodyCap * sizeof(int32_t));
	ib_free(w, f->lin, (size_t)f->bodyCap * sizeof(ibVec3));
	ib_free(w, f->ang, (size_t)f->bodyCap * sizeof(ibVec3));
	f->parent = f->head = NULL, f->in = f->root = NULL, f->lin = f->ang = NULL, f->bodyCap = 0;
}

void ib_joints_follow_free(ibWorld* w)
{
	ibJointStore* st = w->joints;
	if (!st || !st->follow) return;
	free_bodies(w, st->follow);
	ib_free(w, st->follow->A, (size_t)st->follow->stride * (size_t)st->follow->stride * sizeof(double));
	ib_free(w, st->follow->L, (size_t)st->follow->stride * (size_t)st->follow->stride * sizeof(double));
	ib_free(w, st->follow, sizeof(ibFollow));
	st->follow = NULL;
}

static ibFollow* follow_of(ibWorld* w, ibJointStore* st)
{
	if (!st->follow) {
		st->follow = ib_alloc(w, sizeof(ibFollow));
		if (!st->follow) return NULL;
		memset(st->follow, 0, sizeof(ibFollow));
	}
	ibFollow* f = st->follow;
	if (f->bodyCap < w->bodyHigh) {
		free_bodies(w, f);
		int32_t cap = w->bodyHigh + w->bodyHigh / 2 + 8;
		f->parent = ib_alloc(w, (size_t)cap * sizeof(int32_t));
		f->in = ib_alloc(w, (size_t)cap);
		f->root = ib_alloc(w, (size_t)cap);
		f->head = ib_alloc(w, (size_t)cap * sizeof(int32_t));
		f->lin = ib_alloc(w, (size_t)cap * sizeof(ibVec3));
		f->ang = ib_alloc(w, (size_t)cap * sizeof(ibVec3));
		f->bodyCap = cap;
		if (!f->parent || !f->in || !f->root || !f->head || !f->lin || !f->ang) {
			free_bodies(w, f);
			return NULL;
		}
		for (int32_t i = 0; i < cap; ++i) f->head[i] = -1;
	}
	return f;
}


/* parent[]: the dynamic bodies joined by basic joints, as a union-find forest */
static void unite(const ibWorld* w, const ibJointStore* st, ibFollow* f)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) f->parent[i] = i;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		if (!ib_is_dynamic(&w->bodies[c->b1]) || !ib_is_dynamic(&w->bodies[c->b2])) continue;
		int32_t x = ib_uf_find(f->parent, c->b1), y = ib_uf_find(f->parent, c->b2);
		if (x != y) f->parent[x] = y;
	}
}

/* in[i] = 1 for the dynamic bodies of the groups with roots r1, r2 (-1: none) */
static void mark_roots(const ibWorld* w, ibFollow* f, int32_t r1, int32_t r2)
{
	for (int32_t i = 0; i < w->bodyHigh; ++i) {
		int32_t r = ib_is_dynamic(&w->bodies[i]) ? ib_uf_find(f->parent, i) : -2;
		f->in[i] = r == r1 || r == r2;
	}
}

/* in[i] = 1 for the dynamic bodies joint-connected to b1 or b2; false if neither is dynamic */
static bool mark_components(const ibWorld* w, const ibJointStore* st, ibFollow* f, int32_t b1, int32_t b2)
{
	unite(w, st, f);
	int32_t r1 = ib_is_dynamic(&w->bodies[b1]) ? ib_uf_find(f->parent, b1) : -1;
	int32_t r2 = ib_is_dynamic(&w->bodies[b2]) ? ib_uf_find(f->parent, b2) : -1;
	if (r1 < 0 && r2 < 0) return false;
	mark_roots(w, f, r1, r2);
	return true;
}

/* the basic joint rows of the marked bodies: velocity (as ib_joints_velocity_sweep removes their relative velocity),
 * or position (h > 0: as ib_joints_position_sweep removes their predicted error over h; *worst raised to the largest
 * error in tolerances) */
static bool basic_rows(ibWorld* w, ibJointStore* st, ibFollow* f, int32_t* n, double h, double* worst)
{
	const bool position = worst != NULL;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (!f->in[c->b1] && !f->in[c->b2]) continue;
		if (position && c->type->velocityOnly) continue;
		ib_solver_prepare(w, c);
		ibVec3 du;
		if (position) {
			ibVec3 d = ib_solver_excess(c, c->type->error(c, ib_solver_predicted(w, st, c->b1, h), ib_solver_predicted(w, st, c->b2, h)));
			*worst = fmax(*worst, ibLength(d) / (c->type->rotational ? w->solver.angularTolerance : w->solver.positionTolerance));
			du = ibScale(1.0 / h, d);
		} else {
			du = ib_solver_velocity_error(w, c);
		}
		for (int r = 0; r < c->rows; ++r) {
			if (*n >= FOLLOW_MAX_ROWS) return false;
			f->basic[*n] = position ? k : -1;
			ibFollowRow* o = &f->rows[(*n)++];
			ib_follow_basic_row(w, c, r, o);
			o->rhs = ibDot(c->P[r], du);
		}
	}
	return true;
}

/* x for the rows in use (A x = b - A x_held for the others' held x); false if A on them is not positive definite */
static bool solve_active(ibFollow* f, int32_t n)
{
	int32_t m = 0;
	for (int32_t i = 0; i < n; ++i)
		if (f->use[i]) f->idx[m++] = i;
	double* L = f->L;
	int32_t q = f->factoredRows, m0 = 0; /* L's rows for the active rows among the first q are still right */
	for (int32_t i = 0; i < q; ++i) {
		if (f->factored[i] != f->use[i]) q = i;
		else m0 += f->use[i];
	}
	f->factoredRows = 0;
	/* [IMPL] Cholesky within the envelope: a row of L has no entries left of its row's first nonzero in A (a chain's
	 * rows, in their order, make a band: a 50-link chain's 147 rows factor in a fraction of the dense work) */
	for (int32_t i = m0; i < m; ++i) {
		const double* Ai = &f->A[(size_t)f->idx[i] * f->stride];
		double* li = &L[(size_t)i * f->stride];
		int32_t fi = 0;
		while (fi < i && Ai[f->idx[fi]] == 0.0) ++fi;
		f->first[i] = fi;
		for (int32_t k = fi; k <= i; ++k) {
			double s = Ai[f->idx[k]];
			const double* lk = &L[(size_t)k * f->stride];
			for (int32_t z = fi > f->first[k] ? fi : f->first[k]; z < k; ++z) s -= li[z] * lk[z];
			if (i == k) {
				if (!(s > 1e-10 * Ai[f->idx[i]])) return false;
				li[i] = sqrt(s);
			} else {
				li[k] = s / lk[k];
			}
		}
	}
	memcpy(f->factored, f->use, (size_t)n);
	f->factoredRows = n;
	int32_t nh = 0;
	for (int32_t z = 0; z < n; ++z)
		if (!f->use[z] && f->x[z] != 0.0) f->held[nh++] = z;
	for (int32_t i = 0; i < m; ++i) { /* right-hand side: b minus the held rows' effect */
		const int32_t r = f->idx[i];
		double s = f->rows[r].rhs;
		for (int32_t h = 0; h < nh; ++h) s -= f->A[(size_t)r * f->stride + f->held[h]] * f->x[f->held[h]];
		const double* li = &L[(size_t)i * f->stride];
		for (int32_t z = f->first[i]; z < i; ++z) s -= li[z] * f->y[z];
		f->y[i] = s / li[i];
	}
	for (int32_t i = m - 1; i >= 0; --i) { /* L^T x = y by rows of L (within their envelopes), from the last */
		const double* li = &L[(size_t)i * f->stride];
		const double xi = f->y[i] / li[i];
		f->x[f->idx[i]] = xi;
		for (int32_t z = f->first[i]; z < i; ++z) f->y[z] -= li[z] * xi;
	}
	return true;
}

static void apply(ibWorld* w, ibFollow* f, int32_t n)
{
	for (int32_t i = 0; i < n; ++i) {
		const ibFollowRow* r = &f->rows[i];
		for (int p = 0; p < 2; ++p) {
			f->lin[r->body[p]] = IB_VEC3_ZERO;
			f->ang[r->body[p]] = IB_VEC3_ZERO;
		}
	}
	for (int32_t i = 0; i < n; ++i) {
		const ibFollowRow* r = &f->rows[i];
		const double x = f->x[i];
		if (x == 0.0) continue;
		for (int p = 0; p < 2; ++p) {
			const double* J = r->J[p];
			f->lin[r->body[p]] = ibMulAdd(f->lin[r->body[p]], x, ibV3(J[0], J[1], J[2]));
			f->ang[r->body[p]] = ibMulAdd(f->ang[r->body[p]], x, ibV3(J[3], J[4], J[5]));
		}
		if (r->acc) {
			*r->acc += x;
			if (r->side) *r->side = r->sideValue;
		}
		if (f->basic[i] >= 0) { /* as ib_joints_position_sweep keeps them */
			ibBasic* c = &w->joints->basics[f->basic[i]];
			c->warmPos = c->accPos = ibAdd(c->accPos, ibScale(x, c->type->rotational ? ibV3(r->J[0][3], r->J[0][4], r->J[0][5])
			                                                                        : ibV3(r->J[0][0], r->J[0][1], r->J[0][2])));
		}
	}
	for (int32_t i = 0; i < n; ++i) {
		const ibFollowRow* r = &f->rows[i];
		for (int p = 0; p < 2; ++p) {
			const int32_t k = r->body[p];
			ibBody* b = &w->bodies[k];
			if (!ib_is_dynamic(b) || (ibLengthSq(f->lin[k]) == 0.0 && ibLengthSq(f->ang[k]) == 0.0)) continue;
			b->velVersion++;
			b->st.v = ibMulAdd(b->st.v, b->invMass, f->lin[k]);
			b->st.w = ibAdd(b->st.w, ibMat3_MulV(b->invInertiaW, f->ang[k]));
			f->lin[k] = f->ang[k] = IB_VEC3_ZERO; /* once per body */
		}
	}
}

/* A's rows from p on (and their columns): J_i M^-1 J_k^T where rows i and k share a dynamic body, else 0. Each body's
 * rows are listed (head, next) so that a row meets only the rows it shares a body with: a chain's A is a band. */
static void build_rows(const ibWorld* w, ibFollow* f, int32_t p, int32_t n)
{
	for (int32_t i = 0; i < n; ++i) {
		f->stamp[i] = -1;
		for (int q = 0; q < 2; ++q) {
			int32_t b = f->rows[i].body[q];
			if (!ib_is_dynamic(&w->bodies[b]) || (q == 1 && b == f->rows[i].body[0])) continue;
			f->next[2 * i + q] = f->head[b];
			f->head[b] = 2 * i + q;
		}
	}
	for (int32_t i = p; i < n; ++i) {
		memcpy(f->key[i].body, f->rows[i].body, sizeof f->key[i].body);
		memcpy(f->key[i].J, f->rows[i].J, sizeof f->key[i].J);
		double* Ai = &f->A[(size_t)i * f->stride];
		for (int32_t k = 0; k <= i; ++k) Ai[k] = f->A[(size_t)k * f->stride + i] = 0.0;
		for (int q = 0; q < 2; ++q) {
			int32_t b = f->rows[i].body[q];
			if (!ib_is_dynamic(&w->bodies[b]) || (q == 1 && b == f->rows[i].body[0])) continue;
			for (int32_t e = f->head[b]; e >= 0; e = f->next[e]) {
				int32_t k = e / 2;
				if (k > i || f->stamp[k] == i) continue;
				f->stamp[k] = i;
				Ai[k] = f->A[(size_t)k * f->stride + i] = ib_follow_entry(w, &f->rows[i], &f->rows[k]);
			}
		}
	}
	for (int32_t i = 0; i < n; ++i)
		for (int q = 0; q < 2; ++q) f->head[f->rows[i].body[q]] = -1;
}

/* A and L for n rows (their contents dropped when they grow) */
static bool reserve(ibWorld* w, ibFollow* f, int32_t n)
{
	if (n <= f->stride) return true;
	int32_t cap = f->stride < 64 ? 64 : f->stride;
	while (cap < n) cap *= 2;
	if (cap > FOLLOW_MAX_ROWS) cap = FOLLOW_MAX_ROWS;
	size_t bytes = (size_t)cap * (size_t)cap * sizeof(double);
	double *A = ib_alloc(w, bytes), *L = ib_alloc(w, bytes);
	if (!A || !L) {
		ib_free(w, A, bytes);
		ib_free(w, L, bytes);
		return false;
	}
	size_t old = (size_t)f->stride * (size_t)f->stride * sizeof(double);
	ib_free(w, f->A, old);
	ib_free(w, f->L, old);
	f->A = A, f->L = L, f->stride = cap;
	f->keyCount = 0;
	f->factoredRows = 0;
	return true;
}

/* the n rows solved (active set of the one-sided ones) and their impulses applied; false if nothing was applied */
static bool solve_rows(ibWorld* w, ibFollow* f, int32_t n, double tol)
{
	if (!reserve(w, f, n)) return false;
	int32_t p = f->keyMassEpoch == w->massEpoch ? 0 : -1; /* the first row that differs from A's */
	if (p == 0)
		while (p < n && p < f->keyCount && memcmp(f->key[p].body, f->rows[p].body, sizeof f->key[p].body) == 0 &&
		       memcmp(f->key[p].J, f->rows[p].J, sizeof f->key[p].J) == 0)
			++p;
	if (p < 0) p = 0;
	if (f->factoredRows > p) f->factoredRows = p;
	build_rows(w, f, p, n);
	f->keyCount = n;
	f->keyMassEpoch = w->massEpoch;
	for (int32_t i = 0; i < n; ++i) {
		const ibFollowRow* r = &f->rows[i];
		/* a limit row acts where its rate is below its target, or above it while it holds an impulse (the sweeps' rule) */
		f->use[i] = !r->acc || r->rhs > 0.0 || (r->rhs < 0.0 && *r->acc + r->base > 0.0);
	}
	bool settled = false;
	for (int pass = 0; pass < FOLLOW_PASSES && !settled; ++pass) {
		for (int32_t i = 0; i < n; ++i) /* a row out of the set gives back its impulse: zero total */
			f->x[i] = f->use[i] ? 0.0 : (f->rows[i].acc ? fmin(0.0, -(*f->rows[i].acc + f->rows[i].base)) : 0.0);
		if (!solve_active(f, n)) return false;
		settled = true;
		for (int32_t i = 0; i < n; ++i) {
			const ibFollowRow* r = &f->rows[i];
			if (!r->acc) continue;
			const double total = *r->acc + r->base + f->x[i];
			if (f->use[i] && total < 0.0) { /* it would pull */
				f->use[i] = 0;
				settled = false;
			} else if (!f->use[i]) {
				double after = r->rhs; /* target minus the rate after */
				for (int32_t z = 0; z < n; ++z) after -= f->A[(size_t)i * f->stride + z] * f->x[z];
				if (after > tol) { /* driven past its target */
					f->use[i] = 1;
					settled = false;
				}
			}
		}
	}
	if (!settled) return false;
	apply(w, f, n);
	return true;
}

static ibFollow* prepare(ibWorld* w, int32_t b1, int32_t b2)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return NULL;
	ibFollow* f = follow_of(w, st);
	return f && mark_components(w, st, f, b1, b2) ? f : NULL;
}

/* the velocity rows of the marked bodies solved; idle: nothing if every row already holds */
static bool velocity_marked(ibWorld* w, ibFollow* f, double h, bool probe, bool idle)
{
	int32_t n = 0;
	if (!basic_rows(w, w->joints, f, &n, h, NULL) || !ib_limits_follow_rows(w, h, probe, f->in, f->rows, &n, FOLLOW_MAX_ROWS) || n == 0) return false;
	const double tol = w->solver.velocityTolerance;
	if (idle) {
		bool any = false;
		for (int32_t i = 0; i < n && !any; ++i) {
			const ibFollowRow* r = &f->rows[i];
			any = !r->acc ? fabs(r->rhs) > tol : (r->rhs > tol || (r->rhs < -tol && *r->acc + r->base > 0.0));
		}
		if (!any) return false;
	}
	return solve_rows(w, f, n, tol);
}

/* up to FOLLOW_NEWTON Newton steps on the predicted errors of the marked bodies' position rows; true if they end within
 * their tolerances */
static bool position_marked(ibWorld* w, ibFollow* f, double h)
{
	const double tol = fmin(w->solver.positionTolerance, w->solver.angularTolerance) / h;
	for (int it = 0;; ++it) {
		int32_t n = 0;
		double worst = 0.0;
		if (!basic_rows(w, w->joints, f, &n, h, &worst) || !ib_limits_position_rows(w, h, f->in, f->rows, &n, FOLLOW_MAX_ROWS, &worst))
			return false;
		if (worst <= 1.0) return true;
		if (it == FOLLOW_NEWTON || n == 0 || !solve_rows(w, f, n, tol)) return false;
	}
}

bool ib_joints_follow_direct(ibWorld* w, double h, int32_t b1, int32_t b2)
{
	ibFollow* f = prepare(w, b1, b2);
	return f && velocity_marked(w, f, h, false, false);
}

bool ib_joints_probe_direct(ibWorld* w, int32_t b1, int32_t b2)
{
	ibFollow* f = prepare(w, b1, b2);
	return f && velocity_marked(w, f, 0.0, true, false);
}

bool ib_joints_follow_position_direct(ibWorld* w, double h, int32_t b1, int32_t b2)
{
	if (!(h > 0.0) || w->solver.maxCorrectionImpulse > 0.0) return false; /* (a capped impulse: the sweeps' clamp) */
	ibFollow* f = prepare(w, b1, b2);
	return f && position_marked(w, f, h);
}

bool ib_joints_project_direct(ibWorld* w, double h, bool position)
{
	ibJointStore* st = w->joints;
	if (!st || !ib_joints_rebuild_basics(w) || st->basicCount == 0) return false;
	if (position && (!(h > 0.0) || w->solver.maxCorrectionImpulse > 0.0)) return false;
	ibFollow* f = follow_of(w, st);
	if (!f) return false;
	unite(w, st, f);
	bool any = false;
	memset(f->root, 0, (size_t)w->bodyHigh);
	for (int32_t k = 0; k < st->basicCount; ++k) {
		const ibBasic* c = &st->basics[k];
		int32_t b = ib_is_dynamic(&w->bodies[c->b1]) ? c->b1 : c->b2;
		if (ib_is_dynamic(&w->bodies[b])) f->root[ib_uf_find(f->parent, b)] = 1;
	}
	for (int32_t r = 0; r < w->bodyHigh; ++r) {
		if (!f->root[r]) continue;
		mark_roots(w, f, r, -1);
		if (position ? position_marked(w, f, h) : velocity_marked(w, f, 0.0, false, true)) any = true;
	}
	return any;
}
