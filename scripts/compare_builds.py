#!/usr/bin/env python3
# Interpreter: the python3 on PATH (standard library only).
"""Per-layer times of two or more mace builds on the zoo's models, in the
models: what a kernel change does where its op benchmark cannot see it.

    scripts/compare_builds.py --mace old=/tmp/mace_old --mace build/bin/mace \\
        --models squeezenet1_1,densenet121 --threads 1,2 --processes 9

An op benchmark repeats one layer on data and weights its last iteration
left in the caches; in a model each layer finds its weights cold and its
input wherever the layer before left it. Choices tuned on op benchmarks
can be wrong there (docs/performance.md, "2026-12-02 (stop 40)": the
Winograd cost model picked F(4,3) for layers that F(2,3) runs in 0.64-0.83
of the time in their models).

For each model and thread count it runs `mace run --benchmark` of every
build in turn, --processes times, the builds' order rotated each time
(fresh processes: this host's slow phases last seconds to minutes and hit
whichever build runs then). Each layer's time is its minimum over --rounds
runs (scripts/compare_layers.py's parser), and the tables give medians
over the processes: the whole run, each kind of layer (kernel and stride,
or op type), and the --top layers whose time changed most, with each
build's ratio to the first. Models come from the zoo (~/.cache/mace/zoo or
$MACE_ZOO_DIR), converted by each build into a temporary folder, so that a
converter change is compared too: the first build's layers name the rows,
and a layer another build fused away counts 0 there (its time is in the
layer that took it). Exit status 1 when a model is missing or a run
fails.
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_layers import mace_layers, zoo_model  # noqa: E402


def parse_builds(specs):
    """[(label, path)] from NAME=PATH or PATH (labelled by position)."""
    builds = []
    for i, spec in enumerate(specs):
        label, _, path = spec.rpartition("=")
        builds.append((label or "build%d" % i, path))
    return builds


def ratio_cells(values):
    first = values[0]
    return " ".join("%7.2f" % (v / first) if first > 0 else "%7s" % "-"
                    for v in values[1:])


def compare(args, builds, model, threads, work):
    found = zoo_model(model)
    if found is None:
        return False
    onnx_path, x = found
    files = {}
    for index, (label, path) in enumerate(builds):
        folder = os.path.join(work, "build%d" % index)
        pb = os.path.join(folder, model + ".pb")
        data = os.path.join(folder, model + ".data")
        if not os.path.isfile(pb):
            subprocess.run([path, "convert", "--platform", "onnx",
                            "--model-file", onnx_path, "--output-dir", folder,
                            "--name", model], capture_output=True, check=True)
        files[label] = (pb, data)
    runs = {label: [] for label, _ in builds}
    for p in range(args.processes):
        for i in range(len(builds)):
            label, path = builds[(p + i) % len(builds)]
            pb, data = files[label]
            runs[label].append(mace_layers(path, pb, data, x, threads,
                                           args.rounds))
    labels = [label for label, _ in builds]
    whole = [statistics.median(r[0] for r in runs[b]) for b in labels]
    # A layer's median over the processes, per build; the first build's
    # layers name the rows (a build that fuses differently leaves gaps).
    layer_ms = {b: {} for b in labels}
    for b in labels:
        names = set().union(*(r[1].keys() for r in runs[b]))
        for name in names:
            times = [r[1][name][0] for r in runs[b] if name in r[1]]
            layer_ms[b][name] = statistics.median(times)
    kinds = collections.OrderedDict()
    for name, (_, kind, _) in runs[labels[0]][0][1].items():
        kinds.setdefault(kind, []).append(name)
    print("%s, %d thread(s), %d processes a build x %d rounds" %
          (model, threads, args.processes, args.rounds))
    print("  %-22s %5s %s   %s" % (
        "", "ops", " ".join("%10s" % b[:10] for b in labels),
        " ".join("%7s" % ("/" + labels[0])[:7] for _ in labels[1:])))
    print("  %-22s %5s %s   %s" % ("whole run (median)", "",
                                   " ".join("%10.3f" % w for w in whole),
                                   ratio_cells(whole)))
    rows = []
    for kind, names in sorted(kinds.items(), key=lambda kv: -sum(
            layer_ms[labels[0]].get(n, 0.0) for n in kv[1])):
        sums = [sum(layer_ms[b].get(n, 0.0) for n in names) for b in labels]
        rows.append((kind, len(names), sums))
    for kind, count, sums in rows:
        print("  %-22s %5d %s   %s" % (kind[:22], count,
                                       " ".join("%10.3f" % s for s in sums),
                                       ratio_cells(sums)))
    if args.top:
        print("  layers that changed most (first build's time x change):")
        changes = []
        for name in runs[labels[0]][0][1]:
            times = [layer_ms[b].get(name, 0.0) for b in labels]
            moved = max(abs(t - times[0]) for t in times[1:])
            changes.append((moved, name, times))
        for _, name, times in sorted(changes, reverse=True)[:args.top]:
            print("    %-44s %s   %s" % (name[-44:],
                                         " ".join("%8.3f" % t for t in times),
                                         ratio_cells(times)))
    return True


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mace", action="append", default=[],
                        metavar="[NAME=]PATH",
                        help="a mace binary; at least two, the first is the "
                        "baseline")
    parser.add_argument("--models", default="squeezenet1_1",
                        help="comma-separated zoo models")
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts")
    parser.add_argument("--processes", type=int, default=7,
                        help="processes of each build per model and "
                        "thread count")
    parser.add_argument("--rounds", type=int, default=30,
                        help="timed runs per process")
    parser.add_argument("--top", type=int, default=8,
                        help="layers that changed most to list")
    args = parser.parse_args(argv)
    builds = parse_builds(args.mace)
    if len(builds) < 2:
        parser.error("give at least two --mace builds")
    if len(set(label for label, _ in builds)) < len(builds):
        parser.error("--mace: the builds' names must differ")
    for label, path in builds:
        if not os.access(path, os.X_OK):
            parser.error("--mace %s: %s is not an executable" % (label, path))
    try:
        threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error("--threads: comma-separated integers, got %r" %
                     args.threads)
    if args.processes < 1 or args.rounds < 1 or not threads or min(
            threads) < 1:
        parser.error("--processes, --rounds and --threads must be at least 1")
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for model in [m for m in args.models.split(",") if m]:
            for t in threads:
                try:
                    ok = compare(args, builds, model, t, work) and ok
                except subprocess.CalledProcessError as e:
                    print("%s: %s failed (exit %d): %s" %
                          (model, " ".join(e.cmd[:2]), e.returncode,
                           (e.stderr or "").strip()[-300:]))
                    ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
