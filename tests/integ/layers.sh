#!/usr/bin/env bash
# layers: the folders of src/ depend only downward (src/LAYERS), by includes
# and by linked symbols; no folder grows past 15 files; no include cycles.
. "$ROOT/tests/lib.sh"
python3 "$ROOT/tests/tools/check_layers.py" "$ROOT" "$BUILD/obj"

# the checker itself: a tree that breaks each rule must be reported
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/low" "$t/src/high"
printf 'low:\nhigh: low\n' >"$t/src/LAYERS"
printf '#include "high/h.h"\n' >"$t/src/low/l.h"
printf '#include "low/l.h"\n' >"$t/src/high/h.h"
for i in $(seq 16); do : >"$t/src/high/f$i.c"; done
out=$(python3 "$ROOT/tests/tools/check_layers.py" "$t")
if echo "$out" | grep -q '^FAIL: layers: includes point only down.*' &&
   echo "$out" | grep -q 'src/low/l.h includes high/h.h' &&
   echo "$out" | grep -q '^FAIL: layers: every folder holds at most 15' &&
   echo "$out" | grep -q '^FAIL: layers: no include cycle' ; then
	pass "layers: the checker reports an upward include, a cycle and a crowded folder"
else
	fail "layers: the checker missed a broken rule: $out"
fi
