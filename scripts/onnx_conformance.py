#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages onnx==1.21.0, numpy).
"""Runs the ONNX backend node tests shipped with the onnx package through
`mace convert` + `mace run`, and compares every output with the test's.

A test is *claimed* when `mace convert --check` accepts its model, or
accepts it once the inputs it names as needed at conversion time (shapes,
axes, scales) are frozen from the test's only data set with
`--constant-input`, as a user would; every claimed test must pass. Prints one line per failure and, last,
`N passed, N failed, N unsupported`. Exit status 1 when a claimed test
fails.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# Tolerances of onnx's own backend test runner (rtol 1e-3, atol 1e-7),
# with atol widened for float32 accumulation differences.
RTOL = 1e-3
ATOL = 1e-5


def node_test_dirs(pattern):
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                        "data", "node")
    return sorted(d for d in glob.glob(os.path.join(root, pattern))
                  if os.path.isfile(os.path.join(d, "model.onnx")))


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def to_mace_array(array):
    """mace takes float32 and int32 tensors."""
    if array.dtype.kind in "iub":
        return np.clip(array.astype(np.int64), -2**31, 2**31 - 1).astype(
            np.int32)
    return array.astype(np.float32)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def check_outputs(expected, out_dir):
    for name, ref in expected:
        path = os.path.join(out_dir, sanitize(name) + ".npy")
        if not os.path.exists(path):
            return "output '%s' missing" % name
        got = np.load(path)
        if ref.dtype == np.bool_:
            ref = ref.astype(np.int32)
        if ref.size != got.size:
            return "output '%s': %d values, expected %d" % (name, got.size,
                                                            ref.size)
        if got.shape != ref.shape and ref.size > 0:
            if tuple(got.shape) != tuple(ref.shape):
                return "output '%s': shape %s, expected %s" % (
                    name, got.shape, ref.shape)
        ref64 = ref.astype(np.float64).reshape(-1)
        got64 = got.astype(np.float64).reshape(-1)
        if not np.allclose(got64, ref64, rtol=RTOL, atol=ATOL,
                           equal_nan=True):
            worst = np.argmax(np.abs(got64 - ref64))
            return "output '%s': element %d is %g, expected %g" % (
                name, worst, got64[worst], ref64[worst])
    return None


# Inputs the converter needs at conversion time (shapes, axes, scales)
# are named in its messages as "... 'name' must be a constant".
NEEDS_CONSTANT = re.compile(r"'([^']+)' must be (?:a )?constant")


def frozen_inputs(check_output, inputs, data_sets, work):
    """--constant-input flags freezing the inputs the converter asked to be
    constant, from the test's only data set; None when that is not
    possible (no such input, or several data sets with other values)."""
    names = set(NEEDS_CONSTANT.findall(check_output)) & set(inputs)
    if not names or len(data_sets) != 1:
        return None
    flags = []
    for i, name in enumerate(inputs):
        path = os.path.join(data_sets[0], "input_%d.pb" % i)
        if name in names and os.path.exists(path):
            npy = os.path.join(work, "const_%d.npy" % i)
            np.save(npy, to_mace_array(load_tensor(path)))
            flags += ["--constant-input", "%s=%s" % (name, npy)]
    return flags


def run_test(mace, test_dir, work):
    """Returns (outcome, details, froze_inputs)."""
    model_path = os.path.join(test_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    data_sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    convert = [mace, "convert", "--model-file", model_path]
    check = run(convert + ["--check"])
    frozen = []
    if check.returncode != 0:
        frozen = frozen_inputs(check.stdout, inputs, data_sets, work)
        if frozen:
            check = run(convert + frozen + ["--check"])
        if check.returncode != 0:
            return "unsupported", check.stdout.strip().splitlines()[-1:], False
    out_dir = os.path.join(work, "out")
    conv = run(convert + frozen + ["--output-dir", work, "--name", "model"])
    if conv.returncode != 0:
        return "failed", ["convert: " + conv.stdout.strip()[-500:]], False
    frozen_names = {flag.split("=")[0] for flag in frozen[1::2]}
    for data_set in data_sets:
        cmd = [mace, "run", "--model", os.path.join(work, "model.pb"),
               "--data", os.path.join(work, "model.data"),
               "--output-dir", out_dir]
        for i, name in enumerate(inputs):
            path = os.path.join(data_set, "input_%d.pb" % i)
            if not os.path.exists(path) or name in frozen_names:
                continue
            npy = os.path.join(work, "in_%d.npy" % i)
            np.save(npy, to_mace_array(load_tensor(path)))
            cmd += ["--input", "%s=%s" % (name, npy)]
        result = run(cmd)
        if result.returncode != 0:
            return "failed", ["run: " + result.stdout.strip()[-500:]], False
        expected = [(name, load_tensor(
            os.path.join(data_set, "output_%d.pb" % i)))
            for i, name in enumerate(outputs)]
        problem = check_outputs(expected, out_dir)
        if problem:
            return "failed", [problem], False
    return "passed", [], bool(frozen)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mace", required=True, help="the mace binary")
    parser.add_argument("--filter", default="test_*",
                        help="glob over node test names")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    counts = {"passed": 0, "failed": 0, "unsupported": 0}
    failed = []
    passed_frozen = 0
    for test_dir in node_test_dirs(args.filter):
        name = os.path.basename(test_dir)
        with tempfile.TemporaryDirectory() as work:
            try:
                outcome, details, froze = run_test(args.mace, test_dir, work)
            except subprocess.TimeoutExpired:
                outcome, details, froze = "failed", ["timed out"], False
        counts[outcome] += 1
        passed_frozen += int(froze)
        if outcome == "failed":
            failed.append(name)
            print("FAIL %s: %s" % (name, " ".join(details)), flush=True)
        elif args.verbose:
            print("%s %s %s" % (outcome, name, " ".join(details)), flush=True)
    print("(%d of the passed tests froze inputs the converter needs at "
          "conversion time with --constant-input)" % passed_frozen)
    print("%d passed, %d failed, %d unsupported" % (
        counts["passed"], counts["failed"], counts["unsupported"]))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
