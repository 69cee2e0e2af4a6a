#!/usr/bin/env bash
# Installs, from Debian 12's packages, whatever amq needs to build, test and benchmark;
# with the argument `aarch64`, what `make test-aarch64` needs instead: the aarch64 cross
# compiler, qemu-user to run its programs, and the arm64 builds of amq's libraries
# (Debian multiarch: beside the amd64 ones, in /usr/lib/aarch64-linux-gnu).
# Idempotent: packages already installed are left alone, and apt is not touched at all
# when nothing is missing. Runs as root, or through sudo.
set -euo pipefail

target="${1:-native}"
packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  # libraries amq uses
  libxxhash-dev libcli11-dev libfmt-dev libssl-dev libhiredis-dev nlohmann-json3-dev
  # tests and benchmarks
  googletest libgtest-dev libbenchmark-dev time gnuplot-nox
  # the Python package (python/): built with Debian's python3, tested with pytest
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-hypothesis
  python3-setuptools python3-wheel python3-pip python3-venv python3-marisa
  # outside implementations amq is checked or measured against
  default-jdk-headless libguava-java redis-server redis-tools
  libbloom-dev libmarisa-dev libleveldb-dev
  golang-go golang-github-seiflotfy-cuckoofilter-dev
  # data
  wamerican wamerican-insane
)
if [ "$target" = aarch64 ]; then
  packages=(g++-aarch64-linux-gnu qemu-user
            libfmt-dev:arm64 libssl-dev:arm64 libxxhash-dev:arm64 libhiredis-dev:arm64 libgtest-dev:arm64)
elif [ "$target" != native ]; then
  echo "setup: unknown target '$target' (native or aarch64)" >&2; exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root, no sudo" >&2; exit 2
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if [ "$target" = aarch64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian enables the packaged redis-server as a service; amq's tests start their own
# servers on free ports, so the system one is left as the package set it up.
echo "setup: done"
