#!/usr/bin/env python3
"""Rewrite an x86_64 ELF's xray_instr_map from the PC-relative layout (entry
version 2, what clang 14 writes) to the older absolute layout (version 1),
for a non-PIE binary, so the importer's absolute-address path can be tested
against llvm-xray with a real program.   abs_map.py IN OUT
"""
import struct
import sys

def main(src, dst):
    d = bytearray(open(src, "rb").read())
    if d[:4] != b"\x7fELF" or d[4] != 2:
        sys.exit("abs_map: %s is not a 64-bit ELF" % src)
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        name, typ, flags, addr, off, size = sh(i)[:6]
        end = d.index(b"\0", stroff + name)
        if d[stroff + name:end] != b"xray_instr_map":
            continue
        for e in range(0, size, 32):
            p = off + e
            sled, fn = struct.unpack_from("<qq", d, p)
            if d[p + 18] < 2:
                sys.exit("abs_map: entry already absolute")
            struct.pack_into("<QQ", d, p, (addr + e + sled) & (2**64 - 1),
                             (addr + e + 8 + fn) & (2**64 - 1))
            d[p + 18] = 1
        open(dst, "wb").write(d)
        return 0
    sys.exit("abs_map: no xray_instr_map in %s" % src)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
