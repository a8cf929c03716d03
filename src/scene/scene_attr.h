/* ibdyn_scene internals: strict numbers and the table-driven attribute reader. Not installed. */
#ifndef IBDYN_SCENE_ATTR_H
#define IBDYN_SCENE_ATTR_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "scene_common.h"

/* ---------------------------------------------------------------- attribute tables */

/** Kind of an attribute value and the C type it is stored as. */
typedef enum ibSceneAttrKind {
	IB_ATTR_REAL,       /**< double: one finite number */
	IB_ATTR_REALS,      /**< double[count]: exactly count finite numbers */
	IB_ATTR_VEC3,       /**< ibVec3: "x y z" */
	IB_ATTR_QUAT,       /**< ibQuat: "w x y z", not all zero (normalised by the API) */
	IB_ATTR_AXIS_ANGLE, /**< ibQuat from "ax ay az angle": non-zero axis (normalised here), angle in rad */
	IB_ATTR_INT,        /**< int: a decimal integer */
	IB_ATTR_ENUM,       /**< int: one of the names in values */
	IB_ATTR_BOOL,       /**< bool: "true" or "false" */
	IB_ATTR_STRING,     /**< const char*: non-empty text, points into the document */
	IB_ATTR_REAL_LIST,  /**< ibSceneRealList: a positive multiple of count numbers (malloc'd) */
	IB_ATTR_INT_LIST,   /**< ibSceneIntList: a positive multiple of count integers (malloc'd) */
} ibSceneAttrKind;

/** Attribute flags. */
enum { IB_ATTR_REQUIRED = 1u << 0 };

/** One attribute an element accepts. */
typedef struct ibSceneAttr {
	const char* name;          /**< attribute name */
	ibSceneAttrKind kind;      /**< value kind */
	size_t offset;             /**< where the value goes in the set's target struct */
	int count;                 /**< IB_ATTR_REALS: number of values; *_LIST: group size */
	const ibSceneEnum* values; /**< IB_ATTR_ENUM: accepted names */
	unsigned flags;            /**< IB_ATTR_REQUIRED, ... */
	const char* excludes;      /**< name of an attribute that must not be given together with this one */
} ibSceneAttr;

/** A variable-length list of numbers (free data with free()). */
typedef struct ibSceneRealList {
	double* data;
	int count;
} ibSceneRealList;

/** A variable-length list of integers (free data with free()). */
typedef struct ibSceneIntList {
	int* data;
	int count;
} ibSceneIntList;

/** A table of attributes and where their values go. */
typedef struct ibSceneAttrSet {
	const ibSceneAttr* attrs; /**< the table */
	int count;                /**< its length */
	void* target;             /**< struct that receives the values (pre-filled with defaults) */
	bool* present;            /**< optional, count entries: set to whether each attribute was given */
} ibSceneAttrSet;

/** Read all attributes of node into the sets: every attribute must be in exactly one table, required
 * ones must be present, mutually exclusive ones must not appear together, values must parse. Lists
 * already read stay allocated on failure (free them in any case). */
bool ibScene_ReadAttributes(ibSceneErr* e, const xmlNode* node, const ibSceneAttrSet* sets, int setCount);

/** True if the text is only XML white space. */
bool ibScene_IsBlank(const xmlChar* text);

#endif
