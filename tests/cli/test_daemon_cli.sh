#!/usr/bin/env bash
# acceltrace daemon and trigger: help against docs/daemon.md (every key of
# the settings table is a flag), bad flags and values refused with exit 2
# and a message naming them, a trigger with no daemon exits 1 saying why,
# a daemon whose socket path is taken by a file refuses to start. Nothing
# here needs root: no probe is attached.
source tests/harness/test.sh

expect_exit 0 "daemon --help" -- "$ACCELTRACE" daemon --help
help=$out
contains "$help" "Usage: acceltrace daemon" "daemon --help"
keys=$(sed -n '/^## Settings/,/^## /p' docs/daemon.md | grep -o '^| `[a-z-]*`' | tr -d '|` ')
[[ -n $keys ]] || fail "docs/daemon.md lists no settings"
for k in $keys; do
	contains "$help" "--$k" "docs/daemon.md's key '$k' is a flag in --help"
done
# And the other way: every flag of --help is in the docs' table.
for f in $(grep -o -- '--[a-z][a-z-]*' <<<"$help" | sort -u); do
	case $f in --config|--help|--json|--verbose) continue ;; esac
	grep -q "^| \`${f#--}\`" docs/daemon.md || fail "--help's $f is not in docs/daemon.md"
done

expect_exit 0 "trigger --help" -- "$ACCELTRACE" trigger --help
contains "$out" "--at TIME" "trigger --help shows --at"

expect_exit 2 "bad duration" -- "$ACCELTRACE" daemon --flight-recorder soon
contains "$err" "flight-recorder" "the bad key is named"
expect_exit 2 "bad listen" -- "$ACCELTRACE" daemon --listen nowhere
contains "$err" "ADDR:PORT" "listen's form is said"
expect_exit 2 "stray argument" -- "$ACCELTRACE" daemon extra
expect_exit 1 "missing config" -- "$ACCELTRACE" daemon --config /nonexistent/at.conf
contains "$err" "/nonexistent/at.conf" "the missing file is named"

expect_exit 2 "bad --at" -- "$ACCELTRACE" trigger --at tomorrow
contains "$err" "--at" "--at named"
expect_exit 2 "bad --session" -- "$ACCELTRACE" trigger --session ../x
contains "$err" "--session" "--session named"
tmp=$(mktemp -d)
expect_exit 1 "no daemon" -- "$ACCELTRACE" trigger --socket "$tmp/none.sock"
contains "$err" "$tmp/none.sock" "the socket is named"

# A file where the socket should be: not replaced, the daemon refuses.
: >"$tmp/taken.sock"
expect_exit 1 "socket path taken" -- "$ACCELTRACE" daemon --socket "$tmp/taken.sock" --listen off
contains "$err" "not a socket" "says the path is not a socket"
[[ -f $tmp/taken.sock ]] || fail "the file was removed"
rm -rf "$tmp"
test_done
