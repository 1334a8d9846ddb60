#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages numpy and the engine's own:
# onnxruntime, openvino, ai-edge-litert, MNN, ncnn).
"""One measurement of one peer engine, in its own process, for
scripts/bench_models.py: import the engine, load the model, one first run
(the warm-up, the same single untimed-for-the-median run `mace run` makes),
then --rounds timed runs. Each timed run covers what `mace run` times around
MaceEngine::Run: feed the input, run, fetch the output.

Prints one JSON line on stdout:
  engine, version, base_rss_kb (VmRSS after importing the engine, before the
  model is loaded), load_ms (model file read + engine/session creation),
  first_ms, rounds_ms (every timed run), vmhwm_kb (VmHWM at the end), notes.
With --output FILE the output of the last run is saved as .npy (NCHW/NC
order, as the ONNX model gives it).
"""
import argparse
import json
import os
import sys
import time

import numpy as np


def proc_status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def now_ms():
    return time.perf_counter() * 1000.0


class OnnxRuntime:
    def __init__(self, args):
        import onnxruntime as ort
        self.ort = ort
        self.version = ort.__version__
        self.notes = "CPUExecutionProvider, sequential, ORT_ENABLE_ALL"

    def load(self, args):
        opts = self.ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = \
            self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = self.ort.InferenceSession(
            args.model_file, sess_options=opts,
            providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name

    def run(self, x):
        return self.session.run(None, {self.input_name: x})[0]


class OpenVino:
    def __init__(self, args):
        import openvino as ov
        self.ov = ov
        self.version = ov.get_version()
        # The CPU plugin runs bf16 by default where the CPU has AMX /
        # avx512_bf16 (this one does); fp32 is forced to compare like with
        # like.
        self.notes = ("CPU, ONNX read directly, PERFORMANCE_HINT=LATENCY, "
                      "INFERENCE_PRECISION_HINT=f32")

    def load(self, args):
        core = self.ov.Core()
        model = core.read_model(args.model_file)
        self.compiled = core.compile_model(model, "CPU", {
            "INFERENCE_NUM_THREADS": args.threads,
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
            "INFERENCE_PRECISION_HINT": "f32",
        })
        self.request = self.compiled.create_infer_request()
        self.output = self.compiled.output(0)

    def run(self, x):
        result = self.request.infer({0: x})
        return result[self.output]


class TfLite:
    """LiteRT interpreter; float models get the XNNPACK delegate by default
    (the delegate announces itself on stderr, bench_models.py checks it)."""

    def __init__(self, args):
        from ai_edge_litert import interpreter as litert
        import ai_edge_litert
        self.litert = litert
        self.version = getattr(ai_edge_litert, "__version__", "?")
        self.notes = "LiteRT Interpreter, default XNNPACK delegate"

    def load(self, args):
        self.interp = self.litert.Interpreter(model_path=args.model_file,
                                             num_threads=args.threads)
        self.interp.allocate_tensors()
        self.input = self.interp.get_input_details()[0]
        self.output = self.interp.get_output_details()[0]

    def run(self, x):
        want = tuple(self.input["shape"])
        if x.ndim == 4 and tuple(x.shape) != want:
            # onnx2tf turns NCHW models into NHWC ones.
            x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        self.interp.set_tensor(self.input["index"], x)
        self.interp.invoke()
        y = self.interp.get_tensor(self.output["index"])
        if y.ndim == 4:
            y = y.transpose(0, 3, 1, 2)
        return y


class Mnn:
    def __init__(self, args):
        import MNN
        self.mnn = MNN
        self.version = MNN.version()
        self.notes = "Interpreter/Session API, CPU, precision normal"

    def load(self, args):
        self.interp = self.mnn.Interpreter(args.model_file)
        self.session = self.interp.createSession({
            "backend": "CPU", "numThread": args.threads,
            "precision": "normal"})
        self.input = self.interp.getSessionInput(self.session)

    def run(self, x):
        host = self.mnn.Tensor(x.shape, self.mnn.Halide_Type_Float, x,
                               self.mnn.Tensor_DimensionType_Caffe)
        self.input.copyFrom(host)
        self.interp.runSession(self.session)
        out = self.interp.getSessionOutput(self.session)
        shape = out.getShape()
        result = self.mnn.Tensor(shape, self.mnn.Halide_Type_Float,
                                 np.zeros(shape, dtype=np.float32),
                                 self.mnn.Tensor_DimensionType_Caffe)
        out.copyToHostTensor(result)
        return np.array(result.getData(), dtype=np.float32).reshape(shape)


class Ncnn:
    """pnnx names the blobs in0.. and out0..; fp16 storage/arithmetic and
    bf16 are switched off so ncnn computes in fp32 like the others."""

    def __init__(self, args):
        import ncnn
        self.ncnn = ncnn
        self.version = getattr(ncnn, "__version__", "?")
        self.notes = "fp32 (fp16/bf16/int8 off), no Vulkan"

    def load(self, args):
        net = self.ncnn.Net()
        opt = net.opt
        opt.num_threads = args.threads
        opt.use_vulkan_compute = False
        opt.use_fp16_storage = False
        opt.use_fp16_packed = False
        opt.use_fp16_arithmetic = False
        opt.use_bf16_storage = False
        opt.use_int8_inference = False
        stem = args.model_file[:-len(".param")]
        if net.load_param(stem + ".param") != 0 or \
                net.load_model(stem + ".bin") != 0:
            raise RuntimeError("ncnn cannot load %s.param/.bin" % stem)
        self.net = net

    def run(self, x):
        ex = self.net.create_extractor()
        ex.input("in0", self.ncnn.Mat(x[0]))
        status, out = ex.extract("out0")
        if status != 0:
            raise RuntimeError("ncnn extract failed: %d" % status)
        y = np.array(out)
        return y.reshape((1,) + y.shape)


ENGINES = {"ort": OnnxRuntime, "openvino": OpenVino, "tflite": TfLite,
           "mnn": Mnn, "ncnn": Ncnn}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES))
    parser.add_argument("--model-file", required=True)
    parser.add_argument("--input", required=True, help=".npy, NCHW")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--output", help="save the output here (.npy)")
    args = parser.parse_args()
    x = np.ascontiguousarray(np.load(args.input).astype(np.float32))
    engine = ENGINES[args.engine](args)
    base_rss_kb = proc_status_kb("VmRSS")
    start = now_ms()
    engine.load(args)
    load_ms = now_ms() - start
    start = now_ms()
    y = engine.run(x)
    first_ms = now_ms() - start
    rounds_ms = []
    for _ in range(args.rounds):
        start = now_ms()
        y = engine.run(x)
        rounds_ms.append(now_ms() - start)
    if args.output:
        np.save(args.output, np.asarray(y, dtype=np.float32))
    print(json.dumps({
        "engine": args.engine, "version": str(engine.version),
        "notes": engine.notes, "base_rss_kb": base_rss_kb,
        "load_ms": load_ms, "first_ms": first_ms, "rounds_ms": rounds_ms,
        "vmhwm_kb": proc_status_kb("VmHWM")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
