#!/usr/bin/env bash
# The command line's contract: help for the tool and each command, clear
# messages and exit status 2 for unknown commands and flags, JSON that a JSON
# parser accepts, errors as JSON in JSON mode.
source tests/harness/test.sh

expect_exit 0 "--help" -- "$ACCELTRACE" --help
contains "$out" "Usage: acceltrace" "--help shows usage"
contains "$out" "doctor" "--help lists doctor"

expect_exit 0 "help doctor" -- "$ACCELTRACE" help doctor
contains "$out" "Usage: acceltrace doctor" "help doctor"

expect_exit 0 "doctor --help" -- "$ACCELTRACE" doctor --help
contains "$out" "Exit status" "doctor --help explains exit status"

expect_exit 0 "--version" -- "$ACCELTRACE" --version
contains "$out" "acceltrace " "--version"

# -V and the version command say what --version says.
v=$out
expect_exit 0 "-V" -- "$ACCELTRACE" -V
[[ $out == "$v" ]] || fail "-V printed '$out', --version '$v'"
expect_exit 0 "version" -- "$ACCELTRACE" version
[[ $out == "$v" ]] || fail "version printed '$out', --version '$v'"
expect_exit 2 "version with an argument" -- "$ACCELTRACE" version extra

# Did you mean: a mistyped command, a mistyped option of a command (read
# from that command's --help), a mistyped global option, and nothing for a
# word far from every name.
expect_exit 2 "mistyped command" -- "$ACCELTRACE" reprot
contains "$err" "unknown command 'reprot' (did you mean 'report'?)" "reprot -> report"
expect_exit 2 "help for a mistyped command" -- "$ACCELTRACE" help recrod
contains "$err" "did you mean 'record'?" "help recrod -> record"
expect_exit 2 "mistyped record option" -- "$ACCELTRACE" record --durration 2s --pid 1
contains "$err" "unknown option '--durration' (did you mean '--duration'?)" "--durration -> --duration"
contains "$err" "acceltrace record --help" "still points at record's help"
expect_exit 2 "mistyped daemon option" -- "$ACCELTRACE" daemon --flight-recoder 10s
contains "$err" "did you mean '--flight-recorder'?" "--flight-recoder -> --flight-recorder"
expect_exit 2 "mistyped option with a value" -- "$ACCELTRACE" convert --too=json x
contains "$err" "did you mean '--to'?" "--too=json -> --to"
expect_exit 2 "ambiguous abbreviation" -- "$ACCELTRACE" record --d 1s
contains "$err" "'--duration'" "--d offers --duration"
contains "$err" "'--delay'" "--d offers --delay"
expect_exit 2 "mistyped global option" -- "$ACCELTRACE" --verison
contains "$err" "did you mean '--version'?" "--verison -> --version"
expect_exit 2 "unknown command far from all" -- "$ACCELTRACE" frobnicate
[[ $err != *"did you mean"* ]] || fail "frobnicate got a suggestion: $err"

# Every command's --help ends with examples that name the command.
for c in record report convert probes doctor daemon trigger help version; do
	expect_exit 0 "$c --help" -- "$ACCELTRACE" $c --help
	contains "$out" "Examples:" "$c --help has examples"
	contains "$out" "  acceltrace " "$c --help: an example invocation"
done

expect_exit 2 "no command" -- "$ACCELTRACE"
contains "$err" "Usage:" "no command prints usage on stderr"

expect_exit 2 "unknown command" -- "$ACCELTRACE" frobnicate
contains "$err" "unknown command 'frobnicate'" "unknown command is named"
[[ -z $out ]] || fail "unknown command printed to stdout: $out"

expect_exit 2 "unknown global flag" -- "$ACCELTRACE" --frob doctor
contains "$err" "unknown option '--frob'" "unknown global flag is named"

expect_exit 2 "unknown doctor flag" -- "$ACCELTRACE" doctor --bogus
contains "$err" "unknown option '--bogus'" "unknown command flag is named"
contains "$err" "acceltrace doctor --help" "points at the command's help"

expect_exit 2 "unknown short flag" -- "$ACCELTRACE" doctor -Z
contains "$err" "unknown option '-Z'" "unknown short flag is named"

expect_exit 2 "stray argument" -- "$ACCELTRACE" doctor extra
contains "$err" "unexpected argument 'extra'" "stray argument is named"

expect_exit 2 "help for unknown command" -- "$ACCELTRACE" help nosuch
contains "$err" "unknown command 'nosuch'" "help names the unknown command"

# record and probes: help, and every kind of bad invocation, exit 2.
expect_exit 0 "record --help" -- "$ACCELTRACE" record --help
contains "$out" "--duration TIME" "record --help lists --duration"
contains "$out" "Exit status" "record --help explains exit status"
expect_exit 0 "probes --help" -- "$ACCELTRACE" probes --help
contains "$out" "single-steps" "probes --help explains single-stepping"
expect_exit 2 "record without a target" -- "$ACCELTRACE" record --duration 1s
contains "$err" "name exactly one target" "record names the missing target"
expect_exit 2 "record with two targets" -- "$ACCELTRACE" record --pid 1 -a
contains "$err" "name exactly one target" "record refuses two targets"
expect_exit 2 "record bad duration" -- "$ACCELTRACE" record --pid 1 --duration 5x
contains "$err" "bad value '5x' for --duration" "bad duration named"
expect_exit 2 "record bad ring size" -- "$ACCELTRACE" record --pid 1 --ringbuf-size 1000
contains "$err" "power of two" "ring size must be a power of two"
expect_exit 2 "record bad pid" -- "$ACCELTRACE" record --pid abc
contains "$err" "bad value 'abc' for --pid" "bad pid named"
expect_exit 2 "record --steps 0" -- "$ACCELTRACE" record --pid 1 --steps 0
contains "$err" "bad value '0' for --steps" "--steps 0 named"
expect_exit 2 "record --steps too many" -- "$ACCELTRACE" record --pid 1 --steps 10000001
contains "$err" "from 1 to 10000000" "--steps says its range"
expect_exit 2 "record --children alone" -- "$ACCELTRACE" record -a --children
contains "$err" "--children needs" "--children needs a pid or command"
expect_exit 2 "record --windows without an end" -- "$ACCELTRACE" record --pid 1 --windows 2
contains "$err" "--windows needs" "--windows needs an end"
expect_exit 2 "record bad session" -- "$ACCELTRACE" record --pid 1 --session a/b
contains "$err" "without '/'" "session names a directory"
expect_exit 2 "probes without a target" -- "$ACCELTRACE" probes
contains "$err" "--pid PID or -a" "probes names what it needs"
# A dead pid is a failure of the run (1), in JSON mode too, not a crash code.
expect_exit 1 "probes on a dead pid" -- "$ACCELTRACE" probes --pid 999999999
contains "$err" "999999999" "probes names the dead pid"
expect_exit 1 "probes -j on a dead pid" -- "$ACCELTRACE" probes -j --pid 999999999

# Failures said first, before any work: a dead pid before a probe is
# loaded (no "attaching" phase), a missing daemon with how to start one,
# and no privilege in one short sentence that leads with it.
expect_exit 1 "record on a dead pid" -- "$ACCELTRACE" record --pid 999999999 --logdir "$TEST_TMP/l"
contains "$err" "no process with pid 999999999" "record names the dead pid"
[[ $err != *attaching* && $err != *probes* ]] ||
	fail "record on a dead pid did work first: $err"
expect_exit 1 "trigger with no daemon" -- "$ACCELTRACE" trigger --socket "$TEST_TMP/none.sock"
contains "$err" "no daemon is running at $TEST_TMP/none.sock" "trigger says none runs"
contains "$err" "acceltrace daemon" "trigger says how to start one"
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
	as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	for run in "record --pid 1" "daemon --socket $TEST_TMP/d.sock --listen off"; do
		cmd=${run%% *}
		# shellcheck disable=SC2086 # the words of $run are its arguments
		expect_exit 1 "$cmd unprivileged" -- "${as_nobody[@]}" "$ACCELTRACE" $run \
			--logdir "$TEST_TMP/l"
		contains "$err" "error: $cmd needs root: CAP_BPF and CAP_PERFMON" \
			"$cmd leads with what it needs"
		((${#err} < 300)) || fail "$cmd unprivileged: a ${#err}-character error: $err"
	done
else
	skip_part "the unprivileged runs need root and setpriv"
fi

# Every option a command's --help shows is documented in its page; the
# count guards the loop against a help layout it no longer matches.
for cmd_doc in record:docs/record.md:15 probes:docs/probes.md:3 convert:docs/export.md:2; do
	IFS=: read -r cmd doc least <<<"$cmd_doc"
	n=0
	for opt in $("$ACCELTRACE" "$cmd" --help | grep -oE '^ +(-[a-z], )?--[a-z-]+' |
		     grep -oE -- '--[a-z-]+'); do
		n=$((n + 1))
		[[ $opt == --help || $opt == --json || $opt == --verbose ]] && continue
		grep -q -- "$opt" "$doc" || fail "$cmd $opt is not in $doc"
	done
	((n >= least)) || fail "$cmd --help: $n options found, expected at least $least"
done

# In JSON mode errors are JSON lines on stderr.
expect_exit 2 "JSON-mode error" -- "$ACCELTRACE" -j doctor --bogus
level=$(json_get "$err" 'd["level"]') || fail "JSON-mode error is not JSON: $err"
[[ $level == error ]] || fail "JSON-mode error level: $level"
msg=$(json_get "$err" 'd["message"]')
contains "$msg" "--bogus" "JSON error names the flag"

test_done
