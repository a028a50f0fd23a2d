#!/bin/bash
# api_coverage.sh - every exported entry point of the real vendor libraries
# that belongs to a traced family (copies, memsets, allocations, frees,
# syncs, events, streams, launches, module/library loads, VMM, pinned host
# memory, prefetch/advise, and their per-thread _ptds/_ptsz/_spt forms) is
# either a row of the type table (bpf/gpubpf.h GB_TYPES) or a deliberate
# exclusion in tests/api_exclusions.txt (a glob and its reason). Graph
# captures are rows too (tests/integ/record_graphs.sh).
. "$(dirname "$0")/../lib.sh"

EXCL=$ROOT/tests/api_exclusions.txt
FAMILY='memcpy|memset|malloc|free|alloc|synchroni|event|stream|launch|moduleload|libraryload|memcreate|memrelease|memmap|memunmap|memaddress|memsetaccess|hostregister|hostunregister|prefetch|advise|_ptds$|_ptsz$|_spt$'

sed -n 's/^[[:space:]]*X(\([A-Za-z_0-9]*\),.*/\1/p' "$ROOT/bpf/gpubpf.h" | sort -u >"$T/table"
if [ ! -s "$T/table" ]; then fail "api coverage: no type table rows read from bpf/gpubpf.h"; exit 0; fi

# excluded NAME: 0 when a line of the exclusion file covers it
excluded() {
	local pat reason sym=$1 all=$2
	while read -r pat reason; do
		case $pat in ''|'#'*) continue ;; esac
		if [ "$pat" = "@v1" ]; then
			# the v1 ABI of a call whose _v2 is exported too
			grep -qx -e "${sym}_v2" -e "${sym}_v2_ptds" -e "${sym}_v2_ptsz" "$all" && return 0
			continue
		fi
		# shellcheck disable=SC2053
		[[ $sym == $pat ]] && return 0
	done <"$EXCL"
	return 1
}

check_lib() {
	local what=$1 lib=$2 sym missing=0 n=0
	if [ -z "$lib" ] || [ ! -e "$lib" ]; then
		skip "api coverage: $what" "library not installed"
		return
	fi
	nm -D --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[TtWi]$/ { sub(/@.*/, "", $3); print $3 }' |
		sort -u >"$T/all"
	grep -iE "$FAMILY" "$T/all" | grep -vi graph >"$T/fam"
	while read -r sym; do
		n=$((n + 1))
		grep -qx "$sym" "$T/table" && continue
		excluded "$sym" "$T/all" && continue
		echo "  $what: $sym is neither traced nor excluded"
		missing=$((missing + 1))
	done <"$T/fam"
	if [ "$missing" = 0 ]; then
		pass "api coverage: $what ($n entry points of the traced families)"
	else
		fail "api coverage: $what ($missing of $n entry points neither in bpf/gpubpf.h nor in tests/api_exclusions.txt)"
	fi
}

cudart=$(ls /usr/local/cuda/lib64/libcudart.so.13 2>/dev/null | head -1)
stub=$(find /usr/local/cuda/ /usr/local/cuda-*/ -name libcuda.so -path '*stubs*' 2>/dev/null | head -1)
hip=$(ls /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 /opt/rocm/lib/libamdhip64.so.5 2>/dev/null | head -1)
if ! command -v nm >/dev/null; then skip "api coverage" "no nm (binutils)"; exit 0; fi
check_lib "libcudart.so.13" "$cudart"
check_lib "libcuda.so (stub)" "$stub"
check_lib "libamdhip64.so.5" "$hip"

# every exclusion still names something (a stale line hides nothing new, but says so)
while read -r pat reason; do
	case $pat in ''|'#'*) continue ;; esac
	[ -n "$reason" ] || fail "api exclusions: '$pat' has no reason"
done <"$EXCL"
