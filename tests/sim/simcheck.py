#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks of the simulator's runs, used by tests/sim/test_*.sh.

Reads the ground truth (docs/simulator.md) and the devtrace buffers with a
decoder written from docs/devtrace.md alone (not from the C headers), and
checks that they agree with each other and with what the run was asked to
do. Each check is a function named check_<name>; run one with

    simcheck.py <name> key=value ...

It prints each failure and exits 1 if any, 0 otherwise.
"""
import collections
import json
import os
import struct
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def expect(cond, msg):
    if not cond:
        fail(msg)
    return cond


# ------------------------------------------------------------------ truth

def load_truth(path):
    recs = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except ValueError as e:
                fail("%s:%d is not JSON (%s): %r" % (path, n, e, line[:120]))
                continue
            if not expect(isinstance(r, dict) and "type" in r and "pid" in r,
                          "%s:%d lacks type or pid" % (path, n)):
                continue
            recs.append(r)
    return recs


def by_type(recs, pid=None):
    out = collections.defaultdict(list)
    for r in recs:
        if pid is None or r["pid"] == pid:
            out[r["type"]].append(r)
    return out


# ------------------------------------------------------------------ devtrace
# Layout from docs/devtrace.md.

MAGIC = 0x3145434152545644
HEADER = struct.Struct("<QIIIIII QQQQQ II QQ 32s II 8s")
RECORD = struct.Struct("<QQHBBIQQQQQ")
NAME = struct.Struct("<IHH56s")
KINDS = {1: "MODULE_BEGIN", 2: "MODULE_END", 3: "STEP_BEGIN", 4: "STEP_END",
         5: "OP_BEGIN", 6: "OP_END", 7: "INFEED_WAIT_BEGIN", 8: "INFEED_WAIT_END",
         9: "CLOCK_SYNC", 10: "DMA_BEGIN", 11: "DMA_END", 12: "KERNEL",
         13: "TRANSFER", 14: "LAUNCH"}
NO_NAME = 0xFFFFFFFF
F_CLOSED = 1
RF_CANCELLED = 1


def read_devtrace(path):
    """The header, names and records of a buffer nobody writes any more."""
    with open(path, "rb") as f:
        data = f.read()
    (magic, version, header_size, record_size, name_size, name_capacity, core,
     names_offset, records_offset, capacity, rate, run_id, num_cores, flags,
     sync_host, sync_dev, kind, device_id, owner_pid, platform) = HEADER.unpack_from(data, 0)
    name_count, names_dropped = struct.unpack_from("<QQ", data, 192)
    write_seq, begin_seq = struct.unpack_from("<QQ", data, 256)
    h = dict(magic=magic, version=version, header_size=header_size,
             record_size=record_size, name_size=name_size,
             name_capacity=name_capacity, core=core, names_offset=names_offset,
             records_offset=records_offset, capacity=capacity, rate=rate,
             run_id=run_id, num_cores=num_cores, flags=flags,
             sync_host=sync_host, sync_dev=sync_dev,
             device_kind=kind.split(b"\0")[0].decode(), device_id=device_id,
             owner_pid=owner_pid, platform=platform.split(b"\0")[0].decode(),
             name_count=name_count,
             names_dropped=names_dropped, write_seq=write_seq,
             begin_seq=begin_seq, file_size=len(data))
    names = {}
    for i in range(min(name_count, name_capacity)):
        nid, nkind, nlen, text = NAME.unpack_from(data, names_offset + i * name_size)
        names[i] = text[:nlen].decode()
        expect(nid == i, "%s: name entry %d has id %d" % (path, i, nid))
    recs = []
    first = max(1, write_seq - capacity + 1)
    for seq in range(first, write_seq + 1):
        off = records_offset + ((seq - 1) % capacity) * record_size
        (rseq, ts, kind_, cat, rflags, name_id, corr, step, flops, nbytes,
         arg) = RECORD.unpack_from(data, off)
        if not expect(rseq == seq, "%s: slot of seq %d holds seq %d" % (path, seq, rseq)):
            continue
        recs.append(dict(seq=rseq, ts=ts, kind=KINDS.get(kind_, kind_),
                         category=cat, flags=rflags, name_id=name_id,
                         name=names.get(name_id), corr=corr, step=step,
                         flops=flops, bytes=nbytes, arg=arg))
    return h, names, recs


def to_device(clock, host_ns):
    """docs/simulator.md: the simulator's clock model."""
    d = host_ns - clock["epoch_ns"]
    return clock["offset_ticks"] + (d * clock["rate_hz"] * (10**9 + clock["drift_ppb"])) // 10**18


def to_host(clock, ticks):
    d = ticks - clock["offset_ticks"]
    return clock["epoch_ns"] + (d * 10**18) // (clock["rate_hz"] * (10**9 + clock["drift_ppb"]))


# ------------------------------------------------------------------ checks

def check_devtrace_agrees(t, trace_dir, pid, cores, wrapped_ok=False):
    """Each core's buffer holds what the truth says the device did."""
    clock = t["device_clock"][0]
    ns_per_tick = -(-10**9 // clock["rate_hz"]) + 1
    for c in range(cores):
        path = os.path.join(trace_dir, "core%d.devtrace" % c)
        if not expect(os.path.exists(path), "no %s" % path):
            continue
        h, names, recs = read_devtrace(path)
        expect(h["magic"] == MAGIC, "core %d magic %x" % (c, h["magic"]))
        expect(h["version"] == 1 and h["record_size"] == 64 and h["name_size"] == 64
               and h["header_size"] == 4096, "core %d header sizes %r" % (c, h))
        expect(h["core"] == c and h["num_cores"] == cores, "core %d numbering" % c)
        expect(h["rate"] == clock["rate_hz"], "core %d rate" % c)
        expect(h["owner_pid"] == pid, "core %d owner pid %d" % (c, h["owner_pid"]))
        expect(h["file_size"] == h["records_offset"] + h["capacity"] * 64,
               "core %d file size" % c)
        expect(h["records_offset"] % 4096 == 0, "core %d records page aligned" % c)
        expect(h["flags"] & F_CLOSED, "core %d not marked closed" % c)
        expect(h["begin_seq"] == h["write_seq"], "core %d begin_seq" % c)
        expect(abs(to_host(clock, h["sync_dev"]) - h["sync_host"]) <= ns_per_tick,
               "core %d header clock pair" % c)
        wrapped = h["write_seq"] > h["capacity"]
        expect(wrapped_ok or not wrapped, "core %d wrapped unexpectedly" % c)

        # Time order, and exact clock-sync pairs.
        prev = 0
        for r in recs:
            expect(r["ts"] >= prev, "core %d seq %d goes back in time" % (c, r["seq"]))
            prev = r["ts"]
            if r["kind"] == "CLOCK_SYNC":
                expect(abs(to_host(clock, r["ts"]) - r["arg"]) <= ns_per_tick,
                       "core %d sync seq %d: %d ticks vs host %d" % (c, r["seq"], r["ts"], r["arg"]))
        syncs = [r for r in recs if r["kind"] == "CLOCK_SYNC"]
        # A wrapped ring may have overwritten every pair (one comes at most
        # every 10 ms; 128 slots hold ~6 ms of 500 us steps): the header's
        # pair remains.
        expect(len(syncs) >= 1 or wrapped, "core %d has no CLOCK_SYNC" % c)

        # Every op the truth has on this core, as a begin/end pair; when the
        # ring wrapped, the ops it still holds.
        ops = {(o["launch_id"], o["name"]): o for o in t["op"] if o["core"] == c}
        execs = {e["launch_id"]: e for e in t["device_execution"] if e["core"] == c}
        seen_ops = collections.Counter()
        for r in recs:
            kind = r["kind"]
            host = to_host(clock, r["ts"])
            if kind in ("OP_BEGIN", "OP_END"):
                o = ops.get((r["corr"], r["name"]))
                if not expect(o is not None, "core %d: %s of %r launch %d not in truth"
                              % (c, kind, r["name"], r["corr"])):
                    continue
                want = o["t_start"] if kind == "OP_BEGIN" else o["t_end"]
                expect(abs(host - want) <= ns_per_tick,
                       "core %d %s %s launch %d at %d, truth %d" % (c, kind, r["name"], r["corr"], host, want))
                expect(r["step"] == o["step"], "core %d op step" % c)
                if kind == "OP_END":
                    expect(r["flops"] == o["flops"] and r["bytes"] == o["bytes"],
                           "core %d op %s flops/bytes" % (c, r["name"]))
                    expect(bool(r["flags"] & RF_CANCELLED) == bool(o.get("cancelled")),
                           "core %d op %s cancelled flag" % (c, r["name"]))
                    cat = ["none", "convolution", "fusion", "all-reduce", "infeed",
                           "outfeed", "dot", "copy", "other"][r["category"]]
                    expect(cat == o["category"], "core %d op %s category %s" % (c, r["name"], cat))
                seen_ops[(r["corr"], r["name"], kind)] += 1
            elif kind in ("MODULE_BEGIN", "MODULE_END", "STEP_BEGIN", "STEP_END"):
                e = execs.get(r["corr"])
                if not expect(e is not None, "core %d: %s launch %d not in truth" % (c, kind, r["corr"])):
                    continue
                want = e["t_start"] if kind.endswith("BEGIN") else e["t_end"]
                expect(abs(host - want) <= ns_per_tick,
                       "core %d %s launch %d at %d, truth %d" % (c, kind, r["corr"], host, want))
                if kind.startswith("MODULE"):
                    expect(r["name"] == e["module"], "core %d module name %r" % (c, r["name"]))
                expect(r["step"] == e["step"], "core %d step number" % c)
        if not wrapped:
            for (lid, name), o in ops.items():
                for kind in ("OP_BEGIN", "OP_END"):
                    expect(seen_ops[(lid, name, kind)] == 1,
                           "core %d: truth op %s launch %d has %d %s" % (c, name, lid, seen_ops[(lid, name, kind)], kind))
        else:
            # What is left is the newest: the last execution is complete.
            last = max(execs)
            for name in {o["name"] for o in ops.values() if o["launch_id"] == last}:
                expect(seen_ops[(last, name, "OP_END")] == 1,
                       "core %d: last launch %d lacks %s" % (c, last, name))


def check_host_side(t, pid, cores, steps, feed, minor, fetch_every):
    expect(len(t["run_start"]) == 1 and len(t["run_end"]) == 1, "one run_start and run_end")
    expect(t["run_end"][0]["reason"] == "steps", "run ended by %s" % t["run_end"][0]["reason"])
    expect(t["run_end"][0]["steps"] == steps, "run_end steps %d" % t["run_end"][0]["steps"])
    load, table, client = t["plugin_load"][0], t["api_table"][0], t["client_create"][0]
    expect(load["t"] <= table["t"] <= client["t_call"], "load, table, client in order")
    expect(table["minor"] == minor and client["minor"] == minor, "minor %d" % minor)
    expect(table["struct_size"] == 40 + 8 * (129 if minor == 94 else 88), "struct_size")
    expect(t["compile"][0]["module"] == "train_step", "compiled train_step")

    threads = {r["tid"]: r["name"] for r in t["thread_start"]}
    ended = {r["tid"] for r in t["thread_end"]}
    for name in ("pt_main_thread", "tpu_runtime", "tpu_device_sim"):
        expect(name in threads.values(), "no %s thread" % name)
    for tid, name in threads.items():
        expect(tid in ended, "thread %d (%s) has no thread_end" % (tid, name))
    runtime_tids = {tid for tid, n in threads.items() if n == "tpu_runtime"}
    main_tid = [tid for tid, n in threads.items() if n == "pt_main_thread"][0]

    ex = {e["launch_id"]: e for e in t["execute"]}
    expect(sorted(ex) == list(range(1, steps + 1)), "launch ids 1..%d" % steps)
    for e in ex.values():
        expect(e["t_call"] <= e["t_return"] and e["num_devices"] == cores
               and e["tid"] == main_tid, "execute %r" % e)

    de = collections.defaultdict(dict)
    for d in t["device_execution"]:
        de[d["launch_id"]][d["core"]] = d
    for lid, e in ex.items():
        expect(sorted(de[lid]) == list(range(cores)), "launch %d ran on %r" % (lid, sorted(de[lid])))
        for d in de[lid].values():
            expect(d["t_start"] >= e["t_call"], "launch %d started before Execute" % lid)
    for c in range(cores):
        runs = sorted((d["t_start"], d["t_end"], d["launch_id"]) for d in t["device_execution"] if d["core"] == c)
        for a, b in zip(runs, runs[1:]):
            expect(a[1] <= b[0], "core %d: launches %d and %d overlap" % (c, a[2], b[2]))
        expect([r[2] for r in runs] == sorted(r[2] for r in runs), "core %d runs in launch order" % c)

    # Ops tile each execution.
    ops = collections.defaultdict(list)
    for o in t["op"]:
        ops[(o["launch_id"], o["core"])].append(o)
    for lid in de:
        for c, d in de[lid].items():
            ol = sorted(ops[(lid, c)], key=lambda o: o["t_start"])
            if not expect(ol, "launch %d core %d has no ops" % (lid, c)):
                continue
            expect(ol[0]["t_start"] == d["t_start"] and ol[-1]["t_end"] == d["t_end"],
                   "launch %d core %d: ops do not span the execution" % (lid, c))
            for a, b in zip(ol, ol[1:]):
                expect(a["t_end"] == b["t_start"], "launch %d core %d: gap between ops" % (lid, c))

    irq = {(i["launch_id"], i["core"]): i for i in t["interrupt"]}
    # Each interrupt is an eventfd write the runtime thread reads back.
    efd = {r["core"]: r["event_fd"] for r in t["interrupt"]}
    reads = collections.defaultdict(int)
    for r in t["interrupt_read"]:
        expect(r["tid"] in runtime_tids and efd.get(r["core"]) == r["event_fd"] and r["count"] >= 1,
               "interrupt_read %r" % r)
        reads[r["core"]] += r["count"]
    for c in range(cores):
        n = sum(1 for i in t["interrupt"] if i["core"] == c)
        expect(reads[c] == n, "core %d: %d interrupts, %d read" % (c, n, reads[c]))
    comp = collections.defaultdict(dict)
    for r in t["completion"]:
        comp[r["launch_id"]][r["device"]] = r
    for lid in ex:
        for c in range(cores):
            d = de[lid].get(c)
            i = irq.get((lid, c))
            r = comp[lid].get(c)
            if not (expect(i, "no interrupt for launch %d core %d" % (lid, c)) and
                    expect(r, "no completion for launch %d device %d" % (lid, c)) and d):
                continue
            expect(d["t_end"] <= i["t"] <= r["t"],
                   "launch %d core %d: end %d, interrupt %d, callback %d" % (lid, c, d["t_end"], i["t"], r["t"]))
            # On the runtime thread, or on the caller's if the event was
            # already ready when it registered (a busy machine can do that).
            expect(r["tid"] in runtime_tids or r["tid"] == main_tid,
                   "callback of %d ran on tid %d" % (lid, r["tid"]))
    on_rt = sum(1 for r in t["completion"] if r["tid"] in runtime_tids)
    expect(on_rt >= 0.9 * len(t["completion"]),
           "only %d of %d callbacks on the runtime thread" % (on_rt, len(t["completion"])))

    st = {s["step"]: s for s in t["step"]}
    expect(sorted(st) == list(range(1, steps + 1)), "step records 1..%d" % steps)
    for s in st.values():
        last = max(r["t"] for r in comp[s["step"]].values()) if comp[s["step"]] else None
        expect(s["t_end"] == last, "step %d ends at its last callback" % s["step"])
        expect(s["t_start"] <= ex[s["step"]]["t_call"], "step %d starts before its Execute" % s["step"])

    # Transfers and the driver ioctls around them.
    io = collections.Counter(r["name"] for r in t["ioctl"])
    maps = io["GASKET_IOCTL_MAP_BUFFER"]
    xfers = len(t["h2d"]) + len(t["d2h"]) + len(t["infeed"]) + len(t["outfeed"])
    if t["client_create"][0]["device_node"]:
        expect(io["GASKET_IOCTL_RESET"] == 1, "RESET %d" % io["GASKET_IOCTL_RESET"])
        expect(io["GASKET_IOCTL_REGISTER_INTERRUPT"] == cores, "REGISTER_INTERRUPT %d" % io["GASKET_IOCTL_REGISTER_INTERRUPT"])
        expect(maps == xfers and io["GASKET_IOCTL_UNMAP_BUFFER"] == xfers,
               "MAP %d / UNMAP %d for %d transfers" % (maps, io["GASKET_IOCTL_UNMAP_BUFFER"], xfers))
    if feed == "buffer":
        expect(steps * cores <= len(t["h2d"]) <= (steps + 6) * cores, "h2d count %d" % len(t["h2d"]))
        for r in t["h2d"]:
            expect(r["t_call"] <= r["t_done"] <= r["t_return"], "h2d times %r" % r)
    if fetch_every:
        expect(len(t["d2h"]) == steps // fetch_every, "d2h count %d" % len(t["d2h"]))
        for r in t["d2h"]:
            expect(r["t_call"] <= r["t_return"] and r["t_call"] <= r["t_done"] and r["tid"] == main_tid,
                   "d2h %r" % r)
    readers = [tid for tid, n in threads.items() if n == "pt_data_worker"]
    if readers:
        fr = t["file_read"]
        expect(len(fr) >= steps, "%d file reads for %d steps" % (len(fr), steps))
        for r in fr:
            expect(r["tid"] in readers and r["bytes"] > 0 and r["t_call"] <= r["t_return"],
                   "file_read %r" % r)


def check_run(truth, trace_dir, cores="4", steps="0", feed="buffer", minor="94",
              fetch_every="10", wrapped_ok="0"):
    """A normal run: host side consistent, device buffers agree with it."""
    cores, steps, minor, fetch_every = int(cores), int(steps), int(minor), int(fetch_every)
    recs = load_truth(truth)
    pids = {r["pid"] for r in recs}
    if not expect(len(pids) == 1, "one process expected, got %r" % pids):
        return
    pid = pids.pop()
    t = by_type(recs)
    check_host_side(t, pid, cores, steps, feed, minor, fetch_every)
    check_devtrace_agrees(t, trace_dir, pid, cores, wrapped_ok == "1")


def check_feed(truth, trace_dir, cores="4", steps="0", raw="0", slice_bytes="0",
               expect_waits="0", long_waits="0"):
    """Infeed modes: the device's infeed ops consumed what the host sent,
    and each outfeed call returned only after the device produced it."""
    cores, steps, slice_bytes = int(cores), int(steps), int(slice_bytes)
    recs = load_truth(truth)
    pid = recs[0]["pid"]
    t = by_type(recs)
    check_host_side(t, pid, cores, steps, "infeed", 94, 10)
    check_devtrace_agrees(t, trace_dir, pid, cores)
    api_in = "TpuExecutor_EnqueueInfeed" if raw == "1" else "TpuTransferManager_TransferLiteralToInfeed"
    api_out = "TpuExecutor_DequeueOutfeed" if raw == "1" else "TpuTransferManager_TransferLiteralFromOutfeed"
    expect(len(t["h2d"]) == 0, "no h2d in infeed mode")
    for r in t["infeed"]:
        expect(r["api"] == api_in and r["bytes"] == slice_bytes and r["t_call"] <= r["t_return"],
               "infeed %r" % r)
    for r in t["outfeed"]:
        expect(r["api"] == api_out and r["bytes"] == 1024 and "error" not in r, "outfeed %r" % r)
    feeders = {r["tid"] for r in t["thread_start"] if r["name"] == "infeed_enqueue"}
    drainers = {r["tid"] for r in t["thread_start"] if r["name"] == "outfeed_dequeue"}
    expect({r["tid"] for r in t["infeed"]} <= feeders, "infeed from infeed_enqueue")
    expect({r["tid"] for r in t["outfeed"]} == drainers, "outfeed from outfeed_dequeue")
    waits = 0
    for c in range(cores):
        ins = sorted((o for o in t["op"] if o["core"] == c and o["category"] == "infeed"),
                     key=lambda o: o["t_start"])
        outs = sorted((o for o in t["op"] if o["core"] == c and o["category"] == "outfeed"),
                      key=lambda o: o["t_end"])
        sent = sorted((r for r in t["infeed"] if r["core"] == c and "error" not in r),
                      key=lambda r: r["t_return"])
        got = sorted((r for r in t["outfeed"] if r["core"] == c), key=lambda r: r["t_return"])
        expect(len(ins) == steps and len(outs) == steps, "core %d: %d infeed, %d outfeed ops" % (c, len(ins), len(outs)))
        expect(len(sent) >= steps, "core %d: %d infeeds sent for %d steps" % (c, len(sent), steps))
        expect(len(got) == steps, "core %d: %d outfeeds received for %d steps" % (c, len(got), steps))
        # The k-th infeed op cannot finish waiting before the k-th send.
        for k, (o, r) in enumerate(zip(ins, sent)):
            expect(o["t_start"] + o["wait_ns"] + 0 >= r["t_call"],
                   "core %d infeed op %d consumed data sent later" % (c, k))
            expect(o["bytes"] == slice_bytes, "core %d infeed op bytes %d" % (c, o["bytes"]))
            waits += o["wait_ns"] > 0
        # The k-th outfeed call returns after the k-th outfeed op ended.
        for k, (o, r) in enumerate(zip(outs, got)):
            expect(r["t_return"] >= o["t_end"], "core %d outfeed %d returned before the device produced it" % (c, k))
        # Waits are in the devtrace buffer as wait begin/end pairs.
        clock = t["device_clock"][0]
        _, _, dr = read_devtrace(os.path.join(trace_dir, "core%d.devtrace" % c))
        ends = {r["corr"]: r for r in dr if r["kind"] == "INFEED_WAIT_END"}
        begins = {r["corr"]: r for r in dr if r["kind"] == "INFEED_WAIT_BEGIN"}
        for o in ins:
            if o["wait_ns"]:
                e, b = ends.get(o["launch_id"]), begins.get(o["launch_id"])
                if expect(e and b, "core %d launch %d: no wait records" % (c, o["launch_id"])):
                    expect(abs(to_host(clock, b["ts"]) - o["t_start"]) <= 2 and
                           abs(to_host(clock, e["ts"]) - (o["t_start"] + o["wait_ns"])) <= 2 and
                           e["bytes"] == o["bytes"] and e["name"] == o["name"],
                           "core %d launch %d wait records" % (c, o["launch_id"]))
    if expect_waits == "1":
        expect(waits > 0, "the device never waited for infeed")
    if long_waits == "1":
        # Waits over a second carry clock syncs, in time order (checked above).
        synced = 0
        for c in range(cores):
            _, _, dr = read_devtrace(os.path.join(trace_dir, "core%d.devtrace" % c))
            inside = False
            for r in dr:
                if r["kind"] == "INFEED_WAIT_BEGIN":
                    inside = True
                elif r["kind"] == "INFEED_WAIT_END":
                    inside = False
                elif r["kind"] == "CLOCK_SYNC" and inside:
                    synced += 1
        expect(synced > 0, "no clock sync during a wait of over a second")


GASKET = {"GASKET_IOCTL_RESET": 0x4008dc00, "GASKET_IOCTL_MAP_BUFFER": 0x4020dc08,
          "GASKET_IOCTL_UNMAP_BUFFER": 0x4020dc09,
          "GASKET_IOCTL_REGISTER_INTERRUPT": 0x4020dc0b,
          "GASKET_IOCTL_UNREGISTER_INTERRUPT": 0x4008dc0c}
ACCEL = {"DRM_IOCTL_IVPU_SUBMIT": 0x40206445, "DRM_IOCTL_SYNCOBJ_EVENTFD": 0xc01864cf}


def check_ioctls(truth, mode, cores="4", steps="0", node="", strace=""):
    """The driver ioctls in the truth: exact numbers, one fd, the right
    counts for the mode; and, given an strace log taken with -e raw=ioctl,
    the same numbers as the kernel saw them."""
    cores, steps = int(cores), int(steps)
    t = by_type(load_truth(truth))
    io = t["ioctl"]
    cc = t["client_create"][0]
    expect(cc["device_node"] == node, "client_create node %r, expected %r" % (cc["device_node"], node))
    expect(len({r["fd"] for r in io}) == 1, "ioctls on one fd")
    table = GASKET if mode == "gasket" else ACCEL
    n = collections.Counter()
    for r in io:
        if not expect(r["name"] in table and table[r["name"]] == r["cmd"],
                      "%s ioctl %s = %#x" % (mode, r["name"], r["cmd"])):
            continue
        expect(r["rc"] == -1 and r["errno"] == 25, "ENOTTY from the /dev/null node")
        expect(r["t"] <= r["t_return"], "ioctl times")
        n[r["name"]] += 1
    xfers = sum(len(t[k]) for k in ("h2d", "d2h", "infeed", "outfeed"))
    if mode == "gasket":
        expect(n["GASKET_IOCTL_RESET"] == 1, "RESET x%d" % n["GASKET_IOCTL_RESET"])
        regs = [r for r in io if r["name"] == "GASKET_IOCTL_REGISTER_INTERRUPT"]
        expect(sorted(r["interrupt"] for r in regs) == list(range(cores)), "one interrupt per core")
        expect(len({r["event_fd"] for r in regs}) == cores, "an eventfd per core")
        expect(all(r["bar_index"] == 2 for r in regs), "BAR 2")
        expect(n["GASKET_IOCTL_UNREGISTER_INTERRUPT"] == cores, "UNREGISTER per core")
        expect(n["GASKET_IOCTL_MAP_BUFFER"] == n["GASKET_IOCTL_UNMAP_BUFFER"] == xfers > 0,
               "MAP %d UNMAP %d for %d transfers" % (n["GASKET_IOCTL_MAP_BUFFER"],
                                                     n["GASKET_IOCTL_UNMAP_BUFFER"], xfers))
        maps = {(r["host_address"], r["size"], r["device_address"]) for r in io
                if r["name"] == "GASKET_IOCTL_MAP_BUFFER"}
        unmaps = {(r["host_address"], r["size"], r["device_address"]) for r in io
                  if r["name"] == "GASKET_IOCTL_UNMAP_BUFFER"}
        expect(maps == unmaps, "every MAP_BUFFER has its UNMAP_BUFFER")
    else:
        expect(n["DRM_IOCTL_IVPU_SUBMIT"] == steps == len(t["execute"]),
               "SUBMIT x%d for %d executions" % (n["DRM_IOCTL_IVPU_SUBMIT"], len(t["execute"])))
        subs = sorted(r["launch_id"] for r in io if r["name"] == "DRM_IOCTL_IVPU_SUBMIT")
        expect(subs == sorted(e["launch_id"] for e in t["execute"]), "a SUBMIT per launch")
        syn = [r for r in io if r["name"] == "DRM_IOCTL_SYNCOBJ_EVENTFD"]
        expect(len(syn) == cores and len({r["event_fd"] for r in syn}) == cores,
               "SYNCOBJ_EVENTFD per core")
    if strace:
        seen = collections.Counter()
        with open(strace) as f:
            for line in f:
                # A call interrupted by another thread's is printed as
                # "ioctl(... <unfinished ...>" and "<... ioctl resumed>".
                if " ioctl(" not in line:
                    continue
                args = line.split(" ioctl(", 1)[1].split(",")
                seen[int(args[1].strip(), 16)] += 1
        for name, cmd in table.items():
            expect(seen[cmd] == n[name], "strace saw %#x %d times, truth %d (%s)"
                   % (cmd, seen[cmd], n[name], name))


def one_pid(recs):
    pids = {r["pid"] for r in recs}
    expect(len(pids) == 1, "one process expected, got %r" % pids)
    return pids.pop() if pids else 0


def check_late_load(truth, min_ms):
    t = by_type(load_truth(truth))
    start, load = t["run_start"][0]["t"], t["plugin_load"][0]["t_call"]
    expect(load - start >= int(min_ms) * 10**6,
           "plugin loaded %.0f ms after start, wanted >= %s" % ((load - start) / 1e6, min_ms))
    early = [r for r in t["file_read"] if r["t_return"] < load]
    expect(early, "the input pipeline read nothing before the plugin was loaded")
    expect(t["client_create"][0]["t_call"] >= load, "client created after the load")


def check_churn(truth, min_threads):
    t = by_type(load_truth(truth))
    pool = [r for r in t["thread_start"] if r["name"] == "pt_thread_pool"]
    ends = {r["tid"]: r for r in t["thread_end"]}
    expect(len(pool) >= int(min_threads), "%d churn threads, wanted >= %s" % (len(pool), min_threads))
    reads = collections.Counter(r["tid"] for r in t["file_read"])
    for r in pool:
        e = ends.get(r["tid"])
        if expect(e, "churn thread %d never ended" % r["tid"]):
            expect(e["t"] >= r["t"], "churn thread %d ends before it starts" % r["tid"])
        expect(reads[r["tid"]] == 1, "churn thread %d read %d times" % (r["tid"], reads[r["tid"]]))


def check_trainers(truth, n, steps):
    recs = load_truth(truth)
    pids = sorted({r["pid"] for r in recs})
    expect(len(pids) == int(n), "%d trainer processes, wanted %s" % (len(pids), n))
    nodes, traces = set(), set()
    for pid in pids:
        t = by_type(recs, pid)
        expect(len(t["run_end"]) == 1 and t["run_end"][0]["reason"] == "steps",
               "pid %d did not finish its steps" % pid)
        expect(sorted(e["launch_id"] for e in t["execute"]) == list(range(1, int(steps) + 1)),
               "pid %d launch ids" % pid)
        nodes.add(t["client_create"][0]["device_node"])
        traces.add(t["client_create"][0]["trace_dir"])
        expect({r["pid"] for r in t["op"]} == {pid}, "pid %d ops" % pid)
    expect(len(traces) == int(n), "each trainer has its own trace buffers: %r" % traces)
    if os.geteuid() == 0:
        expect(len(nodes) == int(n) and "" not in nodes, "each trainer has its own node: %r" % nodes)


def check_host_op(truth, min_ms, step):
    t = by_type(load_truth(truth))
    step = int(step)
    op = t["host_op"]
    if not expect(len(op) == 1, "%d host_op records" % len(op)):
        return
    op = op[0]
    main = [r["tid"] for r in t["thread_start"] if r["name"] == "pt_main_thread"][0]
    expect(op["name"] == "checkpoint" and op["tid"] == main, "host op on the main thread")
    expect(op["t_end"] - op["t_start"] >= int(min_ms) * 10**6, "host op lasted %.0f ms" % ((op["t_end"] - op["t_start"]) / 1e6))
    ex = {e["launch_id"]: e for e in t["execute"]}
    expect(ex[step]["t_call"] >= op["t_end"], "step %d launched during the host op" % step)
    expect(ex[step - 1]["t_call"] <= op["t_start"], "step %d launched after the host op" % (step - 1))


def check_input_bound(truth, lo, hi):
    """The device waited for input about the fraction asked for: idle
    time between executions on core 0 over the steady part of the run."""
    t = by_type(load_truth(truth))
    runs = sorted((d["t_start"], d["t_end"]) for d in t["device_execution"] if d["core"] == 0)
    runs = runs[len(runs) // 5:]
    span = runs[-1][1] - runs[0][0]
    idle = 1 - sum(b - a for a, b in runs) / span
    print("device idle fraction %.3f" % idle)
    expect(float(lo) <= idle <= float(hi), "device idle %.3f, wanted %s..%s" % (idle, lo, hi))
    wait = sum(s["input_wait_ns"] for s in t["step"])
    expect(wait > 0, "the step loop never waited for input")


def check_overflow(truth, trace_dir, capacity, cores="4"):
    """Small ring buffers wrapped: fixed size, the newest `capacity` records
    kept, and those agree with the truth."""
    recs = load_truth(truth)
    t = by_type(recs)
    for c in range(int(cores)):
        h, _, dr = read_devtrace(os.path.join(trace_dir, "core%d.devtrace" % c))
        expect(h["capacity"] == int(capacity), "core %d capacity %d" % (c, h["capacity"]))
        expect(h["write_seq"] > 3 * h["capacity"], "core %d did not wrap (%d records)" % (c, h["write_seq"]))
        expect(len(dr) == h["capacity"] and dr[0]["seq"] == h["write_seq"] - h["capacity"] + 1,
               "core %d keeps the newest %d" % (c, h["capacity"]))
        expect(h["file_size"] == h["records_offset"] + 64 * h["capacity"], "core %d file grew" % c)
    check_devtrace_agrees(t, trace_dir, one_pid(recs), int(cores), wrapped_ok=True)


def check_signal(truth):
    recs = load_truth(truth)
    one_pid(recs)
    t = by_type(recs)
    expect(len(t["run_end"]) == 1 and t["run_end"][0]["reason"] == "signal",
           "run_end %r" % t["run_end"])
    ended = {r["tid"] for r in t["thread_end"]}
    for r in t["thread_start"]:
        expect(r["tid"] in ended, "thread %s (%d) did not end" % (r["name"], r["tid"]))
    expect(t["execute"] and t["thread_start"], "executions and threads before the signal")
    steps = {s["step"] for s in t["step"]}
    for e in t["execute"]:
        expect(e["launch_id"] in steps, "launch %d has no step record" % e["launch_id"])


def check_crash(truth, after):
    recs = load_truth(truth)
    one_pid(recs)
    t = by_type(recs)
    after = int(after)
    expect(len(t["crash"]) == 1 and t["crash"][0]["step"] == after, "crash %r" % t["crash"])
    expect(not t["run_end"], "a crashed run has no run_end")
    expect(max(e["launch_id"] for e in t["execute"]) == after, "launched past the crash")
    expect(all(e["t_call"] < t["crash"][0]["t"] for e in t["execute"]), "execute after the crash")


def check_inflight(trace_file, name, state):
    """While a long op runs its core's buffer shows it begun and not ended;
    once cut short, ended with the CANCELLED flag."""
    _, _, dr = read_devtrace(trace_file)
    begins = [r for r in dr if r["kind"] == "OP_BEGIN" and r["name"] == name]
    ends = [r for r in dr if r["kind"] == "OP_END" and r["name"] == name]
    expect(len(begins) == 1, "%d OP_BEGIN of %s" % (len(begins), name))
    if state == "running":
        expect(not ends, "OP_END of %s written before it ended" % name)
        syncs = [r for r in dr if r["kind"] == "CLOCK_SYNC" and begins and r["seq"] > begins[0]["seq"]]
        expect(syncs, "no clock sync while the op runs")
    else:
        expect(len(ends) == 1 and ends[0]["flags"] & RF_CANCELLED, "%s not ended cancelled" % name)


def check_long_op(truth, min_ms, cancelled="0"):
    t = by_type(load_truth(truth))
    ops = [o for o in t["op"] if o["module"] == "long_step"]
    expect(len(ops) == 4, "%d long ops" % len(ops))
    for o in ops:
        expect(o["t_end"] - o["t_start"] >= int(min_ms) * 10**6, "long op lasted %d ns" % (o["t_end"] - o["t_start"]))
        expect(bool(o.get("cancelled")) == (cancelled == "1"), "long op cancelled %r" % o.get("cancelled"))


def check_rate(truth, min_rate):
    """Executions per second the device completed, start to end."""
    t = by_type(load_truth(truth))
    runs = [d for d in t["device_execution"] if d["core"] == 0]
    span = max(d["t_end"] for d in runs) - min(d["t_start"] for d in runs)
    rate = len(runs) / (span / 1e9)
    busy = sum(d["t_end"] - d["t_start"] for d in runs) / span
    print("%d executions in %.3f s: %.0f/s, device busy %.2f" % (len(runs), span / 1e9, rate, busy))
    expect(rate >= float(min_rate), "%.0f executions/s, wanted >= %s" % (rate, min_rate))


def check_profile(truth, xspace, cores="4", ops="1"):
    """The XSpace of tpu-trainer --profile (the plugin's PJRT profiler
    extension), decoded by Python's protobuf, holds exactly the device's
    executions and ops of the truth: one /device:TPU:<core> plane each,
    "XLA Modules" and "XLA Ops" lines, names, run_id, categories, flops and
    bytes, durations to the ns, every start the truth's CLOCK_MONOTONIC
    start plus one CLOCK_REALTIME offset, events in order, ops apart."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "harness"))
    import xspace as xs
    t = by_type(load_truth(truth))
    cap = xs.Capture(xspace, 0)
    cores = int(cores)
    names = sorted(cap.planes)
    expect(names == sorted("/device:TPU:%d" % c for c in range(cores)),
           "planes %r" % names)
    for name, plane in cap.planes.items():
        expect(plane.id == int(name.rsplit(":", 1)[1]), "%s has id %d" % (name, plane.id))
        expect(all(k == v.id for k, v in plane.event_metadata.items()),
               "%s: event metadata keys are ids" % name)
        expect(all(k == v.id for k, v in plane.stat_metadata.items()),
               "%s: stat metadata keys are ids" % name)
        expect(sorted(l.name for l in plane.lines) == ["XLA Modules", "XLA Ops"],
               "%s lines %r" % (name, [l.name for l in plane.lines]))
        for line in plane.lines:
            offs = [(e.offset_ps, e.offset_ps + e.duration_ps) for e in line.events]
            expect(offs == sorted(offs, key=lambda o: (o[0], -o[1])),
                   "%s %s: events out of order" % (name, line.name))
            expect(all(o % 1000 == 0 for o, _ in offs), "%s: offsets in whole ns" % name)
            if line.name == "XLA Ops":
                expect(all(a[1] <= b[0] for a, b in zip(offs, offs[1:])),
                       "%s: ops overlap" % name)
    expect(not cap.plane_stat("dropped_events"), "dropped events %r" % cap.plane_stat("dropped_events"))

    offsets = set()

    def match(kind, recs, line, key_of):
        got = collections.defaultdict(list)
        for e in cap.line_events("/device:TPU:", line):
            got[(int(e.plane.rsplit(":", 1)[1]), e.stats.get("run_id"), e.name)].append(e)
        want = collections.defaultdict(list)
        for r in recs:
            want[key_of(r)].append(r)
        expect(sorted(got) == sorted(want),
               "%s: %d keys in the XSpace, %d in the truth; only in the XSpace %r, only in the truth %r"
               % (kind, len(got), len(want), sorted(set(got) - set(want))[:5],
                  sorted(set(want) - set(got))[:5]))
        for k in set(got) & set(want):
            if not expect(len(got[k]) == len(want[k]), "%s %r: %d events, %d in the truth"
                          % (kind, k, len(got[k]), len(want[k]))):
                continue
            for e, r in zip(sorted(got[k], key=lambda e: e.start),
                            sorted(want[k], key=lambda r: r["t_start"])):
                expect(e.end - e.start == r["t_end"] - r["t_start"],
                       "%s %r lasts %d ns, %d in the truth" % (kind, k, e.end - e.start,
                                                              r["t_end"] - r["t_start"]))
                offsets.add(e.start - r["t_start"])
                expect(bool(e.stats.get("cancelled")) == bool(r.get("cancelled")),
                       "%s %r cancelled %r" % (kind, k, e.stats.get("cancelled")))
                if kind == "op":
                    expect(e.stats.get("hlo_category") == r["category"],
                           "op %r category %r, %r in the truth" % (k, e.stats.get("hlo_category"),
                                                                   r["category"]))
                    expect(e.stats.get("flops", 0) == r["flops"] and
                           e.stats.get("bytes_accessed", 0) == r["bytes"],
                           "op %r flops/bytes %r, truth %r/%r" % (k, e.stats, r["flops"], r["bytes"]))
        return sum(len(v) for v in got.values())

    n = match("execution", t["device_execution"], "XLA Modules",
              lambda r: (r["core"], r["launch_id"], r["module"]))
    expect(n > 0, "no executions in the XSpace")
    if ops == "1":
        n = match("op", t["op"], "XLA Ops", lambda r: (r["core"], r["launch_id"], r["name"]))
        expect(n > 0, "no ops in the XSpace")
    expect(len(offsets) == 1, "realtime - monotonic offsets %r: not one clock" % sorted(offsets)[:5])
    import time
    if offsets:
        off = offsets.pop()
        now = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        expect(abs(off - now) < 10**9, "timestamps are not CLOCK_REALTIME (offset %d, now %d)"
               % (off, now))


def main():
    if len(sys.argv) < 2 or "check_" + sys.argv[1] not in globals():
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    kwargs = dict(a.split("=", 1) for a in sys.argv[2:])
    globals()["check_" + sys.argv[1]](**kwargs)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
