#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace probes --pid on a running simulated trainer: the plugin, its
build id, the PJRT table found by scanning at the right version and
address, the device node, and each probe's placement (on the push after
endbr64, emulated). Then the table in the running process is corrupted
(its major version set to 1, through /proc/PID/mem): probes says it
refuses the table and why, and record will not guess at it."""
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (running_trainer, acceltrace, check, finish, require_root, tmpdir, truth)


def main():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms", truth=tp)
    if not t:
        return
    rc, out, err = acceltrace("probes", "-j", "--pid", str(t.pid))
    check(rc == 0, "probes: exit %d: %s" % (rc, err))
    d = json.loads(out) if rc == 0 else {"processes": [], "probes": []}
    proc = d["processes"][0] if d["processes"] else {}
    libs = [l for l in proc.get("libraries", []) if l["pjrt"]]
    # The truth is flushed every second: wait for the api_table record.
    api = []
    for _ in range(30):
        api = [r for r in truth(tp, t.pid) if r["type"] == "api_table"]
        if api:
            break
        time.sleep(0.2)
    check(api, "the trainer's truth names its table")
    check(libs and libs[0]["table_found"] and libs[0]["pjrt_minor"] == 94 and
          libs[0]["table_found_by_scan"], "probes: the table found by scanning at minor 94: %s" % libs)
    if api and libs:
        check(libs[0]["table_addr"] == api[0]["addr"], "probes: the table at the address "
              "GetPjrtApi returned (0x%x vs 0x%x)" % (libs[0]["table_addr"], api[0]["addr"]))
    check(libs and len(libs[0]["build_id"]) == 40, "probes: a build id")
    nodes = proc.get("device_nodes", [])
    check(nodes and nodes[0]["driver"] == "gasket", "probes: the device node, gasket: %s" % nodes)
    ex = [p for p in d["probes"] if p["function"] == "PJRT_LoadedExecutable_Execute"]
    check(ex and ex[0]["target"] == "PJRT_Api slot 55" and
          ex[0]["attach_offset"] == ex[0]["file_offset"] + 4 and
          ex[0]["instruction"] == "push %rbp" and not ex[0]["single_steps"],
          "probes: Execute at slot 55, on the push after endbr64, emulated: %s" % ex)
    check(all(not p["single_steps"] for p in d["probes"] if "slot" in p["target"]),
          "probes: no PJRT slot probe single-steps")
    rc, text, err = acceltrace("probes", "--pid", str(t.pid))
    check(rc == 0 and "PJRT 0.94 table" in text and "emulated" in text,
          "probes (plain): says the version and the placement")

    # Corrupt the major version in the running process's table.
    if api:
        with open("/proc/%d/mem" % t.pid, "r+b", buffering=0) as mem:
            mem.seek(api[0]["addr"] + 32)
            mem.write(struct.pack("<i", 1))
        rc, out, err = acceltrace("probes", "-j", "--pid", str(t.pid))
        d = json.loads(out) if rc == 0 else {"processes": [{}]}
        libs = [l for l in d["processes"][0].get("libraries", []) if l["pjrt"]]
        check(rc == 0 and libs and libs[0]["table_refused"] and "major" in libs[0]["table"],
              "probes: a table with major version 1 is refused, saying why: %s" % libs)
        check(not [p for p in d.get("probes", []) if "slot" in p.get("target", "")],
              "probes: no slot probe planned on a refused table")
        rc, text, err = acceltrace("probes", "--pid", str(t.pid))
        check("refused" in text and "major" in text, "probes (plain): the refusal: %s" % text)
        rc, out, err = acceltrace("record", "--pid", str(t.pid), "--arm-timeout", "2s",
                                  "--logdir", os.path.join(work, "logs"))
        check(rc == 1 and "refused" in err, "record: no capture from a refused table, "
              "saying so (%d): %s" % (rc, err))
        # Said once however often the rescans find it again (a process that
        # keeps loading a plugin is said at its 1st, 2nd, 4th ... refusal).
        said = err.count("refusing the PJRT table")
        check(said <= 2 and ("refusal 1 there" in err or not said),
              "record: the refusal said with its count, not at every rescan (%d times): %s"
              % (said, err[-800:]))
    t.stop()


if __name__ == "__main__":
    require_root()
    main()
    finish()
