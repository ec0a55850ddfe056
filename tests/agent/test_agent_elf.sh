#!/usr/bin/env bash
# The agent library as a traced process meets it (docs/agent.md, "Never
# breaking its host"): CUDA's entry and the two calls it pauses its thread
# around exported, nothing needed beyond libc, loaded by LD_PRELOAD it only
# points CUDA's injection hook at itself, leaving one set already alone, and
# a process with it preloaded can enter a new user namespace (unshare -U,
# and a rootless unshare -r), as without it.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

lib=${OUTPUT:-build}/libacceltrace-agent.so
[[ -f $lib ]] || { fail "$lib is not built (make all)"; test_done; }

exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
[[ $exports == "InitializeInjection setns unshare " ]] || fail "exports other symbols: $exports"

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for n in $needed; do
	case $n in
	libc.so.*|libdl.so.*|libpthread.so.*|ld-linux*) ;;
	*) fail "needs $n: a traced process may not have it" ;;
	esac
done

abs=$(realpath "$lib")
got=$(env -u CUDA_INJECTION64_PATH LD_PRELOAD="$abs" /usr/bin/env | sed -n 's/^CUDA_INJECTION64_PATH=//p')
[[ $got == "$abs" ]] || fail "LD_PRELOAD: CUDA_INJECTION64_PATH is '$got', not the agent"
got=$(CUDA_INJECTION64_PATH=/opt/nsight/libinject.so LD_PRELOAD="$abs" /usr/bin/env |
	sed -n 's/^CUDA_INJECTION64_PATH=//p')
[[ $got == /opt/nsight/libinject.so ]] || fail "LD_PRELOAD replaced an injection library set: '$got'"

# Its thread would make unshare(CLONE_NEWUSER) fail (EINVAL): it pauses it.
if command -v unshare >/dev/null && unshare -U true 2>/dev/null; then
	LD_PRELOAD="$abs" unshare -U true 2>"$TEST_TMP/err" ||
		fail "unshare -U with the agent preloaded: $(cat "$TEST_TMP/err")"
	out=$(LD_PRELOAD="$abs" unshare -r id -u 2>"$TEST_TMP/err") ||
		fail "unshare -r with the agent preloaded: $(cat "$TEST_TMP/err")"
	[[ ${out:-} == 0 ]] || fail "unshare -r: uid '${out:-}' in the new namespace, not 0"
	LD_PRELOAD="$abs" nsenter --mount=/proc/$$/ns/mnt true 2>"$TEST_TMP/err" ||
		fail "nsenter --mount with the agent preloaded: $(cat "$TEST_TMP/err")"
else
	skip_part "unshare -U is not allowed here"
fi
test_done
