/* ibdyn_scene: first-error-wins messages "file:line: message", the C numeric locale (strtod and
 * printf must not see a locale with a decimal comma) and the enumeration names. */
#define _POSIX_C_SOURCE 200809L

#include "scene_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const ibSceneEnum ibScene_BodyTypes[] = {
    {"static", IB_BODY_STATIC}, {"kinematic", IB_BODY_KINEMATIC}, {"dynamic", IB_BODY_DYNAMIC}, {NULL, 0}};
const ibSceneEnum ibScene_Integrators[] = {
    {"rk4", IB_INTEGRATOR_RK4}, {"cash-karp", IB_INTEGRATOR_CASH_KARP}, {NULL, 0}};
const ibSceneEnum ibScene_Solvers[] = {
    {"auto", IB_SOLVER_AUTO}, {"iterative", IB_SOLVER_ITERATIVE}, {"lgs", IB_SOLVER_LGS}, {"lgs-sparse", IB_SOLVER_LGS_SPARSE}, {NULL, 0}};
const ibSceneEnum ibScene_Broadphases[] = {
    {"sap", IB_BROADPHASE_SWEEP_AND_PRUNE}, {"tree", IB_BROADPHASE_DYNAMIC_TREE}, {NULL, 0}};
const ibSceneEnum ibScene_ToiModes[] = {
    {"off", IB_TOI_OFF}, {"interpolation", IB_TOI_INTERPOLATION}, {"bisection", IB_TOI_BISECTION}, {NULL, 0}};
const ibSceneEnum ibScene_RestitutionLaws[] = {
    {"newton", IB_RESTITUTION_NEWTON}, {"poisson", IB_RESTITUTION_POISSON}, {NULL, 0}};
const ibSceneEnum ibScene_MixRules[] = {{"product", IB_MIX_PRODUCT}, {"sum", IB_MIX_SUM}, {"min", IB_MIX_MIN},
                                        {"max", IB_MIX_MAX},         {"mean", IB_MIX_MEAN}, {NULL, 0}};
const ibSceneEnum ibScene_JointTypes[] = {{"ball", IB_JOINT_BALL},
                                          {"line", IB_JOINT_LINE},
                                          {"plane", IB_JOINT_PLANE},
                                          {"rotation_lock", IB_JOINT_ROTATION_LOCK},
                                          {"axis_align", IB_JOINT_AXIS_ALIGN},
                                          {"double_rotation", IB_JOINT_DOUBLE_ROTATION},
                                          {"hinge", IB_JOINT_HINGE},
                                          {"cylindrical", IB_JOINT_CYLINDRICAL},
                                          {"slider", IB_JOINT_SLIDER},
                                          {"universal", IB_JOINT_UNIVERSAL},
                                          {"fixed", IB_JOINT_FIXED},
                                          {"spring", IB_JOINT_SPRING},
                                          {"velocity", IB_JOINT_VELOCITY},
                                          {NULL, 0}};
const ibSceneEnum ibScene_MotorModes[] = {{"position", IB_MOTOR_POSITION}, {"velocity", IB_MOTOR_VELOCITY}, {NULL, 0}};

const char* ibScene_EnumName(const ibSceneEnum* table, int value)
{
	for (const ibSceneEnum* v = table; v->name != NULL; ++v)
		if (v->value == value) return v->name;
	return NULL;
}

/* ---------------------------------------------------------------- errors */

static void failv(ibSceneErr* e, ibResult code, long line, const char* fmt, va_list ap)
{
	if (e->result != IB_OK) return;
	e->result = code;
	if (e->buf == NULL || e->size == 0) return;
	char msg[768];
	vsnprintf(msg, sizeof msg, fmt, ap);
	const char* file = e->file != NULL ? e->file : "<memory>";
	if (line > 0)
		snprintf(e->buf, e->size, "%s:%ld: %s", file, line, msg);
	else
		snprintf(e->buf, e->size, "%s: %s", file, msg);
}

void ibScene_Fail(ibSceneErr* e, ibResult code, long line, const char* fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(e, code, line, fmt, ap);
	va_end(ap);
}

void ibScene_IoError(ibSceneErr* e, const char* what, int errnum)
{
	char reason[256] = "unknown error";
	if (errnum != 0 && strerror_r(errnum, reason, sizeof reason) != 0)
		snprintf(reason, sizeof reason, "error %d", errnum);
	ibScene_Fail(e, IB_ERR_IO, 0, "%s: %s", what, reason);
}

long ibScene_Line(const xmlNode* node)
{
	long line = node != NULL ? xmlGetLineNo(node) : 0;
	return line > 0 ? line : 0;
}

void ibScene_NodeError(ibSceneErr* e, const xmlNode* node, const char* fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(e, IB_ERR_PARSE, ibScene_Line(node), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- locale */

bool ibScene_EnterCLocale(ibSceneLocale* l)
{
	l->c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (l->c == (locale_t)0) return false;
	l->old = uselocale(l->c);
	return true;
}

void ibScene_LeaveCLocale(ibSceneLocale* l)
{
	if (l->c == (locale_t)0) return;
	uselocale(l->old);
	freelocale(l->c);
	l->c = (locale_t)0;
}
