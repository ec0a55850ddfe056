#!/usr/bin/env bash
# Installs what the benchmarks need beyond the build and test packages
# (scripts/install-deps.sh), and only what is missing: bpftrace (the peer
# the slowdown benchmarks compare with) and python3-torch (the PyTorch loop,
# run by /usr/bin/python3). Safe to run again.
set -euo pipefail

pkgs=(bpftrace python3-torch)
missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "bench deps: need root to install: ${missing[*]}" >&2
	exit 1
fi
echo "bench deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
