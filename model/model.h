/* model.h - the analytical path model as a prediction engine (see model/predict.h). */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "model/predict.h"

extern const pred_engine_ops_t model_engine_ops;

#endif
