#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages onnxruntime, onnx, numpy:
# scripts/install_python_deps.sh).
"""Computes reference outputs of the model zoo (scripts/make_model_zoo.py)
with ONNX Runtime: for each cached model, runs <cache>/<model>/model.onnx
on its input_<i>.npy files and writes output_<name>.npy next to them.

Refuses (exit status 1, a message naming the model and output) a reference
that would make a test meaningless:
  * near zero: max |x| < 1e-6;
  * near constant: std < 1e-3 * (|mean| + 1e-6);
  * a classifier / segmentation output whose spread across classes is
    below 0.5 (its softmax would be close to uniform);
  * an output that disagrees with torch's own output (saved by
    make_model_zoo.py) by more than 1e-3 relative: the export went wrong.
A model whose reference outputs exist already is skipped (and its files are
checked again); --force recomputes them.
"""
import argparse
import collections
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

MIN_CLASS_SPREAD = 0.5
MAX_TORCH_REL = 1e-3


def default_cache_dir():
    return os.environ.get("MACE_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "zoo")


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def spread_problem(out, kind):
    """None when `out` is a usable reference, else why not."""
    x = out.astype(np.float64)
    if not np.all(np.isfinite(x)):
        return "has non-finite values"
    peak = np.abs(x).max() if x.size else 0.0
    if peak < 1e-6:
        return "is near zero (max |x| = %g)" % peak
    std, mean = x.std(), x.mean()
    if std < 1e-3 * (abs(mean) + 1e-6):
        return "is near constant (std %g, mean %g)" % (std, mean)
    if kind in ("classifier", "segmentation"):
        axis = 1 if x.ndim == 4 else -1
        spread = x.std(axis=axis).mean()
        if spread < MIN_CLASS_SPREAD:
            return ("spreads too little across classes (mean std %g < %g: "
                    "softmax near uniform)" % (spread, MIN_CLASS_SPREAD))
    return None


def rel_error(got, ref):
    got = got.astype(np.float64).reshape(-1)
    ref = ref.astype(np.float64).reshape(-1)
    return np.linalg.norm(got - ref) / max(
        np.linalg.norm(ref - ref.mean()), 1e-30)


def op_histogram(model_path):
    model = onnx.load(model_path, load_external_data=False)
    return collections.Counter(n.op_type for n in model.graph.node)


def reference(folder, force):
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    kind = meta.get("kind", "")
    model_path = os.path.join(folder, "model.onnx")
    paths = [os.path.join(folder, o["file"]) for o in meta["outputs"]]
    computed = False
    if force or not all(os.path.isfile(p) for p in paths):
        options = ort.SessionOptions()
        # Plain kernels, no fusions that change rounding.
        options.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        session = ort.InferenceSession(model_path, options,
                                       providers=["CPUExecutionProvider"])
        feeds = {i["name"]: np.load(os.path.join(folder, i["file"]))
                 for i in meta["inputs"]}
        names = [o["name"] for o in meta["outputs"]]
        outs = session.run(names, feeds)
        for out, o, path in zip(outs, meta["outputs"], paths):
            problem = spread_problem(out, kind)
            if problem:
                raise RuntimeError("output '%s' %s" % (o["name"], problem))
        for out, path in zip(outs, paths):
            np.save(path, out)
        computed = True
    stats = []
    for o, path in zip(meta["outputs"], paths):
        ref = np.load(path)
        problem = spread_problem(ref, kind)
        if problem:
            raise RuntimeError("output '%s' %s" % (o["name"], problem))
        torch_path = os.path.join(folder,
                                  "torch_output_%s.npy" % sanitize(o["name"]))
        torch_rel = None
        if os.path.isfile(torch_path):
            torch_rel = rel_error(np.load(torch_path), ref)
            if torch_rel > MAX_TORCH_REL:
                raise RuntimeError(
                    "output '%s': ONNX Runtime and torch disagree (rel %g): "
                    "the export is wrong" % (o["name"], torch_rel))
        x = ref.astype(np.float64)
        axis = 1 if x.ndim == 4 else -1
        stats.append("%s %s std %.3g mean %.3g class-spread %.3g "
                     "torch-rel %s" % (
                         o["name"], "x".join(map(str, ref.shape)), x.std(),
                         x.mean(), x.std(axis=axis).mean(),
                         "%.1e" % torch_rel if torch_rel is not None
                         else "-"))
    return computed, stats


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="default: $MACE_ZOO_DIR or ~/.cache/mace/zoo")
    parser.add_argument("--models", default="",
                        help="comma-separated subset (default: every "
                        "cached model)")
    parser.add_argument("--force", action="store_true",
                        help="recompute existing reference outputs")
    parser.add_argument("--ops", action="store_true",
                        help="also list each model's ONNX op types")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    if not names:
        names = sorted(
            d for d in os.listdir(args.cache_dir)
            if os.path.isfile(os.path.join(args.cache_dir, d, "meta.json")))
    failed = 0
    for name in names:
        folder = os.path.join(args.cache_dir, name)
        if not os.path.isfile(os.path.join(folder, "meta.json")):
            print("%-20s FAILED: not generated (run make_model_zoo.py)" %
                  name, flush=True)
            failed += 1
            continue
        start = time.time()
        try:
            computed, stats = reference(folder, args.force)
        except Exception as e:  # report every model, then fail
            print("%-20s FAILED: %s" % (name, e), flush=True)
            failed += 1
            continue
        print("%-20s %s %5.1f s: %s" % (
            name, "computed" if computed else "cached  ",
            time.time() - start, "; ".join(stats)), flush=True)
        if args.ops:
            ops = op_histogram(os.path.join(folder, "model.onnx"))
            print("%-20s ops: %s" % ("", ", ".join(
                "%s %d" % kv for kv in sorted(ops.items()))), flush=True)
    if failed:
        print("%d model(s) without a usable reference" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
