#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The daemon's device-memory timeline of a leaking trainer, in 60 s.

`make bench-long`'s memory run (tests/bench/bench_long_memory.py says what
is checked) made short: short tiers (--memory-timeline-tiers 1s:20,5s:12,
so that after a minute the capture's timeline holds both resolutions),
reports at 20 s and 60 s, a trainer leaking 16 KiB every 20 ms step. The
capture triggered at the end carries the timeline back to the trainer's
start, its slope the leak's; acceltrace_device_memory_bytes reports it;
the timelines' bytes stay within their bound. (The daemon's RSS over time
is test_daemon_memory.py's; here it is only reported.)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
from e2e import finish, require_root  # noqa: E402
import bench_long_memory  # noqa: E402

if __name__ == "__main__":
    require_root()
    bench_long_memory.run(60, [20, 60], tiers="1s:20,5s:12", leak=16384, step_time="20ms")
    finish()
