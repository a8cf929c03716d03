/* ibsim --plot: a temporary work directory, a gnuplot script, and gnuplot run without a shell. */
#ifndef IBSIM_PLOT_H
#define IBSIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>

enum { IBSIM_PATH_MAX = 4096 };

/** Temporary files of one plot. */
typedef struct ibsimPlotWorkspace {
	bool hasDir;
	char dir[IBSIM_PATH_MAX];             /**< mkdtemp directory under $TMPDIR (or /tmp) */
	char dataPath[IBSIM_PATH_MAX + 16];   /**< dir/data.csv: the CSV to use when no --csv was given */
	char scriptPath[IBSIM_PATH_MAX + 16]; /**< dir/plot.gp */
	char gnuplot[IBSIM_PATH_MAX];         /**< gnuplot executable found in PATH */
} ibsimPlotWorkspace;

/** What to draw. */
typedef struct ibsimPlotRequest {
	const char* csvPath; /**< the run's CSV file */
	const char* pngPath; /**< output PNG */
	const char* title;   /**< plot title (scene name) */
	int bodyCount;       /**< bodies in the CSV (to locate the world columns) */
	double energy0;      /**< E(0) */
	double energyScale;  /**< normalisation of the energy deviation */
} ibsimPlotRequest;

/** Find gnuplot in PATH and create the work directory; false with msg if gnuplot is missing or the
 * directory cannot be created. */
bool ibsimPlot_Prepare(ibsimPlotWorkspace* ws, char* msg, size_t msgSize);
/** Write the script and run gnuplot on it; false with msg on any failure (no PNG, gnuplot failed). */
bool ibsimPlot_Render(ibsimPlotWorkspace* ws, const ibsimPlotRequest* req, char* msg, size_t msgSize);
/** Remove the temporary files and directory (the PNG and a --csv file are kept). */
void ibsimPlot_Cleanup(ibsimPlotWorkspace* ws);

#endif
