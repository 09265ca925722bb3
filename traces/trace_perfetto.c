/* trace_perfetto.c - a trace as a Perfetto trace: protobuf TracePackets carrying
 * TrackDescriptors and TrackEvents (trace_perfetto.h says what a viewer shows). The field
 * numbers are those of Perfetto's protos/perfetto/trace/ (trace_packet.proto, clock_snapshot,
 * trace_packet_defaults, interned_data/, track_event/{track_event, track_descriptor,
 * counter_descriptor, process_descriptor, debug_annotation}.proto); the bytes are written by
 * the small encoder of trace_perfetto_pb.c. One packet sequence: its first packet clears the
 * incremental state and carries the defaults (the clock) and the interned annotation names,
 * every later one says it needs them. Descriptors come before the events that use them (a
 * lane's when the lane is first taken); events come in time order (the walk). */
#include "traces/trace_perfetto.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "traces/trace_format.h"
#include "traces/trace_perfetto_pb.h"
#include "traces/trace_perfetto_walk.h"

/* Field numbers, by message. */
enum {
    F_TRACE_PACKET = 1,                 /* Trace.packet */
    F_PKT_CLOCK_SNAPSHOT = 6,           /* TracePacket */
    F_PKT_TIMESTAMP = 8,
    F_PKT_SEQUENCE_ID = 10,             /* trusted_packet_sequence_id */
    F_PKT_TRACK_EVENT = 11,
    F_PKT_INTERNED_DATA = 12,
    F_PKT_SEQUENCE_FLAGS = 13,
    F_PKT_DEFAULTS = 59,                /* trace_packet_defaults */
    F_PKT_TRACK_DESCRIPTOR = 60,
    F_PKT_FIRST_ON_SEQUENCE = 87,       /* first_packet_on_sequence */
    F_DEFAULTS_CLOCK_ID = 58,           /* TracePacketDefaults.timestamp_clock_id */
    F_SNAPSHOT_CLOCKS = 1,              /* ClockSnapshot */
    F_SNAPSHOT_PRIMARY = 2,             /* primary_trace_clock */
    F_CLOCK_ID = 1,                     /* ClockSnapshot.Clock */
    F_CLOCK_TIMESTAMP = 2,
    F_INTERNED_ANNOTATION_NAMES = 3,    /* InternedData.debug_annotation_names */
    F_INTERNED_IID = 1,                 /* DebugAnnotationName */
    F_INTERNED_NAME = 2,
    F_TD_UUID = 1,                      /* TrackDescriptor */
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_PARENT_UUID = 5,
    F_TD_COUNTER = 8,
    F_TD_DESCRIPTION = 14,
    F_PROCESS_PID = 1,                  /* ProcessDescriptor */
    F_PROCESS_NAME = 6,
    F_COUNTER_UNIT = 3,                 /* CounterDescriptor */
    F_TE_ANNOTATIONS = 4,               /* TrackEvent.debug_annotations */
    F_TE_TYPE = 9,
    F_TE_TRACK_UUID = 11,
    F_TE_NAME = 23,
    F_TE_COUNTER_VALUE = 30,
    F_DA_NAME_IID = 1,                  /* DebugAnnotation */
    F_DA_BOOL = 2,
    F_DA_UINT = 3,
    F_DA_STRING = 6,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { UNIT_COUNT = 2 };
enum { PF_SEQUENCE = 1, PF_PROCESS_UUID = 1, PF_NPATHS = 3 };

/* Interned debug annotation names: iid = index + 1. */
#define PF_ANNOTATIONS(X)                                                                      \
    X(AN_SIZE, "size") X(AN_QP, "qp") X(AN_PATH, "path") X(AN_OP, "op") X(AN_RECORD, "record") \
    X(AN_STATUS, "status") X(AN_INLINE, "inline") X(AN_SIGNALED, "signaled")                   \
    X(AN_COLD, "cold") X(AN_IMPLICIT, "implicit_completion") X(AN_TO, "to")
#define PF_AN_ENUM(id, name) id,
#define PF_AN_NAME(id, name) name,
enum { AN_NONE, PF_ANNOTATIONS(PF_AN_ENUM) AN_COUNT };
static const char *const g_an_names[] = {PF_ANNOTATIONS(PF_AN_NAME)};

/* Perfetto's built-in clocks (ClockSnapshot.BuiltinClocks) by the trace's clock name. */
static const struct {
    const char *name;
    uint32_t id;
} g_clocks[] = {
    {"CLOCK_REALTIME", 1}, {"CLOCK_REALTIME_COARSE", 2}, {"CLOCK_MONOTONIC", 3},
    {"CLOCK_MONOTONIC_COARSE", 4}, {"CLOCK_MONOTONIC_RAW", 5}, {"CLOCK_BOOTTIME", 6},
};

/* The sibling tracks ("lanes") of one QP and path: when each is free again, its uuid. */
typedef struct {
    uint64_t *free_ns, *uuid;
    size_t n, cap;
} pf_lanes_t;

typedef struct {
    FILE *fp;
    const trace_t *tr;
    pb_buf_t pkt, msg, sub, item; /* a packet, its payload, nested parts */
    pf_lanes_t *lanes;            /* [slot * PF_NPATHS + path] */
    uint64_t *rec_track;          /* the lane each record's slice is on */
    uint64_t next_uuid;
    uint32_t clock_id;            /* 0: Perfetto's default clock */
    unsigned long packets;
    hs_status_t st;
} pb_ctx_t;

/* ---- packets ---------------------------------------------------------------------- */

static void pkt_write(pb_ctx_t *c)
{
    uint8_t key[24];
    pb_buf_t head = {.b = key, .cap = sizeof(key)}; /* never grows: 20 bytes at most */

    if (c->pkt.oom || c->msg.oom || c->sub.oom || c->item.oom) {
        c->st = HS_ERR_NOMEM;
        return;
    }
    pb_len_prefix(&head, F_TRACE_PACKET, c->pkt.n); /* Trace.packet: key and length */
    if (fwrite(key, 1, head.n, c->fp) != head.n || fwrite(c->pkt.b, 1, c->pkt.n, c->fp) != c->pkt.n)
        c->st = HS_ERR_IO;
    c->packets++;
}

/* The interned annotation names and the clock default, for the sequence's first packet. */
static void pkt_sequence_state(pb_ctx_t *c)
{
    pb_reset(&c->sub);
    for (int i = AN_NONE + 1; i < AN_COUNT; i++) {
        pb_reset(&c->item);
        pb_uint(&c->item, F_INTERNED_IID, (uint64_t)i);
        pb_str(&c->item, F_INTERNED_NAME, g_an_names[i - 1]);
        pb_msg(&c->sub, F_INTERNED_ANNOTATION_NAMES, &c->item);
    }
    pb_msg(&c->pkt, F_PKT_INTERNED_DATA, &c->sub);
    if (c->clock_id) {
        pb_reset(&c->sub);
        pb_uint(&c->sub, F_DEFAULTS_CLOCK_ID, c->clock_id);
        pb_msg(&c->pkt, F_PKT_DEFAULTS, &c->sub);
    }
    pb_uint(&c->pkt, F_PKT_FIRST_ON_SEQUENCE, 1);
}

/* Start a packet: timestamp (when has_ts), sequence, flags; the first packet also carries
 * the sequence's state. */
static void pkt_start(pb_ctx_t *c, int has_ts, uint64_t t_ns)
{
    pb_reset(&c->pkt);
    if (has_ts)
        pb_uint(&c->pkt, F_PKT_TIMESTAMP, t_ns);
    pb_uint(&c->pkt, F_PKT_SEQUENCE_ID, PF_SEQUENCE);
    if (c->packets == 0) {
        pb_uint(&c->pkt, F_PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        pkt_sequence_state(c);
    } else {
        pb_uint(&c->pkt, F_PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    }
}

/* ---- descriptors ------------------------------------------------------------------ */

static void clock_snapshot(pb_ctx_t *c)
{
    const trace_t *tr = c->tr;
    uint64_t t0 = tr->n ? tr->recs[0].t_post_ns : 0;

    for (size_t i = 0; i < tr->n; i++)
        if (tr->recs[i].t_post_ns < t0)
            t0 = tr->recs[i].t_post_ns;
    pkt_start(c, 0, 0);
    pb_reset(&c->msg);
    pb_reset(&c->sub);
    pb_uint(&c->sub, F_CLOCK_ID, c->clock_id);
    pb_uint(&c->sub, F_CLOCK_TIMESTAMP, t0);
    pb_msg(&c->msg, F_SNAPSHOT_CLOCKS, &c->sub);
    pb_uint(&c->msg, F_SNAPSHOT_PRIMARY, c->clock_id);
    pb_msg(&c->pkt, F_PKT_CLOCK_SNAPSHOT, &c->msg);
    pkt_write(c);
}

/* A TrackDescriptor packet; the caller has put the kind-specific fields in c->sub
 * (sub_field, or 0 for none). Not the sequence's first packet (that one uses c->sub). */
static void track_descriptor(pb_ctx_t *c, uint64_t uuid, uint64_t parent, const char *name,
                             uint32_t sub_field)
{
    pkt_start(c, 0, 0);
    pb_reset(&c->msg);
    pb_uint(&c->msg, F_TD_UUID, uuid);
    if (parent)
        pb_uint(&c->msg, F_TD_PARENT_UUID, parent);
    pb_str(&c->msg, F_TD_NAME, name);
    if (sub_field)
        pb_msg(&c->msg, sub_field, &c->sub);
    pb_msg(&c->pkt, F_PKT_TRACK_DESCRIPTOR, &c->msg);
    pkt_write(c);
}

static void process_track(pb_ctx_t *c, const char *source)
{
    const trace_hdr_t *h = &c->tr->hdr;
    char desc[512];

    pkt_start(c, 0, 0);
    pb_reset(&c->msg);
    pb_reset(&c->sub);
    pb_uint(&c->sub, F_PROCESS_PID, h->pid > 0 && h->pid <= INT32_MAX ? (uint64_t)h->pid : 1);
    pb_str(&c->sub, F_PROCESS_NAME, source);
    pb_uint(&c->msg, F_TD_UUID, PF_PROCESS_UUID);
    pb_msg(&c->msg, F_TD_PROCESS, &c->sub);
    snprintf(desc, sizeof(desc), "hintsim trace of %zu records: producer %s, mode %s, host %s, "
             "device %s, clock %s, hint %" PRIu64 " bytes", c->tr->n, h->producer,
             trace_mode_str(h->mode), h->host[0] ? h->host : "-", h->device[0] ? h->device : "-",
             h->clock_source, h->hint_bytes);
    pb_str(&c->msg, F_TD_DESCRIPTION, desc);
    pb_msg(&c->pkt, F_PKT_TRACK_DESCRIPTOR, &c->msg);
    pkt_write(c);
}

/* QP slot s: its track (uuid 2 + 2s) and its in-flight counter (3 + 2s). */
static uint64_t qp_uuid(uint32_t slot) { return 2 + 2 * (uint64_t)slot; }
static uint64_t counter_uuid(uint32_t slot) { return 3 + 2 * (uint64_t)slot; }

static void qp_tracks(pb_ctx_t *c, const pf_walk_t *w)
{
    char name[64];

    for (uint32_t s = 0; s < w->nqp; s++) {
        snprintf(name, sizeof(name), "QP %" PRIu32, w->qps[s]);
        track_descriptor(c, qp_uuid(s), PF_PROCESS_UUID, name, 0);
        snprintf(name, sizeof(name), "QP %" PRIu32 " in flight", w->qps[s]);
        pb_reset(&c->sub);
        pb_uint(&c->sub, F_COUNTER_UNIT, UNIT_COUNT);
        track_descriptor(c, counter_uuid(s), qp_uuid(s), name, F_TD_COUNTER);
    }
    c->next_uuid = 2 + 2 * (uint64_t)w->nqp;
}

static int path_index(uint16_t flags)
{
    return (flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_LL ? 0
           : (flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_BW ? 1 : 2;
}

/* The lowest lane of r's QP and path free at r's post (a new one, described now, when none
 * is); it is then busy until until_ns. 0 when memory ran out. */
static uint64_t lane_take(pb_ctx_t *c, const trace_rec_t *r, uint32_t slot, uint64_t until_ns)
{
    pf_lanes_t *l = &c->lanes[(size_t)slot * PF_NPATHS + (size_t)path_index(r->flags)];
    char name[64];
    size_t k = 0;

    while (k < l->n && l->free_ns[k] > r->t_post_ns)
        k++;
    if (k == l->n) {
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 4;
            uint64_t *f = realloc(l->free_ns, cap * sizeof(*f)), *u;
            if (f)
                l->free_ns = f;
            if (!f || (u = realloc(l->uuid, cap * sizeof(*u))) == NULL) {
                c->st = HS_ERR_NOMEM;
                return 0;
            }
            l->uuid = u;
            l->cap = cap;
        }
        l->uuid[l->n++] = c->next_uuid++;
        snprintf(name, sizeof(name), "QP %" PRIu32 " %s", r->qp, pf_path_str(r->flags));
        track_descriptor(c, l->uuid[k], qp_uuid(slot), name, 0);
    }
    l->free_ns[k] = until_ns;
    return l->uuid[k];
}

/* ---- events ----------------------------------------------------------------------- */

static void an_uint(pb_ctx_t *c, int name, uint64_t v)
{
    pb_reset(&c->item);
    pb_uint(&c->item, F_DA_NAME_IID, (uint64_t)name);
    pb_uint(&c->item, F_DA_UINT, v);
    pb_msg(&c->msg, F_TE_ANNOTATIONS, &c->item);
}

static void an_str(pb_ctx_t *c, int name, const char *v)
{
    pb_reset(&c->item);
    pb_uint(&c->item, F_DA_NAME_IID, (uint64_t)name);
    pb_str(&c->item, F_DA_STRING, v);
    pb_msg(&c->msg, F_TE_ANNOTATIONS, &c->item);
}

static void an_flag(pb_ctx_t *c, const trace_rec_t *r, uint16_t flag, int name)
{
    if (!(r->flags & flag))
        return;
    pb_reset(&c->item);
    pb_uint(&c->item, F_DA_NAME_IID, (uint64_t)name);
    pb_uint(&c->item, F_DA_BOOL, 1);
    pb_msg(&c->msg, F_TE_ANNOTATIONS, &c->item);
}

/* A TrackEvent's common fields into c->msg (reset). */
static void event_start(pb_ctx_t *c, int type, uint64_t track, const char *name)
{
    pb_reset(&c->msg);
    pb_uint(&c->msg, F_TE_TYPE, (uint64_t)type);
    pb_uint(&c->msg, F_TE_TRACK_UUID, track);
    if (name)
        pb_str(&c->msg, F_TE_NAME, name);
}

static void event_write(pb_ctx_t *c, uint64_t t_ns)
{
    pkt_start(c, 1, t_ns); /* leaves c->msg, the event, alone */
    pb_msg(&c->pkt, F_PKT_TRACK_EVENT, &c->msg);
    pkt_write(c);
}

static void message_annotations(pb_ctx_t *c, const trace_rec_t *r, size_t i)
{
    an_uint(c, AN_SIZE, r->size_bytes);
    an_uint(c, AN_QP, r->qp);
    an_str(c, AN_PATH, pf_path_str(r->flags));
    an_str(c, AN_OP, trace_opcode_str(r->opcode));
    an_uint(c, AN_RECORD, trace_file_index(c->tr, i));
    if (r->status || (r->flags & TRACE_F_ERROR))
        an_uint(c, AN_STATUS, r->status);
    an_flag(c, r, TRACE_F_INLINE, AN_INLINE);
    an_flag(c, r, TRACE_F_SIGNALED, AN_SIGNALED);
    an_flag(c, r, TRACE_F_COLD, AN_COLD);
    an_flag(c, r, TRACE_F_IMPLICIT, AN_IMPLICIT);
}

static void counter(pb_ctx_t *c, const pf_walk_t *w, uint32_t slot, uint64_t t_ns)
{
    event_start(c, TYPE_COUNTER, counter_uuid(slot), NULL);
    pb_int(&c->msg, F_TE_COUNTER_VALUE, (int64_t)w->inflight[slot]);
    event_write(c, t_ns);
}

static void on_post(void *ctx, const pf_walk_t *w, size_t i, uint32_t slot)
{
    pb_ctx_t *c = ctx;
    const trace_rec_t *r = &c->tr->recs[i];
    int known = r->t_done_ns != TRACE_TIME_UNKNOWN;
    uint64_t lane;
    char name[96];

    if (c->st != HS_OK)
        return;
    if (r->flags & TRACE_F_SWITCH) {
        snprintf(name, sizeof(name), "path switch to %s", pf_path_str(r->flags));
        event_start(c, TYPE_INSTANT, qp_uuid(slot), name);
        an_str(c, AN_TO, pf_path_str(r->flags));
        an_uint(c, AN_RECORD, trace_file_index(c->tr, i));
        event_write(c, r->t_post_ns);
    }
    /* an instant takes its lane only at its post */
    if ((lane = lane_take(c, r, slot, known ? pf_done_ns(r) : r->t_post_ns)) == 0)
        return;
    snprintf(name, sizeof(name), "%s %" PRIu64 " B%s", trace_opcode_str(r->opcode),
             r->size_bytes, known ? "" : " (completion unknown)");
    event_start(c, known ? TYPE_SLICE_BEGIN : TYPE_INSTANT, lane, name);
    message_annotations(c, r, i);
    event_write(c, r->t_post_ns);
    if (!known)
        return;
    c->rec_track[i] = lane;
    counter(c, w, slot, r->t_post_ns);
}

static void on_done(void *ctx, const pf_walk_t *w, size_t i, uint32_t slot)
{
    pb_ctx_t *c = ctx;
    uint64_t t = pf_done_ns(&c->tr->recs[i]);

    if (c->st != HS_OK)
        return;
    event_start(c, TYPE_SLICE_END, c->rec_track[i], NULL);
    event_write(c, t);
    counter(c, w, slot, t);
}

/* ---- the whole trace -------------------------------------------------------------- */

static uint32_t clock_of(const char *name)
{
    for (size_t i = 0; i < sizeof(g_clocks) / sizeof(g_clocks[0]); i++)
        if (strcmp(name, g_clocks[i].name) == 0)
            return g_clocks[i].id;
    return 0;
}

static void ctx_free(pb_ctx_t *c, size_t nlanes)
{
    for (size_t k = 0; c->lanes && k < nlanes; k++) {
        free(c->lanes[k].free_ns);
        free(c->lanes[k].uuid);
    }
    free(c->lanes);
    free(c->rec_track);
    pb_free(&c->pkt);
    pb_free(&c->msg);
    pb_free(&c->sub);
    pb_free(&c->item);
}

hs_status_t trace_perfetto_write(FILE *fp, const trace_t *tr, const char *source)
{
    static const pf_walk_ops_t ops = {on_post, on_done};
    pb_ctx_t c = {.fp = fp, .tr = tr, .clock_id = clock_of(tr->hdr.clock_source)};
    size_t nlanes = 0;
    pf_walk_t w;
    hs_status_t st;

    if ((st = pf_walk_init(&w, tr)) != HS_OK)
        return st;
    nlanes = (w.nqp ? w.nqp : 1) * PF_NPATHS;
    c.lanes = calloc(nlanes, sizeof(*c.lanes));
    c.rec_track = calloc(tr->n ? tr->n : 1, sizeof(*c.rec_track));
    if (!c.lanes || !c.rec_track) {
        st = HS_ERR_NOMEM;
        goto free_ctx;
    }
    if (c.clock_id)
        clock_snapshot(&c);
    process_track(&c, source ? source : "trace");
    qp_tracks(&c, &w);
    pf_walk_run(&w, &ops, &c);
    st = c.st != HS_OK ? c.st : ferror(fp) ? HS_ERR_IO : HS_OK;
free_ctx:
    ctx_free(&c, nlanes);
    pf_walk_free(&w);
    return st;
}

hs_status_t trace_perfetto_save(const char *path, const trace_t *tr, const char *source)
{
    return pf_save(path, trace_perfetto_write, tr, source);
}
