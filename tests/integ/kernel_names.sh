#!/usr/bin/env bash
# kernel_names.sh - one name per kernel in every output: the C++ kernel
# _ZN4vllm6kernelEv is "vllm::kernel()" in view (text and --json), info,
# report (text, --json, --csv), the Chrome JSON and Perfetto exports and the
# pprof labels; where an output has fields the recorded symbol is kept as
# kernel_raw (report: name_raw). Long names are cut in the middle with "…".
# No BPF: the trace comes from "test_export --gen".
source "$(dirname "$0")/../lib.sh"
GEN=$BUILD/tests/test_export
RAW=_ZN4vllm6kernelEv
DEM='vllm::kernel()'
WANT='gemm layernorm softmax vllm::kernel()'

if [ ! -x "$GEN" ]; then
	fail "kernel name fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" >/dev/null 2>"$T/gen.err" || { fail "kernel name fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
M=$T/mixed.sbt

# names NAME-LIST: the sorted distinct names, on one line
names() { sort -u | tr '\n' ' ' | sed 's/ $//'; }

"$GPUBPF" view "$M" >"$T/view.txt"
check_eq "view: kernels by their demangled names" "$WANT" \
	"$(grep -o 'kernel=[^ ]*' "$T/view.txt" | cut -d= -f2 | names)"
"$GPUBPF" view --json "$M" >"$T/view.jsonl"
check_eq "view --json: kernel demangled, kernel_raw the symbol" "$WANT|$RAW" \
	"$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
k = sorted({e["kernel"] for e in ev if "kernel" in e})
raw = sorted({e["kernel_raw"] for e in ev if "kernel_raw" in e})
bad = [e for e in ev if "kernel_raw" in e and e["kernel"] != sys.argv[2]]
print(" ".join(k) + "|" + " ".join(raw) + ("|mismatch" if bad else ""))' "$T/view.jsonl" "$DEM")"

"$GPUBPF" info "$M" >"$T/info.txt"
check_true "info: the top kernels list names $DEM" grep -qF "  $DEM" "$T/info.txt"
check_eq "info --json: kernels demangled, kernel_raw kept" "$WANT|$RAW" \
	"$("$GPUBPF" info --json "$M" | python3 -c '
import json, sys
k = json.load(sys.stdin)["kernels"]
print(" ".join(sorted(x["kernel"] for x in k)) + "|" + " ".join(x["kernel_raw"] for x in k if "kernel_raw" in x))')"

"$GPUBPF" report "$M" >"$T/report.txt"
check_true "report: KERNELS names $DEM" grep -qF "  $DEM " "$T/report.txt"
check_eq "report --json: kernels demangled, name_raw kept" "$WANT|$RAW" \
	"$("$GPUBPF" report --json "$M" | python3 -c '
import json, sys
k = json.load(sys.stdin)["kernels"]
print(" ".join(sorted(x["name"] for x in k)) + "|" + " ".join(x["name_raw"] for x in k if "name_raw" in x))')"
check_true "report --csv: the kernel row has both names" \
	grep -qF "\"$DEM\",6000,6000,15000000,15000000,3000,25000000,\"$RAW\"" <("$GPUBPF" report --csv "$M")
check_true "no output above prints the raw symbol as the name" \
	bash -c "! grep -q '$RAW' '$T/view.txt' '$T/info.txt' '$T/report.txt'"

"$GPUBPF" export -f json -o "$T/x.json" "$M" 2>/dev/null
check_eq "export -f json: args.kernel demangled, kernel_raw kept; slice names alike" "$WANT|$RAW|ok" \
	"$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
a = [e.get("args", {}) for e in ev]
k = sorted({x["kernel"] for x in a if "kernel" in x})
raw = sorted({x["kernel_raw"] for x in a if "kernel_raw" in x})

print(" ".join(k) + "|" + " ".join(raw) + "|" + ("ok" if sys.argv[2] not in {e.get("name") for e in ev} else "raw slice"))' \
	"$T/x.json" "$RAW")"

D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	"$GPUBPF" export -o "$T/x.pftrace" "$M" 2>/dev/null
	protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/x.pftrace" >"$T/pf.txt"
	check_true "perfetto: the kernel annotation and the slice carry $DEM" grep -qF "\"$DEM\"" "$T/pf.txt"
	check_true "perfetto: kernel_raw annotation named" grep -q '"kernel_raw"' "$T/pf.txt"
else
	skip "perfetto kernel names" "no protoc or $D/perfetto_trace.proto"
fi

if command -v go >/dev/null; then
	export HOME=$T PPROF_TMPDIR=$T/pprof GOCACHE=$T/gocache
	"$GPUBPF" export -f pprof -o "$T/p.pb.gz" "$M" 2>/dev/null
	go tool pprof -symbolize=none -raw "$T/p.pb.gz" >"$T/raw.txt" 2>"$T/raw.err"
	check_eq "pprof: kernel labels demangled" "$WANT" \
		"$(grep -o '\bkernel:\[[^]]*\]' "$T/raw.txt" | sed 's/^kernel:\[//; s/\]$//' | names)"
	check_eq "pprof: kernel_raw label kept" "$RAW" \
		"$(grep -o 'kernel_raw:\[[^]]*\]' "$T/raw.txt" | sed 's/^kernel_raw:\[//; s/\]$//' | names)"
else
	skip "pprof kernel labels" "go not installed (apt-get install golang-go)"
fi

# long names: cut in the middle, so the ends that tell instances apart stay
"$GPUBPF" report --wide "$ROOT/tests/fixtures/sbt/golden/v0-main-synthetic.sbt" >"$T/long.txt"
check_eq "report KERNELS: 54-character names cut in the middle to 40, ends kept" "7 7" \
	"$(sed -n '/^KERNELS/,/^$/p' "$T/long.txt" | grep -c '^  _ZN7cutlass6KernelIN…[0-9]EEEvNT_6ParamsE_[0-9]* ') \
$(sed -n '/^KERNELS/,/^$/p' "$T/long.txt" | grep '…' | cut -c3- | awk '{print $1}' | sort -u | wc -l)"
