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

#ifdef __cplusplus
}
#endif
#endif
