#!/usr/bin/env bash
# The layout rules of user/ (user/README.md), checked on every source file:
# - no source file at user/'s top level, and each folder has a README.md;
# - a folder includes only itself and the folders after it in the layer
#   order that user/README.md gives between its "layers:" markers;
# - every folder under user/ is in that order, and every folder in it exists;
# - /proc is read in discover/ only: no string literal outside it starts
#   with "/proc" (a path), but for the few named in proc_allowed with why.
# A lower folder including a higher one fails the test, naming the line.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

order=$(sed -n '/<!-- layers: begin -->/,/<!-- layers: end -->/p' user/README.md |
	grep -v '<!--' | tr -d '`' | tr -s ' \n' ' ')
read -r -a layers <<<"$order"
[[ ${#layers[@]} -ge 8 ]] || { fail "user/README.md has no layer order (found: '$order')"; test_done; }

declare -A rank
for i in "${!layers[@]}"; do
	rank[${layers[$i]}]=$i
done

errors=0
complain() {
	echo "FAIL: $*" >&2
	errors=$((errors + 1))
}

for f in user/*.c user/*.h; do
	[[ -e $f ]] && complain "$f: source files belong in a folder of user/"
done
for d in user/*/; do
	d=${d%/}
	name=${d#user/}
	[[ -n ${rank[$name]+x} ]] || complain "$d is not in user/README.md's layer order"
	[[ -f $d/README.md ]] || complain "$d has no README.md saying what lives there"
done
for name in "${layers[@]}"; do
	[[ -d user/$name ]] || complain "layer '$name' in user/README.md has no folder"
done

checked=0
while IFS= read -r f; do
	from=${f#user/}
	from=${from%%/*}
	while IFS=: read -r line inc; do
		to=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$inc")
		checked=$((checked + 1))
		[[ -n ${rank[$to]+x} ]] || continue	# acceltrace/, generated headers
		if ((rank[$to] < rank[$from])); then
			complain "$f:$line includes $to/ from $from/ (a higher layer)"
		fi
	done < <(grep -nE '^#include "[a-z_]+/' "$f")
done < <(find user -name '*.[ch]' | sort)

# "/proc..." at the start of a string literal is a path being opened; /proc
# in the middle of a message is not. Comments are left out.
declare -A proc_allowed=(
	# names its own executable to the kernel as the trial uprobe's
	# target (probe/ is below discover/); reads nothing of /proc
	["user/probe/kernel_features.c"]='"/proc/self/exe"'
	# names a memfd of its own to the kernel as the trial uprobe_multi
	# link's file; reads nothing of /proc
	["user/probe/uprobe_multi.c"]='"/proc/self/fd/%d"'
	# names the runtime file it holds open to the kernel as a uprobe's
	# target; reads nothing of /proc
	["user/attach/runtime_attach_probes.c"]='"/proc/self/fd/%d"'
)
proc_checked=0
while IFS= read -r f; do
	proc_checked=$((proc_checked + 1))
	[[ $f == user/discover/* ]] && continue
	# The agent is a library of its own inside the traced process (it
	# links no folder of user/): it reads that process's own /proc/self.
	[[ $f == user/agent/* ]] && continue
	while IFS=: read -r line text; do
		allowed=${proc_allowed[$f]-}
		[[ -n $allowed && $text == *"$allowed"* ]] && continue
		complain "$f:$line opens a /proc path outside discover/ (user/README.md: \`/proc\` is read in discover/ only; add a helper to discover/procfs.c)"
	done < <(grep -nE '"/proc(/|")' "$f" | grep -vE '^[0-9]+:\s*(/?\*|//)')
done < <(find user -name '*.c' | sort)

((checked > 50)) || fail "only $checked includes checked: is the pattern right?"
((proc_checked > 50)) || fail "only $proc_checked files checked for /proc paths"
((errors == 0)) || fail "$errors layout rule(s) broken"
echo "checked $checked includes in $(find user -name '*.[ch]' | wc -l) files"
test_done
