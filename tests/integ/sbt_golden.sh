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
	case $b in v0-graphs*) want="v0 graphs" ;; v0-main*) want="v0 main" ;; v0-apicov*) want="v0 apicov" ;; esac
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
# the apicov branch's VMM calls sit where main has per-thread copies and
# memsets of the same API: their fields say which, and no table is in doubt
check_eq "v0-apicov-vmm: cuMemCreate, cuMemMap and cuEventRecord by their own names, no copy or memset" "2 2 1 0" \
	"$(for n in cuMemCreate cuMemMap cuEventRecord; do grep -c "\"type\":\"$n\"" "$T/v0-apicov-vmm.jsonl"; done | tr '\n' ' ')$(grep -c '"type":"cuMem\(cpy\|set\)' "$T/v0-apicov-vmm.jsonl")"
check_eq "v0-apicov-vmm: info --json has no doubt about its table" "None" \
	"$("$GPUBPF" info --json "$G/v0-apicov-vmm.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("types_doubt"))')"
# the same calls with no fields to tell the tables apart: read with main's,
# and every output says the names may be another build's
B=$ROOT/tests/fixtures/sbt/v0-apicov-bare.sbt
"$GPUBPF" info "$B" >"$T/bare.info" 2>&1
check_true "v0-apicov-bare: info says the 'apicov' table fits as well, and how to choose it" \
	grep -q "the 'apicov' table fits its records as well.*GPUBPF_V0_TABLE=apicov" "$T/bare.info"
for c in "view" "report" "export -f json -o $T/bare.json"; do
	# shellcheck disable=SC2086
	"$GPUBPF" $c "$B" >/dev/null 2>"$T/bare.err"
	check_true "v0-apicov-bare: ${c%% -o *} says the call names are uncertain" grep -q "call names uncertain" "$T/bare.err"
done
check_eq "v0-apicov-bare: report --json's data quality carries the doubt" "True" \
	"$("$GPUBPF" report --json "$B" 2>/dev/null | python3 -c 'import json, sys; print("apicov" in json.load(sys.stdin)["data_quality"]["types_doubt"])')"
check_eq "v0-apicov-bare: GPUBPF_V0_TABLE=apicov reads its VMM calls by their names, quietly" "cuMemAddressReserve cuMemCreate 0" \
	"$(GPUBPF_V0_TABLE=apicov "$GPUBPF" view --json "$B" 2>"$T/bare.err" | sed -n '2,3s/.*"type":"\([^"]*\)".*/\1/p' | tr '\n' ' ')$(grep -c uncertain "$T/bare.err")"
"$GPUBPF" symbolize "$B" -o "$T/bare.sym.sbt" 2>"$T/bare.err"
check_eq "v0-apicov-bare: symbolize refuses to copy a guess (exit 1, no file)" "1 no" "$? $([ -e "$T/bare.sym.sbt" ] && echo yes || echo no)"
check_true "v0-apicov-bare: and says how to choose" grep -q "not copied.*GPUBPF_V0_TABLE=apicov" "$T/bare.err"
"$GPUBPF" merge "$B" "$G/v1-mixed.sbt" -o "$T/bare.merged.sbt" 2>/dev/null
check_eq "v0-apicov-bare: merge refuses too (no file)" "no" "$([ -e "$T/bare.merged.sbt" ] && echo yes || echo no)"
GPUBPF_V0_TABLE=apicov "$GPUBPF" symbolize "$B" -o "$T/bare.sym.sbt" 2>/dev/null
check_eq "v0-apicov-bare: once chosen, the copy names the calls for good" "cuMemAddressReserve sbt.types" \
	"$("$GPUBPF" view --json "$T/bare.sym.sbt" | sed -n '2s/.*"type":"\([^"]*\)".*/\1/p') $("$GPUBPF" info --json "$T/bare.sym.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin)["types_from"])')"
