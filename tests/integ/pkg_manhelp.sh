#!/usr/bin/env bash
# The man pages say what --help says: for gpubpf and each command that
# 'gpubpf --help' lists, the options of 'gpubpf COMMAND --help' and those of
# gpubpf-COMMAND(1) (made by make man) are the same set, none missing on
# either side; gpubpf(1) lists every command. A command without a page fails
# here by name.
source "$(dirname "$0")/../lib.sh"
REL=${BUILD#"$ROOT"/}
SAN=0
ldd "$GPUBPF" 2>/dev/null | grep -q libasan && SAN=1
if ! command -v help2man >/dev/null; then
	skip "man pages vs --help" "no help2man (make deps)"
	exit 0
fi
if ! make -C "$ROOT" --no-print-directory BUILD="$REL" SAN=$SAN man >"$T/man.log" 2>&1; then
	fail "make man ($(tail -3 "$T/man.log" | tr '\n' ' '))"
	exit 0
fi
M=$BUILD/man

# option names of the option lines of a --help text (help2man takes those
# indented 1 to 10: a line indented up to 16 is counted here, to be reported
# when help2man did not take it; the tag ends at two spaces):
# "-p, --pid PID" -> -p --pid
help_opts() {
	awk '/^ +-/ && match($0, /^ +/) && RLENGTH <= 16 {
		t = substr($0, RLENGTH + 1); sub(/  .*/, "", t)
		n = split(t, w, /[ ,]+/)
		for (i = 1; i <= n && w[i] ~ /^-/; i++) { o = w[i]; sub(/[[=].*/, "", o); print o }
	}' | sort -u
}
# option names of a page's tagged paragraphs (.TP/.HP: the next line is the tag)
man_opts() {
	awk '/^\.(TP|HP)/ { tag = 1; next }
		tag { tag = 0; gsub(/\\f[BRIP]|\\,|\\\//, ""); gsub(/\\-/, "-"); print "  " $0 "  x" }' "$1" | help_opts
}
# "NAME: missing in the man page: ...; missing in --help: ..." or nothing
compare() {	# NAME HELPFILE PAGE
	local h m a b
	h=$(help_opts <"$2") m=$(man_opts "$3")
	if [ -z "$h" ]; then echo "$1: --help has no options"; return; fi
	a=$(comm -23 <(echo "$h") <(echo "$m") | tr '\n' ' ')
	b=$(comm -13 <(echo "$h") <(echo "$m") | tr '\n' ' ')
	if [ -n "$a$b" ]; then echo "$1: missing in the man page: ${a:-none}; missing in --help: ${b:-none}"; fi
}

cmds=$("$GPUBPF" --help | awk '/^Commands:$/ { on = 1; next } on && /^$/ { exit } on && $1 != "version" { print $1 }')
check_true "gpubpf --help lists commands" test -n "$cmds"
for c in $cmds; do
	p=$M/gpubpf-$c.1
	if [ ! -f "$p" ]; then
		fail "gpubpf-$c.1: no man page for the command $c (docs/man/mkman.sh makes one per command in gpubpf --help)"
		continue
	fi
	"$GPUBPF" "$c" --help >"$T/$c.help" 2>&1
	check_eq "gpubpf-$c(1) and 'gpubpf $c --help' have the same options" "" "$(compare "$c" "$T/$c.help" "$p")"
done
check_eq "no page for a command --help does not list" "" \
	"$(cd "$M" && for p in gpubpf-*.1; do c=${p#gpubpf-}; c=${c%.1}; grep -qx "$c" <<<"$cmds" || echo "$p"; done)"
"$GPUBPF" --help >"$T/main.help"
check_eq "gpubpf(1) and 'gpubpf --help' have the same options" "" "$(compare gpubpf "$T/main.help" "$M/gpubpf.1" | grep -v 'has no options')"
listed=$(awk '/^\.SS "Commands:"/ { on = 1; next } /^\.S[SH]/ { on = 0 } on && /^\.TP/ { getline; print $1 }' "$M/gpubpf.1" | sort)
check_eq "gpubpf(1) lists every command" "$(echo "$cmds" version | tr ' ' '\n' | sort | tr '\n' ' ')" "$(echo $listed | tr ' ' '\n' | sort | tr '\n' ' ')"
check_eq "gpubpf(1) SEE ALSO names every command's page" "$(echo "$cmds" | wc -w)" \
	"$(grep -c '^\.BR gpubpf-[a-z]* (1)' "$M/gpubpf.1")"

# the comparison itself: an option only in --help, or only in the page, is named
cp "$T/record.help" "$T/extra.help"
printf '      --zz-new N       an option the page lacks\n' >>"$T/extra.help"
check_eq "a --help option missing in the page is reported" \
	"record: missing in the man page: --zz-new ; missing in --help: none" "$(compare record "$T/extra.help" "$M/gpubpf-record.1")"
grep -v -- '--lean' "$T/record.help" >"$T/less.help"
check_eq "a page option missing in --help is reported" \
	"record: missing in the man page: none; missing in --help: --lean " "$(compare record "$T/less.help" "$M/gpubpf-record.1")"
