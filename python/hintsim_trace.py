"""hintsim_trace - read hintsim .hst traces into numpy arrays (numpy only, one file).

    import hintsim_trace as ht
    t = ht.read("kv.hst")          # checks every CRC, length and sequence number
    t.header["workload"]           # the JSON header, as a dict
    r = t.records                  # numpy structured array, one row per work request
    lat = r["t_done_ns"] - r["t_post_ns"]          # (mask ht.TIME_UNKNOWN first)
    ll = (r["flags"] & ht.F_PATH_MASK) == ht.F_PATH_LL

The byte layout is traces/FORMAT.md (version 1): a 32-byte file header, the JSON header,
CRC-protected blocks of 32-byte little-endian records and an end block with the totals.
The reader makes the checks FORMAT.md lists, in file order, and raises TraceError naming
the file, the block and its byte offset at the first failure, as `hintsim trace validate`
does; it does not check record semantics (use `hintsim trace validate` for those).
Records are copied once out of the file's blocks (np.frombuffer views over a memory map),
so reading costs about one memcpy plus one zlib CRC-32 per byte.

Run as a script it prints a one-line summary per file: `python3 hintsim_trace.py T.hst`.
"""
import json
import mmap
import os
import stat
import struct
import sys
import zlib

import numpy as np

FORMAT_VERSION = 1
FILE_MAGIC = b"\x89HST\r\n\x1a\n"
BLOCK_MAGIC = b"HSB1"
TAIL_MAGIC = b"HSBE"
FILE_HDR_BYTES = 32
JSON_MAX_BYTES = 1 << 20
BLK_HDR_BYTES = 32
BLK_OVERHEAD = 40
BLK_RECORDS, BLK_END = 1, 2
BLK_MAX_RECORDS = 65536
BLK_MAX_BYTES = BLK_OVERHEAD + BLK_MAX_RECORDS * 32
END_PAYLOAD_BYTES = 24

#: t_done_ns of a work request whose completion is not known (unsignalled).
TIME_UNKNOWN = np.uint64(0xFFFFFFFFFFFFFFFF)

# Record flags (trace.h TRACE_F_*).
F_PATH_MASK = 0x0003
F_PATH_LL = 0x0001
F_PATH_BW = 0x0002
F_INLINE = 0x0004
F_SIGNALED = 0x0008
F_COLD = 0x0010
F_ERROR = 0x0020
F_IMPLICIT = 0x0040
F_SWITCH = 0x0080

#: opcode numbers and the names the CSV/JSONL forms use.
OPCODES = {0: "send", 1: "send_imm", 2: "write", 3: "write_imm", 4: "read", 5: "atomic",
           15: "other"}

#: One record, 32 bytes, as on disk (FORMAT.md "Record").
RECORD_DTYPE = np.dtype([
    ("t_post_ns", "<u8"), ("t_done_ns", "<u8"), ("size_bytes", "<u8"), ("qp", "<u4"),
    ("opcode", "u1"), ("status", "u1"), ("flags", "<u2"),
])
assert RECORD_DTYPE.itemsize == 32

_FILE_HDR = struct.Struct("<8sIIIII")       # magic, version, json_len, json_crc, flags, reserved
_BLK_HDR = struct.Struct("<4sIIIQII")       # magic, type, total_len, count, seq, payload_crc, hdr_crc
_BLK_TAIL = struct.Struct("<I4s")
_END = struct.Struct("<QQQ")                # dropped, records, blocks


class TraceError(ValueError):
    """A file that is not a valid version-1 .hst trace; the message names where."""


class Trace:
    """A trace read from a file: header (dict), records (RECORD_DTYPE array), dropped
    (the end block's count, authoritative), blocks (record blocks read), path."""

    def __init__(self, path, header, records, dropped, blocks):
        self.path = path
        self.header = header
        self.records = records
        self.dropped = dropped
        self.blocks = blocks

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        return (f"Trace({self.path!r}, {len(self.records)} records, "
                f"workload={self.header.get('workload', '')!r}, dropped={self.dropped})")

    def latency_ns(self):
        """Completion - post per record as float64, NaN where the completion is unknown."""
        r = self.records
        known = r["t_done_ns"] != TIME_UNKNOWN
        out = np.full(len(r), np.nan)
        out[known] = (r["t_done_ns"][known] - r["t_post_ns"][known]).astype(np.float64)
        return out

    def path_names(self):
        """'LL', 'BW' or 'unknown' per record."""
        names = np.array(["unknown", "LL", "BW", "both"])
        return names[self.records["flags"] & F_PATH_MASK]


def _no_duplicates(path):
    def hook(pairs):
        seen = {}
        for k, v in pairs:
            if k in seen:
                raise TraceError(f"{path}: JSON header: key {k!r} given twice")
            seen[k] = v
        return seen
    return hook


def _read_header(path, buf):
    if len(buf) < FILE_HDR_BYTES:
        raise TraceError(f"{path}: truncated: {len(buf)} bytes, the file header alone is "
                         f"{FILE_HDR_BYTES}")
    magic, version, json_len, json_crc, _flags, _res = _FILE_HDR.unpack_from(buf, 0)
    hdr_crc = struct.unpack_from("<I", buf, 28)[0]
    if magic != FILE_MAGIC:
        raise TraceError(f"{path}: bad magic at byte offset 0: not a hintsim trace")
    crc_ok = zlib.crc32(buf[0:28]) == hdr_crc
    if version != FORMAT_VERSION and crc_ok:
        raise TraceError(f"{path}: format version {version} at byte offset 8; this reader "
                         f"reads version {FORMAT_VERSION}")
    if not crc_ok:
        raise TraceError(f"{path}: file header CRC 0x{hdr_crc:08x} does not match its content "
                         f"(computed 0x{zlib.crc32(buf[0:28]):08x}) at byte offset 28")
    if not 1 <= json_len <= JSON_MAX_BYTES:
        raise TraceError(f"{path}: JSON length {json_len} at byte offset 12 out of range "
                         f"(1..{JSON_MAX_BYTES})")
    if FILE_HDR_BYTES + json_len > len(buf):
        raise TraceError(f"{path}: truncated in the JSON header at byte offset {FILE_HDR_BYTES}")
    raw = bytes(buf[FILE_HDR_BYTES:FILE_HDR_BYTES + json_len])
    if zlib.crc32(raw) != json_crc:
        raise TraceError(f"{path}: JSON header at byte offset {FILE_HDR_BYTES} ({json_len} "
                         f"bytes): CRC 0x{json_crc:08x} does not match its content (computed "
                         f"0x{zlib.crc32(raw):08x}): header damaged")
    try:
        text = raw.decode("utf-8")
        header, end = json.JSONDecoder(object_pairs_hook=_no_duplicates(path)).raw_decode(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TraceError(f"{path}: JSON header at byte offset {FILE_HDR_BYTES}: {e}") from None
    if text[end:].strip(" \t\r\n"):
        raise TraceError(f"{path}: JSON header: data after the object at JSON offset {end}")
    if not isinstance(header, dict):
        raise TraceError(f"{path}: JSON header is not an object")
    if header.get("clock_unit", "ns") != "ns":
        raise TraceError(f"{path}: JSON header: clock_unit {header['clock_unit']!r}, not 'ns'")
    return header, FILE_HDR_BYTES + ((json_len + 7) & ~7)


def _block_lengths_ok(btype, total_len, count):
    """None when the header's type/length/count agree, else why not."""
    if btype == BLK_RECORDS:
        if not 1 <= count <= BLK_MAX_RECORDS:
            return f"record count {count} out of range (1..{BLK_MAX_RECORDS})"
        want = BLK_OVERHEAD + 32 * count
    elif btype == BLK_END:
        if count != 0:
            return f"end block with record count {count}, expected 0"
        want = BLK_OVERHEAD + END_PAYLOAD_BYTES
    else:
        if not BLK_OVERHEAD <= total_len <= BLK_MAX_BYTES or total_len % 8:
            return f"block length {total_len} of unknown block type {btype} is implausible"
        return None
    if total_len != want:
        return f"block length {total_len} does not match its record count {count} (expected {want})"
    return None


def _walk_blocks(path, buf, off, check_crc):
    """Yield (payload offset, count) of each record block; return (dropped, blocks)."""
    seq = 0
    records = 0
    rec_blocks = 0
    size = len(buf)
    while True:
        where = f"{path}: block {seq} at byte offset {off}"
        if off == size:
            raise TraceError(f"{where}: truncated: the file ends here without an end block "
                             f"({records} records read)")
        if size - off < BLK_HDR_BYTES:
            raise TraceError(f"{where}: truncated mid-block: {size - off} of {BLK_HDR_BYTES} "
                             f"bytes present")
        magic, btype, total_len, count, bseq, pcrc, hcrc = _BLK_HDR.unpack_from(buf, off)
        if magic != BLOCK_MAGIC:
            raise TraceError(f"{where}: bad block magic {magic!r} (expected b'HSB1')")
        if zlib.crc32(buf[off:off + 28]) != hcrc:
            raise TraceError(f"{where}: block header CRC 0x{hcrc:08x} does not match its content")
        why = _block_lengths_ok(btype, total_len, count)
        if why:
            raise TraceError(f"{where}: {why}")
        if bseq != seq:
            raise TraceError(f"{where}: sequence number {bseq}, expected {seq}: blocks missing "
                             f"or out of order")
        if size - off < total_len:
            raise TraceError(f"{where}: truncated mid-block: {size - off} of {total_len} bytes "
                             f"present")
        plen = total_len - BLK_OVERHEAD
        tail_len, tail_magic = _BLK_TAIL.unpack_from(buf, off + total_len - 8)
        if tail_len != total_len or tail_magic != TAIL_MAGIC:
            raise TraceError(f"{where}: block tail (length {tail_len}, magic {tail_magic!r}) "
                             f"does not match the header (length {total_len})")
        p0 = off + BLK_HDR_BYTES
        if check_crc and zlib.crc32(buf[p0:p0 + plen]) != pcrc:
            raise TraceError(f"{where}: payload CRC 0x{pcrc:08x} does not match: record data "
                             f"damaged")
        if btype == BLK_END:
            dropped, end_records, end_blocks = _END.unpack_from(buf, p0)
            if end_blocks >= bseq + 1 or end_records > end_blocks * BLK_MAX_RECORDS:
                raise TraceError(f"{where}: end block counts ({end_records} records in "
                                 f"{end_blocks} blocks) are inconsistent with its sequence "
                                 f"number {bseq}")
            if end_records != records or end_blocks != rec_blocks:
                raise TraceError(f"{where}: end block says {end_records} records in "
                                 f"{end_blocks} blocks, the file holds {records} in {rec_blocks}")
            if off + total_len != size:
                raise TraceError(f"{path}: unexpected data after the end block at byte offset "
                                 f"{off + total_len}")
            return dropped, rec_blocks
        if btype == BLK_RECORDS:
            yield p0, count
            records += count
            rec_blocks += 1
        seq += 1
        off += total_len


def _collect(path, buf, off, check_crc):
    spans = []
    walk = _walk_blocks(path, buf, off, check_crc)
    while True:
        try:
            spans.append(next(walk))
        except StopIteration as stop:
            dropped, blocks = stop.value
            break
    out = np.empty(sum(c for _, c in spans), dtype=RECORD_DTYPE)
    k = 0
    for p0, count in spans:
        out[k:k + count] = np.frombuffer(buf, dtype=RECORD_DTYPE, count=count, offset=p0)
        k += count
    return out, dropped, blocks


def read(path, check_crc=True):
    """Read a whole .hst file (a path, or '-' for standard input). Returns a Trace; raises
    TraceError on anything FORMAT.md calls damage, OSError when the file cannot be read.
    check_crc=False skips the payload CRCs (headers are always checked)."""
    if path == "-":
        data = sys.stdin.buffer.read()
        return _read_buffer("-", memoryview(data), check_crc)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:  # a pipe, a FIFO, empty
            return _read_buffer(path, memoryview(f.read()), check_crc)
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mm)
    try:
        return _read_buffer(path, view, check_crc)
    finally:
        view.release()
        mm.close()


def _read_buffer(path, buf, check_crc):
    header, off = _read_header(path, buf)
    records, dropped, blocks = _collect(path, buf, off, check_crc)
    return Trace(path, header, records, dropped, blocks)


def main(argv):
    if len(argv) < 2:
        print("usage: hintsim_trace.py FILE.hst ...", file=sys.stderr)
        return 2
    rc = 0
    for p in argv[1:]:
        try:
            t = read(p)
        except (TraceError, OSError) as e:
            print(f"hintsim_trace: {e}", file=sys.stderr)
            rc = 1
            continue
        lat = t.latency_ns()
        known = lat[~np.isnan(lat)]
        med = f"{np.median(known) / 1000:.3f} us" if len(known) else "n/a"
        print(f"{p}: {len(t)} records in {t.blocks} blocks, workload "
              f"{t.header.get('workload', '')!r}, dropped {t.dropped}, median latency {med}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
