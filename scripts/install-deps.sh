#!/usr/bin/env bash
# Installs the Debian packages acceltrace's build, tests and demo need, and
# only those that are missing. Safe to run again: with everything present it
# only asks dpkg and exits.
#
#   scripts/install-deps.sh           install what is missing
#   scripts/install-deps.sh --check   exit 1 and list what is missing
set -euo pipefail

# Build: compilers, BPF toolchain and the libraries we link.
build_pkgs=(make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libnghttp2-dev
            liburing-dev libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev
            libcurl4-openssl-dev libssl-dev)
# Tests: independent decoders of what we write, privilege tools, python,
# a real Prometheus server scraping the daemon, clang's sanitizer and
# libFuzzer runtimes for the fuzz harnesses (tests/fuzz/), and man to render
# the installed man pages (tests/cli/test_install.sh), and a real gRPC client
# (Python stubs made at test time) for the daemon's ProfilerService.
test_pkgs=(protobuf-compiler python3 python3-protobuf util-linux procps strace
           prometheus libclang-rt-dev man-db groff-base python3-grpcio
           python3-grpc-tools)

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

if [[ ${1:-} == --check ]]; then
	if ((${#missing[@]})); then
		echo "missing packages: ${missing[*]}" >&2
		exit 1
	fi
	exit 0
fi

((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "install-deps: need root to install: ${missing[*]}" >&2
	echo "install-deps: run 'sudo $0' or install them by hand" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has empty package lists; update once, then install.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
