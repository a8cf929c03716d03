/* ibdyn_scene internals: state of one scene load, shared by the document reader (scene_read.c),
 * the body/shape reader (scene_body.c) and the joint reader (scene_joint.c). Not installed. */
#ifndef IBDYN_SCENE_LOAD_H
#define IBDYN_SCENE_LOAD_H

#include <libxml/hash.h>
#include <libxml/tree.h>

#include "scene_attr.h"

/** A named <material>: defaults for the shapes that refer to it. */
typedef struct ibSceneMaterial {
	double density;     /**< kg/m^3 */
	ibMaterial surface; /**< restitution and friction */
	long line;          /**< where it was defined (for duplicate messages) */
} ibSceneMaterial;

/** One load in progress. */
typedef struct ibSceneLoader {
	ibSceneErr* err;          /**< first error */
	ibWorldDef def;           /**< world definition: base hooks + <world> settings */
	ibSceneSettings run;      /**< <run> settings */
	const xmlNode* worldNode; /**< the <world> element (NULL if absent) */
	xmlHashTable* materials;  /**< name -> ibSceneMaterial* (malloc'd) */
	xmlHashTable* bodyNames;  /**< name -> line of the body (as a pointer) */
	xmlHashTable* bodyIds;    /**< name -> ibBodyId* (malloc'd) of every named body created */
	ibWorldId world;          /**< world being built (null before the bodies pass) */
	const char* path;         /**< the scene file (NULL for memory loads): base of relative OBJ file names */
	ibBodyId* asleep;         /**< bodies with awake="false", put to sleep after the joints (malloc'd) */
	int asleepCount, asleepCapacity;
} ibSceneLoader;

/** Parse a document (NULL after an error, which names the line libxml2 reported). */
xmlDoc* ibScene_ParseXml(ibSceneErr* e, const char* xml, size_t length);
/** Whole file into a malloc'd buffer (NULL after an IB_ERR_IO or out-of-memory error). */
char* ibScene_ReadFile(ibSceneErr* e, const char* path, size_t* outLength);
/** True if node is the element called name (without a namespace). */
bool ibScene_IsElement(const xmlNode* node, const char* name);
/** Report child as unknown or misplaced inside parent. */
void ibScene_BadElement(ibSceneErr* e, const xmlNode* parent, const xmlNode* child);
/** Check the children of parent: only white space, comments, processing instructions and (if
 * elementsAllowed) elements; the caller checks the elements themselves. */
bool ibScene_CheckContent(ibSceneErr* e, const xmlNode* parent, bool elementsAllowed);
/** Read one <body> with its shapes and optional <mass> into L->world. */
bool ibScene_ReadBody(ibSceneLoader* L, const xmlNode* node);
/** Read one <joint> with its optional <motor> into L->world (after all bodies exist). */
bool ibScene_ReadJoint(ibSceneLoader* L, const xmlNode* node);
/** The mesh of an OBJ file named by node's 'file' (relative to the scene file); false after an error. */
bool ibScene_LoadObjFile(ibSceneLoader* L, const xmlNode* node, const char* file, ibMesh* out);
/** Read one <soft> soft body (scene_soft.c). */
bool ibScene_ReadSoft(ibSceneLoader* L, const xmlNode* node);
/** Read one <soft_joint> rigid–soft joint (after bodies and soft bodies exist). */
bool ibScene_ReadSoftJoint(ibSceneLoader* L, const xmlNode* node);

#endif
