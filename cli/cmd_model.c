/* cmd_model.c - `hintsim model`: the predict command (cli_predict.c) with the analytical
 * model (model/MODEL.md). */
#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "model/model.h"

int cmd_model(int argc, char **argv)
{
    return cli_predict_main(&model_engine_ops, argc, argv);
}
