/* hs_host.h - what a benchmark figure was measured on: CPU model, cores (online and
 * allowed by this process's affinity), the kernel's clock source and whether the TSC is
 * invariant (constant rate, not stopped in deep C-states: CPUID 0x80000007 EDX bit 8).
 * Every bench_* prints hs_host_print's line first so that figures name their host (the
 * CPU's family, model and stepping with its name: one name covers several generations).
 */
#ifndef HS_HOST_H
#define HS_HOST_H

#include <stdio.h>

typedef struct {
    char cpu[128];        /* /proc/cpuinfo "model name" (or "unknown"), then ", family F
                           * model M stepping S" where it gives them (x86) */
    int cores_online;     /* sysconf(_SC_NPROCESSORS_ONLN) */
    int cores_allowed;    /* CPUs in this process's affinity mask */
    char clocksource[32]; /* clocksource0/current_clocksource (or "unknown") */
    int tsc_invariant;    /* 1: invariant TSC, 0: not (or not x86) */
} hs_host_t;

/* Fill h from /proc, /sys, sched_getaffinity and CPUID. Never fails: what cannot be read
 * reads "unknown" (or 0). */
void hs_host_probe(hs_host_t *h);

/* 1 when this CPU reports an invariant TSC (CPUID 0x80000007 EDX bit 8); 0 otherwise,
 * including on CPUs that are not x86. */
int hs_tsc_invariant(void);

/* Print the one host line, then flush:
 *   host: cpu="MODEL" cores_online=N cores_allowed=M clocksource=SRC tsc_invariant=yes|no */
void hs_host_print(FILE *out);

#endif
