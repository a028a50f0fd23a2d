#!/usr/bin/env bash
# Issue 44 (no fidelity lost for speed): one function reached from two
# different callers at the same stack depth, alternating (alpha, beta,
# alpha, ...), its frames at the same addresses each time: every launch's
# stack names its own caller, in the default (frame-pointer) and DWARF
# modes. A per-thread cache of frames that trusted an unchanged frame
# address would give every launch the first caller's stack.
source "$(dirname "$0")/../lib.sh"
need_bpf "stacks of alternating callers"
command -v gcc >/dev/null || { skip "stacks of alternating callers" "no gcc"; exit 0; }
cat >"$T/alt.c" <<'C'
#include <dlfcn.h>
#include <stdlib.h>
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, void *, void **, void **);
static launch_t launch;
static void *fn;
/* the same call, from two callers whose frames lie at the same depth */
__attribute__((noinline)) void do_launch(unsigned i) { launch(fn, i, 1, 1, 1, 1, 1, 0, (void *)7, NULL, NULL); __asm__ volatile(""); }
__attribute__((noinline)) void from_alpha(unsigned i) { do_launch(i); __asm__ volatile(""); }
__attribute__((noinline)) void from_beta(unsigned i) { do_launch(i); __asm__ volatile(""); }
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*getfn)(void **, void *, const char *);
	unsigned i, n = (unsigned)atoi(argv[2]);

	if (!h)
		return 1;
	launch = (launch_t)dlsym(h, "cuLaunchKernel");
	getfn = (int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction");
	getfn(&fn, NULL, "alt_kernel");
	for (i = 0; i < n; i++) {
		if (i & 1)
			from_beta(i);
		else
			from_alpha(i);
	}
	return 0;
}
C
gcc -O1 -g -fno-omit-frame-pointer -o "$T/alt" "$T/alt.c" -ldl || { fail "build the workload"; exit 0; }
N=400
for mode in fp dwarf; do
	"$GPUBPF" record --stack $mode -o "$T/$mode.sbt" --lib "$WL/libcuda.so.1" -- "$T/alt" "$WL/libcuda.so.1" $N \
		>/dev/null 2>"$T/$mode.err"
	check_eq "--stack $mode: record exits 0" 0 "$?"
	"$GPUBPF" view --json "$T/$mode.sbt" | python3 -c '
import json, sys
mode, n = sys.argv[1], int(sys.argv[2])
ev = [json.loads(l) for l in sys.stdin]
ev = [e for e in ev if e["type"] == "cuLaunchKernel"]
ev.sort(key=lambda e: e["ts_ns"])
def caller(e):
    syms = [fr.get("sym", "?") for fr in e.get("stack", [])]
    for s in syms:
        if s in ("from_alpha", "from_beta"):
            return s
    return "none: " + " <- ".join(syms[:5])
got = [caller(e) for e in ev]
want = ["from_beta" if i & 1 else "from_alpha" for i in range(n)]
bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
ok = len(ev) == n and not bad
print(("PASS: " if ok else "FAIL: ") + f"--stack {mode}: {n} launches, each stack names its own caller, alternating" +
      ("" if ok else f" ({len(ev)} launches, {len(bad)} wrong; first: #{bad[0] if bad else None} {got[bad[0]] if bad else None})"))
' "$mode" "$N"
done
