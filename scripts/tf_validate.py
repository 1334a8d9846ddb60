#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip package numpy).
"""Converts and runs every TensorFlow test model (scripts/make_tf_models.py)
with `mace convert --platform tensorflow` + `mace run --validate-outputs`,
and compares each output with TensorFlow's reference. Pass: mace run's own
check (cosine > threshold) and, recomputed here in float64 from the output
.npy, cosine = <out, ref> / (||out|| ||ref||) >= 0.99999 (fp32 storage).

Prints an aligned table (model, outputs, worst cosine, convert s, run s,
result), the first lines of each failure's message below it, and last
`N passed, N failed`. Exit status 1 when anything failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

THRESHOLD = 0.99999
TIMEOUT_S = 300


def default_cache_dir():
    return os.environ.get("MACE_TF_MODELS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "tf_models")


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def cosine(out, ref):
    out = out.astype(np.float64).reshape(-1)
    ref = ref.astype(np.float64).reshape(-1)
    denom = np.linalg.norm(out) * np.linalg.norm(ref)
    if denom == 0:
        return 1.0 if np.array_equal(out, ref) else 0.0
    return float(out @ ref / denom)


def run(cmd):
    start = time.time()
    try:
        result = subprocess.run(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        result = subprocess.CompletedProcess(
            cmd, 124, stdout="timed out after %d s" % TIMEOUT_S)
    return result, time.time() - start


def tail(text, lines=6):
    return "\n    ".join(l for l in text.strip().splitlines()[-lines:])


def check_gaps(mace, folder, meta):
    """A graph mace must refuse: `mace convert --check` exits 1 and lists
    every op type of meta["expect_gaps"]."""
    row = {"cosine": None, "convert_s": None, "run_s": None,
           "passed": False, "message": ""}
    result, row["convert_s"] = run([
        mace, "convert", "--platform", "tensorflow", "--check",
        "--model-file", os.path.join(folder, "model.pb")])
    listed = [l.split()[0] for l in result.stdout.splitlines()
              if l.startswith("  ")]
    missing = [op for op in meta["expect_gaps"] if op not in listed]
    if result.returncode != 1 or missing:
        row["message"] = "--check (exit %d) did not list %s: %s" % (
            result.returncode, ", ".join(missing) or "-", tail(result.stdout))
    else:
        row["passed"] = True
    return row


def validate(mace, folder, meta, work):
    if meta.get("expect_gaps"):
        return check_gaps(mace, folder, meta)
    row = {"cosine": None, "convert_s": None, "run_s": None,
           "passed": False, "message": ""}
    conv, row["convert_s"] = run([
        mace, "convert", "--platform", "tensorflow",
        "--model-file", os.path.join(folder, "model.pb"),
        "--output-dir", work, "--name", "m"])
    if conv.returncode != 0:
        row["message"] = "convert: " + tail(conv.stdout)
        return row
    out_dir = os.path.join(work, "out")
    cmd = [mace, "run", "--model", os.path.join(work, "m.pb"),
           "--data", os.path.join(work, "m.data"), "--output-dir", out_dir,
           "--validate-threshold", str(THRESHOLD)]
    for i in meta["inputs"]:
        cmd += ["--input", "%s=%s" % (i["name"],
                                      os.path.join(folder, i["file"]))]
    for o in meta["outputs"]:
        cmd += ["--validate-outputs", "%s=%s" % (
            o["name"], os.path.join(folder, o["file"]))]
    result, row["run_s"] = run(cmd)
    problems = []
    if result.returncode != 0:
        problems.append("run (exit %d): %s" % (result.returncode,
                                              tail(result.stdout)))
    worst = 1.0
    for o in meta["outputs"]:
        path = os.path.join(out_dir, sanitize(o["name"]) + ".npy")
        if not os.path.isfile(path):
            problems.append("output '%s' missing" % o["name"])
            continue
        got = np.load(path)
        ref = np.load(os.path.join(folder, o["file"]))
        if tuple(got.shape) != tuple(ref.shape):
            problems.append("output '%s': shape %s, expected %s" % (
                o["name"], got.shape, ref.shape))
            continue
        c = cosine(got, ref)
        worst = min(worst, c)
        if not c >= THRESHOLD:
            problems.append("output '%s': cosine %.7f < %g" % (
                o["name"], c, THRESHOLD))
    row["cosine"] = worst
    row["passed"] = not problems
    row["message"] = "; ".join(problems)
    return row


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mace", default="build/bin/mace")
    parser.add_argument("--cache-dir", default=default_cache_dir())
    parser.add_argument("--models", default="",
                        help="comma-separated subset (default: every "
                        "cached model)")
    args = parser.parse_args()
    mace = os.path.abspath(args.mace)
    if not os.access(mace, os.X_OK):
        parser.error("no mace binary at %s" % mace)
    names = [n for n in args.models.split(",") if n]
    if not names:
        names = sorted(
            d for d in os.listdir(args.cache_dir)
            if os.path.isfile(os.path.join(args.cache_dir, d, "meta.json")))
    header = "%-24s %7s %11s %9s %8s  %s" % (
        "model", "outputs", "cosine", "convert_s", "run_s", "result")
    print(header)
    print("-" * len(header), flush=True)
    passed = failed = 0
    for name in names:
        folder = os.path.join(args.cache_dir, name)
        try:
            with open(os.path.join(folder, "meta.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            meta = None
            row = {"cosine": None, "convert_s": None, "run_s": None,
                   "passed": False, "message": "no model (%s): run "
                   "scripts/make_tf_models.py" % e}
        if meta is not None:
            with tempfile.TemporaryDirectory() as work:
                row = validate(mace, folder, meta, work)
        passed += row["passed"]
        failed += not row["passed"]
        print("%-24s %7s %11s %9s %8s  %s" % (
            name, len(meta["outputs"]) if meta else "-",
            fmt(row["cosine"], ".7f"), fmt(row["convert_s"], ".2f"),
            fmt(row["run_s"], ".2f"), "pass" if row["passed"] else "FAIL"),
            flush=True)
        if row["message"]:
            print("    %s" % row["message"], flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
