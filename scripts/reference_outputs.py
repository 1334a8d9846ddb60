#!/usr/bin/env python3
# Runs a source model with its own framework on given inputs and writes the
# outputs as .npy: the reference `mace run --config --validate` compares
# against. Interpreter: pip's `python3` (onnxruntime, tensorflow); the caffe
# branch re-runs itself under Debian's /usr/bin/python3, where OpenCV is.
#
#   reference_outputs.py --platform onnx|tensorflow|caffe --model FILE
#       [--weights FILE] --input NAME=FILE[:NHWC] ... --output NAME=FILE[:NHWC] ...
#
# ":NHWC" marks a 4-D tensor mace holds in NHWC while the source framework
# uses NCHW: inputs are transposed to NCHW before the run, outputs back to
# NHWC after it.
import argparse
import os
import sys

import numpy as np


def parse_tensor(text):
    name, _, rest = text.partition("=")
    path, nhwc = rest, False
    if rest.endswith(":NHWC"):
        path, nhwc = rest[: -len(":NHWC")], True
    if not name or not path:
        sys.exit(f"reference_outputs.py: bad tensor argument '{text}'")
    return name, path, nhwc


def load_inputs(specs):
    feeds = {}
    for name, path, nhwc in specs:
        value = np.load(path)
        feeds[name] = value.transpose(0, 3, 1, 2) if nhwc else value
    return feeds


def save_outputs(specs, values):
    for (name, path, nhwc), value in zip(specs, values):
        value = np.asarray(value)
        if nhwc and value.ndim == 4:
            value = value.transpose(0, 2, 3, 1)
        np.save(path, np.ascontiguousarray(value))


def onnx_with_outputs(path, output_names):
    """The model's bytes with every requested value made a graph output, so
    intermediate tensors (check_tensors, --layers) can be read."""
    import onnx

    model = onnx.load(path)
    declared = {o.name for o in model.graph.output}
    for name in output_names:
        if name not in declared:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
    return model.SerializeToString()


def run_onnx(args, feeds, output_names):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(onnx_with_outputs(args.model, output_names),
                                   options, providers=["CPUExecutionProvider"])
    types = {i.name: i.type for i in session.get_inputs()}
    for name in feeds:
        if types.get(name) == "tensor(int64)":
            feeds[name] = feeds[name].astype(np.int64)
    return session.run(output_names, feeds)


def run_tensorflow(args, feeds, output_names):
    import tensorflow as tf

    graph_def = tf.compat.v1.GraphDef()
    with open(args.model, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    def tensor(name):
        return graph.get_tensor_by_name(name if ":" in name else name + ":0")
    with tf.compat.v1.Session(graph=graph) as session:
        return session.run([tensor(n) for n in output_names],
                           {tensor(n): v for n, v in feeds.items()})


def run_caffe(args, feeds, output_names):
    import cv2

    net = cv2.dnn.readNetFromCaffe(args.model, args.weights)
    for name, value in feeds.items():
        net.setInput(value.astype(np.float32), name)
    return net.forward(output_names)


def list_tensors(args):
    """Every value the source model computes, in its node order, as
    value<TAB>node name<TAB>op type lines."""
    if args.platform == "onnx":
        import onnx

        model = onnx.load(args.model, load_external_data=False)
        names = ["%s\t%s\t%s" % (o, node.name or o, node.op_type)
                 for node in model.graph.node for o in node.output if o]
    elif args.platform == "tensorflow":
        import tensorflow as tf

        graph_def = tf.compat.v1.GraphDef()
        with open(args.model, "rb") as f:
            graph_def.ParseFromString(f.read())
        names = ["%s\t%s\t%s" % (n.name, n.name, n.op) for n in graph_def.node
                 if n.op not in ("Const", "Placeholder", "NoOp")]
    else:
        names = []
    print("\n".join(names))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--platform", required=True,
                        choices=["onnx", "tensorflow", "caffe"])
    parser.add_argument("--model", required=True)
    parser.add_argument("--weights")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--output", action="append", default=[])
    parser.add_argument("--list-tensors", action="store_true",
                        help="print the names of the values the model "
                        "computes, one per line, and exit")
    args = parser.parse_args()
    if args.list_tensors:
        list_tensors(args)
        return
    if args.platform == "caffe" and sys.executable != "/usr/bin/python3" \
            and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    inputs = [parse_tensor(t) for t in args.input]
    outputs = [parse_tensor(t) for t in args.output]
    feeds = load_inputs(inputs)
    names = [name for name, _, _ in outputs]
    runner = {"onnx": run_onnx, "tensorflow": run_tensorflow,
              "caffe": run_caffe}[args.platform]
    save_outputs(outputs, runner(args, feeds, names))


if __name__ == "__main__":
    main()
