/* ibdyn handles: small typed values with a generation counter. The all-zero value is null.
 * A handle to a destroyed object (or to an object of a destroyed world) is "stale": every
 * function rejects it with IB_ERR_STALE_HANDLE (or returns a neutral value) instead of crashing. */
#ifndef IBDYN_ID_H
#define IBDYN_ID_H

#include <stdint.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Handle of a world. */
typedef struct ibWorldId {
	uint16_t index1;     /**< slot index + 1; 0 = null */
	uint16_t generation; /**< slot generation */
} ibWorldId;

/** Handle of a rigid body. */
typedef struct ibBodyId {
	int32_t index1;      /**< body index + 1; 0 = null */
	uint16_t world0;     /**< world slot index */
	uint16_t generation; /**< body generation */
} ibBodyId;

/** Handle of a shape attached to a body. */
typedef struct ibShapeId {
	int32_t index1;      /**< shape index + 1; 0 = null */
	uint16_t world0;     /**< world slot index */
	uint16_t generation; /**< shape generation */
} ibShapeId;

/** Handle of a joint, motor, spring or velocity-only constraint between two bodies. */
typedef struct ibJointId {
	int32_t index1;      /**< joint index + 1; 0 = null */
	uint16_t world0;     /**< world slot index */
	uint16_t generation; /**< joint generation */
} ibJointId;

/** The null world handle. */
#define IB_NULL_WORLD ((ibWorldId){0, 0})
/** The null body handle. */
#define IB_NULL_BODY ((ibBodyId){0, 0, 0})
/** The null shape handle. */
#define IB_NULL_SHAPE ((ibShapeId){0, 0, 0})
/** The null joint handle. */
#define IB_NULL_JOINT ((ibJointId){0, 0, 0})

/** True if the handle is the null handle (says nothing about staleness; see *_IsValid). */
#define IB_IS_NULL(id) ((id).index1 == 0)
/** True if two handles of the same type are equal. */
#define IB_ID_EQUALS(a, b) ((a).index1 == (b).index1 && (a).world0 == (b).world0 && (a).generation == (b).generation)

#ifdef __cplusplus
}
#endif
#endif
