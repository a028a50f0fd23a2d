#!/usr/bin/env bash
# docs/man/mkman.sh GPUBPF OUTDIR VERSION LIBDIR - the man pages, made by
# help2man from the commands' own --help: gpubpf.1, and gpubpf-COMMAND.1 for
# every command 'gpubpf --help' lists (a new command gets its page without a
# change here). The options are written once, in the --help text.
# docs/man/gpubpf[-COMMAND].h2m adds what --help does not say (EXIT STATUS,
# FILES, PERMISSIONS, ENVIRONMENT); a command without one gets default.h2m.
# @LIBDIR@ in them becomes LIBDIR. Sections, see help2man(1) "INCLUDE FILES".
set -euo pipefail
if [ $# != 4 ]; then
	echo "usage: $0 GPUBPF OUTDIR VERSION LIBDIR" >&2
	exit 2
fi
G=$(realpath "$1") OUT=$2 VERSION=$3 LIBDIR=$4
D=$(cd "$(dirname "$0")" && pwd)
if ! command -v help2man >/dev/null; then
	echo "mkman: help2man is missing: apt-get install help2man (make deps)" >&2
	exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/inc"

# --help as help2man reads it: "EXAMPLES:" is its "Examples:" section, and an
# example line gets a "$ " prompt so that it stays verbatim
wrapper() {	# NAME ARGS...: OUT/bin/NAME runs "gpubpf ARGS --help" through the filter
	local name=$1
	shift
	cat >"$OUT/bin/$name" <<EOS
#!/bin/sh
"$G" $* "\$@" 2>&1 | awk '
	/^EXAMPLES:\$/ { print "Examples:"; ex = 1; next }
	ex && /^  [^ ]/ { sub(/^  /, "  \$ ") }
	{ print }'
EOS
	chmod +x "$OUT/bin/$name"
}

page() {	# NAME SUMMARY SEE_ALSO ARGS...
	local name=$1 summary=$2 see=$3 inc=$D/$1.h2m
	shift 3
	[ -f "$inc" ] || inc=$D/default.h2m
	sed "s|@LIBDIR@|$LIBDIR|g" "$inc" >"$OUT/inc/$name.h2m"
	printf '[SEE ALSO]\n%s\n' "$see" >"$OUT/inc/$name.see.h2m"
	wrapper "$name" "$@"
	help2man --no-info --section=1 --manual="gpubpf manual" --source="gpubpf $VERSION" \
		--version-string="$VERSION" --name="$summary" \
		--include="$OUT/inc/$name.h2m" --include="$OUT/inc/$name.see.h2m" \
		--output="$OUT/$name.1.tmp" "$OUT/bin/$name"
	# examples verbatim, one a line, at the section's indent
	awk '/^\.SH / { if (ex) print ".fi"; ex = ($0 ~ /^\.SH EXAMPLES/); print; if (ex) print ".nf"; next }
		ex && /^\.(IP|br)$/ { next }
		{ print } END { if (ex) print ".fi" }' "$OUT/$name.1.tmp" >"$OUT/$name.1"
	rm "$OUT/$name.1.tmp"
}

# the commands: "Commands:" up to the first empty line, "NAME  summary";
# version is main's own and has no --help
mapfile -t lines < <("$G" --help | awk '/^Commands:$/ { on = 1; next } on && /^$/ { exit }
	on && $1 != "version" { print }')
if [ ${#lines[@]} = 0 ]; then
	echo "mkman: '$G --help' lists no commands" >&2
	exit 1
fi
see=""
for l in "${lines[@]}"; do
	read -r c summary <<<"$l"
	help=$("$G" "$c" --help 2>&1 || true)
	if ! grep -q "^Usage: gpubpf $c\\b" <<<"$help"; then
		echo "mkman: 'gpubpf $c --help' prints no 'Usage: gpubpf $c ...' line: give the command a --help text" >&2
		exit 1
	fi
	page "gpubpf-$c" "$summary" ".BR gpubpf (1)" "$c"
	see="$see${see:+,
}.BR gpubpf-$c (1)"
done
page gpubpf "system-wide GPU tracer built on eBPF" "$see" ""
