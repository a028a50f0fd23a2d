#!/usr/bin/env bash
# cli_refuse.sh - nonsense on the command line is refused in one line that
# names the cause, exit 2, nothing on stdout: contradictory flags, an empty
# or inverted window, a window past the trace's end (the message gives the
# trace's span), numbers that are not finite decimals, for every command
# that takes --from/--to (view, report, export) and the other number
# options. No BPF: the commands stop before any probe is loaded.
source "$(dirname "$0")/../lib.sh"
G=$ROOT/tests/fixtures/sbt/golden/v1-mixed.sbt

# refuse DESC PATTERN ARGS...: exit 2, one stderr line matching PATTERN, no stdout
refuse() {
	local d=$1 pat=$2 rc n; shift 2
	"$GPUBPF" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	n=$(wc -l <"$T/err")
	if [ "$rc" = 2 ] && [ "$n" = 1 ] && grep -qE -- "$pat" "$T/err" && [ ! -s "$T/out" ]; then
		pass "$d"
	else
		fail "$d (rc $rc, $n stderr lines, $(wc -c <"$T/out") bytes out: $(head -c 200 "$T/err" | tr '\n' '|'))"
	fi
}

refuse "report --json --csv: two formats" "--json and --csv both given" report --json --csv "$G"
refuse "report --csv --json: two formats" "--json and --csv both given" report --csv --json "$G"
refuse "report --html with --json" "--html writes one trace's report as a page: not with --json" report --html "$T/p.html" --json "$G"
refuse "report --html with --baseline" "not with --json, --csv or --baseline" report --html "$T/p.html" --baseline "$G" "$G"
cp "$G" "$T/in.sbt"
refuse "report --html onto its input" "--html .*: name a new file for the page, not the trace" report --html "$T/in.sbt" "$T/in.sbt"
check_true "report --html onto its input: the trace intact" cmp -s "$G" "$T/in.sbt"
"$GPUBPF" report --html "$T/nodir/p.html" "$G" >"$T/out" 2>"$T/err"
rc=$?
check_true "report --html into a missing directory: exit 1, one line naming it (rc $rc: $(head -c 150 "$T/err"))" \
	bash -c "[ $rc = 1 ] && [ \$(wc -l <'$T/err') = 1 ] && grep -q nodir '$T/err' && [ ! -e '$T/nodir' ]"
for cmd in view report "export -f json -o $T/x.json"; do
	c=${cmd%% *}
	# shellcheck disable=SC2086
	{
	refuse "$c: inverted window" "empty window: --to 0.1 is not after --from 0.5" $cmd --from 0.5 --to 0.1 "$G"
	refuse "$c: empty window" "empty window: --to 0.3 is not after --from 0.3" $cmd --from 0.3 --to 0.3 "$G"
	refuse "$c: --to 0" "--to 0 leaves no time" $cmd --to 0 "$G"
	refuse "$c: --from twice" "--from given twice" $cmd --from 0.1 --from 0.2 "$G"
	refuse "$c: window past the end names the span" "--from 5 is past the trace's end: the trace spans 0.000–0.963 s" \
		$cmd --from 5 "$G"
	for v in nan inf -inf 1e999 -1 0x10 1s ""; do
		refuse "$c: --from '$v'" "bad --from '$v': give a finite number of seconds" $cmd --from "$v" "$G"
	done
	refuse "$c: --to nan" "bad --to 'nan'" $cmd --to nan "$G"
	}
done
check_true "export: no file left by a refused window" [ ! -e "$T/x.json" ]
# a window inside the trace still works, and one ending past it too
check_eq "view --from 0.5 --to 100: events in the window" 0 \
	"$("$GPUBPF" view --from 0.5 --to 100 "$G" >/dev/null 2>&1; echo $?)"
refuse "report --idle-ms nan" "bad --idle-ms 'nan'" report --idle-ms nan "$G"
refuse "report --jit-ms inf" "bad --jit-ms 'inf'" report --jit-ms inf "$G"
refuse "record -d nan" "bad duration 'nan'" record -d nan -o "$T/r.sbt"
refuse "record -d inf" "bad duration 'inf'" record -d inf -o "$T/r.sbt"
refuse "record --flight nan" "bad --flight 'nan'" record --flight nan -o "$T/r.sbt"
refuse "top -i inf" "bad --interval 'inf'" top -i inf
refuse "dump --timeout nan" "bad --timeout 'nan'" dump --timeout nan
refuse "steps --json --csv: two formats" "--json and --csv both given" steps --json --csv "$G"
refuse "steps --pid x" "--pid x: not a process id" steps --pid x "$G"
refuse "steps without a trace" "give one trace file" steps
refuse "symbolize without -o" "give one trace and -o OUT" symbolize "$G"
ln -s "$G" "$T/link.sbt"
refuse "symbolize onto its input (a link to it)" "is the input" symbolize "$G" -o "$T/link.sbt"
check_true "symbolize left the input as it was" cmp -s "$G" "$T/link.sbt"
check_true "record left no file behind" [ ! -e "$T/r.sbt" ]
