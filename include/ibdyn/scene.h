/* ibdyn scene files (XML, libxml2): separate library ibdyn_scene, built on the public API only.
 * Format: docs/scene-format.md. */
#ifndef IBDYN_SCENE_H
#define IBDYN_SCENE_H

#include "ibdyn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Run settings stored in a scene file beside the world. */
typedef struct ibSceneSettings {
	double timeStep; /**< step size h (s), > 0; default 0.01 */
	double duration; /**< simulated time to run (s), > 0; default 10 */
} ibSceneSettings;

/** Default run settings (h = 0.01 s, 10 s). */
IB_API ibSceneSettings ibDefaultSceneSettings(void);

/** Load a scene file and build a new world through the public API. All-or-nothing: on any error
 * (unknown element or attribute, missing or bad value, duplicate name, ...) no world is left and
 * err receives "file:line: message". base may be NULL; its allocator and log hooks are used. */
IB_API ibResult ibLoadScene(const char* path, const ibWorldDef* base, ibWorldId* outWorld,
                            ibSceneSettings* outSettings, char* err, size_t errSize);
/** As ibLoadScene, from a buffer; displayName is used in messages. */
IB_API ibResult ibLoadSceneFromMemory(const char* xml, size_t length, const char* displayName,
                                      const ibWorldDef* base, ibWorldId* outWorld,
                                      ibSceneSettings* outSettings, char* err, size_t errSize);
/** Save any world (and the run settings, may be NULL) so that loading reproduces it exactly. */
IB_API ibResult ibSaveScene(ibWorldId world, const ibSceneSettings* settings, const char* path, char* err,
                            size_t errSize);
/** As ibSaveScene, into a malloc'd NUL-terminated string (*outXml; free() it). */
IB_API ibResult ibSaveSceneToMemory(ibWorldId world, const ibSceneSettings* settings, char** outXml,
                                    char* err, size_t errSize);

/** Read the geometry of a Wavefront OBJ file: vertex positions ("v x y z", optionally w or r g b)
 * and faces ("f", polygons fan-triangulated from their first vertex; indices 1-based or negative =
 * relative to the vertices defined so far; forms v, v/vt, v/vt/vn, v//vn). vt, vn, vp, g, o, s,
 * usemtl, mtllib, l, p and comments are skipped; any other statement is an error. The triangles
 * keep the file's winding. A file without faces is valid (a point set, e.g. for a hull). On
 * failure *outMesh is empty and err receives "file:line: message". Free with ibFreeObjMesh. */
IB_API ibResult ibLoadObj(const char* path, ibMesh* outMesh, char* err, size_t errSize);
/** As ibLoadObj, from a buffer; displayName is used in messages. */
IB_API ibResult ibLoadObjFromMemory(const char* text, size_t length, const char* displayName, ibMesh* outMesh,
                                    char* err, size_t errSize);
/** Free a mesh returned by ibLoadObj / ibLoadObjFromMemory and empty it. */
IB_API void ibFreeObjMesh(ibMesh* mesh);

#ifdef __cplusplus
}
#endif
#endif
