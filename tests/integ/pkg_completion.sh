#!/usr/bin/env bash
# docs/bash-completion/gpubpf, loaded in bash with bash-completion's helpers:
# the completion function called as bash calls it (COMP_WORDS, COMP_CWORD)
# completes commands, options (both from gpubpf's --help), option arguments
# by their name in --help (PID, DIR, FILE/TRACE), and .sbt trace files.
source "$(dirname "$0")/../lib.sh"
BC=/usr/share/bash-completion/bash_completion
if [ ! -r "$BC" ]; then
	skip "bash completion" "no $BC (apt-get install bash-completion; make deps)"
	exit 0
fi
mkdir -p "$T/bin" "$T/cwd/sub"
ln -s "$GPUBPF" "$T/bin/gpubpf"
touch "$T/cwd/a.sbt" "$T/cwd/b.log"
sleep 300 & _bg_pids+=($!)
SLEEPER=$!
# comp WORDS...: what _gpubpf offers for the last word, sorted, one line
cat >"$T/comp.sh" <<EOS
source "$BC"
source "$ROOT/docs/bash-completion/gpubpf"
PATH="$T/bin:\$PATH"
cd "$T/cwd"
complete -p gpubpf
COMP_WORDS=("\$@"); COMP_CWORD=\$((\$# - 1)); COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}
COMPREPLY=()
_gpubpf gpubpf "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
[ \${#COMPREPLY[@]} = 0 ] || printf '%s\n' "\${COMPREPLY[@]}" | sort | tr '\n' ' '
EOS
comp() { bash --norc --noprofile "$T/comp.sh" "$@" 2>/dev/null | tail -n +2; }

check_eq "complete -p: _gpubpf is gpubpf's completion" "complete -F _gpubpf gpubpf" \
	"$(bash --norc --noprofile "$T/comp.sh" gpubpf x 2>/dev/null | head -1)"
# "re" is also the start of report: bash shows both, "rec" completes
check_eq "gpubpf re<TAB> -> record report" "record report " "$(comp gpubpf re)"
check_eq "gpubpf rec<TAB> -> record" "record " "$(comp gpubpf rec)"
check_eq "gpubpf record --st<TAB> -> --stack" "--stack " "$(comp gpubpf record --st)"
check_eq "gpubpf top --prom<TAB> -> top's options" "--prom-kernels --prometheus " "$(comp gpubpf top --prom)"
check_eq "gpubpf record --stack <TAB> -> the modes" "dwarf dwarf= fp none " "$(comp gpubpf record --stack '')"
check_eq "gpubpf export -f pp<TAB> -> pprof" "pprof " "$(comp gpubpf export -f pp)"
check_true "gpubpf record -p <TAB> offers running pids" grep -qw "$SLEEPER" <<<"$(comp gpubpf record -p '')"
check_true "gpubpf stuck --pid <TAB> offers running pids" grep -qw "$SLEEPER" <<<"$(comp gpubpf stuck --pid '')"
check_eq "gpubpf info <TAB> -> .sbt files and directories" "a.sbt sub " "$(comp gpubpf info '')"
check_eq "gpubpf record -o <TAB> -> any file" "a.sbt b.log sub " "$(comp gpubpf record -o '')"
check_eq "gpubpf record --xray-dir <TAB> -> directories" "sub " "$(comp gpubpf record --xray-dir '')"
check_eq "gpubpf record -d <TAB> (seconds) -> nothing" "" "$(comp gpubpf record -d '')"
check_true "gpubpf record -- sle<TAB> -> commands" grep -qw sleep <<<"$(comp gpubpf record -a -- sle)"
