/* ibsim CSV time series (columns: docs/ibsim.md). */
#ifndef IBSIM_CSV_OUTPUT_H
#define IBSIM_CSV_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <ibdyn/ibdyn.h>

/** Columns written per body: pos_x..z, q_w..z, v_x..z, w_x..z. */
#define IBSIM_CSV_BODY_COLUMNS 13

/** World-level columns after the body columns, in this order. */
typedef enum ibsimCsvColumn {
	IBSIM_CSV_ENERGY = 0, /**< kinetic + potential + spring */
	IBSIM_CSV_KINETIC,
	IBSIM_CSV_POTENTIAL,
	IBSIM_CSV_SPRING,
	IBSIM_CSV_P_X,
	IBSIM_CSV_P_Y,
	IBSIM_CSV_P_Z,
	IBSIM_CSV_L_X,
	IBSIM_CSV_L_Y,
	IBSIM_CSV_L_Z,
	IBSIM_CSV_WORLD_COLUMN_COUNT
} ibsimCsvColumn;

/** An open CSV writer. */
typedef struct ibsimCsv {
	FILE* file;
	const char* path;
	const ibBodyId* bodies; /**< borrowed; must outlive the writer */
	int bodyCount;
} ibsimCsv;

/** 1-based column number of a world-level column (time is column 1), for gnuplot. */
int ibsimCsv_ColumnNumber(int bodyCount, ibsimCsvColumn column);
/** Create FILE and write the header. On failure msg says why and the writer is closed. */
bool ibsimCsv_Open(ibsimCsv* csv, const char* path, const ibBodyId* bodies, int bodyCount, char* msg, size_t msgSize);
/** Write one row: the world time, every body's state, the invariants. */
bool ibsimCsv_WriteRow(ibsimCsv* csv, ibWorldId world, const ibWorldInvariants* inv);
/** Flush and close; false (with msg) if any write failed. Safe to call on a closed writer. */
bool ibsimCsv_Close(ibsimCsv* csv, char* msg, size_t msgSize);

#endif
