#!/usr/bin/env python3
# Uses: python3 on PATH (numpy only; the zoo must exist: scripts/model_zoo.sh).
"""Init cost of every zoo model (issue 4 item 6): model load + first run
against a steady-state run, for mace, with and without the packed weight
cache (`mace run --weight-cache-dir`).

For each model of the zoo (~/.cache/mace/zoo or $MACE_ZOO_DIR) it converts
the ONNX file to fp32 (cached in ~/.cache/mace/init_cost/<model>/, redone
when the ONNX file is newer), then per thread count: one process with an
empty cache directory (its load packs the weights and writes the cache
file: "writing load"), then --repeats pairs of fresh processes, one packing
at load (no cache), one mapping the cache file. Each process creates the
engine and loads the model ("load"), runs once ("first"), then --rounds
timed runs. It prints per model and thread count the medians over the
processes of load, first and the steady median, and the ratio
(load + first) / steady of each kind, whose target is <= 2. Exit status 1
when a model fails to convert or run; the ratios are reported, not asserted
(the machine's noise moves them).

    scripts/init_cost.py                       # every zoo model, 1 and 2 threads
    scripts/init_cost.py --models resnet50 --threads 1 --repeats 7
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

LATENCY = re.compile(r"latency_ms init=([\d.]+) first=([\d.]+) min=[\d.]+ "
                     r"median=([\d.]+)")


def zoo_dir():
    return os.environ.get("MACE_ZOO_DIR",
                          os.path.expanduser("~/.cache/mace/zoo"))


def convert(mace, model, onnx_path, out_dir):
    pb = os.path.join(out_dir, model + ".pb")
    data = os.path.join(out_dir, model + ".data")
    fresh = (os.path.exists(pb) and os.path.exists(data) and
             os.path.getmtime(pb) >= os.path.getmtime(onnx_path) and
             os.path.getmtime(pb) >= os.path.getmtime(mace))
    if not fresh:
        os.makedirs(out_dir, exist_ok=True)
        subprocess.run([mace, "convert", "--platform", "onnx", "--model-file",
                        onnx_path, "--output-dir", out_dir, "--name", model,
                        "--data-type", "fp32_fp32"],
                       check=True, stdout=subprocess.DEVNULL)
    return pb, data


def run_once(mace, pb, data, inputs, threads, rounds, cache_dir=None):
    cmd = [mace, "run", "--model", pb, "--data", data, "--round", str(rounds),
           "--num-threads", str(threads)]
    if cache_dir is not None:
        cmd += ["--weight-cache-dir", cache_dir]
    for name, path in inputs:
        cmd += ["--input", "%s=%s" % (name, path)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    match = LATENCY.search(out.stdout + out.stderr)
    if match is None:
        raise RuntimeError("no latency line from: " + " ".join(cmd))
    return tuple(float(v) for v in match.groups())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mace", default="build/bin/mace")
    parser.add_argument("--models", default="",
                        help="comma-separated (default: every zoo model)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cache",
                        default=os.path.expanduser("~/.cache/mace/init_cost"))
    args = parser.parse_args()

    models = ([m for m in args.models.split(",") if m] or
              sorted(d for d in os.listdir(zoo_dir())
                     if os.path.exists(os.path.join(zoo_dir(), d,
                                                    "meta.json"))))
    threads = [int(t) for t in args.threads.split(",")]
    print("| model | thr | steady ms | first ms | load ms | (load+first)/steady "
          "| cached load ms | cached (load+first)/steady | writing load ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    failed = False
    worst = {"packing": 0.0, "cached": 0.0}
    for model in models:
        folder = os.path.join(zoo_dir(), model)
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        inputs = [(i["name"], os.path.join(folder, i["file"]))
                  for i in meta["inputs"]]
        try:
            out_dir = os.path.join(args.cache, model)
            pb, data = convert(args.mace, model,
                               os.path.join(folder, "model.onnx"), out_dir)
            packed_dir = os.path.join(out_dir, "packed")
            for t in threads:
                shutil.rmtree(packed_dir, ignore_errors=True)
                os.makedirs(packed_dir)
                writing = run_once(args.mace, pb, data, inputs, t,
                                   args.rounds, packed_dir)
                packing, cached = [], []
                for _ in range(args.repeats):
                    packing.append(run_once(args.mace, pb, data, inputs, t,
                                            args.rounds))
                    cached.append(run_once(args.mace, pb, data, inputs, t,
                                           args.rounds, packed_dir))
                runs = packing + cached
                first, steady = (statistics.median(r[i] for r in runs)
                                 for i in (1, 2))
                cells = []
                for kind, kind_runs in (("packing", packing),
                                        ("cached", cached)):
                    ratio = statistics.median((r[0] + r[1]) / r[2]
                                              for r in kind_runs)
                    worst[kind] = max(worst[kind], ratio)
                    cells.append("%.1f | %.2f" % (
                        statistics.median(r[0] for r in kind_runs), ratio))
                print("| %s | %d | %.1f | %.1f | %s | %s | %.1f |" %
                      (model, t, steady, first, cells[0], cells[1],
                       writing[0]), flush=True)
        except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
            print("| %s | - | failed: %s |" % (model, e), flush=True)
            failed = True
    print("worst (load+first)/steady: %.2f packing at load, %.2f with the "
          "cache (target <= 2)" % (worst["packing"], worst["cached"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
