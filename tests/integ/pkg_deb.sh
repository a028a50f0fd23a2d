#!/usr/bin/env bash
# The Debian packages: debian/ builds with dpkg-buildpackage -us -uc -b (in a
# copy of the tree; without the CUDA toolkit with the nocuda profile, then
# without gpubpf-cupti), lintian reports no errors, apt-get installs the
# .debs, the installed gpubpf runs and man finds its pages, the systemd unit
# is installed but not enabled, and purging them leaves nothing behind.
# Build-Depends must be in the Makefile's deps list. Runs once, in the
# normal build's suite (the packages do not depend on the build under test).
source "$(dirname "$0")/../lib.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

# every Build-Depends is something make deps installs
deps=$(awk '/^DEB_PKGS :=/ { on = 1; sub(/^DEB_PKGS :=/, "") } on { print; if ($0 !~ /\\$/) exit }' "$ROOT/Makefile" | tr -d '\\')
bd=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); print; next } on && /^ / { print; next } { on = 0 }' \
	"$ROOT/debian/control" | tr ',' '\n' | sed 's/[(<].*//; s/ //g' | grep -v '^$\|^debhelper-compat$')
missing=$(for p in $bd; do grep -qw -- "$p" <<<"$deps" || echo "$p"; done | tr '\n' ' ')
check_eq "every Build-Depends is in the Makefile's deps target" "" "$missing"

if [ "$BUILD" != "$ROOT/build" ]; then
	skip "Debian packages" "built and installed once, in the normal build's suite"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	skip "Debian packages" "needs root (apt-get install)"
	exit 0
fi
for t in dpkg-buildpackage dh lintian apt-get man; do
	if ! command -v $t >/dev/null; then
		skip "Debian packages" "no $t (make deps)"
		exit 0
	fi
done
for p in gpubpf gpubpf-cupti; do
	if dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q 'installed'; then
		skip "Debian packages" "$p is installed here; the test would replace and purge it"
		exit 0
	fi
done

S=$T/src/gpubpf
mkdir -p "$S"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then	# the tree as git sees it, without build/
	(cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$S"
else
	tar -C "$ROOT" --exclude=./build --exclude=./build-test.log -cf - . | tar -xf - -C "$S"
fi
profile=""
if [ ! -r "$CUDA_HOME/include/cupti.h" ]; then
	profile=nocuda
	echo "pkg_deb: no $CUDA_HOME/include/cupti.h: building with DEB_BUILD_PROFILES=nocuda"
fi
if ! (cd "$S" && dpkg-checkbuilddeps ${profile:+-P $profile}) >"$T/bd.log" 2>&1; then
	skip "Debian packages" "$(tail -1 "$T/bd.log") (make deps)"
	exit 0
fi
t0=$(date +%s%N)
(cd "$S" && DEB_BUILD_PROFILES=$profile CUDA_HOME=$CUDA_HOME dpkg-buildpackage -us -uc -b -j2) >"$T/build.log" 2>&1
rc=$?
echo "pkg_deb: dpkg-buildpackage -b -j2 took $((($(date +%s%N) - t0) / 1000000)) ms"
check_eq "dpkg-buildpackage -us -uc -b exits 0" 0 "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/build.log"; exit 0; }
debs=("$T"/src/gpubpf_*.deb "$T"/src/gpubpf-slurm_*.deb)
[ -z "$profile" ] && debs+=("$T"/src/gpubpf-cupti_*.deb)
for d in "${debs[@]}"; do check_true "package built: ${d##*/}" test -f "$d"; done
lintian --no-cfg --fail-on error "$T"/src/gpubpf_*.changes >"$T/lintian.log" 2>&1
rc=$?
check_eq "lintian --fail-on error exits 0 ($(grep -c '^W:' "$T/lintian.log") warnings)" 0 "$rc"
grep '^[EW]:' "$T/lintian.log"

# what exists now, to tell what the packages leave behind
paths=$(for d in "${debs[@]}"; do dpkg-deb --fsys-tarfile "$d" | tar -t; done | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort -u)
before=$(for p in $paths; do [ -e "$p" ] && echo "$p"; done)
trace_state() { find /etc /lib/systemd /usr/lib/systemd /var/lib/systemd /usr/share/man -name '*gpubpf*' 2>/dev/null | sort; }
state0=$(trace_state)
purge() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 purge -y -qq gpubpf gpubpf-cupti gpubpf-slurm >"$T/purge.log" 2>&1; }
trap 'dpkg-query -W gpubpf >/dev/null 2>&1 && purge; cleanup_test' EXIT

DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${debs[@]}" >"$T/install.log" 2>&1
check_eq "apt-get install ./...deb exits 0" 0 "$?"
check_eq "gpubpf version (the installed /usr/bin/gpubpf)" "gpubpf $(sed -n 's/^VERSION := //p' "$ROOT/Makefile")" "$(cd / && /usr/bin/gpubpf version)"
check_eq "man -w gpubpf" /usr/share/man/man1/gpubpf.1.gz "$(man -w gpubpf 2>&1)"
check_eq "man -w gpubpf-record" /usr/share/man/man1/gpubpf-record.1.gz "$(man -w gpubpf-record 2>&1)"
check_true "bash completion installed" test -f /usr/share/bash-completion/completions/gpubpf
check_true "systemd unit installed" test -f /lib/systemd/system/gpubpf-top.service
check_eq "systemd unit not enabled" "" "$(find /etc/systemd -name 'gpubpf-top.service' 2>/dev/null)"
if [ -z "$profile" ]; then
	check_true "gpubpf-cupti: /usr/lib/gpubpf/libgpubpf_cupti.so" test -r /usr/lib/gpubpf/libgpubpf_cupti.so
fi
check_true "gpubpf-slurm: /usr/lib/gpubpf/libgpubpf_spank.so" test -r /usr/lib/gpubpf/libgpubpf_spank.so
# the plugin finds the packaged binary beside it (PREFIX/bin) without a gpubpf= argument
command -v srun >/dev/null && check_true "gpubpf-slurm: the plugin's srun option, from a plugstack line alone" \
	sh -c 'echo "optional /usr/lib/gpubpf/libgpubpf_spank.so" >"$1/plugstack.conf" &&
	       printf "ClusterName=x\nSlurmctldHost=localhost\nPlugStackConfig=%s/plugstack.conf\nNodeName=localhost\nPartitionName=p Nodes=ALL\n" "$1" >"$1/slurm.conf" &&
	       SLURM_CONF="$1/slurm.conf" srun --help 2>&1 | grep -q -- --gpubpf' _ "$T"

purge
check_eq "apt-get purge exits 0" 0 "$?"
check_eq "dpkg knows neither package any more" "" \
	"$(dpkg-query -W -f='${Package} ${Status}\n' gpubpf gpubpf-cupti gpubpf-slurm 2>/dev/null | grep -v 'not-installed')"
left=$(for p in $paths; do [ -e "$p" ] && ! grep -qx "$p" <<<"$before" && echo "$p"; done)
check_eq "nothing the packages installed is left" "" "$left"
check_eq "no gpubpf file left in /etc, systemd's directories or the man pages" "$state0" "$(trace_state)"
