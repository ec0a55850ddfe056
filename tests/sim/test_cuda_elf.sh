#!/usr/bin/env bash
# The simulated CUDA libraries as a tracer and an agent see the files,
# checked with binutils: each exports exactly its API (the tools hook is
# reached through cuGetExportTable, never exported); every function
# acceltrace probes begins endbr64; push %rbp (f3 0f 1e fa 55), the hooks
# inside the functions coming after it; libcupti.so.13 has its real soname
# and CUPTI's names only, needs libsimtruth.so and is not linked to the
# driver (it finds it at run time, as CUPTI finds libcuda).
. tests/harness/test.sh

command -v readelf >/dev/null && command -v objdump >/dev/null || test_skip "no binutils"
cuda=$OUTPUT/sim/cuda

exports() {
	readelf --dyn-syms -W "$1" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 != "SECTION" { sub(/@.*/, "", $8); print $8 }' | sort | tr '\n' ' '
}

prologue() {
	local lib=$1 sym=$2 addr
	addr=$(readelf --dyn-syms -W "$lib" | awk -v s="$sym" '$8 ~ "^"s"(@|$)" { print $2 }')
	objdump -d --start-address=0x$addr --stop-address=$((0x$addr + 5)) "$lib" 2>/dev/null |
		awk -F'\t' '/^ *[0-9a-f]+:/ { print $2 }' | tr -d ' \n'
}

drv_api="cuCtxSynchronize cuEventRecord cuEventSynchronize cuGraphLaunch cuInit cuLaunchKernel cuMemcpyDtoHAsync_v2 cuMemcpyHtoDAsync_v2 cuMemsetD8Async cuStreamSynchronize"
# Device memory (cuda_memory.c): every one is probed.
drv_mem="cuCtxPushCurrent_v2 cuCtxSetCurrent cuDevicePrimaryCtxRetain cuMemAddressFree cuMemAddressReserve cuMemAlloc_v2 cuMemAllocAsync cuMemAllocAsync_ptsz cuMemAllocFromPoolAsync cuMemAllocFromPoolAsync_ptsz cuMemAllocManaged cuMemAllocPitch_v2 cuMemCreate cuMemFree_v2 cuMemFreeAsync cuMemFreeAsync_ptsz cuMemMap cuMemRelease cuMemUnmap"
rt_api="cudaDeviceSynchronize cudaEventRecord cudaEventSynchronize cudaGraphLaunch cudaLaunchKernel cudaLaunchKernelExC cudaLaunchKernel_ptsz cudaMemcpy cudaMemcpyAsync cudaMemsetAsync cudaStreamSynchronize"
rt_mem="cudaFree cudaFreeAsync cudaFreeAsync_ptsz cudaMalloc cudaMallocAsync cudaMallocAsync_ptsz cudaMallocManaged cudaMallocPitch cudaSetDevice"
cupti_api="cuptiActivityDisable cuptiActivityEnable cuptiActivityFlushAll cuptiActivityGetNextRecord cuptiActivityGetNumDroppedRecords cuptiActivityRegisterCallbacks cuptiActivityRegisterTimestampCallback cuptiGetCallbackName cuptiGetResultString cuptiGetTimestamp cuptiGetVersion cuptiSetThreadIdType"

for f in libsimdrv.so libsimrt.so libcupti.so.13; do
	[[ -f $cuda/$f ]] || test_skip "$cuda/$f is not built"
done

got=$(exports "$cuda/libsimdrv.so")
want=$(tr ' ' '\n' <<<"$drv_api $drv_mem cuGetExportTable" | sort | tr '\n' ' ')
[[ $got == "$want" ]] || fail "libsimdrv.so exports '$got', expected '$want'"
got=$(exports "$cuda/libsimrt.so")
want=$(tr ' ' '\n' <<<"$rt_api $rt_mem" | sort | tr '\n' ' ')
[[ $got == "$want" ]] || fail "libsimrt.so exports '$got', expected '$want'"
got=$(exports "$cuda/libcupti.so.13")
[[ ${got% } == "$cupti_api" ]] || fail "libcupti.so.13 exports '$got', expected '$cupti_api'"

for sym in $drv_api $drv_mem; do
	b=$(prologue "$cuda/libsimdrv.so" "$sym")
	[[ $b == f30f1efa55 ]] || fail "libsimdrv.so $sym begins '$b'"
done
for sym in $rt_api $rt_mem; do
	b=$(prologue "$cuda/libsimrt.so" "$sym")
	[[ $b == f30f1efa55 ]] || fail "libsimrt.so $sym begins '$b'"
done

dyn=$(readelf -d "$cuda/libcupti.so.13")
contains "$dyn" "Library soname: [libcupti.so.13]" "libcupti soname"
contains "$dyn" "Shared library: [libsimtruth.so]" "libcupti needs libsimtruth.so"
[[ $dyn != *"[libsimdrv.so]"* ]] || fail "libcupti.so.13 is linked to the driver"
[[ $(readlink "$cuda/libcupti.so") == libcupti.so.13 ]] || fail "libcupti.so links to libcupti.so.13"

test_done
