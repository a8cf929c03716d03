/* LGS method (§3.3.2) in O(n) for joint graphs; loops are cut (§3.3.2.3, option 1).
 * The joint system M x = dv with M = J Mass^-1 J^T (blocks P_i M~_ij P_j^T of §3.3.2.2) is solved
 * through the equivalent symmetric system on the body/joint graph (Baraff 1996):
 *     [ Mass  J^T ] [ dv ]   [  0  ]
 *     [  J     0  ] [ mu ] = [ rhs ]      (impulses lambda = -mu; dv = Mass^-1 J^T lambda)
 * whose graph (a node per dynamic body, a node per joint) is a forest when the joints form no loop.
 * Eliminating the nodes leaves-first gives block LDL^T with no fill-in, whatever the degree of a
 * body: every node keeps one dense block (<= 6x6) and one block to its parent. The solution dv is
 * applied to the bodies directly. Joint correction: rhs_i = P_i d_i(t0+h)/h, iterated on the
 * predicted errors with one factorisation; velocity correction: rhs_i = P_i (u_b - u_a), exact in
 * one solve. The factorisation made at t0+h is reused by the next step's joint correction. */
#include <math.h>
#include <string.h>

#include "joints/joint_internal.h"
#include "math/v2.h"

typedef struct TreeNode {
	int32_t parent; /* node index in the contracted forest, -1 for roots */
	int32_t body;   /* body index (body node) or -1 */
	int32_t joint;  /* public joint index (joint node) or -1 */
	int dim;
	bool contracted; /* body node eliminated analytically (<= 2 joints, not a root) */
	int32_t via;     /* joint node whose parent joint is reached through a contracted body: that body node, else -1 */
	int32_t side[2]; /* joint node: body node of side 0 (bodyA) / 1 (bodyB), -1 if not dynamic */
	int32_t adj[2];  /* contracted body node: its parent joint node and its child joint node (-1 if none) */
	double Dinv[36]; /* inverse of the eliminated diagonal block, dim x dim */
	double Au[36];   /* block H(node, parent), dim x dim(parent) */
	double Ad[36];   /* block H(parent, node), dim(parent) x dim */
	double G[2][36];  /* joint node: impulse rows G of side 0/1 (dim x 6) */
	double Gr[2][36]; /* joint node: response rows G' of side 0/1 (dim x 6) */
	double Y[2][36];  /* joint node, contracted side: Mass^-1 G^T (6 x dim) */
	/* ball joints (P = identity), contracted side: G = sg [E, [r]x^T], Mass^-1 G^T = sg (E/m; A) with
	 * A = J^-1 [r]x, and the response rows G' = sg [E, [r']x^T] (r' the response lever arm) */
	bool ball;
	double sg[2], invMass[2];
	ibMat3 A[2];
	ibVec3 rr[2];
	double b[6], z[6], x[6];
} TreeNode;

/* A joint node of a ball chain in the compact form of factor_ball_links / solve_ball_links: its hot
 * fields in ~0.6 KB instead of the general node's ~2.8 KB (the factorisation and every solve walk all
 * of them). Link k is the k-th node of the elimination order. */
typedef struct LinkNode {
	double Dinv[9], Au[9], Ad[9];
	ibMat3 A[2];
	ibVec3 rr[2];
	double sg[2], invMass[2];
	double b[3], x[3];
	int32_t parent;  /* link of the parent joint node, -1 for the root */
	int32_t basic;   /* its ball basic */
	int32_t body[2]; /* bodies of side 0 / 1 (-1: not dynamic) */
	int8_t sn, sp;   /* side of the body shared with the parent link, at this link / at the parent */
} LinkNode;

/* A contracted body of a ball chain: its (one or two) links and its side at each. */
typedef struct LinkBody {
	int32_t body;
	int32_t link[2]; /* parent joint's link, child joint's link (-1 if none) */
	int8_t side[2];
	double x[6]; /* its velocity change of the last solve */
} LinkBody;

typedef struct LgsTree {
	TreeNode* nodes;
	int32_t nodeCapacity, nodeCount;
	int32_t* order; /* leaves first: the elimCount nodes that are eliminated, then the contracted bodies */
	int32_t orderCapacity;
	int32_t elimCount;
	int32_t* bodyNode; /* body index -> node or -1 */
	int32_t bodyNodeCapacity;
	int32_t* uf;       /* union-find over bodies (loop test) */
	int32_t ufCapacity;
	int32_t* stack;
	int32_t stackCapacity;
	uint32_t builtFor;     /* basics layout generation it was built for */
	bool acyclic;             /* usable (built without error) */
	bool hasCut;              /* some joints close loops and are solved iteratively between solves */
	bool includeVelocityOnly; /* layout of the current factorisation */
	uint32_t factorEpoch;     /* w->poseEpoch of the current factorisation (0 = none) */
	bool linksOnly;           /* every body node is contracted (chains held by the world) */
	uint32_t leverEpoch;      /* w->poseEpoch at which the ball nodes' sg, invMass, A were computed (0 = none) */
	bool ballLinks;           /* the current factorisation is factor_ball_links' */
	bool fdSet;               /* some basic has haveDEdu (fd_response ran in this joint correction) */
	LinkNode* links;          /* linksOnly: the elimCount joint nodes in elimination order */
	int32_t linkCapacity;
	LinkBody* linkBodies;     /* linksOnly: the nodeCount - elimCount contracted bodies */
	int32_t linkBodyCapacity;
} LgsTree;

/* The tree lives beside the joint store; allocated on first use. */
static LgsTree* tree_of(ibWorld* w, bool create)
{
	ibJointStore* st = w->joints;
	if (!st->lgs && create) {
		st->lgs = ib_alloc(w, sizeof(LgsTree));
		if (st->lgs) memset(st->lgs, 0, sizeof(LgsTree));
	}
	return st->lgs;
}

void ib_lgs_free(ibWorld* w)
{
	ibJointStore* st = w->joints;
	LgsTree* t = st ? st->lgs : NULL;
	if (!t) return;
	ib_free(w, t->nodes, (size_t)t->nodeCapacity * sizeof(TreeNode));
	ib_free(w, t->order, (size_t)t->orderCapacity * sizeof(int32_t));
	ib_free(w, t->bodyNode, (size_t)t->bodyNodeCapacity * sizeof(int32_t));
	ib_free(w, t->uf, (size_t)t->ufCapacity * sizeof(int32_t));
	ib_free(w, t->stack, (size_t)t->stackCapacity * sizeof(int32_t));
	ib_free(w, t->links, (size_t)t->linkCapacity * sizeof(LinkNode));
	ib_free(w, t->linkBodies, (size_t)t->linkBodyCapacity * sizeof(LinkBody));
	ib_free(w, t, sizeof *t);
	st->lgs = NULL;
}

static int32_t uf_find(int32_t* p, int32_t i)
{
	while (p[i] != i) i = p[i] = p[p[i]];
	return i;
}

static int joint_rows(const ibJointStore* st, const ibJoint* j, bool velocityOnlyToo)
{
	int n = 0;
	for (int k = 0; k < j->basicCount; ++k) {
		const ibBasic* c = &st->basics[j->basic[k]];
		if (c->type->velocityOnly && !velocityOnlyToo) continue;
		n += c->rows;
	}
	return n;
}

/* The joint has basics in the store's current view (the O(n) LGS range, solver_select.c). */
static bool in_view(const ibJointStore* st, const ibJoint* j)
{
	return j->inUse && j->basicCount > 0 && j->basic[0] < st->basicCount;
}

/* Bodies with at most two tree joints that are not roots (chain links, leaves) are eliminated
 * first and analytically: their block is the mass matrix, so eliminating one only joins its two
 * joints by a joint-joint block -G'_c Mass^-1 G_p^T (the joint-space blocks of §3.3.2.2) and
 * leaves the graph a forest; the joint diagonal gets -G' Mass^-1 G^T. Bodies with more joints stay
 * nodes (Baraff's ordering: no fill-in whatever the degree). */
static void contract(ibWorld* w, LgsTree* t, int32_t firstJointNode)
{
	const ibJointStore* st = w->joints;
	int32_t* children = t->stack; /* scratch: number of children per node */
	for (int32_t i = 0; i < t->nodeCount; ++i) children[i] = 0;
	for (int32_t i = 0; i < t->nodeCount; ++i)
		if (t->nodes[i].parent >= 0) children[t->nodes[i].parent]++;
	for (int32_t i = 0; i < firstJointNode; ++i) {
		TreeNode* n = &t->nodes[i];
		n->contracted = n->parent >= 0 && children[i] <= 1;
		n->adj[0] = n->parent;
		n->adj[1] = -1;
	}
	for (int32_t i = firstJointNode; i < t->nodeCount; ++i) {
		TreeNode* n = &t->nodes[i];
		const ibJoint* j = &st->joints[n->joint];
		int32_t bodies[2] = {j->def.bodyA.index1 - 1, j->def.bodyB.index1 - 1};
		for (int k = 0; k < 2; ++k) n->side[k] = ib_is_dynamic(&w->bodies[bodies[k]]) ? t->bodyNode[bodies[k]] : -1;
		n->via = -1;
		if (n->parent >= 0 && t->nodes[n->parent].contracted) {
			TreeNode* b = &t->nodes[n->parent];
			n->via = n->parent;
			b->adj[1] = i;
			n->parent = b->parent;
		}
	}
}

static int side_of(const TreeNode* jn, int32_t bn);

/* The compact links of a ball chain (linksOnly), from the contracted forest; false if out of memory. */
static bool build_links(ibWorld* w, LgsTree* t)
{
	const ibJointStore* st = w->joints;
	int32_t nl = t->elimCount, nb = t->nodeCount - t->elimCount;
	if (!ib_grow(w, (void**)&t->links, &t->linkCapacity, nl + 1, sizeof(LinkNode)) ||
	    !ib_grow(w, (void**)&t->linkBodies, &t->linkBodyCapacity, nb + 1, sizeof(LinkBody)))
		return false;
	int32_t* linkOf = t->stack; /* node -> link */
	for (int32_t k = 0; k < nl; ++k) linkOf[t->order[k]] = k;
	for (int32_t k = 0; k < nl; ++k) {
		const TreeNode* n = &t->nodes[t->order[k]];
		const ibJoint* j = &st->joints[n->joint];
		LinkNode* l = &t->links[k];
		memset(l, 0, sizeof *l);
		l->basic = j->basic[0];
		int32_t bodies[2] = {j->def.bodyA.index1 - 1, j->def.bodyB.index1 - 1};
		for (int sd = 0; sd < 2; ++sd) l->body[sd] = n->side[sd] >= 0 ? bodies[sd] : -1;
		l->parent = n->parent >= 0 ? linkOf[n->parent] : -1;
		if (n->parent >= 0) {
			l->sn = (int8_t)side_of(n, n->via);
			l->sp = (int8_t)side_of(&t->nodes[n->parent], n->via);
		}
	}
	for (int32_t k = 0; k < nb; ++k) {
		int32_t ni = t->order[nl + k];
		const TreeNode* n = &t->nodes[ni];
		LinkBody* lb = &t->linkBodies[k];
		memset(lb, 0, sizeof *lb);
		lb->body = n->body;
		for (int a = 0; a < 2; ++a) {
			lb->link[a] = n->adj[a] >= 0 ? linkOf[n->adj[a]] : -1;
			lb->side[a] = (int8_t)(n->adj[a] >= 0 ? side_of(&t->nodes[n->adj[a]], ni) : 0);
		}
	}
	return true;
}

/* Build the forest (topology only) and the elimination order; false if the graph has a loop. */
static bool build(ibWorld* w, LgsTree* t)
{
	ibJointStore* st = w->joints;
	int32_t nb = w->bodyHigh, nj = st->jointHigh;
	if (!ib_grow(w, (void**)&t->nodes, &t->nodeCapacity, nb + nj + 1, sizeof(TreeNode)) ||
	    !ib_grow(w, (void**)&t->order, &t->orderCapacity, nb + nj + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&t->bodyNode, &t->bodyNodeCapacity, nb + 1, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&t->uf, &t->ufCapacity, nb + 2, sizeof(int32_t)) ||
	    !ib_grow(w, (void**)&t->stack, &t->stackCapacity, nb + nj + 1, sizeof(int32_t)))
		return false;
	/* loop test: union-find over dynamic bodies plus one "world" node (index nb) standing for all
	 * static and kinematic bodies: a chain held by the world at two points is a loop too */
	for (int32_t i = 0; i <= nb; ++i) t->uf[i] = i;
	t->hasCut = false;
	for (int32_t i = 0; i < nj; ++i) {
		ibJoint* j = &st->joints[i];
		if (!in_view(st, j)) continue;
		int32_t a = j->def.bodyA.index1 - 1, b = j->def.bodyB.index1 - 1;
		if (!ib_is_dynamic(&w->bodies[a])) a = nb;
		if (!ib_is_dynamic(&w->bodies[b])) b = nb;
		int32_t ra = uf_find(t->uf, a), rb = uf_find(t->uf, b);
		bool cut = ra == rb; /* closes a loop: leave it out of the tree */
		if (!cut) t->uf[ra] = rb;
		t->hasCut |= cut;
		for (int k = 0; k < j->basicCount; ++k) st->basics[j->basic[k]].cut = cut;
	}
	/* nodes: dynamic bodies that have joints, and joints */
	t->nodeCount = 0;
	for (int32_t i = 0; i < nb; ++i) t->bodyNode[i] = -1;
	for (int32_t i = 0; i < nj; ++i) {
		ibJoint* j = &st->joints[i];
		if (!in_view(st, j) || st->basics[j->basic[0]].cut) continue;
		int32_t bodies[2] = {j->def.bodyA.index1 - 1, j->def.bodyB.index1 - 1};
		for (int k = 0; k < 2; ++k) {
			int32_t bi = bodies[k];
			if (!ib_is_dynamic(&w->bodies[bi]) || t->bodyNode[bi] >= 0) continue;
			TreeNode* n = &t->nodes[t->nodeCount];
			memset(n, 0, sizeof *n);
			n->body = bi;
			n->joint = -1;
			n->parent = -2; /* unvisited */
			n->dim = 6;
			t->bodyNode[bi] = t->nodeCount++;
		}
	}
	int32_t firstJointNode = t->nodeCount;
	for (int32_t i = 0; i < nj; ++i) {
		ibJoint* j = &st->joints[i];
		if (!in_view(st, j) || st->basics[j->basic[0]].cut) continue;
		TreeNode* n = &t->nodes[t->nodeCount++];
		memset(n, 0, sizeof *n);
		n->body = -1;
		n->joint = i;
		n->parent = -2;
	}
	/* Orient the forest. A joint with a single dynamic body has a zero diagonal block and must not be
	 * a leaf, so a component held by the world is rooted at its (only) world joint; free components
	 * at a body. DFS records a pre-order; reversed, it eliminates children before parents. */
	int32_t nOrder = 0;
	for (int pass = 0; pass < 2; ++pass) {
		for (int32_t r = pass == 0 ? firstJointNode : 0; r < (pass == 0 ? t->nodeCount : firstJointNode); ++r) {
			if (t->nodes[r].parent != -2) continue;
			if (pass == 0) {
				const ibJoint* j = &st->joints[t->nodes[r].joint];
				if (ib_is_dynamic(&w->bodies[j->def.bodyA.index1 - 1]) && ib_is_dynamic(&w->bodies[j->def.bodyB.index1 - 1]))
					continue;
			}
			int32_t sp = 0;
			t->nodes[r].parent = -1;
			t->stack[sp++] = r;
			while (sp > 0) {
				int32_t ni = t->stack[--sp];
				t->order[nOrder++] = ni;
				TreeNode* n = &t->nodes[ni];
				if (n->body >= 0) {
					for (int32_t k = firstJointNode; k < t->nodeCount; ++k) {
						TreeNode* jn = &t->nodes[k];
						if (jn->parent != -2) continue;
						const ibJoint* j = &st->joints[jn->joint];
						if (j->def.bodyA.index1 - 1 == n->body || j->def.bodyB.index1 - 1 == n->body) {
							jn->parent = ni;
							t->stack[sp++] = k;
						}
					}
				} else {
					const ibJoint* j = &st->joints[n->joint];
					int32_t bodies[2] = {j->def.bodyA.index1 - 1, j->def.bodyB.index1 - 1};
					for (int k = 0; k < 2; ++k) {
						int32_t bn = t->bodyNode[bodies[k]];
						if (bn < 0 || t->nodes[bn].parent != -2) continue;
						t->nodes[bn].parent = ni;
						t->stack[sp++] = bn;
					}
				}
			}
		}
	}
	for (int32_t i = 0; i < nOrder / 2; ++i) {
		int32_t tmp = t->order[i];
		t->order[i] = t->order[nOrder - 1 - i];
		t->order[nOrder - 1 - i] = tmp;
	}
	if (nOrder != t->nodeCount) return false;
	contract(w, t, firstJointNode);
	/* stable partition: the factor and solve loops walk only the nodes they touch */
	int32_t ne = 0;
	for (int32_t i = 0; i < nOrder; ++i)
		if (!t->nodes[t->order[i]].contracted) t->stack[ne++] = t->order[i];
	t->elimCount = ne;
	t->linksOnly = true;
	for (int32_t i = 0; i < ne; ++i) t->linksOnly &= t->nodes[t->stack[i]].joint >= 0;
	t->leverEpoch = 0;
	t->ballLinks = false;
	for (int32_t i = 0; i < nOrder; ++i)
		if (t->nodes[t->order[i]].contracted) t->stack[ne++] = t->order[i];
	memcpy(t->order, t->stack, sizeof(int32_t) * (size_t)nOrder);
	if (t->linksOnly) return build_links(w, t);
	return true;
}

/* Rebuilding the whole neighbour scan is O(n * joints) — done once per topology change. */
bool ib_lgs_applicable(ibWorld* w)
{
	ibJointStore* st = w->joints;
	LgsTree* t = tree_of(w, true);
	if (!t) return false;
	if (t->builtFor != st->layoutVersion) {
		t->acyclic = build(w, t);
		t->builtFor = st->layoutVersion;
		t->factorEpoch = 0;
	}
	return t->acyclic;
}

/* Jacobian row of one projection row of basic c for body bi (6 entries: linear, angular). */
static void jacobian_row(const ibWorld* w, const ibBasic* c, int r, int32_t bi, bool response, double out[6])
{
	double sgn = (bi == c->b1) ? 1.0 : -1.0;
	ibVec3 P = c->P[r];
	if (response && c->haveDEdu) { /* row = -(1/h) P_r . dd/du, h folded in by the caller (see fd_response) */
		const double(*D)[6] = c->dEdu[bi == c->b1 ? 0 : 1];
		for (int q = 0; q < 6; ++q) out[q] = -(P.x * D[0][q] + P.y * D[1][q] + P.z * D[2][q]);
		return;
	}
	if (c->type->rotational) {
		out[0] = out[1] = out[2] = 0.0;
		out[3] = sgn * P.x;
		out[4] = sgn * P.y;
		out[5] = sgn * P.z;
		return;
	}
	const ibBody* b = &w->bodies[bi];
	ibVec3 rr = response ? (bi == c->b1 ? c->raResp : c->rbResp) : ibSub(bi == c->b1 ? c->a : c->b, b->st.s);
	ibVec3 m = ibCross(rr, P);
	out[0] = sgn * P.x;
	out[1] = sgn * P.y;
	out[2] = sgn * P.z;
	out[3] = sgn * m.x;
	out[4] = sgn * m.y;
	out[5] = sgn * m.z;
}

/* Gauss-Jordan inverse with partial pivoting of an n x n block (n <= 6); false if singular. */
static inline __attribute__((always_inline)) bool invert_n(const double* M, int n, double* inv)
{
	double a[6][12];
	double scale = 0.0;
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j) {
			a[i][j] = M[i * n + j];
			a[i][n + j] = (i == j) ? 1.0 : 0.0;
			double v = fabs(a[i][j]);
			if (v > scale) scale = v; /* as fmax: a NaN entry leaves scale */
		}
	for (int c = 0; c < n; ++c) {
		int p = c;
		for (int i = c + 1; i < n; ++i)
			if (fabs(a[i][c]) > fabs(a[p][c])) p = i;
		if (!(fabs(a[p][c]) > 1e-13 * scale)) return false;
		/* columns <= c of the left half are never read again (pivot columns only move right, the
		 * inverse is the right half): the row operations start at c + 1 (same result, 30 % fewer) */
		if (p != c)
			for (int j = c; j < 2 * n; ++j) {
				double tmp = a[c][j];
				a[c][j] = a[p][j];
				a[p][j] = tmp;
			}
		double d = 1.0 / a[c][c];
		for (int j = c + 1; j < 2 * n; ++j) a[c][j] *= d;
		for (int i = 0; i < n; ++i) {
			if (i == c || a[i][c] == 0.0) continue;
			double f = a[i][c];
#pragma GCC unroll 12
			for (int j = c + 1; j < 2 * n; ++j) a[i][j] -= f * a[c][j];
		}
	}
	for (int i = 0; i < n; ++i)
		for (int j = 0; j < n; ++j) inv[i * n + j] = a[i][n + j];
	return true;
}

/* 3 x 3 by cofactors when clearly regular (|det| > 1e-6 scale^3), else Gauss-Jordan decides. */
static inline __attribute__((always_inline)) bool invert3_inline(const double* M, double* inv)
{
	double scale = 0.0;
	for (int i = 0; i < 9; ++i) {
		double v = fabs(M[i]);
		if (v > scale) scale = v;
	}
	double c0 = M[4] * M[8] - M[5] * M[7], c1 = M[5] * M[6] - M[3] * M[8], c2 = M[3] * M[7] - M[4] * M[6];
	double det = M[0] * c0 + M[1] * c1 + M[2] * c2;
	if (!(fabs(det) > 1e-6 * scale * scale * scale)) return invert_n(M, 3, inv);
	double id = 1.0 / det;
	inv[0] = c0 * id;
	inv[1] = (M[2] * M[7] - M[1] * M[8]) * id;
	inv[2] = (M[1] * M[5] - M[2] * M[4]) * id;
	inv[3] = c1 * id;
	inv[4] = (M[0] * M[8] - M[2] * M[6]) * id;
	inv[5] = (M[2] * M[3] - M[0] * M[5]) * id;
	inv[6] = c2 * id;
	inv[7] = (M[1] * M[6] - M[0] * M[7]) * id;
	inv[8] = (M[0] * M[4] - M[1] * M[3]) * id;
	return true;
}

static bool invert3(const double* M, double* inv) { return invert3_inline(M, inv); }

static bool invert(const double* M, int n, double* inv)
{
	if (n == 3) return invert3(M, inv);
	if (n == 6) return invert_n(M, 6, inv);
	return invert_n(M, n, inv);
}

/* C (n x m) = A (n x k) B (k x m), or C -= A B with sub. The common block sizes (3 for ball
 * joints, 6 for bodies) get their own unrolled copies. */
static inline __attribute__((always_inline)) void mat_mul_n(const double* A, const double* B, double* C, int n, int k,
                                                            int m, bool sub)
{
	/* unrolled: the sizes are constants after inlining, but -O2 keeps 3- and 6-trip loops */
	for (int i = 0; i < n; ++i)
#pragma GCC unroll 6
		for (int q = 0; q < m; ++q) {
			double s = 0.0;
#pragma GCC unroll 6
			for (int l = 0; l < k; ++l) s += A[i * k + l] * B[l * m + q];
			C[i * m + q] = sub ? C[i * m + q] - s : s;
		}
}


/* C = A B or C -= A B for 3 x 3 blocks, written out (the loop form was not unrolled at -O2); columns
 * 0 and 1 of each row as a pair, every entry summed as a_i0 b_0q + a_i1 b_1q + a_i2 b_2q. */
static inline __attribute__((always_inline)) void mat_mul3(const double* A, const double* B, double* C, bool sub)
{
	const ibV2 b0 = ib_v2_load(B), b1 = ib_v2_load(B + 3), b2 = ib_v2_load(B + 6);
	ibV2 r01[3];
	double r2[3];
	for (int i = 0; i < 3; ++i) {
		const double a0 = A[3 * i], a1 = A[3 * i + 1], a2 = A[3 * i + 2];
		r01[i] = ib_v2_bc(a0) * b0 + ib_v2_bc(a1) * b1 + ib_v2_bc(a2) * b2;
		r2[i] = a0 * B[2] + a1 * B[5] + a2 * B[8];
	}
	for (int i = 0; i < 3; ++i) {
		if (sub) {
			ib_v2_store(C + 3 * i, ib_v2_load(C + 3 * i) - r01[i]);
			C[3 * i + 2] -= r2[i];
		} else {
			ib_v2_store(C + 3 * i, r01[i]);
			C[3 * i + 2] = r2[i];
		}
	}
}

static inline __attribute__((always_inline)) void mat_mul(const double* A, const double* B, double* C, int n, int k,
                                                          int m, bool sub)
{
	if (n == 3 && k == 3 && m == 3) {
		mat_mul3(A, B, C, sub);
		return;
	}
#define IB_MM_CASE(N, K, M)                                                                                        \
	if (n == N && k == K && m == M) {                                                                              \
		if (sub)                                                                                                   \
			mat_mul_n(A, B, C, N, K, M, true);                                                                     \
		else                                                                                                       \
			mat_mul_n(A, B, C, N, K, M, false);                                                                    \
		return;                                                                                                    \
	}
	IB_MM_CASE(3, 6, 3)
	IB_MM_CASE(3, 3, 6)
	IB_MM_CASE(6, 3, 6)
	IB_MM_CASE(6, 6, 3)
	IB_MM_CASE(3, 6, 6)
	IB_MM_CASE(6, 3, 3)
#undef IB_MM_CASE
	mat_mul_n(A, B, C, n, k, m, sub);
}

/* y (n) = A (n x m) x (m); y -= A x with sub. */
static inline __attribute__((always_inline)) void mat_vec_n(const double* A, const double* x, double* y, int n, int m,
                                                            bool sub)
{
	for (int i = 0; i < n; ++i) {
		double s = 0.0;
#pragma GCC unroll 6
		for (int l = 0; l < m; ++l) s += A[i * m + l] * x[l];
		y[i] = sub ? y[i] - s : s;
	}
}

/* 3 x 3 written out: the loop form was not unrolled at -O2 (a third of the solve's instructions). */
static inline __attribute__((always_inline)) void mat_vec3(const double* A, const double* x, double* y, bool sub)
{
	double y0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
	double y1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
	double y2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
	if (sub) {
		y[0] -= y0;
		y[1] -= y1;
		y[2] -= y2;
	} else {
		y[0] = y0;
		y[1] = y1;
		y[2] = y2;
	}
}

static inline __attribute__((always_inline)) void mat_vec(const double* A, const double* x, double* y, int n, int m,
                                                          bool sub)
{
	if (n == 3 && m == 3)
		mat_vec3(A, x, y, sub);
	else if (n == 6 && m == 3)
		sub ? mat_vec_n(A, x, y, 6, 3, true) : mat_vec_n(A, x, y, 6, 3, false);
	else if (n == 3 && m == 6)
		sub ? mat_vec_n(A, x, y, 3, 6, true) : mat_vec_n(A, x, y, 3, 6, false);
	else if (n == 6 && m == 6)
		sub ? mat_vec_n(A, x, y, 6, 6, true) : mat_vec_n(A, x, y, 6, 6, false);
	else
		mat_vec_n(A, x, y, n, m, sub);
}

/* Side (0/1) of joint node jn at which body node bn sits. */
static int side_of(const TreeNode* jn, int32_t bn) { return jn->side[0] == bn ? 0 : 1; }

/* A [r]x without the zero products of a general 3x3 product. */
static inline ibMat3 mul_skew_right(ibMat3 A, ibVec3 r)
{
	ibMat3 C;
	for (int i = 0; i < 3; ++i) {
		C.m[i][0] = A.m[i][1] * r.z - A.m[i][2] * r.y;
		C.m[i][1] = A.m[i][2] * r.x - A.m[i][0] * r.z;
		C.m[i][2] = A.m[i][0] * r.y - A.m[i][1] * r.x;
	}
	return C;
}

/* out (3 x 3, row-major) = s (im E - [r]x A), written out: the point-response block of a contracted
 * ball-joint body (the ibMat3-valued loop form cost ~4x the arithmetic); columns 0 and 1 as pairs. */
static inline __attribute__((always_inline)) void point_block(double* out, double s, double im, ibVec3 r, const ibMat3* A)
{
	const double* a0 = A->m[0];
	const double* a1 = A->m[1];
	const double* a2 = A->m[2];
	const ibV2 rx = ib_v2_bc(r.x), ry = ib_v2_bc(r.y), rz = ib_v2_bc(r.z), s2 = ib_v2_bc(s);
	const ibV2 A0 = ib_v2_load(a0), A1 = ib_v2_load(a1), A2 = ib_v2_load(a2);
	ib_v2_store(out, s2 * ((ibV2){im, 0.0} - (ry * A2 - rz * A1)));
	ib_v2_store(out + 3, s2 * ((ibV2){0.0, im} - (rz * A0 - rx * A2)));
	ib_v2_store(out + 6, s2 * ((ibV2){0.0, 0.0} - (rx * A1 - ry * A0)));
	out[2] = s * (0.0 - (r.y * a2[2] - r.z * a1[2]));
	out[5] = s * (0.0 - (r.z * a0[2] - r.x * a2[2]));
	out[8] = s * (im - (r.x * a1[2] - r.y * a0[2]));
}

/* D -= im E - [r]x A (3 x 3, row-major), columns 0 and 1 as pairs. */
static inline __attribute__((always_inline)) void point_block_sub(double* D, double im, ibVec3 r, const ibMat3* A)
{
	const double* a0 = A->m[0];
	const double* a1 = A->m[1];
	const double* a2 = A->m[2];
	const ibV2 rx = ib_v2_bc(r.x), ry = ib_v2_bc(r.y), rz = ib_v2_bc(r.z);
	const ibV2 A0 = ib_v2_load(a0), A1 = ib_v2_load(a1), A2 = ib_v2_load(a2);
	ib_v2_store(D, ib_v2_load(D) + (ry * A2 - rz * A1));
	ib_v2_store(D + 3, ib_v2_load(D + 3) + (rz * A0 - rx * A2));
	ib_v2_store(D + 6, ib_v2_load(D + 6) + (rx * A1 - ry * A0));
	D[2] += r.y * a2[2] - r.z * a1[2];
	D[5] += r.z * a0[2] - r.x * a2[2];
	D[8] += r.x * a1[2] - r.y * a0[2];
	D[0] -= im;
	D[4] -= im;
	D[8] -= im;
}

/* factor() for ball joints whose bodies are all contracted (chains held by the world): the same
 * blocks and operations in the same order as the general path, in two passes over the joint nodes
 * (their blocks; then, leaves first, the coupling blocks and the elimination) and without its
 * per-node dispatch. The t0 columns (sg, 1/m, A = J^-1 [r]x) depend only on the poses: the ones of
 * the velocity correction at this instant are kept for the joint correction's rebuilds. */
static __attribute__((noinline)) bool factor_ball_links(ibWorld* w, LgsTree* t)
{
	const ibJointStore* st = w->joints;
	bool columns = t->leverEpoch != w->poseEpoch;
	t->ballLinks = false;
	for (int32_t k = 0; k < t->elimCount; ++k) {
		LinkNode* n = &t->links[k];
		const ibBasic* c0 = &st->basics[n->basic];
		double* D = n->Dinv;
		for (int i = 0; i < 9; ++i) D[i] = 0.0;
		for (int sd = 0; sd < 2; ++sd) {
			int32_t bi = n->body[sd];
			if (bi < 0) continue;
			if (columns) {
				const ibBody* b = &w->bodies[bi];
				bool first = bi == c0->b1;
				n->sg[sd] = first ? 1.0 : -1.0;
				n->invMass[sd] = b->invMass;
				n->A[sd] = mul_skew_right(b->invInertiaW, ibSub(first ? c0->a : c0->b, b->st.s));
				n->rr[sd] = first ? c0->raResp : c0->rbResp;
			} else {
				n->rr[sd] = n->sg[sd] > 0.0 ? c0->raResp : c0->rbResp;
			}
			point_block_sub(D, n->invMass[sd], n->rr[sd], &n->A[sd]); /* D -= E/m - [r']x A */
		}
	}
	t->leverEpoch = w->poseEpoch;
	for (int32_t k = 0; k < t->elimCount; ++k) {
		LinkNode* n = &t->links[k];
		double D[9];
		for (int i = 0; i < 9; ++i) D[i] = n->Dinv[i];
		if (!invert3_inline(D, n->Dinv)) return false;
		if (n->parent < 0) continue;
		LinkNode* p = &t->links[n->parent];
		int sn = n->sn, sp = n->sp;
		double f = -n->sg[sn] * p->sg[sp], im = n->invMass[sn];
		point_block(n->Au, f, im, n->rr[sn], &p->A[sp]);
		point_block(n->Ad, f, im, p->rr[sp], &n->A[sn]);
		double T[9];
		mat_mul3(n->Dinv, n->Au, T, false);
		mat_mul3(n->Ad, T, p->Dinv, true);
	}
	t->includeVelocityOnly = false;
	t->factorEpoch = w->poseEpoch;
	t->ballLinks = true;
	return true;
}

/* Assemble and factor at the current time instant (basics must be prepared). */
static bool factor(ibWorld* w, LgsTree* t, bool velocityOnlyToo)
{
	ibJointStore* st = w->joints;
	static const double zero36[36] = {0};
	double D[36];
	/* closed forms for trees of ball joints only (the mixed case would need both representations) */
	bool allBall = true;
	for (int32_t oi = 0; oi < t->elimCount && allBall; ++oi) {
		const TreeNode* n = &t->nodes[t->order[oi]];
		if (n->joint < 0) continue;
		const ibJoint* j = &st->joints[n->joint];
		const ibBasic* c0 = &st->basics[j->basic[0]];
		allBall = j->basicCount == 1 && c0->type == &ib_basic_ball && !c0->haveDEdu;
	}
	if (allBall && t->linksOnly) return factor_ball_links(w, t);
	t->leverEpoch = 0; /* the general path below overwrites the ball nodes' columns */
	t->ballLinks = false;
	/* diagonal blocks start as H_ii (kept in Dinv until inverted); children are subtracted below */
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		int32_t ni = t->order[oi];
		TreeNode* n = &t->nodes[ni];
		if (n->contracted) continue;
		if (n->joint >= 0) { /* only its dim x dim block is used */
			int d = joint_rows(st, &st->joints[n->joint], velocityOnlyToo);
			for (int i = 0; i < d * d; ++i) n->Dinv[i] = 0.0;
			continue;
		}
		memcpy(n->Dinv, zero36, sizeof zero36);
		if (n->body >= 0) {
			const ibBody* b = &w->bodies[n->body];
			ibMat3 J = ibMat3_RotateDiag(b->R, b->inertiaP);
			for (int i = 0; i < 3; ++i) {
				n->Dinv[i * 6 + i] = b->mass;
				for (int k = 0; k < 3; ++k) n->Dinv[(3 + i) * 6 + 3 + k] = J.m[i][k];
			}
		}
	}
	/* joint rows per side. Rows of a joint: the response of its (predicted) error to body velocity
	 * changes, G' (lever arms raResp/rbResp); columns: where its impulses act, G^T (points at t0).
	 * In the velocity correction G' = G and the system is the symmetric one of §3.3.2. A contracted
	 * side adds -G' Mass^-1 G^T to the joint's diagonal block. */
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		int32_t ni = t->order[oi];
		TreeNode* n = &t->nodes[ni];
		if (n->joint < 0) continue;
		const ibJoint* j = &st->joints[n->joint];
		int32_t bodies[2] = {j->def.bodyA.index1 - 1, j->def.bodyB.index1 - 1};
		n->dim = joint_rows(st, j, velocityOnlyToo);
		int rows = n->dim;
		const ibBasic* c0 = &st->basics[j->basic[0]];
		n->ball = allBall;
		for (int sd = 0; sd < 2; ++sd) {
			if (n->side[sd] < 0) continue;
			if (n->ball && t->nodes[n->side[sd]].contracted) { /* closed form of the generic path below */
				const ibBody* b = &w->bodies[bodies[sd]];
				bool first = bodies[sd] == c0->b1;
				n->sg[sd] = first ? 1.0 : -1.0;
				n->invMass[sd] = b->invMass;
				n->A[sd] = mul_skew_right(b->invInertiaW, ibSub(first ? c0->a : c0->b, b->st.s));
				n->rr[sd] = first ? c0->raResp : c0->rbResp;
				point_block_sub(n->Dinv, b->invMass, n->rr[sd], &n->A[sd]); /* D -= E/m - [r']x A */
				continue;
			}
			int row = 0;
			for (int k = 0; k < j->basicCount; ++k) {
				const ibBasic* c = &st->basics[j->basic[k]];
				if (c->type->velocityOnly && !velocityOnlyToo) continue;
				for (int r = 0; r < c->rows; ++r, ++row) {
					jacobian_row(w, c, r, bodies[sd], false, &n->G[sd][row * 6]);
					jacobian_row(w, c, r, bodies[sd], true, &n->Gr[sd][row * 6]);
				}
			}
			if (!t->nodes[n->side[sd]].contracted) continue;
			const ibBody* b = &w->bodies[bodies[sd]];
			double* Y = n->Y[sd];
			for (int r = 0; r < rows; ++r) {
				const double* g = &n->G[sd][r * 6];
				ibVec3 wa = ibMat3_MulV(b->invInertiaW, ibV3(g[3], g[4], g[5]));
				Y[0 * rows + r] = b->invMass * g[0];
				Y[1 * rows + r] = b->invMass * g[1];
				Y[2 * rows + r] = b->invMass * g[2];
				Y[3 * rows + r] = wa.x;
				Y[4 * rows + r] = wa.y;
				Y[5 * rows + r] = wa.z;
			}
			mat_mul(n->Gr[sd], Y, n->Dinv, rows, 6, rows, true);
		}
	}
	/* off-diagonal blocks: joint-body edges directly, joint-joint edges through a contracted body */
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		int32_t ni = t->order[oi];
		TreeNode* n = &t->nodes[ni];
		if (n->parent < 0 || n->contracted) continue;
		TreeNode* p = &t->nodes[n->parent];
		if (n->joint >= 0 && n->via >= 0 && n->ball && p->ball) { /* closed form: -sg sg' (E/m - [r']x A) */
			int sn = side_of(n, n->via), sp = side_of(p, n->via);
			double f = -n->sg[sn] * p->sg[sp], im = n->invMass[sn];
			point_block(n->Au, f, im, n->rr[sn], &p->A[sp]);
			point_block(n->Ad, f, im, p->rr[sp], &n->A[sn]);
			continue;
		}
		if (n->joint >= 0 && n->via >= 0) { /* joint - contracted body - joint */
			int sn = side_of(n, n->via), sp = side_of(p, n->via);
			mat_mul(n->Gr[sn], p->Y[sp], n->Au, n->dim, 6, p->dim, false);
			mat_mul(p->Gr[sp], n->Y[sn], n->Ad, p->dim, 6, n->dim, false);
			for (int i = 0; i < n->dim * p->dim; ++i) {
				n->Au[i] = -n->Au[i];
				n->Ad[i] = -n->Ad[i];
			}
			continue;
		}
		const TreeNode* jn = n->joint >= 0 ? n : p;
		int32_t bodyNode = n->joint >= 0 ? n->parent : ni;
		int sd = side_of(jn, bodyNode);
		int rows = jn->dim;
		for (int row = 0; row < rows; ++row) {
			const double* G = &jn->G[sd][row * 6];
			const double* Gr = &jn->Gr[sd][row * 6];
			for (int q = 0; q < 6; ++q) {
				if (n->joint >= 0) { /* node = joint (rows), parent = body (6) */
					n->Au[row * 6 + q] = Gr[q];
					n->Ad[q * rows + row] = G[q];
				} else { /* node = body (6), parent = joint (rows) */
					n->Au[q * rows + row] = G[q];
					n->Ad[row * 6 + q] = Gr[q];
				}
			}
		}
	}
	/* eliminate leaves first: Dinv_i = (H_ii - sum children)^-1; parent -= A^T Dinv A */
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		TreeNode* n = &t->nodes[t->order[oi]];
		int d = n->dim;
		if (d == 0 || n->contracted) continue;
		for (int i = 0; i < d * d; ++i) D[i] = n->Dinv[i];
		if (!invert(D, d, n->Dinv)) return false;
		if (n->parent < 0) continue;
		TreeNode* p = &t->nodes[n->parent];
		int pd = p->dim;
		/* T = Dinv Au (d x pd); D_parent -= Ad T */
		double T[36];
		mat_mul(n->Dinv, n->Au, T, d, d, pd, false);
		mat_mul(n->Ad, T, p->Dinv, pd, d, pd, true);
	}
	t->includeVelocityOnly = velocityOnlyToo;
	t->factorEpoch = w->poseEpoch;
	return true;
}

/* Add f times the node's solution to its body's velocities. */
static void scale_body_change(ibWorld* w, const TreeNode* n, double f)
{
	ibBody* b = &w->bodies[n->body];
	b->st.v = ibAdd(b->st.v, ibScale(f, ibV3(n->x[0], n->x[1], n->x[2])));
	b->st.w = ibAdd(b->st.w, ibScale(f, ibV3(n->x[3], n->x[4], n->x[5])));
	b->velVersion++;
}

/* Solve with the joint right-hand sides already in the joint nodes' b; body nodes' b = 0. Applies
 * the resulting velocity changes to the bodies. */
static void solve_ball_links(ibWorld* w, LgsTree* t);

static void solve_and_apply(ibWorld* w, LgsTree* t)
{
	if (t->ballLinks) {
		solve_ball_links(w, t);
		return;
	}
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		TreeNode* n = &t->nodes[t->order[oi]];
		if (n->contracted) continue;
		int d = n->dim;
		mat_vec(n->Dinv, n->b, n->z, d, d, false);
		if (n->parent < 0) continue;
		TreeNode* p = &t->nodes[n->parent];
		mat_vec(n->Ad, n->z, p->b, p->dim, d, true);
	}
	for (int32_t oi = t->elimCount - 1; oi >= 0; --oi) {
		TreeNode* n = &t->nodes[t->order[oi]];
		if (n->contracted) continue;
		int d = n->dim;
		if (n->parent < 0) {
			memcpy(n->x, n->z, sizeof(double) * (size_t)d);
		} else {
			const TreeNode* p = &t->nodes[n->parent];
			double Ax[6];
			mat_vec(n->Au, p->x, Ax, d, p->dim, false);
			memcpy(n->x, n->z, sizeof(double) * (size_t)d);
			mat_vec(n->Dinv, Ax, n->x, d, d, true);
		}
		if (n->body >= 0) scale_body_change(w, n, 1.0);
	}
	/* contracted bodies: dv = -Mass^-1 sum_j G_j^T mu_j over their (one or two) joints */
	for (int32_t oi = t->elimCount; oi < t->nodeCount; ++oi) {
		int32_t ni = t->order[oi];
		TreeNode* n = &t->nodes[ni];
		for (int q = 0; q < 6; ++q) n->x[q] = 0.0;
		for (int a = 0; a < 2; ++a) {
			if (n->adj[a] < 0) continue;
			const TreeNode* jn = &t->nodes[n->adj[a]];
			int sd = side_of(jn, ni);
			if (jn->ball) { /* dv -= sg (x/m; A x) */
				ibVec3 x = ibV3(jn->x[0], jn->x[1], jn->x[2]);
				ibVec3 ax = ibMat3_MulV(jn->A[sd], x);
				double f = jn->sg[sd] * jn->invMass[sd];
				n->x[0] -= f * x.x;
				n->x[1] -= f * x.y;
				n->x[2] -= f * x.z;
				n->x[3] -= jn->sg[sd] * ax.x;
				n->x[4] -= jn->sg[sd] * ax.y;
				n->x[5] -= jn->sg[sd] * ax.z;
				continue;
			}
			mat_vec(jn->Y[side_of(jn, ni)], jn->x, n->x, 6, jn->dim, true);
		}
		scale_body_change(w, n, 1.0);
	}
}

/* solve_and_apply for factor_ball_links' factorisation: 3 x 3 blocks throughout, the same operations. */
static void solve_ball_links(ibWorld* w, LgsTree* t)
{
	LinkNode* links = t->links;
	/* z = Dinv b goes straight into x (the back substitution starts from it), and stays in registers
	 * for the parent's update */
	for (int32_t k = 0; k < t->elimCount; ++k) {
		LinkNode* n = &links[k];
		const double* D = n->Dinv;
		const double b0 = n->b[0], b1 = n->b[1], b2 = n->b[2];
		const double z[3] = {D[0] * b0 + D[1] * b1 + D[2] * b2, D[3] * b0 + D[4] * b1 + D[5] * b2,
		                     D[6] * b0 + D[7] * b1 + D[8] * b2};
		n->x[0] = z[0];
		n->x[1] = z[1];
		n->x[2] = z[2];
		if (n->parent >= 0) mat_vec3(n->Ad, z, links[n->parent].b, true);
	}
	for (int32_t k = t->elimCount - 1; k >= 0; --k) {
		LinkNode* n = &links[k];
		if (n->parent < 0) continue;
		double Ax[3];
		mat_vec3(n->Au, links[n->parent].x, Ax, false);
		mat_vec3(n->Dinv, Ax, n->x, true);
	}
	int32_t nb = t->nodeCount - t->elimCount;
	for (int32_t k = 0; k < nb; ++k) {
		LinkBody* lb = &t->linkBodies[k];
		/* accumulated in registers (lb->x is stored once; it is kept for the damped Newton's back-off) */
		ibVec3 dv = IB_VEC3_ZERO, dw = IB_VEC3_ZERO;
		for (int a = 0; a < 2; ++a) {
			if (lb->link[a] < 0) continue;
			const LinkNode* jn = &links[lb->link[a]];
			int sd = lb->side[a];
			ibVec3 x = ibV3(jn->x[0], jn->x[1], jn->x[2]);
			ibVec3 ax = ibMat3_MulV(jn->A[sd], x);
			double sg = jn->sg[sd], f = sg * jn->invMass[sd];
			dv = ibSub(dv, ibScale(f, x));
			dw = ibSub(dw, ibScale(sg, ax));
		}
		double* x6 = lb->x;
		x6[0] = dv.x, x6[1] = dv.y, x6[2] = dv.z;
		x6[3] = dw.x, x6[4] = dw.y, x6[5] = dw.z;
		ibBody* b = &w->bodies[lb->body];
		b->st.v = ibAdd(b->st.v, dv);
		b->st.w = ibAdd(b->st.w, dw);
		b->velVersion++;
	}
}

/* Fill b of the joint nodes from per-basic right-hand sides r (world 3-vectors) via P rows. */
static void set_rhs_rows(LgsTree* t, ibJointStore* st, const ibVec3* rhs, bool velocityOnlyToo)
{
	if (t->ballLinks) {
		for (int32_t k = 0; k < t->elimCount; ++k) {
			LinkNode* n = &t->links[k];
			ibVec3 r3 = rhs[n->basic];
			n->b[0] = r3.x;
			n->b[1] = r3.y;
			n->b[2] = r3.z;
		}
		return;
	}
	for (int32_t oi = 0; oi < t->elimCount; ++oi) {
		int32_t ni = t->order[oi];
		TreeNode* n = &t->nodes[ni];
		if (n->contracted) continue; /* eliminated analytically: its b is never read */
		if (n->joint < 0) {
			memset(n->b, 0, sizeof n->b);
			continue;
		}
		const ibJoint* j = &st->joints[n->joint];
		int row = 0;
		for (int k = 0; k < j->basicCount; ++k) {
			const ibBasic* c = &st->basics[j->basic[k]];
			if (c->type->velocityOnly && !velocityOnlyToo) continue;
			ibVec3 r3 = rhs[j->basic[k]];
			if (c->type == &ib_basic_ball) { /* P = E */
				n->b[row++] = r3.x;
				n->b[row++] = r3.y;
				n->b[row++] = r3.z;
				continue;
			}
			for (int r = 0; r < c->rows; ++r) n->b[row++] = ibDot(c->P[r], r3);
		}
	}
}

/* Lever arms at which the predicted errors respond: the joint points of the predicted poses. */
static void set_predicted_levers(ibWorld* w, ibJointStore* st, double h)
{
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (c->type->velocityOnly || c->type->rotational) continue;
		const ibPose* p1 = ib_solver_predicted(w, st, c->b1, h);
		const ibPose* p2 = ib_solver_predicted(w, st, c->b2, h);
		if (c->type == &ib_basic_ball) { /* ball_prepare's points, without the rest of the basic */
			c->raResp = ibSub(ib_pose_point(p1, c->la), p1->s);
			c->rbResp = ibSub(ib_pose_point(p2, c->lb), p2->s);
			continue;
		}
		/* prepare writes only a, b, P and rows: keep the t0 ones around it (no copy of the whole basic) */
		ibVec3 a = c->a, b = c->b, P0 = c->P[0], P1 = c->P[1], P2 = c->P[2];
		int rows = c->rows;
		c->type->prepare(c, p1, p2);
		c->raResp = ibSub(c->a, p1->s);
		c->rbResp = ibSub(c->b, p2->s);
		c->a = a;
		c->b = b;
		c->P[0] = P0;
		c->P[1] = P1;
		c->P[2] = P2;
		c->rows = rows;
	}
}

/* Exact response of the predicted errors to body velocity changes by forward differences through
 * the integrator (6 perturbed predictions per body and basic). Used when the linearisation with
 * lever arms fails (bodies turning by a large angle per step), i.e. only with maxRotationPerStep = 0;
 * on the 100-chain it doubled the step time without changing the iterates. Stored pre-divided by h. */
static void fd_response(ibWorld* w, ibJointStore* st, double h)
{
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		c->haveDEdu = false;
		if (c->type->velocityOnly) continue;
		ibPose p[2] = {*ib_solver_predicted(w, st, c->b1, h), *ib_solver_predicted(w, st, c->b2, h)};
		ibVec3 d0 = c->type->error(c, &p[0], &p[1]);
		int32_t bodies[2] = {c->b1, c->b2};
		for (int side = 0; side < 2; ++side) {
			const ibBody* b = &w->bodies[bodies[side]];
			for (int q = 0; q < 6; ++q) {
				if (!ib_is_dynamic(b)) {
					for (int i = 0; i < 3; ++i) c->dEdu[side][i][q] = 0.0;
					continue;
				}
				ibBody tmp = *b;
				double mag = q < 3 ? ibLength(b->st.v) : ibLength(b->st.w);
				double eps = 1e-7 * (1.0 + mag);
				ibVec3 e = ibV3(q % 3 == 0, q % 3 == 1, q % 3 == 2);
				if (q < 3)
					tmp.st.v = ibMulAdd(tmp.st.v, eps, e);
				else
					tmp.st.w = ibMulAdd(tmp.st.w, eps, e);
				ibPose pp[2] = {p[0], p[1]};
				ib_predict_pose(w, &tmp, h, &pp[side].s, &pp[side].q);
				pp[side].R = ibMat3_FromQuat(pp[side].q);
				ibVec3 dd = ibScale(1.0 / (eps * h), ibSub(c->type->error(c, &pp[0], &pp[1]), d0));
				c->dEdu[side][0][q] = dd.x;
				c->dEdu[side][1][q] = dd.y;
				c->dEdu[side][2][q] = dd.z;
			}
		}
		c->haveDEdu = true;
	}
}

static void clear_fd(ibJointStore* st)
{
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].haveDEdu = false;
}

/* Joint correction: a Newton-type iteration on the predicted errors. The matrix is rebuilt at the
 * predicted configuration when the error falls by less than 4x per solve (fast rotation makes the
 * linearisation at t0 poor); typical steps need 2-3 solves with one factorisation. */

/* One sweep of Alg. 3.1 (position) or 3.2 (velocity) over the loop-closing joints. */
static void sweep_cut(ibWorld* w, ibJointStore* st, double h, bool velocity)
{
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		if (!c->cut) continue;
		ib_solver_prepare(w, c); /* Minv at this instant */
		if (velocity) {
			ibVec3 du = ib_solver_velocity_error(w, c);
			if (ib_solver_projected_norm(c, du) > s->velocityTolerance) ib_solver_apply(w, c, ib_solver_impulse(c, du));
			continue;
		}
		if (c->type->velocityOnly) continue;
		ibVec3 d = ib_solver_excess(c, c->type->error(c, ib_solver_predicted(w, st, c->b1, h), ib_solver_predicted(w, st, c->b2, h)));
		double tol = c->type->rotational ? s->angularTolerance : s->positionTolerance;
		if (ibLength(d) > tol) ib_solver_apply(w, c, ib_solver_impulse(c, ibScale(1.0 / h, d)));
	}
}

ibResult ib_lgs_position_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	LgsTree* t = tree_of(w, false);
	const ibSolverSettings* s = &w->solver;
	for (int32_t k = 0; k < st->basicCount; ++k) {
		st->basics[k].iterations = 0;
		ib_solver_prepare_points(w, &st->basics[k]); /* the cut joints' Minv: sweep_cut */
	}
	int it = 0;
	/* one factorisation per step (§3.3.2.1): the velocity correction's matrix at t0+h of the previous
	 * step is this step's matrix at t0; rebuilt at the predicted configuration only if needed */
	bool needFactor = !(t->factorEpoch == w->poseEpoch && !t->includeVelocityOnly);
	int stalls = 0;
	double prevErr = INFINITY;
	double err = ib_solver_predicted_errors(w, st, h);
	while (err > 1.0 && it < s->maxPositionIterations) {
		/* rebuild with the exact Jacobian only when the cheap linearisation converges slowly */
		if (it > 0 && !t->hasCut && err > 0.1 * prevErr) needFactor = true;
		if (!t->hasCut && err >= 0.5 * prevErr && ++stalls >= 3) break; /* no progress: finish iteratively */
		prevErr = err;
		bool fresh = needFactor && it > 0;
		if (needFactor) {
			set_predicted_levers(w, st, h);
			/* the exact response through the integrator only pays when bodies may turn far per step;
			 * with rotation sub-steps (maxRotationPerStep) the lever arms give the same iterates */
			if (it > 0 && !(s->maxRotationPerStep > 0.0)) {
				fd_response(w, st, h);
				t->fdSet = true;
			} else if (t->fdSet) {
				clear_fd(st);
				t->fdSet = false;
			}
			if (!factor(w, t, false)) return ib_iterative_position_correction(w, h); /* redundant rows */
			needFactor = false;
		}
		++it;
		set_rhs_rows(t, st, st->rhs, false);
		solve_and_apply(w, t);
		if (t->hasCut) { /* hybrid: tree solve, then the cut joints one by one (§3.3.2.3) */
			sweep_cut(w, st, h, false);
			err = ib_solver_predicted_errors(w, st, h);
			continue;
		}
		err = ib_solver_predicted_errors(w, st, h);
		/* a Newton step with the matrix rebuilt at the predicted configuration made things worse:
		 * no solution near this state (docs/joints.md: the tension impulse turns the links; its
		 * gain 6 h^2 T / (m l) exceeds 1 at the top of the 100-chain at 60 Hz). If the step can be
		 * redone as halves, give up now instead of backing off and stalling (same results). */
		if (fresh && w->canSubdivide && err > prevErr) break;
		/* damped Newton: if the full step made things worse, back off along the same direction */
		double f = 1.0;
		for (int half = 0; half < 8 && err > prevErr; ++half) {
			f *= 0.5;
			if (t->ballLinks)
				for (int32_t k = 0; k < t->nodeCount - t->elimCount; ++k) {
					const LinkBody* lb = &t->linkBodies[k];
					ibBody* b = &w->bodies[lb->body];
					b->st.v = ibAdd(b->st.v, ibScale(-f, ibV3(lb->x[0], lb->x[1], lb->x[2])));
					b->st.w = ibAdd(b->st.w, ibScale(-f, ibV3(lb->x[3], lb->x[4], lb->x[5])));
					b->velVersion++;
				}
			else
				for (int32_t ni = 0; ni < t->nodeCount; ++ni)
					if (t->nodes[ni].body >= 0) scale_body_change(w, &t->nodes[ni], -f);
			err = ib_solver_predicted_errors(w, st, h);
		}
	}
	if (t->fdSet) {
		clear_fd(st);
		t->fdSet = false;
	}
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].iterations = it; /* one per tree solve */
	w->stats.positionIterations += it;
	if (err > 1.0 && it < s->maxPositionIterations && !w->canSubdivide) { /* stalled: Alg. 3.1 from here */
		ibSolverSettings saved = w->solver;
		w->solver.maxPositionIterations = s->maxPositionIterations - it;
		w->solver.warmStart = false;
		ibResult r = ib_iterative_position_correction(w, h);
		w->solver = saved;
		return r;
	}
	if (err > 1.0) w->stats.converged = false;
	return IB_OK;
}

ibResult ib_lgs_velocity_correction(ibWorld* w, double h)
{
	ibJointStore* st = w->joints;
	LgsTree* t = tree_of(w, false);
	for (int32_t k = 0; k < st->basicCount; ++k) {
		ibBasic* c = &st->basics[k];
		ib_solver_prepare_points(w, c);
		c->raResp = ibSub(c->a, w->bodies[c->b1].st.s);
		c->rbResp = ibSub(c->b, w->bodies[c->b2].st.s);
	}
	if (!factor(w, t, st->hasVelocityOnly)) return ib_iterative_velocity_correction(w, h, true);
	for (int32_t k = 0; k < st->basicCount; ++k) st->rhs[k] = ib_solver_velocity_error(w, &st->basics[k]);
	set_rhs_rows(t, st, st->rhs, st->hasVelocityOnly);
	solve_and_apply(w, t);
	w->stats.velocityIterations += 1;
	for (int32_t k = 0; k < st->basicCount; ++k) st->basics[k].iterations++;
	/* hybrid for loops: cut joints one by one, then an exact tree solve, until all hold */
	for (int it = 1; t->hasCut && it < w->solver.maxVelocityIterations; ++it) {
		sweep_cut(w, st, h, true);
		bool ok = true;
		for (int32_t k = 0; k < st->basicCount; ++k) {
			st->rhs[k] = ib_solver_velocity_error(w, &st->basics[k]);
			if (ib_solver_projected_norm(&st->basics[k], st->rhs[k]) > w->solver.velocityTolerance) ok = false;
		}
		if (ok) break;
		set_rhs_rows(t, st, st->rhs, st->hasVelocityOnly);
		solve_and_apply(w, t);
		w->stats.velocityIterations++;
	}
	/* rounding can leave a residual above a very tight tolerance: polish iteratively (rarely runs) */
	bool bad = false;
	for (int32_t k = 0; k < st->basicCount && !bad; ++k)
		if (ib_solver_projected_norm(&st->basics[k], ib_solver_velocity_error(w, &st->basics[k])) > w->solver.velocityTolerance)
			bad = true;
	if (bad) {
		return ib_iterative_velocity_correction(w, h, false);
	}
	return IB_OK;
}
