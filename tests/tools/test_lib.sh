# Shared by the shell tests of the mace command (tests/tools/*_test.sh):
#   source "$(dirname "$0")/test_lib.sh" "$@"
# checks the one argument (the mace binary) and sets MACE (absolute), SRC
# (the checkout), TMP (removed at exit, after the commands in CLEANUP) and
# CHECKS; defines fail, expect and write_zeros_npy.

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <path-to-mace>" >&2
  exit 2
fi
MACE="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
CLEANUP=()
run_cleanup() {
  local command
  for command in "${CLEANUP[@]}"; do eval "$command" || true; done
  rm -rf "$TMP"
}
trap run_cleanup EXIT
CHECKS=0

fail() {
  printf 'FAIL: %b\n' "$*" >&2
  exit 1
}

# expect CODE PATTERN CMD...: CMD exits with CODE and its output (stdout and
# stderr) matches the extended regex PATTERN.
expect() {
  local code="$1" pattern="$2" out rc=0
  shift 2
  out="$("$@" 2>&1)" || rc=$?
  [[ $rc -eq $code ]] || fail "exit $rc, expected $code: $*\n$out"
  grep -Eq -- "$pattern" <<<"$out" ||
    fail "output does not match '$pattern': $*\n$out"
  CHECKS=$((CHECKS + 1))
}

# write_zeros_npy PATH SHAPE COUNT: a float32 .npy of COUNT zeros with the
# given shape literal, e.g. "(1, 32, 32, 3)" (version 1.0, as numpy writes).
write_zeros_npy() {
  local path="$1" shape="$2" count="$3"
  local header="{'descr': '<f4', 'fortran_order': False, 'shape': $shape, }"
  local pad=$(( (64 - (10 + ${#header} + 1) % 64) % 64 ))
  local hlen=$(( ${#header} + pad + 1 ))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
    printf '%s%*s\n' "$header" "$pad" ''
    head -c $((count * 4)) /dev/zero
  } >"$path"
}
