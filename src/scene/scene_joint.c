/* ibdyn_scene loader: <joint> with its optional <motor> and the motor's <point> schedule, built
 * with ibDefaultJointDef, ibJointDef_SetWorldAnchors / ibJointDef_SetWorldAxes (world form, at
 * the bodies' poses in the file) and ibCreateJoint. Joints are read after all bodies, so they
 * refer to any <body> by name. Format: docs/scene-format.md, section <joint>. */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- <joint> attributes */

typedef struct jointAttrs {
	ibJointDef def;    /* local quantities and scalars go straight here */
	int type;          /* ibJointType */
	const char* name;  /* joint name */
	const char* bodyA; /* body names */
	const char* bodyB;
	ibVec3 anchor, anchorA, anchorB; /* world form */
	ibVec3 axis, axisA, axisB;
	ibVec3 refA, refB;      /* local reference vectors (applied after the world-form axes) */
	const char* linearDofs; /* "xyz" letters */
	const char* angularDofs;
} jointAttrs;

enum {
	J_TYPE,
	J_NAME,
	J_BODY_A,
	J_BODY_B,
	J_ANCHOR,
	J_ANCHOR_A,
	J_ANCHOR_B,
	J_AXIS,
	J_AXIS_A,
	J_AXIS_B,
	J_LOCAL_ANCHOR_A,
	J_LOCAL_ANCHOR_B,
	J_LOCAL_AXIS_A,
	J_LOCAL_AXIS_B,
	J_LOCAL_REF_A,
	J_LOCAL_REF_B,
	J_REFERENCE_ROTATION,
	J_REFERENCE_ANGLE,
	J_DISTANCE,
	J_STIFFNESS,
	J_DAMPING,
	J_LINEAR_DOFS,
	J_ANGULAR_DOFS,
	J_COLLIDE_CONNECTED,
	J_LOWER_LIMIT,
	J_UPPER_LIMIT,
	J_LIMIT_RESTITUTION,
	J_CONE_ANGLE,
	J_CONE_ANGLE2,
	J_LOWER_TWIST,
	J_UPPER_TWIST,
	J_ATTR_COUNT
};

/* clang-format off */
#define JOINT_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(jointAttrs, f)}
static const ibSceneAttr jointAttrTable[J_ATTR_COUNT] = {
	[J_TYPE] = {.name = "type", .kind = IB_ATTR_ENUM, .offset = offsetof(jointAttrs, type),
	            .values = ibScene_JointTypes, .flags = IB_ATTR_REQUIRED},
	[J_NAME] = JOINT_ATTR("name", IB_ATTR_STRING, name),
	[J_BODY_A] = {.name = "body_a", .kind = IB_ATTR_STRING, .offset = offsetof(jointAttrs, bodyA),
	              .flags = IB_ATTR_REQUIRED},
	[J_BODY_B] = {.name = "body_b", .kind = IB_ATTR_STRING, .offset = offsetof(jointAttrs, bodyB),
	              .flags = IB_ATTR_REQUIRED},
	[J_ANCHOR] = JOINT_ATTR("anchor", IB_ATTR_VEC3, anchor),
	[J_ANCHOR_A] = JOINT_ATTR("anchor_a", IB_ATTR_VEC3, anchorA),
	[J_ANCHOR_B] = JOINT_ATTR("anchor_b", IB_ATTR_VEC3, anchorB),
	[J_AXIS] = JOINT_ATTR("axis", IB_ATTR_VEC3, axis),
	[J_AXIS_A] = JOINT_ATTR("axis_a", IB_ATTR_VEC3, axisA),
	[J_AXIS_B] = JOINT_ATTR("axis_b", IB_ATTR_VEC3, axisB),
	[J_LOCAL_ANCHOR_A] = JOINT_ATTR("local_anchor_a", IB_ATTR_VEC3, def.localAnchorA),
	[J_LOCAL_ANCHOR_B] = JOINT_ATTR("local_anchor_b", IB_ATTR_VEC3, def.localAnchorB),
	[J_LOCAL_AXIS_A] = JOINT_ATTR("local_axis_a", IB_ATTR_VEC3, def.localAxisA),
	[J_LOCAL_AXIS_B] = JOINT_ATTR("local_axis_b", IB_ATTR_VEC3, def.localAxisB),
	[J_LOCAL_REF_A] = JOINT_ATTR("local_ref_a", IB_ATTR_VEC3, refA),
	[J_LOCAL_REF_B] = JOINT_ATTR("local_ref_b", IB_ATTR_VEC3, refB),
	[J_REFERENCE_ROTATION] = JOINT_ATTR("reference_rotation", IB_ATTR_QUAT, def.referenceRotation),
	[J_REFERENCE_ANGLE] = JOINT_ATTR("reference_angle", IB_ATTR_REAL, def.referenceAngle),
	[J_DISTANCE] = JOINT_ATTR("distance", IB_ATTR_REAL, def.distance),
	[J_STIFFNESS] = JOINT_ATTR("stiffness", IB_ATTR_REAL, def.stiffness),
	[J_DAMPING] = JOINT_ATTR("damping", IB_ATTR_REAL, def.damping),
	[J_LINEAR_DOFS] = JOINT_ATTR("linear_dofs", IB_ATTR_STRING, linearDofs),
	[J_ANGULAR_DOFS] = JOINT_ATTR("angular_dofs", IB_ATTR_STRING, angularDofs),
	[J_COLLIDE_CONNECTED] = JOINT_ATTR("collide_connected", IB_ATTR_BOOL, def.collideConnected),
	[J_LOWER_LIMIT] = JOINT_ATTR("lower_limit", IB_ATTR_REAL, def.lowerLimit),
	[J_UPPER_LIMIT] = JOINT_ATTR("upper_limit", IB_ATTR_REAL, def.upperLimit),
	[J_LIMIT_RESTITUTION] = JOINT_ATTR("limit_restitution", IB_ATTR_REAL, def.limitRestitution),
	[J_CONE_ANGLE] = JOINT_ATTR("cone_angle", IB_ATTR_REAL, def.coneAngle),
	[J_CONE_ANGLE2] = JOINT_ATTR("cone_angle2", IB_ATTR_REAL, def.coneAngle2),
	[J_LOWER_TWIST] = JOINT_ATTR("lower_twist", IB_ATTR_REAL, def.lowerTwist),
	[J_UPPER_TWIST] = JOINT_ATTR("upper_twist", IB_ATTR_REAL, def.upperTwist),
};
/* clang-format on */

/* World form and local form of the same quantity, and the two spellings of the world form. */
static const struct {
	int first, second;
} formConflicts[] = {
    {J_ANCHOR, J_ANCHOR_A},
    {J_ANCHOR, J_ANCHOR_B},
    {J_AXIS, J_AXIS_A},
    {J_AXIS, J_AXIS_B},
    {J_ANCHOR, J_LOCAL_ANCHOR_A},
    {J_ANCHOR, J_LOCAL_ANCHOR_B},
    {J_ANCHOR_A, J_LOCAL_ANCHOR_A},
    {J_ANCHOR_A, J_LOCAL_ANCHOR_B},
    {J_ANCHOR_B, J_LOCAL_ANCHOR_A},
    {J_ANCHOR_B, J_LOCAL_ANCHOR_B},
    {J_AXIS, J_LOCAL_AXIS_A},
    {J_AXIS, J_LOCAL_AXIS_B},
    {J_AXIS_A, J_LOCAL_AXIS_A},
    {J_AXIS_A, J_LOCAL_AXIS_B},
    {J_AXIS_B, J_LOCAL_AXIS_A},
    {J_AXIS_B, J_LOCAL_AXIS_B},
};

/* World-form attributes that come in pairs. */
static const struct {
	int first, second, both;
} formPairs[] = {{J_ANCHOR_A, J_ANCHOR_B, J_ANCHOR}, {J_AXIS_A, J_AXIS_B, J_AXIS}};

/* The limit range: both bounds or none (they enable the limit). */
static bool checkLimits(ibSceneLoader* L, const xmlNode* node, const bool* present, ibJointDef* d)
{
	if (present[J_LOWER_LIMIT] != present[J_UPPER_LIMIT]) {
		ibScene_NodeError(L->err, node, "attribute '%s' of <joint> needs '%s' (a limit has both bounds)",
		                  present[J_LOWER_LIMIT] ? "lower_limit" : "upper_limit",
		                  present[J_LOWER_LIMIT] ? "upper_limit" : "lower_limit");
		return false;
	}
	d->enableLimit = present[J_LOWER_LIMIT];
	if (present[J_LOWER_TWIST] != present[J_UPPER_TWIST]) {
		ibScene_NodeError(L->err, node, "attribute '%s' of <joint> needs '%s' (a twist limit has both bounds)",
		                  present[J_LOWER_TWIST] ? "lower_twist" : "upper_twist",
		                  present[J_LOWER_TWIST] ? "upper_twist" : "lower_twist");
		return false;
	}
	d->enableTwistLimit = present[J_LOWER_TWIST];
	if (present[J_CONE_ANGLE2] && !present[J_CONE_ANGLE]) {
		ibScene_NodeError(L->err, node, "attribute 'cone_angle2' of <joint> needs 'cone_angle'");
		return false;
	}
	d->enableConeLimit = present[J_CONE_ANGLE];
	return true;
}

static bool checkForms(ibSceneLoader* L, const xmlNode* node, const bool* present)
{
	for (size_t i = 0; i < sizeof formConflicts / sizeof formConflicts[0]; ++i) {
		int a = formConflicts[i].first, b = formConflicts[i].second;
		if (!present[a] || !present[b]) continue;
		bool local = b >= J_LOCAL_ANCHOR_A;
		ibScene_NodeError(L->err, node, "attributes '%s' and '%s' cannot be used together on <joint>%s",
		                  jointAttrTable[a].name, jointAttrTable[b].name,
		                  local ? " (world form and local form of the same quantity)" : "");
		return false;
	}
	for (size_t i = 0; i < sizeof formPairs / sizeof formPairs[0]; ++i) {
		int a = formPairs[i].first, b = formPairs[i].second;
		if (present[a] == present[b]) continue;
		int given = present[a] ? a : b, missing = present[a] ? b : a;
		ibScene_NodeError(L->err, node, "attribute '%s' of <joint> needs '%s' (or give '%s' for both bodies)",
		                  jointAttrTable[given].name, jointAttrTable[missing].name,
		                  jointAttrTable[formPairs[i].both].name);
		return false;
	}
	return true;
}

/* "xyz", "x z", "y": each of x, y, z at most once, white space allowed between the letters. */
static bool parseDofs(ibSceneLoader* L, const xmlNode* node, const char* attr, const char* text, unsigned* out)
{
	unsigned bits = 0;
	for (const char* p = text; *p; ++p) {
		unsigned bit = *p == 'x' ? IB_DOF_X : *p == 'y' ? IB_DOF_Y : *p == 'z' ? IB_DOF_Z : 0u;
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') continue;
		if (bit == 0) {
			ibScene_NodeError(L->err, node, "attribute '%s' of <joint>: '%c' is not a DOF letter (use x, y and z)",
			                  attr, *p >= 0x20 && *p < 0x7f ? *p : '?');
			return false;
		}
		if (bits & bit) {
			ibScene_NodeError(L->err, node, "attribute '%s' of <joint> names '%c' twice", attr, *p);
			return false;
		}
		bits |= bit;
	}
	if (bits == 0) {
		ibScene_NodeError(L->err, node, "attribute '%s' of <joint> names no DOF (use x, y and z)", attr);
		return false;
	}
	*out = bits;
	return true;
}

static bool findBody(ibSceneLoader* L, const xmlNode* node, const char* attr, const char* name, ibBodyId* out)
{
	const ibBodyId* id = xmlHashLookup(L->bodyIds, (const xmlChar*)name);
	if (id == NULL) {
		ibScene_NodeError(L->err, node, "unknown body '%s' in attribute '%s' of <joint> (no <body> has that name)",
		                  name, attr);
		return false;
	}
	*out = *id;
	return true;
}

/* ---------------------------------------------------------------- <motor> and <point> */

typedef struct motorAttrs {
	ibMotorDef m;
	int mode;
} motorAttrs;

/* clang-format off */
#define MOTOR_ATTR(n, k, f) {.name = n, .kind = k, .offset = offsetof(motorAttrs, f)}
static const ibSceneAttr motorAttrTable[] = {
	{.name = "mode", .kind = IB_ATTR_ENUM, .offset = offsetof(motorAttrs, mode), .values = ibScene_MotorModes,
	 .flags = IB_ATTR_REQUIRED},
	MOTOR_ATTR("target", IB_ATTR_REAL, m.target),
	MOTOR_ATTR("gain", IB_ATTR_REAL, m.gain),
	MOTOR_ATTR("reset_time", IB_ATTR_REAL, m.resetTime),
	MOTOR_ATTR("derivative_time", IB_ATTR_REAL, m.derivativeTime),
	MOTOR_ATTR("integral_window", IB_ATTR_INT, m.integralWindow),
	MOTOR_ATTR("max_force", IB_ATTR_REAL, m.maxForce),
};
static const ibSceneAttr pointAttrTable[] = {
	{.name = "t", .kind = IB_ATTR_REAL, .offset = 0, .flags = IB_ATTR_REQUIRED},
	{.name = "value", .kind = IB_ATTR_REAL, .offset = sizeof(double), .flags = IB_ATTR_REQUIRED},
};
/* clang-format on */

/* The schedule arrays of a motor being read (freed by the caller). */
typedef struct schedule {
	double* times;
	double* values;
} schedule;

static bool readPoints(ibSceneLoader* L, const xmlNode* motor, ibMotorDef* m, schedule* s)
{
	int count = 0;
	for (const xmlNode* c = motor->children; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE) continue;
		if (!ibScene_IsElement(c, "point")) {
			ibScene_BadElement(L->err, motor, c);
			return false;
		}
		++count;
	}
	if (count == 0) return true;
	s->times = malloc((size_t)count * sizeof(double));
	s->values = malloc((size_t)count * sizeof(double));
	if (s->times == NULL || s->values == NULL) {
		ibScene_Fail(L->err, IB_ERR_OUT_OF_MEMORY, ibScene_Line(motor), "out of memory");
		return false;
	}
	int n = 0;
	for (const xmlNode* c = motor->children; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE) continue;
		double tv[2] = {0.0, 0.0};
		ibSceneAttrSet set = {pointAttrTable, 2, tv, NULL};
		if (!ibScene_CheckContent(L->err, c, false) || !ibScene_ReadAttributes(L->err, c, &set, 1)) return false;
		if (n > 0 && !(tv[0] > s->times[n - 1])) {
			ibScene_NodeError(L->err, c,
			                  "the times of a motor schedule must be strictly increasing: t = %.17g does not "
			                  "follow t = %.17g",
			                  tv[0], s->times[n - 1]);
			return false;
		}
		s->times[n] = tv[0];
		s->values[n] = tv[1];
		++n;
	}
	m->scheduleTimes = s->times;
	m->scheduleValues = s->values;
	m->scheduleCount = n;
	return true;
}

static bool readMotor(ibSceneLoader* L, const xmlNode* node, ibJointType type, ibMotorDef* out, schedule* s)
{
	if (type != IB_JOINT_HINGE && type != IB_JOINT_SLIDER) {
		const char* name = ibScene_EnumName(ibScene_JointTypes, (int)type);
		ibScene_NodeError(L->err, node, "a <motor> is only allowed on hinge and slider joints, not on a %s joint",
		                  name != NULL ? name : "?");
		return false;
	}
	motorAttrs a = {ibDefaultMotorDef(), IB_MOTOR_POSITION};
	ibSceneAttrSet set = {motorAttrTable, (int)(sizeof motorAttrTable / sizeof motorAttrTable[0]), &a, NULL};
	if (!ibScene_CheckContent(L->err, node, true) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	a.m.mode = (ibMotorMode)a.mode;
	if (!readPoints(L, node, &a.m, s)) return false;
	*out = a.m;
	return true;
}

/* ---------------------------------------------------------------- <joint> */

static bool apiFailed(ibSceneLoader* L, const xmlNode* node)
{
	const char* msg = ibWorld_GetLastError(L->world);
	ibScene_NodeError(L->err, node, "cannot create <joint>: %s", msg[0] != '\0' ? msg : "rejected by the API");
	return false;
}

/* World-form anchors and axes, evaluated at the bodies' current poses (those of the file). */
static bool applyWorldForms(ibSceneLoader* L, const xmlNode* node, jointAttrs* a, const bool* present)
{
	ibJointDef* d = &a->def;
	ibWorld_ClearError(L->world);
	if (present[J_ANCHOR] && ibJointDef_SetWorldAnchors(d, a->anchor, a->anchor) != IB_OK) return apiFailed(L, node);
	if (present[J_ANCHOR_A] && ibJointDef_SetWorldAnchors(d, a->anchorA, a->anchorB) != IB_OK)
		return apiFailed(L, node);
	if (present[J_AXIS] && ibJointDef_SetWorldAxes(d, a->axis, a->axis) != IB_OK) return apiFailed(L, node);
	if (present[J_AXIS_A] && ibJointDef_SetWorldAxes(d, a->axisA, a->axisB) != IB_OK) return apiFailed(L, node);
	if (present[J_LOCAL_REF_A]) d->localRefA = a->refA;
	if (present[J_LOCAL_REF_B]) d->localRefB = a->refB;
	return true;
}

static bool readJointContent(ibSceneLoader* L, const xmlNode* node, jointAttrs* a, schedule* s)
{
	const xmlNode* motorNode = NULL;
	for (const xmlNode* c = node->children; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE) continue;
		if (!ibScene_IsElement(c, "motor")) {
			ibScene_BadElement(L->err, node, c);
			return false;
		}
		if (motorNode != NULL) {
			ibScene_NodeError(L->err, c, "duplicate <motor> element in <joint>");
			return false;
		}
		motorNode = c;
	}
	return motorNode == NULL || readMotor(L, motorNode, a->def.type, &a->def.motor, s);
}

bool ibScene_ReadJoint(ibSceneLoader* L, const xmlNode* node)
{
	jointAttrs a;
	memset(&a, 0, sizeof a);
	a.def = ibDefaultJointDef(IB_JOINT_BALL);
	a.refA = a.def.localRefA;
	a.refB = a.def.localRefB;
	bool present[J_ATTR_COUNT];
	ibSceneAttrSet set = {jointAttrTable, J_ATTR_COUNT, &a, present};
	if (!ibScene_CheckContent(L->err, node, true) || !ibScene_ReadAttributes(L->err, node, &set, 1)) return false;
	a.def.type = (ibJointType)a.type;
	a.def.name = a.name;
	a.def.localRefA = a.refA;
	a.def.localRefB = a.refB;
	if (!checkForms(L, node, present) || !checkLimits(L, node, present, &a.def) || !findBody(L, node, "body_a", a.bodyA, &a.def.bodyA) ||
	    !findBody(L, node, "body_b", a.bodyB, &a.def.bodyB))
		return false;
	if (a.linearDofs != NULL && !parseDofs(L, node, "linear_dofs", a.linearDofs, &a.def.linearDofs)) return false;
	if (a.angularDofs != NULL && !parseDofs(L, node, "angular_dofs", a.angularDofs, &a.def.angularDofs)) return false;
	schedule s = {NULL, NULL};
	bool ok = readJointContent(L, node, &a, &s) && applyWorldForms(L, node, &a, present);
	if (ok) {
		ibWorld_ClearError(L->world);
		if (IB_IS_NULL(ibCreateJoint(L->world, &a.def))) ok = apiFailed(L, node);
	}
	free(s.times);
	free(s.values);
	return ok;
}
