#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""record --format xspace,perfetto,json (docs/export.md): beside the
.xplane.pb, HOST.perfetto-trace and HOST.trace.json.gz, named in the -j
summary, holding the XSpace's spans at the same times (true times for the
spans clipped to the window) on CLOCK_MONOTONIC, with a flow from every
launch to its device work (tests/export/export_check.py, independent
decoders); a bad --format is a usage error."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (acceltrace, check, finish, record, require_root, running_trainer,  # noqa: E402
                 tmpdir)


def formats():
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "30s", "--step-time", "1ms")
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s", "--format",
                        "xspace,perfetto,json", "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "record --format exited %d: %s" % (rc, err[-500:])):
        return
    stem = s["path"][:-len(".xplane.pb")]
    ex = s.get("exports", {})
    check(ex.get("perfetto") == stem + ".perfetto-trace" and
          ex.get("json") == stem + ".trace.json.gz", "exports named in the summary: %s" % ex)
    if all(os.path.exists(p) for p in ex.values()) and len(ex) == 2:
        p = subprocess.run(["/usr/bin/python3", "tests/export/export_check.py", s["path"],
                            ex["perfetto"], ex["json"]], capture_output=True, text=True)
        print(p.stdout.strip())
        check(p.returncode == 0, "exports hold what the XSpace holds: %s" % p.stderr[-2000:])


def bad_format():
    rc, out, err = acceltrace("record", "--format", "xspace,svg", "-a", "--duration", "1s")
    check(rc == 2 and "--format" in err, "bad --format: exit %d, %s" % (rc, err.strip()))


if __name__ == "__main__":
    require_root()
    bad_format()
    formats()
    finish()
