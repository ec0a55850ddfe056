#!/usr/bin/env bash
# The plugin as a tracer sees the file, checked with binutils (a reader we
# did not write): at both minors it exports GetPjrtApi and the four TPU C API
# feed functions and nothing else, has no .symtab to find implementations
# by, and keeps its PJRT_Api in writable data (.bss), not in .rodata.
. tests/harness/test.sh

want="GetPjrtApi TpuExecutor_DequeueOutfeed TpuExecutor_EnqueueInfeed TpuTransferManager_TransferLiteralFromOutfeed TpuTransferManager_TransferLiteralToInfeed"

command -v readelf >/dev/null || test_skip "no readelf (binutils)"
for minor in 94 26; do
	lib=$OUTPUT/sim/pjrt-0.$minor/libtpu.so
	[[ -f $lib ]] || { fail "$lib is not built"; continue; }

	# Defined, global or weak, dynamic symbols: the exports.
	got=$(readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 != "SECTION" { sub(/@.*/, "", $8); print $8 }' | sort | tr '\n' ' ')
	[[ ${got% } == "$want" ]] || fail "minor $minor exports '$got', expected '$want'"

	readelf -S -W "$lib" | grep -q '\.symtab' && fail "minor $minor has a .symtab"
	readelf -S -W "$lib" | grep -q '\.bss' || fail "minor $minor has no .bss"

	# It is a shared library named libtpu.so that needs the truth library.
	readelf -d "$lib" | grep -q 'SONAME.*\[libtpu\.so\]' || fail "minor $minor soname"
	readelf -d "$lib" | grep -q 'NEEDED.*\[libsimtruth\.so\]' || fail "minor $minor does not need libsimtruth.so"

	# Every exported function starts endbr64 (f3 0f 1e fa); push %rbp (55).
	for sym in $want; do
		addr=$(readelf --dyn-syms -W "$lib" | awk -v s="$sym" '$8 ~ "^"s"(@|$)" { print $2 }')
		bytes=$(objdump -d --start-address=0x$addr --stop-address=$((0x$addr + 5)) "$lib" 2>/dev/null |
			awk -F'\t' '/^ *[0-9a-f]+:/ { print $2 }' | tr -d ' \n')
		[[ $bytes == f30f1efa55 ]] || fail "minor $minor $sym begins '$bytes'"
	done
done

# The trainer's completion callback is a real function with the same prologue.
trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || fail "$trainer is not built"
bytes=$(objdump -d "$trainer" | awk '/<pjrt_on_ready_callback>:/ { f = 1; next } f && /^ *[0-9a-f]+:/ { print; n++ } n == 2 { exit }' |
	awk -F'\t' '{ print $2 }' | tr -d ' \n')
[[ $bytes == f30f1efa55 ]] || fail "pjrt_on_ready_callback begins '$bytes'"

test_done
