#!/usr/bin/env python3
"""test_perfetto_pb.py - `hintsim trace convert --to perfetto` read back by a protobuf
wire-format decoder of its own (no protobuf library, no code shared with the writer).

Perfetto's trace_processor is not in the package registries this project installs from, so
the structure a Perfetto reader relies on is checked here, for every sample trace and a small
CSV with paths, a path switch, an unknown completion, an error and two QPs, against the CSV
of the same trace (written by the hintsim under test):
  - the file is a Trace: only field 1 (packet), length-delimited, to the last byte;
  - one packet sequence (trusted_packet_sequence_id): the first packet clears the incremental
    state and carries the interned annotation names (and the clock default), every later one
    says it needs that state; timestamps never go back;
  - the clock: the trace's clock where Perfetto has it built in (ClockSnapshot's primary
    clock and TracePacketDefaults.timestamp_clock_id), else none;
  - tracks: unique uuids, a descriptor before any use and before any child, one process
    named after the source, per QP a track "QP q" and a counter track "QP q in flight"
    (CounterDescriptor) under it, slices only on tracks "QP q PATH" under "QP q";
  - every TYPE_SLICE_BEGIN has a TYPE_SLICE_END on the same track (a stack per track), and
    each record of the CSV is exactly one slice from its post to its completion on its QP's
    and path's track, with its size, qp, path and record index, or an instant when its
    completion is not known;
  - each QP's counter, read at the last event of each timestamp, equals the messages posted
    and not yet completed then, counted from the CSV;
  - an instant "path switch ..." on track "QP q" at each record flagged TRACE_F_SWITCH.
With protoc installed (Debian's protobuf-compiler), `protoc --decode_raw` must read the file
too and find as many packets; and where HINTSIM_PERFETTO_PROTOS names a checkout of Perfetto's
source (the folder holding protos/perfetto/trace/trace.proto), `protoc --decode` with
Perfetto's own schema must read it with no field it does not know.
Usage: test_perfetto_pb.py HINTSIM SRC_DIR.  Exit 0 when every check passes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_chrome_json import MIXED_CSV, queue_depth, read_csv  # noqa: E402  (CSV side)

FAILS = []
CLOCKS = {"CLOCK_REALTIME": 1, "CLOCK_REALTIME_COARSE": 2, "CLOCK_MONOTONIC": 3,
          "CLOCK_MONOTONIC_COARSE": 4, "CLOCK_MONOTONIC_RAW": 5, "CLOCK_BOOTTIME": 6}
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


# ---- protobuf wire format ---------------------------------------------------------------

class Bad(Exception):
    pass


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise Bad(f"varint runs past the end at byte {i}")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
        if shift > 63:
            raise Bad(f"varint longer than 10 bytes at byte {i}")


def fields(b):
    """[(field, wire type, value)]: an int for varint/fixed, bytes for length-delimited."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if f == 0:
            raise Bad(f"field number 0 at byte {i}")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise Bad(f"wire type {wt} at byte {i}")
        if i > len(b):
            raise Bad("a field runs past the end of its message")
        out.append((f, wt, v))
    return out


def msg(b):
    """A message as {field: [values]}."""
    d = {}
    for f, _, v in fields(b):
        d.setdefault(f, []).append(v)
    return d


def one(d, f, default=None):
    v = d.get(f)
    return v[-1] if v else default


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# ---- the trace --------------------------------------------------------------------------

def read_packets(name, data):
    top = fields(data)
    if any(f != 1 or wt != 2 for f, wt, _ in top):
        fail(f"{name}: a top-level field other than Trace.packet")
    return [msg(v) for _, _, v in top]


def check_sequence(name, pkts, clock_id):
    """The sequence's state; returns the interned annotation names {iid: name}."""
    seqs = {one(p, 10) for p in pkts}
    if len(seqs) != 1 or not seqs.pop():
        fail(f"{name}: packets on sequences {sorted(map(str, {one(p, 10) for p in pkts}))}")
    first = pkts[0]
    if not one(first, 13, 0) & 1:
        fail(f"{name}: the first packet does not clear the incremental state")
    if any(not one(p, 13, 0) & 2 for p in pkts[1:]):
        fail(f"{name}: a later packet does not say it needs the incremental state")
    if any(12 in p or 59 in p for p in pkts[1:]):
        fail(f"{name}: interned data or defaults after the first packet")
    names = {}
    for entry in msg(one(first, 12, b"")).get(3, []):
        e = msg(entry)
        names[one(e, 1)] = one(e, 2, b"").decode()
    defaults_clock = one(msg(one(first, 59, b"")), 58)
    snaps = [msg(p[6][0]) for p in pkts if 6 in p]
    primary = one(snaps[0], 2) if snaps else None
    if clock_id:
        if defaults_clock != clock_id or primary != clock_id:
            fail(f"{name}: clock {clock_id} expected, defaults say {defaults_clock}, "
                 f"snapshot {primary}")
    elif defaults_clock is not None or snaps:
        fail(f"{name}: a clock ({defaults_clock}, {primary}) for a trace whose clock Perfetto "
             f"does not have")
    last = None
    for k, p in enumerate(pkts):
        t = one(p, 8)
        if t is None:
            continue
        if last is not None and t < last:
            fail(f"{name}: packet {k} at {t} ns after one at {last} ns")
            break
        last = t
    return names


def annotations(te, names):
    out = {}
    for a in te.get(4, []):
        d = msg(a)
        key = names.get(one(d, 1)) if 1 in d else one(d, 10, b"").decode()
        if 6 in d:
            out[key] = one(d, 6).decode()
        elif 3 in d:
            out[key] = one(d, 3)
        elif 2 in d:
            out[key] = bool(one(d, 2))
        elif 4 in d:
            out[key] = signed(one(d, 4))
    return out


def walk(name, pkts, names):
    """Tracks and events: (tracks by uuid, slices, instants, counters) with every structural
    rule checked on the way."""
    tracks, slices, instants, counters, open_ = {}, [], [], [], {}
    for k, p in enumerate(pkts):
        if 60 in p:
            td = msg(p[60][0])
            uuid, parent = one(td, 1), one(td, 5)
            if not uuid or uuid in tracks:
                fail(f"{name}: packet {k}: track uuid {uuid} missing or described twice")
            if parent is not None and parent not in tracks:
                fail(f"{name}: packet {k}: track {uuid}'s parent {parent} not described before")
            proc = msg(one(td, 3)) if 3 in td else None
            cnt = msg(one(td, 8)) if 8 in td else None
            tracks[uuid] = {"name": one(td, 2, b"").decode(), "parent": parent,
                            "process": proc, "counter": cnt}
        if 11 not in p:
            continue
        te, t = msg(p[11][0]), one(p, 8)
        typ, tu = one(te, 9), one(te, 11)
        if t is None or tu not in tracks:
            fail(f"{name}: packet {k}: event without a timestamp or on undescribed track {tu}")
            continue
        tr = tracks[tu]
        if (typ == COUNTER) != (tr["counter"] is not None):
            fail(f"{name}: packet {k}: event type {typ} on track {tr['name']!r}")
            continue
        ev = {"t": t, "track": tu, "name": one(te, 23, b"").decode(), "args": annotations(te, names)}
        if typ == SLICE_BEGIN:
            open_.setdefault(tu, []).append(ev)
        elif typ == SLICE_END:
            if not open_.get(tu):
                fail(f"{name}: packet {k}: slice end on {tr['name']!r} with no slice open")
                continue
            b = open_[tu].pop()
            b["end"] = t
            slices.append(b)
        elif typ == INSTANT:
            instants.append(ev)
        elif typ == COUNTER:
            ev["value"] = signed(one(te, 30, 0))
            counters.append(ev)
        else:
            fail(f"{name}: packet {k}: event type {typ}")
    left = sum(len(v) for v in open_.values())
    if left:
        fail(f"{name}: {left} slices begun and never ended")
    return tracks, slices, instants, counters


def check_tracks(name, tracks, src):
    procs = [u for u, t in tracks.items() if t["process"] is not None]
    if len(procs) != 1 or one(tracks[procs[0]]["process"], 6, b"").decode() != src:
        fail(f"{name}: process tracks {[tracks[u]['process'] for u in procs]}")
        return
    for u, t in tracks.items():
        parent = tracks.get(t["parent"], {})
        words = t["name"].split(" ")
        if t["process"] is not None:
            continue
        if words[0] != "QP" or len(words) < 2:
            fail(f"{name}: track {t['name']!r}")
        elif len(words) == 2 and t["parent"] != procs[0]:
            fail(f"{name}: track {t['name']!r} not under the process")
        elif len(words) > 2 and parent.get("name") != f"QP {words[1]}":
            fail(f"{name}: track {t['name']!r} under {parent.get('name')!r}")
        elif t["counter"] is not None and (t["name"] != f"QP {words[1]} in flight"
                                           or one(t["counter"], 3) != 2):
            fail(f"{name}: counter track {t['name']!r} {t['counter']}")


def check_messages(name, tracks, slices, instants, recs):
    by_record = {}
    for ev in slices + [i for i in instants if "record" in i["args"] and "to" not in i["args"]]:
        r = ev["args"].get("record")
        if r in by_record:
            fail(f"{name}: record {r} drawn twice")
        by_record[r] = ev
    if len(by_record) != len(recs):
        fail(f"{name}: {len(by_record)} messages drawn for {len(recs)} records")
    for r in recs:
        ev = by_record.get(r["i"])
        if ev is None:
            fail(f"{name}: record {r['i']} not drawn")
            continue
        a, track = ev["args"], tracks[ev["track"]]["name"]
        if track != f"QP {r['qp']} {r['path']}":
            fail(f"{name}: record {r['i']} on track {track!r}")
        if (a.get("size"), a.get("qp"), a.get("path")) != (r["size"], r["qp"], r["path"]):
            fail(f"{name}: record {r['i']} annotations {a}")
        if str(r["size"]) not in ev["name"]:
            fail(f"{name}: record {r['i']} named {ev['name']!r}")
        if ev["t"] != r["post"]:
            fail(f"{name}: record {r['i']} starts at {ev['t']}, posted at {r['post']}")
        if r["done"] is None and "end" in ev:
            fail(f"{name}: record {r['i']}: completion unknown, drawn as a slice")
        if r["done"] is not None and ev.get("end") != max(r["done"], r["post"]):
            fail(f"{name}: record {r['i']} ends at {ev.get('end')}, done at {r['done']}")
        if len(FAILS) > 20:
            return


def check_counters(name, tracks, counters, recs):
    last = {}
    for c in counters:
        last[(tracks[c["track"]]["name"], c["t"])] = c["value"]
    checked = 0
    for qp in {r["qp"] for r in recs}:
        depth = queue_depth(recs, qp)
        for (cname, t), v in last.items():
            if cname != f"QP {qp} in flight":
                continue
            want = depth(t)
            checked += 1
            if v != want:
                fail(f"{name}: {cname} at {t} ns = {v}, the CSV says {want}")
                return
    if checked == 0 and any(r["done"] is not None for r in recs):
        fail(f"{name}: no queue-depth counter")


def check_switches(name, tracks, instants, recs):
    want = sorted((f"QP {r['qp']}", r["post"]) for r in recs if r["flags"] & 0x80)
    got = sorted((tracks[i["track"]]["name"], i["t"]) for i in instants
                 if i["name"].startswith("path switch"))
    if got != want:
        fail(f"{name}: path switches {got[:5]}, want {want[:5]}")


def check_protoc(name, path, npackets):
    protoc = shutil.which("protoc")
    if not protoc:
        return 0
    with open(path, "rb") as f:
        p = subprocess.run([protoc, "--decode_raw"], stdin=f, capture_output=True, text=True)
    top = sum(1 for line in p.stdout.splitlines() if line == "1 {")
    if p.returncode != 0 or top != npackets:
        fail(f"{name}: protoc --decode_raw: exit {p.returncode}, {top} packets, want "
             f"{npackets}: {p.stderr.strip()[:200]}")
    protos = os.environ.get("HINTSIM_PERFETTO_PROTOS")
    if protos:
        with open(path, "rb") as f:
            p = subprocess.run([protoc, "-I", protos, "--decode=perfetto.protos.Trace",
                                "protos/perfetto/trace/trace.proto"], stdin=f,
                               capture_output=True, text=True)
        unknown = [line for line in p.stdout.splitlines() if line.strip()[:1].isdigit()]
        top = sum(1 for line in p.stdout.splitlines() if line == "packet {")
        if p.returncode != 0 or unknown or top != npackets:
            fail(f"{name}: Perfetto's schema: exit {p.returncode}, {top} packets, fields it "
                 f"does not know: {unknown[:3]} {p.stderr.strip()[:200]}")
    return 1


def check_one(hs, src, tmp):
    name = os.path.basename(src)
    out_pb, out_csv = os.path.join(tmp, name + ".pftrace"), os.path.join(tmp, name + ".csv")
    subprocess.run([hs, "trace", "convert", src, "-o", out_pb, "--to", "perfetto"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([hs, "trace", "convert", src, "-o", out_csv], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out_csv) as f:
        head = f.readline()
    hdr = json.loads(head.split(" ", 3)[3]) if head.startswith("# hintsim-trace") else {}
    recs = read_csv(out_csv)
    with open(out_pb, "rb") as f:
        data = f.read()
    try:
        pkts = read_packets(name, data)
        names = check_sequence(name, pkts, CLOCKS.get(hdr.get("clock_source")))
        tracks, slices, instants, counters = walk(name, pkts, names)
    except Bad as e:
        fail(f"{name}: not protobuf: {e}")
        return len(recs), 0
    check_tracks(name, tracks, src)
    check_messages(name, tracks, slices, instants, recs)
    check_counters(name, tracks, counters, recs)
    check_switches(name, tracks, instants, recs)
    return len(recs), check_protoc(name, out_pb, len(pkts))


MONOTONIC_CSV = '# hintsim-trace v1 {"clock_source":"CLOCK_MONOTONIC"}\n' + MIXED_CSV


def main():
    hs, srcdir = sys.argv[1], sys.argv[2]
    samples = os.path.join(srcdir, "traces", "samples")
    names = sorted(n for n in os.listdir(samples) if n.endswith(".hst"))
    total = protoc = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [os.path.join(samples, n) for n in names]
        for base, text in (("mixed.csv", MIXED_CSV), ("monotonic.csv", MONOTONIC_CSV)):
            inputs.append(os.path.join(tmp, base))
            with open(inputs[-1], "w") as f:
                f.write(text)
        for src in inputs:
            n, p = check_one(hs, src, tmp)
            total, protoc = total + n, protoc + p
    if len(names) < 8:
        fail(f"only {len(names)} samples")
    print(f"{total} records in {len(inputs)} traces checked"
          + (f", {protoc} also read by protoc --decode_raw" if protoc else ", no protoc here"))
    print(f"{len(inputs) - min(len(FAILS), len(inputs))} passed, {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
