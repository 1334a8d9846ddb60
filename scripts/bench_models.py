#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages numpy, onnx; the peers'
# packages onnxruntime, openvino, ai-edge-litert, MNN, ncnn; onnx2tf and
# pnnx in the tool venv that scripts/bench_models.sh sets up).
"""mace and the peer engines side by side on the zoo's ONNX models: the same
model, the same input tensor, the same thread counts, interleaved in one run.

Method
  * Input: the zoo's fixed-seed input_0.npy (scripts/make_model_zoo.py),
    fed to every engine (transposed to NHWC for the TFLite model only).
  * Conversions, each cached under ~/.cache/mace/bench/<engine>/<model>/:
    mace `mace convert` (fp32); ONNX Runtime and OpenVINO read the ONNX
    file; TFLite via onnx2tf (float32 .tflite, the TensorFlow ecosystem's
    ONNX route); MNN via its converter (MNN's _tools.mnnconvert, called
    directly: the `mnnconvert` wrapper script pip-installs a logging SDK
    that downgrades protobuf and breaks tensorflow); ncnn via pnnx with
    fp32 weights (fp16=0).
  * One measurement = a fresh worker process per engine (mace: `mace run`;
    peers: scripts/bench_worker.py): load the model, one first run (the
    warm-up), --rounds timed runs; its median. Each repeat runs every
    engine once, in an order rotated per repeat; the table gives the
    median over --repeats of those per-process medians.
  * Init = model load + engine creation (+ graph compile), and the first
    run; "init/run" = (load + first run) / steady-state median (issue 4 item
    6 asks <= 2 for mace). Every engine loads as a fresh install would;
    mace's "cached init/run" is the same ratio with its packed weight cache
    (`mace run --weight-cache-dir`): one extra process writes the cache,
    three more map it, their median.
  * Memory: peak RSS of the worker process (ru_maxrss of that process
    alone, through GNU time: see run_measured). Nothing is subtracted;
    "base" is shown beside it: for a peer the VmRSS of its worker after
    importing the engine's Python package and before loading the model
    (Python + the engine library), for mace the peak RSS of
    `mace run --help` (the binary alone).
  * GFLOP/s = 2 x MACs (Conv, ConvTranspose, Gemm, MatMul counted from the
    ONNX graph, scripts/bench_machine.py) / median latency; % of the fp32
    peak of the cores used: threads x one core's peak measured by a
    register-only FMA loop (scripts/fma_peak.c), or where that cannot be
    built threads x clock x FLOP/cycle (the assumption printed).
  * Correctness: each engine's output (first repeat) against ONNX Runtime's
    reference output in the zoo (output_<name>.npy, scripts/zoo_reference.py):
    cosine < --min-cosine marks the row WRONG-OUTPUT (its time still shown,
    flagged, never silently).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_machine  # noqa: E402

DEFAULT_MODELS = ["mobilenet_v1", "mobilenet_v2", "squeezenet1_1", "resnet50",
                  "inception_v3"]
ENGINES = ["mace", "ort", "openvino", "tflite", "mnn", "ncnn"]
ENGINE_TITLES = {"mace": "mace", "ort": "ONNX Runtime", "openvino": "OpenVINO",
                 "tflite": "TFLite+XNNPACK", "mnn": "MNN", "ncnn": "ncnn"}
PEER_MODULES = {"ort": "onnxruntime", "openvino": "openvino",
                "tflite": "ai_edge_litert.interpreter", "mnn": "MNN",
                "ncnn": "ncnn"}
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "bench_worker.py")
CONVERT_TIMEOUT_S = 1800


def cache_root(env, *parts):
    base = os.environ.get(env)
    return base or os.path.join(os.path.expanduser("~"), ".cache", "mace",
                                *parts)


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Processes.

class Result:
    def __init__(self, returncode, stdout, stderr, maxrss_kb, seconds):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.maxrss_kb = maxrss_kb
        self.seconds = seconds


TIME_BINARY = "/usr/bin/time"


def run_measured(cmd, timeout_s, cwd=None, env=None):
    """Runs cmd and measures its peak RSS. The measurement goes through GNU
    time (%M: ru_maxrss from its wait4 on cmd) because a child forked from
    this Python process keeps the parent's resident size as its initial
    high-water mark across exec: measured directly, every worker would
    report at least this process's ~70 MB. Without /usr/bin/time the
    wait4 figure is kept and flagged (maxrss_inherited)."""
    rss_file = None
    if os.access(TIME_BINARY, os.X_OK):
        fd, rss_file = tempfile.mkstemp(prefix="bench_rss_")
        os.close(fd)
        cmd = [TIME_BINARY, "-f", "%M", "-o", rss_file] + list(cmd)
    with tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env,
                                start_new_session=True)
        status, usage = 0, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() - start > timeout_s:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                status = None
                break
            time.sleep(0.05)
        proc.returncode = 0  # reaped above; keep Popen from waiting again
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        code = 124 if status is None else os.waitstatus_to_exitcode(status)
        maxrss_kb, inherited = (usage.ru_maxrss if usage else None), True
        if rss_file:
            try:
                with open(rss_file) as f:
                    lines = [l for l in f.read().split() if l.isdigit()]
                maxrss_kb, inherited = (int(lines[-1]), False) if lines \
                    else (None, False)
            finally:
                os.remove(rss_file)
        stderr = err.read()
        if status is None:
            stderr += "\ntimed out after %g s" % timeout_s
        result = Result(code, out.read(), stderr, maxrss_kb, seconds)
        result.maxrss_inherited = inherited
        return result


def tail(text, lines=3):
    kept = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return " | ".join(kept[-lines:])[:400]


# ---------------------------------------------------------------------------
# Conversions (cached; redone when the ONNX file or the converter changes).

def stamp_of(paths):
    return [[p, os.path.getsize(p), int(os.path.getmtime(p))] for p in paths
            if p and os.path.exists(p)]


def cached(folder, outputs, sources):
    stamp_file = os.path.join(folder, "stamp.json")
    if not all(os.path.isfile(os.path.join(folder, o)) for o in outputs):
        return False
    try:
        with open(stamp_file) as f:
            return json.load(f) == stamp_of(sources)
    except (OSError, ValueError):
        return False


def write_stamp(folder, sources):
    with open(os.path.join(folder, "stamp.json"), "w") as f:
        json.dump(stamp_of(sources), f)


class Converters:
    def __init__(self, args):
        self.args = args
        self.bench = args.bench_dir
        self.venv_bin = os.path.join(args.venv, "bin")
        self.onnx2tf = os.path.join(self.venv_bin, "onnx2tf")
        self.pnnx = self.find_pnnx()

    def find_pnnx(self):
        python = os.path.join(self.venv_bin, "python")
        if not os.path.exists(python):
            return None
        found = subprocess.run(
            [python, "-c", "import importlib.util, os; s = importlib.util."
             "find_spec('pnnx'); print(os.path.join(os.path.dirname("
             "s.origin), 'pnnx') if s else '')"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        path = found.stdout.strip()
        return path if path and os.access(path, os.X_OK) else None

    def convert(self, engine, model):
        """(path to the converted model, None) or (None, reason)."""
        onnx_path = model["onnx"]
        if engine in ("ort", "openvino"):
            return onnx_path, None
        folder = os.path.join(self.bench, engine, model["name"])
        os.makedirs(folder, exist_ok=True)
        return getattr(self, "convert_" + engine)(model, folder)

    def finish(self, folder, outputs, sources, result, what):
        if result.returncode == 0 and all(
                os.path.isfile(os.path.join(folder, o)) for o in outputs):
            write_stamp(folder, sources)
            log("  converted %s in %.1f s" % (what, result.seconds))
            return os.path.join(folder, outputs[0]), None
        return None, "%s failed (exit %d): %s" % (
            what, result.returncode,
            tail(result.stdout + "\n" + result.stderr))

    def convert_mace(self, model, folder):
        outputs = ["model.pb", "model.data"]
        sources = [model["onnx"], self.args.mace]
        if cached(folder, outputs, sources):
            return os.path.join(folder, outputs[0]), None
        result = run_measured([
            self.args.mace, "convert", "--platform", "onnx", "--model-file",
            model["onnx"], "--output-dir", folder, "--name", "model",
            "--data-type", "fp32_fp32"], CONVERT_TIMEOUT_S)
        return self.finish(folder, outputs, sources, result, "mace convert")

    def convert_tflite(self, model, folder):
        outputs = [os.path.join("saved_model", "model_float32.tflite")]
        sources = [model["onnx"], self.onnx2tf]
        if cached(folder, outputs, sources):
            return os.path.join(folder, outputs[0]), None
        if not os.access(self.onnx2tf, os.X_OK):
            return None, ("onnx2tf not installed in %s (scripts/"
                          "bench_models.sh sets it up)" % self.args.venv)
        # onnx2tf checks its conversion on 20 sample images that it
        # downloads unless this file is in its working directory; fixed-seed
        # random data keeps it offline (only its own accuracy check uses it).
        sample = os.path.join(
            folder, "calibration_image_sample_data_20x128x128x3_float32.npy")
        if not os.path.isfile(sample):
            np.save(sample, np.random.default_rng(0).random(
                (20, 128, 128, 3), dtype=np.float32))
        shutil.rmtree(os.path.join(folder, "saved_model"), ignore_errors=True)
        result = run_measured([self.onnx2tf, "-i", model["onnx"], "-o",
                               "saved_model", "-nuo", "-n"],
                              CONVERT_TIMEOUT_S, cwd=folder)
        return self.finish(folder, outputs, sources, result, "onnx2tf")

    def convert_mnn(self, model, folder):
        outputs = ["model.mnn"]
        sources = [model["onnx"]]
        if cached(folder, outputs, sources):
            return os.path.join(folder, outputs[0]), None
        target = os.path.join(folder, "model.mnn")
        argv = ["mnnconvert", "-f", "ONNX", "--modelFile", model["onnx"],
                "--MNNModel", target, "--bizCode", "mace-bench"]
        result = run_measured([sys.executable, "-c",
                               "import sys, _tools; _tools.mnnconvert(%r)" %
                               argv], CONVERT_TIMEOUT_S, cwd=folder)
        return self.finish(folder, outputs, sources, result, "MNN convert")

    def convert_ncnn(self, model, folder):
        outputs = ["model.ncnn.param", "model.ncnn.bin"]
        sources = [model["onnx"], self.pnnx]
        if cached(folder, outputs, sources):
            return os.path.join(folder, outputs[0]), None
        if not self.pnnx:
            return None, ("pnnx not installed in %s (scripts/bench_models.sh "
                          "sets it up)" % self.args.venv)
        link = os.path.join(folder, "model.onnx")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(model["onnx"], link)
        shape = ",".join(str(d) for d in model["input_shape"])
        result = run_measured([self.pnnx, "model.onnx",
                               "inputshape=[%s]" % shape, "fp16=0"],
                              CONVERT_TIMEOUT_S, cwd=folder)
        return self.finish(folder, outputs, sources, result, "pnnx")


# ---------------------------------------------------------------------------
# Measurements.

LATENCY = re.compile(r"^latency_ms (.*)$", re.M)


def measure_mace(args, model, converted, threads, out_dir, cache_dir=None):
    data = converted[:-len(".pb")] + ".data"
    cmd = [args.mace, "run", "--model", converted, "--data", data,
           "--input", "%s=%s" % (model["input_name"], model["input"]),
           "--round", str(args.rounds), "--num-threads", str(threads)]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    if cache_dir:
        cmd += ["--weight-cache-dir", cache_dir]
    result = run_measured(cmd, args.timeout)
    match = LATENCY.search(result.stdout)
    if result.returncode != 0 or not match:
        return None, "mace run failed (exit %d): %s" % (
            result.returncode, tail(result.stdout + "\n" + result.stderr))
    fields = dict(kv.split("=", 1) for kv in match.group(1).split())
    row = {"median_ms": float(fields["median"]),
           "load_ms": float(fields["init"]),
           "first_ms": float(fields["first"]),
           "maxrss_kb": result.maxrss_kb,
           "rss_inherited": result.maxrss_inherited}
    if out_dir:
        name = model["output_name"].replace("/", "_").replace(":", "_")
        row["output"] = os.path.join(out_dir, name + ".npy")
    return row, None


def measure_peer(args, engine, model, converted, threads, out_dir):
    cmd = [sys.executable, WORKER, "--engine", engine, "--model-file",
           converted, "--input", model["input"], "--threads", str(threads),
           "--rounds", str(args.rounds)]
    output = os.path.join(out_dir, engine + ".npy") if out_dir else None
    if output:
        cmd += ["--output", output]
    result = run_measured(cmd, args.timeout)
    lines = [l for l in result.stdout.splitlines() if l.startswith("{")]
    if result.returncode != 0 or not lines:
        return None, "%s worker failed (exit %d): %s" % (
            engine, result.returncode,
            tail(result.stderr + "\n" + result.stdout))
    report = json.loads(lines[-1])
    row = {"median_ms": statistics.median(report["rounds_ms"]),
           "load_ms": report["load_ms"], "first_ms": report["first_ms"],
           "maxrss_kb": result.maxrss_kb,
           "rss_inherited": result.maxrss_inherited,
           "base_kb": report["base_rss_kb"], "version": report["version"],
           "notes": report["notes"]}
    if engine == "tflite":
        row["xnnpack"] = "XNNPACK delegate" in result.stderr
    if output:
        row["output"] = output
    return row, None


def cosine(a, b):
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if a.size != b.size:
        log("  output has %d values, the reference %d" % (a.size, b.size))
        return 0.0  # flagged WRONG-OUTPUT, not silently unchecked
    denom = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / denom) if denom > 0 else 0.0


def mace_base_kb(mace):
    result = run_measured([mace, "run", "--help"], 30)
    return result.maxrss_kb


# ---------------------------------------------------------------------------
# Models.

def load_models(args):
    models = []
    for name in args.models:
        folder = os.path.join(args.zoo_dir, name)
        meta_path = os.path.join(folder, "meta.json")
        if not os.path.isfile(meta_path):
            sys.exit("bench_models: %s is not in the zoo (%s): run "
                     "scripts/model_zoo.sh --models %s" % (name, folder, name))
        with open(meta_path) as f:
            meta = json.load(f)
        if len(meta["inputs"]) != 1 or len(meta["outputs"]) != 1:
            log("skipping %s: the benchmark feeds one input and checks one "
                "output" % name)
            continue
        onnx_path = os.path.join(folder, "model.onnx")
        macs, unknown = bench_machine.model_macs(onnx_path)
        if unknown:
            log("%s: MACs of %d nodes unknown (no static shape): %s" % (
                name, len(unknown), ", ".join(unknown[:5])))
        ref = os.path.join(folder, meta["outputs"][0]["file"])
        models.append({
            "name": name, "onnx": onnx_path,
            "input": os.path.join(folder, meta["inputs"][0]["file"]),
            "input_name": meta["inputs"][0]["name"],
            "input_shape": meta["inputs"][0]["shape"],
            "output_name": meta["outputs"][0]["name"],
            "reference": ref if os.path.isfile(ref) else None,
            "macs": macs})
    return models


def available_engines(args):
    """Engines to run, and {engine: why not} for the ones left out."""
    chosen, missing = [], {}
    for engine in args.engines:
        if engine == "mace":
            if os.access(args.mace, os.X_OK):
                chosen.append(engine)
            else:
                missing[engine] = "no mace binary at %s" % args.mace
            continue
        probe = subprocess.run(
            [sys.executable, "-c", "import %s" % PEER_MODULES[engine]],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if probe.returncode == 0:
            chosen.append(engine)
        else:
            missing[engine] = "cannot import %s: %s" % (
                PEER_MODULES[engine], tail(probe.stderr, 1))
    return chosen, missing


# ---------------------------------------------------------------------------
# The run.

def bench(args, models, engines, converters):
    """results[(model, threads, engine)] = summary dict or {'error': ...}."""
    results, problems = {}, {}
    for model in models:
        converted = {}
        for engine in engines:
            log("%s: preparing %s" % (model["name"], engine))
            path, why = converters.convert(engine, model)
            if path:
                converted[engine] = path
            else:
                problems[(model["name"], engine)] = why
                log("  " + why)
        reference = np.load(model["reference"]) if model["reference"] \
            else None
        for threads in args.threads:
            runs = {e: [] for e in converted}
            errors = {}
            checks = {}
            for repeat in range(args.repeats):
                order = list(converted)
                shift = repeat % len(order) if order else 0
                order = order[shift:] + order[:shift]
                for engine in order:
                    if engine in errors:
                        continue
                    out_dir = None
                    if repeat == 0:
                        out_dir = tempfile.mkdtemp(prefix="bench_out_")
                    if engine == "mace":
                        row, why = measure_mace(args, model, converted[engine],
                                                threads, out_dir)
                    else:
                        row, why = measure_peer(args, engine, model,
                                                converted[engine], threads,
                                                out_dir)
                    if row is None:
                        errors[engine] = why
                        log("  %s %dT %s: %s" % (model["name"], threads,
                                                 engine, why))
                    else:
                        runs[engine].append(row)
                        log("  %s %dT %s #%d: %.2f ms" % (
                            model["name"], threads, engine, repeat + 1,
                            row["median_ms"]))
                        if row.get("output") and reference is not None:
                            try:
                                checks[engine] = cosine(
                                    np.load(row["output"]), reference)
                            except (OSError, ValueError) as e:
                                checks[engine] = None
                                log("  cannot read %s output: %s" % (
                                    engine, e))
                    if out_dir:
                        shutil.rmtree(out_dir, ignore_errors=True)
            for engine in converted:
                key = (model["name"], threads, engine)
                if engine in errors:
                    results[key] = {"error": errors[engine]}
                    continue
                results[key] = summarize(runs[engine], checks.get(engine))
            if "mace" in converted and "mace" not in errors:
                results[(model["name"], threads, "mace")]["cached_init"] = \
                    cached_mace_init(args, model, converted["mace"], threads)
        for engine in engines:
            if engine not in converted:
                for threads in args.threads:
                    results[(model["name"], threads, engine)] = {
                        "error": problems[(model["name"], engine)]}
    return results


def cached_mace_init(args, model, converted, threads, processes=3):
    """(load + first run) / median of mace with the packed weight cache: a
    process that writes it, then the median over `processes` that map it
    (None when a run fails)."""
    cache_dir = tempfile.mkdtemp(prefix="bench_packed_")
    try:
        ratios = []
        for i in range(processes + 1):
            row, why = measure_mace(args, model, converted, threads, None,
                                    cache_dir)
            if row is None:
                log("  %s %dT mace (weight cache): %s" % (model["name"],
                                                          threads, why))
                return None
            if i > 0:
                ratios.append((row["load_ms"] + row["first_ms"]) /
                              row["median_ms"])
        return statistics.median(ratios)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def summarize(rows, cos):
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    medians = [r["median_ms"] for r in rows]
    summary = {"median_ms": statistics.median(medians),
               "min_ms": min(medians), "max_ms": max(medians),
               "load_ms": med("load_ms"), "first_ms": med("first_ms"),
               "maxrss_kb": med("maxrss_kb") if rows[0]["maxrss_kb"] else None,
               "base_kb": med("base_kb") if "base_kb" in rows[0] else None,
               "rss_inherited": any(r["rss_inherited"] for r in rows),
               "cosine": cos, "repeats": len(rows),
               "version": rows[0].get("version"),
               "notes": rows[0].get("notes")}
    if "xnnpack" in rows[0]:
        summary["xnnpack"] = all(r["xnnpack"] for r in rows)
    return summary


# ---------------------------------------------------------------------------
# Reports.

COLUMNS = ["model", "thr", "engine", "median ms", "range ms", "mace/peer",
           "GFLOP/s", "% peak", "load ms", "1st ms", "init/run",
           "peak MB", "base MB", "cosine", "check"]


def table_rows(args, models, engines, results, mach):
    rows = []
    for model in models:
        for threads in args.threads:
            mace = results.get((model["name"], threads, "mace"), {})
            peak = bench_machine.peak_gflops(mach, threads)
            for engine in engines:
                r = results.get((model["name"], threads, engine))
                if r is None:
                    continue
                if "error" in r:
                    rows.append([model["name"], str(threads),
                                 ENGINE_TITLES[engine]] + ["-"] * 11 +
                                ["FAILED: " + r["error"][:120]])
                    continue
                gflops = 2.0 * model["macs"] / (r["median_ms"] * 1e6)
                ratio = "-"
                if engine != "mace" and "median_ms" in mace:
                    ratio = "%.2f" % (mace["median_ms"] / r["median_ms"])
                check = "ok"
                if r["cosine"] is None:
                    check = "unchecked"
                elif r["cosine"] < args.min_cosine:
                    check = "WRONG-OUTPUT"
                if r.get("xnnpack") is False:
                    check += " no-XNNPACK"
                rows.append([
                    model["name"], str(threads), ENGINE_TITLES[engine],
                    "%.2f" % r["median_ms"],
                    "%.1f-%.1f" % (r["min_ms"], r["max_ms"]), ratio,
                    "%.1f" % gflops,
                    "%.1f" % (100.0 * gflops / peak) if peak else "-",
                    "%.1f" % r["load_ms"], "%.1f" % r["first_ms"],
                    "%.2f" % ((r["load_ms"] + r["first_ms"]) / r["median_ms"]),
                    ("%.0f" % (r["maxrss_kb"] / 1024.0) +
                     ("*" if r["rss_inherited"] else "")) if r["maxrss_kb"]
                    else "-",
                    "%.0f" % (r["base_kb"] / 1024.0) if r.get("base_kb")
                    else "-",
                    "%.6f" % r["cosine"] if r["cosine"] is not None else "-",
                    check])
    return rows


SUMMARY_COLUMNS = ["model", "thr", "mace ms", "best peer", "peer ms",
                   "mace/best", "mace init/run", "cached init/run",
                   "target met"]


def summary_rows(args, models, results):
    """Per model and thread count: mace against the fastest peer whose
    output checked out (the issue's target: mace <= the best peer)."""
    rows = []
    for model in models:
        for threads in args.threads:
            mace = results.get((model["name"], threads, "mace"))
            if not mace or "error" in mace:
                continue
            best = None
            for (name, thr, engine), r in results.items():
                if name != model["name"] or thr != threads or \
                        engine == "mace" or "error" in r:
                    continue
                if r["cosine"] is None or r["cosine"] < args.min_cosine:
                    continue
                if best is None or r["median_ms"] < best[1]["median_ms"]:
                    best = (engine, r)
            init = (mace["load_ms"] + mace["first_ms"]) / mace["median_ms"]
            cached = mace.get("cached_init")
            cached = "%.2f" % cached if cached is not None else "-"
            if best is None:
                rows.append([model["name"], str(threads),
                             "%.2f" % mace["median_ms"], "-", "-", "-",
                             "%.2f" % init, cached, "-"])
                continue
            ratio = mace["median_ms"] / best[1]["median_ms"]
            rows.append([model["name"], str(threads),
                         "%.2f" % mace["median_ms"], ENGINE_TITLES[best[0]],
                         "%.2f" % best[1]["median_ms"], "%.2f" % ratio,
                         "%.2f" % init, cached,
                         "yes" if ratio <= 1.0 else "no"])
    return rows


def print_table(rows, columns=None, group=True):
    columns = columns or COLUMNS
    widths = [max(len(columns[i]), *(len(r[i]) for r in rows)) if rows
              else len(columns[i]) for i in range(len(columns) - 1)]
    fmt = "  ".join("%-" + str(w) + "s" if i < 3 else "%" + str(w) + "s"
                    for i, w in enumerate(widths)) + "  %s"
    print(fmt % tuple(columns))
    print("-" * (sum(widths) + 2 * len(widths) + 12))
    last = None
    for r in rows:
        if group and last is not None and r[:2] != last:
            print()
        last = r[:2]
        print(fmt % tuple(r))


def versions(results, engines, mace):
    found = {}
    for (_, _, engine), r in results.items():
        if r.get("version") and engine not in found:
            found[engine] = r["version"]
    if "mace" in engines:
        out = subprocess.run([mace, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
        first = out.strip().splitlines()[0] if out.strip() else "?"
        found["mace"] = first[len("mace "):] if first.startswith("mace ") \
            else first
    return found


def method_lines(args, mach, converters):
    return [
        "Inputs: the zoo's fixed-seed input_0.npy for every engine "
        "(NHWC-transposed for TFLite only).",
        "Each measurement is a fresh process per engine: load, 1 first run "
        "(warm-up), %d timed runs, their median; %d repeats interleaved "
        "(every engine once per repeat, order rotated); the table shows the "
        "median of the per-process medians and their range."
        % (args.rounds, args.repeats),
        "Threads: mace --num-threads; ORT intra_op_num_threads (sequential, "
        "inter_op 1); OpenVINO INFERENCE_NUM_THREADS, LATENCY hint, 1 stream, "
        "f32 precision hint (its default on this CPU would be bf16); LiteRT "
        "num_threads (XNNPACK delegate); MNN numThread (precision normal); "
        "ncnn opt.num_threads (fp16/bf16 off).",
        "Conversions: mace convert fp32; ORT and OpenVINO read the ONNX file; "
        "onnx2tf -> float32 .tflite; MNN converter -> .mnn; pnnx fp16=0 -> "
        "ncnn .param/.bin.",
        "load ms = model read + engine/session creation (+ compile); 1st ms = "
        "the first run; init/run = (load + 1st) / median (issue 4 item 6: "
        "<= 2 for mace); every engine loads as a fresh install would, and "
        "mace's cached init/run is the same with its packed weight cache "
        "(one process writes it, the median of 3 that map it).",
        "peak MB = peak RSS of the worker process (GNU time %M, its "
        "ru_maxrss; * = measured without /usr/bin/time, so it includes the "
        "forking Python's ~70 MB), nothing subtracted; base MB = that "
        "process before the model: a "
        "peer's VmRSS after importing its Python package, for mace the peak "
        "RSS of `mace run --help`.",
        "GFLOP/s = 2 x MACs (Conv/ConvTranspose/Gemm/MatMul from the ONNX "
        "graph) / median; %% peak against threads x one core's fp32 peak, "
        "%s." % bench_machine.peak_description(mach),
        "check: cosine of the engine's output against ONNX Runtime's "
        "reference (zoo output_<name>.npy); WRONG-OUTPUT below %g." %
        args.min_cosine,
    ]


def format_load(load):
    return "/".join("%.1f" % v for v in load)


def markdown_table(columns, rows, text_columns):
    """text_columns: indexes of left-aligned columns; the rest are numbers,
    right-aligned."""
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---" if i in text_columns else "---:"
                            for i in range(len(columns))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "/") for c in r) + " |")
    return lines


def write_markdown(path, args, models, engines, missing, results, rows,
                   summary, mach, converters, elapsed_s, note):
    vers = versions(results, engines, args.mace)
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = ["## Model benchmark %s" % now.strftime("%Y-%m-%d %H:%M UTC"), ""]
    if note:
        lines += ["**%s**" % note, ""]
    lines += [
        "- Machine: %s, %d CPU(s), %d thread(s) per core%s, %s GHz (%s); "
        "%s %s" % (mach["model_name"], mach["cpus"], mach["threads_per_core"],
                   ", " + mach["hypervisor"] + " guest" if mach["hypervisor"]
                   else "", mach["ghz"], mach["clock_source"],
                   platform.system(), platform.release()),
        "- fp32 peak: %s" % bench_machine.peak_description(mach),
        "- Command: `scripts/bench_models.sh %s` (%.0f s)" % (
            shlex.join(args.argv), elapsed_s),
        "- Load average (1/5/15 min): %s at start, %s at end" % (
            format_load(args.load[0]), format_load(args.load[1])),
        "- Versions: " + "; ".join(
            "%s %s" % (ENGINE_TITLES[e], vers.get(e, "?")) for e in engines),
    ]
    for engine, why in missing.items():
        lines.append("- Not run: %s: %s" % (ENGINE_TITLES[engine], why))
    lines += ["- Models: " + ", ".join(
        "%s %.2f GMACs" % (m["name"], m["macs"] / 1e9) for m in models), ""]
    lines += ["Method:", ""] + ["- " + l for l in method_lines(
        args, mach, converters)] + [""]
    lines += ["mace against the fastest peer with a correct output "
              "(target: mace/best <= 1; init/run <= 2):", ""]
    lines += markdown_table(SUMMARY_COLUMNS, summary, {0, 1, 3, 7}) + [""]
    lines += ["All engines:", ""]
    lines += markdown_table(COLUMNS, rows, {0, 1, 2, 14}) + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mace", default="build/bin/mace",
                        help="the mace binary (default build/bin/mace)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="comma-separated zoo models (default: %s)" %
                        ",".join(DEFAULT_MODELS))
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated subset of %s" %
                        ",".join(ENGINES))
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="fresh processes per engine (default 5)")
    parser.add_argument("--rounds", type=int, default=10,
                        help="timed runs per process (default 10)")
    parser.add_argument("--quick", action="store_true",
                        help="mobilenet_v1 only, 2 repeats of 3 rounds "
                        "(unless --models/--repeats/--rounds are given)")
    parser.add_argument("--markdown", metavar="FILE",
                        help="also write a markdown report to FILE")
    parser.add_argument("--note", default="",
                        help="a line put in bold at the top of the markdown")
    parser.add_argument("--min-cosine", type=float, default=0.999,
                        help="outputs below this cosine are flagged "
                        "(default 0.999)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds per worker process (default 900)")
    parser.add_argument("--zoo-dir", default=cache_root("MACE_ZOO_DIR", "zoo"))
    parser.add_argument("--bench-dir",
                        default=cache_root("MACE_BENCH_DIR", "bench"))
    parser.add_argument("--venv", default=None,
                        help="venv with onnx2tf and pnnx (default "
                        "<bench-dir>/venv)")
    args = parser.parse_args(argv)
    args.argv = argv
    given = set(a.split("=")[0] for a in argv)
    if args.quick:
        if "--models" not in given:
            args.models = "mobilenet_v1"
        if "--repeats" not in given:
            args.repeats = 2
        if "--rounds" not in given:
            args.rounds = 3
    args.models = [m for m in args.models.split(",") if m]
    args.engines = [e for e in args.engines.split(",") if e]
    for e in args.engines:
        if e not in ENGINES:
            parser.error("unknown engine %s (%s)" % (e, ",".join(ENGINES)))
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error("--threads takes integers, e.g. 1,2")
    if not args.threads or min(args.threads) < 1:
        parser.error("--threads must be >= 1")
    if args.repeats < 1 or args.rounds < 1:
        parser.error("--repeats and --rounds must be >= 1")
    args.mace = os.path.abspath(args.mace)
    args.venv = args.venv or os.path.join(args.bench_dir, "venv")
    return args


def main(argv):
    args = parse_args(argv)
    start = time.monotonic()
    load_before = os.getloadavg()
    mach = bench_machine.machine()
    peak_error = bench_machine.measure_peak(mach, args.bench_dir)
    if peak_error:
        log(peak_error + "; % peak uses the clock estimate")
    engines, missing = available_engines(args)
    for engine, why in missing.items():
        log("not running %s: %s" % (engine, why))
    models = load_models(args)
    converters = Converters(args)
    results = bench(args, models, engines, converters)
    if "mace" in engines:
        base = mace_base_kb(args.mace)
        for key, r in results.items():
            if key[2] == "mace" and "error" not in r:
                r["base_kb"] = base
    rows = table_rows(args, models, engines, results, mach)
    summary = summary_rows(args, models, results)
    elapsed = time.monotonic() - start
    args.load = (load_before, os.getloadavg())
    print("load average (1/5/15 min): %s at start, %s at end%s" % (
        format_load(args.load[0]), format_load(args.load[1]),
        "; other work shares the CPUs, timings are noisy"
        if max(args.load[0][0], args.load[1][0]) > 0.5 * mach["cpus"]
        else ""))
    print("machine: %s, %d CPU(s), %s GHz (%s)" % (
        mach["model_name"], mach["cpus"], mach["ghz"], mach["clock_source"]))
    print("fp32 peak per core: %.1f GFLOP/s; %s" % (
        bench_machine.peak_gflops(mach, 1) or 0,
        bench_machine.peak_description(mach)))
    print("models: " + ", ".join("%s %.2f GMACs" % (m["name"], m["macs"] / 1e9)
                                 for m in models))
    print("%d repeats x %d rounds per engine; medians; mace/peer > 1 means "
          "mace is slower" % (args.repeats, args.rounds))
    print()
    print_table(rows)
    print()
    print("mace against the fastest peer with a correct output:")
    print_table(summary, SUMMARY_COLUMNS, group=False)
    print()
    for engine, why in missing.items():
        print("not run: %s: %s" % (engine, why))
    print("total %.0f s" % elapsed)
    if args.markdown:
        write_markdown(args.markdown, args, models, engines, missing, results,
                       rows, summary, mach, converters, elapsed, args.note)
        print("wrote %s" % args.markdown)
    failed = any("error" in r for r in results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
