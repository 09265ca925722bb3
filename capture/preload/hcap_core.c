/* hcap_core.c - libhintcap's lifecycle and background writer.
 *
 * hcap_start runs once, at the first ibv_open_device, so that processes that never touch
 * verbs (launchers, shells) leave no trace. The writer thread drains every thread's ring
 * each HINTCAP_FLUSH_US (sooner while there is work), feeds the matcher and streams the
 * records into the trace file. hcap_stop (library destructor, fatal signal) asks the writer
 * for a final drain and waits for it, so the signal handler itself never touches the file.
 * Time stamps: the hooks take hcap_stamp() (the TSC where it is invariant); the writer
 * converts every drained batch to CLOCK_MONOTONIC ns (hcap_clock.h) before matching it.
 */
#include "capture/preload/hcap.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_util.h"

hcap_t hcap_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .writer_cpu = -1};
__thread hcap_ring_t *hcap_t_ring __attribute__((tls_model("initial-exec")));
__thread uint32_t hcap_t_gen __attribute__((tls_model("initial-exec")));

#define HCAP_DRAIN_BATCH 4096
#define HCAP_MAP_ORDER 16

static void hcap_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void hcap_warn(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "libhintcap: warning: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- rings ---------------------------------------------------------------------- */

/* The thread's ring is dead once marked: the writer frees it when it has drained it, so the
 * thread lets go of it first. A destructor that runs after this one (a key made later, say
 * one that destroys a QP) and posts or detaches gets a new ring, made dead in its turn. */
static void ring_thread_exit(void *arg)
{
    hcap_ring_t *r = arg;

    if (hcap_t_ring == r)
        hcap_t_ring = NULL;
    atomic_store_explicit(&r->dead, 1, memory_order_release);
}

hcap_ring_t *hcap_ring_new_for_thread(hcap_t *h)
{
    hcap_ring_t *r = hcap_ring_new(h->cfg.ring_order, h->cfg.blocking);

    if (!r)
        return NULL;
    pthread_mutex_lock(&h->lock);
    r->next = h->rings;
    h->rings = r;
    hcap_t_gen = atomic_load(&h->gen);
    pthread_mutex_unlock(&h->lock);
    pthread_setspecific(h->ring_key, r);
    hcap_t_ring = r;
    return r;
}

/* ---- the sink: trace file or test callback ------------------------------------- */

static char *header_extra_json(const hcap_t *h)
{
    cJSON *root = cJSON_CreateObject(), *src = cJSON_AddObjectToObject(root, "hint_sources");
    cJSON *cfg = cJSON_AddObjectToObject(root, "hintcap");
    char *text;

    if (h->cfg.env_text[0])
        cJSON_AddStringToObject(src, "env", h->cfg.env_text);
    if (h->cfg.config.set)
        cJSON_AddNumberToObject(src, "config", (double)h->cfg.config.bytes);
    if (h->cfg.code.set)
        cJSON_AddNumberToObject(src, "code", (double)h->cfg.code.bytes);
    cJSON_AddStringToObject(src, "config_path", h->cfg.config_path);
    cJSON_AddStringToObject(src, "precedence", "code > config > env");
    cJSON_AddNumberToObject(cfg, "cold_n", (double)h->cfg.cold_n);
    cJSON_AddNumberToObject(cfg, "ring_events", (double)(1u << h->cfg.ring_order));
    cJSON_AddBoolToObject(cfg, "blocking", h->cfg.blocking);
    cJSON_AddNumberToObject(cfg, "flush_us", (double)h->cfg.flush_us);
    if (h->writer_cpu >= 0)
        cJSON_AddNumberToObject(cfg, "writer_cpu", h->writer_cpu);
    cJSON_AddStringToObject(cfg, "completion_time", "seen by the poller; unsignalled WRs "
                                                    "take the next signalled WR's (implicit)");
    cJSON_AddStringToObject(cfg, "stamp", h->clock.tsc ? "tsc" : "clock_monotonic");
    if (h->clock.tsc)
        cJSON_AddNumberToObject(cfg, "tsc_hz", hcap_clock_hz(&h->clock));
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static void header_fill(const hcap_t *h, trace_hdr_t *hdr)
{
    trace_hdr_init(hdr);
    snprintf(hdr->producer, sizeof(hdr->producer), "libhintcap");
    /* Always ns of CLOCK_MONOTONIC; "via TSC": stamped with the TSC, converted (hcap_clock.h) */
    snprintf(hdr->clock_source, sizeof(hdr->clock_source), "%s",
             h->clock.tsc ? HCAP_CLOCK_TSC_NAME : "CLOCK_MONOTONIC");
    hdr->mode = TRACE_MODE_PRELOAD;
    snprintf(hdr->device, sizeof(hdr->device), "%s", h->device);
    snprintf(hdr->firmware, sizeof(hdr->firmware), "%s", h->firmware);
    hdr->mem = h->mem;
    hcap_config_effective(&h->cfg, &hdr->hint_bytes, &hdr->hint_source);
    hdr->pid = (int64_t)getpid();
    hdr->rank = h->rank;
    hdr->extra_json = header_extra_json(h);
}

/* Open the trace file (writer thread). On failure: one warning, records discarded. */
static void sink_open(hcap_t *h)
{
    trace_hdr_t hdr;

    if (h->tw || h->sink_failed || h->emit)
        return;
    pthread_mutex_lock(&h->lock);
    header_fill(h, &hdr);
    pthread_mutex_unlock(&h->lock);
    if (trace_writer_open(h->path, &hdr, &h->tw) != HS_OK) {
        hcap_warn("cannot write trace %s; the application continues without capture",
                  h->path);
        h->sink_failed = 1;
        h->tw = NULL;
    }
    trace_hdr_release(&hdr);
}

static void sink_emit(void *arg, const trace_rec_t *recs, size_t n)
{
    hcap_t *h = arg;
    uint64_t completed = 0;

    for (size_t i = 0; i < n; i++)
        completed += recs[i].t_done_ns != TRACE_TIME_UNKNOWN;
    h->records += n;
    h->completed += completed;
    if (h->emit) {
        h->emit(h->emit_arg, recs, n);
        return;
    }
    sink_open(h);
    if (h->tw && trace_writer_append_many(h->tw, recs, n) != HS_OK) {
        hcap_warn("writing %s failed; capture stops here", h->path);
        trace_writer_abort(h->tw);
        h->tw = NULL;
        h->sink_failed = 1;
    }
}

static void sink_close(hcap_t *h)
{
    sink_open(h); /* a process that posted nothing still records its hint */
    if (!h->tw)
        return;
    trace_writer_set_dropped(h->tw, h->dropped);
    if (trace_writer_close(h->tw) != HS_OK)
        hcap_warn("closing %s failed", h->path);
    h->tw = NULL;
}

/* ---- the exit summary ------------------------------------------------------------ */

static void outside_add(hcap_summary_t *s, uint32_t qp_num, uint64_t comps)
{
    uint32_t i;

    s->outside_comps += comps;
    for (i = 0; i < s->outside_n; i++)
        if (s->outside_qpn[i] == qp_num)
            return;
    s->outside_qps++;
    if (s->outside_n < HCAP_OUTSIDE_QPNS)
        s->outside_qpn[s->outside_n++] = qp_num;
    else
        s->outside_more = 1;
}

/* One QP's share of the summary. */
static void summary_add_qp(hcap_summary_t *s, const hcap_match_qp_t *q)
{
    s->qps_posting += q->posted > 0;
    if (q->posted == 0 && q->comps > 0) /* tracked, but posted outside the hooks */
        outside_add(s, q->qp_num, q->comps);
}

/* The matcher frees a destroyed QP's entry: keep its share (writer thread). */
static void summary_retire_qp(void *arg, const hcap_match_qp_t *q)
{
    summary_add_qp(&((hcap_t *)arg)->retired, q);
}

/* What this process saw (writer thread, after the final drain; dropped is final): the
 * retired QPs' shares, and the QPs the matcher still holds. */
static void summary_fill(hcap_t *h, hcap_summary_t *s)
{
    hcap_match_qp_t q;
    size_t i, n = hcap_match_n_qps(h->match);
    uint32_t k;

    *s = h->retired;
    s->qps_seen = atomic_load(&h->next_qp) - h->qp_base;
    s->wrs_posted = h->records;
    s->wrs_completed = h->completed;
    s->dropped = h->dropped;
    for (i = 0; i < n; i++) {
        hcap_match_qp_stats(h->match, i, &q);
        summary_add_qp(s, &q);
    }
    for (k = 0; k < HCAP_OUTSIDE_QPNS; k++) { /* never tracked at all */
        uint32_t v = atomic_load(&h->outside_qpn[k]);

        if (v)
            outside_add(s, v - 1, 0);
    }
    s->outside_comps += atomic_load(&h->outside_comps);
    s->outside_more |= atomic_load(&h->outside_more) > 0;
}

static char *summary_json(const hcap_t *h, const hcap_summary_t *s)
{
    cJSON *root = cJSON_CreateObject(), *out, *qpns, *clk;
    const char *base = strrchr(h->path, '/');
    char *text;
    uint32_t i;

    cJSON_AddStringToObject(root, "producer", "libhintcap");
    cJSON_AddStringToObject(root, "run", h->run_id);
    cJSON_AddStringToObject(root, "host", h->host);
    cJSON_AddNumberToObject(root, "pid", (double)getpid());
    cJSON_AddNumberToObject(root, "rank", h->rank);
    cJSON_AddStringToObject(root, "device", h->device);
    cJSON_AddStringToObject(root, "trace", base ? base + 1 : h->path);
    cJSON_AddBoolToObject(root, "trace_written", !h->sink_failed);
    cJSON_AddNumberToObject(root, "qps_seen", (double)s->qps_seen);
    cJSON_AddNumberToObject(root, "qps_posting", (double)s->qps_posting);
    cJSON_AddNumberToObject(root, "wrs_posted", (double)s->wrs_posted);
    cJSON_AddNumberToObject(root, "wrs_completed", (double)s->wrs_completed);
    cJSON_AddNumberToObject(root, "dropped", (double)s->dropped);
    clk = cJSON_AddObjectToObject(root, "clock");
    cJSON_AddStringToObject(clk, "stamp", h->clock.tsc ? "tsc" : "clock_monotonic");
    if (h->clock.tsc) {
        cJSON_AddNumberToObject(clk, "tsc_hz", hcap_clock_hz(&h->clock));
        cJSON_AddNumberToObject(clk, "anchors", (double)h->clock.taken);
        cJSON_AddNumberToObject(clk, "max_anchor_bracket_ns", hcap_clock_bracket_ns(&h->clock));
    }
    out = cJSON_AddObjectToObject(root, "outside");
    cJSON_AddNumberToObject(out, "completions", (double)s->outside_comps);
    cJSON_AddNumberToObject(out, "qps", (double)s->outside_qps);
    cJSON_AddBoolToObject(out, "more_qps", s->outside_more);
    qpns = cJSON_AddArrayToObject(out, "qp_nums");
    for (i = 0; i < s->outside_n; i++)
        cJSON_AddItemToArray(qpns, cJSON_CreateNumber((double)s->outside_qpn[i]));
    text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* <trace minus .hst>.summary.json, atomically; one warning if it cannot be written. */
static void summary_write(hcap_t *h)
{
    char path[sizeof(h->path) + 16];
    size_t n = strlen(h->path);
    char *text;

    if (n < 4 || strcmp(h->path + n - 4, ".hst") != 0)
        return;
    snprintf(path, sizeof(path), "%.*s.summary.json", (int)(n - 4), h->path);
    text = summary_json(h, &h->summary);
    if (!text || hs_write_file_atomic(path, text) != HS_OK)
        hcap_warn("cannot write the capture summary %s", path);
    free(text);
}

/* ---- the writer thread ---------------------------------------------------------- */

/* Free the rings of exited threads that are drained (writer thread). */
static void sweep_dead(hcap_t *h)
{
    hcap_ring_t **pp, *r;

    pthread_mutex_lock(&h->lock);
    for (pp = &h->rings; (r = *pp) != NULL;) {
        if (atomic_load_explicit(&r->dead, memory_order_acquire) &&
            atomic_load(&r->head) == atomic_load(&r->tail)) {
            h->dropped += atomic_load(&r->dropped);
            *pp = r->next;
            free(r);
        } else {
            pp = &r->next;
        }
    }
    pthread_mutex_unlock(&h->lock);
}

/* Process r's events until it is empty or a ring's capacity of them was taken: every event
 * published before this call is among those (a ring holds no more), while a busy ring
 * cannot keep the pass, and so the matcher's sweep, from ending. Returns how many. */
static size_t drain_ring(hcap_t *h, hcap_ring_t *r)
{
    uint64_t left = r->mask + 1;
    size_t total = 0, n, i;
    hcap_ev_t *ev;

    /* in place: the slots are this thread's until released */
    while (left > 0 &&
           (n = hcap_ring_peek(r, &ev, left < HCAP_DRAIN_BATCH ? left : HCAP_DRAIN_BATCH)) > 0) {
        for (i = 0; i < n; i++) {
            ev[i].t_ns = hcap_clock_ns(&h->clock, ev[i].t_ns);
            hcap_match_event(h->match, &ev[i]);
        }
        hcap_ring_release(r, n);
        total += n;
        left -= n;
    }
    return total;
}

/* Drain every ring once (drain_ring). The lock is held
 * only to read the list head: producers add at the head, and only this thread removes, so
 * the rest of the list is stable. The sink may take the lock, so events are processed
 * without it. Returns the events processed. */
static size_t drain_all(hcap_t *h)
{
    hcap_ring_t *r;
    size_t total = 0;
    int dead_seen = 0;

    /* One anchor a pass, before draining: stamps older than it are interpolated; those
     * taken since (most of them while the rings are busy) are carried past it at the rate
     * of the kept anchors (hcap_clock_ns, inline either way). */
    hcap_clock_anchor(&h->clock);
    pthread_mutex_lock(&h->lock);
    r = h->rings;
    pthread_mutex_unlock(&h->lock);
    for (; r; r = r->next) {
        dead_seen |= atomic_load_explicit(&r->dead, memory_order_acquire);
        total += drain_ring(h, r);
    }
    hcap_match_sweep(h->match); /* after a whole pass: see there */
    if (dead_seen)
        sweep_dead(h);
    return total;
}

static void *writer_main(void *arg)
{
    hcap_t *h = arg;
    struct timespec ts = hcap_config_flush_ts(&h->cfg);
    hcap_ring_t *r;

    /* Sleep unless a full batch was waiting: draining event by event would bounce the
     * rings' cache lines between the writer and the posting threads. */
    while (atomic_load(&h->state) == HCAP_RUNNING) {
        if (drain_all(h) < HCAP_DRAIN_BATCH)
            nanosleep(&ts, NULL);
    }
    while (drain_all(h) > 0) /* what was published while a pass ran, as before passes ended */
        ;
    hcap_match_flush(h->match);
    pthread_mutex_lock(&h->lock);
    for (r = h->rings; r; r = r->next)
        h->dropped += atomic_load(&r->dropped);
    pthread_mutex_unlock(&h->lock);
    h->dropped += hcap_match_lost(h->match) + atomic_load(&h->lost);
    sink_close(h);
    summary_fill(h, &h->summary);
    if (!h->emit)
        summary_write(h);
    atomic_store(&h->writer_done, 1);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------- */

/* Start the writer thread; with HINTCAP_WRITER_CPU, on that CPU from its first instruction,
 * off the posting threads' (in a process pinned to one core it would otherwise take its
 * turns on the posting core: bench_preload). A CPU it cannot run on is warned about, and
 * the writer starts on the process's CPUs instead. */
static int writer_create(hcap_t *h)
{
    pthread_attr_t attr;
    cpu_set_t set;
    int rc;

    h->writer_cpu = h->cfg.writer_cpu;
    if (h->writer_cpu >= 0 && (rc = pthread_attr_init(&attr)) == 0) {
        CPU_ZERO(&set);
        CPU_SET(h->writer_cpu, &set);
        rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
        if (rc == 0)
            rc = pthread_create(&h->writer, &attr, writer_main, h);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            return 0;
        hcap_warn("cannot start the writer on CPU %d (HINTCAP_WRITER_CPU): %s; it runs on the "
                  "process's CPUs", h->writer_cpu, strerror(rc));
    }
    h->writer_cpu = -1;
    return pthread_create(&h->writer, NULL, writer_main, h);
}

/* The one-line warning and a disabled capture when DIR cannot take a trace. */
static int prepare_dir(hcap_t *h)
{
    const char *dir = h->cfg.dir;
    char host[64] = "unknown";

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        hcap_warn("cannot create trace directory %s: %s; the application runs without "
                  "capture", dir, strerror(errno));
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        hcap_warn("trace directory %s is not writable: %s; the application runs without "
                  "capture", dir, strerror(errno));
        return -1;
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(h->host, sizeof(h->host), "%s", host);
    if (hcap_trace_path(h->path, sizeof(h->path), dir, host, (long)getpid(), h->rank) != 0) {
        hcap_warn("trace directory name too long: %s; the application runs without capture",
                  dir);
        return -1;
    }
    return 0;
}

static const int hcap_fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM,
                                         SIGINT, SIGQUIT, SIGHUP};

/* Ask the writer for the final flush and wait for it (bounded). Async-signal-safe. */
static void stop_from_signal(hcap_t *h)
{
    int expected = HCAP_RUNNING;
    struct timespec ts = {0, 1000000};
    int i;

    if (!h->writer_started || pthread_equal(pthread_self(), h->writer))
        return;
    atomic_compare_exchange_strong(&h->state, &expected, HCAP_STOPPING);
    for (i = 0; i < 3000 && !atomic_load(&h->writer_done); i++)
        nanosleep(&ts, NULL);
}

static void on_fatal_signal(int sig)
{
    stop_from_signal(&hcap_g);
    sigaction(sig, &hcap_g.old_sa[sig], NULL);
    raise(sig); /* delivered with the original disposition when we return */
}

static void install_signals(hcap_t *h)
{
    struct sigaction sa;
    size_t i;

    if (h->sa_installed)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(hcap_fatal_signals) / sizeof(int); i++) {
        int sig = hcap_fatal_signals[i];

        /* Only where nobody else handles it: we never take a signal from the application. */
        if (sigaction(sig, NULL, &h->old_sa[sig]) == 0 && h->old_sa[sig].sa_handler == SIG_DFL &&
            !(h->old_sa[sig].sa_flags & SA_SIGINFO))
            sigaction(sig, &sa, NULL);
    }
    h->sa_installed = 1;
}

static void on_fork_child(void)
{
    /* The writer thread does not exist in the child: record nothing there, and let a fatal
     * signal there go at once (stop_from_signal would wait for that writer's flush). */
    atomic_store(&hcap_g.state, HCAP_DISABLED);
    hcap_g.writer_started = 0;
}

/* Allocate what the capture needs; called with h->lock held. */
static int start_alloc(hcap_t *h)
{
    hcap_ring_t *r;

    if (!h->qps.slots && (hcap_map_init(&h->qps, HCAP_MAP_ORDER) != 0 ||
                          hcap_map_init(&h->qpns, HCAP_MAP_ORDER) != 0 ||
                          hcap_map_init(&h->cqs, HCAP_MAP_ORDER) != 0))
        return -1;
    if (!h->key_made) {
        if (pthread_key_create(&h->ring_key, ring_thread_exit) != 0)
            return -1;
        pthread_atfork(NULL, NULL, on_fork_child);
        h->key_made = 1;
    }
    while ((r = h->rings) != NULL) { /* a previous capture's rings (tests restart) */
        h->rings = r->next;
        free(r);
    }
    if (hcap_match_new(h->cfg.cold_n, sink_emit, h, &h->match) != HS_OK)
        return -1;
    memset(&h->retired, 0, sizeof(h->retired));
    hcap_match_on_retire(h->match, summary_retire_qp, h);
    return 0;
}

/* HINTCAP_CLOCK: tsc (default; used where the TSC is invariant) or monotonic. */
static int stamp_wanted(void)
{
    const char *v = getenv("HINTCAP_CLOCK");

    if (!v || !*v || strcmp(v, "tsc") == 0)
        return 1;
    if (strcmp(v, "monotonic") != 0)
        hcap_warn("HINTCAP_CLOCK=%s is neither tsc nor monotonic; using tsc", v);
    return 0;
}

void hcap_start(hcap_t *h, const hcap_real_t *real, hcap_emit_fn emit, void *arg)
{
    const char *run = getenv("HINTCAP_RUN");
    int i;

    pthread_mutex_lock(&h->lock);
    if (atomic_load(&h->state) != HCAP_OFF)
        goto out;
    if (!h->cfg_loaded)
        hcap_config_load(&h->cfg, h->cfg_warn, sizeof(h->cfg_warn));
    h->cfg_loaded = 0; /* a later start (tests) reads the environment again */
    if (h->cfg_warn[0])
        hcap_warn("%s", h->cfg_warn);
    hcap_config_note_code(&h->cfg);
    h->real = *real;
    h->emit = emit;
    h->emit_arg = arg;
    h->rank = hcap_rank_from_env();
    h->records = h->dropped = h->completed = 0;
    h->qp_base = atomic_load(&h->next_qp);
    atomic_store(&h->lost, 0);
    atomic_store(&h->outside_comps, 0);
    atomic_store(&h->outside_more, 0);
    for (i = 0; i < HCAP_OUTSIDE_QPNS; i++)
        atomic_store(&h->outside_qpn[i], 0);
    snprintf(h->run_id, sizeof(h->run_id), "%s", run ? run : "");
    h->sink_failed = 0;
    atomic_store(&h->writer_done, 0);
    if ((!emit && prepare_dir(h) != 0) || start_alloc(h) != 0)
        goto disable;
    hcap_clock_init(&h->clock, stamp_wanted());
    atomic_fetch_add(&h->gen, 1);
    atomic_store(&h->state, HCAP_RUNNING);
    if (writer_create(h) != 0) {
        hcap_warn("cannot start the writer thread; the application runs without capture");
        goto disable;
    }
    h->writer_started = 1;
    if (!emit)
        install_signals(h);
    goto out;
disable:
    hcap_match_free(h->match);
    h->match = NULL;
    atomic_store(&h->state, HCAP_DISABLED);
out:
    pthread_mutex_unlock(&h->lock);
}

void hcap_stop(hcap_t *h, int final)
{
    int expected = HCAP_RUNNING;

    if (!atomic_compare_exchange_strong(&h->state, &expected, HCAP_STOPPING))
        return;
    pthread_join(h->writer, NULL);
    h->writer_started = 0;
    hcap_match_free(h->match);
    h->match = NULL;
    atomic_store(&h->state, final ? HCAP_DISABLED : HCAP_OFF);
}

void hcap_note_device(hcap_t *h, struct ibv_context *ctx)
{
    struct ibv_device_attr attr;

    pthread_mutex_lock(&h->lock);
    if (!h->device[0] && h->real.device_name && ctx->device)
        snprintf(h->device, sizeof(h->device), "%s", h->real.device_name(ctx->device));
    if (!h->firmware[0] && h->real.query_device && h->real.query_device(ctx, &attr) == 0)
        snprintf(h->firmware, sizeof(h->firmware), "%s", attr.fw_ver);
    pthread_mutex_unlock(&h->lock);
}

void hcap_note_mem(hcap_t *h, trace_mem_t mem)
{
    pthread_mutex_lock(&h->lock);
    h->mem = mem;
    pthread_mutex_unlock(&h->lock);
}
