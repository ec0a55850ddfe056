#!/usr/bin/env bash
# The command line's contract: help for the tool and each command, clear
# messages and exit status 2 for unknown commands and flags, JSON that a JSON
# parser accepts, errors as JSON in JSON mode.
source tests/lib/test.sh

expect_exit 0 "--help" -- "$ACCELTRACE" --help
contains "$out" "Usage: acceltrace" "--help shows usage"
contains "$out" "doctor" "--help lists doctor"

expect_exit 0 "help doctor" -- "$ACCELTRACE" help doctor
contains "$out" "Usage: acceltrace doctor" "help doctor"

expect_exit 0 "doctor --help" -- "$ACCELTRACE" doctor --help
contains "$out" "Exit status" "doctor --help explains exit status"

expect_exit 0 "--version" -- "$ACCELTRACE" --version
contains "$out" "acceltrace " "--version"

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

# In JSON mode errors are JSON lines on stderr.
expect_exit 2 "JSON-mode error" -- "$ACCELTRACE" -j doctor --bogus
level=$(json_get "$err" 'd["level"]') || fail "JSON-mode error is not JSON: $err"
[[ $level == error ]] || fail "JSON-mode error level: $level"
msg=$(json_get "$err" 'd["message"]')
contains "$msg" "--bogus" "JSON error names the flag"

test_done
