/* ibdyn_scene internals shared by the reader and the writer: error messages, the C numeric locale
 * and the names of enumerated values. Not installed. */
#ifndef IBDYN_SCENE_COMMON_H
#define IBDYN_SCENE_COMMON_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "ibdyn/scene.h"

/* ---------------------------------------------------------------- errors */

/** Destination of the first error of a load or save: "file:line: message". */
typedef struct ibSceneErr {
	const char* file; /**< display name used as the message prefix */
	char* buf;        /**< caller's buffer (may be NULL) */
	size_t size;      /**< its size */
	ibResult result;  /**< code of the first error (IB_OK while none) */
} ibSceneErr;

/** Record an error (only the first one is kept). line <= 0 omits the line: "file: message". */
void ibScene_Fail(ibSceneErr* e, ibResult code, long line, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
/** ibScene_Fail with IB_ERR_IO: "what: <strerror(errnum)>". */
void ibScene_IoError(ibSceneErr* e, const char* what, int errnum);
/** ibScene_Fail with IB_ERR_PARSE at the line of node. */
void ibScene_NodeError(ibSceneErr* e, const xmlNode* node, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
/** Line of a node as libxml2 recorded it (0 if unknown). */
long ibScene_Line(const xmlNode* node);

/* ---------------------------------------------------------------- C numeric locale */

/** Switches the calling thread to the "C" numeric locale for strtod/printf and back. */
typedef struct ibSceneLocale {
	locale_t c;   /**< the "C" locale (0 if it could not be created) */
	locale_t old; /**< the thread's previous locale */
} ibSceneLocale;

/** Enter the C numeric locale; false if it cannot be created (out of memory). */
bool ibScene_EnterCLocale(ibSceneLocale* l);
/** Restore the previous locale. */
void ibScene_LeaveCLocale(ibSceneLocale* l);

/* ---------------------------------------------------------------- enumerations */

/** One name of an enumerated attribute value. */
typedef struct ibSceneEnum {
	const char* name;
	int value;
} ibSceneEnum;

/** Body types: static, kinematic, dynamic (terminated by {NULL, 0}). */
extern const ibSceneEnum ibScene_BodyTypes[];
/** Integrators: rk4, cash-karp (terminated by {NULL, 0}). */
extern const ibSceneEnum ibScene_Integrators[];
/** Joint solver methods: auto, iterative, lgs (terminated by {NULL, 0}). */
extern const ibSceneEnum ibScene_Solvers[];
extern const ibSceneEnum ibScene_Broadphases[];
extern const ibSceneEnum ibScene_ToiModes[];
/** Restitution laws: newton, poisson; mixing rules: product, sum, min, max, mean (terminated by {NULL, 0}). */
extern const ibSceneEnum ibScene_RestitutionLaws[];
extern const ibSceneEnum ibScene_MixRules[];
/** Joint types: ball, line, ..., velocity (terminated by {NULL, 0}). */
extern const ibSceneEnum ibScene_JointTypes[];
/** Motor modes of <motor>: position, velocity (terminated by {NULL, 0}; "off" is not a file value). */
extern const ibSceneEnum ibScene_MotorModes[];
/** Name of value in table (NULL if not present). */
const char* ibScene_EnumName(const ibSceneEnum* table, int value);

#endif
