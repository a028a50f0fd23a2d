#!/usr/bin/env bash
# gpubpf report --html, and each API's own words (issue 38). One recording
# of four NCCL ranks running training steps (one rank late), a CUDA process
# with synchronous copies and an allocation loop, a HIP process, and failed
# calls of the CUDA driver, HIP, cuBLAS and NCCL (one process each). The
# page is one self-contained file: no script, no address outside it;
# headless Chromium loads it offline with no console message, and its
# screenshot (kept in build/artifacts/) shows every chart by its colour;
# its tables carry the numbers report --json has. Each family's errors are
# named as its API names them, with its advice.
source "$(dirname "$0")/../lib.sh"
need_bpf "report html"
SW=$WL/steps_work
[ -x "$SW" ] && [ -x "$WL/errors_work" ] || { skip "report html" "workloads missing: run make workloads"; exit 0; }
export FAKE_CUDA_SYNC_US=200 FAKE_CUDA_COPY_US=200 FAKE_NCCL_DIR=$T
LIBS=(--lib "$WL/libcuda.so.1" --lib "$WL/libnccl.so.2" --lib "$WL/libamdhip64.so.5" --lib "$WL/blas/libcublas.so.13")
start_record -a -o "$T/t.sbt" "${LIBS[@]}" || { fail "record started"; exit 0; }
for r in 0 1 2 3; do
	late=0
	[ $r = 2 ] && late=3
	bg "$SW" -l "$WL/libcuda.so.1" -N "$WL/libnccl.so.2" -r $r -R 4 -i "$T/nccl.id" -n 8 -w 0 -L $late \
		train >"$T/rank$r.out" 2>&1
done
wait "${_bg_pids[@]:1}" 2>/dev/null
"$WL/mistakes_work" -l "$WL/libcuda.so.1" -n 12 memcpy alloc >"$T/m.out" 2>&1
"$WL/hip_work" "$WL/libamdhip64.so.5" 12 >"$T/hip.out" 2>&1
"$WL/errors_work" -f cuda -l "$WL/libcuda.so.1" -n 3 >"$T/e_cuda.out" 2>&1
"$WL/errors_work" -f hip -l "$WL/libamdhip64.so.5" -n 4 >"$T/e_hip.out" 2>&1
"$WL/errors_work" -f cublas -l "$WL/blas/libcublas.so.13" -n 5 >"$T/e_cublas.out" 2>&1
"$WL/errors_work" -f nccl -l "$WL/libnccl.so.2" -n 6 >"$T/e_nccl.out" 2>&1
stop_record
check_eq "record exits 0" 0 "$REC_RC"

"$GPUBPF" report --json "$T/t.sbt" >"$T/r.json" 2>/dev/null
"$GPUBPF" report --wide "$T/t.sbt" >"$T/r.txt" 2>/dev/null
# each family's errors in its own words
PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys, json
from events import Checker, produced
T = sys.argv[1]
c = Checker()
f = json.load(open(f"{T}/r.json"))["findings"]
txt = open(f"{T}/r.txt").read()
for fam, api, name, advice, n in (("cuda", "cuda-driver", "CUDA_ERROR_NOT_FOUND", "cuGetErrorName", 3),
                                  ("hip", "hip", "hipErrorInvalidValue", "hipGetErrorName", 4),
                                  ("cublas", "cublas", "CUBLAS_STATUS_NOT_INITIALIZED", "cublasGetStatusName", 5),
                                  ("nccl", "nccl", "ncclInvalidArgument", "ncclGetErrorString", 6)):
    p = produced(f"{T}/e_{fam}.out")
    x = next((y for y in f if y["pid"] == p.get("pid") and y["rule"] == "api-errors"), {})
    c.eq(f"{fam}: its errors by its API's name, code and count", (api, name, p.get("code"), n),
         (x.get("api"), x.get("code_name"), x.get("code"), x.get("count")))
    c.true(f"{fam}: its API's advice, no other's", advice in x.get("advice", "") and
           (fam == "cuda" or "cuda" not in x.get("advice", "").lower()), x.get("advice"))
    c.true(f"{fam}: the text names it too", f"{name} ({p.get('code')})" in txt, "")
hp = produced(f"{T}/hip.out").get("pid")
h = {y["rule"]: y for y in f if y["pid"] == hp}
c.true("hip: alloc-in-loop advice in HIP's words (hipMallocAsync, no cudaMallocAsync)",
       "hipMallocAsync" in h.get("alloc-in-loop", {}).get("advice", "") and
       "cuda" not in h.get("alloc-in-loop", {}).get("advice", ""), h.get("alloc-in-loop"))
c.true("hip: sync-memcpy advice in HIP's words (hipHostMalloc, hipMemcpyAsync)",
       "hipHostMalloc" in h.get("sync-memcpy", {}).get("advice", "") and
       "hipMemcpyAsync" in h.get("sync-memcpy", {}).get("advice", ""), h.get("sync-memcpy"))
mp = produced(f"{T}/m.out").get("pid")
m = {y["rule"]: y for y in f if y["pid"] == mp}
c.true("cuda driver: sync-memcpy advice in the driver's words (cuMemAllocHost)",
       "cuMemAllocHost" in m.get("sync-memcpy", {}).get("advice", ""), m.get("sync-memcpy"))
PY

"$GPUBPF" report --html "$T/r.html" "$T/t.sbt" 2>"$T/html.err"
check_eq "report --html exits 0 ($(head -1 "$T/html.err"))" 0 $?
check_true "report --html: says where it wrote" grep -q "report written to $T/r.html" "$T/html.err"
check_true "the page is self-contained: no script, no address outside it" \
	python3 -c 'import re, sys; s = open(sys.argv[1]).read(); sys.exit(bool(re.search(r"<script|https?:|\bsrc=|<link|@import|url\(", s)))' "$T/r.html"
for ch in api kernels memory copies skew steps; do
	check_true "the page has the $ch chart" grep -q "id=\"chart-$ch\"" "$T/r.html"
done
# the tables say what report --json says
python3 - "$T/r.html" "$T/r.json" <<'PY'
import sys, json
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.row, self.cell = {}, None, None, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "table":
            self.cur = self.tables.setdefault(a.get("id"), [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = [a.get("data-v"), ""]
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.cur.append(self.row)
            self.row = None
        elif tag == "table":
            self.cur = None
    def handle_data(self, d):
        if self.cell is not None:
            self.cell[1] += d
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
r = json.load(open(sys.argv[2]))
bad = []
api = {row[0][1]: row for row in p.tables.get("api", [])[1:]}
for a in r["api"]:
    row = api.get(a["name"])
    total = a["total_ns_estimated"] if a["total_ns_estimated"] is not None else None
    got = row and (int(row[1][0]), int(row[2][0]), int(row[3][0]), int(row[4][0]) if row[4][0] else None)
    if got != (a["calls"], a["timed"], a["errors"], total):
        bad.append((a["name"], got, (a["calls"], a["timed"], a["errors"], total)))
kern = {row[0][1]: row for row in p.tables.get("kernels", [])[1:]}
for k in r["kernels"]:
    row = kern.get(k["name"])
    if not row or int(row[1][0]) != k["launches"]:
        bad.append((k["name"], row and row[1][0], k["launches"]))
procs = {int(row[0][0]): row for row in p.tables.get("processes", [])[1:]}
for q in r["processes"]:
    row = procs.get(q["pid"])
    if not row or (int(row[2][0]), int(row[3][0])) != (q["events"], q["launches"]):
        bad.append((q["pid"], row and (row[2][0], row[3][0]), (q["events"], q["launches"])))
fr = [(row[1][1], int(row[2][0]) if row[2][0] else 0) for row in p.tables.get("findings", [])[1:]]
if fr != [(x["rule"], x["cost_ns"]) for x in r["findings"]]:
    bad.append(("findings", fr, [(x["rule"], x["cost_ns"]) for x in r["findings"]]))
print(("PASS" if not bad and api and kern and procs else "FAIL") +
      f": the page's tables carry report --json's numbers ({len(api)} functions, {len(kern)} kernels, "
      f"{len(procs)} processes, {len(fr)} findings){' ' + repr(bad[:3]) if bad else ''}")
PY

# a real browser, offline
CHROME=$(command -v chromium || command -v chromium-browser)
if [ -z "$CHROME" ]; then
	skip "report html in a browser" "no chromium (make deps installs it)"
	exit 0
fi
ART=$BUILD/artifacts
mkdir -p "$ART" "$T/home"
HOME=$T/home timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--no-first-run --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="127.0.0.1:9" \
	--enable-logging=stderr --v=0 --window-size=1280,5000 --screenshot="$ART/report_html.png" \
	"file://$T/r.html" >"$T/chrome.log" 2>&1
check_true "headless Chromium rendered the page ($(grep -v dbus "$T/chrome.log" | tail -1 | cut -c1-200))" \
	[ -s "$ART/report_html.png" ]
check_eq "no console message while loading it" "" "$(grep -i 'CONSOLE' "$T/chrome.log" | head -3)"
python3 "$ROOT/tests/tools/png_colors.py" --enough 40 "$ART/report_html.png" \
	4e79a7 f28e2b e15759 9c755f ff9da7 17becf >"$T/colors.txt" 2>&1
for c in "4e79a7 host time per API function" "f28e2b top kernels" "e15759 device memory over time" \
	 "9c755f copies by kind" "ff9da7 per-rank collective lateness" "17becf step times"; do
	n=$(awk -v k="${c%% *}" '$1 == k { print $2 }' "$T/colors.txt")
	check_true "the screenshot shows the chart of ${c#* } (${n:-0} pixels of #${c%% *})" [ "${n:-0}" -ge 40 ]
done
exit 0
