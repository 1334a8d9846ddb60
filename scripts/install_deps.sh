#!/usr/bin/env bash
# Installs the Debian packages the build and tests need; quick and silent
# when everything is already there. Sourced or run by the other scripts.
set -euo pipefail

MACE_APT_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  protobuf-compiler libprotobuf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev
  g++-aarch64-linux-gnu qemu-user
  openssh-server openssh-client
)

missing=()
for package in "${MACE_APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    "${missing[@]}" >/dev/null
fi

# ---- aarch64 cross build (scripts/test_aarch64.sh) ------------------------
# The target's protobuf and GoogleTest come from Debian multiarch (arm64
# packages next to the amd64 ones); their libc6:arm64 dependency also gives
# qemu-aarch64 the loader it runs the tests with. Multi-Arch: same packages
# must match the host's versions, so apt may upgrade a few host libraries
# to the arm64 ones' version. Only dpkg queries when all is in place.
MACE_ARM64_PACKAGES=(libprotobuf-dev:arm64 libgtest-dev:arm64)

install_arm64_multiarch() {
  local package missing_arm64=()
  for package in "${MACE_ARM64_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
        grep -q "install ok installed"; then
      missing_arm64+=("$package")
    fi
  done
  [ ${#missing_arm64[@]} -eq 0 ] && return 0

  echo "installing: ${missing_arm64[*]}"
  local sudo=""
  if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing_arm64[@]}" >/dev/null
}

install_arm64_multiarch
