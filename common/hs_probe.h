/* hs_probe.h - one check of what this machine has for hintsim (`hintsim doctor`): what was
 * found, or what is missing, what hintsim needs it for and the Debian package that brings
 * it. Each module probes what it uses beside its own code (capture/cap_probe.h for verbs,
 * the rdma_rxe module and CUDA; sim/sim.h for SimGrid; plots/plot_gnuplot.h for gnuplot);
 * the tools of the VM harness and the comparisons are probed here. A probe changes nothing
 * on the machine.
 */
#ifndef HS_PROBE_H
#define HS_PROBE_H

#include <stddef.h>

typedef struct {
    const char *name;    /* "gnuplot" */
    int ok;
    char detail[512];    /* what was found, or what is missing */
    const char *needed;  /* what hintsim needs it for */
    const char *package; /* Debian package(s) that bring it, "" if not a package */
} hs_probe_t;

/* Clear c and name it. */
void hs_probe_init(hs_probe_t *c, const char *name, const char *needed, const char *package);
/* 1 with buf = the path of prog in $PATH when it is there and executable; else 0. */
int hs_probe_on_path(const char *prog, char *buf, size_t len);
/* The first line of `cmd`'s output (run by the shell) that contains match ("" = the first
 * line), without its newline; buf is "" if there is none. */
void hs_probe_output_line(const char *cmd, const char *match, char *buf, size_t len);
/* A program on $PATH: ok when found, detail the first line of `PROG vercmd` (else its path). */
void hs_probe_tool(hs_probe_t *c, const char *name, const char *prog, const char *vercmd,
                   const char *needed, const char *package);
/* /dev/kvm usable (the soft-RoCE VM runs faster; emulation works without it). */
void hs_probe_kvm(hs_probe_t *c);

#endif
