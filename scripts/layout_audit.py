#!/usr/bin/env python3
# Interpreter: the python3 on PATH with pip's onnx, onnxruntime and numpy.
"""Layout audit of the ONNX converter: for each of a list of common ops, a
graph Conv -> op -> Conv (NCHW, as ONNX has it) is converted with `mace
convert`, and the converted model must keep no more Transposes than the
layout needs: the input's (the user feeds NCHW) and the output's (the
output is NCHW), plus any the graph asks for itself. Every op whose
kernel is NHWC is wrapped in transposes by the frontend, and the passes
must sink and cancel them; an op they do not know leaves a pair behind
(each a pass over the tensor at run time), which this test catches. Each
converted model is also run and compared with ONNX Runtime (cosine >=
0.99999).

    scripts/layout_audit.py [--mace build/bin/mace] [--cases a,b]

Exit status 1 when any case keeps extra transposes, fails to convert or
run, or differs from ONNX Runtime.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

C = 8  # channels of the convolutions around the op


def conv(name, inp, out, cin, cout, rng):
    w = numpy_helper.from_array(
        rng.standard_normal((cout, cin, 1, 1)).astype(np.float32), name + "_w")
    return [helper.make_node("Conv", [inp, name + "_w"], [out], name=name)], [w]


def const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


# name: (nodes from "a" to "b", initializers, channels of "b", transposes
# the converted model may keep). Two is the input's and the output's.
def cases(rng):
    return {
        "relu": ([helper.make_node("Relu", ["a"], ["b"])], [], C, 2),
        "prelu": ([helper.make_node("PRelu", ["a", "s"], ["b"])],
                  [const("s", rng.random((C, 1, 1)))], C, 2),
        "leaky_relu": ([helper.make_node("LeakyRelu", ["a"], ["b"],
                                         alpha=0.1)], [], C, 2),
        "hard_sigmoid": ([helper.make_node("HardSigmoid", ["a"], ["b"])], [],
                         C, 2),
        "clip": ([helper.make_node("Clip", ["a", "lo", "hi"], ["b"])],
                 [const("lo", 0.0), const("hi", 6.0)], C, 2),
        "swish": ([helper.make_node("Sigmoid", ["a"], ["s"]),
                   helper.make_node("Mul", ["a", "s"], ["b"])], [], C, 2),
        "channel_scale": ([helper.make_node("Mul", ["a", "m"], ["b"])],
                          [const("m", rng.random((C, 1, 1)))], C, 2),
        "batch_norm": ([helper.make_node("Relu", ["a"], ["r"]),
                        helper.make_node("BatchNormalization",
                                         ["r", "g", "be", "mu", "var"],
                                         ["b"])],
                       [const("g", rng.random(C)), const("be", rng.random(C)),
                        const("mu", rng.random(C)),
                        const("var", rng.random(C) + 0.5)], C, 2),
        "instance_norm": ([helper.make_node("InstanceNormalization",
                                            ["a", "g", "be"], ["b"])],
                          [const("g", rng.random(C)),
                           const("be", rng.random(C))], C, 2),
        "lrn": ([helper.make_node("LRN", ["a"], ["b"], size=3)], [], C, 2),
        "max_pool": ([helper.make_node("MaxPool", ["a"], ["b"],
                                       kernel_shape=[2, 2], strides=[2, 2])],
                     [], C, 2),
        "resize": ([helper.make_node("Resize", ["a", "", "sc"], ["b"],
                                     mode="nearest")],
                   [const("sc", [1, 1, 2, 2])], C, 2),
        "depth_to_space": ([helper.make_node("DepthToSpace", ["a"], ["b"],
                                             blocksize=2)], [], C // 4, 2),
        "space_to_depth": ([helper.make_node("SpaceToDepth", ["a"], ["b"],
                                             blocksize=2)], [], C * 4, 2),
        "pad": ([helper.make_node("Pad", ["a", "p"], ["b"])],
                [const("p", [0, 0, 1, 2, 0, 0, 2, 1], np.int64)], C, 2),
        "concat": ([helper.make_node("Relu", ["a"], ["r"]),
                    helper.make_node("Concat", ["a", "r"], ["b"], axis=1)],
                   [], 2 * C, 2),
        # CReLU (FaceBoxes, PVANet): concat(x, -x), scaled, ReLU.
        "crelu": ([helper.make_node("Neg", ["a"], ["n"]),
                   helper.make_node("Concat", ["a", "n"], ["j"], axis=1),
                   helper.make_node("Mul", ["j", "m"], ["s"]),
                   helper.make_node("Relu", ["s"], ["b"])],
                  [const("m", rng.random((2 * C, 1, 1)))], 2 * C, 2),
        # Two branches merged by elementwise gates (sum, tanh, sigmoid,
        # products), one of them a convolution of its own.
        "gated_branches": ([helper.make_node("Conv", ["a", "g_w"], ["g"]),
                            helper.make_node("Add", ["a", "g"], ["s"]),
                            helper.make_node("Tanh", ["a"], ["t"]),
                            helper.make_node("Sigmoid", ["g"], ["u"]),
                            helper.make_node("Mul", ["s", "t"], ["v"]),
                            helper.make_node("Mul", ["v", "u"], ["b"])],
                           [const("g_w", rng.standard_normal((C, C, 1, 1)))],
                           C, 2),
        # The graph input read by a second convolution too: one transpose
        # of it serves both.
        "input_read_twice": ([helper.make_node("Conv", ["x", "x_w"], ["x2"]),
                              helper.make_node("Add", ["a", "x2"], ["b"])],
                             [const("x_w", rng.standard_normal((C, C, 1, 1)))],
                             C, 2),
        "slices": ([helper.make_node("Slice", ["a", "s0", "e0", "ax"], ["p"]),
                    helper.make_node("Slice", ["a", "s1", "e1", "ax"], ["q"]),
                    helper.make_node("Concat", ["q", "p"], ["b"], axis=1)],
                   [const("s0", [0], np.int64), const("e0", [3], np.int64),
                    const("s1", [3], np.int64), const("e1", [C], np.int64),
                    const("ax", [1], np.int64)], C, 2),
        "split": ([helper.make_node("Split", ["a", "sp"], ["p", "q", "r"],
                                    axis=1),
                   helper.make_node("Concat", ["r", "p", "q"], ["b"],
                                    axis=1)],
                  [const("sp", [2, 2, 4], np.int64)], C, 2),
        # A pixel shuffle written by hand (torch's PixelShuffle before
        # opset 11, einops): Reshape -> 6-D Transpose -> Reshape.
        "pixel_shuffle": ([helper.make_node("Reshape", ["a", "s1"], ["r1"]),
                           helper.make_node("Transpose", ["r1"], ["t1"],
                                            perm=[0, 1, 4, 2, 5, 3]),
                           helper.make_node("Reshape", ["t1", "s2"], ["b"])],
                          [const("s1", [1, C // 4, 2, 2, 6, 6], np.int64),
                           const("s2", [1, C // 4, 12, 12], np.int64)],
                          C // 4, 2),
        # Channels reordered (BGR <-> RGB style) by a Gather.
        "gather_channels": ([helper.make_node("Gather", ["a", "idx"], ["b"],
                                              axis=1)],
                            [const("idx", list(range(C - 1, -1, -1)),
                                   np.int64)], C, 2),
        "softmax_channels": ([helper.make_node("Softmax", ["a"], ["b"],
                                               axis=1)], [], C, 2),
        "argmax_channels": ([helper.make_node("ArgMax", ["a"], ["i"], axis=1,
                                              keepdims=1),
                             helper.make_node("Cast", ["i"], ["b"], to=1)],
                            [], 1, 2),
        "reduce_max_keepdims": ([helper.make_node("ReduceMax", ["a"], ["b"],
                                                  axes=[1], keepdims=1)],
                                [], 1, 2),
        # The graph's own transpose (W and H swapped) stays.
        "explicit_transpose": ([helper.make_node("Transpose", ["a"], ["t"],
                                                 perm=[0, 1, 3, 2]),
                                helper.make_node("Relu", ["t"], ["b"])],
                               [], C, 3),
    }


def build(name, nodes, inits, channels, rng):
    c1, w1 = conv("c1", "x", "a", C, C, rng)
    c2, w2 = conv("c2", "b", "y", channels, C, rng)
    graph = helper.make_graph(
        c1 + nodes + c2, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        w1 + inits + w2)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def transposes(mace, pb):
    info = subprocess.run([mace, "info", "--model", pb], capture_output=True,
                          text=True, check=True).stdout
    return sum(1 for line in info.splitlines()
               if len(line.split()) > 2 and line.split()[2] == "Transpose")


def audit(mace, name, spec, rng, work):
    nodes, inits, channels, allowed = spec
    model = build(name, nodes, inits, channels, rng)
    onnx_path = os.path.join(work, name + ".onnx")
    onnx.save(model, onnx_path)
    x = rng.standard_normal((1, C, 6, 6)).astype(np.float32)
    np.save(os.path.join(work, name + "_x.npy"), x)
    ref = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]
                               ).run(None, {"x": x})[0]
    conv_run = subprocess.run(
        [mace, "convert", "--platform", "onnx", "--model-file", onnx_path,
         "--output-dir", work, "--name", name], capture_output=True, text=True)
    if conv_run.returncode != 0:
        return "convert failed: " + conv_run.stderr.strip()[-200:]
    pb = os.path.join(work, name + ".pb")
    kept = transposes(mace, pb)
    out_dir = os.path.join(work, name + "_out")
    run = subprocess.run(
        [mace, "run", "--model", pb, "--data",
         os.path.join(work, name + ".data"), "--input",
         "x=" + os.path.join(work, name + "_x.npy"), "--output-dir", out_dir],
        capture_output=True, text=True)
    if run.returncode != 0:
        return "run failed: " + run.stderr.strip()[-200:]
    got = np.load(os.path.join(out_dir, "y.npy")).astype(np.float64)
    want = ref.astype(np.float64)
    if got.shape != want.shape:
        return "output shape %s, ONNX Runtime's %s" % (got.shape, want.shape)
    norms = np.linalg.norm(got) * np.linalg.norm(want)
    cosine = float(np.dot(got.ravel(), want.ravel()) / norms) if norms else 1.0
    problems = []
    if kept > allowed:
        problems.append("%d transposes kept, %d needed" % (kept, allowed))
    if cosine < 0.99999:
        problems.append("cosine %.6f against ONNX Runtime" % cosine)
    return "; ".join(problems) or None, kept, cosine


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mace", default="build/bin/mace")
    parser.add_argument("--cases", default="", help="comma-separated subset")
    args = parser.parse_args()
    rng = np.random.default_rng(20261122)
    all_cases = cases(rng)
    names = [n for n in args.cases.split(",") if n] or list(all_cases)
    unknown = [n for n in names if n not in all_cases]
    if unknown:
        print("unknown cases: %s (known: %s)" % (", ".join(unknown),
                                                  ", ".join(all_cases)))
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        print("%-22s %10s %10s  result" % ("case", "transposes", "cosine"))
        for name in names:
            result = audit(args.mace, name, all_cases[name], rng, work)
            if isinstance(result, str):  # could not convert or run
                failed += 1
                print("%-22s %10s %10s  FAIL: %s" % (name, "-", "-", result))
                continue
            problem, kept, cosine = result
            failed += problem is not None
            print("%-22s %10d %10.6f  %s" % (name, kept, cosine,
                                             "FAIL: " + problem if problem
                                             else "pass"))
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
