/* ibsim gen: the joint benchmark models of the dissertation (§3.3.3.1) built with the public API and
 * written as scene files (docs/ibsim.md, "ibsim gen"). */
#ifndef IBSIM_GEN_H
#define IBSIM_GEN_H

#include <stdint.h>
#include <stdio.h>

#include <ibdyn/ibdyn.h>

/** Largest chain length and tree depth `gen` accepts. */
enum { IBSIM_GEN_MAX_CHAIN = 100000, IBSIM_GEN_MAX_TREE_DEPTH = 12 };

/** Seed of the initial-velocity directions of the chain (the benchmarks' BENCH_DIRECTION_SEED). */
#define IBSIM_DIRECTION_SEED UINT64_C(0x1bd1a2c0ffee2024)

/** Unit direction number index of the fixed-seed sequence, uniform on the sphere: the same
 * splitmix64-based formula as bench_direction() in bench/bench_common.c, so generated scenes and
 * the benchmarks start the chain bodies with the same velocities. */
void ibsimDirection(uint64_t seed, int index, double out[3]);

/** Build the chain of n bodies (see docs/ibsim.md) in a new world. */
ibResult ibsimBuildChain(int n, ibWorldId* outWorld, char* msg, size_t msgSize);
/** Build the binary tree of depthCount levels (2^depthCount - 1 bodies) in a new world. */
ibResult ibsimBuildTree(int depthCount, ibWorldId* outWorld, char* msg, size_t msgSize);

/** `ibsim gen` with its own arguments; returns the exit code. */
int ibsimGen(int argc, char** argv);
/** Help text of `ibsim gen`. */
void ibsimPrintGenUsage(FILE* out);

#endif
