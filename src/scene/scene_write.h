/* ibdyn_scene internals: the text buffer of the writer and its attribute printers, shared by the
 * world/body writer (scene_write.c) and the joint writer (scene_write_joint.c). Not installed. */
#ifndef IBDYN_SCENE_WRITE_H
#define IBDYN_SCENE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "scene_common.h"

/** A scene being written into a growing buffer. */
typedef struct ibSceneWriter {
	char* buf;             /**< NUL-terminated text (malloc'd) */
	size_t len, cap;       /**< used and allocated bytes */
	bool outOfMemory;      /**< an allocation failed; nothing more is appended */
	const char* nonFinite; /**< first attribute of the current element with a non-finite value */
	const char* badText;   /**< first attribute whose text cannot be represented in XML */
} ibSceneWriter;

/** Append text. */
void ibSceneW_Puts(ibSceneWriter* w, const char* s);
/** Append ` name="v0 v1 ..."`, each number the shortest text that reads back bit for bit. */
void ibSceneW_AttrReals(ibSceneWriter* w, const char* name, const double* v, int n);
/** One number. */
void ibSceneW_AttrReal(ibSceneWriter* w, const char* name, double v);
/** A vector "x y z". */
void ibSceneW_AttrVec3(ibSceneWriter* w, const char* name, ibVec3 v);
/** A quaternion "w x y z". */
void ibSceneW_AttrQuat(ibSceneWriter* w, const char* name, ibQuat q);
/** A decimal integer. */
void ibSceneW_AttrInt(ibSceneWriter* w, const char* name, int v);
/** Escaped text (sets badText if it is not valid UTF-8 XML text). */
void ibSceneW_AttrText(ibSceneWriter* w, const char* name, const char* text);

/** Write every joint (defs[i] from ibJoint_GetDef, in ibWorld_GetJoints order) as <joint> in local
 * form; bodyNames[2i] and bodyNames[2i+1] are the names written for its bodies A and B. Returns
 * false after an error (recorded in e) or when out of memory. */
bool ibScene_WriteJoints(ibSceneWriter* w, const ibJointDef* defs, int count, const char* const* bodyNames,
                         ibSceneErr* e);

/** Write every soft body (<soft>) and rigid–soft joint (<soft_joint>) of world (scene_write_soft.c);
 * bodyName(ctx, body) gives the name written for a rigid body (NULL if it is not in the world).
 * False after an error (recorded in e, e.g. a user constraint) or when out of memory. */
bool ibScene_WriteSoft(ibSceneWriter* w, ibWorldId world, const char* (*bodyName)(void* ctx, ibBodyId body),
                       void* ctx, ibSceneErr* e);

#endif
