#!/usr/bin/env bash
# export_streams.sh - per GPU, one track per (process, stream) named by the
# work seen on it ("pid 100 stream 7 · compute, memcpy HtoD"). A name grows
# as new kinds come, so such a track is described again before the file
# ends; with sibling_merge_behavior NONE trace_processor keeps the *last*
# name of a uuid (perfetto_trace.proto, TrackDescriptor.name), and in JSON
# the last thread_name wins. Also the per-GPU launch statistics counters.
# No BPF needed: fixtures from "test_export --gen".
source "$(dirname "$0")/../lib.sh"

D=$SHARED/perfetto
CHECK="python3 $ROOT/tests/tools/perfetto_check.py"
GEN=$BUILD/tests/test_export

if ! command -v protoc >/dev/null; then
	skip "stream track names" "protoc not installed (apt-get install protobuf-compiler)"
	exit 0
fi
if [ ! -f "$D/perfetto_trace.proto" ]; then
	skip "stream track names" "no $D/perfetto_trace.proto (SHARED=$SHARED)"
	exit 0
fi
if [ ! -x "$GEN" ]; then
	fail "fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
decode() { protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }

# names TXT: each stream track's names in file order, "first -> ... -> last"
names() {
	python3 - "$1" "$ROOT/tests/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from perfetto_check import parse_text, strip_comments
t = parse_text(strip_comments(open(sys.argv[1]).read()))
seen = {}
for p in t.get('packet', []):
    td = p.get('track_descriptor')
    if not td or td[0].get('sibling_merge_behavior') != ['SIBLING_MERGE_BEHAVIOR_NONE']:
        continue
    n = td[0]['name'][0].encode('latin-1').decode('unicode_escape').encode('latin-1').decode('utf-8')
    h = seen.setdefault(td[0]['uuid'][0], [])
    if not h or h[-1] != n:
        h.append(n)
for u in sorted(seen):
    print(' -> '.join(seen[u]))
PY
}

# (the fourth: stream 7's records that overlap, which a GPU never runs so,
# on a track that says it holds them)
EXPECT='pid 100 stream 7 · compute -> pid 100 stream 7 · compute, memcpy HtoD
pid 101 stream 7 · compute
pid 102 stream 7 · compute
pid 100 stream 7 · compute, memcpy HtoD · overlapping records 1
pid 101 stream 9 · memset -> pid 101 stream 9 · memcpy DtoH, memset'

for src in direct mixed; do
	if [ $src = direct ]; then f=$T/direct.pftrace
	else "$GPUBPF" export -q "$T/mixed.sbt" -o "$T/m.pftrace"; f=$T/m.pftrace; fi
	decode "$f" >"$T/$src.txt" || { fail "$src: protoc decodes"; continue; }
	if $CHECK --strict-order "$T/$src.txt" >"$T/chk.out"; then pass "$src: perfetto_check ($(cat "$T/chk.out"))"
	else fail "$src: perfetto_check ($(head -1 "$T/chk.out"))"; fi
	# the direct fixture stops before stream 9's work (iterations 4000, 8000)
	want=$EXPECT
	[ $src = direct ] && want=$(echo "$EXPECT" | head -4)
	check_eq "$src: stream tracks named by their work, renamed when it grows (lane 1 of stream 7 too)" \
		"$want" "$(names "$T/$src.txt")"
done

# JSON: the last thread_name of each stream lane
"$GPUBPF" export -q "$T/mixed.sbt" -f json -o "$T/m.json"
r=$(python3 - "$T/m.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
last = {}
for e in ev:
    if e.get('ph') == 'M' and e.get('name') == 'thread_name' and ' stream ' in e['args']['name'] \
            and not e['args']['name'].endswith('launches'):
        last[(e['pid'], e['tid'])] = e['args']['name']
print('\n'.join(sorted(set(last.values()))))
PY
)
check_eq "json: last thread_name of each stream lane" "pid 100 stream 7 · compute, memcpy HtoD
pid 100 stream 7 · compute, memcpy HtoD · overlapping records 1
pid 101 stream 7 · compute
pid 101 stream 9 · memcpy DtoH, memset
pid 102 stream 7 · compute" "$r"
if $CHECK --json "$T/m.json" >"$T/chk.out"; then pass "json: nests, flows paired"
else fail "json ($(head -1 "$T/chk.out"))"; fi

# split: each piece names its streams by what it has seen so far, and is valid
"$GPUBPF" export -q "$T/mixed.sbt" --split-mb 1 -o "$T/s.pftrace"
for f in "$T"/s.*.pftrace; do
	decode "$f" >"$f.txt"
	if $CHECK --strict-order "$f.txt" >"$T/chk.out"; then pass "split $(basename "$f"): perfetto_check"
	else fail "split $(basename "$f"): perfetto_check ($(head -1 "$T/chk.out"))"; fi
	names "$f.txt" >>"$T/split_names"
done
check_true "split: the piece with stream 9's copy names it 'memcpy DtoH, memset'" \
	grep -q 'stream 9 · memcpy DtoH, memset' "$T/split_names"

# launch statistics per GPU: counter tracks "launches / 100 ms" and "mean
# launch time" under the GPU group, one value per interval at its end. The
# fixture launches (cudaLaunchKernel, 3000 ns, with cuLaunchKernel inside it:
# one launch) every 10 us from its first event for 120 ms: 10000 in the first
# interval, 2000 in the partial last one, written at the trace's last end.
r=$(python3 - "$T/mixed.txt" "$ROOT/tests/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from perfetto_check import parse_text, strip_comments
t = parse_text(strip_comments(open(sys.argv[1]).read()))
names, units, out = {}, {}, []
t0 = None
for p in t['packet']:
    td = p.get('track_descriptor')
    if td:
        names[td[0]['uuid'][0]] = td[0].get('name', [''])[0]
        c = td[0].get('counter')
        if c:
            units[td[0]['uuid'][0]] = c[0].get('unit', ['?'])[0]
    te = p.get('track_event')
    if te and t0 is None and te[0].get('type') == ['TYPE_SLICE_BEGIN']:
        t0 = p['timestamp'][0]
    if te and te[0].get('type') == ['TYPE_COUNTER']:
        u = te[0]['track_uuid'][0]
        if names[u].startswith(('launches', 'mean')):
            out.append('+%dns %s (%s) = %d' % (p['timestamp'][0] - t0, names[u], units[u], te[0]['counter_value'][0]))
print('\n'.join(out))
PY
)
check_eq "launch statistics per GPU (count, mean host ns)" "+100000000ns launches / 100 ms (UNIT_COUNT) = 10000
+100000000ns mean launch time (UNIT_TIME_NS) = 3000
+119999000ns launches / 100 ms (UNIT_COUNT) = 2000
+119999000ns mean launch time (UNIT_TIME_NS) = 3000" "$r"
r=$(python3 -c 'import json,sys; ev=json.load(open(sys.argv[1]))["traceEvents"]; print([e["args"] for e in ev if e.get("ph") == "C" and e["name"].startswith(("launches", "mean"))])' "$T/m.json")
check_eq "json: the same counters" "[{'launches': 10000}, {'ns': 3000}, {'launches': 2000}, {'ns': 3000}]" "$r"
