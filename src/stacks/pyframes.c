// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyframes.c - CPython frames in call stacks (--python). Where the
 * interpreter keeps its thread states and frames is not guessed: a helper
 * script runs in the very interpreter binary and finds each offset by
 * looking for known values (its own code object, thread ids, a second
 * thread's state) in its own memory through /proc/self/mem. BPF walks
 * _PyRuntime -> interpreter -> thread state (by native thread id) ->
 * frames with those offsets; here the records become frames
 * (function, file, line), the line decoded from the 3.11+ location table.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/hmap.h"
#include "pyframes.h"

static const char helper[] =
"import ctypes, os, sys, threading\n"
"api = ctypes.pythonapi\n"
"mem = open('/proc/self/mem', 'rb', buffering=0)\n"
"def rd(a, n=8):\n"
"    try:\n"
"        mem.seek(a); return mem.read(n)\n"
"    except (OSError, ValueError, OverflowError):\n"
"        return None\n"
"def ptr(a):\n"
"    b = rd(a) if a else None\n"
"    return int.from_bytes(b, 'little') if b and len(b) == 8 else None\n"
"def find(base, val, limit, step=8, size=8, skip=()):\n"
"    b = rd(base, limit) or b''\n"
"    for o in range(0, len(b) - size + 1, step):\n"
"        if o not in skip and int.from_bytes(b[o:o + size], 'little') == val:\n"
"            return o\n"
"    return None\n"
"out = {}\n"
"rt = ctypes.addressof(ctypes.c_char.in_dll(api, '_PyRuntime'))\n"
"start_code = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[23])\n"
"out['runtime_off'] = rt - start_code\n"
"api.PyInterpreterState_Get.restype = ctypes.c_void_p\n"
"api.PyThreadState_Get.restype = ctypes.c_void_p\n"
"interp = api.PyInterpreterState_Get()\n"
"ts_main = api.PyThreadState_Get()\n"
"out['interp_head'] = find(rt, interp, 1024)\n"
"box = {}\n"
"ev = threading.Event(); go = threading.Event()\n"
"def th():\n"
"    box['ts'] = api.PyThreadState_Get(); box['tid'] = threading.get_native_id(); ev.set(); go.wait()\n"
"t = threading.Thread(target=th); t.start(); ev.wait()\n"
"out['threads_head'] = find(interp, box['ts'], 8192)\n"
"out['ts_next'] = find(box['ts'], ts_main, 1024)\n"
"out['ts_tid'] = find(ts_main, threading.get_native_id(), 1024)\n"
"assert find(box['ts'], box['tid'], 1024) == out['ts_tid']\n"
"go.set(); t.join()\n"
"src = \"\\n\" * 7776 + \"def gpubpf_probe(fn):\\n    return fn(sys._getframe())\\n\"\n"
"ns = {'sys': sys}\n"
"exec(compile(src, '/gpubpf/probe.py', 'exec'), ns)\n"
"def walk(ts, o, k):\n"
"    # every read inline: a Python-level helper would be the current frame\n"
"    try:\n"
"        mem.seek(ts + o); p = int.from_bytes(mem.read(8), 'little')\n"
"        if k >= 0:\n"
"            mem.seek(p + k); p = int.from_bytes(mem.read(8), 'little')\n"
"        mem.seek(p); return p, mem.read(128)\n"
"    except (OSError, ValueError, OverflowError):\n"
"        return None, None\n"
"def scan(frame):\n"
"    me = walk.__code__; caller = sys._getframe().f_code\n"
"    ts = api.PyThreadState_Get()\n"
"    for o in range(0, 1024, 8):\n"
"        for k in (-1, 0, 8, 16, 24):\n"
"            q, fb = walk(ts, o, k)\n"
"            if not fb or len(fb) < 128: continue\n"
"            for j in range(0, 128, 8):\n"
"                if int.from_bytes(fb[j:j + 8], 'little') != id(me): continue\n"
"                for j2 in range(0, 128, 8):\n"
"                    q2 = int.from_bytes(fb[j2:j2 + 8], 'little')\n"
"                    if q2 and ptr(q2 + j) == id(caller):\n"
"                        # the probe's frame, still live: where is its instruction pointer\n"
"                        pc = ns['gpubpf_probe'].__code__\n"
"                        lo = id(pc) + (rd(id(pc), 1024) or b'').find(pc.co_code[:8])\n"
"                        fb2 = rd(ptr(q2 + j2), 128) or b''\n"
"                        ins = next((x for x in range(0, len(fb2) - 7, 8) if x != j and\n"
"                                    lo <= int.from_bytes(fb2[x:x + 8], 'little') < lo + len(pc.co_code)), None)\n"
"                        return o, k, j, j2, ins\n"
"    return None\n"
"o, k, j, j2, ins = ns['gpubpf_probe'](scan)\n"
"out.update(ts_cframe=o, cf_current=k, fr_code=j, fr_previous=j2, fr_instr=ins)\n"
"code = ns['gpubpf_probe'].__code__\n"
"cb = code.co_code\n"
"blob = rd(id(code), 1024 + len(cb))\n"
"out['co_code'] = blob.find(cb[:8]) if blob else None\n"
"out['co_name'] = find(id(code), id(code.co_name), 512)\n"
"out['co_filename'] = find(id(code), id(code.co_filename), 512)\n"
"out['co_linetable'] = find(id(code), id(code.co_linetable), 512)\n"
"out['co_firstlineno'] = find(id(code), 7777, 512, 4, 4)\n"
"for l in open('/proc/self/maps'):\n"
"    f = l.split()\n"
"    a, b = (int(x, 16) for x in f[0].split('-'))\n"
"    if a <= rt < b and len(f) > 5:\n"
"        out['runtime_in_exe'] = int(os.path.realpath(f[5]) == os.path.realpath(sys.executable))\n"
"s = 'gpubpf_probe_name'\n"
"out['str_data'] = (rd(id(s), 128) or b'').find(s.encode())\n"
"lt = code.co_linetable\n"
"out['bytes_data'] = (rd(id(lt), 128) or b'').find(lt) if len(lt) > 4 else None\n"
"out['version'] = sys.version_info[0] * 100 + sys.version_info[1]\n"
"for kk, v in out.items():\n"
"    print(kk, -999 if v is None else v)\n";

struct field {
	const char *key;
	size_t off;
	bool wide;
};

#define F(k) { #k, offsetof(struct gb_py_offsets, k), false }
static const struct field fields[] = {
	{ "runtime_off", offsetof(struct gb_py_offsets, runtime_off), true },
	F(interp_head), F(threads_head), F(ts_next), F(ts_tid), F(ts_cframe), F(cf_current),
	F(fr_code), F(fr_previous), F(fr_instr), F(co_code), F(co_name), F(co_filename),
	F(co_linetable), F(co_firstlineno), F(str_data), F(bytes_data),
};
#undef F

static int parse_line(struct gb_py_offsets *o, const char *key, long long v, unsigned *found)
{
	unsigned i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strcmp(fields[i].key, key))
			continue;
		if (v == -999)
			return -1;
		if (fields[i].wide)
			*(uint64_t *)((char *)o + fields[i].off) = (uint64_t)v;
		else
			*(int32_t *)((char *)o + fields[i].off) = (int32_t)v;
		*found |= 1u << i;
		return 0;
	}
	return 0;
}

int pyframes_offsets(const char *python, struct gb_py_offsets *o, char *err, size_t errlen)
{
	char script[] = "/tmp/gpubpf-py.XXXXXX", cmd[PATH_MAX + 64], key[64], real[PATH_MAX];
	unsigned found = 0, all = (1u << (sizeof(fields) / sizeof(fields[0]))) - 1;
	long long v, version = 0, in_exe = -1;
	struct stat st;
	FILE *f;
	int fd, rc;

	memset(o, 0, sizeof(*o));
	if (!realpath(python, real) || stat(real, &st)) {
		snprintf(err, errlen, "--python: cannot find the interpreter %s (%s): set GPUBPF_PYTHON to its path",
			 python, strerror(errno));
		return -1;
	}
	o->exe_ino = st.st_ino;
	fd = mkstemp(script);
	if (fd < 0 || write(fd, helper, sizeof(helper) - 1) != (ssize_t)sizeof(helper) - 1) {
		snprintf(err, errlen, "--python: cannot write a helper script in /tmp: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(script);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' -I '%s' 2>/dev/null", real, script);
	f = popen(cmd, "r");
	while (f && fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "version"))
			version = v;
		else if (!strcmp(key, "runtime_in_exe"))
			in_exe = v;
		else if (parse_line(o, key, v, &found))
			break;
	}
	rc = f ? pclose(f) : -1;
	unlink(script);
	if (in_exe == 0) {
		snprintf(err, errlen, "--python: %s keeps _PyRuntime in libpython, not in the executable: not supported yet; use a statically linked interpreter such as Debian's /usr/bin/python3",
			 real);
		return -1;
	}
	if (rc || found != all) {
		snprintf(err, errlen, "--python: could not derive CPython's frame layout from %s (needs CPython 3.11 or later with _PyRuntime in the executable)",
			 real);
		return -1;
	}
	if (version < 311) {
		snprintf(err, errlen, "--python: %s is Python %lld.%lld; frames are read for 3.11 and later",
			 real, version / 100, version % 100);
		return -1;
	}
	return 0;
}

/*
 * CPython's line-table varint: 6 bits a byte, bit 6 continues. Not LEB128
 * (core/varint.h), which carries 7 bits and continues on bit 7.
 */
static const uint8_t *varint(const uint8_t *p, const uint8_t *end, unsigned *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (p >= end || shift > 28)
			return NULL;
		b = *p++;
		*v |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return p;
}

int pyframes_line(const uint8_t *lt, unsigned len, int firstline, int instr)
{
	const uint8_t *p = lt, *end = lt + len;
	int line = firstline, addr = 0;
	unsigned v;

	if (instr < 0)
		return firstline;
	while (p < end) {
		uint8_t b = *p++;
		int code = (b >> 3) & 15, n = (b & 7) + 1, delta = 0;

		if (!(b & 0x80))
			return firstline;	/* not at an entry start: corrupt */
		if (code == 14 || code == 13) {
			if (!(p = varint(p, end, &v)))
				return firstline;
			delta = v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
			if (code == 14) {
				int k;

				for (k = 0; k < 3; k++)
					if (!(p = varint(p, end, &v)))
						return firstline;
			}
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
			p += 2;
		} else if (code < 10) {
			p += 1;
		}
		line += delta;
		if (instr < addr + n)
			return code == 15 ? firstline : line;
		addr += n;
	}
	return firstline;
}

unsigned pyframes_decode(const void *rec, size_t size, struct gb_frame *out, unsigned max,
			 struct intern *strs)
{
	const struct gb_py_rec *p = rec;
	unsigned i, n;

	if (size < GB_PY_REC_SIZE(0))
		return 0;
	n = p->n;
	if (n > GB_PY_MAX_FRAMES || GB_PY_REC_SIZE(n) > size)
		n = (unsigned)((size - GB_PY_REC_SIZE(0)) / sizeof(p->f[0]));
	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		const struct gb_py_frame *f = &p->f[i];
		unsigned lt = f->ltab_len < GB_PY_LTAB ? f->ltab_len : GB_PY_LTAB;

		memset(&out[i], 0, sizeof(out[i]));
		out[i].ip = f->code;
		out[i].sym = intern_strn(strs, f->name, strnlen(f->name, sizeof(f->name)));
		out[i].module = intern_strn(strs, f->file, strnlen(f->file, sizeof(f->file)));
		out[i].line = (uint32_t)pyframes_line(f->ltab, lt, f->firstline, f->instr);
	}
	return n;
}
