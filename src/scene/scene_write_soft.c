/* ibdyn_scene writer for soft bodies and rigid–soft joints (<soft>, <soft_joint>): the rest shape
 * and material as created (ibSoftBody_GetDef) plus the current particle positions, velocities and
 * pins; the joints in their stored form (barycentric coordinates and body-frame anchor), so that
 * load -> save -> load reproduces the soft state exactly. User constraints (callbacks) cannot be
 * written and make the save fail. */
#define _POSIX_C_SOURCE 200809L

#include "scene_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void attrInts(ibSceneWriter* w, const char* name, const int* v, int n)
{
	if (n <= 0) return;
	ibSceneW_Puts(w, " ");
	ibSceneW_Puts(w, name);
	ibSceneW_Puts(w, "=\"");
	char s[16];
	for (int i = 0; i < n; ++i) {
		snprintf(s, sizeof s, i ? " %d" : "%d", v[i]);
		ibSceneW_Puts(w, s);
	}
	ibSceneW_Puts(w, "\"");
}

static void attrVecs(ibSceneWriter* w, const char* name, const ibVec3* v, int n, double* scratch)
{
	for (int i = 0; i < n; ++i) {
		scratch[3 * i] = v[i].x;
		scratch[3 * i + 1] = v[i].y;
		scratch[3 * i + 2] = v[i].z;
	}
	ibSceneW_AttrReals(w, name, scratch, 3 * n);
}

static const char* bendingName(ibSoftBending b)
{
	return b == IB_SOFT_BENDING_DISTANCE ? "distance" : b == IB_SOFT_BENDING_DIHEDRAL ? "dihedral" : "none";
}

static bool writeSoft(ibSceneWriter* w, ibSoftBodyId sb, const char* name, ibSceneErr* e)
{
	ibSoftBodyDef d;
	if (ibSoftBody_GetDef(sb, &d) != IB_OK) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "a soft body cannot be read");
		return false;
	}
	int n = d.vertexCount;
	ibVec3* x = malloc(sizeof(ibVec3) * (size_t)n);
	ibVec3* v = malloc(sizeof(ibVec3) * (size_t)n);
	double* scratch = malloc(sizeof(double) * 3 * (size_t)n);
	int* pins = malloc(sizeof(int) * (size_t)n);
	if (!x || !v || !scratch || !pins) {
		free(x), free(v), free(scratch), free(pins);
		w->outOfMemory = true;
		return false;
	}
	ibSoftBody_GetPositions(sb, x, n);
	ibSoftBody_GetVelocities(sb, v, n);
	int np = 0;
	for (int i = 0; i < n; ++i)
		if (ibSoftBody_IsPinned(sb, i)) pins[np++] = i;
	w->nonFinite = NULL;
	ibSceneW_Puts(w, "  <soft");
	if (name && *name) ibSceneW_AttrText(w, "name", name);
	attrVecs(w, "vertices", d.vertices, n, scratch);
	attrInts(w, "triangles", d.triangles, 3 * d.triangleCount);
	attrInts(w, "tetrahedra", d.tetrahedra, 4 * d.tetrahedronCount);
	attrInts(w, "edges", d.edges, 2 * d.edgeCount);
	ibSceneW_AttrReals(w, "masses", d.vertexMasses, n);
	attrInts(w, "pinned", pins, np);
	ibSceneW_AttrReal(w, "density", d.density);
	ibSceneW_AttrReal(w, "stretch_compliance", d.stretchCompliance);
	ibSceneW_Puts(w, " bending=\"");
	ibSceneW_Puts(w, bendingName(d.bending));
	ibSceneW_Puts(w, "\"");
	ibSceneW_AttrReal(w, "bending_compliance", d.bendingCompliance);
	ibSceneW_Puts(w, d.preserveVolume ? " preserve_volume=\"true\"" : " preserve_volume=\"false\"");
	ibSceneW_AttrReal(w, "volume_compliance", d.volumeCompliance);
	ibSceneW_AttrReal(w, "damping", d.linearDamping);
	ibSceneW_AttrReal(w, "gravity_scale", d.gravityScale);
	ibSceneW_AttrReal(w, "tolerance", d.positionTolerance);
	ibSceneW_AttrInt(w, "max_iterations", d.maxIterations);
	ibSceneW_Puts(w, d.solver == IB_SOFT_SOLVER_SPARSE ? " solver=\"sparse\""
	                 : d.solver == IB_SOFT_SOLVER_AUTO ? " solver=\"auto\""
	                                                   : " solver=\"gauss_seidel\"");
	attrVecs(w, "positions", x, n, scratch);
	attrVecs(w, "velocities", v, n, scratch);
	ibSceneW_Puts(w, "/>\n");
	free(x), free(v), free(scratch), free(pins);
	if (w->nonFinite) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "soft body '%s': '%s' is not finite", name ? name : "", w->nonFinite);
		return false;
	}
	return true;
}

bool ibScene_WriteSoft(ibSceneWriter* w, ibWorldId world, const char* (*bodyName)(void* ctx, ibBodyId body),
                       void* ctx, ibSceneErr* e)
{
	int ns = ibWorld_GetSoftBodies(world, NULL, 0), nc = ibWorld_GetConstraints(world, NULL, 0);
	ibSoftBodyId* softs = malloc(sizeof *softs * (size_t)(ns > 0 ? ns : 1));
	ibConstraintId* cons = malloc(sizeof *cons * (size_t)(nc > 0 ? nc : 1));
	char** names = calloc((size_t)(ns > 0 ? ns : 1), sizeof *names); /* written names of unnamed soft bodies */
	bool ok = softs && cons && names;
	if (!ok) w->outOfMemory = true;
	if (ok) {
		ns = ibWorld_GetSoftBodies(world, softs, ns);
		nc = ibWorld_GetConstraints(world, cons, nc);
	}
	/* names for unnamed soft bodies that joints refer to: "soft<i>", made unique */
	for (int j = 0; ok && j < nc; ++j) {
		ibSoftJointDef d;
		if (ibSoftJoint_GetDef(cons[j], &d) != IB_OK) {
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "constraint %d is a user constraint (callback): it cannot be saved", j);
			ok = false;
			break;
		}
		for (int i = 0; i < ns; ++i) {
			if (!IB_ID_EQUALS(softs[i], d.soft) || ibSoftBody_GetName(softs[i])[0] != '\0' || names[i]) continue;
			char buf[48];
			snprintf(buf, sizeof buf, "soft%d", i);
			for (int k = 1; !IB_IS_NULL(ibWorld_FindSoftBody(world, buf)); ++k) snprintf(buf, sizeof buf, "soft%d_%d", i, k);
			names[i] = malloc(strlen(buf) + 1);
			if (!names[i]) {
				w->outOfMemory = true;
				ok = false;
				break;
			}
			strcpy(names[i], buf);
		}
	}
	for (int i = 0; ok && i < ns; ++i) ok = writeSoft(w, softs[i], names[i] ? names[i] : ibSoftBody_GetName(softs[i]), e);
	for (int j = 0; ok && j < nc; ++j) {
		ibSoftJointDef d;
		ibSoftJoint_GetDef(cons[j], &d);
		const char* body = bodyName(ctx, d.body);
		const char* soft = NULL;
		for (int i = 0; i < ns; ++i)
			if (IB_ID_EQUALS(softs[i], d.soft)) soft = names[i] ? names[i] : ibSoftBody_GetName(softs[i]);
		if (!body || !soft) {
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "soft joint %d refers to a body that is not in the world", j);
			ok = false;
			break;
		}
		w->nonFinite = NULL;
		ibSceneW_Puts(w, d.type == IB_SOFT_JOINT_TRIANGLE ? "  <soft_joint type=\"triangle\"" : "  <soft_joint type=\"vertex\"");
		if (d.name && *d.name) ibSceneW_AttrText(w, "name", d.name);
		ibSceneW_AttrText(w, "body", body);
		ibSceneW_AttrText(w, "soft", soft);
		if (d.type == IB_SOFT_JOINT_TRIANGLE) {
			ibSceneW_AttrInt(w, "triangle", d.triangle);
			ibSceneW_AttrReals(w, "coordinates", d.coordinates, 4);
		} else {
			ibSceneW_AttrInt(w, "vertex", d.vertex);
		}
		ibSceneW_AttrVec3(w, "anchor", d.localAnchor);
		ibSceneW_Puts(w, "/>\n");
		if (w->nonFinite) {
			ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "soft joint %d: '%s' is not finite", j, w->nonFinite);
			ok = false;
		}
	}
	for (int i = 0; names && i < ns; ++i) free(names[i]);
	free(names);
	free(softs);
	free(cons);
	return ok;
}
