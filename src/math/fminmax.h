/* [IMPL] fmax / fmin with the libm results (NaN: the other argument; ties: the second) without the call,
 * which the compiler does not inline under IEEE semantics (callgrind, pyramid20: ~1 % of a step's
 * instructions in libm's fmax alone, plus the spills around the calls). */
#ifndef IBDYN_MATH_FMINMAX_H
#define IBDYN_MATH_FMINMAX_H

static inline double ib_fmax(double a, double b) { return (a > b || b != b) ? a : b; }
static inline double ib_fmin(double a, double b) { return (a < b || b != b) ? a : b; }

#endif
