#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PyTorch training loop that writes its own ground truth.

An MLP (four linear layers) trained with SGD on a batch copied from pinned
host memory each step, with a synchronisation at the step's end: about 15
kernel launches, one copy and one sync a step on CUDA, the loop measured in
../shared/reference/gpu-measured.md. Per step, one JSON line in --truth,
CLOCK_MONOTONIC ns (time.monotonic_ns):

  {"step": N, "t0": step start, "t1": after the step's synchronisation}

--count-launches N profiles N extra steps with torch.profiler first and
prints "launches_per_step=X" (CUDA runtime and driver kernel launches, as
torch.profiler counts them), the reference acceltrace's count is checked
against; --reference FILE also writes, as JSON, the GPU kernels per step
and their names as torch.profiler (CUPTI through Kineto) saw them. --device cpu runs the same loop on the CPU (to test the script
itself on a machine without a GPU; no launches then).

  python3 torch_train.py --truth FILE [--duration 10s] [--steps N]
                         [--count-launches 200] [--device cuda|cpu]
"""
import argparse
import sys
import time

from truth_loop import add_arguments, measure


LAUNCH_NAMES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                "cuLaunchKernelEx", "cudaGraphLaunch")


def is_kernel(name):
    return not name.startswith("Memcpy") and not name.startswith("Memset")


def count_launches(run_step, n, reference):
    import json
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            run_step()
    total = 0
    for ev in prof.key_averages():
        if ev.key.split("_ptsz")[0] in LAUNCH_NAMES:
            total += ev.count
    if reference:
        # Device events that are kernels: not copies or memsets, and not
        # the GPU-side ranges of user annotations ("Optimizer.step#SGD.step";
        # a demangled kernel's lambdas have '#' too, within parentheses).
        kernels = [ev for ev in prof.events()
                   if ev.device_type == DeviceType.CUDA and is_kernel(ev.name) and
                   not getattr(ev, "is_user_annotation", False) and
                   not ("#" in ev.name and "(" not in ev.name)]
        with open(reference, "w") as f:
            json.dump({"launches_per_step": total / float(n),
                       "kernels_per_step": len(kernels) / float(n),
                       "kernel_us_per_step": sum(ev.time_range.elapsed_us()
                                                 for ev in kernels) / float(n),
                       "kernel_names": sorted({ev.name for ev in kernels})}, f)
    return total / float(n)


def main():
    ap = argparse.ArgumentParser()
    add_arguments(ap, warmup=20)
    ap.add_argument("--count-launches", type=int, default=0)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reference")
    a = ap.parse_args()

    try:
        import torch
        from torch import nn
    except ImportError as e:
        print("torch_train: PyTorch is not installed for %s: %s" % (sys.executable, e),
              file=sys.stderr)
        return 77

    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_train: CUDA is not available", file=sys.stderr)
        return 77
    dev = torch.device(a.device)
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x_host = torch.randn(256, 512)
    y_host = torch.randint(0, 10, (256,))
    if a.device == "cuda":
        x_host, y_host = x_host.pin_memory(), y_host.pin_memory()

    def run_step():
        x = x_host.to(dev, non_blocking=True)
        y = y_host.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if a.device == "cuda":
            torch.cuda.synchronize()

    for _ in range(a.warmup):
        run_step()
    if a.count_launches:
        print("launches_per_step=%.3f" % count_launches(run_step, a.count_launches, a.reference),
              file=sys.stderr, flush=True)

    def one_step():
        t0 = time.monotonic_ns()
        run_step()
        return {"t0": t0, "t1": time.monotonic_ns()}

    return measure(a, one_step)


if __name__ == "__main__":
    sys.exit(main())
