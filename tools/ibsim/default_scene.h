/* ibsim built-in default scene, built with the public API (used when no scene file is given). */
#ifndef IBSIM_DEFAULT_SCENE_H
#define IBSIM_DEFAULT_SCENE_H

#include <stddef.h>

#include <ibdyn/ibdyn.h>
#include <ibdyn/scene.h>

/** Display name of the built-in scene. */
#define IBSIM_DEFAULT_SCENE_NAME "<built-in default scene>"

/** Build the default scene into a new world created from base (its gravity is replaced).
 * On failure no world is left, msg says why and the result is returned. */
ibResult ibsimCreateDefaultScene(const ibWorldDef* base, ibWorldId* outWorld, ibSceneSettings* outSettings, char* msg,
                                 size_t msgSize);

#endif
