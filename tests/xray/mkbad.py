#!/usr/bin/env python3
"""Write malformed XRay logs for tests/integ/xray_bad.sh.   mkbad.py DIR

Each case is a small synthetic log (layouts from shared/xray-format.md) with
one fault at a known byte. Prints one line per case:
    FILE|MESSAGE REGEX|EVENTS KEPT
where MESSAGE REGEX must match the importer's one-line error (it names the
byte offset) and EVENTS KEPT is how many events the data before the fault
gives (function slices + custom events).
"""
import os
import struct
import sys

TID, PID, F = 4242, 4240, 1000000000


def hdr(version, mode, extra=0):
    return struct.pack("<HHIQQQ", version, mode, 3, F, extra, 0)


def basic_fn(kind, fid, tsc, tid=TID, pid=PID, pad=0):
    return struct.pack("<HBBiQIIQ", 0, 0, kind, fid, tsc, tid, pid, pad)


def basic_arg(fid, val, tid=TID, pid=PID):
    return struct.pack("<HHiIIQQ", 1, 0, fid, tid, pid, val, 0)


def meta(kind, data=b""):
    return bytes([kind << 1 | 1]) + data.ljust(15, b"\0")


def fdr_fn(action, fid, delta):
    return struct.pack("<II", fid << 4 | action << 1, delta)


def fdr_buf(body, tid=TID):
    pre = (meta(0, struct.pack("<i", tid)) + meta(4, struct.pack("<QI", 100, 5)) +
           meta(9, struct.pack("<i", PID)) + meta(2, struct.pack("<HQ", 0, 10**18)))
    b = pre + body
    return meta(7, struct.pack("<Q", len(b))) + b


GOOD_BASIC = [basic_fn(0, 1, 10**18 + 100), basic_fn(0, 2, 10**18 + 200),
              basic_fn(1, 2, 10**18 + 300), basic_fn(1, 1, 10**18 + 400)]
GOOD_FDR = fdr_fn(0, 1, 5) + fdr_fn(0, 2, 5) + fdr_fn(1, 2, 5) + fdr_fn(1, 1, 5)


def cases():
    b = b"".join(GOOD_BASIC)
    yield "short-header", hdr(3, 0)[:20], r"byte 20: truncated header", 0
    yield "basic-trunc", hdr(3, 0) + b + basic_fn(0, 3, 10**18 + 500)[:17], \
        r"byte 160: truncated record", 2
    yield "basic-version", hdr(7, 0) + b, r"byte 0: unsupported basic-mode log version 7", 0
    yield "fdr-version", hdr(6, 1, 16384) + fdr_buf(GOOD_FDR), r"byte 0: unsupported FDR log version 6", 0
    yield "not-xray", hdr(3, 9) + b, r"byte 2: not an XRay binary log", 0
    yield "basic-reserved", hdr(3, 0) + b + basic_fn(0, 3, 10**18 + 500, pad=0xdeadbeef), \
        r"byte 160: garbage in the reserved bytes", 2
    yield "basic-entry-type", hdr(3, 0) + b[:64] + struct.pack("<HBBiQIIQ", 0, 0, 9, 1, 1, 1, 1, 0), \
        r"byte 96: unknown function entry type 9", 2
    yield "basic-arg-first", hdr(3, 0) + basic_arg(1, 7) + b, \
        r"byte 32: argument record without an ENTER_ARG", 0
    yield "basic-arg-mismatch", hdr(3, 0) + basic_fn(3, 1, 10**18) + basic_arg(2, 7), \
        r"byte 64: argument record for function 2", 1
    good = fdr_buf(GOOD_FDR)
    over = bytearray(good)
    struct.pack_into("<Q", over, 1, len(good) - 16 + 64)
    yield "fdr-extents-past-end", hdr(5, 1, 16384) + good + bytes(over), \
        r"byte %d: buffer extents of [0-9]+ bytes run past the end" % (32 + len(good)), 2
    short = bytearray(good)
    struct.pack_into("<Q", short, 1, len(good) - 16 - 12)	# boundary inside a record
    yield "fdr-extents-inconsistent", hdr(5, 1, 16384) + good + bytes(short) + good, \
        r"byte %d: function record cut short" % \
        (32 + 2 * len(good) - 16), 4
    yield "fdr-extents-huge", hdr(5, 1, 16384) + meta(7, struct.pack("<Q", 2**63)) + good[16:], \
        r"byte 32: buffer extents of 9223372036854775808 bytes run past", 0
    yield "fdr-trunc-record", hdr(5, 1, 16384) + good[:-3], \
        r"byte 32: buffer extents of [0-9]+ bytes run past the end", 0
    yield "fdr-bad-meta", hdr(5, 1, 16384) + fdr_buf(GOOD_FDR[:16] + meta(12)), \
        r"byte %d: unknown FDR metadata record kind 12" % (32 + 16 * 5 + 16), 2
    yield "fdr-bad-action", hdr(5, 1, 16384) + fdr_buf(GOOD_FDR[:16] + fdr_fn(6, 1, 1)), \
        r"byte %d: unknown FDR function record action 6" % (32 + 16 * 5 + 16), 2
    yield "fdr-custom-size", hdr(5, 1, 16384) + fdr_buf(GOOD_FDR[:16] + meta(5, struct.pack("<ii", -4, 1))), \
        r"custom event with size -4", 2
    yield "fdr-no-newbuffer", hdr(5, 1, 16384) + meta(7, struct.pack("<Q", 16)) + meta(3, b"\1"), \
        r"byte 48: buffer does not start with a NewBuffer record", 0
    yield "fdr-v1-bufsize", hdr(1, 1, 8) + good[16:], r"byte 16: FDR v1 buffer size 8", 0


def main(d):
    os.makedirs(d, exist_ok=True)
    for name, data, msg, kept in cases():
        p = os.path.join(d, "xray-log.bad-%s.XXXXXX" % name)
        open(p, "wb").write(data)
        print("%s|%s|%d" % (p, msg, kept))


if __name__ == "__main__":
    main(sys.argv[1])
