/* Dynamic AABB tree (bounding volume hierarchy over fattened leaf boxes) for the broadphase.
 *
 * Insertion: branch and bound over the surface-area heuristic. The cost of making node S the sibling
 * of the new leaf L is SA(S u L) (the new parent) plus the growth SA(A u L) - SA(A) of every ancestor A
 * of S; a subtree is skipped when SA(L) + inherited growth can no longer beat the best cost. Siblings
 * are restricted to nodes of height <= 1 so that an insertion raises heights by at most one (below).
 *
 * Balance: every internal node keeps |h(child1) - h(child2)| <= 1 (the AVL condition; height of a tree
 * with n leaves <= ~1.44 log2(2n)). After an insertion or removal the heights along the path change by
 * at most one, so an ancestor is out of balance by at most 2. It is repaired by one rotation that swaps
 * the lower child with a child of the higher one (the higher grandchild when they differ; the one giving
 * the smaller box otherwise): if the higher child has height h+2 over h, the result has heights (h+1, h+1)
 * or (h+1, h+2) with the rotated child balanced. Nodes in balance may still rotate to shrink the surface
 * area (the four child/grandchild swaps, as in Bittner et al. and Catto's SAH rotations), but only when
 * balance holds afterwards and the node's height stays the same, so the argument above is not disturbed.
 * ib_dtree_validate checks all of this. Traversal stacks are therefore bounded (IB_TREE_STACK). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/broadphase.h"

#define IB_TREE_STACK 256 /* > height + 2 for any tree that fits in memory (AVL bound) */

static inline bool aabb_contains(ibAABB outer, ibAABB inner)
{
	return outer.lo.x <= inner.lo.x && outer.lo.y <= inner.lo.y && outer.lo.z <= inner.lo.z &&
	       inner.hi.x <= outer.hi.x && inner.hi.y <= outer.hi.y && inner.hi.z <= outer.hi.z;
}

static inline bool aabb_equal(ibAABB a, ibAABB b)
{
	return a.lo.x == b.lo.x && a.lo.y == b.lo.y && a.lo.z == b.lo.z && a.hi.x == b.hi.x && a.hi.y == b.hi.y &&
	       a.hi.z == b.hi.z;
}

static inline int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }

/* union without libm calls (fmin/fmax are not inlined; the boxes are finite) */
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline ibAABB box_union(ibAABB a, ibAABB b)
{
	return (ibAABB){{dmin(a.lo.x, b.lo.x), dmin(a.lo.y, b.lo.y), dmin(a.lo.z, b.lo.z)},
	                {dmax(a.hi.x, b.hi.x), dmax(a.hi.y, b.hi.y), dmax(a.hi.z, b.hi.z)}};
}

bool ib_ray_aabb(ibVec3 p0, ibVec3 d, ibAABB box, double maxFraction, double* tEntry)
{
	double tmin = 0.0, tmax = maxFraction;
	const double p[3] = {p0.x, p0.y, p0.z}, dd[3] = {d.x, d.y, d.z};
	const double lo[3] = {box.lo.x, box.lo.y, box.lo.z}, hi[3] = {box.hi.x, box.hi.y, box.hi.z};
	for (int i = 0; i < 3; ++i) {
		if (dd[i] == 0.0) {
			if (p[i] < lo[i] || p[i] > hi[i]) return false;
			continue;
		}
		double t1 = (lo[i] - p[i]) / dd[i], t2 = (hi[i] - p[i]) / dd[i];
		if (t1 > t2) {
			double s = t1;
			t1 = t2;
			t2 = s;
		}
		if (t1 > tmin) tmin = t1;
		if (t2 < tmax) tmax = t2;
		if (tmin > tmax) return false;
	}
	*tEntry = tmin;
	return true;
}

/* ---------------------------------------------------------------- nodes */

void ib_dtree_init(ibDynamicTree* t, const ibBpAllocator* alloc, double margin, double predictionFactor)
{
	memset(t, 0, sizeof *t);
	if (alloc) t->alloc = *alloc;
	t->root = IB_TREE_NULL;
	t->freeList = IB_TREE_NULL;
	t->margin = margin > 0.0 ? margin : 0.0;
	t->predictionFactor = predictionFactor > 0.0 ? predictionFactor : 0.0;
}

void ib_dtree_destroy(ibDynamicTree* t)
{
	size_t cap = (size_t)t->capacity;
	ib_bp_free(&t->alloc, t->nodes, cap * sizeof *t->nodes);
	ib_bp_free(&t->alloc, t->tight, cap * sizeof *t->tight);
	ib_bp_free(&t->alloc, t->heap, cap * sizeof *t->heap);
	ibBpAllocator a = t->alloc;
	memset(t, 0, sizeof *t);
	t->alloc = a;
	t->root = t->freeList = IB_TREE_NULL;
}

static int32_t alloc_node(ibDynamicTree* t)
{
	if (t->freeList == IB_TREE_NULL) {
		int32_t old = t->capacity, cap = old > 0 ? 2 * old : 16;
		ibTreeNode* n = ib_bp_realloc(&t->alloc, t->nodes, (size_t)old * sizeof *n, (size_t)cap * sizeof *n);
		if (!n) return IB_TREE_NULL;
		t->nodes = n;
		ibAABB* b = ib_bp_realloc(&t->alloc, t->tight, (size_t)old * sizeof *b, (size_t)cap * sizeof *b);
		if (!b) return IB_TREE_NULL;
		t->tight = b;
		ibTreeRayEntry* h = ib_bp_realloc(&t->alloc, t->heap, (size_t)old * sizeof *h, (size_t)cap * sizeof *h);
		if (!h) return IB_TREE_NULL;
		t->heap = h;
		t->capacity = cap;
		for (int32_t i = old; i < cap; ++i) {
			t->nodes[i] = (ibTreeNode){.parent = i + 1 < cap ? i + 1 : IB_TREE_NULL,
			                           .child1 = IB_TREE_NULL,
			                           .child2 = IB_TREE_NULL,
			                           .height = -1,
			                           .user = -1};
		}
		t->freeList = old;
	}
	int32_t id = t->freeList;
	ibTreeNode* n = &t->nodes[id];
	t->freeList = n->parent;
	n->parent = n->child1 = n->child2 = IB_TREE_NULL;
	n->height = 0;
	n->user = -1;
	++t->nodeCount;
	return id;
}

static void free_node(ibDynamicTree* t, int32_t id)
{
	ibTreeNode* n = &t->nodes[id];
	n->parent = t->freeList;
	n->child1 = n->child2 = IB_TREE_NULL;
	n->height = -1;
	t->freeList = id;
	--t->nodeCount;
}

/* ---------------------------------------------------------------- rotations */

static void refit(ibDynamicTree* t, int32_t i)
{
	ibTreeNode* n = &t->nodes[i];
	const ibTreeNode* c1 = &t->nodes[n->child1];
	const ibTreeNode* c2 = &t->nodes[n->child2];
	n->box = box_union(c1->box, c2->box);
	n->height = 1 + imax(c1->height, c2->height);
}

/* At node a (children refitted): restore balance if broken, else apply the best height-preserving
 * swap that reduces the surface area. The swaps exchange a child X of a with a child Y of the other
 * child P of a; only P's box changes (a keeps the same leaves). */
static void rotate(ibDynamicTree* t, int32_t a)
{
	ibTreeNode* A = &t->nodes[a];
	int32_t child[2] = {A->child1, A->child2};
	int32_t h[2] = {t->nodes[child[0]].height, t->nodes[child[1]].height};
	bool unbalanced = abs(h[0] - h[1]) > 1;
	int32_t hA = A->height;

	double bestCost = unbalanced ? INFINITY : 0.0;
	int bestX = -1, bestY = -1; /* X: index of a's child that moves down; Y: index of the grandchild */
	for (int x = 0; x < 2; ++x) {
		int32_t p = child[1 - x]; /* the child whose child swaps with child[x] */
		const ibTreeNode* P = &t->nodes[p];
		if (P->height == 0) continue;
		int32_t g[2] = {P->child1, P->child2};
		for (int y = 0; y < 2; ++y) {
			const ibTreeNode* up = &t->nodes[g[y]];       /* rises to a */
			const ibTreeNode* stay = &t->nodes[g[1 - y]]; /* stays in P */
			int32_t hX = h[x];
			if (abs(hX - stay->height) > 1) continue;
			int32_t hP = 1 + imax(hX, stay->height);
			if (abs(up->height - hP) > 1) continue;
			int32_t hNew = 1 + imax(up->height, hP);
			if (!unbalanced && hNew != hA) continue;
			double cost = ib_aabb_surface(box_union(t->nodes[child[x]].box, stay->box)) - ib_aabb_surface(P->box);
			if (cost < bestCost) {
				bestCost = cost;
				bestX = x;
				bestY = y;
			}
		}
	}
	assert(!unbalanced || bestX >= 0);
	if (bestX < 0) return;

	int32_t x = child[bestX], p = child[1 - bestX];
	ibTreeNode* P = &t->nodes[p];
	int32_t y = bestY == 0 ? P->child1 : P->child2;
	if (bestX == 0)
		A->child1 = y;
	else
		A->child2 = y;
	t->nodes[y].parent = a;
	if (bestY == 0)
		P->child1 = x;
	else
		P->child2 = x;
	t->nodes[x].parent = p;
	refit(t, p);
	refit(t, a);
	++t->rotations;
}

static void fix_upwards(ibDynamicTree* t, int32_t i)
{
	while (i != IB_TREE_NULL) {
		refit(t, i);
		rotate(t, i);
		i = t->nodes[i].parent;
	}
}

/* ---------------------------------------------------------------- insertion, removal */

typedef struct bbEntry {
	int32_t node;
	double inherited;
} bbEntry;

static int32_t find_sibling(const ibDynamicTree* t, ibAABB box)
{
	const double area = ib_aabb_surface(box);
	bbEntry stack[IB_TREE_STACK];
	int top = 0;
	stack[top++] = (bbEntry){t->root, 0.0};
	int32_t best = IB_TREE_NULL;
	double bestCost = INFINITY;
	while (top > 0) {
		bbEntry e = stack[--top];
		const ibTreeNode* n = &t->nodes[e.node];
		double direct = ib_aabb_surface(box_union(n->box, box));
		if (n->height <= 1 && direct + e.inherited < bestCost) {
			bestCost = direct + e.inherited;
			best = e.node;
		}
		if (n->height == 0) continue;
		double inh = e.inherited + direct - ib_aabb_surface(n->box);
		if (area + inh >= bestCost) continue;
		assert(top + 2 <= IB_TREE_STACK);
		if (top + 2 > IB_TREE_STACK) continue;
		/* explore the child that grows less first (pushed last) */
		int32_t c1 = n->child1, c2 = n->child2;
		double g1 = ib_aabb_surface(box_union(t->nodes[c1].box, box)) - ib_aabb_surface(t->nodes[c1].box);
		double g2 = ib_aabb_surface(box_union(t->nodes[c2].box, box)) - ib_aabb_surface(t->nodes[c2].box);
		if (g1 < g2) {
			int32_t s = c1;
			c1 = c2;
			c2 = s;
		}
		stack[top++] = (bbEntry){c1, inh};
		stack[top++] = (bbEntry){c2, inh};
	}
	return best;
}

/* parentNode: a free node already allocated by the caller (so insertion never fails halfway) */
static void insert_leaf(ibDynamicTree* t, int32_t leaf, int32_t parentNode)
{
	if (t->root == IB_TREE_NULL) {
		t->root = leaf;
		t->nodes[leaf].parent = IB_TREE_NULL;
		free_node(t, parentNode);
		return;
	}
	int32_t s = find_sibling(t, t->nodes[leaf].box);
	int32_t op = t->nodes[s].parent;
	ibTreeNode* np = &t->nodes[parentNode];
	np->parent = op;
	np->child1 = s;
	np->child2 = leaf;
	np->user = -1;
	t->nodes[s].parent = parentNode;
	t->nodes[leaf].parent = parentNode;
	if (op == IB_TREE_NULL) {
		t->root = parentNode;
	} else if (t->nodes[op].child1 == s) {
		t->nodes[op].child1 = parentNode;
	} else {
		t->nodes[op].child2 = parentNode;
	}
	fix_upwards(t, parentNode);
}

/* Detach the leaf; frees its parent node. */
static void remove_leaf(ibDynamicTree* t, int32_t leaf)
{
	if (leaf == t->root) {
		t->root = IB_TREE_NULL;
		return;
	}
	int32_t p = t->nodes[leaf].parent;
	int32_t g = t->nodes[p].parent;
	int32_t s = t->nodes[p].child1 == leaf ? t->nodes[p].child2 : t->nodes[p].child1;
	t->nodes[s].parent = g;
	if (g == IB_TREE_NULL) {
		t->root = s;
	} else {
		if (t->nodes[g].child1 == p)
			t->nodes[g].child1 = s;
		else
			t->nodes[g].child2 = s;
	}
	free_node(t, p);
	if (g != IB_TREE_NULL) fix_upwards(t, g);
}

int32_t ib_dtree_insert(ibDynamicTree* t, ibAABB aabb, int32_t user)
{
	int32_t leaf = alloc_node(t);
	if (leaf == IB_TREE_NULL) return IB_TREE_NULL;
	int32_t parentNode = alloc_node(t);
	if (parentNode == IB_TREE_NULL) {
		free_node(t, leaf);
		return IB_TREE_NULL;
	}
	ibTreeNode* n = &t->nodes[leaf];
	n->box = ib_aabb_fatten(aabb, t->margin);
	n->user = user;
	n->height = 0;
	t->tight[leaf] = aabb;
	insert_leaf(t, leaf, parentNode);
	++t->leafCount;
	return leaf;
}

void ib_dtree_remove(ibDynamicTree* t, int32_t leaf)
{
	assert(leaf >= 0 && leaf < t->capacity && t->nodes[leaf].height == 0);
	remove_leaf(t, leaf);
	free_node(t, leaf);
	--t->leafCount;
}

bool ib_dtree_move(ibDynamicTree* t, int32_t leaf, ibAABB aabb, ibVec3 displacement)
{
	assert(leaf >= 0 && leaf < t->capacity && t->nodes[leaf].height == 0);
	t->tight[leaf] = aabb;
	ibAABB fat = ib_aabb_fatten(aabb, t->margin);
	if (t->predictionFactor > 0.0) {
		ibVec3 d = ibScale(t->predictionFactor, displacement);
		if (d.x < 0.0)
			fat.lo.x += d.x;
		else
			fat.hi.x += d.x;
		if (d.y < 0.0)
			fat.lo.y += d.y;
		else
			fat.hi.y += d.y;
		if (d.z < 0.0)
			fat.lo.z += d.z;
		else
			fat.hi.z += d.z;
	}
	ibAABB old = t->nodes[leaf].box;
	/* keep the leaf while its box stays inside, unless the old fat box is far larger than needed */
	if (aabb_contains(old, aabb) && aabb_contains(ib_aabb_fatten(fat, 4.0 * t->margin), old)) return false;
	if (leaf == t->root) { /* the only leaf */
		t->nodes[leaf].box = fat;
		return true;
	}
	remove_leaf(t, leaf);
	t->nodes[leaf].box = fat;
	/* the parent node freed by remove_leaf comes back from the free list: no allocation */
	int32_t parentNode = alloc_node(t);
	assert(parentNode != IB_TREE_NULL);
	insert_leaf(t, leaf, parentNode);
	++t->reinserts;
	return true;
}

int32_t ib_dtree_height(const ibDynamicTree* t) { return t->root == IB_TREE_NULL ? -1 : t->nodes[t->root].height; }

/* ---------------------------------------------------------------- queries */

static void query(const ibDynamicTree* t, ibAABB aabb, bool fat, ibTreeQueryFn* fn, void* ctx)
{
	if (t->root == IB_TREE_NULL) return;
	int32_t stack[IB_TREE_STACK];
	int top = 0;
	stack[top++] = t->root;
	while (top > 0) {
		int32_t i = stack[--top];
		const ibTreeNode* n = &t->nodes[i];
		if (!ib_aabb_overlap(n->box, aabb)) continue;
		if (n->height == 0) {
			if ((fat || ib_aabb_overlap(t->tight[i], aabb)) && !fn(ctx, i, n->user)) return;
		} else {
			assert(top + 2 <= IB_TREE_STACK);
			if (top + 2 > IB_TREE_STACK) continue;
			stack[top++] = n->child1;
			stack[top++] = n->child2;
		}
	}
}

void ib_dtree_query(const ibDynamicTree* t, ibAABB aabb, ibTreeQueryFn* fn, void* ctx)
{
	query(t, aabb, false, fn, ctx);
}

void ib_dtree_query_fat(const ibDynamicTree* t, ibAABB aabb, ibTreeQueryFn* fn, void* ctx)
{
	query(t, aabb, true, fn, ctx);
}

static inline bool ray_less(ibTreeRayEntry a, ibTreeRayEntry b) { return a.t < b.t || (a.t == b.t && a.tie < b.tie); }

static void heap_push(ibTreeRayEntry* h, int32_t* n, ibTreeRayEntry e)
{
	int32_t i = (*n)++;
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (!ray_less(e, h[p])) break;
		h[i] = h[p];
		i = p;
	}
	h[i] = e;
}

static ibTreeRayEntry heap_pop(ibTreeRayEntry* h, int32_t* n)
{
	ibTreeRayEntry top = h[0], e = h[--(*n)];
	int32_t i = 0, m = *n;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= m) break;
		if (c + 1 < m && ray_less(h[c + 1], h[c])) ++c;
		if (!ray_less(h[c], e)) break;
		h[i] = h[c];
		i = c;
	}
	if (m > 0) h[i] = e;
	return top;
}

/* Push node i if the segment hits it: leaves keyed by the entry into their user box (never earlier than
 * into any ancestor, so popping yields the leaves in entry order), internal nodes by their box. */
static void ray_push(const ibDynamicTree* t, ibTreeRayEntry* heap, int32_t* n, int32_t i, ibVec3 p0, ibVec3 d,
                     double maxFraction)
{
	const ibTreeNode* nd = &t->nodes[i];
	double te;
	if (nd->height == 0) {
		if (ib_ray_aabb(p0, d, t->tight[i], maxFraction, &te)) heap_push(heap, n, (ibTreeRayEntry){te, i, nd->user});
	} else if (ib_ray_aabb(p0, d, nd->box, maxFraction, &te)) {
		heap_push(heap, n, (ibTreeRayEntry){te, i, -1});
	}
}

void ib_dtree_raycast(ibDynamicTree* t, ibVec3 p0, ibVec3 p1, double maxFraction, ibTreeRayFn* fn, void* ctx)
{
	if (t->root == IB_TREE_NULL || !(maxFraction >= 0.0)) return;
	ibVec3 d = ibSub(p1, p0);
	ibTreeRayEntry* heap = t->heap; /* every node is pushed at most once: capacity suffices */
	int32_t n = 0;
	ray_push(t, heap, &n, t->root, p0, d, maxFraction);
	while (n > 0) {
		ibTreeRayEntry e = heap_pop(heap, &n);
		if (e.t > maxFraction) break;
		const ibTreeNode* nd = &t->nodes[e.node];
		if (nd->height == 0) {
			double r = fn(ctx, e.node, nd->user, e.t);
			if (r < 0.0) return;
			if (r < maxFraction) maxFraction = r;
		} else {
			ray_push(t, heap, &n, nd->child1, p0, d, maxFraction);
			ray_push(t, heap, &n, nd->child2, p0, d, maxFraction);
		}
	}
}

/* ---------------------------------------------------------------- validation */

const char* ib_dtree_validate(const ibDynamicTree* t)
{
	int32_t freeCount = 0;
	for (int32_t i = t->freeList; i != IB_TREE_NULL; i = t->nodes[i].parent) {
		if (i < 0 || i >= t->capacity) return "free list out of range";
		if (t->nodes[i].height != -1) return "free node with a height";
		if (++freeCount > t->capacity) return "free list cycle";
	}
	if (freeCount + t->nodeCount != t->capacity) return "node accounting";
	if (t->root == IB_TREE_NULL) return t->nodeCount == 0 && t->leafCount == 0 ? NULL : "empty tree with nodes";
	if (t->nodes[t->root].parent != IB_TREE_NULL) return "root has a parent";

	int32_t stack[IB_TREE_STACK];
	int top = 0, leaves = 0, nodes = 0;
	stack[top++] = t->root;
	while (top > 0) {
		int32_t i = stack[--top];
		if (i < 0 || i >= t->capacity) return "child out of range";
		const ibTreeNode* n = &t->nodes[i];
		++nodes;
		if (n->height == 0) {
			++leaves;
			if (n->child1 != IB_TREE_NULL || n->child2 != IB_TREE_NULL) return "leaf with children";
			if (!aabb_contains(n->box, t->tight[i])) return "fat box does not contain the leaf box";
			continue;
		}
		if (n->height < 0) return "free node in the tree";
		const ibTreeNode* c1 = &t->nodes[n->child1];
		const ibTreeNode* c2 = &t->nodes[n->child2];
		if (c1->parent != i || c2->parent != i) return "parent link";
		if (c1->height < 0 || c2->height < 0) return "free child";
		if (n->height != 1 + imax(c1->height, c2->height)) return "height";
		if (abs(c1->height - c2->height) > 1) return "balance";
		if (!aabb_contains(n->box, c1->box) || !aabb_contains(n->box, c2->box)) return "box does not contain child";
		if (!aabb_equal(n->box, box_union(c1->box, c2->box))) return "box is not the union of the children";
		if (top + 2 > IB_TREE_STACK) return "too deep";
		stack[top++] = n->child1;
		stack[top++] = n->child2;
	}
	if (nodes != t->nodeCount) return "unreachable nodes";
	if (leaves != t->leafCount) return "leaf count";
	return NULL;
}
