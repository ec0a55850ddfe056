# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tensorflow.ProfilerService's Python stubs, generated at test time by
grpc_tools from our copies of the upstream protos, and a ProfileRequest as
XProf's capture dialog fills it: what the ProfilerService tests call the
daemon with (a client we did not write: grpcio)."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

from e2e import skip


def stubs():
    """profiler_service_pb2(_grpc) generated from our protos, imported."""
    out = tempfile.mkdtemp(prefix="pb2-grpc-")
    atexit.register(shutil.rmtree, out, True)
    protos = [os.path.join("user/profiler_service", f)
              for f in ("profiler_options.proto", "profiler_service.proto")]
    p = subprocess.run(["/usr/bin/python3", "-m", "grpc_tools.protoc", "-I",
                        "user/profiler_service", "--python_out=" + out,
                        "--grpc_python_out=" + out] + protos, capture_output=True, text=True)
    if p.returncode:
        skip("grpc_tools.protoc failed (python3-grpc-tools?): %s" % p.stderr)
    sys.path.insert(0, out)
    import profiler_options_pb2 as opts  # noqa: E402
    import profiler_service_pb2 as svc  # noqa: E402
    import profiler_service_pb2_grpc as rpc  # noqa: E402
    return opts, svc, rpc


OPTS, SVC, RPC = stubs()
TOOLS = ["trace_viewer", "op_profile", "input_pipeline", "kernel_stats", "memory_viewer",
         "memory_profile", "overview_page", "pod_viewer", "tensorflow_stats", "xplane.pb"]


def xprof_request(d, session, duration_ms=2000, host="pshost", root=None):
    """A ProfileRequest as XProf's client fills it (capture_profile.cc)."""
    o = OPTS.ProfileOptions(version=1, host_tracer_level=2, device_tracer_level=1,
                            duration_ms=duration_ms, session_id=session)
    return SVC.ProfileRequest(duration_ms=duration_ms, max_events=1000000, tools=TOOLS,
                              opts=o, session_id=session, host_name=host,
                              repository_root=root or os.path.join(d.logdir, "plugins",
                                                                   "profile"))


def status_of(fn):
    """(status code, details) of a call: OK and None when it returned."""
    import grpc
    try:
        fn()
    except grpc.RpcError as e:
        return e.code(), e.details()
    return grpc.StatusCode.OK, None
