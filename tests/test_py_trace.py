#!/usr/bin/env python3
"""test_py_trace.py - python/hintsim_trace.py against the C reader.

Every sample trace, plus one made from a CSV with unknown completions, several QPs, every
opcode, errors and path bits: read with the numpy reader, converted to CSV by the hintsim
under test, compared field by field (and the header key by key). Then damaged copies
(a payload byte, a block header byte, the JSON header, the version with and without a
valid CRC, a cut file, bytes after the end block, a missing block): the Python reader
must refuse exactly the files `hintsim trace validate` refuses, naming the same byte
offset where the C reader names one. Also a pipe ('-') and a trace of several blocks.
Usage: test_py_trace.py HINTSIM SRC_DIR.  Exit 77 (skip) without numpy.
"""
import csv
import io
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
except ImportError:
    print("numpy not installed (Debian: python3-numpy): skipped")
    sys.exit(77)

FAILS = []
PASSES = [0]


def check(cond, msg):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(msg)
        print("FAIL: " + msg, file=sys.stderr)


def csv_of(hs, src, tmp):
    out = os.path.join(tmp, os.path.basename(src) + ".csv")
    subprocess.run([hs, "trace", "convert", src, "-o", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        first = f.readline()
        rows = list(csv.DictReader(f))
    header = json.loads(first[len("# hintsim-trace v1 "):])
    return header, rows


def compare(ht, hs, src, tmp):
    name = os.path.basename(src)
    t = ht.read(src)
    header, rows = csv_of(hs, src, tmp)
    check(t.header == header, f"{name}: header differs: {t.header} vs {header}")
    r = t.records
    check(len(r) == len(rows), f"{name}: {len(r)} records, the CSV has {len(rows)}")
    opnames = {v: k for k, v in ht.OPCODES.items()}
    bad = 0
    for i, row in enumerate(rows[:len(r)]):
        done = int(row["t_done_ns"]) if row["t_done_ns"] != "" else int(ht.TIME_UNKNOWN)
        op = opnames.get(row["opcode"])
        op = int(row["opcode"]) if op is None else op
        want = (int(row["t_post_ns"]), done, int(row["size_bytes"]), int(row["qp"]), op,
                int(row["status"]), int(row["flags"], 16))
        got = tuple(int(r[f][i]) for f in r.dtype.names)
        if got != want:
            bad += 1
            if bad <= 3:
                check(False, f"{name}: record {i}: {got} vs the CSV's {want}")
    check(bad == 0, f"{name}: {bad} records differ")
    return t


def validate_rc(hs, path):
    p = subprocess.run([hs, "trace", "validate", path], capture_output=True, text=True)
    return p.returncode, p.stderr


def offset_in(msg):
    m = re.search(r"byte offset (\d+)", msg)
    return int(m.group(1)) if m else None


def damaged_copies(data, tmp):
    """(label, path) of damaged copies of a valid multi-block .hst file."""
    json_len = struct.unpack_from("<I", data, 12)[0]
    blk0 = 32 + ((json_len + 7) & ~7)
    total0 = struct.unpack_from("<I", data, blk0 + 8)[0]
    blk1 = blk0 + total0
    out = []

    def put(label, b):
        p = os.path.join(tmp, label + ".hst")
        with open(p, "wb") as f:
            f.write(bytes(b))
        out.append((label, p))

    b = bytearray(data); b[blk1 + 32 + 100] ^= 0x01; put("payload-bit", b)
    b = bytearray(data); b[blk1 + 12] ^= 0x01; put("block-header-bit", b)
    b = bytearray(data); b[32 + 3] ^= 0x20; put("json-bit", b)
    b = bytearray(data); b[0] = 0x88; put("magic", b)
    b = bytearray(data); struct.pack_into("<I", b, 8, 2); put("version-bad-crc", b)
    b = bytearray(data); struct.pack_into("<I", b, 8, 2)
    struct.pack_into("<I", b, 28, zlib.crc32(bytes(b[0:28]))); put("version-2", b)
    put("cut-mid-block", data[:blk1 + 1000])
    put("cut-at-block", data[:blk1])
    put("trailing-byte", data + b"\0")
    put("missing-block", data[:blk0] + data[blk1:])
    return out


MIXED_CSV = """t_post_ns,t_done_ns,size_bytes,qp,opcode,status,flags
100,900,64,0,send,0,0x0009
150,,128,0,write,0,0x0001
200,5000,65536,3,write_imm,0,0x0002
210,4000,8192,7,read,0,0x0082
4000,4500,64,0,send_imm,12,0x0029
4100,4100,32,3,atomic,0,0x0051
4200,,18446744073709551000,4294967295,other,255,0x0044
"""


def main():
    hs, srcdir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(srcdir, "python"))
    import hintsim_trace as ht

    samples = os.path.join(srcdir, "traces", "samples")
    names = sorted(n for n in os.listdir(samples) if n.endswith(".hst"))
    check(len(names) >= 8, f"only {len(names)} samples")
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            compare(ht, hs, os.path.join(samples, n), tmp)
        mixed_csv = os.path.join(tmp, "mixed.csv")
        with open(mixed_csv, "w") as f:
            f.write(MIXED_CSV)
        mixed = os.path.join(tmp, "mixed.hst")
        subprocess.run([hs, "trace", "convert", mixed_csv, "-o", mixed], check=True,
                       stdout=subprocess.DEVNULL)
        t = compare(ht, hs, mixed, tmp)
        check(np.isnan(t.latency_ns()[1]) and t.latency_ns()[0] == 800, "latency_ns")
        check(list(t.path_names()[:3]) == ["LL", "LL", "BW"], "path_names")

        # several blocks (the writer's 4096 records each) and a pipe
        big = os.path.join(tmp, "big.hst")
        subprocess.run([hs, "trace", "gen", "--workload", "burst", "--count", "20000",
                        "--seed", "5", "-o", big], check=True, stdout=subprocess.DEVNULL)
        tb = compare(ht, hs, big, tmp)
        check(tb.blocks == 5, f"big: {tb.blocks} blocks, 20000 records in 4096s make 5")
        with open(big, "rb") as f:
            data = f.read()
        p = subprocess.run([sys.executable, "-c",
                            "import sys; sys.path.insert(0, sys.argv[1]); import hintsim_trace as h;"
                            "t = h.read('-'); print(len(t), int(t.records['size_bytes'].sum()))",
                            os.path.join(srcdir, "python")], input=data, capture_output=True)
        check(p.stdout.split() == [b"20000", str(int(tb.records["size_bytes"].sum())).encode()],
              f"reading '-': {p.stdout!r} {p.stderr!r}")

        # damage: the Python reader refuses what the C reader refuses, at the same offset
        for label, path in damaged_copies(data, tmp):
            rc, err = validate_rc(hs, path)
            try:
                ht.read(path)
                perr = None
            except ht.TraceError as e:
                perr = str(e)
            check(rc == 1, f"{label}: hintsim trace validate exit {rc}, want 1")
            check(perr is not None, f"{label}: the Python reader accepted a damaged file")
            if perr is not None:
                check(path in perr, f"{label}: message does not name the file: {perr}")
                c_off, p_off = offset_in(err), offset_in(perr)
                if c_off is not None:
                    check(c_off == p_off, f"{label}: byte offset {p_off}, hintsim says {c_off}: "
                          f"{perr} / {err.strip()}")
        # the CRC of a payload is what catches a flipped bit (not a length check)
        bit = [p for l, p in damaged_copies(data, tmp) if l == "payload-bit"][0]
        check(len(ht.read(bit, check_crc=False)) == 20000, "check_crc=False reads the records")
    print(f"{PASSES[0]} passed, {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
