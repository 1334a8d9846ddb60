#!/usr/bin/env python3
# Interpreter: the python3 on PATH with pip's onnxruntime and numpy.
"""Per-layer times of mace against ONNX Runtime on the zoo's models: where
in a network mace is ahead or behind, which the whole-model table of
scripts/bench_models.sh cannot say.

    scripts/compare_layers.py --models inception_v3 --threads 1 --pairs 3

Each pair runs, back to back in fresh processes, `mace run --benchmark`
(per-op averages over --rounds runs) and ONNX Runtime with its session
profiler (per-node medians over --rounds runs, the same settings as
scripts/bench_worker.py: intra-op threads, sequential, ORT_ENABLE_ALL).
The per-layer times of each engine are the medians over the pairs.

Layers are matched by name: ONNX Runtime names a fused node after its
output tensor (NCHWc convolutions: `<output>_nchwc`) or keeps the ONNX
node's name; mace keeps the ONNX node's name, lists the nodes it fused
and the tensors its op writes. A convolution (Conv2D, DepthwiseConv2d,
FullyConnected in mace; Conv, FusedConv, Gemm in ONNX Runtime) is
matched when one engine's name or output, less the suffixes each adds
(`_nchwc`, `__untransposed`, `__nhwc`), is the other's, or ONNX
Runtime's output is `<node>_output_0` of a node mace fused (a residual
Add that mace fuses into the convolution and ONNX Runtime runs apart is
then in mace's time only). Layers left unmatched are counted, not
compared. Prints, per model, the time of every kind of layer (kernel
size and stride) in both engines and their ratio, then the --top layers
where mace loses most time.

Models come from the zoo (~/.cache/mace/zoo or $MACE_ZOO_DIR) and are
converted with `mace convert` into a temporary folder.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CONV_TYPES_MACE = ("Conv2D", "DepthwiseConv2d", "FullyConnected")
CONV_TYPES_ORT = ("Conv", "FusedConv", "Gemm", "NchwcConv")
SUFFIXES = ("_nchwc", "__untransposed", "__nhwc", "__t")

ORT_WORKER = r"""
import json, sys, numpy as np, onnxruntime as ort
model, x, threads, rounds, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
opts = ort.SessionOptions()
opts.intra_op_num_threads = threads
opts.inter_op_num_threads = 1
opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
opts.enable_profiling = True
opts.profile_file_prefix = prefix
session = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
feed = {session.get_inputs()[0].name: np.load(x)}
session.run(None, feed)  # warm-up, as mace run's first run
for _ in range(rounds):
    session.run(None, feed)
print(session.end_profiling())
"""


def strip_suffixes(name):
    changed = True
    while changed:
        changed = False
        for suffix in SUFFIXES:
            if name.endswith(suffix):
                name = name[:-len(suffix)]
                changed = True
    return name


def mace_layers(mace, pb, data, x, threads, rounds):
    """name -> (ms, kind, output names) from `mace run --benchmark`."""
    out = subprocess.run(
        [mace, "run", "--model", pb, "--data", data, "--input", "input=" + x,
         "--num-threads", str(threads), "--round", str(rounds), "--benchmark"],
        capture_output=True, text=True, check=True).stdout
    info = subprocess.run([mace, "info", "--model", pb], capture_output=True,
                          text=True, check=True).stdout
    outputs = {}
    for line in info.splitlines():
        m = re.match(r"\s*\d+\s+(\S+)\s+\S+\s+.* -> (.*)$", line)
        if m:
            outputs[m.group(1)] = [o.strip() for o in m.group(2).split(",")]
    layers, on = {}, False
    for line in out.splitlines():
        if "Sort by Run Order" in line:
            on = True
            continue
        if "Sort by Computation" in line:
            break
        if not on or not line.startswith("|") or "Op Type" in line:
            continue
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if f[0] not in CONV_TYPES_MACE:
            continue
        # "first (+ second, third)": the ONNX nodes the op was fused from.
        fused = [n.strip(" ()+") for n in f[12].replace(" (+", ",").split(",")]
        name = fused[0]
        # Filter shapes: [Cout, kh, kw, Cin]; depthwise [kh, kw, C, mult].
        filt = [d.strip() for d in f[9].strip("[]").split(",") if d.strip()]
        stride = f[7].replace(" ", "").strip("[]").split(",")[0]
        if len(filt) < 4:
            kind = f[0]
        elif f[0] == "DepthwiseConv2d":
            kind = "dw %sx%s s%s" % (filt[0], filt[1], stride)
        else:
            kind = "conv %sx%s s%s" % (filt[1], filt[2], stride)
        # Match keys: its outputs, and the outputs ONNX exporters name
        # after each fused node (`<node>_output_0`).
        keys = outputs.get(name, []) + [n + "_output_0" for n in fused]
        layers[name] = (float(f[3]), kind, keys)
    return layers


def ort_layers(model, x, threads, rounds, work):
    """name -> median ms of ONNX Runtime's convolution nodes."""
    prefix = os.path.join(work, "ort_profile")
    out = subprocess.run(
        [sys.executable, "-c", ORT_WORKER, model, x, str(threads), str(rounds),
         prefix], capture_output=True, text=True, check=True).stdout
    with open(out.strip().splitlines()[-1]) as f:
        events = json.load(f)
    times = collections.defaultdict(list)
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        if e.get("args", {}).get("op_name") in CONV_TYPES_ORT:
            times[e["name"][:-len("_kernel_time")]].append(e["dur"] / 1000.0)
    # The first event of each node is the warm-up run.
    return {n: statistics.median(v[1:] or v) for n, v in times.items()}


def match(mace, ort):
    """mace name -> ORT name, by node name or by output tensor."""
    by_key = {}
    for name in ort:
        by_key.setdefault(strip_suffixes(name), name)
    pairs = {}
    for name, (_, _, keys) in mace.items():
        for key in [name] + [strip_suffixes(k) for k in keys]:
            if key in by_key:
                pairs[name] = by_key[key]
                break
    return pairs


def compare(args, model, work):
    zoo = os.environ.get("MACE_ZOO_DIR") or os.path.expanduser(
        "~/.cache/mace/zoo")
    onnx_path = os.path.join(zoo, model, "model.onnx")
    x = os.path.join(zoo, model, "input_0.npy")
    if not os.path.isfile(onnx_path):
        print("%s: not in the zoo (%s); run scripts/model_zoo.sh" %
              (model, onnx_path))
        return False
    subprocess.run([args.mace, "convert", "--platform", "onnx", "--model-file",
                    onnx_path, "--output-dir", work, "--name", model],
                   capture_output=True, check=True)
    pb = os.path.join(work, model + ".pb")
    data = os.path.join(work, model + ".data")
    mace_runs, ort_runs = [], []
    for _ in range(args.pairs):
        mace_runs.append(mace_layers(args.mace, pb, data, x, args.threads,
                                     args.rounds))
        ort_runs.append(ort_layers(onnx_path, x, args.threads, args.rounds,
                                   work))
    mace = {n: (statistics.median(r[n][0] for r in mace_runs), k, o)
            for n, (_, k, o) in mace_runs[0].items()}
    ort = {n: statistics.median(r[n] for r in ort_runs if n in r)
           for n in ort_runs[0]}
    pairs = match(mace, ort)
    kinds = collections.defaultdict(lambda: [0, 0.0, 0.0])
    rows = []
    for name, ort_name in pairs.items():
        ms, kind, _ = mace[name]
        k = kinds[kind]
        k[0] += 1
        k[1] += ms
        k[2] += ort[ort_name]
        rows.append((ms - ort[ort_name], name, kind, ms, ort[ort_name]))
    print("%s, %d thread(s), %d pairs x %d rounds: %d of %d mace layers "
          "matched (%d ONNX Runtime nodes)" %
          (model, args.threads, args.pairs, args.rounds, len(pairs),
           len(mace), len(ort)))
    print("  %-18s %5s %10s %10s %9s" % ("kind", "count", "mace ms", "ORT ms",
                                        "mace/ORT"))
    total = [0.0, 0.0]
    for kind, (count, m, o) in sorted(kinds.items(), key=lambda t: -t[1][1]):
        total[0] += m
        total[1] += o
        print("  %-18s %5d %10.3f %10.3f %9.2f" % (kind, count, m, o, m / o))
    if total[1] > 0:
        print("  %-18s %5d %10.3f %10.3f %9.2f" %
              ("matched layers", len(pairs), total[0], total[1],
               total[0] / total[1]))
    if args.top:
        print("  layers where mace loses most:")
        for diff, name, kind, m, o in sorted(rows, reverse=True)[:args.top]:
            print("    %-50s %-14s mace %.3f ORT %.3f" % (name[-50:], kind, m,
                                                           o))
    return True


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--models", default="mobilenet_v1",
                        help="comma-separated zoo models")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=3,
                        help="mace/ORT process pairs, run back to back")
    parser.add_argument("--rounds", type=int, default=30,
                        help="timed runs per process")
    parser.add_argument("--top", type=int, default=8,
                        help="layers where mace loses most to list")
    parser.add_argument("--mace", default="build/bin/mace")
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.rounds < 1 or args.threads < 1:
        parser.error("--pairs, --rounds and --threads must be at least 1")
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for model in [m for m in args.models.split(",") if m]:
            ok = compare(args, model, work) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
