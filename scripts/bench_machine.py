#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages onnx, numpy).
"""Helpers of scripts/bench_models.py: the work a model does (MACs counted
from the ONNX graph) and the machine's fp32 peak (measured by
scripts/fma_peak.c where a C compiler is at hand, else from lscpu).

Only Conv, ConvTranspose, Gemm and MatMul are counted: they are where the
multiply-adds are; pooling, element-wise ops, activations and bias adds are
left out, so the GFLOP/s derived from this count slightly understate the
arithmetic an engine really does. FLOPs = 2 x MACs.
"""
import os
import re
import subprocess

import onnx
from onnx import shape_inference


def _static_shape(value_info):
    dims = value_info.type.tensor_type.shape.dim
    shape = []
    for d in dims:
        if not d.HasField("dim_value"):
            return None
        shape.append(d.dim_value)
    return shape


def _shapes(model):
    """Every tensor name with a static shape, after ONNX shape inference."""
    inferred = shape_inference.infer_shapes(model)
    graph = inferred.graph
    shapes = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        shape = _static_shape(vi)
        if shape is not None:
            shapes[vi.name] = shape
    for init in graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _product(values):
    result = 1
    for v in values:
        result *= v
    return result


def _node_macs(node, shapes):
    """MACs of one node, or None when a shape it needs is unknown."""
    def shape(i, of=node.input):
        return shapes.get(of[i]) if i < len(of) else None

    if node.op_type == "Conv":
        w, y = shape(0, node.input[1:]), shape(0, node.output)
        if w is None or y is None:
            return None
        # y: N, Cout, spatial...; w: Cout, Cin/group, kernel...
        return _product(y) * _product(w[1:])
    if node.op_type == "ConvTranspose":
        x, w = shape(0), shape(1)
        if x is None or w is None:
            return None
        # Every input pixel scatters into Cout/group x kernel outputs;
        # w: Cin, Cout/group, kernel...
        return _product(x) * _product(w[1:])
    if node.op_type in ("Gemm", "MatMul"):
        a, b, y = shape(0), shape(1), shape(0, node.output)
        if a is None or y is None:
            return None
        trans_a = node.op_type == "Gemm" and _attr(node, "transA", 0)
        k = a[-2] if (trans_a and len(a) >= 2) else a[-1]
        return _product(y) * k
    return 0


def model_macs(onnx_path):
    """(MACs, names of counted op types whose shape was unknown)."""
    model = onnx.load(onnx_path)
    shapes = _shapes(model)
    total, unknown = 0, []
    for node in model.graph.node:
        macs = _node_macs(node, shapes)
        if macs is None:
            unknown.append(node.name or node.op_type)
        else:
            total += macs
    return total, unknown


def lscpu():
    try:
        text = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True,
                              check=False).stdout
    except OSError:
        text = ""
    info = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            info[key.strip()] = value.strip()
    return info


def _clock_ghz(info):
    """Max clock in GHz and where it came from. lscpu's 'CPU max MHz' is
    absent in many VMs; then the cpufreq limit, /proc/cpuinfo's 'cpu MHz'
    (the nominal clock under KVM), the '@ x.xxGHz' of the model name."""
    if info.get("CPU max MHz"):
        return float(info["CPU max MHz"]) / 1000.0, "lscpu CPU max MHz"
    path = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"
    if os.path.isfile(path):
        with open(path) as f:
            return int(f.read().strip()) / 1e6, "cpufreq cpuinfo_max_freq"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return (float(line.split(":")[1]) / 1000.0,
                            "/proc/cpuinfo cpu MHz (no max clock exposed)")
    except OSError:
        pass
    match = re.search(r"@\s*([\d.]+)\s*GHz", info.get("Model name", ""))
    if match:
        return float(match.group(1)), "model name"
    return None, "unknown"


def machine():
    """Model name, core count, clock and fp32 FLOPs per cycle per core with
    the assumption that gives them."""
    info = lscpu()
    flags = set(info.get("Flags", "").split())
    ghz, clock_source = _clock_ghz(info)
    amd_zen4 = (info.get("Vendor ID") == "AuthenticAMD" and
                info.get("CPU family") == "25")
    if "avx512f" in flags and amd_zen4:
        per_cycle = 32
        assumption = ("AVX-512 on AMD Zen 4 (family 25): a 512-bit FMA "
                      "takes both 256-bit FMA units, 2 x 8 fp32 lanes x 2 "
                      "FLOPs = 32 FLOP/cycle/core")
    elif "avx512f" in flags:
        per_cycle = 64
        assumption = ("AVX-512: 2 FMA units x 16 fp32 lanes x 2 FLOPs = 64 "
                      "FLOP/cycle/core (assumes two 512-bit FMA ports; "
                      "one-port SKUs have half)")
    elif "avx2" in flags and "fma" in flags:
        per_cycle = 32
        assumption = ("AVX2+FMA: 2 FMA units x 8 fp32 lanes x 2 FLOPs = 32 "
                      "FLOP/cycle/core")
    elif "asimd" in flags or info.get("Architecture") == "aarch64":
        per_cycle = 16
        assumption = ("NEON: 2 FMA pipes x 4 fp32 lanes x 2 FLOPs = 16 "
                      "FLOP/cycle/core")
    else:
        per_cycle = 8
        assumption = "SSE: 4 fp32 lanes x (1 mul + 1 add) = 8 FLOP/cycle/core"
    cores = int(info.get("CPU(s)", os.cpu_count() or 1))
    return {
        "model_name": info.get("Model name", "unknown"),
        "cpus": cores,
        "threads_per_core": int(info.get("Thread(s) per core", 1) or 1),
        "ghz": ghz,
        "clock_source": clock_source,
        "flops_per_cycle": per_cycle,
        "assumption": assumption,
        "hypervisor": info.get("Hypervisor vendor", ""),
    }


def measure_peak(mach, work_dir):
    """Measures one core's fp32 peak with scripts/fma_peak.c (built with
    `cc -O2 -march=native` into work_dir, rebuilt when the source changes)
    and records it in mach: peak_gflops then uses it instead of the
    clock x FLOP/cycle estimate, which a VM hiding its maximum clock
    understates (the Intel dev machine's cores ran 3.1-3.5 GHz x 64
    FLOP/cycle against a nominal 2.7). Returns an error string, or None."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "fma_peak.c")
    binary = os.path.join(work_dir, "fma_peak")
    try:
        os.makedirs(work_dir, exist_ok=True)
        if (not os.path.exists(binary) or
                os.path.getmtime(binary) < os.path.getmtime(source)):
            subprocess.run(["cc", "-O2", "-march=native", "-o", binary,
                            source], check=True, capture_output=True,
                           text=True)
        out = subprocess.run([binary], check=True, capture_output=True,
                             text=True, timeout=60).stdout.split()
        if len(out) < 3 or out[0] != "fma_peak":
            return "unexpected output of %s: %r" % (binary, out)
        mach["measured_gflops"] = float(out[1])
        mach["measured_isa"] = out[2]
        return None
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return "cannot measure the fp32 peak with %s: %s" % (source, e)


def peak_gflops(mach, threads):
    """fp32 peak of `threads` cores (one thread per physical core): the
    measured one-core peak times threads when measure_peak ran, else
    threads x clock x FLOP/cycle."""
    if mach.get("measured_gflops"):
        return threads * mach["measured_gflops"]
    if mach["ghz"] is None:
        return None
    return threads * mach["ghz"] * mach["flops_per_cycle"]


def peak_description(mach):
    """How peak_gflops was obtained, for the report."""
    if mach.get("measured_gflops"):
        return ("measured: %.1f GFLOP/s per core, a register-only %s FMA "
                "loop (scripts/fma_peak.c, best of 7 runs; = %.2f GHz x %d "
                "FLOP/cycle, against the %s GHz of %s)" % (
                    mach["measured_gflops"], mach["measured_isa"],
                    mach["measured_gflops"] / mach["flops_per_cycle"],
                    mach["flops_per_cycle"], mach["ghz"],
                    mach["clock_source"]))
    return "estimated: %s GHz (%s) x %d FLOP/cycle; %s" % (
        mach["ghz"], mach["clock_source"], mach["flops_per_cycle"],
        mach["assumption"])


if __name__ == "__main__":
    import json
    import sys
    print(json.dumps(machine(), indent=1))
    for path in sys.argv[1:]:
        macs, unknown = model_macs(path)
        print("%s: %.3f GMACs%s" % (path, macs / 1e9, (
            " (unknown shapes: %s)" % ", ".join(unknown[:5])) if unknown
            else ""))
