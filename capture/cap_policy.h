/* cap_policy.h - the device-free logic of the two-path engine: which path a message takes
 * (hint and hysteresis), each path's configuration (from the profile, checked against the
 * device's limits), how a message splits into segments, which WRs are signalled, and the
 * bookkeeping that turns completions into per-message completion times.
 *
 * Everything here is plain arithmetic on values, so it is unit tested without a device
 * (tests/test_cap_policy.c); cap_path.c drives real QPs with it.
 */
#ifndef HS_CAP_POLICY_H
#define HS_CAP_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "model/path_rules.h"
#include "model/profile/profile.h"

typedef enum { CAP_PATH_LL = 0, CAP_PATH_BW = 1, CAP_NPATHS = 2 } cap_path_id_t;

/* "LL" / "BW". */
const char *cap_path_name(cap_path_id_t id);

/* ---- routing ------------------------------------------------------------------------ */

/* Route state: hint (0 = no hint: everything BW) and the hysteresis router of
 * model/path_rules.h, the one the model and the simulator use (switch only after k
 * consecutive messages of the other class; k <= 1 switches at once; the first message
 * sets the path). */
typedef struct {
    uint64_t hint_bytes;
    prules_router_t router;
} cap_route_t;

void cap_route_init(cap_route_t *r, uint64_t hint_bytes, uint64_t hysteresis);
/* The class of a size under a hint (prules_class): size <= hint -> LL, else BW (hint 0: BW). */
cap_path_id_t cap_route_class(uint64_t hint_bytes, uint64_t size_bytes);
/* Route one message; *switched is 1 when it takes a different path than the previous one. */
cap_path_id_t cap_route_next(cap_route_t *r, uint64_t size_bytes, int *switched);

/* ---- path configuration -------------------------------------------------------------- */

typedef struct {
    uint32_t depth;          /* max_send_wr */
    uint32_t inline_bytes;   /* payloads <= this go IBV_SEND_INLINE (0 = never) */
    uint32_t signal_every;   /* one signalled WR every k (1 = all) */
    uint32_t coal_count;     /* CQ moderation count (1 = off) */
    double coal_period_us;   /* CQ moderation period (0 = off) */
    uint64_t seg_bytes;      /* split larger messages into segments of this size (0 = no) */
    int moderation_hw;       /* 1: ibv_modify_cq applied; 0: emulated by signal interval */
    uint32_t mtu_bytes;      /* the path MTU the QP runs with (0 = not known) */
} cap_path_cfg_t;

/* What the device allows, as queried (cap_dev). */
typedef struct {
    uint32_t max_qp_wr;
    uint32_t max_inline;     /* largest max_inline_data a probe QP accepted */
    int cq_mod_supported;    /* ibv_query_device_ex reported CQ moderation caps */
    uint32_t max_cq_count;
    uint32_t max_cq_period_us;
} cap_limits_t;

/* Fill the LL and BW configurations from profile p (ll.* and bw.*; bw.depth_hinted when a
 * hint is set). Does not check limits. */
void cap_path_cfg_from_profile(const profile_t *p, uint64_t hint_bytes,
                               cap_path_cfg_t cfg[CAP_NPATHS]);
/* Check cfg against the device: depth above max_qp_wr or inline above the device limit is
 * HS_ERR_INVALID, logged naming the parameter and the limit. Decides moderation_hw and,
 * when moderation is emulated, raises signal_every to coal_count. */
hs_status_t cap_path_cfg_apply_limits(cap_path_id_t id, cap_path_cfg_t *cfg,
                                      const cap_limits_t *lim);

/* The profile a live replay on these paths runs, in the model's terms (model/MODEL.md
 * section 7b): the replay polls, so a path's batch is its applied signal interval
 * (coal_count 1, no timer, completions seen by polling: irq 0), its packets are the
 * QP's path MTU (link.mtu_bytes, where cfg knows it), and a switch has no
 * perturbation window (switch.drain_fixed_us stays: calibrate measures the live drain's
 * own cost, the fence WR, into it). cfg: the
 * paths as cap_path_cfg_apply_limits left them. Writes into p (a copy the caller owns);
 * changes (len bytes, may be NULL) gets "key old->new" for every value that moved,
 * separated by "; ". HS_OK, or the status of a refused value. */
hs_status_t cap_profile_effective(profile_t *p, const cap_path_cfg_t cfg[CAP_NPATHS],
                                  char *changes, size_t len);

/* ---- segments and signalling ------------------------------------------------------- */

/* Number of WRs a message of size bytes takes (>= 1; seg 0 = one). */
uint64_t cap_seg_count(uint64_t size_bytes, uint64_t seg_bytes);
/* Length of segment i of a message. */
uint64_t cap_seg_len(uint64_t size_bytes, uint64_t seg_bytes, uint64_t i);
/* The WRs of a message are posted in chunks of at most signal_every WRs counted from its
 * first WR, as the model's chunks (model/MODEL.md section 3): the length of the chunk that
 * starts at WR i of a message of nwr WRs (i < nwr). */
uint64_t cap_chunk_len(uint64_t nwr, uint64_t i, uint32_t signal_every);
/* Whether WR i of a message of nwr WRs is signalled when unsig_run WRs were posted since
 * the last signalled one: the last WR of a chunk (cap_chunk_len) that brings the open batch
 * to k WRs or more closes it (k = signal_every >= 1), so a batch holds k to 2k - 1 WRs and
 * ends where a message (or a chunk of a long one) ends, as the model's batches do; sig_last:
 * the message's last WR is signalled whatever the interval (a message its poster waits
 * for). Counted from the last signalled WR, so a WR signalled out of turn (that one, a
 * drain's fence) starts a new batch, as a forced close does in model/MODEL.md section 3. */
int cap_sig_wr(uint32_t unsig_run, uint32_t signal_every, uint64_t nwr, uint64_t i,
               int sig_last);

/* ---- completion tracking ------------------------------------------------------------- */

/* Per QP: WRs carry wr_id = seq (0, 1, ...). A CQE for seq w completes every WR <= w (RC
 * completes in order). Messages wait in a FIFO until their last WR completes. */
typedef struct {
    uint64_t msg;       /* caller's message index */
    uint64_t last_seq;  /* seq of the message's last WR */
} cap_pending_t;

typedef struct {
    uint64_t next_seq;  /* seq the next posted WR gets */
    uint64_t done_seq;  /* every seq < done_seq has completed */
    cap_pending_t *fifo; /* owned ring of pending messages */
    size_t cap, head, n;
} cap_track_t;

/* Ring capacity = the QP depth (a message needs at least one WR slot). */
hs_status_t cap_track_init(cap_track_t *t, size_t capacity);
void cap_track_release(cap_track_t *t);
/* WRs posted and not yet known complete. */
uint64_t cap_track_outstanding(const cap_track_t *t);
/* Take n sequence numbers for WRs about to be posted; returns the first. */
uint64_t cap_track_take(cap_track_t *t, uint64_t n);
/* Remember message msg whose last WR has seq last_seq. HS_ERR_INTERNAL when full. */
hs_status_t cap_track_push(cap_track_t *t, uint64_t msg, uint64_t last_seq);
/* A signalled completion for seq w arrived: mark everything <= w done and hand back, in
 * order, up to max messages now complete (done[i].msg, and whether each was the signalled
 * WR itself: implicit = last_seq != w). Returns how many were written; call again while
 * it returns max. */
size_t cap_track_complete(cap_track_t *t, uint64_t w, cap_pending_t *done, int *implicit,
                          size_t max);

#endif
