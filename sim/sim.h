/* sim.h - the SimGrid discrete-event simulator of the two paths, as a prediction engine.
 * Plug it into pred_run() / recommend through sim_engine_ops (see model/predict.h). */
#ifndef HS_SIM_H
#define HS_SIM_H

#include "model/predict.h"

extern const pred_engine_ops_t sim_engine_ops;

#endif
