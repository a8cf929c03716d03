/* ibsim CSV time series: header with named columns, one row per step. */
#include "csv_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char* const kBodySuffixes[IBSIM_CSV_BODY_COLUMNS] = {
    "pos_x", "pos_y", "pos_z", "q_w", "q_x", "q_y", "q_z", "v_x", "v_y", "v_z", "w_x", "w_y", "w_z",
};

static const char* const kWorldColumns[IBSIM_CSV_WORLD_COLUMN_COUNT] = {
    "energy", "kinetic", "potential", "spring", "p_x", "p_y", "p_z", "L_x", "L_y", "L_z",
};

int ibsimCsv_ColumnNumber(int bodyCount, ibsimCsvColumn column)
{
	return 1 + IBSIM_CSV_BODY_COLUMNS * bodyCount + (int)column + 1;
}

enum { IBSIM_PREFIX_MAX = 128 };

/* Column prefix of body i: its name with every character outside [A-Za-z0-9_.-] replaced by '_',
 * or "body<i>" if it has no name. */
static void bodyPrefix(ibBodyId body, int i, char* out, size_t outSize)
{
	const char* name = ibBody_GetName(body);
	if (name == NULL || name[0] == '\0') {
		snprintf(out, outSize, "body%d", i);
		return;
	}
	size_t n = 0;
	for (; name[n] != '\0' && n + 1 < outSize; ++n) {
		char c = name[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		          c == '-';
		out[n] = ok ? c : '_';
	}
	out[n] = '\0';
}

typedef struct prefixEntry {
	char text[IBSIM_PREFIX_MAX + 16];
	int index;
} prefixEntry;

static int comparePrefix(const void* a, const void* b)
{
	const prefixEntry* pa = a;
	const prefixEntry* pb = b;
	int c = strcmp(pa->text, pb->text);
	if (c != 0) return c;
	return (pa->index > pb->index) - (pa->index < pb->index);
}

/* Prefixes of all bodies; a body whose prefix repeats an earlier body's gets "_<i>" appended. */
static prefixEntry* makePrefixes(const ibBodyId* bodies, int bodyCount)
{
	size_t n = bodyCount > 0 ? (size_t)bodyCount : 1;
	prefixEntry* sorted = calloc(n, sizeof *sorted);
	prefixEntry* byIndex = calloc(n, sizeof *byIndex);
	if (sorted == NULL || byIndex == NULL) {
		free(sorted);
		free(byIndex);
		return NULL;
	}
	for (int i = 0; i < bodyCount; ++i) {
		bodyPrefix(bodies[i], i, sorted[i].text, IBSIM_PREFIX_MAX);
		sorted[i].index = i;
	}
	qsort(sorted, n, sizeof *sorted, comparePrefix);
	for (int k = 0; k < bodyCount; ++k) {
		prefixEntry* e = &byIndex[sorted[k].index];
		*e = sorted[k];
		if (k > 0 && strcmp(sorted[k].text, sorted[k - 1].text) == 0) {
			size_t len = strlen(e->text);
			snprintf(e->text + len, sizeof e->text - len, "_%d", e->index);
		}
	}
	free(sorted);
	return byIndex;
}

bool ibsimCsv_Open(ibsimCsv* csv, const char* path, const ibBodyId* bodies, int bodyCount, char* msg, size_t msgSize)
{
	*csv = (ibsimCsv){.path = path, .bodies = bodies, .bodyCount = bodyCount};
	csv->file = fopen(path, "w");
	if (csv->file == NULL) {
		snprintf(msg, msgSize, "%s: cannot create CSV file: %s", path, strerror(errno));
		return false;
	}
	fputs("time", csv->file);
	prefixEntry* prefixes = makePrefixes(bodies, bodyCount);
	if (prefixes == NULL) {
		snprintf(msg, msgSize, "%s: out of memory", path);
		fclose(csv->file);
		csv->file = NULL;
		return false;
	}
	for (int i = 0; i < bodyCount; ++i)
		for (int k = 0; k < IBSIM_CSV_BODY_COLUMNS; ++k)
			fprintf(csv->file, ",%s_%s", prefixes[i].text, kBodySuffixes[k]);
	free(prefixes);
	for (int k = 0; k < IBSIM_CSV_WORLD_COLUMN_COUNT; ++k) fprintf(csv->file, ",%s", kWorldColumns[k]);
	fputc('\n', csv->file);
	if (ferror(csv->file)) {
		snprintf(msg, msgSize, "%s: write error", path);
		fclose(csv->file);
		csv->file = NULL;
		return false;
	}
	return true;
}

static void putNumber(FILE* f, double v) { fprintf(f, ",%.17g", v); }

static void putVec(FILE* f, ibVec3 v)
{
	putNumber(f, v.x);
	putNumber(f, v.y);
	putNumber(f, v.z);
}

bool ibsimCsv_WriteRow(ibsimCsv* csv, ibWorldId world, const ibWorldInvariants* inv)
{
	if (csv->file == NULL) return false;
	FILE* f = csv->file;
	fprintf(f, "%.17g", ibWorld_GetTime(world));
	for (int i = 0; i < csv->bodyCount; ++i) {
		ibBodyId b = csv->bodies[i];
		ibQuat q = ibBody_GetRotation(b);
		putVec(f, ibBody_GetPosition(b));
		putNumber(f, q.w);
		putNumber(f, q.x);
		putNumber(f, q.y);
		putNumber(f, q.z);
		putVec(f, ibBody_GetLinearVelocity(b));
		putVec(f, ibBody_GetAngularVelocity(b));
	}
	putNumber(f, ibsimTotalEnergy(inv));
	putNumber(f, inv->kineticEnergy);
	putNumber(f, inv->potentialEnergy);
	putNumber(f, inv->springEnergy);
	putVec(f, inv->linearMomentum);
	putVec(f, inv->angularMomentum);
	fputc('\n', f);
	return !ferror(f);
}

bool ibsimCsv_Close(ibsimCsv* csv, char* msg, size_t msgSize)
{
	if (csv->file == NULL) return true;
	bool ok = !ferror(csv->file);
	if (fclose(csv->file) != 0) ok = false;
	csv->file = NULL;
	if (!ok) snprintf(msg, msgSize, "%s: error while writing the CSV file", csv->path);
	return ok;
}
