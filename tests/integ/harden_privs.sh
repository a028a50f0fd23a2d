#!/usr/bin/env bash
# Hardening 7: output files are 0600 and given to the sudo caller; no write
# through a symlink (dangling, or planted in a sticky world-writable dir);
# another user's file in a sticky dir is never written in place (it is
# replaced by a new inode, so a hard link to it keeps its contents); the
# Prometheus endpoint listens on loopback only unless told otherwise.
source "$(dirname "$0")/../lib.sh"
need_bpf "privileges"
if [ ! -x "$WL/cuda_work" ]; then skip "privileges" "no workloads: run make workloads"; exit 0; fi
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"
rec() {	# OUT: a short recording to OUT; rc in $?
	"$GPUBPF" record --lib "$LIB" -o "$1" -- "$WL/cuda_work" -l "$LIB" -n 10 >/dev/null 2>"$T/err"
}

# 1. mode and owner through sudo
SUDO_UID=65534 SUDO_GID=65534 rec "$T/sudo.sbt"
check_eq "record through sudo exits 0" 0 "$?"
check_eq "output mode 0600" 600 "$(stat -c %a "$T/sudo.sbt")"
check_eq "output owned by the sudo caller" "65534:65534" "$(stat -c %u:%g "$T/sudo.sbt")"

# 2. a dangling symlink: neither followed nor its target created
ln -s "$T/nothere" "$T/dangling.sbt"
rec "$T/dangling.sbt"
rc=$?
check_true "dangling symlink refused (rc $rc, $(head -1 "$T/err"))" [ $rc != 0 ]
check_true "dangling symlink's target not created" [ ! -e "$T/nothere" ]
check_true "the symlink itself left alone" [ -L "$T/dangling.sbt" ]

# 3. a symlink planted by another user in a sticky world-writable dir
mkdir -m 1777 "$T/sticky"
echo precious >"$T/victim"
ln -s "$T/victim" "$T/sticky/link.sbt"
chown -h 65534:65534 "$T/sticky/link.sbt"
rec "$T/sticky/link.sbt"
rc=$?
check_true "symlink in a sticky dir refused (rc $rc)" [ $rc != 0 ]
check_eq "symlink target untouched" precious "$(cat "$T/victim")"
check_eq "one error line naming the cause" 1 "$(grep -c . "$T/err")"

# 4. another user's regular file in the sticky dir: not written in place
echo "nobody's data" >"$T/sticky/theirs.sbt"
chown 65534:65534 "$T/sticky/theirs.sbt"
chmod 0666 "$T/sticky/theirs.sbt"
ln "$T/sticky/theirs.sbt" "$T/hardlink"	# what an attacker keeps to read or to point elsewhere
ino=$(stat -c %i "$T/sticky/theirs.sbt")
rec "$T/sticky/theirs.sbt"
rc=$?
check_eq "the inode another user owns keeps its contents" "nobody's data" "$(cat "$T/hardlink")"
if [ $rc = 0 ]; then
	check_true "the trace is a new inode" [ "$(stat -c %i "$T/sticky/theirs.sbt")" != "$ino" ]
	check_eq "the new file is root's and 0600" "0:0 600" "$(stat -c '%u:%g %a' "$T/sticky/theirs.sbt")"
else
	pass "record refused another user's file ($(head -1 "$T/err"))"
fi
# a FIFO planted there never receives trace data (and record does not hang)
mkfifo "$T/sticky/fifo.sbt"
timeout 30 "$GPUBPF" record --lib "$LIB" -o "$T/sticky/fifo.sbt" -- true 2>"$T/err"
rc=$?
check_true "FIFO output refused, no hang (rc $rc)" [ $rc != 0 -a $rc != 124 ]

# 5. Prometheus: loopback unless told otherwise
if ! command -v ss >/dev/null; then skip "prometheus bind" "no ss (iproute2)"; exit 0; fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -f "$T/ready"
bg "$GPUBPF" top -b --quiet --prometheus ":$port" --lib "$LIB" --ready-file "$T/ready" 2>"$T/top.err"
top_pid=$!
if ! wait_for "$T/ready" 60; then fail "top --prometheus started ($(cat "$T/top.err"))"; exit 0; fi
for ((i = 0; i < 50; i++)); do ss -ltnH "sport = :$port" | grep -q . && break; sleep 0.1; done
addrs=$(ss -ltnH "sport = :$port" | awk '{print $4}' | sort -u | tr '\n' ' ')
check_eq "--prometheus :PORT listens on 127.0.0.1 only" "127.0.0.1:$port " "$addrs"
kill -9 $top_pid
