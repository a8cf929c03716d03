/* Union-find over indices 0..n-1 (parent[i] == i at a root), path halving. */
#ifndef IBDYN_SRC_UNION_FIND_H
#define IBDYN_SRC_UNION_FIND_H

#include <stdint.h>

static inline int32_t ib_uf_find(int32_t* parent, int32_t i)
{
	while (parent[i] != i) i = parent[i] = parent[parent[i]];
	return i;
}

/* joins the sets of a and b; the smaller root stays the root (sets come out in index order) */
static inline void ib_uf_unite_min(int32_t* parent, int32_t a, int32_t b)
{
	a = ib_uf_find(parent, a);
	b = ib_uf_find(parent, b);
	if (a < b) parent[b] = a;
	else if (b < a) parent[a] = b;
}

#endif
