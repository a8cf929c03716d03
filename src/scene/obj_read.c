/* Wavefront OBJ geometry reader (ibLoadObj): vertex positions (v) and faces (f), polygons
 * fan-triangulated, indices 1-based or negative (relative to the vertices defined so far), vertex
 * references in the forms v, v/vt, v/vt/vn and v//vn (texture and normal indices are checked for
 * syntax only). Statements that carry no geometry (vt vn vp g o s usemtl mtllib l p, comments) are
 * skipped; anything else is an error. Numbers are read in the C locale; every error is reported as
 * "file:line: what is wrong". */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct objReader {
	ibSceneErr* err;
	long line;
	ibVec3* v;
	int nv, capV;
	int* idx;
	int ni, capI; /* ints used / allocated (3 per triangle) */
	int* face;    /* vertex indices of the current face */
	int nf, capF;
} objReader;

static bool growInts(objReader* r, int** a, int* cap, int need)
{
	if (need <= *cap) return true;
	if (need > INT_MAX / 2) {
		ibScene_Fail(r->err, IB_ERR_OUT_OF_MEMORY, r->line, "too much data");
		return false;
	}
	int c = *cap ? *cap : 64;
	while (c < need) c *= 2;
	int* g = realloc(*a, (size_t)c * sizeof(int));
	if (!g) {
		ibScene_Fail(r->err, IB_ERR_OUT_OF_MEMORY, r->line, "out of memory");
		return false;
	}
	*a = g;
	*cap = c;
	return true;
}

static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/* Next white-space separated token of [*p, end): sets *tok and *len, false at the end of the line. */
static bool nextToken(const char** p, const char* end, const char** tok, size_t* len)
{
	const char* s = *p;
	while (s < end && isSpace(*s)) ++s;
	if (s == end) {
		*p = s;
		return false;
	}
	const char* t = s;
	while (t < end && !isSpace(*t)) ++t;
	*tok = s;
	*len = (size_t)(t - s);
	*p = t;
	return true;
}

static bool readNumber(objReader* r, const char* tok, size_t len, double* out)
{
	char buf[128];
	if (len >= sizeof buf) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "'%.40s...' is not a number", tok);
		return false;
	}
	memcpy(buf, tok, len);
	buf[len] = '\0';
	char* endp;
	errno = 0;
	double v = strtod(buf, &endp);
	bool hex = strchr(buf, 'x') != NULL || strchr(buf, 'X') != NULL;
	if (endp == buf || *endp != '\0' || hex || (errno == ERANGE && fabs(v) > 1.0)) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "'%s' is not a number", buf);
		return false;
	}
	if (!isfinite(v)) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "'%s' is not a finite number", buf);
		return false;
	}
	*out = v;
	return true;
}

/* An index field of a face vertex: optional sign and decimal digits; *present false if empty. */
static bool readIndex(objReader* r, const char* s, size_t len, const char* what, long* out, bool* present)
{
	*present = len > 0;
	if (len == 0) return true;
	size_t i = 0;
	bool neg = false;
	if (s[0] == '-' || s[0] == '+') neg = s[i++] == '-';
	if (i == len) goto bad;
	long v = 0;
	for (; i < len; ++i) {
		if (s[i] < '0' || s[i] > '9') goto bad;
		if (v > (LONG_MAX - 9) / 10) {
			ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "%s index '%.*s' is out of range", what, (int)len, s);
			return false;
		}
		v = 10 * v + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
bad:
	ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "'%.*s' is not a valid %s index", (int)len, s, what);
	return false;
}

/* One face vertex "v", "v/vt", "v/vt/vn" or "v//vn" -> 0-based vertex index. */
static bool readFaceVertex(objReader* r, const char* tok, size_t len, int* out)
{
	const char* fields[3] = {tok, NULL, NULL};
	size_t lens[3] = {len, 0, 0};
	int n = 1;
	for (size_t i = 0; i < len; ++i)
		if (tok[i] == '/') {
			if (n == 3) {
				ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "face vertex '%.*s' has more than 3 fields", (int)len, tok);
				return false;
			}
			lens[n - 1] = (size_t)(tok + i - fields[n - 1]);
			fields[n] = tok + i + 1;
			lens[n] = (size_t)(tok + len - fields[n]);
			n++;
		}
	long vi = 0, dummy;
	bool present;
	if (!readIndex(r, fields[0], lens[0], "vertex", &vi, &present)) return false;
	if (!present) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "face vertex '%.*s' has no vertex index", (int)len, tok);
		return false;
	}
	if (n >= 2 && !readIndex(r, fields[1], lens[1], "texture", &dummy, &present)) return false;
	if (n == 2 && !present) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "face vertex '%.*s' has an empty texture index", (int)len, tok);
		return false;
	}
	if (n == 3 && !readIndex(r, fields[2], lens[2], "normal", &dummy, &present)) return false;
	if (n == 3 && !present) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "face vertex '%.*s' has an empty normal index", (int)len, tok);
		return false;
	}
	if (vi == 0) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "vertex index 0 is invalid (OBJ indices start at 1)");
		return false;
	}
	long k = vi > 0 ? vi - 1 : r->nv + vi;
	if (k < 0 || k >= r->nv) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "vertex index %ld is out of range: %d vertices are defined so far",
		             vi, r->nv);
		return false;
	}
	*out = (int)k;
	return true;
}

static bool readVertex(objReader* r, const char* p, const char* end)
{
	double c[7];
	int n = 0;
	const char* tok;
	size_t len;
	while (nextToken(&p, end, &tok, &len)) {
		if (n == 7) break;
		if (!readNumber(r, tok, len, &c[n])) return false;
		n++;
	}
	if (n != 3 && n != 4 && n != 6) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "a vertex needs 3 coordinates (optionally w, or r g b), got %s%d",
		             n == 7 ? "more than " : "", n == 7 ? 6 : n);
		return false;
	}
	if (r->nv == r->capV) {
		if (r->capV > INT_MAX / 4) {
			ibScene_Fail(r->err, IB_ERR_OUT_OF_MEMORY, r->line, "too many vertices");
			return false;
		}
		int cap = r->capV ? 2 * r->capV : 64;
		ibVec3* g = realloc(r->v, (size_t)cap * sizeof(ibVec3));
		if (!g) {
			ibScene_Fail(r->err, IB_ERR_OUT_OF_MEMORY, r->line, "out of memory");
			return false;
		}
		r->v = g;
		r->capV = cap;
	}
	r->v[r->nv++] = ibV3(c[0], c[1], c[2]);
	return true;
}

static bool readFace(objReader* r, const char* p, const char* end)
{
	r->nf = 0;
	const char* tok;
	size_t len;
	while (nextToken(&p, end, &tok, &len)) {
		if (!growInts(r, &r->face, &r->capF, r->nf + 1)) return false;
		if (!readFaceVertex(r, tok, len, &r->face[r->nf])) return false;
		r->nf++;
	}
	if (r->nf < 3) {
		ibScene_Fail(r->err, IB_ERR_PARSE, r->line, "a face needs at least 3 vertices, got %d", r->nf);
		return false;
	}
	if (!growInts(r, &r->idx, &r->capI, r->ni + 3 * (r->nf - 2))) return false;
	for (int k = 1; k + 1 < r->nf; ++k) { /* fan from the first vertex */
		r->idx[r->ni++] = r->face[0];
		r->idx[r->ni++] = r->face[k];
		r->idx[r->ni++] = r->face[k + 1];
	}
	return true;
}

static bool isKeyword(const char* tok, size_t len, const char* kw)
{
	return strlen(kw) == len && memcmp(tok, kw, len) == 0;
}

static ibResult parseObj(ibSceneErr* e, const char* text, size_t length, ibMesh* out)
{
	static const char* const skipped[] = {"vt", "vn", "vp", "g", "o", "s", "usemtl", "mtllib", "l", "p"};
	objReader r = {.err = e};
	const char* p = text;
	const char* end = text + length;
	bool ok = true;
	while (ok && p < end) {
		r.line++;
		const char* eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol) eol = end;
		const char* hash = memchr(p, '#', (size_t)(eol - p));
		const char* stop = hash ? hash : eol;
		if (memchr(p, '\0', (size_t)(stop - p))) {
			ibScene_Fail(e, IB_ERR_PARSE, r.line, "NUL character in the file");
			ok = false;
			break;
		}
		const char* q = p;
		const char* tok;
		size_t len;
		if (nextToken(&q, stop, &tok, &len)) {
			if (isKeyword(tok, len, "v")) {
				ok = readVertex(&r, q, stop);
			} else if (isKeyword(tok, len, "f")) {
				ok = readFace(&r, q, stop);
			} else {
				bool skip = false;
				for (size_t k = 0; k < sizeof skipped / sizeof skipped[0] && !skip; ++k)
					skip = isKeyword(tok, len, skipped[k]);
				if (!skip) {
					ibScene_Fail(e, IB_ERR_PARSE, r.line, "unknown statement '%.*s'", (int)(len > 40 ? 40 : len), tok);
					ok = false;
				}
			}
		}
		p = eol < end ? eol + 1 : end;
	}
	if (ok && r.nv == 0) {
		ibScene_Fail(e, IB_ERR_PARSE, 0, "no vertices (v statements) in the file");
		ok = false;
	}
	free(r.face);
	if (!ok) {
		free(r.v);
		free(r.idx);
		return e->result;
	}
	*out = (ibMesh){r.v, r.nv, r.idx, r.ni / 3};
	return IB_OK;
}

ibResult ibLoadObjFromMemory(const char* text, size_t length, const char* displayName, ibMesh* out, char* err,
                             size_t errSize)
{
	ibSceneErr e = {displayName != NULL ? displayName : "<memory>", err, errSize, IB_OK};
	if (err != NULL && errSize > 0) err[0] = '\0';
	if (out == NULL || text == NULL) {
		ibScene_Fail(&e, IB_ERR_INVALID_ARGUMENT, 0, "%s is NULL", out == NULL ? "the output mesh" : "the text");
		return e.result;
	}
	*out = (ibMesh){NULL, 0, NULL, 0};
	ibSceneLocale locale;
	if (!ibScene_EnterCLocale(&locale)) {
		ibScene_Fail(&e, IB_ERR_OUT_OF_MEMORY, 0, "cannot create the C locale");
		return e.result;
	}
	ibResult r = parseObj(&e, text, length, out);
	ibScene_LeaveCLocale(&locale);
	return r;
}

ibResult ibLoadObj(const char* path, ibMesh* out, char* err, size_t errSize)
{
	ibSceneErr e = {path != NULL ? path : "ibLoadObj", err, errSize, IB_OK};
	if (err != NULL && errSize > 0) err[0] = '\0';
	if (out != NULL) *out = (ibMesh){NULL, 0, NULL, 0};
	if (path == NULL || out == NULL) {
		ibScene_Fail(&e, path == NULL ? IB_ERR_IO : IB_ERR_INVALID_ARGUMENT, 0, "%s",
		             path == NULL ? "no file name given (path is NULL)" : "the output mesh is NULL");
		return e.result;
	}
	size_t length = 0;
	char* text = ibScene_ReadFile(&e, path, &length);
	if (text == NULL) return e.result;
	ibResult r = ibLoadObjFromMemory(text, length, path, out, err, errSize);
	free(text);
	return r;
}

void ibFreeObjMesh(ibMesh* mesh)
{
	if (mesh == NULL) return;
	free((void*)mesh->vertices);
	free((void*)mesh->indices);
	*mesh = (ibMesh){NULL, 0, NULL, 0};
}
