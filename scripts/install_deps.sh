#!/usr/bin/env bash
# Installs the Debian packages the build and tests need; quick and silent
# when everything is already there. Sourced or run by the other scripts.
set -euo pipefail

MACE_APT_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  protobuf-compiler libprotobuf-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev
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
