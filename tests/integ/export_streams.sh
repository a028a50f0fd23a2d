#!/usr/bin/env bash
# export_streams.sh - per GPU, one track per (process, stream) named by the
# work seen on it ("pid 100 stream 7 · compute, memcpy HtoD"). A name grows
# as new kinds come, so such a track is described again before the file
# ends; with sibling_merge_behavior NONE trace_processor keeps the *last*
# name of a uuid (perfetto_trace.proto, TrackDescriptor.name), and in JSON
# the last thread_name wins. No BPF needed: fixtures from "test_export --gen".
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

EXPECT='pid 100 stream 7 · compute -> pid 100 stream 7 · compute, memcpy HtoD
pid 101 stream 7 · compute
pid 102 stream 7 · compute
pid 100 stream 7 · compute, memcpy HtoD
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
