#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages tensorflow 2.21, numpy).
"""Builds the TensorFlow test models of the converter and their references.

Each model is built in code (Keras applications with weights=None and a
fixed seed; op-coverage graphs written with tf.function or tf.compat.v1),
frozen to a GraphDef (convert_variables_to_constants_v2; the TF1-style
graph with tf.compat.v1.graph_util), and run by TensorFlow itself on a
fixed random input. Into <cache>/<name>/ go:
  model.pb                the frozen GraphDef
  <input>.npy             one per Placeholder (name with '/' and ':' as '_')
  ref_<output>.npy        TensorFlow's output, one per output tensor
  meta.json               {"inputs": [{name, file, shape}], "outputs":
                          [{name, file}]}, and for a graph mace must refuse,
                          "expect_gaps": the op types --check must list
References come from running the frozen GraphDef (tf.compat.v1 Session
over tf.graph_util.import_graph_def), so they are the outputs of exactly
the file the converter reads. Models already in the cache are skipped.

  python3 scripts/make_tf_models.py [--cache-dir DIR] [--models a,b]
"""
import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# oneDNN's reordered float sums would make references vary from run to run.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402

SEED = 1234
# Imported by load_tensorflow() only when a model is missing: importing
# tensorflow takes seconds, and a warm cache needs none of it.
tf = None
convert_variables_to_constants_v2 = None


def load_tensorflow():
    global tf, convert_variables_to_constants_v2
    import tensorflow
    from tensorflow.python.framework import convert_to_constants
    tf = tensorflow
    convert_variables_to_constants_v2 = (
        convert_to_constants.convert_variables_to_constants_v2)


def default_cache_dir():
    return os.environ.get("MACE_TF_MODELS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "tf_models")


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def rng(offset=0):
    return np.random.default_rng(SEED + offset)


def const(shape, offset, scale=0.5):
    return tf.constant(
        rng(offset).uniform(-scale, scale, size=shape).astype(np.float32))


# ---- freezing ---------------------------------------------------------------

def freeze_function(fn, specs):
    """(GraphDef, input names, output tensor names) of a tf.function."""
    concrete = fn.get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    inputs = [t.name.split(":")[0] for t in frozen.inputs
              if t.dtype != tf.resource]
    outputs = [t.name[:-2] if t.name.endswith(":0") else t.name
               for t in frozen.outputs]
    return graph_def, inputs, outputs


def run_graph_def(graph_def, feeds, outputs):
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as sess:
        fetches = [graph.get_tensor_by_name(
            o if ":" in o else o + ":0") for o in outputs]
        feed = {graph.get_tensor_by_name(k + ":0"): v
                for k, v in feeds.items()}
        return sess.run(fetches, feed_dict=feed)


def save(folder, graph_def, feeds, outputs, expect_gaps=None):
    os.makedirs(folder, exist_ok=True)
    refs = run_graph_def(graph_def, feeds, outputs)
    meta = {"inputs": [], "outputs": []}
    if expect_gaps:
        meta["expect_gaps"] = expect_gaps
    for name, value in feeds.items():
        path = sanitize(name) + ".npy"
        np.save(os.path.join(folder, path), value)
        meta["inputs"].append({"name": name, "file": path,
                               "shape": list(value.shape)})
    for name, value in zip(outputs, refs):
        path = "ref_" + sanitize(name) + ".npy"
        np.save(os.path.join(folder, path), np.asarray(value))
        meta["outputs"].append({"name": name, "file": path})
    with open(os.path.join(folder, "model.pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    # meta.json last: its presence marks a complete model.
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def input_values(shape, offset=0):
    return rng(100 + offset).uniform(-1, 1, size=shape).astype(np.float32)


def function_model(fn, shapes):
    """A tf.function of float inputs → (graph_def, feeds, outputs)."""
    specs = [tf.TensorSpec(s, tf.float32, name="x%d" % i)
             for i, s in enumerate(shapes)]
    graph_def, inputs, outputs = freeze_function(tf.function(fn), specs)
    feeds = {name: input_values(s, i)
             for i, (name, s) in enumerate(zip(inputs, shapes))}
    return graph_def, feeds, outputs


# ---- Keras applications ----------------------------------------------------

def randomize_batch_norms(model):
    """Non-trivial BN statistics (weights=None leaves mean 0, var 1), so the
    folding of BN into convolutions is exercised."""
    r = rng(7)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            new = []
            for w in layer.weights:
                n = w.name.split("/")[-1].split(":")[0]
                shape = tuple(w.shape)
                if "gamma" in n:
                    v = r.uniform(0.5, 1.5, shape)
                elif "beta" in n:
                    v = r.normal(0, 0.1, shape)
                elif "mean" in n:
                    v = r.normal(0, 0.1, shape)
                else:  # moving variance
                    v = r.uniform(0.5, 1.5, shape)
                new.append(v.astype(np.float32))
            layer.set_weights(new)


def keras_model(builder, size):
    tf.keras.utils.set_random_seed(SEED)
    # Logits rather than softmax: a near-uniform softmax over 1000 classes
    # would hide errors from the cosine check.
    model = builder(input_shape=(size, size, 3), weights=None,
                    classifier_activation=None)
    randomize_batch_norms(model)
    shape = [1, size, size, 3]
    fn = tf.function(lambda x: model(x, training=False))
    graph_def, inputs, outputs = freeze_function(
        fn, [tf.TensorSpec(shape, tf.float32, name="input")])
    return graph_def, {inputs[0]: input_values(shape)}, outputs


def mobilenet_v1():
    return keras_model(tf.keras.applications.MobileNet, 128)


def mobilenet_v2():
    return keras_model(tf.keras.applications.MobileNetV2, 128)


def resnet50():
    return keras_model(tf.keras.applications.ResNet50, 128)


def inception_v3():
    return keras_model(tf.keras.applications.InceptionV3, 139)


# ---- op coverage -----------------------------------------------------------

def atrous_conv():
    w = const([3, 3, 3, 8], 1)
    dw = const([3, 3, 8, 1], 2)
    w2 = const([3, 3, 8, 4], 3)

    def fn(x):
        # Dilations > 1 on the CPU: SpaceToBatchND → conv → BatchToSpaceND.
        a = tf.nn.atrous_conv2d(x, w, rate=2, padding="SAME")
        b = tf.nn.depthwise_conv2d(a, dw, [1, 1, 1, 1], "SAME",
                                   dilations=[3, 3])
        c = tf.nn.atrous_conv2d(b, w2, rate=2, padding="VALID")
        d = tf.nn.conv2d(b, w2, strides=1, padding="SAME", dilations=[2, 2])
        return tf.nn.relu(c), d
    return function_model(fn, [[1, 17, 15, 3]])


def strided_slice():
    def fn(x):
        return (x[:, 1:5, ::2, :],
                x[..., 1],
                x[:, tf.newaxis, 2:-1, 0:3],
                x[:, ::-1, -2::-2],
                x[0, 3, :, ::3],
                x[:, 1:, ..., 2:],
                tf.slice(x, [0, 1, 2, 0], [1, -1, 3, 2]))
    return function_model(fn, [[1, 6, 7, 5]])


def pack_unpack_split():
    def fn(x):
        parts = tf.unstack(x, axis=1)
        stacked = tf.stack(parts[::-1], axis=2)
        a, b = tf.split(x, 2, axis=3)
        c, d, e = tf.split(x, [1, -1, 2], axis=2)
        return (stacked, tf.concat([b, a], axis=-1) * 2.0, c, d + 1.0, e,
                tf.stack([tf.reduce_sum(p) for p in parts]))
    return function_model(fn, [[1, 3, 6, 4]])


def resize():
    def fn(x):
        return (tf.image.resize(x, [11, 13], method="bilinear"),
                tf.image.resize(x, [10, 14], method="nearest"),
                tf.compat.v1.image.resize_bilinear(x, [9, 12],
                                                   align_corners=True),
                tf.compat.v1.image.resize_nearest_neighbor(
                    x, [12, 10], align_corners=True),
                tf.compat.v1.image.resize_bilinear(x, [3, 4]))
    return function_model(fn, [[1, 5, 6, 3]])


def pad_variants():
    def fn(x):
        return (tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]),
                tf.pad(x, [[0, 0], [2, 0], [0, 3], [1, 1]],
                       constant_values=1.5),
                tf.pad(x, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="REFLECT"),
                tf.pad(x, [[0, 0], [3, 1], [0, 2], [1, 0]],
                       mode="SYMMETRIC"))
    return function_model(fn, [[1, 4, 5, 3]])


def reductions():
    def fn(x):
        return (tf.reduce_mean(x, axis=[1, 2]),
                tf.reduce_sum(x, axis=-1, keepdims=True),
                tf.reduce_max(x, axis=1),
                tf.reduce_min(x, axis=[0, 3], keepdims=True),
                tf.reduce_prod(x * 0.5 + 1.0, axis=2),
                tf.cast(tf.argmax(x, axis=-1), tf.float32),
                tf.cast(tf.argmin(x, axis=1), tf.float32))
    return function_model(fn, [[1, 4, 5, 6]])


def batch_matmul():
    w = const([6, 7], 4)
    b = const([7], 5)

    def fn(x, y):
        return (tf.matmul(x, y),
                tf.matmul(x, tf.transpose(x, [0, 1, 3, 2]), adjoint_b=False),
                tf.matmul(y, x, adjoint_a=True, adjoint_b=True),
                tf.nn.bias_add(tf.matmul(tf.reshape(x, [-1, 6]), w), b),
                tf.matmul(tf.reshape(x, [-1, 6]), tf.transpose(w),
                          transpose_b=True))
    return function_model(fn, [[2, 3, 4, 6], [2, 3, 6, 4]])


def deconv():
    w1 = const([3, 3, 5, 4], 6)  # [kh, kw, out, in]
    w2 = const([2, 2, 3, 5], 7)

    def fn(x):
        a = tf.nn.conv2d_transpose(x, w1, [1, 14, 12, 5], strides=2,
                                   padding="SAME")
        b = tf.nn.conv2d_transpose(a, w2, [1, 28, 24, 3], strides=2,
                                   padding="VALID")
        c = tf.nn.conv2d_transpose(x, w1, [1, 15, 13, 5], strides=2,
                                   padding="VALID")
        return a, b, c
    return function_model(fn, [[1, 7, 6, 4]])


def depth_space():
    def fn(x):
        d2s = tf.nn.depth_to_space(x, 2)
        s2d = tf.nn.space_to_depth(d2s * 3.0, 2)
        return d2s, s2d, tf.nn.space_to_depth(x, 3)
    return function_model(fn, [[1, 6, 9, 8]])


def batch_norm_elementwise():
    scale, offset = const([6], 8, 1.0) + 1.5, const([6], 9)
    mean, var = const([6], 10), const([6], 11) + 1.0
    w = const([1, 1, 6, 6], 12)

    def fn(x, y):
        # tf.nn.batch_normalization is the unfused form (Rsqrt, Mul, Sub).
        bn = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
        fused, _, _ = tf.compat.v1.nn.fused_batch_norm(
            tf.nn.conv2d(x, w, 1, "SAME"), scale, offset, mean, var,
            epsilon=1e-3, is_training=False)
        e = tf.math.squared_difference(x, y) - tf.sqrt(tf.abs(y) + 0.5)
        f = tf.maximum(x, y) / (tf.minimum(x, y) * tf.minimum(x, y) + 1.0)
        g = tf.pow(tf.abs(x) + 0.5, y) + tf.square(-y)
        h = tf.cast(tf.equal(tf.round(x * 2.0), tf.round(y * 2.0)),
                    tf.float32)
        i = tf.nn.elu(x) + tf.nn.leaky_relu(y, 0.3) + tf.sigmoid(x) * \
            tf.tanh(y) + tf.nn.relu6(x * 8.0) + tf.math.rsqrt(tf.abs(x) + 1.0)
        return bn, tf.nn.relu(fused), e, f, g, h, i, tf.nn.softmax(x * y)
    return function_model(fn, [[1, 4, 5, 6], [1, 4, 5, 6]])


def gather_misc():
    table = const([10, 4], 13)

    def fn(x):
        idx = tf.cast(tf.clip_by_value(tf.abs(x[0, :, 0]) * 9.0, 0, 9),
                      tf.int32)
        g = tf.gather(table, idx)
        flat = tf.reshape(x, [tf.shape(x)[0], -1])
        filled = tf.fill(tf.shape(x)[1:3], 0.5)
        return (g, tf.reverse(x, axis=[1, 2]), flat,
                tf.expand_dims(tf.squeeze(x, axis=0), 1) + filled[0, 0],
                tf.transpose(x, [0, 3, 1, 2]),
                tf.gather(x, [2, 0], axis=2))
    return function_model(fn, [[1, 5, 3, 4]])


def raw_ops():
    """Ops the tf.* wrappers hide or fold away: Shape chains as Keras writes
    them, SpaceToBatchND / BatchToSpaceND alone, the V1 ops."""
    r = tf.raw_ops
    scale, offset = const([4], 14, 1.0) + 1.5, const([4], 15)
    mean, var = const([4], 16), const([4], 17) + 1.0
    m = const([4, 3], 18)

    def fn(x):
        shape = r.Shape(input=x)
        batch = r.StridedSlice(input=shape, begin=[0], end=[1], strides=[1],
                               shrink_axis_mask=1)
        flat = r.Reshape(tensor=x, shape=r.Pack(values=[batch, -1]))
        fill = r.Fill(dims=r.StridedSlice(input=shape, begin=[1], end=[3],
                                          strides=[1]), value=0.25)
        stb = r.SpaceToBatchND(input=x, block_shape=[2, 2],
                               paddings=[[1, 1], [0, 1]])
        bts = r.BatchToSpaceND(input=stb * 2.0, block_shape=[2, 2],
                               crops=[[1, 1], [0, 1]])
        bn = r.FusedBatchNorm(x=x, scale=scale, offset=offset, mean=mean,
                              variance=var, epsilon=1e-3,
                              is_training=False)[0]
        a, b = r.IdentityN(input=[tf.stop_gradient(x), bn])
        mm = r.BatchMatMul(x=a, y=tf.broadcast_to(m, [1, 6, 4, 3]))
        mm3 = r.BatchMatMulV3(x=b, y=tf.broadcast_to(m, [1, 6, 4, 3]),
                              Tout=tf.float32, adj_x=False)
        cat = r.Concat(concat_dim=3, values=[a, b])
        resized = r.ResizeBilinear(images=x, size=[9, 7],
                                   half_pixel_centers=True)
        return flat, fill + x[0, :, :, 0], bts, mm + mm3, cat, resized
    return function_model(fn, [[1, 6, 5, 4]])


def tf1_graph():
    """A TF 1.x-style graph: placeholders, variables and a Session, frozen
    with tf.compat.v1.graph_util.convert_variables_to_constants."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    r = rng(20)
    with graph.as_default():
        x = v1.placeholder(tf.float32, [1, 16, 16, 3], name="image")
        w = v1.get_variable("w", initializer=r.uniform(
            -0.5, 0.5, [3, 3, 3, 8]).astype(np.float32))
        y = tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
        y, _, _ = v1.nn.fused_batch_norm(
            y, tf.ones([8]) * 1.2, tf.zeros([8]) + 0.1,
            mean=tf.constant(r.normal(0, 0.1, 8).astype(np.float32)),
            variance=tf.constant(r.uniform(0.5, 1.5, 8).astype(np.float32)),
            is_training=False)
        slope = v1.placeholder_with_default(tf.constant(0.0), [],
                                            name="slope")
        y = tf.nn.relu(y) + slope * y
        y = tf.nn.max_pool2d(y, 3, 2, "SAME")
        y = tf.nn.avg_pool2d(y, 2, 1, "VALID")
        y = tf.reshape(y, [tf.shape(y)[0], -1])
        fc = v1.get_variable("fc", initializer=r.uniform(
            -0.3, 0.3, [72, 10]).astype(np.float32))
        logits = tf.matmul(y, fc, name="logits")
        tf.nn.softmax(logits, name="prob")
        # The graph's outputs are the nodes nothing reads (mace's default).
        tf.identity(logits, name="logits_out")
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            graph_def = v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["logits_out", "prob"])
    feeds = {"image": input_values([1, 16, 16, 3])}
    return graph_def, feeds, ["logits_out", "prob"]


def unsupported_ops():
    """A graph with several ops mace does not have: `mace convert --check`
    must list every one (meta.json's expect_gaps), not just the first."""
    def fn(x):
        return (tf.math.cumsum(x, axis=1), tf.tile(x, [1, 2]),
                tf.where(x > 0.0, x, -x), tf.math.top_k(x, 2).values,
                tf.nn.relu(x))
    graph_def, feeds, outputs = function_model(fn, [[1, 4]])
    return graph_def, feeds, outputs, ["Cumsum", "Tile", "SelectV2",
                                       "TopKV2"]


MODELS = {
    "mobilenet_v1": mobilenet_v1,
    "mobilenet_v2": mobilenet_v2,
    "resnet50": resnet50,
    "inception_v3": inception_v3,
    "atrous_conv": atrous_conv,
    "strided_slice": strided_slice,
    "pack_unpack_split": pack_unpack_split,
    "resize": resize,
    "pad_variants": pad_variants,
    "reductions": reductions,
    "batch_matmul": batch_matmul,
    "deconv": deconv,
    "depth_space": depth_space,
    "batch_norm_elementwise": batch_norm_elementwise,
    "gather_misc": gather_misc,
    "raw_ops": raw_ops,
    "tf1_graph": tf1_graph,
    "unsupported_ops": unsupported_ops,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", default=default_cache_dir())
    parser.add_argument("--models", default="",
                        help="comma-separated subset (default: all)")
    parser.add_argument("--list", action="store_true",
                        help="print the model names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    names = [n for n in args.models.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error("unknown models: %s" % ", ".join(unknown))
    missing = [n for n in names if not os.path.isfile(
        os.path.join(args.cache_dir, n, "meta.json"))]
    if missing:
        load_tensorflow()
    for name in missing:
        folder = os.path.join(args.cache_dir, name)
        print("making %s" % name, flush=True)
        save(folder, *MODELS[name]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
