#!/usr/bin/env bash
# The data lane and discovery never reach code that attaches (user/README.md,
# "Two lanes"), through a function pointer included: tests/user/lane_calls.py
# over user/'s call graph must find no path from collect/ or discover/ to
# libbpf's attach and map-writing calls. Then the check itself, on two small
# trees: a collector calling a callback that writes a BPF map must fail,
# naming the path; the same callback answering without writing must pass.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

command -v clang >/dev/null || test_skip "clang is not installed (make install-deps)"
[[ -d $OUTPUT ]] || test_skip "$OUTPUT/ is not built (its generated headers are needed)"

out=$("$PYTHON" tests/user/lane_calls.py --src user \
	--cflags="-Iinclude -Iuser -I$OUTPUT" 2>&1)
rc=$?
echo "$out" | tail -1
[[ $rc -eq 0 ]] || fail "collect/ or discover/ reaches code that attaches (rc $rc):
$out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A tree in which the collector calls back into the control lane.
make_tree() {
	local dir=$1 body=$2
	mkdir -p "$dir/collect" "$dir/session"
	cat >"$dir/collect/lane.h" <<-'EOF'
	struct lane_ops { void *ctx; int (*probe_entry)(void *ctx, int id); };
	int lane_record(const struct lane_ops *ops, int id);
	EOF
	cat >"$dir/collect/lane.c" <<-'EOF'
	#include "collect/lane.h"
	int lane_record(const struct lane_ops *ops, int id)
	{
		return ops->probe_entry(ops->ctx, id);
	}
	EOF
	cat >"$dir/session/loop.c" <<-EOF
	#include "collect/lane.h"
	int bpf_map_update_elem(int fd, const void *key, const void *value, unsigned long long flags);
	static int answer(void *ctx, int id)
	{
		$body
	}
	int loop(void)
	{
		struct lane_ops ops = { 0, answer };
		return lane_record(&ops, 3);
	}
	EOF
}

make_tree "$tmp/acts" 'return bpf_map_update_elem(id, ctx, ctx, 0);'
out=$("$PYTHON" tests/user/lane_calls.py --src "$tmp/acts" --folders collect \
	--cflags="-I$tmp/acts" 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "a callback that writes a map was not found (rc $rc): $out"
grep -q 'lane_record (collect/lane.c)' <<<"$out" &&
	grep -q 'answer (session/loop.c)' <<<"$out" &&
	grep -q 'FAIL: collect/ reaches bpf_map_update_elem' <<<"$out" ||
	fail "the path is not named caller first: $out"

make_tree "$tmp/answers" 'return id + (ctx != 0);'
out=$("$PYTHON" tests/user/lane_calls.py --src "$tmp/answers" --folders collect \
	--cflags="-I$tmp/answers" 2>&1)
rc=$?
[[ $rc -eq 0 ]] || fail "a callback that only answers was taken for one that attaches (rc $rc): $out"

test_done
