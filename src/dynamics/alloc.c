/* Allocation through the world's hooks (ibWorldDef.allocFn/reallocFn/freeFn); libc by default. */
#include <stdlib.h>
#include <string.h>

#include "dynamics/world.h"

void* ib_alloc(ibWorld* w, size_t size)
{
	if (size == 0) size = 1;
	if (w->allocator.alloc) return w->allocator.alloc(size, w->allocator.ctx);
	return malloc(size);
}

void* ib_realloc(ibWorld* w, void* p, size_t oldSize, size_t newSize)
{
	if (w->allocator.realloc) return w->allocator.realloc(p, oldSize, newSize, w->allocator.ctx);
	if (w->allocator.alloc) {
		void* q = w->allocator.alloc(newSize, w->allocator.ctx);
		if (!q) return NULL;
		if (p) {
			memcpy(q, p, oldSize < newSize ? oldSize : newSize);
			ib_free(w, p, oldSize);
		}
		return q;
	}
	return realloc(p, newSize);
}

void ib_free(ibWorld* w, void* p, size_t size)
{
	if (!p) return;
	if (size == 0) size = 1; /* as ib_alloc */
	if (w->allocator.free) {
		w->allocator.free(p, size, w->allocator.ctx);
		return;
	}
	free(p);
}

char* ib_strdup(ibWorld* w, const char* s)
{
	if (!s || !*s) return NULL;
	size_t n = strlen(s) + 1;
	char* c = ib_alloc(w, n);
	if (c) memcpy(c, s, n);
	return c;
}

void ib_strfree(ibWorld* w, char* s)
{
	if (s) ib_free(w, s, strlen(s) + 1);
}

/* as ib_grow, but the new part is left uninitialised (for arrays that are written before they are read):
 * memory that is never used is then never touched (first-touch page faults of large solver arrays) */
bool ib_grow_raw(ibWorld* w, void** array, int32_t* capacity, int32_t need, size_t elem)
{
	if (need <= *capacity) return true;
	int32_t cap = *capacity > 0 ? *capacity : 16;
	while (cap < need) cap *= 2;
	void* p = ib_realloc(w, *array, (size_t)*capacity * elem, (size_t)cap * elem);
	if (!p) return false;
	*array = p;
	*capacity = cap;
	return true;
}

bool ib_grow(ibWorld* w, void** array, int32_t* capacity, int32_t need, size_t elem)
{
	int32_t old = *capacity;
	if (!ib_grow_raw(w, array, capacity, need, elem)) return false;
	if (*capacity > old) memset((char*)*array + (size_t)old * elem, 0, (size_t)(*capacity - old) * elem);
	return true;
}
