#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip package numpy).
"""Converts and runs every model of the zoo (scripts/make_model_zoo.py,
references from scripts/zoo_reference.py) with `mace convert` + `mace run`,
for fp32 and fp16 weight storage, and compares each output with ONNX
Runtime's reference, in float64:
  cosine = <out, ref> / (||out|| ||ref||)
  rel    = ||out - ref|| / ||ref - mean(ref)||
Pass: fp32_fp32 storage cosine >= 0.99999 and rel <= 1e-4; fp16_fp32
storage cosine >= 0.999. With fp32 storage the model also runs on 1 thread,
whose outputs must equal those of the run on every core bit for bit: how
the engine shares a run among threads never changes a result.

Prints an aligned table (model, storage, cosine, rel, convert s, run s,
result), the first line of each failure's message below it, and last
`N passed, N failed`. Exit status 1 when anything failed.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

STORAGES = {
    "fp32": ("fp32_fp32", {"cosine": 0.99999, "rel": 1e-4}),
    "fp16": ("fp16_fp32", {"cosine": 0.999}),
}
TIMEOUT_S = 900


def default_cache_dir():
    return os.environ.get("MACE_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "zoo")


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def metrics(out, ref):
    out = out.astype(np.float64).reshape(-1)
    ref = ref.astype(np.float64).reshape(-1)
    denom = np.linalg.norm(out) * np.linalg.norm(ref)
    cosine = float(out @ ref / denom) if denom > 0 else 0.0
    spread = np.linalg.norm(ref - ref.mean())
    rel = float(np.linalg.norm(out - ref) / spread) if spread > 0 else \
        float("inf")
    return cosine, rel


ITEM = re.compile(r"^\s+(\S+) '[^']*': (.*)$")


def message_of(result, limit=700):
    """The informative part of a failed command's output; the converter's
    list of unsupported items is summarised by op type and reason."""
    text = (result.stdout or "").strip()
    lines = [l for l in text.splitlines() if l.strip()]
    items = collections.Counter()
    rest = []
    for line in lines:
        match = ITEM.match(line)
        if match:
            items[match.groups()] += 1
        else:
            rest.append(line.strip())
    if items:
        head = [l for l in rest if "error" in l.lower()][:1]
        msg = " ".join(head + ["; ".join(
            "%s x%d: %s" % (op, n, why) if n > 1 else "%s: %s" % (op, why)
            for (op, why), n in sorted(items.items()))])
    else:
        errors = [l for l in rest if "error" in l.lower() or
                  "unsupported" in l.lower() or "fail" in l.lower()]
        msg = " | ".join(errors or rest[-3:])
    if not msg:
        msg = "exit status %d, no output" % result.returncode
    return (msg[:limit] + " ...") if len(msg) > limit else msg


def run(cmd):
    start = time.time()
    try:
        result = subprocess.run(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        result = subprocess.CompletedProcess(cmd, 124, stdout=(
            e.stdout.decode() if isinstance(e.stdout, bytes)
            else (e.stdout or "")) + "\ntimed out after %d s" % TIMEOUT_S)
    return result, time.time() - start


def one_thread_problem(name, got, one_thread_dir):
    """What is wrong with output `name` of the run on 1 thread, which must
    be `got` (the run on every core) bit for bit; None when nothing."""
    path = os.path.join(one_thread_dir, sanitize(name) + ".npy")
    if not os.path.isfile(path):
        return "output '%s' missing on 1 thread" % name
    alone = np.load(path)
    if alone.shape != got.shape:
        return "output '%s': shape %s on 1 thread, %s on every core" % (
            name, alone.shape, got.shape)
    if np.array_equal(alone, got, equal_nan=True):
        return None
    return "output '%s' differs between 1 thread and every core " \
        "(max |diff| %.3g)" % (name, float(np.nanmax(np.abs(
            alone.astype(np.float64) - got))))


def validate(mace, folder, meta, storage, work):
    """Returns a row: cosine, rel, convert_s, run_s, passed, message."""
    data_type, limits = STORAGES[storage]
    row = {"cosine": None, "rel": None, "convert_s": None, "run_s": None,
           "passed": False, "message": ""}
    out_dir = os.path.join(work, "out")
    conv, row["convert_s"] = run([
        mace, "convert", "--platform", "onnx",
        "--model-file", os.path.join(folder, "model.onnx"),
        "--output-dir", work, "--name", "m", "--data-type", data_type])
    if conv.returncode != 0:
        row["message"] = "convert: " + message_of(conv)
        return row
    cmd = [mace, "run", "--model", os.path.join(work, "m.pb"),
           "--data", os.path.join(work, "m.data")]
    for i in meta["inputs"]:
        cmd += ["--input", "%s=%s" % (i["name"],
                                      os.path.join(folder, i["file"]))]
    result, row["run_s"] = run(cmd + ["--output-dir", out_dir])
    if result.returncode != 0:
        row["message"] = "run: " + message_of(result)
        return row
    one_thread_dir = None
    if storage == "fp32":
        one_thread_dir = os.path.join(work, "out_1_thread")
        result, _ = run(cmd + ["--output-dir", one_thread_dir,
                               "--num-threads", "1"])
        if result.returncode != 0:
            row["message"] = "run on 1 thread: " + message_of(result)
            return row
    worst_cos, worst_rel, problems = 1.0, 0.0, []
    for o in meta["outputs"]:
        ref = np.load(os.path.join(folder, o["file"]))
        path = os.path.join(out_dir, sanitize(o["name"]) + ".npy")
        if not os.path.isfile(path):
            problems.append("output '%s' missing" % o["name"])
            continue
        got = np.load(path)
        if got.size != ref.size:
            problems.append("output '%s': shape %s, expected %s" % (
                o["name"], got.shape, ref.shape))
            continue
        if tuple(got.shape) != tuple(ref.shape):
            problems.append("output '%s': shape %s, expected %s" % (
                o["name"], got.shape, ref.shape))
        if one_thread_dir is not None:
            problem = one_thread_problem(o["name"], got, one_thread_dir)
            if problem:
                problems.append(problem)
        cosine, rel = metrics(got, ref)
        worst_cos, worst_rel = min(worst_cos, cosine), max(worst_rel, rel)
        if cosine < limits["cosine"]:
            problems.append("output '%s': cosine %.7f < %g" % (
                o["name"], cosine, limits["cosine"]))
        if "rel" in limits and not rel <= limits["rel"]:
            problems.append("output '%s': rel %.2e > %g" % (
                o["name"], rel, limits["rel"]))
    if len(problems) < len(meta["outputs"]) or not problems:
        row["cosine"], row["rel"] = worst_cos, worst_rel
    row["passed"] = not problems
    row["message"] = "; ".join(problems)
    return row


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mace", default="build/bin/mace",
                        help="the mace binary (default build/bin/mace)")
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="default: $MACE_ZOO_DIR or ~/.cache/mace/zoo")
    parser.add_argument("--models", default="",
                        help="comma-separated subset (default: every "
                        "cached model)")
    parser.add_argument("--storage", default="fp32,fp16",
                        help="comma-separated: fp32, fp16 (default both)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep converted models and outputs under DIR")
    args = parser.parse_args()
    mace = os.path.abspath(args.mace)
    if not os.access(mace, os.X_OK):
        parser.error("no mace binary at %s" % mace)
    storages = [s for s in args.storage.split(",") if s]
    for s in storages:
        if s not in STORAGES:
            parser.error("unknown storage %s (fp32, fp16)" % s)
    names = [n for n in args.models.split(",") if n]
    if not names:
        names = sorted(
            d for d in os.listdir(args.cache_dir)
            if os.path.isfile(os.path.join(args.cache_dir, d, "meta.json")))
    header = "%-20s %-9s %11s %9s %9s %8s  %s" % (
        "model", "storage", "cosine", "rel", "convert_s", "run_s", "result")
    print(header)
    print("-" * len(header), flush=True)
    passed = failed = 0
    for name in names:
        folder = os.path.join(args.cache_dir, name)
        try:
            with open(os.path.join(folder, "meta.json")) as f:
                meta = json.load(f)
            missing = [o["file"] for o in meta["outputs"]
                       if not os.path.isfile(os.path.join(folder, o["file"]))]
        except (OSError, ValueError) as e:
            meta, missing = None, [str(e)]
        for storage in storages:
            if missing:
                row = {"cosine": None, "rel": None, "convert_s": None,
                       "run_s": None, "passed": False,
                       "message": "no reference (%s): run make_model_zoo.py "
                       "and zoo_reference.py" % ", ".join(missing)}
            elif args.keep:
                work = os.path.join(args.keep, name, storage)
                os.makedirs(work, exist_ok=True)
                row = validate(mace, folder, meta, storage, work)
            else:
                with tempfile.TemporaryDirectory() as work:
                    row = validate(mace, folder, meta, storage, work)
            if row["passed"]:
                passed += 1
            else:
                failed += 1
            print("%-20s %-9s %11s %9s %9s %8s  %s" % (
                name, STORAGES[storage][0], fmt(row["cosine"], ".7f"),
                fmt(row["rel"], ".2e"), fmt(row["convert_s"], ".2f"),
                fmt(row["run_s"], ".2f"),
                "pass" if row["passed"] else "FAIL"), flush=True)
            if row["message"]:
                print("    %s" % row["message"], flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
