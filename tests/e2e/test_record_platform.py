#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Device planes are named for the platform the runtime drives.

A PJRT plugin says nothing of its devices by itself; the driver the process
maps does. The simulated trainer is run twice under record --pid:

- as it is (a TPU stack): /device:TPU:N planes, a device_type_string with TPU;
- with a CUDA driver in the process (the simulated libsimdrv.so, recognised
  by its exports, preloaded as a CUDA PJRT plugin's libcuda would be
  mapped): /device:GPU:N planes with device_vendor Nvidia and no TPU
  device_type_string, the executions the same as the truth's; and
  `probes` says the process has a CUDA driver but no runtime layer to
  probe ("not found": what a cudart linked in without exports looks like).

Before this, JAX's CUDA plugin on an H100 gave a /device:TPU:0 plane.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (OUTPUT, acceltrace, capture_of, check, finish, record, require_root,
                 running_trainer, skip, tmpdir, truth)
import json

DRIVER = os.path.join(OUTPUT, "sim", "cuda", "libsimdrv.so")


def plane_stats(plane):
    smeta = {k: v.name for k, v in plane.stat_metadata.items()}
    return {smeta.get(s.metadata_id): s.str_value or s.int64_value
            for s in plane.stats}


def run(work, name, env):
    tp = os.path.join(work, name + ".truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "30s", "--step-time", "2ms",
                        "--cores", "2", truth=tp, env=env)
    if not t:
        return None, None, None
    rc, out, err = acceltrace("probes", "-j", "--pid", str(t.pid))
    if check(rc == 0, "%s: probes --pid exited %d: %s" % (name, rc, err)):
        layer = json.loads(out)["processes"][0].get("cuda_runtime_layer")
        want = "not found" if env else "none"
        check(layer == want, "%s: probes says the CUDA runtime layer is %r, not %r"
              % (name, layer, want))
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s",
                        "--logdir", os.path.join(work, name))
    t.stop()
    if not check(rc == 0 and s, "%s: record --pid exited %d: %s" % (name, rc, err)):
        return None, None, None
    return capture_of(s), truth(tp, t.pid), s


def device_planes(cap):
    return {n: p for n, p in cap.planes.items() if n.startswith("/device:")}


def main():
    require_root()
    if not os.path.exists(DRIVER):
        skip("the simulated CUDA driver is not built: %s" % DRIVER)
    work = tmpdir()

    cap, _, _ = run(work, "tpu", None)
    if cap:
        planes = device_planes(cap)
        check(sorted(planes) == ["/device:TPU:0", "/device:TPU:1"],
              "TPU stack: /device:TPU:N planes: %s" % sorted(planes))
        for n, p in planes.items():
            st = plane_stats(p)
            # "TPU v4" when the device's trace buffer names its kind.
            check("TPU" in st.get("device_type_string", "") and "device_vendor" not in st,
                  "TPU stack: %s says TPU, no vendor: %s" % (n, st))

    env = dict(os.environ, LD_PRELOAD=DRIVER)
    cap, T, s = run(work, "gpu", env)
    if cap:
        planes = device_planes(cap)
        check(sorted(planes) == ["/device:GPU:0", "/device:GPU:1"],
              "with a CUDA driver mapped: /device:GPU:N planes: %s" % sorted(planes))
        for n, p in planes.items():
            st = plane_stats(p)
            check(st.get("device_vendor") == "Nvidia" and "device_type_string" not in st,
                  "%s: device_vendor Nvidia, no TPU device_type_string: %s" % (n, st))
        libs = {os.path.basename(l["path"]): l for l in s["libraries"]}
        check(libs.get("libsimdrv.so", {}).get("pack") == "CUDA driver",
              "the preloaded driver recognised as a CUDA driver: %s" % sorted(libs))
        done = [r for r in T if r["type"] == "device_execution" and
                s["window_start_ns"] <= r["t_start"] and
                r["t_end"] <= s["window_stop_ns"]]
        got = cap.line_events("/device:GPU:", "XLA Modules")
        check(len(got) >= len(done) > 0,
              "GPU planes hold the window's executions: %d captured, %d in the truth"
              % (len(got), len(done)))
    finish()


if __name__ == "__main__":
    main()
