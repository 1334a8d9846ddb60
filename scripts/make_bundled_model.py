#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages onnx, onnxruntime, numpy).
"""Writes the small ONNX model that scripts/quickstart.sh converts, runs and
validates: models/mini_cnn/mini_cnn.onnx, a fixed input (input.npy) and
ONNX Runtime's output for it (prob.npy). Weights are fixed-seed random,
He-scaled, with BatchNormalization statistics taken from the data so
activations neither vanish nor explode; the script refuses a reference that
is near uniform.

Network (NCHW, 1x3x32x32): Conv 3x3/2 → BatchNormalization → Relu →
depthwise Conv 3x3 → Clip(0,6) → Conv 1x1 → Relu, plus a residual Add of a
1x1 projection → GlobalAveragePool → Flatten → Gemm → Softmax.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(__file__), "..", "models", "mini_cnn")
rng = np.random.default_rng(20261121)


def he(shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(
        np.float32)


def build():
    inits = {
        "conv1_w": he((16, 3, 3, 3), 27),
        "conv1_b": np.zeros(16, np.float32),
        "bn_scale": (1 + 0.1 * rng.standard_normal(16)).astype(np.float32),
        "bn_bias": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "bn_mean": np.zeros(16, np.float32),  # set from data below
        "bn_var": np.ones(16, np.float32),
        "dw_w": he((16, 1, 3, 3), 9),
        "dw_b": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "pw_w": he((24, 16, 1, 1), 16),
        "pw_b": (0.1 * rng.standard_normal(24)).astype(np.float32),
        "proj_w": he((24, 16, 1, 1), 16),
        "fc_w": (rng.standard_normal((10, 24)) * 0.25).astype(np.float32),
        "fc_b": (0.1 * rng.standard_normal(10)).astype(np.float32),
        "clip_min": np.array(0.0, np.float32),
        "clip_max": np.array(6.0, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["input", "conv1_w", "conv1_b"], ["c1"],
                         name="conv1", strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "dw_w", "dw_b"], ["d1"], name="dw",
                         group=16, pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["d1", "clip_min", "clip_max"], ["d1r"],
                         name="relu6"),
        helper.make_node("Conv", ["d1r", "pw_w", "pw_b"], ["p1"], name="pw"),
        helper.make_node("Relu", ["p1"], ["p1r"], name="relu2"),
        helper.make_node("Conv", ["r1", "proj_w"], ["proj"], name="proj"),
        helper.make_node("Add", ["p1r", "proj"], ["sum"], name="residual"),
        helper.make_node("GlobalAveragePool", ["sum"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"],
                         name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax",
                         axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mini_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                       [1, 3, 32, 32])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, inits


def conv1_statistics(model, x):
    """Mean and variance of conv1's output channels, for BatchNorm."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.append(helper.make_tensor_value_info(
        "c1", TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString())
    c1 = session.run(["c1"], {"input": x})[0]
    return c1.mean(axis=(0, 2, 3)), c1.var(axis=(0, 2, 3))


def main():
    model, _ = build()
    x = rng.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    mean, var = conv1_statistics(model, x)
    for init in model.graph.initializer:
        if init.name == "bn_mean":
            init.CopyFrom(numpy_helper.from_array(mean.astype(np.float32),
                                                  "bn_mean"))
        if init.name == "bn_var":
            init.CopyFrom(numpy_helper.from_array(var.astype(np.float32),
                                                  "bn_var"))
    onnx.checker.check_model(model)
    prob = ort.InferenceSession(model.SerializeToString()).run(
        None, {"input": x})[0]
    if prob.max() - prob.min() < 0.05:
        sys.exit("reference output is near uniform (%s); refusing" % prob)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(model, os.path.join(OUT, "mini_cnn.onnx"))
    np.save(os.path.join(OUT, "input.npy"), x)
    np.save(os.path.join(OUT, "prob.npy"), prob)
    print("wrote %s (prob max %.3f, min %.3f)" % (OUT, prob.max(), prob.min()))


if __name__ == "__main__":
    main()
