/* ibsim built-in default scene: a static ground box and dynamic bodies of every primitive shape
 * (and one compound body) thrown with linear and angular velocities. There are no joints; the bodies
 * land on the ground, bounce and slide (docs/ibsim.md says where they end up):
 *   ground    static box, top face at z = 0
 *   tumbler   asymmetric box without gravity spinning about its intermediate axis (it flips over)
 *   ball      sphere thrown up with spin about z
 *   capsule   tilted capsule thrown up, tumbling
 *   disc      flat cylinder spinning about a tilted axis (torque-free precession)
 *   dumbbell  compound: a box bar with a sphere at one end (centre of mass off the body origin) */
#include "default_scene.h"

#include <stdio.h>

typedef struct sceneBuilder {
	ibWorldId world;
	ibResult result;
	char* msg;
	size_t msgSize;
} sceneBuilder;

static void fail(sceneBuilder* b, const char* what)
{
	if (b->result != IB_OK) return;
	b->result = IB_ERR_INVALID_ARGUMENT;
	snprintf(b->msg, b->msgSize, "built-in scene: %s failed: %s", what, ibWorld_GetLastError(b->world));
}

static ibBodyId addBody(sceneBuilder* b, const char* name, ibBodyType type, ibVec3 position, ibQuat rotation, ibVec3 v,
                        ibVec3 w, double gravityScale)
{
	if (b->result != IB_OK) return IB_NULL_BODY;
	ibBodyDef def = ibDefaultBodyDef();
	def.type = type;
	def.name = name;
	def.position = position;
	def.rotation = rotation;
	def.linearVelocity = v;
	def.angularVelocity = w;
	def.gravityScale = gravityScale;
	ibBodyId body = ibCreateBody(b->world, &def);
	if (IB_IS_NULL(body)) fail(b, name);
	return body;
}

static void check(sceneBuilder* b, ibShapeId shape, const char* what)
{
	if (IB_IS_NULL(shape)) fail(b, what);
}

ibResult ibsimCreateDefaultScene(const ibWorldDef* base, ibWorldId* outWorld, ibSceneSettings* outSettings, char* msg,
                                 size_t msgSize)
{
	*outWorld = IB_NULL_WORLD;
	ibWorldDef wdef = base != NULL ? *base : ibDefaultWorldDef();
	wdef.gravity = ibV3(0.0, 0.0, -9.81);
	sceneBuilder b = {.world = ibCreateWorld(&wdef), .result = IB_OK, .msg = msg, .msgSize = msgSize};
	if (IB_IS_NULL(b.world)) {
		snprintf(msg, msgSize, "built-in scene: cannot create the world");
		return IB_ERR_OUT_OF_MEMORY;
	}
	const ibQuat identity = ibQ(1.0, 0.0, 0.0, 0.0);
	ibShapeDef sdef = ibDefaultShapeDef();

	ibBodyId ground =
	    addBody(&b, "ground", IB_BODY_STATIC, ibV3(0.0, 0.0, -0.25), identity, ibV3(0, 0, 0), ibV3(0, 0, 0), 1.0);
	if (b.result == IB_OK) check(&b, ibCreateBoxShape(ground, &sdef, &(ibBox){ibV3(5.0, 5.0, 0.25)}), "ground box");

	/* Spin about the intermediate principal axis (y) with a small perturbation: unstable, flips. */
	ibBodyId tumbler = addBody(&b, "tumbler", IB_BODY_DYNAMIC, ibV3(0.0, 0.0, 3.0), identity, ibV3(0.2, 0.0, 0.0),
	                           ibV3(0.02, 4.0, 0.03), 0.0);
	if (b.result == IB_OK) check(&b, ibCreateBoxShape(tumbler, &sdef, &(ibBox){ibV3(0.3, 0.15, 0.05)}), "tumbler box");

	ibBodyId ball = addBody(&b, "ball", IB_BODY_DYNAMIC, ibV3(-2.0, 0.0, 1.0), identity, ibV3(1.5, 0.0, 5.0),
	                        ibV3(0.0, 0.0, 6.0), 1.0);
	if (b.result == IB_OK) check(&b, ibCreateSphereShape(ball, &sdef, &(ibSphere){0.25}), "ball sphere");

	ibBodyId capsule =
	    addBody(&b, "capsule", IB_BODY_DYNAMIC, ibV3(2.0, 0.0, 1.5), ibQuatFromAxisAngle(ibV3(1.0, 0.0, 0.0), 0.5),
	            ibV3(-1.0, 0.5, 4.0), ibV3(3.0, 1.0, 0.0), 1.0);
	if (b.result == IB_OK) check(&b, ibCreateCapsuleShape(capsule, &sdef, &(ibCapsule){0.1, 0.4}), "capsule");

	ibBodyId disc =
	    addBody(&b, "disc", IB_BODY_DYNAMIC, ibV3(0.0, -2.0, 1.0), ibQuatFromAxisAngle(ibV3(0.0, 1.0, 0.0), 0.3),
	            ibV3(0.0, 1.0, 6.0), ibV3(1.0, 0.0, 8.0), 1.0);
	if (b.result == IB_OK) check(&b, ibCreateCylinderShape(disc, &sdef, &(ibCylinder){0.2, 0.05}), "disc cylinder");

	ibBodyId dumbbell = addBody(&b, "dumbbell", IB_BODY_DYNAMIC, ibV3(0.0, 2.0, 2.0), identity, ibV3(0.0, -0.5, 3.0),
	                            ibV3(1.0, 2.0, 3.0), 1.0);
	if (b.result == IB_OK) {
		check(&b, ibCreateBoxShape(dumbbell, &sdef, &(ibBox){ibV3(0.3, 0.04, 0.04)}), "dumbbell bar");
		ibShapeDef end = sdef;
		end.localPosition = ibV3(0.35, 0.0, 0.0);
		if (b.result == IB_OK) check(&b, ibCreateSphereShape(dumbbell, &end, &(ibSphere){0.12}), "dumbbell end");
	}

	if (b.result != IB_OK) {
		ibDestroyWorld(b.world);
		return b.result;
	}
	*outWorld = b.world;
	*outSettings = (ibSceneSettings){.timeStep = 0.01, .duration = 2.0};
	return IB_OK;
}
