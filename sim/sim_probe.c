/* sim_probe.c - the SimGrid library this engine runs on, for `hintsim doctor`. */
#include <simgrid/engine.h> /* base.h first: version.h needs SG_BEGIN_DECL */
#include <simgrid/version.h>
#include <stdio.h>

#include "sim/sim.h"

void sim_probe_simgrid(hs_probe_t *c)
{
    int ma = 0, mi = 0, pa = 0;

    hs_probe_init(c, "SimGrid", "hintsim sim (discrete-event engine)", "libsimgrid-dev");
    sg_version_get(&ma, &mi, &pa);
    c->ok = ma > 0;
    snprintf(c->detail, sizeof(c->detail), "library %d.%d.%d (headers %s)", ma, mi, pa,
             SIMGRID_VERSION_STRING);
}
