#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A JAX training loop on the GPU that writes its own ground truth.

One jitted step (`jit_step`: a small MLP's forward, loss, gradient and SGD
update) on two host arrays put on the device each step, the shape of the
loop measured in ../shared/reference/gpu-measured.md. Per step, one JSON
line in --truth, times from CLOCK_MONOTONIC (time.monotonic_ns), the clock
acceltrace's captures use:

  {"step": N, "t0": before the host arrays are put, "t_exec": after the
   jitted call returned (dispatched), "t1": after the result is ready}

stderr: "running pid=P" once compiled (after --warmup steps), "done steps=N
step_ms=X" at the end. --duration bounds the measured part by time,
--steps by count (0: no bound). --profile-steps N first runs N steps under
JAX's own profiler (jax.profiler.trace into --profile-dir), the reference
acceltrace's device timeline is checked against.

  python3 jax_train.py --truth FILE [--duration 10s] [--steps N] [--warmup 5]
                       [--profile-steps N --profile-dir DIR]
"""
import argparse
import sys
import time

from truth_loop import add_arguments, measure


def main():
    ap = argparse.ArgumentParser()
    add_arguments(ap, warmup=5)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--profile-steps", type=int, default=0)
    ap.add_argument("--profile-dir")
    a = ap.parse_args()

    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError as e:
        print("jax_train: JAX is not installed for %s: %s" % (sys.executable, e),
              file=sys.stderr)
        return 77

    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_train: no GPU device: %s" % jax.devices(), file=sys.stderr)
        return 77

    @jax.jit
    def step(params, x, y):
        def loss(p):
            h = jnp.tanh(x @ p["w1"])
            return jnp.mean((h @ p["w2"] - y) ** 2)
        g = jax.grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, params, g)

    rng = np.random.default_rng(0)
    w = a.width
    params = {"w1": jnp.asarray(rng.standard_normal((w, w), dtype=np.float32) * 0.01),
              "w2": jnp.asarray(rng.standard_normal((w, 16), dtype=np.float32) * 0.01)}
    xs = rng.standard_normal((64, w), dtype=np.float32)
    ys = rng.standard_normal((64, 16), dtype=np.float32)

    for _ in range(a.warmup):
        params = step(params, jax.device_put(xs), jax.device_put(ys))
    jax.block_until_ready(params)

    if a.profile_steps:
        with jax.profiler.trace(a.profile_dir):
            for _ in range(a.profile_steps):
                params = step(params, jax.device_put(xs), jax.device_put(ys))
                jax.block_until_ready(params)
        print("profiled steps=%d" % a.profile_steps, file=sys.stderr, flush=True)

    def one_step():
        nonlocal params
        t0 = time.monotonic_ns()
        params = step(params, jax.device_put(xs), jax.device_put(ys))
        t_exec = time.monotonic_ns()
        jax.block_until_ready(params)
        return {"t0": t0, "t_exec": t_exec, "t1": time.monotonic_ns()}

    return measure(a, one_step)


if __name__ == "__main__":
    sys.exit(main())
