#!/usr/bin/env python3
"""png_colors.py [--enough N] IMAGE.png RRGGBB...: how many pixels of each
colour the image holds (exactly that colour), one "RRGGBB N" line each;
with --enough, reading stops once every colour has N (top to bottom).
Reads 8-bit RGB/RGBA PNGs, non-interlaced, as headless Chromium writes
them; stdlib only."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: 8-bit RGB(A), non-interlaced PNGs only")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        yield bytes(line), bpp
        prev = line


args = sys.argv[1:]
enough = 0
if args[:1] == ["--enough"]:
    enough, args = int(args[1]), args[2:]
want = {bytes.fromhex(c.lstrip("#")): 0 for c in args[1:]}
for row, bpp in rows(args[0]):
    for i in range(0, len(row), bpp):
        px = row[i:i + 3]
        if px in want:
            want[px] += 1
    if enough and min(want.values()) >= enough:
        break
for c, n in want.items():
    print(c.hex(), n)
