#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make install DESTDIR=... into a staging root: the binary, the agent, a man
# page per command that man renders without a warning and that says what
# --help says (every option, every example), bash and zsh completion that
# complete commands, options and files, the systemd unit naming the
# installed binary; the installed binary finds the installed agent; make
# uninstall takes all of it away again. A PREFIX other than /usr/local
# moves everything, the unit's paths included.
source tests/harness/test.sh

# A make of our own, not a part of the caller's (make test's) job server.
unset MAKEFLAGS MFLAGS MAKELEVEL
root=$TEST_TMP/root
prefix=/usr/local
make -s install OUTPUT="$OUTPUT" DESTDIR="$root" >"$TEST_TMP/make.log" 2>&1 ||
	{ fail "make install DESTDIR=$root: $(tail -5 "$TEST_TMP/make.log")"; test_done; }

cmds=(record report convert probes doctor daemon trigger)
expected=(bin/acceltrace lib/acceltrace/libacceltrace-agent.so
	  share/man/man8/acceltrace.8 share/bash-completion/completions/acceltrace
	  share/zsh/site-functions/_acceltrace lib/systemd/system/acceltrace.service
	  share/doc/acceltrace/README.md share/doc/acceltrace/daemon.md)
for c in "${cmds[@]}"; do expected+=("share/man/man8/acceltrace-$c.8"); done
for f in "${expected[@]}"; do
	[[ -f $root$prefix/$f ]] || fail "make install did not install $prefix/$f"
done
[[ -x $root$prefix/bin/acceltrace ]] || fail "the installed binary is not executable"
stray=$(find "$root" -type f | grep -v "^$root$prefix/" | head -3)
[[ -z $stray ]] || fail "make install wrote outside \$DESTDIR\$PREFIX: $stray"
bin=$root$prefix/bin/acceltrace
expect_exit 0 "the installed binary runs" -- "$bin" --version
contains "$out" "acceltrace " "installed --version"

# The unit runs the installed binary.
unit=$root$prefix/lib/systemd/system/acceltrace.service
grep -q "^ExecStart=$prefix/bin/acceltrace daemon" "$unit" ||
	fail "the unit does not run $prefix/bin/acceltrace: $(grep ExecStart "$unit")"

# Man pages: rendered without a warning, each with what its --help says.
if command -v man >/dev/null && command -v groff >/dev/null; then
	for c in "" "${cmds[@]}"; do
		page=$root$prefix/share/man/man8/acceltrace${c:+-$c}.8
		MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$TEST_TMP/page" 2>"$TEST_TMP/warn" ||
			fail "man -l $page failed: $(cat "$TEST_TMP/warn")"
		[[ ! -s $TEST_TMP/warn ]] || fail "man -l $page warns: $(head -3 "$TEST_TMP/warn")"
		# The page against --help: every option and every example line.
		# (man renders '\-' as '-' and may join words across lines.)
		text=$(tr -s ' \n' ' ' <"$TEST_TMP/page")
		help=$("$bin" $c --help)
		n=0
		for o in $(grep -E '^ *-' <<<"$help" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
			n=$((n + 1))
			[[ $text == *"$o"* ]] || fail "acceltrace${c:+-$c}(8) lacks $o, which --help lists"
		done
		((n >= 3)) || fail "acceltrace ${c:-} --help: only $n options found (layout changed?)"
		while read -r ex; do
			[[ $text == *"$ex"* ]] || fail "acceltrace${c:+-$c}(8) lacks the example '$ex'"
		done < <(sed -n '/^Examples:/,/^$/{/^  acceltrace/{s/^  //;s/  .*//;p}}' <<<"$help")
		grep -q '^Examples:' <<<"$help" || fail "acceltrace ${c:-} --help has no Examples section"
	done
else
	skip_part "man or groff missing (scripts/install-deps.sh installs man-db and groff-base)"
fi

# bash completion: commands, a command's options, option values, files.
comp() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_acceltrace; echo "${COMPREPLY[*]}"' _ \
		"$root$prefix/share/bash-completion/completions/acceltrace" "$@" 2>&1
}
[[ $(comp acceltrace rec) == record ]] || fail "acceltrace rec<TAB>: '$(comp acceltrace rec)'"
[[ $(comp acceltrace record --du) == --duration ]] ||
	fail "acceltrace record --du<TAB>: '$(comp acceltrace record --du)'"
[[ $(comp acceltrace -v rep) == report ]] || fail "acceltrace -v rep<TAB>: '$(comp acceltrace -v rep)'"
[[ $(comp acceltrace daemon --detail "") == "sampled full" ]] ||
	fail "daemon --detail <TAB>: '$(comp acceltrace daemon --detail "")'"
mkdir -p "$TEST_TMP/caps/sess" && : >"$TEST_TMP/caps/vm.xplane.pb"
[[ $(comp acceltrace report "$TEST_TMP/caps/vm") == "$TEST_TMP/caps/vm.xplane.pb" ]] ||
	fail "report FILE<TAB>: '$(comp acceltrace report "$TEST_TMP/caps/vm")'"
[[ $(comp acceltrace record --logdir "$TEST_TMP/caps/s") == "$TEST_TMP/caps/sess" ]] ||
	fail "record --logdir DIR<TAB>: '$(comp acceltrace record --logdir "$TEST_TMP/caps/s")'"
[[ -z $(comp acceltrace record --duration "") ]] || fail "record --duration <TAB> offered something"
[[ $(comp acceltrace help tri) == trigger ]] || fail "help tri<TAB>: '$(comp acceltrace help tri)'"

# zsh completion: at least it parses.
if command -v zsh >/dev/null; then
	zsh -n "$root$prefix/share/zsh/site-functions/_acceltrace" 2>"$TEST_TMP/zsh" ||
		fail "_acceltrace does not parse in zsh: $(cat "$TEST_TMP/zsh")"
else
	skip_part "zsh missing: its completion not parsed"
fi

# The installed binary finds the installed agent (../lib/acceltrace/ from
# bin/): record -- CMD hands it to the command.
if [[ $(id -u) -eq 0 ]]; then
	"$bin" record --arm-timeout 2s --logdir "$TEST_TMP/logs" -- \
		sh -c 'printf %s "$CUDA_INJECTION64_PATH" >"$0"' "$TEST_TMP/agent" \
		>"$TEST_TMP/rec.out" 2>"$TEST_TMP/rec.err"
	got=$(cat "$TEST_TMP/agent" 2>/dev/null)
	[[ -n $got && $(realpath "$got") == "$root$prefix/lib/acceltrace/libacceltrace-agent.so" ]] ||
		fail "the installed record did not hand the installed agent to its command: '$(cat "$TEST_TMP/agent" 2>/dev/null)' ($(head -c 300 "$TEST_TMP/rec.err"))"
	grep -q "agent library was not found" "$TEST_TMP/rec.err" &&
		fail "the installed record did not find the installed agent"
else
	skip_part "not root: record -- CMD from the installed binary not run"
fi

# uninstall leaves nothing but empty directories.
make -s uninstall OUTPUT="$OUTPUT" DESTDIR="$root" >"$TEST_TMP/make.log" 2>&1 ||
	fail "make uninstall: $(tail -5 "$TEST_TMP/make.log")"
left=$(find "$root" -type f | head -5)
[[ -z $left ]] || fail "make uninstall left: $left"

# Another PREFIX: everything under it, the unit's paths too.
make -s install OUTPUT="$OUTPUT" DESTDIR="$root" PREFIX=/opt/at >"$TEST_TMP/make.log" 2>&1 ||
	fail "make install PREFIX=/opt/at: $(tail -5 "$TEST_TMP/make.log")"
[[ -x $root/opt/at/bin/acceltrace && -f $root/opt/at/lib/acceltrace/libacceltrace-agent.so ]] ||
	fail "PREFIX=/opt/at: binary or agent missing"
grep -q "^ExecStart=/opt/at/bin/acceltrace daemon" "$root/opt/at/lib/systemd/system/acceltrace.service" ||
	fail "PREFIX=/opt/at: the unit does not run /opt/at/bin/acceltrace"
grep -q "^Documentation=file:///opt/at/share/doc/acceltrace/daemon.md" "$root/opt/at/lib/systemd/system/acceltrace.service" ||
	fail "PREFIX=/opt/at: the unit's Documentation= is not the installed daemon.md"

test_done
