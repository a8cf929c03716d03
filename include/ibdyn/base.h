/* ibdyn — impulse-based dynamic simulation of multibody systems.
 * base.h: version, export macro, result codes, allocator, log and task hooks. */
#ifndef IBDYN_BASE_H
#define IBDYN_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(IBDYN_SHARED_BUILD)
#define IB_API __attribute__((visibility("default")))
#else
#define IB_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Library major version (API-breaking changes). */
#define IBDYN_VERSION_MAJOR 0
/** Library minor version (additions). */
#define IBDYN_VERSION_MINOR 1
/** Library patch version (fixes). */
#define IBDYN_VERSION_PATCH 0
/** Version as one integer: major*10000 + minor*100 + patch. */
#define IBDYN_VERSION (IBDYN_VERSION_MAJOR * 10000 + IBDYN_VERSION_MINOR * 100 + IBDYN_VERSION_PATCH)

/** Semantic version triple. */
typedef struct ibVersion {
	int major; /**< major version */
	int minor; /**< minor version */
	int patch; /**< patch version */
} ibVersion;

/** Version of the linked library (may differ from the header's IBDYN_VERSION). */
IB_API ibVersion ibGetVersion(void);

/** Result of a function that can fail. IB_OK is zero. */
typedef enum ibResult {
	IB_OK = 0,                 /**< success */
	IB_ERR_INVALID_ARGUMENT,   /**< NaN/Inf, out-of-range or NULL argument */
	IB_ERR_STALE_HANDLE,       /**< the handle is null, destroyed or from a destroyed world */
	IB_ERR_WRONG_BODY_TYPE,    /**< operation not allowed for this body type (static/kinematic) */
	IB_ERR_DEGENERATE,         /**< degenerate geometry or mass properties (zero volume, bad inertia) */
	IB_ERR_OUT_OF_MEMORY,      /**< the allocator returned NULL */
	IB_ERR_CAPACITY,           /**< a fixed limit was reached (e.g. number of worlds) */
	IB_ERR_DIVERGED,           /**< the simulation state became non-finite; see ibWorld_HasDiverged */
	IB_ERR_PARSE,              /**< a file could not be parsed (loaders) */
	IB_ERR_IO,                 /**< a file could not be read or written */
	IB_ERR_NOT_CONVERGED,      /**< an iteration hit its cap before reaching its tolerance */
} ibResult;

/** Short constant name of a result code, e.g. "invalid argument". */
IB_API const char* ibResultString(ibResult r);

/** Allocation hook: return size bytes aligned to at least 16, or NULL. ctx is ibWorldDef.allocContext. */
typedef void* ibAllocFn(size_t size, void* ctx);
/** Reallocation hook (same contract as realloc; oldSize is the previous size in bytes). */
typedef void* ibReallocFn(void* ptr, size_t oldSize, size_t newSize, void* ctx);
/** Free hook; ptr may be NULL; size is the allocation's size in bytes. */
typedef void ibFreeFn(void* ptr, size_t size, void* ctx);

/** Log severity. */
typedef enum ibLogLevel { IB_LOG_DEBUG, IB_LOG_INFO, IB_LOG_WARNING, IB_LOG_ERROR } ibLogLevel;
/** Log hook, called with a complete message (no trailing newline). ctx is ibWorldDef.logContext. */
typedef void ibLogFn(ibLogLevel level, const char* message, void* ctx);

/** Largest ibWorldDef.workerCount. */
#define IB_MAX_WORKERS 64

/** Task body: runs items [startIndex, endIndex) of a parallel loop; workerIndex < ibWorldDef.workerCount
 * says which worker runs it (two ranges running at the same time must get different worker indices). */
typedef void ibTaskFn(int32_t startIndex, int32_t endIndex, uint32_t workerIndex, void* taskContext);
/** Task hook: run task over the items [0, itemCount) in ranges of at least minRange items, on any threads, and
 * return a handle for ibFinishTaskFn (or NULL after running all of it before returning). taskContext goes to
 * task; ctx is ibWorldDef.taskContext. The step's results do not depend on the split (each item is
 * independent and written by its range only). */
typedef void* ibEnqueueTaskFn(ibTaskFn* task, int32_t itemCount, int32_t minRange, void* taskContext, void* ctx);
/** Waits until the task behind userTask (from ibEnqueueTaskFn, not NULL) has run all its items. */
typedef void ibFinishTaskFn(void* userTask, void* ctx);

#ifdef __cplusplus
}
#endif
#endif
