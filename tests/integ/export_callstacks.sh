#!/usr/bin/env bash
# export_callstacks.sh - native call stacks in the Perfetto export: events
# with a recorded stack carry TrackEvent.callstack_iid, and the interned
# Callstack -> Frame -> function name / Mapping -> path, build id chain
# resolves to the recorded frames, outermost first (Callstack.frame_ids is
# "bottom frame first"). Oracles: protoc --decode with Perfetto's schema
# (no field decoded by number) and tests/tools/perfetto_check.py, which
# must also reject each of tests/fixtures/perfetto/negative/*.
# No BPF needed: fixtures come from "test_export --gen" (stacks 1-3 of
# tests/unit/test_export_gen.h).
source "$(dirname "$0")/../lib.sh"

D=$SHARED/perfetto
FX=$ROOT/tests/fixtures/perfetto
CHECK="python3 $ROOT/tests/tools/perfetto_check.py"
GEN=$BUILD/tests/test_export

if ! command -v protoc >/dev/null; then
	skip "perfetto callstacks" "protoc not installed (apt-get install protobuf-compiler)"
	exit 0
fi
if [ ! -f "$D/perfetto_trace.proto" ]; then
	skip "perfetto callstacks" "no $D/perfetto_trace.proto (SHARED=$SHARED)"
	exit 0
fi
decode() { protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }
encode() { protoc --proto_path="$D" --encode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }

# --- the checker: accepts a callstack trace, rejects each one-mistake variant ---
if encode "$FX/callstack.textproto" >"$T/cs.pb" && decode "$T/cs.pb" | $CHECK - >"$T/chk.out"; then
	pass "checker accepts callstack.textproto"
else
	fail "checker accepts callstack.textproto ($(head -1 "$T/chk.out"))"
fi
for f in "$FX"/negative/*.textproto; do
	n=$(basename "$f" .textproto)
	encode "$f" >"$T/$n.pb" || { fail "encode $n"; continue; }
	if decode "$T/$n.pb" | $CHECK - >"$T/chk.out"; then
		fail "checker rejects $n (it said OK)"
	else
		pass "checker rejects $n: $(head -1 "$T/chk.out" | cut -c1-80)"
	fi
done

if [ ! -x "$GEN" ]; then
	fail "fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "fixtures ($(head -1 "$T/gen.err"))"; exit 0; }

# resolve FILE.txt: per event name, the frames of its callstacks (outermost
# first, "function@mapping path#build id+rel_pc"); thread-track events with
# a stack_id argument but no callstack_iid; callstacks on other tracks (a
# launch's instant on its GPU track must not count the stack twice);
# callstacks and frames interned
resolve() {
	python3 - "$1" "$ROOT/tests/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from perfetto_check import parse_text, strip_comments
t = parse_text(strip_comments(open(sys.argv[1]).read()))
tabs, stacks, missing, unresolved, ndef = None, {}, 0, 0, {'callstacks': 0, 'frames': 0}
threads, elsewhere = set(), 0
def one(m, k, d=None):
    v = m.get(k)
    return v[0] if v else d
for p in t.get('packet', []):
    if one(p, 'sequence_flags', 0) & 1:
        tabs = {}
    idata = one(p, 'interned_data')
    if idata:
        for table, es in idata.items():
            for e in es:
                tabs.setdefault(table, {})[one(e, 'iid')] = e
        for k in ndef:
            ndef[k] += len(idata.get(k, []))
    td = one(p, 'track_descriptor')
    if td and one(td, 'thread'):
        threads.add(one(td, 'uuid'))
    te = one(p, 'track_event')
    if not te:
        continue
    on_thread = one(te, 'track_uuid') in threads
    ann = tabs.get('debug_annotation_names', {})
    has_stack = any(one(ann.get(one(d, 'name_iid'), {}), 'name') == 'stack_id' for d in te.get('debug_annotations', []))
    cs = one(te, 'callstack_iid')
    if has_stack and on_thread and not cs:
        missing += 1
    if cs and not on_thread:
        elsewhere += 1
    if not cs:
        continue
    name = one(tabs['event_names'][one(te, 'name_iid')], 'name')
    try:
        frames = []
        for fid in tabs['callstacks'][cs]['frame_ids']:
            fr = tabs['frames'][fid]
            s = one(tabs['function_names'][one(fr, 'function_name_id')], 'str')
            m = one(fr, 'mapping_id')
            if m:
                mp = tabs['mappings'][m]
                s += '@' + one(tabs['mapping_paths'][one(mp, 'path_string_ids')], 'str')
                if one(mp, 'build_id'):
                    s += '#' + one(tabs['build_ids'][one(mp, 'build_id')], 'str')
                s += '+%d' % one(fr, 'rel_pc')
            frames.append(s)
    except KeyError:
        unresolved += 1
        continue
    stacks.setdefault(name, set()).add(' > '.join(frames))
for n in sorted(stacks):
    for s in sorted(stacks[n]):
        print("%s: %s" % (n, s))
print("thread events with stack_id but no callstack_iid: %d, unresolved: %d, off threads: %d"
      % (missing, unresolved, elsewhere))
print("interned callstacks: %d, frames: %d" % (ndef['callstacks'], ndef['frames']))
PY
}

EXPECT='cudaLaunchKernel: main@/opt/app/trainer#beef0002+5120 > train_step@/opt/app/trainer#beef0002+4864 > launch_gemm@/opt/app/trainer#beef0002+4608 > cudaLaunchKernel@/opt/app/libcudart.so.12#c0ffee01+4352
cudaMalloc: main@/opt/app/trainer#beef0002+5120 > alloc_buffers@/opt/app/trainer#beef0002+5376 > cudaMalloc@/opt/app/libcudart.so.12#c0ffee01+8704
ioctl: 0x7f00dead > libfake.so+0x1234@/nonexistent/libfake.so+4660
thread events with stack_id but no callstack_iid: 0, unresolved: 0, off threads: 0
interned callstacks: 3, frames: 8'

# check_stacks DESC FILE: schema, semantics, and the stacks resolve as recorded
check_stacks() {
	local txt=$T/$(basename "$2").txt
	if ! decode "$2" >"$txt" 2>"$T/dec.err"; then
		fail "$1: protoc decodes ($(head -1 "$T/dec.err"))"
		return
	fi
	if grep -qnE '^\s*[0-9]+(: | \{)' "$txt"; then
		fail "$1: fields decoded by number ($(grep -nE '^\s*[0-9]+(: | \{)' "$txt" | head -1))"
	else
		pass "$1: no field unknown to the schema"
	fi
	if $CHECK --strict-order "$txt" >"$T/chk.out"; then
		pass "$1: perfetto_check ($(cat "$T/chk.out"))"
	else
		fail "$1: perfetto_check ($(head -1 "$T/chk.out"))"
	fi
	if [ -n "${3:-}" ]; then
		check_eq "$1: callstacks resolve to the recorded frames, outermost first, each interned once" \
			"$3" "$(resolve "$txt")"
	else
		check_eq "$1: every event with a stack carries a callstack_iid that resolves" \
			"thread events with stack_id but no callstack_iid: 0, unresolved: 0, off threads: 0" \
			"$(resolve "$txt" | grep '^thread events with')"
	fi
}

check_stacks "direct API" "$T/direct.pftrace" "$EXPECT"
if [ ! -f "$T/mixed.sbt" ]; then
	skip "gpubpf export callstacks" "sbt writer not available ($(head -1 "$T/gen.err"))"
	exit 0
fi
"$GPUBPF" export -q "$T/mixed.sbt" -o "$T/m.pftrace" 2>"$T/exp.err"
check_eq "export exit status" 0 $?
check_stacks "gpubpf export" "$T/m.pftrace" "$EXPECT"
n=$(grep -c 'callstack_iid:' "$T/m.pftrace.txt")
want=$("$GPUBPF" view --json "$T/mixed.sbt" | grep -c '"stack":')
check_eq "one callstack_iid per event with a stack (gpubpf view --json counts $want)" "$want" "$n"

# split pieces: each file interns its own stacks again after CLEARED
"$GPUBPF" export -q "$T/mixed.sbt" --split-mb 1 -o "$T/s.pftrace"
for f in "$T"/s.*.pftrace; do check_stacks "split piece $(basename "$f")" "$f"; done

# Chrome JSON has no callstacks: the stack stays a string argument
"$GPUBPF" export -q "$T/mixed.sbt" -f json -o "$T/m.json"
r=$(python3 - "$T/m.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
s = {e['args']['stack'] for e in ev if e.get('name') == 'cudaMalloc' and 'stack' in e.get('args', {})}
print(len(s), [x.split('\n')[0] for x in s])
PY
)
check_eq "json keeps the stack string (innermost first)" "1 ['#0  cudaMalloc (/opt/app/libcudart.so.12+0x2200)']" "$r"
