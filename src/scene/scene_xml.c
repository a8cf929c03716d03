/* ibdyn_scene input: a file into memory, memory into a libxml2 document. The parser runs without
 * entity substitution, DTD loading or network access; its messages are captured into our error
 * (first one wins) and never reach stderr. libxml2's per-thread error hooks are restored after use. */
#define _POSIX_C_SOURCE 200809L

#include "scene_load.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlversion.h>

#if LIBXML_VERSION >= 21200
#define IB_XML_ERROR_CONST const
#else
#define IB_XML_ERROR_CONST
#endif

typedef struct xmlErrState {
	char msg[512];
	long line;
	bool set;
} xmlErrState;

/* Structured error handler of our parser context: keeps the first error, nothing goes to stderr. */
static void onXmlError(void* data, IB_XML_ERROR_CONST xmlError* error)
{
	xmlParserCtxt* ctxt = data;
	xmlErrState* st = ctxt != NULL ? ctxt->_private : NULL;
	if (st == NULL || error == NULL || error->level < XML_ERR_ERROR || st->set) return;
	st->set = true;
	st->line = error->line;
	snprintf(st->msg, sizeof st->msg, "%s", error->message != NULL ? error->message : "XML error");
	size_t n = strlen(st->msg);
	while (n > 0 && (st->msg[n - 1] == '\n' || st->msg[n - 1] == ' ')) st->msg[--n] = '\0';
	for (char* c = st->msg; *c; ++c)
		if (*c == '\n' || *c == '\t' || *c == '\r') *c = ' ';
}

/* Sink for libxml2 messages that are not tied to our context (restored after parsing). */
static void silentGenericError(void* ctx, const char* msg, ...)
{
	(void)ctx;
	(void)msg;
}

xmlDoc* ibScene_ParseXml(ibSceneErr* e, const char* xml, size_t length)
{
	if (length > INT_MAX) {
		ibScene_Fail(e, IB_ERR_PARSE, 0, "document too large (%zu bytes)", length);
		return NULL;
	}
	xmlInitParser();
	xmlParserCtxt* ctxt = xmlNewParserCtxt();
	if (ctxt == NULL || ctxt->sax == NULL) {
		xmlFreeParserCtxt(ctxt);
		ibScene_Fail(e, IB_ERR_OUT_OF_MEMORY, 0, "out of memory");
		return NULL;
	}
	xmlErrState st = {"", 0, false};
	ctxt->_private = &st;
	ctxt->sax->serror = onXmlError;
	xmlGenericErrorFunc oldHandler = xmlGenericError;
	void* oldContext = xmlGenericErrorContext;
	xmlSetGenericErrorFunc(NULL, silentGenericError);
	/* No XML_PARSE_NOENT (entities are not substituted), no DTD loading, no network. */
	xmlDoc* doc = xmlCtxtReadMemory(ctxt, xml, (int)length, e->file, NULL, XML_PARSE_NONET | XML_PARSE_BIG_LINES);
	xmlSetGenericErrorFunc(oldContext, oldHandler);
	bool wellFormed = ctxt->wellFormed != 0;
	xmlFreeParserCtxt(ctxt);
	if (doc != NULL && wellFormed && !st.set) return doc;
	xmlFreeDoc(doc);
	if (st.set)
		ibScene_Fail(e, IB_ERR_PARSE, st.line, "malformed XML: %s", st.msg);
	else
		ibScene_Fail(e, IB_ERR_PARSE, 0, "malformed XML");
	return NULL;
}

/* ---------------------------------------------------------------- files */

/* Whole file into a malloc'd buffer (NULL after an error). */
char* ibScene_ReadFile(ibSceneErr* e, const char* path, size_t* outLength)
{
	FILE* f = fopen(path, "rb");
	if (f == NULL) {
		ibScene_IoError(e, "cannot open the file", errno);
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char* buf = malloc(cap);
	while (buf != NULL) {
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap) break;
		char* grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
		if (grown == NULL) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = grown;
		cap *= 2;
	}
	int readErrno = ferror(f) ? errno : 0;
	bool readFailed = buf != NULL && ferror(f);
	fclose(f);
	if (buf == NULL) {
		ibScene_Fail(e, IB_ERR_OUT_OF_MEMORY, 0, "out of memory reading the file");
		return NULL;
	}
	if (readFailed) {
		free(buf);
		ibScene_IoError(e, "cannot read the file", readErrno);
		return NULL;
	}
	*outLength = len;
	return buf;
}
