#!/usr/bin/env bash
# Golden traces: a trace written by any earlier build reads the same with
# this one. tests/fixtures/sbt/golden/ holds one trace of each revision of
# the format's meaning (v0: bare type numbers, written before traces named
# their types, by main and by a branch whose rows were merged in another
# order; v1: the trace names its numbers, "sbt.types"; 1.1: and its
# frames, function, source file and line), each with the
# `view --json` output it must decode to. A fixture's expected output is
# changed only on purpose (a field added to view --json), never to follow
# a change of GB_TYPES.
source "$(dirname "$0")/../lib.sh"
G=$ROOT/tests/fixtures/sbt/golden
n=0
for f in "$G"/*.sbt; do
	b=$(basename "$f" .sbt)
	n=$((n + 1))
	"$GPUBPF" view --json "$f" >"$T/$b.jsonl" 2>"$T/$b.err"
	check_eq "$b: view --json exits 0 ($(head -c 120 "$T/$b.err"))" 0 "$?"
	if cmp -s "$G/$b.view.jsonl" "$T/$b.jsonl"; then
		pass "$b: decodes to its golden view --json ($(wc -l <"$T/$b.jsonl") events)"
	else
		fail "$b: differs from $b.view.jsonl ($(diff "$G/$b.view.jsonl" "$T/$b.jsonl" | head -3 | tr '\n' ' ' | head -c 300))"
	fi
	want=sbt.types
	case $b in v0-graphs*) want="v0 graphs" ;; v0-main*) want="v0 main" ;; esac
	check_eq "$b: info --json says where its type names come from" "$want" \
		"$("$GPUBPF" info --json "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("types_from"))')"
done
check_true "at least one fixture of each revision ($n)" [ "$n" -ge 3 ]
# the graph branch's trace: its capture calls by their own names, under their own API
check_eq "v0-graphs: the capture calls are cuStreamBeginCapture_v2, not a cuBLAS name" "2 0" \
	"$(grep -c '"type":"cuStreamBeginCapture_v2","api":"cuda-driver"' "$T/v0-graphs.jsonl") $(grep -c '"type":"cublas' "$T/v0-graphs.jsonl")"
# 1.1: the frames' names travel with the trace; the binaries it names are on no machine
check_eq "v1.1-names: every frame of the deleted program named; its own code's with their source file and line" "0 0" \
	"$(python3 -c '
import json, sys
fr = [f for l in open(sys.argv[1]) for f in json.loads(l).get("stack", [])]
print(sum(1 for f in fr if not f.get("sym")), sum(1 for f in fr if f["module"].startswith("/tmp/gpubpf-golden/") and f.get("sym") != "_start" and not (f.get("file") and f.get("line"))) if fr else "no frames")' "$T/v1.1-names.jsonl")"
check_eq "v1.1-names: info --json counts the names it carries" 15 \
	"$("$GPUBPF" info --json "$G/v1.1-names.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin)["frame_names"])')"
"$GPUBPF" info "$G/v0-graphs.sbt" >"$T/info.txt" 2>&1
check_true "info says an old trace was read with its builds' table" grep -q "read with the 'graphs' table" "$T/info.txt"
