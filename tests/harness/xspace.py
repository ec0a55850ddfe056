# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Reading acceltrace captures with a reader acceltrace did not write.

The XSpace is decoded by Python's google.protobuf, with the module generated
from user/output/xplane.proto by protoc at test time. Events come back with absolute
CLOCK_MONOTONIC times (line timestamp + offset + the window start, which the
record summary reports), and with their true times where acceltrace clipped
them to the window.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

_pb2 = None


def xplane_pb2():
    """The generated module, built once per process."""
    global _pb2
    if _pb2 is None:
        # A machine without protoc (the lent GPU machine) is handed the
        # module generated here, in XPLANE_PB2_DIR.
        out = os.environ.get("XPLANE_PB2_DIR")
        if not out:
            out = tempfile.mkdtemp(prefix="xplane-pb2-")
            atexit.register(shutil.rmtree, out, True)
            subprocess.run(["protoc", "--python_out=" + out, "-I", "user/output",
                            "user/output/xplane.proto"], check=True)
        sys.path.insert(0, out)
        import xplane_pb2 as mod  # noqa: E402
        _pb2 = mod
    return _pb2


# Host-plane lines from 2^62 up are device-memory counter lines, not
# threads (docs/capture-format.md, "Device memory").
COUNTER_LINE_ID = 1 << 62


def thread_lines(plane):
    """A host plane's thread lines: not its counter lines."""
    return [ln for ln in plane.lines if ln.id < COUNTER_LINE_ID]


class Event:
    """One XEvent, with its stats by name and absolute times."""

    def __init__(self, name, start, end, stats, plane, line):
        self.name = name
        self.start = start          # CLOCK_MONOTONIC ns, as written (clipped)
        self.end = end
        self.stats = stats
        self.plane = plane
        self.line = line
        ts = stats.get("acceltrace.true_start_ns")
        te = stats.get("acceltrace.true_end_ns")
        self.window_start = None
        self._true = (ts, te)

    def __repr__(self):
        return "Event(%s %d..%d %s)" % (self.name, self.start, self.end, self.stats)


class Capture:
    def __init__(self, path, window_start_ns):
        pb2 = xplane_pb2()
        self.space = pb2.XSpace()
        with open(path, "rb") as f:
            self.space.ParseFromString(f.read())
        self.window_start = window_start_ns
        self.events = []
        self.planes = {}
        for plane in self.space.planes:
            self.planes[plane.name] = plane
            emeta = {k: v for k, v in plane.event_metadata.items()}
            smeta = {k: v.name for k, v in plane.stat_metadata.items()}
            for line in plane.lines:
                for ev in line.events:
                    stats = {}
                    md = emeta.get(ev.metadata_id)
                    for st in list(md.stats if md else []) + list(ev.stats):
                        stats[smeta.get(st.metadata_id, "?")] = _stat_value(st, smeta)
                    start = window_start_ns + line.timestamp_ns + ev.offset_ps // 1000
                    end = start + ev.duration_ps // 1000
                    e = Event(md.name if md else "?", start, end, stats,
                              plane.name, line)
                    self.events.append(e)

    def true_start(self, e):
        v = e.stats.get("acceltrace.true_start_ns")
        return e.start if v is None else self.window_start + v

    def true_end(self, e):
        v = e.stats.get("acceltrace.true_end_ns")
        return e.end if v is None else self.window_start + v

    def named(self, name, plane=None):
        return [e for e in self.events if e.name == name and
                (plane is None or e.plane == plane)]

    def on_plane_prefix(self, prefix):
        return [e for e in self.events if e.plane.startswith(prefix)]

    def line_events(self, plane_prefix, line_name):
        return [e for e in self.events if e.plane.startswith(plane_prefix)
                and e.line.name == line_name]

    def plane_stat(self, name):
        """Plane name -> the value of its plane-level stat @name (planes
        without it left out): acceltrace.pid, acceltrace.core..."""
        out = {}
        for p in self.space.planes:
            smeta = {k: v.name for k, v in p.stat_metadata.items()}
            for st in p.stats:
                if smeta.get(st.metadata_id) == name:
                    out[p.name] = _stat_value(st, smeta)
        return out


def _stat_value(st, smeta):
    which = st.WhichOneof("value")
    if which == "ref_value":
        return smeta.get(st.ref_value, "?")
    return getattr(st, which) if which else None


def load_truth(path):
    """The simulator's ground truth, as a list of dicts."""
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    return recs


def record_summary(stdout_text):
    """The JSON summary `acceltrace record -j` prints (last JSON object)."""
    text = stdout_text.strip()
    i = text.rfind("\n{")
    return json.loads(text[i + 1:] if i >= 0 else text)
