# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Synthetic XSpaces written with Python's protobuf (not acceltrace's
writer), each with a known answer, for tests/report/test_report_synthetic.sh.
Usage: synth_xspace.py OUTDIR (writes one .xplane.pb per case)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
import xspace  # noqa: E402

pb2 = xspace.xplane_pb2()
MS = 10**9  # ps


class Plane:
    def __init__(self, space, name, pid=0):
        self.p = space.planes.add()
        self.p.name = name
        self.p.id = pid
        self.stat_ids = {}
        self.meta_ids = {}

    def stat_id(self, name):
        if name not in self.stat_ids:
            i = len(self.stat_ids) + 1
            self.stat_ids[name] = i
            self.p.stat_metadata[i].id = i
            self.p.stat_metadata[i].name = name
        return self.stat_ids[name]

    def set_stat(self, st, name, value):
        st.metadata_id = self.stat_id(name)
        if isinstance(value, str):
            st.ref_value = self.stat_id(value)
        elif isinstance(value, bytes):
            st.bytes_value = value
        elif isinstance(value, float):
            st.double_value = value
        else:
            st.int64_value = value

    def meta(self, name, **stats):
        if name not in self.meta_ids:
            i = len(self.meta_ids) + 1
            self.meta_ids[name] = i
            m = self.p.event_metadata[i]
            m.id = i
            m.name = name
            for k, v in stats.items():
                self.set_stat(m.stats.add(), k, v)
        return self.meta_ids[name]

    def line(self, name, lid):
        l = self.p.lines.add()
        l.name = name
        l.id = lid
        return l

    def event(self, line, name, start_ps, dur_ps, meta_stats=None, **stats):
        e = line.events.add()
        e.metadata_id = self.meta(name, **(meta_stats or {}))
        e.offset_ps = start_ps
        e.duration_ps = dur_ps
        for k, v in stats.items():
            self.set_stat(e.stats.add(), k, v)
        return e

    def plane_stat(self, name, value):
        self.set_stat(self.p.stats.add(), name, value)


def tpu_train_eval(space):
    """XLA Modules: train_step every 10 ms (4 ms of device time), and an
    eval_step (3 ms) after every 5th train step: 20 train steps."""
    host = Plane(space, "/host:CPU", 1)
    loop = host.line("main", 100)
    dev = Plane(space, "/device:TPU:0", 0)
    dev.plane_stat("device_type_string", "TPU v4")
    mods = dev.line("XLA Modules", 2)
    for i in range(20):
        t = i * 10 * MS
        host.event(loop, "PJRT_LoadedExecutable_Execute", t - MS // 10, MS // 20)
        dev.event(mods, "train_step", t, 4 * MS)
        if i % 5 == 4:
            dev.event(mods, "eval_step", t + 5 * MS, 3 * MS)


def tpu_infeed_ops(space):
    """XLA Ops: 10 steps of 10 ms on a Steps line; each has an infeed op of
    2 ms and a convolution of 6 ms (flops 6e9: 1 TFLOP/s); 2 ms idle."""
    dev = Plane(space, "/device:TPU:0", 0)
    dev.plane_stat("device_type_string", "TPU v5e")
    steps = dev.line("Steps", 1)
    ops = dev.line("XLA Ops", 3)
    for i in range(10):
        t = i * 10 * MS
        dev.event(steps, "train", t, 8 * MS, step_num=i, group_id=i)
        dev.event(ops, "infeed.1", t, 2 * MS, meta_stats={"hlo_category": "infeed"})
        dev.event(ops, "convolution.7", t + 2 * MS, 6 * MS,
                  meta_stats={"hlo_category": "convolution", "flops": 6.0e9})
    Plane(space, "/host:CPU", 1)


def gpu_kernels(space):
    """GPU: 8 executions of 3 kernels (one correlation id each) of jit_step,
    every 5 ms, plus 2 executions of jit_init (rare, short); and a host
    MemcpyH2D that ends in each 2 ms idle gap."""
    host = Plane(space, "/host:CPU", 1)
    loop = host.line("python3", 7)
    dev = Plane(space, "/device:GPU:0", 0)
    stream = dev.line("Stream #14(Compute)", 14)
    for i in range(8):
        t = i * 5 * MS
        for k in range(3):
            dev.event(stream, "kernel_%d" % k, t + k * MS, MS, correlation_id=i + 1,
                      program_id=42, hlo_module="jit_step")
        host.event(loop, "cuMemcpyHtoDAsync_v2", t + 3 * MS + MS // 2, MS // 10)
    for i in range(2):
        dev.event(stream, "init_kernel", 100 * MS + i * MS, MS // 2, correlation_id=100 + i,
                  program_id=7, hlo_module="jit_init")


def host_markers(space):
    """Framework step markers on the host (JAX StepTraceAnnotation): 6
    `train` events with step_num and _r, 3 ms apart; no device plane."""
    host = Plane(space, "/host:CPU", 1)
    loop = host.line("python3", 7)
    for i in range(6):
        host.event(loop, "train", i * 3 * MS, 2 * MS, step_num=i, _r=1)


def host_only(space):
    """Host spans only: nothing to find steps in."""
    host = Plane(space, "/host:CPU", 1)
    loop = host.line("python3", 7)
    host.event(loop, "pread64", 0, MS)
    space.warnings.append("ring buffer drops: 12")


def device_only(space):
    """A device plane and no host plane (a capture of another producer's
    device trace): one execution of 4 ms and one of 2 ms, 2 ms apart, so
    no step time; device idle over the capture is 2 ms of 8."""
    dev = Plane(space, "/device:TPU:0", 0)
    dev.plane_stat("device_type_string", "TPU v4")
    mods = dev.line("XLA Modules", 2)
    dev.event(mods, "train_step", 5 * MS, 4 * MS)
    dev.event(mods, "eval_step", 11 * MS, 2 * MS)


def two_processes(space):
    """A whole-host capture of two jobs, as acceltrace marks processes:
    pid 100 (`jobA`) drives /device:TPU:0, 10 steps of 10 ms each with a
    2 ms infeed op and a 6 ms convolution (input-bound 20 %); pid 200
    (`jobB`) drives /device:TPU:1, 20 steps of 5 ms of convolution
    (input-bound 0 %). Each job's main thread and a reader thread are lines
    of /host:CPU, told apart by acceltrace.thread_pids ((tid, pid)
    little-endian u32s). jobA reads 10 times while its device computes;
    jobB reads 20 times in jobA's idle 2 ms: mixed into jobA's report,
    they would make that idle input wait (40 %). pid 150, a child of jobA
    with no device (a DataLoader worker), reads 5 times while jobA's
    device computes: acceltrace.processes gives it to jobA's report, and
    names jobA's container and pod; jobB's names one with an escape and a
    newline, which no report prints as such."""
    import json
    import struct
    host = Plane(space, "/host:CPU", 1)
    worker = host.line("pt_data_worker", 150)
    for i in range(5):
        host.event(worker, "read", (i * 10 + 5) * MS, MS // 4)
    pairs = struct.pack("<II", 150, 150)
    host.plane_stat("acceltrace.processes", json.dumps({"version": 1, "processes": [
        {"pid": 100, "ppid": 1, "name": "jobA", "container": "c0ffee" * 8 + "0" * 16,
         "pod": "pod-a"},
        {"pid": 150, "ppid": 100, "name": "pt_data_worker", "container": "", "pod": ""},
        {"pid": 200, "ppid": 1, "name": "jobB", "container": "x\u001b[2J\nforged", "pod": "",
         "future_key": [1, {"x": 2.5}]}]}))
    for pid, name, reads in ((100, "jobA", [i * 10 + 3 for i in range(10)]),
                             (200, "jobB", [i * 10 + 8.5 + k * 0.5 for i in range(10)
                                            for k in range(2)])):
        host.line(name, pid)
        reader = host.line("reader", pid + 1)
        for ms in reads:
            host.event(reader, "pread64", int(ms * MS), MS // 4)
        pairs += struct.pack("<IIII", pid, pid, pid + 1, pid)
    host.plane_stat("acceltrace.thread_pids", pairs)
    for core, pid, n, step, infeed in ((0, 100, 10, 10, 2), (1, 200, 20, 5, 0)):
        dev = Plane(space, "/device:TPU:%d" % core, 10 + core)
        dev.plane_stat("device_type_string", "TPU v5e")
        dev.plane_stat("acceltrace.pid", pid)
        steps = dev.line("Steps", 1)
        ops = dev.line("XLA Ops", 3)
        for i in range(n):
            t = i * step * MS
            dev.event(steps, "train", t, (step - 2 if infeed else step) * MS, step_num=i,
                      group_id=i)
            if infeed:
                dev.event(ops, "infeed.1", t, infeed * MS,
                          meta_stats={"hlo_category": "infeed"})
            dev.event(ops, "convolution.7", t + infeed * MS,
                      (step - 2 * infeed if infeed else step) * MS,
                      meta_stats={"hlo_category": "convolution"})


def stuck_op(space):
    """A device stuck in one op at the stop, as acceltrace marks it: a 2 s
    window; /device:TPU:0 runs 20 train_step executions of 5 ms, then from
    100 ms on a long_step whose op convolution.77 (from 100.5 ms) is still
    running at the stop (acceltrace.open_at_stop); /device:TPU:1's
    all-reduce.3 began 298 s before the window (clipped, true start -298 s)
    and is open too: 300 s. The step program is train_step (long_step ran
    once); the report leads with the stuck op, longest first."""
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("profile_start_time", 1_000_000_000)
    task.plane_stat("profile_stop_time", 3_000_000_000)
    Plane(space, "/host:CPU", 1)
    dev = Plane(space, "/device:TPU:0", 10)
    dev.plane_stat("device_type_string", "TPU v4")
    mods = dev.line("XLA Modules", 2)
    ops = dev.line("XLA Ops", 3)
    for i in range(20):
        dev.event(mods, "train_step", i * 5 * MS, 4 * MS)
        dev.event(ops, "fusion.1", i * 5 * MS, 4 * MS)
    dev.event(mods, "long_step", 100 * MS, 1900 * MS, **{"acceltrace.open_at_stop": 1})
    dev.event(ops, "convolution.77", 100 * MS + MS // 2, 1900 * MS - MS // 2,
              **{"acceltrace.open_at_stop": 1})
    dev1 = Plane(space, "/device:TPU:1", 11)
    ops1 = dev1.line("XLA Ops", 3)
    dev1.event(ops1, "all-reduce.3", 0, 2000 * MS, **{"acceltrace.open_at_stop": 1,
                                                      "acceltrace.true_start_ns": -298 * 10**9,
                                                      "acceltrace.clipped": "both"})


def host_waiting(space):
    """A job that completed no step in a 100 ms window (record --now on a
    trainer in a checkpoint), with the scheduler's spans: `main` (tid 7)
    off CPU 9 times for 10 ms (blocked, 90 %), `reader` (tid 8) preempted
    twice for 5 ms (10 %), `idle` (tid 9) with nothing off CPU."""
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("profile_start_time", 1_000_000_000)
    task.plane_stat("profile_stop_time", 1_100_000_000)
    host = Plane(space, "/host:CPU", 1)
    main = host.line("main", 7)
    for i in range(9):
        host.event(main, "off CPU (blocked)", i * 11 * MS, 10 * MS)
    reader = host.line("reader", 8)
    for i in range(2):
        host.event(reader, "off CPU (preempted)", i * 50 * MS, 5 * MS)
    idle = host.line("idle", 9)
    host.event(idle, "pread64", 0, MS)


LONG_OP = ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4"
           "<float, cutlass::layout::RowMajor>>(cutlass_80_tensorop_s1688gemm_128x128_32x3"
           "_nt_align4::Params, int)")


def text_layout(space):
    """For the text's layout (tests/report/test_report_text.sh): two
    threads both named `reader` (ids 11 and 12) reading with pread64, one
    device op with a long C++ name, one event clipped at the window start,
    a 50 ms window (profile_start/stop_time) and 30 steps of 1 ms on a
    Steps line."""
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("profile_start_time", 1_000_000_000)
    task.plane_stat("profile_stop_time", 1_050_000_000)
    host = Plane(space, "/host:CPU", 1)
    for lid in (11, 12):
        line = host.line("reader", lid)
        for i in range(lid - 9):
            host.event(line, "pread64", i * MS, MS // 4)
    loop = host.line("python3", 7)
    host.event(loop, "pread64", 0, MS // 8, **{"acceltrace.clipped": "start"})
    dev = Plane(space, "/device:TPU:0", 0)
    steps = dev.line("Steps", 1)
    ops = dev.line("XLA Ops", 3)
    for i in range(30):
        dev.event(steps, "train_step", i * MS, MS)
        dev.event(ops, LONG_OP if i % 2 else "fusion_%d" % i, i * MS, MS // 2)


def budget_dropped(space):
    """tpu_infeed_ops, as a capture whose span budget dropped 5000 device
    ops (acceltrace.dropped.device_op): the figures are those of what was
    left, so the report gives no verdict."""
    tpu_infeed_ops(space)
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("acceltrace.dropped.device_op", 5000)
    task.plane_stat("acceltrace.dropped.completion", 70)


def few_lost(space):
    """tpu_infeed_ops and 1000 ioctls while the device computes, with 3
    records lost on the way (under 1 % of its events): the verdict stands,
    with a caveat."""
    tpu_infeed_ops(space)
    host = [p for p in space.planes if p.name == "/host:CPU"][0]
    line = host.lines.add()
    line.name, line.id = "python3", 7
    meta = host.event_metadata[1]
    meta.id, meta.name = 1, "ioctl"
    for i in range(1000):
        e = line.events.add()
        e.metadata_id = 1
        e.offset_ps = (i // 100) * 10 * MS + 3 * MS + (i % 100) * 10**7
        e.duration_ps = 10**6
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("acceltrace.lost_records", 3)


def many_lost(space):
    """tpu_infeed_ops with 40 records lost (over 1 % of its 30 events and
    the lost): no verdict."""
    tpu_infeed_ops(space)
    task = Plane(space, "Task Environment", 2)
    task.plane_stat("acceltrace.lost_records", 40)


CASES = {"tpu_train_eval": tpu_train_eval, "tpu_infeed_ops": tpu_infeed_ops,
         "gpu_kernels": gpu_kernels, "host_markers": host_markers, "host_only": host_only,
         "device_only": device_only, "text_layout": text_layout,
         "two_processes": two_processes, "stuck_op": stuck_op,
         "host_waiting": host_waiting, "budget_dropped": budget_dropped,
         "few_lost": few_lost, "many_lost": many_lost}

if __name__ == "__main__":
    for name, fn in CASES.items():
        space = pb2.XSpace()
        space.hostnames.append("synth")
        fn(space)
        with open(os.path.join(sys.argv[1], name + ".xplane.pb"), "wb") as f:
            f.write(space.SerializeToString())
