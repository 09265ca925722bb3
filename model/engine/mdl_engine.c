/* mdl_engine.c - the replay engine compiled as one unit: the base replay (mdl_replay.c)
 * and the accelerators it calls, each in a file of its own (mdl_accel.h), included here
 * so that their entry points are static and the hot ones inline into the replay loop
 * (measured: bench_model phased at hint 0, 30% more instructions with each file a unit of
 * its own). The state (mdl_state.c) and the memo (mdl_memo.c, which tests call) are units
 * of their own. Only this file is compiled; the files below are not. */
#include "model/engine/mdl_replay.c"
#include "model/engine/mdl_skip.c"
#include "model/engine/mdl_entry.c"
#include "model/engine/mdl_bound.c"
#include "model/engine/mdl_steady.c"
#include "model/engine/mdl_serial.c"
