#!/usr/bin/env bash
# Installs, from Debian 12's packages, what `make test-aarch64` needs: the aarch64 cross
# compiler, qemu-user to run its programs, and the arm64 builds of amq's libraries
# (Debian multiarch: they sit beside the amd64 ones in /usr/lib/aarch64-linux-gnu).
# Idempotent, like setup.sh: apt is not touched when nothing is missing.
set -euo pipefail

packages=(g++-aarch64-linux-gnu qemu-user
          libfmt-dev:arm64 libssl-dev:arm64 libxxhash-dev:arm64 libhiredis-dev:arm64 libgtest-dev:arm64)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-aarch64: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup-aarch64: missing packages (${missing[*]}) and not root, no sudo" >&2; exit 2
  fi
fi
echo "setup-aarch64: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then $SUDO dpkg --add-architecture arm64; fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-aarch64: done"
