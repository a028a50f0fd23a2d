#!/usr/bin/env bash
# gpubpf check on this host as it is: --json has exactly the promised shape;
# each fact agrees with an oracle outside gpubpf's check code (the kernel's
# PMU list for kprobes, bpftrace for fentry, the recorder's own attach for
# uprobe_multi, stat for tracefs); exit 0 as root; a non-root caller without
# capabilities is told what is missing (exit 1), one with exactly
# capabilities_needed gets exit 0; a bad argument is one line, exit 2.
source "$(dirname "$0")/../lib.sh"
need_bpf "check"
# The facts below are those of a host with tracefs mounted, as record leaves
# it (and as systemd mounts it at boot); check_tracefs.sh covers the other state.
if [ ! -e /sys/kernel/tracing/events ] && ! mount -t tracefs nodev /sys/kernel/tracing; then
	skip "check" "tracefs is not mounted and could not be mounted"
	exit 0
fi
"$GPUBPF" check --json >"$T/c.json" 2>"$T/c.err"
check_eq "check --json as root exits 0 (record -a works here)" 0 "$?"
PY='import json, sys
d = json.load(open(sys.argv[1]))
def item(n):
    return [c for c in d["checks"] if c["name"] == n][0]'
jq_() { python3 -c "$PY
$2" "$1"; }
check_eq "top-level keys exactly checks, libraries, capabilities_needed" "capabilities_needed checks libraries" \
	"$(jq_ "$T/c.json" 'print(" ".join(sorted(d)))')"
check_eq "every check has exactly name, ok, detail, fix" "True" \
	"$(jq_ "$T/c.json" 'print(all(sorted(c) == ["detail", "fix", "name", "ok"] and isinstance(c["ok"], bool) for c in d["checks"]))')"
check_eq "a failed check always has a fix, a passed one none" "True" \
	"$(jq_ "$T/c.json" 'print(all(bool(c["fix"]) != c["ok"] for c in d["checks"]))')"
for n in kernel btf lockdown tracefs uprobe uretprobe uprobe_multi uprobe_session kprobe fentry tracepoint \
	ring_buffer task_storage perf_event_paranoid ptrace_scope "process events" "first probes" "gpu driver" cupti capabilities; do
	check_eq "fact '$n' reported" 1 "$(jq_ "$T/c.json" "print(sum(c['name'] == '$n' for c in d['checks']))")"
done

# kprobes: the kernel lists a kprobe PMU (or kprobe_events) when it has them
if [ -e /sys/bus/event_source/devices/kprobe/type ] || [ -e /sys/kernel/tracing/kprobe_events ]; then kp=True; else kp=False; fi
check_eq "kprobe: $kp as the kernel's PMU list says" "$kp" "$(jq_ "$T/c.json" 'print(item("kprobe")["ok"])')"
check_true "kprobe ✘ says gpubpf does not need them" \
	bash -c "[ $kp = True ] || python3 -c '$PY
assert \"does not need\" in item(\"kprobe\")[\"detail\"]' '$T/c.json'"
# fentry: bpftrace's kfunc probe, an independent loader
if command -v bpftrace >/dev/null; then
	timeout 30 bpftrace -e 'kfunc:do_nanosleep { exit(); } interval:ms:50 { exit(); }' >"$T/bt.out" 2>&1
	if [ $? = 0 ] && ! grep -q ERROR "$T/bt.out"; then fe=True; else fe=False; fi
	check_eq "fentry: $fe as bpftrace's kfunc probe says" "$fe" "$(jq_ "$T/c.json" 'print(item("fentry")["ok"])')"
else
	skip "fentry oracle" "bpftrace not installed"
fi
# uprobe_multi: record -v says it attached with uprobe_multi links
LIB=$WL/libcuda.so.1
timeout 60 "$GPUBPF" record -v --lib "$LIB" -o "$T/r.sbt" -- "$WL/cuda_work" -l "$LIB" -n 1 >/dev/null 2>"$T/r.err"
if grep -q "(uprobe_multi)" "$T/r.err"; then um=True; else um=False; fi
check_eq "uprobe_multi: $um as record's attach says" "$um" "$(jq_ "$T/c.json" 'print(item("uprobe_multi")["ok"])')"
check_eq "uprobe attaches as root" True "$(jq_ "$T/c.json" 'print(item("uprobe")["ok"])')"
check_eq "tracefs: mounted, and needs no cap_sys_admin" "True False" \
	"$(jq_ "$T/c.json" 'print(item("tracefs")["ok"], "cap_sys_admin" in d["capabilities_needed"])')"
check_eq "btf as /sys/kernel/btf/vmlinux" "$([ -r /sys/kernel/btf/vmlinux ] && echo True || echo False)" \
	"$(jq_ "$T/c.json" 'print(item("btf")["ok"])')"
# first probes: a fact read from the kernel's setting, as the file says
if [ "$(cat /sys/kernel/rcu_expedited 2>/dev/null)" = 1 ]; then fp=rcu_expedited=1; else fp="wait an RCU grace period"; fi
check_eq "first probes: always ✔, its detail as /sys/kernel/rcu_expedited says ($fp)" "True True" \
	"$(jq_ "$T/c.json" "i = item('first probes'); print(i['ok'], '$fp' in i['detail'])")"
check_eq "kernel release as uname -r" "True" "$(jq_ "$T/c.json" "print('$(uname -r)' in item('kernel')['detail'])")"
check_eq "capabilities_needed here (uprobe_multi, process events, tracefs mounted)" \
	"cap_bpf cap_dac_read_search cap_perfmon cap_sys_ptrace" \
	"$(jq_ "$T/c.json" 'print(" ".join(sorted(d["capabilities_needed"])))')"
"$GPUBPF" check >"$T/c.txt" 2>&1
check_eq "text: one ✔/✘ line per fact" "$(jq_ "$T/c.json" 'print(len(d["checks"]))')" \
	"$(sed '/^GPU libraries/q' "$T/c.txt" | grep -cE '^(✔|✘) ')"
check_true "text: a ✘ line for fentry with what is lost and a fix line" \
	bash -c "[ $fe = True ] || { grep -A1 '^✘ fentry' '$T/c.txt' | grep -q 'fix:'; }"

# a non-root caller: without capabilities, and with exactly capabilities_needed
if ! command -v setpriv >/dev/null; then skip "check as nobody" "setpriv not installed"; exit 0; fi
CAPS=$(jq_ "$T/c.json" 'print(",".join("+" + c[4:] for c in d["capabilities_needed"]))')
(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUBPF" check --json >"$T/n.json" 2>/dev/null)
check_eq "nobody without capabilities: exit 1" 1 "$?"
check_eq "nobody: capabilities ✘ naming every missing one, with a setpriv fix" "False True True" \
	"$(jq_ "$T/n.json" 'c = item("capabilities"); print(c["ok"], all(x in c["detail"] for x in d["capabilities_needed"]), "setpriv" in c["fix"])')"
check_eq "nobody: uprobe_multi not probed, said so" "False True" \
	"$(jq_ "$T/n.json" 'c = item("uprobe_multi"); print(c["ok"], "not probed" in c["detail"])')"
(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=$CAPS --ambient-caps=$CAPS \
	"$GPUBPF" check --json >"$T/nc.json" 2>/dev/null)
check_eq "nobody with exactly capabilities_needed ($CAPS): exit 0" 0 "$?"
check_eq "nobody with them: capabilities ✔, uprobe_multi ✔" "True True" \
	"$(jq_ "$T/nc.json" 'print(item("capabilities")["ok"], item("uprobe_multi")["ok"])')"

"$GPUBPF" check --bogus >/dev/null 2>"$T/bad.err"
check_eq "unknown option: exit 2" 2 "$?"
"$GPUBPF" check extra >/dev/null 2>"$T/bad.err"
rc=$?
check_true "an argument: exit 2, one line naming it ($(head -c 120 "$T/bad.err"))" \
	bash -c "[ $rc = 2 ] && [ \$(wc -l <'$T/bad.err') = 1 ] && grep -q extra '$T/bad.err'"
