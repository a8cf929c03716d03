/* ibdyn_scene: strict numbers and the table-driven attribute reader.
 * Numbers follow one decimal grammar, [+-]digits[.digits][(e|E)[+-]digits], converted by strtod in
 * the C locale; NaN, infinities, hex floats, trailing garbage and overflow are rejected. */
#define _POSIX_C_SOURCE 200809L

#include "scene_attr.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { IB_SCENE_MAX_ATTRS = 64, IB_SCENE_TOKEN_SHOWN = 40 };

/* ---------------------------------------------------------------- tokens and numbers */

static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool ibScene_IsBlank(const xmlChar* text)
{
	for (const xmlChar* p = text; p != NULL && *p; ++p)
		if (!isSpace((char)*p)) return false;
	return true;
}

/* Next white-space separated token at or after *pos: sets *start and returns its length (0 at the end). */
static size_t nextToken(const char* s, size_t* pos, size_t* start)
{
	size_t i = *pos;
	while (s[i] != '\0' && isSpace(s[i])) ++i;
	*start = i;
	while (s[i] != '\0' && !isSpace(s[i])) ++i;
	*pos = i;
	return i - *start;
}

static int countTokens(const char* s)
{
	size_t pos = 0, start, n = 0;
	while (nextToken(s, &pos, &start) > 0) ++n;
	return n > INT_MAX ? INT_MAX : (int)n;
}

static bool isDecimalNumber(const char* t, size_t len)
{
	size_t i = 0, intDigits = 0, fracDigits = 0;
	if (i < len && (t[i] == '+' || t[i] == '-')) ++i;
	while (i < len && isDigit(t[i])) ++i, ++intDigits;
	if (i < len && t[i] == '.') {
		++i;
		while (i < len && isDigit(t[i])) ++i, ++fracDigits;
	}
	if (intDigits + fracDigits == 0) return false;
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		++i;
		if (i < len && (t[i] == '+' || t[i] == '-')) ++i;
		size_t expDigits = 0;
		while (i < len && isDigit(t[i])) ++i, ++expDigits;
		if (expDigits == 0) return false;
	}
	return i == len;
}

static bool isNonFiniteWord(const char* t, size_t len)
{
	if (len > 0 && (t[0] == '+' || t[0] == '-')) ++t, --len;
	return (len == 3 && (strncasecmp(t, "nan", 3) == 0 || strncasecmp(t, "inf", 3) == 0)) ||
	       (len == 8 && strncasecmp(t, "infinity", 8) == 0);
}

/* Context of one attribute value for messages. */
typedef struct attrCtx {
	ibSceneErr* e;
	const xmlNode* node;
	const char* name;
} attrCtx;

/* "attribute 'x' of <e>: 'token' <problem>", the token shortened to a readable length. */
static void valueError(const attrCtx* a, const char* problem, const char* tok, size_t len)
{
	int shown = len > IB_SCENE_TOKEN_SHOWN ? IB_SCENE_TOKEN_SHOWN : (int)len;
	ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: '%.*s%s' %s", a->name, (const char*)a->node->name, shown,
	                  tok, len > IB_SCENE_TOKEN_SHOWN ? "..." : "", problem);
}

static bool parseReal(const attrCtx* a, const char* tok, size_t len, double* out)
{
	if (isNonFiniteWord(tok, len)) {
		valueError(a, "is not a finite number", tok, len);
		return false;
	}
	if (!isDecimalNumber(tok, len)) {
		valueError(a, "is not a number", tok, len);
		return false;
	}
	errno = 0;
	char* end = NULL;
	double v = strtod(tok, &end);
	if (end != tok + len) {
		valueError(a, "is not a number", tok, len);
		return false;
	}
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) {
		valueError(a, "is out of range", tok, len);
		return false;
	}
	*out = v;
	return true;
}

static bool parseInt(const attrCtx* a, const char* tok, size_t len, int* out)
{
	size_t i = (len > 0 && (tok[0] == '+' || tok[0] == '-')) ? 1 : 0;
	bool digits = i < len;
	for (size_t k = i; k < len; ++k) digits = digits && isDigit(tok[k]);
	if (!digits) {
		valueError(a, "is not an integer", tok, len);
		return false;
	}
	errno = 0;
	char* end = NULL;
	long v = strtol(tok, &end, 10);
	if (end != tok + len || errno == ERANGE || v < INT_MIN || v > INT_MAX) {
		valueError(a, "is out of range", tok, len);
		return false;
	}
	*out = (int)v;
	return true;
}

/* Parse all tokens of text into out[0..cap); returns the number of tokens, or -1 after an error. */
static int parseReals(const attrCtx* a, const char* text, double* out, int cap)
{
	size_t pos = 0, start, len;
	int n = 0;
	while ((len = nextToken(text, &pos, &start)) > 0) {
		if (n < cap && !parseReal(a, text + start, len, &out[n])) return -1;
		if (n < INT_MAX) ++n;
	}
	return n;
}

static int parseInts(const attrCtx* a, const char* text, int* out, int cap)
{
	size_t pos = 0, start, len;
	int n = 0;
	while ((len = nextToken(text, &pos, &start)) > 0) {
		if (n < cap && !parseInt(a, text + start, len, &out[n])) return -1;
		if (n < INT_MAX) ++n;
	}
	return n;
}

static bool countError(const attrCtx* a, int want, int got, const char* what)
{
	ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: expected %d %s, got %d", a->name,
	                  (const char*)a->node->name, want, what, got);
	return false;
}

static bool fixedReals(const attrCtx* a, const char* text, double* out, int want)
{
	int n = parseReals(a, text, out, want);
	if (n < 0) return false;
	return n == want ? true : countError(a, want, n, want == 1 ? "number" : "numbers");
}

static bool listCount(const attrCtx* a, int n, int group, const char* what)
{
	if (n > 0 && n % group == 0) return true;
	ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: expected a positive multiple of %d %s, got %d", a->name,
	                  (const char*)a->node->name, group, what, n);
	return false;
}

static bool enumValue(const attrCtx* a, const char* text, const ibSceneEnum* values, int* out)
{
	for (const ibSceneEnum* v = values; v->name != NULL; ++v) {
		if (strcmp(v->name, text) == 0) {
			*out = v->value;
			return true;
		}
	}
	char names[256] = "";
	for (const ibSceneEnum* v = values; v->name != NULL; ++v) {
		size_t used = strlen(names);
		snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", v->name);
	}
	size_t len = strlen(text);
	int shown = len > IB_SCENE_TOKEN_SHOWN ? IB_SCENE_TOKEN_SHOWN : (int)len;
	ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: unknown value '%.*s%s' (expected one of: %s)", a->name,
	                  (const char*)a->node->name, shown, text, len > IB_SCENE_TOKEN_SHOWN ? "..." : "", names);
	return false;
}

/* Parse one attribute value of the given kind into dst. */
static bool parseValue(const attrCtx* a, const ibSceneAttr* spec, const char* text, void* dst)
{
	switch (spec->kind) {
	case IB_ATTR_REAL:
		return fixedReals(a, text, (double*)dst, 1);
	case IB_ATTR_REALS:
		return fixedReals(a, text, (double*)dst, spec->count);
	case IB_ATTR_VEC3: {
		double v[3];
		if (!fixedReals(a, text, v, 3)) return false;
		*(ibVec3*)dst = ibV3(v[0], v[1], v[2]);
		return true;
	}
	case IB_ATTR_QUAT: {
		double q[4];
		if (!fixedReals(a, text, q, 4)) return false;
		ibQuat r = ibQ(q[0], q[1], q[2], q[3]);
		double n = ibQuatNormSq(r);
		if (!(n > 0.0) || !isfinite(n)) {
			ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: the quaternion must be non-zero", a->name,
			                  (const char*)a->node->name);
			return false;
		}
		*(ibQuat*)dst = r;
		return true;
	}
	case IB_ATTR_AXIS_ANGLE: {
		double v[4];
		if (!fixedReals(a, text, v, 4)) return false;
		ibVec3 axis = ibV3(v[0], v[1], v[2]);
		double len = ibLength(axis);
		if (!(len > 0.0) || !isfinite(len)) {
			ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s>: the rotation axis must be non-zero", a->name,
			                  (const char*)a->node->name);
			return false;
		}
		*(ibQuat*)dst = ibQuatFromAxisAngle(ibScale(1.0 / len, axis), v[3]);
		return true;
	}
	case IB_ATTR_INT: {
		int n = parseInts(a, text, (int*)dst, 1);
		if (n < 0) return false;
		return n == 1 ? true : countError(a, 1, n, "integer");
	}
	case IB_ATTR_ENUM:
		return enumValue(a, text, spec->values, (int*)dst);
	case IB_ATTR_BOOL: {
		static const ibSceneEnum booleans[] = {{"false", 0}, {"true", 1}, {NULL, 0}};
		int v = 0;
		if (!enumValue(a, text, booleans, &v)) return false;
		*(bool*)dst = v != 0;
		return true;
	}
	case IB_ATTR_STRING:
		if (text[0] == '\0') {
			ibScene_NodeError(a->e, a->node, "attribute '%s' of <%s> must not be empty", a->name,
			                  (const char*)a->node->name);
			return false;
		}
		*(const char**)dst = text;
		return true;
	case IB_ATTR_REAL_LIST: {
		ibSceneRealList* list = dst;
		int n = countTokens(text);
		if (!listCount(a, n, spec->count, "numbers")) return false;
		free(list->data);
		list->count = 0;
		list->data = malloc((size_t)n * sizeof(double));
		if (list->data == NULL) {
			ibScene_Fail(a->e, IB_ERR_OUT_OF_MEMORY, ibScene_Line(a->node), "out of memory");
			return false;
		}
		if (parseReals(a, text, list->data, n) != n) return false;
		list->count = n;
		return true;
	}
	case IB_ATTR_INT_LIST: {
		ibSceneIntList* list = dst;
		int n = countTokens(text);
		if (!listCount(a, n, spec->count, "integers")) return false;
		free(list->data);
		list->count = 0;
		list->data = malloc((size_t)n * sizeof(int));
		if (list->data == NULL) {
			ibScene_Fail(a->e, IB_ERR_OUT_OF_MEMORY, ibScene_Line(a->node), "out of memory");
			return false;
		}
		if (parseInts(a, text, list->data, n) != n) return false;
		list->count = n;
		return true;
	}
	}
	ibScene_NodeError(a->e, a->node, "internal: bad attribute kind for '%s'", a->name);
	return false;
}

/* Text of an attribute: its single text child ("" if empty; NULL if it holds entity references). */
static const char* attrText(const xmlAttr* attr)
{
	const xmlNode* c = attr->children;
	if (c == NULL) return "";
	if (c->next != NULL || c->type != XML_TEXT_NODE) return NULL;
	return c->content != NULL ? (const char*)c->content : "";
}

/* Flat index of the attribute called name (-1 if no table has it). */
static int findAttr(const ibSceneAttrSet* sets, int setCount, const char* name, int* setIndex, int* attrIndex)
{
	int flat = 0;
	for (int s = 0; s < setCount; ++s) {
		for (int i = 0; i < sets[s].count; ++i, ++flat) {
			if (strcmp(sets[s].attrs[i].name, name) == 0) {
				*setIndex = s;
				*attrIndex = i;
				return flat;
			}
		}
	}
	return -1;
}

bool ibScene_ReadAttributes(ibSceneErr* e, const xmlNode* node, const ibSceneAttrSet* sets, int setCount)
{
	const char* elem = (const char*)node->name;
	int total = 0;
	for (int s = 0; s < setCount; ++s) {
		total += sets[s].count;
		if (sets[s].present != NULL) memset(sets[s].present, 0, (size_t)sets[s].count * sizeof(bool));
	}
	if (total > IB_SCENE_MAX_ATTRS) {
		ibScene_NodeError(e, node, "internal: too many attributes for <%s>", elem);
		return false;
	}
	bool seen[IB_SCENE_MAX_ATTRS] = {false};

	for (const xmlAttr* attr = node->properties; attr != NULL; attr = attr->next) {
		const char* name = (const char*)attr->name;
		int s = -1, i = -1;
		int flat = attr->ns == NULL ? findAttr(sets, setCount, name, &s, &i) : -1;
		if (flat < 0) {
			const char* prefix = attr->ns != NULL && attr->ns->prefix != NULL ? (const char*)attr->ns->prefix : NULL;
			ibScene_NodeError(e, node, "unknown attribute '%s%s%s' on <%s>", prefix ? prefix : "", prefix ? ":" : "",
			                  name, elem);
			return false;
		}
		const char* text = attrText(attr);
		if (text == NULL) {
			ibScene_NodeError(e, node, "attribute '%s' of <%s>: entity references are not allowed", name, elem);
			return false;
		}
		const ibSceneAttr* spec = &sets[s].attrs[i];
		attrCtx a = {e, node, name};
		if (!parseValue(&a, spec, text, (char*)sets[s].target + spec->offset)) return false;
		seen[flat] = true;
		if (sets[s].present != NULL) sets[s].present[i] = true;
	}

	int flat = 0;
	for (int s = 0; s < setCount; ++s) {
		for (int i = 0; i < sets[s].count; ++i, ++flat) {
			const ibSceneAttr* spec = &sets[s].attrs[i];
			if (!seen[flat]) {
				if (spec->flags & IB_ATTR_REQUIRED) {
					ibScene_NodeError(e, node, "missing required attribute '%s' on <%s>", spec->name, elem);
					return false;
				}
				continue;
			}
			int os, oi;
			int other = spec->excludes != NULL ? findAttr(sets, setCount, spec->excludes, &os, &oi) : -1;
			if (other >= 0 && seen[other]) {
				ibScene_NodeError(e, node, "attributes '%s' and '%s' cannot be used together on <%s>", spec->name,
				                  spec->excludes, elem);
				return false;
			}
		}
	}
	return true;
}
