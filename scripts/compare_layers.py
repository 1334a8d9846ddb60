#!/usr/bin/env python3
# Interpreter: the python3 on PATH with pip's onnxruntime and numpy.
"""Per-layer times of mace against ONNX Runtime on the zoo's models: where
in a network mace is ahead or behind, which the whole-model table of
scripts/bench_models.sh cannot say.

    scripts/compare_layers.py --models inception_v3 --threads 1 --pairs 3

Each pair runs, back to back in fresh processes, `mace run --benchmark`
(each op's Min(ms) over --rounds runs) and ONNX Runtime with its session
profiler (each node's minimum over --rounds runs, the warm-up left out;
the same settings as scripts/bench_worker.py: intra-op threads,
sequential, ORT_ENABLE_ALL). The per-layer times of each engine are the
medians over the pairs. Minima of both: on a shared host the other
processes' share moves an average or a median by more than the gaps
being looked for; mace's averages against ONNX Runtime's medians once
showed ResNet-50's residual 1x1 layers at 1.88 against 1.28 ms, where
their minima were 1.37 against 1.13.

Every op of both engines is counted. Each ONNX Runtime node is given to
the mace op it belongs to, by name: mace keeps the ONNX node names of an
op and of the nodes it fused into it, and the tensors it writes; ONNX
Runtime names a node after the ONNX node (`/block/Mul`, or with its own
fusion appended: `/block/Mul/QuickGeluFusion/`) or after its output
(`<node>_output_0_nchwc`). A node goes to the op one of whose names (or
outputs), less the suffixes each engine adds, is its name or a prefix of
it at a `/`. So ONNX Runtime's separate SiLU after a convolution counts
with mace's convolution that fused it, as a residual Add does. Nodes of
either engine that belong to nothing (ONNX Runtime's NCHWc reorders,
mace's layout transposes) are shown as their own rows. Prints, per model,
the whole run of each engine (median per process), the time of every
kind of layer (kernel size and stride, or op type) in both and their
ratio, then the --top layers where mace loses most.

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
UNMATCHED = "(no mace op)"


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
    """(run ms, {name: (ms, kind, names and outputs that identify it)})
    from `mace run --benchmark`."""
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
    layers, on, column = {}, False, {}
    for line in out.splitlines():
        if "Sort by Run Order" in line:
            on = True
            continue
        if "Sort by Computation" in line:
            break
        if not on or not line.startswith("|"):
            continue
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if "Op Type" in f:
            column = {title: i for i, title in enumerate(f)}
            missing = [t for t in ("name", "Filter Shape", "Stride", "Min(ms)")
                       if t not in column]
            if missing:
                sys.exit("%s: its `run --benchmark` report has no %s column "
                         "(a mace binary older than the Min(ms) column?)"
                         % (mace, ", ".join(missing)))
            continue
        # "first (+ second, third)": the ONNX nodes the op was fused from.
        fused = [n.strip(" ()+") for n in
                 f[column["name"]].replace(" (+", ",").split(",")]
        name = fused[0]
        # Filter shapes: [Cout, kh, kw, Cin]; depthwise [kh, kw, C, mult].
        filt = [d.strip() for d in f[column["Filter Shape"]].strip("[]").split(",")
                if d.strip()]
        stride = f[column["Stride"]].replace(" ", "").strip("[]").split(",")[0]
        op_type = f[column["Op Type"]]
        if op_type not in ("Conv2D", "DepthwiseConv2d") or len(filt) < 4:
            kind = op_type
        elif op_type == "DepthwiseConv2d":
            kind = "dw %sx%s s%s" % (filt[0], filt[1], stride)
        else:
            kind = "conv %sx%s s%s" % (filt[1], filt[2], stride)
        layers[name] = (float(f[column["Min(ms)"]]), kind,
                        fused + outputs.get(name, []))
    run = re.search(r"median=([\d.]+)", out)
    return float(run.group(1)) if run else 0.0, layers


def ort_layers(model, x, threads, rounds, work):
    """(run ms, {name: minimum ms}) of every ONNX Runtime node."""
    prefix = os.path.join(work, "ort_profile")
    out = subprocess.run(
        [sys.executable, "-c", ORT_WORKER, model, x, str(threads), str(rounds),
         prefix], capture_output=True, text=True, check=True).stdout
    with open(out.strip().splitlines()[-1]) as f:
        events = json.load(f)
    times = collections.defaultdict(list)
    runs = []
    for e in events:
        if e.get("cat") == "Session" and e["name"] == "model_run":
            runs.append(e["dur"] / 1000.0)
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            times[e["name"][:-len("_kernel_time")]].append(e["dur"] / 1000.0)
    # The first event of each node and run is the warm-up.
    return (statistics.median(runs[1:] or runs or [0.0]),
            {n: min(v[1:] or v) for n, v in times.items()})


def match(mace, ort):
    """ORT node -> the mace op it belongs to (UNMATCHED when none)."""
    owner = {}
    for name, (_, _, keys) in mace.items():
        for key in keys:
            owner.setdefault(strip_suffixes(key), name)
    pairs = {}
    for node in ort:
        candidates = [strip_suffixes(node.rstrip("/"))]
        if "_output_" in candidates[0]:
            candidates.append(candidates[0].rsplit("_output_", 1)[0])
        parts = candidates[0].split("/")
        candidates += ["/".join(parts[:i]) for i in range(len(parts) - 1, 1, -1)]
        pairs[node] = next((owner[c] for c in candidates if c in owner),
                           UNMATCHED)
    return pairs


def zoo_model(model):
    """(ONNX file, input .npy) of a zoo model, or None, said, when it is
    not there."""
    zoo = os.environ.get("MACE_ZOO_DIR") or os.path.expanduser(
        "~/.cache/mace/zoo")
    onnx_path = os.path.join(zoo, model, "model.onnx")
    if not os.path.isfile(onnx_path):
        print("%s: not in the zoo (%s); run scripts/model_zoo.sh" %
              (model, onnx_path))
        return None
    return onnx_path, os.path.join(zoo, model, "input_0.npy")


def compare(args, model, work):
    found = zoo_model(model)
    if found is None:
        return False
    onnx_path, x = found
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
    mace = {n: (statistics.median(r[1][n][0] for r in mace_runs), k, keys)
            for n, (_, k, keys) in mace_runs[0][1].items()}
    ort = {n: statistics.median(r[1].get(n, 0.0) for r in ort_runs)
           for n in ort_runs[0][1]}
    owner = match(mace, ort)
    ort_by_op = collections.defaultdict(float)
    for node, ms in ort.items():
        ort_by_op[owner[node]] += ms
    kinds = collections.defaultdict(lambda: [0, 0.0, 0.0])
    rows = []
    for name, (ms, kind, _) in mace.items():
        k = kinds[kind]
        k[0] += 1
        k[1] += ms
        k[2] += ort_by_op.get(name, 0.0)
        rows.append((ms - ort_by_op.get(name, 0.0), name, kind, ms,
                     ort_by_op.get(name, 0.0)))
    if ort_by_op.get(UNMATCHED):
        kinds[UNMATCHED][2] += ort_by_op[UNMATCHED]
    matched = sum(1 for n in ort if owner[n] != UNMATCHED)
    print("%s, %d thread(s), %d pairs x %d rounds: %d mace ops, %d ONNX "
          "Runtime nodes (%d given to a mace op)" %
          (model, args.threads, args.pairs, args.rounds, len(mace), len(ort),
           matched))
    mace_run = statistics.median(r[0] for r in mace_runs)
    ort_run = statistics.median(r[0] for r in ort_runs)
    print("  whole run (median): mace %.3f ms, ONNX Runtime %.3f ms "
          "(profiling on), mace/ORT %.2f" % (mace_run, ort_run,
                                             mace_run / ort_run))
    print("  per layer, each layer's minimum over the rounds:")
    print("  %-22s %5s %10s %10s %9s" % ("kind", "ops", "mace ms", "ORT ms",
                                        "mace/ORT"))
    for kind, (count, m, o) in sorted(kinds.items(),
                                      key=lambda t: -max(t[1][1], t[1][2])):
        ratio = "%9.2f" % (m / o) if o > 0 and m > 0 else "%9s" % "-"
        print("  %-22s %5d %10.3f %10.3f %s" % (kind, count, m, o, ratio))
    total_mace = sum(k[1] for k in kinds.values())
    total_ort = sum(k[2] for k in kinds.values())
    if total_mace > 0 and total_ort > 0:
        print("  %-22s %5d %10.3f %10.3f %9.2f" %
              ("all layers", len(mace), total_mace, total_ort,
               total_mace / total_ort))
        # What the minima leave out of a run: the spread between rounds and
        # the time between layers. ONNX Runtime's run is timed with its
        # profiler on, and a pair's ratios move with the host: each round
        # timed alone, the two engines' rounds spread alike (docs/
        # performance.md, stop 29).
        print("  whole run / all layers: mace %.2f, ONNX Runtime %.2f" %
              (mace_run / total_mace, ort_run / total_ort))
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
