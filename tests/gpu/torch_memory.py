#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PyTorch loop whose device memory grows, with PyTorch's own account of
it as ground truth: what acceltrace's device-memory probes are checked
against on a lent GPU (run_gpu.py, the memory case).

Each step makes a few transient tensors (freed into PyTorch's cache) and
keeps --leak-mb more MiB for good, so the caching allocator reserves more
from CUDA now and then. Per step, one JSON line in --truth, after a
synchronisation:

  {"step": N, "t0": start, "t1": end (CLOCK_MONOTONIC ns),
   "reserved": torch.cuda.memory_reserved(),
   "allocated": torch.cuda.memory_allocated()}

With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the allocator maps
physical memory (cuMemCreate + cuMemMap) instead of cudaMalloc: the same
truth, the other probes. --device cpu runs the loop's shape without CUDA
(reserved and allocated 0), to test the script itself.

  python3 torch_memory.py --truth FILE [--duration 10s] [--leak-mb 8]
"""
import argparse
import sys
import time

from truth_loop import add_arguments, measure


def main():
    ap = argparse.ArgumentParser()
    add_arguments(ap, warmup=0)
    ap.add_argument("--leak-mb", type=float, default=8.0)
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    import torch
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    kept = []
    leak = int(a.leak_mb * (1 << 20)) // 4

    def one_step():
        t0 = time.monotonic_ns()
        scratch = [torch.empty(256 * 1024 * (1 + i % 4), device=dev) for i in range(8)]
        kept.append(torch.empty(leak, device=dev))
        del scratch
        if cuda:
            torch.cuda.synchronize()
        reserved = torch.cuda.memory_reserved() if cuda else 0
        allocated = torch.cuda.memory_allocated() if cuda else 0
        t1 = time.monotonic_ns()
        rest = a.step_ms / 1e3 - (t1 - t0) / 1e9
        if rest > 0:
            time.sleep(rest)
        return {"t0": t0, "t1": t1, "reserved": reserved, "allocated": allocated}

    measure(a, one_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
