/* Smoke test of an installed ibdyn: a dynamic sphere falls freely for one second. */
#include <math.h>
#include <stdio.h>

#include <ibdyn/ibdyn.h>

int main(void)
{
	ibVersion v = ibGetVersion();
	if (v.major != IBDYN_VERSION_MAJOR || v.minor != IBDYN_VERSION_MINOR || v.patch != IBDYN_VERSION_PATCH) {
		fprintf(stderr, "consumer: library %d.%d.%d does not match header %d.%d.%d\n", v.major, v.minor, v.patch,
		        IBDYN_VERSION_MAJOR, IBDYN_VERSION_MINOR, IBDYN_VERSION_PATCH);
		return 1;
	}
	ibWorldDef wdef = ibDefaultWorldDef();
	ibWorldId world = ibCreateWorld(&wdef);
	if (!ibWorld_IsValid(world)) {
		fprintf(stderr, "consumer: ibCreateWorld failed\n");
		return 1;
	}
	ibBodyDef bdef = ibDefaultBodyDef();
	bdef.type = IB_BODY_DYNAMIC;
	bdef.position = ibV3(0.0, 0.0, 10.0);
	ibBodyId ball = ibCreateBody(world, &bdef);
	ibShapeDef sdef = ibDefaultShapeDef();
	ibSphere sphere = {0.5};
	if (IB_IS_NULL(ibCreateSphereShape(ball, &sdef, &sphere))) {
		fprintf(stderr, "consumer: %s\n", ibWorld_GetLastError(world));
		ibDestroyWorld(world);
		return 1;
	}
	for (int i = 0; i < 100; ++i) {
		if (ibWorld_Step(world, 0.01) != IB_OK) {
			fprintf(stderr, "consumer: step failed: %s\n", ibWorld_GetLastError(world));
			ibDestroyWorld(world);
			return 1;
		}
	}
	double t = ibWorld_GetTime(world);
	double z = ibBody_GetPosition(ball).z;
	double expected = 10.0 - 0.5 * 9.81 * t * t;
	ibDestroyWorld(world);
	printf("consumer: ibdyn %d.%d.%d, sphere fell from 10 m to %.9f m in %.3f s\n", v.major, v.minor, v.patch, z, t);
	if (!(z < 10.0 - 4.0) || fabs(z - expected) > 1e-9) {
		fprintf(stderr, "consumer: expected z = %.12f\n", expected);
		return 1;
	}
	return 0;
}
