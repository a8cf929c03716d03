/* ibdyn_scene loader: the entry points, document structure, <ibdyn>, <world>, <run>, <material>.
 * Bytes become a document in scene_xml.c; bodies and shapes are read in scene_body.c, joints in
 * scene_joint.c. Everything
 * is built through the public API; on any error the partial world is destroyed (all-or-nothing).
 * Format: docs/scene-format.md. */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ibSceneSettings ibDefaultSceneSettings(void) { return (ibSceneSettings){0.01, 10.0}; }

/* ---------------------------------------------------------------- document structure */

static const char* const knownElements[] = {"ibdyn", "world", "run",   "material", "body",  "sphere", "box",
                                            "capsule", "cylinder", "mesh", "hull", "plane", "trimesh", "mass",
                                            "joint", "motor", "point", "soft", "soft_joint"};

bool ibScene_IsElement(const xmlNode* node, const char* name)
{
	return node->type == XML_ELEMENT_NODE && node->ns == NULL && strcmp((const char*)node->name, name) == 0;
}

void ibScene_BadElement(ibSceneErr* e, const xmlNode* parent, const xmlNode* child)
{
	const char* name = (const char*)child->name;
	const char* prefix = child->ns != NULL && child->ns->prefix != NULL ? (const char*)child->ns->prefix : NULL;
	bool known = false;
	for (size_t i = 0; i < sizeof knownElements / sizeof knownElements[0] && child->ns == NULL; ++i)
		known = known || strcmp(knownElements[i], name) == 0;
	if (known)
		ibScene_NodeError(e, child, "element <%s> is not allowed inside <%s>", name, (const char*)parent->name);
	else
		ibScene_NodeError(e, child, "unknown element <%s%s%s> inside <%s>", prefix ? prefix : "", prefix ? ":" : "",
		                  name, (const char*)parent->name);
}

/* Line of the first non-blank character of a text node: libxml2 records the line where the text
 * ends, so count back the line breaks that follow it. */
static long textLine(const xmlNode* parent, const xmlNode* text)
{
	long line = ibScene_Line(text);
	const xmlChar* p = text->content;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
	for (; *p; ++p) line -= *p == '\n';
	long min = ibScene_Line(parent);
	return line > min ? line : min;
}

bool ibScene_CheckContent(ibSceneErr* e, const xmlNode* parent, bool elementsAllowed)
{
	for (const xmlNode* c = parent->children; c != NULL; c = c->next) {
		switch (c->type) {
		case XML_ELEMENT_NODE:
			if (!elementsAllowed) {
				ibScene_BadElement(e, parent, c);
				return false;
			}
			break;
		case XML_TEXT_NODE:
			if (!ibScene_IsBlank(c->content)) {
				ibScene_Fail(e, IB_ERR_PARSE, textLine(parent, c), "unexpected text inside <%s>",
				             (const char*)parent->name);
				return false;
			}
			break;
		case XML_COMMENT_NODE:
		case XML_PI_NODE:
			break;
		default:
			ibScene_NodeError(e, c->line > 0 ? c : parent, "unexpected content inside <%s>", (const char*)parent->name);
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------- <world> and <run> */

typedef struct worldAttrs {
	ibVec3 gravity;
	ibSolverSettings solver;
	int integrator;
	int method;
	ibCollisionSettings collision;
	int broadphase;
	int toiMode;
	int restitutionLaw;
	int restitutionMixing;
	int frictionMixing;
} worldAttrs;

/* clang-format off */
#define WORLD_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(worldAttrs, f)}
static const ibSceneAttr worldAttrTable[] = {
	WORLD_ATTR("gravity", IB_ATTR_VEC3, gravity),
	{.name = "integrator", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, integrator), .values = ibScene_Integrators},
	WORLD_ATTR("integrator_tolerance", IB_ATTR_REAL, solver.integratorTolerance),
	WORLD_ATTR("integrator_max_substeps", IB_ATTR_INT, solver.integratorMaxSubsteps),
	WORLD_ATTR("position_tolerance", IB_ATTR_REAL, solver.positionTolerance),
	WORLD_ATTR("angular_tolerance", IB_ATTR_REAL, solver.angularTolerance),
	WORLD_ATTR("velocity_tolerance", IB_ATTR_REAL, solver.velocityTolerance),
	WORLD_ATTR("max_position_iterations", IB_ATTR_INT, solver.maxPositionIterations),
	WORLD_ATTR("max_velocity_iterations", IB_ATTR_INT, solver.maxVelocityIterations),
	WORLD_ATTR("max_correction_impulse", IB_ATTR_REAL, solver.maxCorrectionImpulse),
	{.name = "solver", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, method), .values = ibScene_Solvers},
	WORLD_ATTR("warm_start", IB_ATTR_BOOL, solver.warmStart),
	WORLD_ATTR("order", IB_ATTR_INT, solver.order),
	WORLD_ATTR("max_step_subdivisions", IB_ATTR_INT, solver.maxStepSubdivisions),
	WORLD_ATTR("collision", IB_ATTR_BOOL, collision.enabled),
	WORLD_ATTR("contact_tolerance", IB_ATTR_REAL, collision.contactTolerance),
	{.name = "broadphase", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, broadphase), .values = ibScene_Broadphases},
	{.name = "toi", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, toiMode), .values = ibScene_ToiModes},
	WORLD_ATTR("conservative_advancement", IB_ATTR_BOOL, collision.conservativeAdvancement),
	WORLD_ATTR("max_toi_substeps", IB_ATTR_INT, collision.maxToiSubsteps),
	WORLD_ATTR("max_toi_iterations", IB_ATTR_INT, collision.maxToiIterations),
	WORLD_ATTR("speculative_approach", IB_ATTR_BOOL, collision.speculativeApproach),
	WORLD_ATTR("max_rotation_per_step", IB_ATTR_REAL, solver.maxRotationPerStep),
	WORLD_ATTR("max_linear_speed", IB_ATTR_REAL, solver.maxLinearSpeed),
	WORLD_ATTR("max_angular_speed", IB_ATTR_REAL, solver.maxAngularSpeed),
	WORLD_ATTR("contacts", IB_ATTR_BOOL, solver.contact.enabled),
	{.name = "restitution_law", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, restitutionLaw), .values = ibScene_RestitutionLaws},
	{.name = "restitution_mixing", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, restitutionMixing), .values = ibScene_MixRules},
	{.name = "friction_mixing", .kind = IB_ATTR_ENUM, .offset = offsetof(worldAttrs, frictionMixing), .values = ibScene_MixRules},
	WORLD_ATTR("resting_speed", IB_ATTR_REAL, solver.contact.restingSpeed),
	WORLD_ATTR("collision_tolerance", IB_ATTR_REAL, solver.contact.collisionTolerance),
	WORLD_ATTR("contact_position_tolerance", IB_ATTR_REAL, solver.contact.contactPositionTolerance),
	WORLD_ATTR("max_collision_iterations", IB_ATTR_INT, solver.contact.maxCollisionIterations),
	WORLD_ATTR("max_contact_iterations", IB_ATTR_INT, solver.contact.maxContactIterations),
	WORLD_ATTR("joint_velocity_sweeps", IB_ATTR_BOOL, solver.contact.jointVelocitySweeps),
	WORLD_ATTR("contact_graph", IB_ATTR_BOOL, solver.contact.contactGraph),
	WORLD_ATTR("shock_iterations", IB_ATTR_INT, solver.contact.shockIterations),
	WORLD_ATTR("stall_sweeps", IB_ATTR_INT, solver.contact.stallSweeps),
	WORLD_ATTR("sleeping", IB_ATTR_BOOL, solver.sleep.enabled),
	WORLD_ATTR("sleep_linear_threshold", IB_ATTR_REAL, solver.sleep.linearThreshold),
	WORLD_ATTR("sleep_angular_threshold", IB_ATTR_REAL, solver.sleep.angularThreshold),
	WORLD_ATTR("sleep_time", IB_ATTR_REAL, solver.sleep.timeToSleep),
	WORLD_ATTR("contact_warm_start", IB_ATTR_BOOL, solver.contact.warmStart),
	WORLD_ATTR("contact_direct_solve", IB_ATTR_BOOL, solver.contact.directSolve),
	WORLD_ATTR("contact_joint_response", IB_ATTR_BOOL, solver.contact.jointResponse),
	WORLD_ATTR("contact_direct_follow", IB_ATTR_BOOL, solver.contact.directFollow),
};
/* clang-format on */

static bool readWorld(ibSceneLoader* L, const xmlNode* node)
{
	worldAttrs a = {L->def.gravity,         L->def.solver,
	                (int)L->def.solver.integrator, (int)L->def.solver.method,
	                L->def.collision,       (int)L->def.collision.broadphase,
	                (int)L->def.collision.toiMode, (int)L->def.solver.contact.restitutionLaw,
	                (int)L->def.solver.contact.restitutionMixing, (int)L->def.solver.contact.frictionMixing};
	ibSceneAttrSet set = {worldAttrTable, (int)(sizeof worldAttrTable / sizeof worldAttrTable[0]), &a, NULL};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	L->def.gravity = a.gravity;
	L->def.solver = a.solver;
	L->def.solver.integrator = (ibIntegrator)a.integrator;
	L->def.solver.method = (ibJointSolver)a.method;
	L->def.collision = a.collision;
	L->def.collision.broadphase = (ibBroadphaseMethod)a.broadphase;
	L->def.collision.toiMode = (ibToiMode)a.toiMode;
	L->def.solver.contact.restitutionLaw = (ibRestitutionLaw)a.restitutionLaw;
	L->def.solver.contact.restitutionMixing = (ibMixRule)a.restitutionMixing;
	L->def.solver.contact.frictionMixing = (ibMixRule)a.frictionMixing;
	L->worldNode = node;
	return true;
}

/* <solver_group id="N" solver="..."/>: the joint method of the islands of bodies in group N */
typedef struct groupAttrs {
	int id;
	int method;
} groupAttrs;

/* clang-format off */
static const ibSceneAttr groupAttrTable[] = {
	{.name = "id", .kind = IB_ATTR_INT, .offset = offsetof(groupAttrs, id), .flags = IB_ATTR_REQUIRED},
	{.name = "solver", .kind = IB_ATTR_ENUM, .offset = offsetof(groupAttrs, method), .values = ibScene_Solvers,
	 .flags = IB_ATTR_REQUIRED},
};
/* clang-format on */

static bool readSolverGroup(ibSceneLoader* L, const xmlNode* node)
{
	groupAttrs a = {0, 0};
	ibSceneAttrSet set = {groupAttrTable, 2, &a, NULL};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	ibJointSolver had;
	if (a.id >= 0 && ibWorld_GetGroupSolver(L->world, a.id, &had)) {
		ibScene_NodeError(L->err, node, "duplicate <solver_group> id %d", a.id);
		return false;
	}
	if (ibWorld_SetGroupSolver(L->world, a.id, (ibJointSolver)a.method) != IB_OK) {
		ibScene_NodeError(L->err, node, "%s", ibWorld_GetLastError(L->world));
		return false;
	}
	return true;
}

/* clang-format off */
static const ibSceneAttr runAttrTable[] = {
	{.name = "timestep", .kind = IB_ATTR_REAL, .offset = offsetof(ibSceneSettings, timeStep)},
	{.name = "duration", .kind = IB_ATTR_REAL, .offset = offsetof(ibSceneSettings, duration)},
};
/* clang-format on */

static bool readRun(ibSceneLoader* L, const xmlNode* node)
{
	ibSceneSettings s = ibDefaultSceneSettings();
	ibSceneAttrSet set = {runAttrTable, 2, &s, NULL};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	if (!(s.timeStep > 0.0) || !(s.duration > 0.0)) {
		ibScene_NodeError(L->err, node, "attribute '%s' of <run> must be > 0",
		                  s.timeStep > 0.0 ? "duration" : "timestep");
		return false;
	}
	L->run = s;
	return true;
}

/* ---------------------------------------------------------------- <material> */

typedef struct materialAttrs {
	const char* name;
	ibSceneMaterial m;
} materialAttrs;

/* clang-format off */
#define MATERIAL_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(materialAttrs, f)}
static const ibSceneAttr materialAttrTable[] = {
	{.name = "name", .kind = IB_ATTR_STRING, .offset = offsetof(materialAttrs, name), .flags = IB_ATTR_REQUIRED},
	MATERIAL_ATTR("density", IB_ATTR_REAL, m.density),
	MATERIAL_ATTR("restitution", IB_ATTR_REAL, m.surface.restitution),
	MATERIAL_ATTR("static_friction", IB_ATTR_REAL, m.surface.staticFriction),
	MATERIAL_ATTR("dynamic_friction", IB_ATTR_REAL, m.surface.dynamicFriction),
};
/* clang-format on */

/* Frees a malloc'd hash payload (materials and body handles). */
static void freePayload(void* payload, const xmlChar* name)
{
	(void)name;
	free(payload);
}

static bool readMaterial(ibSceneLoader* L, const xmlNode* node)
{
	ibShapeDef defaults = ibDefaultShapeDef();
	materialAttrs a = {NULL, {defaults.density, defaults.material, ibScene_Line(node)}};
	ibSceneAttrSet set = {materialAttrTable, (int)(sizeof materialAttrTable / sizeof materialAttrTable[0]), &a, NULL};
	if (!ibScene_CheckContent(L->err, node, false) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	const ibMaterial* s = &a.m.surface;
	const char* bad = !(a.m.density > 0.0)                                ? "density must be > 0"
	                  : !(s->restitution >= 0.0 && s->restitution <= 1.0) ? "restitution must be in [0, 1]"
	                  : !(s->staticFriction >= 0.0)                       ? "static_friction must be >= 0"
	                  : !(s->dynamicFriction >= 0.0)                      ? "dynamic_friction must be >= 0"
	                                                                      : NULL;
	if (bad != NULL) {
		ibScene_NodeError(L->err, node, "material '%s': %s", a.name, bad);
		return false;
	}
	const ibSceneMaterial* first = xmlHashLookup(L->materials, (const xmlChar*)a.name);
	if (first != NULL) {
		ibScene_NodeError(L->err, node, "duplicate material name '%s' (first defined on line %ld)", a.name,
		                  first->line);
		return false;
	}
	ibSceneMaterial* m = malloc(sizeof *m);
	if (m == NULL || (*m = a.m, xmlHashAddEntry(L->materials, (const xmlChar*)a.name, m) != 0)) {
		free(m);
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(node), "out of memory");
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- the document */

/* Children of <ibdyn>, read in passes: settings and materials first, then the world is created and
 * the bodies added in document order, then the joints in document order (so a joint may appear
 * anywhere and refers to any body by name). */
enum { PASS_SETTINGS, PASS_BODIES, PASS_JOINTS, PASS_COUNT };

typedef struct rootElement {
	const char* name;
	int pass;
	bool once;
	bool (*read)(ibSceneLoader* L, const xmlNode* node);
} rootElement;

static const rootElement rootElements[] = {
    {"world", PASS_SETTINGS, true, readWorld},        {"run", PASS_SETTINGS, true, readRun},
    {"material", PASS_SETTINGS, false, readMaterial}, {"body", PASS_BODIES, false, ibScene_ReadBody},
    {"joint", PASS_JOINTS, false, ibScene_ReadJoint}, {"solver_group", PASS_BODIES, false, readSolverGroup},
    {"soft", PASS_BODIES, false, ibScene_ReadSoft},   {"soft_joint", PASS_JOINTS, false, ibScene_ReadSoftJoint},
};
enum { ROOT_ELEMENT_COUNT = sizeof rootElements / sizeof rootElements[0] };

static const ibSceneAttr rootAttrTable[] = {
    {.name = "version", .kind = IB_ATTR_INT, .offset = 0, .flags = IB_ATTR_REQUIRED},
};

static bool createWorld(ibSceneLoader* L, const xmlNode* root)
{
	const xmlNode* at = L->worldNode != NULL ? L->worldNode : root;
	char msg[512] = "";
	if (ibValidateWorldDef(&L->def, msg, sizeof msg) != IB_OK) {
		ibScene_NodeError(L->err, at, "invalid world settings: %s", msg);
		return false;
	}
	L->world = ibCreateWorld(&L->def);
	if (IB_IS_NULL(L->world)) {
		ibScene_NodeError(L->err, at, "cannot create the world (too many worlds or out of memory)");
		return false;
	}
	return true;
}

static bool readRoot(ibSceneLoader* L, const xmlNode* root)
{
	int version = 0;
	ibSceneAttrSet set = {rootAttrTable, 1, &version, NULL};
	if (!ibScene_CheckContent(L->err, root, true) || !ibScene_ReadAttributes(L->err, root, &set, 1)) return false;
	if (version != 1) {
		ibScene_NodeError(L->err, root, "unsupported scene version %d (this library reads version 1)", version);
		return false;
	}
	for (int pass = 0; pass < PASS_COUNT; ++pass) {
		if (pass == PASS_BODIES && !createWorld(L, root)) return false;
		bool seen[ROOT_ELEMENT_COUNT] = {false};
		for (const xmlNode* c = root->children; c != NULL; c = c->next) {
			if (c->type != XML_ELEMENT_NODE) continue;
			int k = 0;
			while (k < ROOT_ELEMENT_COUNT && !ibScene_IsElement(c, rootElements[k].name)) ++k;
			if (k == ROOT_ELEMENT_COUNT) {
				ibScene_BadElement(L->err, root, c);
				return false;
			}
			if (rootElements[k].pass != pass) continue;
			if (rootElements[k].once && seen[k]) {
				ibScene_NodeError(L->err, c, "duplicate <%s> element", rootElements[k].name);
				return false;
			}
			seen[k] = true;
			if (!rootElements[k].read(L, c)) return false;
		}
	}
	for (int i = 0; i < L->asleepCount; ++i) /* awake="false", now that the joints exist */
		if (ibBody_SetAwake(L->asleep[i], false) != IB_OK) {
			ibScene_Fail(L->err, IB_ERR_INVALID_ARGUMENT, 0, "cannot put body %d to sleep: %s", i,
			             ibWorld_GetLastError(L->world));
			return false;
		}
	return true;
}

static bool readDocument(ibSceneLoader* L, xmlDoc* doc)
{
	const xmlNode* root = xmlDocGetRootElement(doc);
	if (root == NULL) {
		ibScene_Fail(L->err, IB_ERR_PARSE, 0, "no root element");
		return false;
	}
	if (doc->intSubset != NULL || doc->extSubset != NULL) {
		ibScene_NodeError(L->err, root, "DOCTYPE declarations are not allowed");
		return false;
	}
	if (!ibScene_IsElement(root, "ibdyn")) {
		ibScene_NodeError(L->err, root, "the root element must be <ibdyn>, not <%s>", (const char*)root->name);
		return false;
	}
	L->materials = xmlHashCreate(16);
	L->bodyNames = xmlHashCreate(16);
	L->bodyIds = xmlHashCreate(16);
	if (L->materials == NULL || L->bodyNames == NULL || L->bodyIds == NULL) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, 0, "out of memory");
		return false;
	}
	return readRoot(L, root);
}

static ibResult loadXml(ibSceneErr* e, const char* xml, size_t length, const char* path, const ibWorldDef* base,
                        ibWorldId* outWorld, ibSceneSettings* outSettings)
{
	xmlDoc* doc = ibScene_ParseXml(e, xml, length);
	if (doc == NULL) return e->result;
	ibSceneLocale locale;
	if (!ibScene_EnterCLocale(&locale)) {
		xmlFreeDoc(doc);
		ibScene_Fail(e, IB_ERR_OUT_OF_MEMORY, 0, "cannot create the C locale");
		return e->result;
	}
	ibSceneLoader L = {.err = e, .run = ibDefaultSceneSettings(), .path = path};
	ibWorldDef defaults = ibDefaultWorldDef();
	L.def = base != NULL ? *base : defaults;
	L.def.gravity = defaults.gravity; /* the file alone defines the physics; base gives the hooks */
	L.def.solver = defaults.solver;
	bool ok = readDocument(&L, doc);
	ibScene_LeaveCLocale(&locale);
	if (L.materials != NULL) xmlHashFree(L.materials, freePayload);
	if (L.bodyNames != NULL) xmlHashFree(L.bodyNames, NULL);
	if (L.bodyIds != NULL) xmlHashFree(L.bodyIds, freePayload);
	free(L.asleep);
	xmlFreeDoc(doc);
	if (!ok) {
		if (!IB_IS_NULL(L.world)) ibDestroyWorld(L.world);
		if (e->result == IB_OK) ibScene_Fail(e, IB_ERR_PARSE, 0, "cannot load the scene");
		return e->result;
	}
	*outWorld = L.world;
	if (outSettings != NULL) *outSettings = L.run;
	return IB_OK;
}

static bool beginLoad(ibSceneErr* e, ibWorldId* outWorld, char* err, size_t errSize)
{
	if (err != NULL && errSize > 0) err[0] = '\0';
	if (outWorld == NULL) {
		ibScene_Fail(e, IB_ERR_INVALID_ARGUMENT, 0, "outWorld is NULL");
		return false;
	}
	*outWorld = IB_NULL_WORLD;
	return true;
}

ibResult ibLoadSceneFromMemory(const char* xml, size_t length, const char* displayName, const ibWorldDef* base,
                               ibWorldId* outWorld, ibSceneSettings* outSettings, char* err, size_t errSize)
{
	ibSceneErr e = {displayName != NULL ? displayName : "<memory>", err, errSize, IB_OK};
	if (!beginLoad(&e, outWorld, err, errSize)) return e.result;
	if (xml == NULL) {
		ibScene_Fail(&e, IB_ERR_INVALID_ARGUMENT, 0, "the XML buffer is NULL");
		return e.result;
	}
	return loadXml(&e, xml, length, NULL, base, outWorld, outSettings);
}

ibResult ibLoadScene(const char* path, const ibWorldDef* base, ibWorldId* outWorld, ibSceneSettings* outSettings,
                     char* err, size_t errSize)
{
	ibSceneErr e = {path != NULL ? path : "ibLoadScene", err, errSize, IB_OK};
	if (!beginLoad(&e, outWorld, err, errSize)) return e.result;
	if (path == NULL) {
		ibScene_Fail(&e, IB_ERR_IO, 0, "no file name given (path is NULL)");
		return e.result;
	}
	size_t length = 0;
	char* xml = ibScene_ReadFile(&e, path, &length);
	if (xml == NULL) return e.result;
	ibResult r = loadXml(&e, xml, length, path, base, outWorld, outSettings);
	free(xml);
	return r;
}
