#!/usr/bin/env python3
"""test_chrome_json.py - `hintsim trace convert --to chrome-json` against the Trace Event Format
(the protobuf export, `--to perfetto`, is test_perfetto_pb.py's).

For every sample trace (and a small CSV with paths, a path switch, an unknown completion,
an error and two QPs), convert to trace-event JSON and to CSV with the hintsim under test,
then check, independently of the writer:
  - strict JSON (no NaN/Infinity), an object with a traceEvents array, each event of a
    phase the format defines with the fields that phase needs (pid, ts, cat/name/id for
    async events, args for counters and metadata);
  - every CSV record is one slice: a "b" and an "e" with one id, on the track
    "QP <qp> <path>", at its post and its completion (ts in us, exact to the ns), args size,
    qp, path and record index; unknown completions are "n" instants;
  - each QP's in-flight counter, read at the last event of each timestamp, equals the
    records posted and not yet completed then, counted from the CSV;
  - a record flagged as a path switch gives an instant "path switch" on its QP's thread.
Usage: test_chrome_json.py HINTSIM SRC_DIR.  Exit 0 when every check passes.
"""
import bisect
import csv
import json
import os
import subprocess
import sys
import tempfile

PHASES = {"M", "b", "e", "n", "C", "i"}
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(hs, *args):
    subprocess.run([hs, *args], check=True, stdout=subprocess.DEVNULL)


def read_csv(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.DictReader(lines))
    recs = []
    for i, r in enumerate(rows):
        flags = int(r["flags"], 0)
        done = r["t_done_ns"]
        recs.append({
            "i": i, "post": int(r["t_post_ns"]),
            "done": None if done in ("", "unknown") else int(done),
            "size": int(r["size_bytes"]), "qp": int(r["qp"]), "flags": flags,
            "path": {1: "LL", 2: "BW"}.get(flags & 3, "unknown"),
        })
    return recs


def queue_depth(recs, qp):
    """t (ns) -> QP qp's messages with a known completion posted at or before t and not
    completed by t, counted from the CSV's records."""
    known = [r for r in recs if r["qp"] == qp and r["done"] is not None]
    posts, dones = sorted(r["post"] for r in known), sorted(r["done"] for r in known)
    return lambda t: bisect.bisect_right(posts, t) - bisect.bisect_right(dones, t)


def reject_constant(name):
    raise ValueError("non-finite JSON number " + name)


def ns(ts):
    """An event's ts (us, three decimals) in ns, exactly."""
    return round(ts * 1000)


def check_schema(name, doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail(f"{name}: no traceEvents array")
        return []
    evs = doc["traceEvents"]
    for k, e in enumerate(evs):
        ph = e.get("ph")
        where = f"{name}: event {k}"
        if ph not in PHASES:
            fail(f"{where}: phase {ph!r}")
            continue
        if not isinstance(e.get("pid"), int):
            fail(f"{where}: pid")
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name") or "name" not in e.get("args", {}):
                fail(f"{where}: metadata")
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            fail(f"{where}: ts")
        if ph in "ben" and not all(isinstance(e.get(f), str) for f in ("cat", "name", "id")):
            fail(f"{where}: async event without cat/name/id")
        if ph == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            fail(f"{where}: counter args")
        if ph == "i" and e.get("s") not in ("t", "p", "g"):
            fail(f"{where}: instant scope")
    return evs


def check_slices(name, evs, recs):
    begins, ends, instants = {}, {}, {}
    for e in evs:
        ph = e.get("ph")
        if ph in ("b", "e", "n"):
            table = {"b": begins, "e": ends, "n": instants}[ph]
            key = (e["cat"], e["id"])
            if key in table:
                fail(f"{name}: two '{ph}' events for {key}")
            table[key] = e
    if len(begins) != len(ends) or set(begins) != set(ends):
        fail(f"{name}: {len(begins)} begins, {len(ends)} ends, unpaired")
    known = [r for r in recs if r["done"] is not None]
    if len(begins) != len(known) or len(instants) != len(recs) - len(known):
        fail(f"{name}: {len(begins)} slices and {len(instants)} instants for "
             f"{len(known)} + {len(recs) - len(known)} records")
    by_record = {}
    for key, e in list(begins.items()) + list(instants.items()):
        by_record[e.get("args", {}).get("record")] = (key, e)
    for r in recs:
        if r["i"] not in by_record:
            fail(f"{name}: record {r['i']} has no event")
            continue
        key, b = by_record[r["i"]]
        a = b["args"]
        track = f"QP {r['qp']} {r['path']}"
        if b["name"] != track or b["cat"] != r["path"]:
            fail(f"{name}: record {r['i']} on track {b['name']!r}/{b['cat']!r}, not {track!r}")
        if ns(b["ts"]) != r["post"]:
            fail(f"{name}: record {r['i']} starts at {b['ts']} us, posted at {r['post']} ns")
        if (a.get("size"), a.get("qp"), a.get("path")) != (r["size"], r["qp"], r["path"]):
            fail(f"{name}: record {r['i']} args {a}")
        if r["done"] is None:
            if b["ph"] != "n":
                fail(f"{name}: record {r['i']}: unknown completion drawn as {b['ph']}")
        elif key in ends and ns(ends[key]["ts"]) != r["done"]:
            fail(f"{name}: record {r['i']} ends at {ends[key]['ts']} us, done at {r['done']} ns")
        if len(FAILS) > 20:
            return


def check_counters(name, evs, recs):
    last = {}  # (qp name, ts) -> value of the last event at that ts
    for e in evs:
        if e.get("ph") == "C":
            last[(e["name"], e["ts"])] = e["args"]["messages"]
    counted = 0
    for qp in {r["qp"] for r in recs}:
        depth = queue_depth(recs, qp)
        for (cname, ts), v in last.items():
            if cname != f"QP {qp} in flight":
                continue
            want = depth(ns(ts))
            counted += 1
            if v != want:
                fail(f"{name}: {cname} at {ts} us = {v}, the CSV says {want}")
                return
    if counted == 0 and any(r["done"] is not None for r in recs):
        fail(f"{name}: no in-flight counter")


def check_switches(name, evs, recs):
    want = sorted((r["qp"] + 1, r["post"]) for r in recs if r["flags"] & 0x80)
    got = sorted((e["tid"], ns(e["ts"])) for e in evs
                 if e.get("ph") == "i" and e.get("name") == "path switch")
    if got != want:
        fail(f"{name}: path switches {got[:5]}, want {want[:5]}")


def check_one(hs, src, tmp):
    name = os.path.basename(src)
    out_json = os.path.join(tmp, name + ".json")
    out_csv = os.path.join(tmp, name + ".csv")
    run(hs, "trace", "convert", src, "-o", out_json, "--to", "chrome-json")
    run(hs, "trace", "convert", src, "-o", out_csv)
    with open(out_json) as f:
        doc = json.load(f, parse_constant=reject_constant)
    recs = read_csv(out_csv)
    evs = check_schema(name, doc)
    check_slices(name, evs, recs)
    check_counters(name, evs, recs)
    check_switches(name, evs, recs)
    procs = [e for e in evs if e.get("ph") == "M" and e.get("name") == "process_name"]
    if len(procs) != 1 or procs[0]["args"]["name"] != src:
        fail(f"{name}: process name {procs}")
    return len(recs)


MIXED_CSV = """t_post_ns,t_done_ns,size_bytes,qp,opcode,status,flags
100,900,64,0,send,0,0x0009
150,,128,0,write,0,0x0001
200,5000,65536,3,write,0,0x0002
210,4000,8192,3,write,0,0x0082
4000,4500,64,0,send,12,0x0029
4100,4100,32,3,write,0,0x0081
"""


def main():
    hs, srcdir = sys.argv[1], sys.argv[2]
    samples = os.path.join(srcdir, "traces", "samples")
    names = sorted(n for n in os.listdir(samples) if n.endswith(".hst"))
    with tempfile.TemporaryDirectory() as tmp:
        mixed = os.path.join(tmp, "mixed.csv")
        with open(mixed, "w") as f:
            f.write(MIXED_CSV)
        total = 0
        for n in names:
            total += check_one(hs, os.path.join(samples, n), tmp)
        total += check_one(hs, mixed, tmp)
        # .json alone means chrome-json; a name that says another format is refused
        j = os.path.join(tmp, "by-ext.json")
        run(hs, "trace", "convert", mixed, "-o", j)
        with open(j) as f:
            if "traceEvents" not in json.load(f):
                fail(".json output is not a trace-event file")
        rc = subprocess.run([hs, "trace", "convert", mixed, "-o", os.path.join(tmp, "x.csv"),
                             "--to", "jsonl"], stderr=subprocess.DEVNULL).returncode
        if rc != 2:
            fail(f"--to jsonl with a .csv name: exit {rc}, want 2")
        rc = subprocess.run([hs, "trace", "convert", mixed, "-o", j, "--to", "perfetto"],
                            stderr=subprocess.DEVNULL).returncode
        if rc != 2:
            fail(f"--to perfetto (protobuf) with a .json name: exit {rc}, want 2")
    if len(names) < 8:
        fail(f"only {len(names)} samples")
    checks = len(names) + 4
    print(f"{total} records in {len(names) + 1} traces checked")
    print(f"{checks - min(len(FAILS), checks)} passed, {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
