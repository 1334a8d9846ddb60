#!/usr/bin/env bash
# `mace run --config deploy.yml --device-yml devices.yml` end to end
# against an sshd this test starts on loopback: an arm64-v8a board (the
# runner cross-built with g++-aarch64-linux-gnu and run there under
# qemu-aarch64, the loopback host being x86-64) and a host board; outputs
# come back over scp and validate against ONNX Runtime.
# Usage: bash tests/tools/device_run_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"
SSHD_PID=""
CLEANUP+=('[[ -n "$SSHD_PID" ]] && kill "$SSHD_PID" 2>/dev/null')

for tool in /usr/sbin/sshd ssh scp aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install_deps.sh)"
done

# ---- an sshd on a free loopback port, key login for this user only ---------
KEYS="$TMP/ssh"
mkdir -p "$KEYS" /run/sshd 2>/dev/null || mkdir -p "$KEYS"
ssh-keygen -q -t ed25519 -N '' -f "$KEYS/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$KEYS/user_key"
PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
cat >"$KEYS/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $KEYS/host_key
AuthorizedKeysFile $KEYS/user_key.pub
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PidFile $KEYS/sshd.pid
Subsystem sftp internal-sftp
CONF
/usr/sbin/sshd -D -e -f "$KEYS/sshd_config" 2>"$TMP/sshd.log" &
SSHD_PID=$!
export MACE_SSH_OPTIONS="-i $KEYS/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
USER_NAME="$(id -un)"
for _ in $(seq 50); do
  ssh -p "$PORT" $MACE_SSH_OPTIONS "$USER_NAME@127.0.0.1" true 2>/dev/null && break
  sleep 0.2
done
ssh -p "$PORT" $MACE_SSH_OPTIONS "$USER_NAME@127.0.0.1" true ||
  fail "the loopback sshd does not answer:\n$(cat "$TMP/sshd.log")"

# ---- the deployment and device files ---------------------------------------
mkdir -p "$TMP/cfg/models" "$TMP/work"
cp "$SRC/models/mini_cnn/mini_cnn.onnx" "$TMP/cfg/models/"
cat >"$TMP/cfg/deploy.yml" <<'YAML'
library_name: mini
target_abis: [host, arm64-v8a]
models:
  mini:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
YAML
cat >"$TMP/cfg/devices.yml" <<YAML
devices:
  qemu_board:
    target_abis: [arm64-v8a]
    target_socs: qemu
    models: qemu-aarch64
    address: 127.0.0.1
    username: $USER_NAME
    port: $PORT
  host_board:
    target_abis: [host]
    address: 127.0.0.1
    username: $USER_NAME
    port: $PORT
YAML
cd "$TMP/work"
"$MACE" convert --config ../cfg/deploy.yml >/dev/null

# The boards' folders (/tmp/mace-device-<pid>-<model>) this run leaves:
# only new ones count, as an interrupted earlier run may have left its own.
device_dirs() { ls /tmp | grep "^mace-device-" | sort || true; }
dirs_before="$(device_dirs)"
out="$("$MACE" run --config ../cfg/deploy.yml --device-yml ../cfg/devices.yml \
  --validate --round 2 --num-threads 2 2>&1)" || fail "device run:\n$out"
grep -q "on device 'qemu_board' (arm64-v8a" <<<"$out" || fail "no arm64 run:\n$out"
grep -q "running the arm64-v8a build under qemu-aarch64" <<<"$out" ||
  fail "the arm64 build did not run under qemu:\n$out"
[[ $(grep -c ' PASS$' <<<"$out") -eq 2 ]] || fail "not 2 PASS:\n$out"
[[ $(grep -c '^latency_ms' <<<"$out") -eq 2 ]] || fail "no latency lines:\n$out"
left="$(comm -13 <(echo "$dirs_before") <(device_dirs))"
[[ -z "$left" ]] || fail "the device folder was left behind: $left"
CHECKS=$((CHECKS + 1))

# Errors: a bad device file, an unreachable board.
sed 's/address: 127.0.0.1/adress: 127.0.0.1/' ../cfg/devices.yml >bad.yml
out="$("$MACE" run --config ../cfg/deploy.yml --device-yml bad.yml 2>&1)" &&
  fail "a misspelt key was accepted"
grep -q "unknown key 'adress' in device 'qemu_board'; did you mean 'address'?, in bad.yml:6" <<<"$out" ||
  fail "unexpected error: $out"
sed "s/port: $PORT/port: 1/" ../cfg/devices.yml >down.yml
out="$("$MACE" run --config ../cfg/deploy.yml --device-yml down.yml 2>&1)" &&
  fail "an unreachable board was accepted"
grep -q "ssh to device 'qemu_board' failed" <<<"$out" || fail "unexpected error: $out"
CHECKS=$((CHECKS + 2))

echo "device_run_test: $CHECKS checks passed"
