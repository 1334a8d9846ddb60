#!/usr/bin/env python3
# Interpreter: python3 on PATH (pip packages protobuf and numpy); protoc on
# PATH. Caffe itself is not installable here, so the nets are written
# directly as protobuf messages of mace/converter/caffe/caffe.proto.
"""Writes the Caffe test nets in code: a .prototxt (text format) and a
.caffemodel (binary NetParameter holding only layer names, types and blobs)
per net, fixed-seed random weights, and fixed-seed inputs. Nothing is
downloaded.

Nets: squeezenet (SqueezeNet 1.1, Caffe's ceil pooling), mobilenet
(MobileNet v1 at width 0.25, depthwise as group == channels, BatchNorm with
a scale factor + Scale), lenet_v1 (the legacy V1 `layers` syntax with
net-level inputs), coverage (one of each remaining layer: Deconvolution,
PReLU, ELU, TanH, Sigmoid, Eltwise SUM with coeffs / PROD / MAX, Slice,
Concat, Crop, Permute, Flatten, Reshape, LRN, Scale with a second bottom,
Normalize, Dropout, InnerProduct, AbsVal, Power, Softmax; ShuffleChannel
and Interp are left to the C++ tests: OpenCV's Caffe schema lacks their
parameters), ssd (an SSD-style detection head: PriorBox, Permute, Flatten,
Concat, Softmax over classes, DetectionOutput), faster_rcnn (an RPN head
with Proposal and a PSROIAlign head).

The schema is compiled at run time (protoc --descriptor_set_out into a
temporary directory), so no generated code is committed.

Layout (${MACE_CAFFE_DIR:-$HOME/.cache/mace/caffe_models}):
  <dir>/<net>/net.prototxt, net.caffemodel
  <dir>/<net>/input_<i>.npy      fixed-seed inputs (NCHW)
  <dir>/<net>/meta.json          inputs (name, file, shape), outputs, notes
Existing nets are skipped (delete a folder to rebuild it).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf import message_factory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO = "mace/converter/caffe/caffe.proto"


def default_dir():
    return os.environ.get("MACE_CAFFE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "caffe_models")


def load_schema():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "caffe.desc")
        subprocess.run(["protoc", "-I", ROOT, "--descriptor_set_out=" + out,
                        PROTO], check=True)
        files = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in files.file:
        pool.Add(fd)

    def cls(name):
        return message_factory.GetMessageClass(
            pool.FindMessageTypeByName("mace.caffe." + name))
    return cls


MSG = load_schema()


class Net:
    """Builds a V2 NetParameter and the blobs of each layer."""

    def __init__(self, name, seed, v1=False):
        self.proto = MSG("NetParameter")()
        self.proto.name = name
        self.rng = np.random.RandomState(seed)
        self.blobs = {}  # layer name -> [np arrays]
        self.v1 = v1
        self.inputs = []

    def layer(self, type_, name, bottoms, tops, blobs=(), **params):
        layers = self.proto.layers if self.v1 else self.proto.layer
        layer = layers.add()
        layer.name = name
        if self.v1:
            layer.type = MSG("V1LayerParameter").LayerType.Value(type_)
        else:
            layer.type = type_
        layer.bottom.extend(bottoms)
        layer.top.extend(tops)
        for key, value in params.items():
            field = getattr(layer, key)
            fill(field, value)
        if blobs:
            self.blobs[name] = [np.asarray(b, np.float32) for b in blobs]
        return tops[0]

    def input(self, name, shape):
        layer = self.proto.layer.add()
        layer.name = name
        layer.type = "Input"
        layer.top.append(name)
        layer.input_param.shape.add().dim.extend(shape)
        self.inputs.append((name, shape))
        return name

    def he(self, shape, fan_in):
        return self.rng.randn(*shape) * np.sqrt(2.0 / fan_in)

    def conv(self, name, bottom, cin, cout, k, stride=1, pad=0, group=1,
             bias=True, top=None, dilation=1):
        w = self.he((cout, cin // group, k, k), cin // group * k * k)
        blobs = [w] + ([self.rng.randn(cout) * 0.1] if bias else [])
        p = {"num_output": cout, "kernel_size": [k], "stride": [stride],
             "pad": [pad], "bias_term": bias}
        if group != 1:
            p["group"] = group
        if dilation != 1:
            p["dilation"] = [dilation]
        return self.layer("Convolution", name, [bottom], [top or name], blobs,
                          convolution_param=p)

    def relu(self, name, blob, slope=0.0):
        p = {"relu_param": {"negative_slope": slope}} if slope else {}
        return self.layer("ReLU", name, [blob], [blob], **p)

    def bn_scale(self, name, blob, channels, factor=0.5):
        mean = self.rng.randn(channels) * 0.2
        var = self.rng.uniform(0.5, 1.5, channels)
        # Caffe keeps running sums; the third blob divides them.
        self.layer("BatchNorm", name + "/bn", [blob], [blob],
                   [mean * factor, var * factor, [factor]],
                   batch_norm_param={"eps": 1e-5})
        gamma = self.rng.uniform(0.5, 1.5, channels)
        beta = self.rng.randn(channels) * 0.2
        return self.layer("Scale", name + "/scale", [blob], [blob],
                          [gamma, beta], scale_param={"bias_term": True})

    def pool(self, name, bottom, method, k=None, stride=1, pad=0,
             global_pooling=False):
        p = {"pool": method}
        if global_pooling:
            p["global_pooling"] = True
        else:
            p.update({"kernel_size": k, "stride": stride, "pad": pad})
        return self.layer("Pooling", name, [bottom], [name],
                          pooling_param=p)

    def write(self, folder, notes):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "net.prototxt"), "w") as f:
            f.write(text_format.MessageToString(self.proto))
        weights = MSG("NetParameter")()
        weights.name = self.proto.name
        for layer in (self.proto.layers if self.v1 else self.proto.layer):
            if layer.name not in self.blobs:
                continue
            out = weights.layers.add() if self.v1 else weights.layer.add()
            out.name = layer.name
            out.type = layer.type
            for array in self.blobs[layer.name]:
                blob = out.blobs.add()
                blob.shape.dim.extend(array.shape)
                blob.data.extend(array.reshape(-1).tolist())
        if notes.get("trunk_exclude"):
            # The part OpenCV can run (it lacks these layers); the NumPy
            # references take its outputs from there.
            trunk = MSG("NetParameter")()
            trunk.CopyFrom(self.proto)
            del trunk.layer[:]
            for layer in self.proto.layer:
                if layer.name not in notes["trunk_exclude"]:
                    trunk.layer.add().CopyFrom(layer)
            with open(os.path.join(folder, "trunk.prototxt"), "w") as f:
                f.write(text_format.MessageToString(trunk))
        with open(os.path.join(folder, "net.caffemodel"), "wb") as f:
            f.write(weights.SerializeToString())
        rng = np.random.RandomState(1234)
        meta = {"inputs": [], "notes": notes}
        for i, (name, shape) in enumerate(self.inputs):
            data = rng.uniform(-1, 1, shape).astype(np.float32)
            if name == "im_info":
                data = np.array(notes["im_info"], np.float32).reshape(shape)
            path = "input_%d.npy" % i
            np.save(os.path.join(folder, path), data)
            meta["inputs"].append({"name": name, "file": path,
                                   "shape": list(shape)})
        with open(os.path.join(folder, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)


def fill(field, value):
    """Sets a message field from a python value (dicts recurse)."""
    if isinstance(value, dict):
        for key, sub in value.items():
            target = getattr(field, key)
            if isinstance(sub, dict):
                fill(target, sub)
            elif isinstance(sub, (list, tuple)):
                if sub and isinstance(sub[0], dict):
                    for item in sub:
                        fill(target.add(), item)
                else:
                    target.extend(sub)
            else:
                setattr(field, key, sub)
    else:
        raise TypeError("layer parameters must be dicts")


def squeezenet():
    net = Net("squeezenet1_1", seed=1)
    x = net.input("data", [1, 3, 111, 111])
    x = net.conv("conv1", x, 3, 64, 3, stride=2)
    net.relu("relu_conv1", x)
    x = net.pool("pool1", x, "MAX", 3, 2)
    cin = 64

    def fire(idx, x, cin, squeeze, expand):
        s = net.conv("fire%d/squeeze1x1" % idx, x, cin, squeeze, 1)
        net.relu("fire%d/relu_squeeze1x1" % idx, s)
        a = net.conv("fire%d/expand1x1" % idx, s, squeeze, expand, 1)
        net.relu("fire%d/relu_expand1x1" % idx, a)
        b = net.conv("fire%d/expand3x3" % idx, s, squeeze, expand, 3, pad=1)
        net.relu("fire%d/relu_expand3x3" % idx, b)
        return net.layer("Concat", "fire%d/concat" % idx, [a, b],
                         ["fire%d/concat" % idx])

    x = fire(2, x, 64, 16, 64)
    x = fire(3, x, 128, 16, 64)
    x = net.pool("pool3", x, "MAX", 3, 2)
    x = fire(4, x, 128, 32, 128)
    x = fire(5, x, 256, 32, 128)
    x = net.pool("pool5", x, "MAX", 3, 2)
    x = fire(6, x, 256, 48, 192)
    x = fire(7, x, 384, 48, 192)
    x = fire(8, x, 384, 64, 256)
    x = fire(9, x, 512, 64, 256)
    net.layer("Dropout", "drop9", [x], [x],
              dropout_param={"dropout_ratio": 0.5})
    x = net.conv("conv10", x, 512, 100, 1)
    net.relu("relu_conv10", x)
    x = net.pool("pool10", x, "AVE", global_pooling=True)
    net.layer("Softmax", "prob", [x], ["prob"])
    return net, {"opencv": True}


def mobilenet():
    net = Net("mobilenet_v1_025", seed=2)
    x = net.input("data", [1, 3, 96, 96])
    cfg = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1),
           (64, 128, 2)] + [(128, 128, 1)] * 5 + [(128, 256, 2),
                                                  (256, 256, 1)]
    x = net.conv("conv1", x, 3, 8, 3, stride=2, pad=1, bias=False)
    net.bn_scale("conv1", x, 8)
    net.relu("conv1/relu", x)
    for i, (cin, cout, stride) in enumerate(cfg):
        name = "conv%d" % (i + 2)
        dw = net.conv(name + "/dw", x, cin, cin, 3, stride=stride, pad=1,
                      group=cin, bias=False)
        net.bn_scale(name + "/dw", dw, cin)
        net.relu(name + "/dw/relu", dw)
        x = net.conv(name + "/sep", dw, cin, cout, 1, bias=False)
        net.bn_scale(name + "/sep", x, cout)
        net.relu(name + "/sep/relu", x)
    x = net.pool("pool6", x, "AVE", global_pooling=True)
    x = net.conv("fc7", x, 256, 100, 1)
    net.layer("Softmax", "prob", [x], ["prob"])
    return net, {"opencv": True}


def lenet_v1():
    net = Net("lenet_v1", seed=3, v1=True)
    net.proto.input.append("data")
    net.proto.input_dim.extend([1, 1, 28, 28])
    net.inputs.append(("data", [1, 1, 28, 28]))

    def conv(name, bottom, cin, cout, k):
        w = net.he((cout, cin, k, k), cin * k * k)
        return net.layer("CONVOLUTION", name, [bottom], [name],
                         [w, net.rng.randn(cout) * 0.1],
                         convolution_param={"num_output": cout,
                                            "kernel_size": [k]})
    x = conv("conv1", "data", 1, 20, 5)
    x = net.layer("POOLING", "pool1", [x], ["pool1"],
                  pooling_param={"pool": "MAX", "kernel_size": 2,
                                 "stride": 2})
    x = conv("conv2", x, 20, 50, 5)
    x = net.layer("POOLING", "pool2", [x], ["pool2"],
                  pooling_param={"pool": "AVE", "kernel_size": 3,
                                 "stride": 2, "pad": 1})
    x = net.layer("LRN", "norm2", [x], ["norm2"],
                  lrn_param={"local_size": 5, "alpha": 0.1, "beta": 0.75})
    k = 50 * 5 * 5  # pool2 rounds up: ceil((8 + 2 - 3) / 2) + 1 = 5
    x = net.layer("INNER_PRODUCT", "ip1", [x], ["ip1"],
                  [net.he((64, k), k), net.rng.randn(64) * 0.1],
                  inner_product_param={"num_output": 64})
    net.layer("RELU", "relu1", [x], [x])
    x = net.layer("INNER_PRODUCT", "ip2", [x], ["ip2"],
                  [net.he((10, 64), 64) * 2, net.rng.randn(10) * 0.1],
                  inner_product_param={"num_output": 10})
    net.layer("SOFTMAX", "prob", [x], ["prob"])
    return net, {"opencv": True}


def coverage():
    net = Net("coverage", seed=4)
    x = net.input("data", [1, 8, 13, 14])
    a = net.conv("conv_a", x, 8, 12, 3, pad=1)
    net.layer("PReLU", "prelu_a", [a], [a],
              [net.rng.uniform(0.05, 0.3, 12)])
    b = net.conv("conv_b", x, 8, 12, 3, pad=2, dilation=2)
    net.layer("ELU", "elu_b", [b], [b], elu_param={"alpha": 0.7})
    s = net.layer("Eltwise", "sum_ab", [a, b], ["sum_ab"],
                  eltwise_param={"operation": "SUM", "coeff": [0.5, -1.5]})
    t = net.layer("TanH", "tanh_a", [a], ["tanh_a"])
    g = net.layer("Sigmoid", "sig_b", [b], ["sig_b"])
    p = net.layer("Eltwise", "prod", [s, t, g], ["prod"],
                  eltwise_param={"operation": "PROD"})
    m = net.layer("Eltwise", "max", [p, s], ["max"],
                  eltwise_param={"operation": "MAX"})
    net.layer("Slice", "slice", [m], ["slice1", "slice2"],
              slice_param={"axis": 1, "slice_point": [5]})
    s1, s2 = "slice1", "slice2"
    c = net.layer("Concat", "concat", [s2, s1], ["concat"])
    d = net.layer("Deconvolution", "deconv", [c], ["deconv"],
                  [net.he((12, 3, 4, 4), 12 * 4), net.rng.randn(6) * 0.1],
                  convolution_param={"num_output": 6, "kernel_size": [4],
                                     "stride": [2], "pad": [1], "group": 2})
    # k stays at its default 1: OpenCV ignores Caffe's LRN `k` (it reads a
    # `bias` parameter instead); the C++ tests cover k != 1.
    n = net.layer("LRN", "lrn", [d], ["lrn"],
                  lrn_param={"local_size": 3, "alpha": 0.5, "beta": 0.75})
    cr = net.layer("Crop", "crop", [n, x], ["crop"],
                   crop_param={"axis": 2, "offset": [1, 2]})
    cs = net.conv("conv_scale", cr, 6, 8, 1)
    net.layer("Sigmoid", "gate", [cs], [cs])
    sc = net.layer("Scale", "scale2", [x, "conv_scale"], ["scale2"],
                   scale_param={"axis": 0})
    nrm = net.layer("Normalize", "norm", [sc], ["norm"],
                    [net.rng.uniform(5, 15, 8)],
                    norm_param={"across_spatial": False,
                                "channel_shared": False, "eps": 1e-6})
    pool = net.pool("pool_ceil", nrm, "AVE", 3, 2, pad=1)
    pm = net.layer("Permute", "permute", [pool], ["permute"],
                   permute_param={"order": [0, 2, 3, 1]})
    fl = net.layer("Flatten", "flatten", [pm], ["flatten"])
    r = net.layer("Reshape", "reshape", [fl], ["reshape"],
                  reshape_param={"shape": {"dim": [0, -1, 8]}})
    r = net.layer("Dropout", "drop", [r], [r])
    ip = net.layer("InnerProduct", "ip", [r], ["ip"],
                   [net.he((10, 8), 8), net.rng.randn(10)],
                   inner_product_param={"num_output": 10, "axis": 2})
    ab = net.layer("AbsVal", "abs", [ip], ["abs"])
    pw = net.layer("Power", "power", [ab], ["power"],
                   power_param={"power": 1.5, "scale": 0.5, "shift": 0.2})
    net.layer("Softmax", "prob", [pw], ["prob"], softmax_param={"axis": 2})
    return net, {"opencv": True}


def faster_rcnn():
    net = Net("faster_rcnn_head", seed=5)
    x = net.input("data", [1, 3, 64, 80])
    net.input("im_info", [1, 3])
    x = net.conv("conv1", x, 3, 16, 3, stride=4, pad=1)
    net.relu("relu1", x)
    x = net.conv("conv2", x, 16, 32, 3, stride=4, pad=1)
    net.relu("relu2", x)
    anchors = 9
    cls = net.conv("rpn_cls_score", x, 32, 2 * anchors, 1)
    bbox = net.conv("rpn_bbox_pred", x, 32, 4 * anchors, 1)
    r = net.layer("Reshape", "rpn_cls_score_reshape", [cls],
                  ["rpn_cls_score_reshape"],
                  reshape_param={"shape": {"dim": [0, 2, -1, 0]}})
    prob = net.layer("Softmax", "rpn_cls_prob", [r], ["rpn_cls_prob"])
    prob = net.layer("Reshape", "rpn_cls_prob_reshape", [prob],
                     ["rpn_cls_prob_reshape"],
                     reshape_param={"shape": {"dim": [0, 2 * anchors, -1, 0]}})
    rois = net.layer("Proposal", "proposal", [prob, bbox, "im_info"],
                     ["rois"],
                     proposal_param={"feat_stride": 16, "base_size": 16,
                                     "min_size": 4, "ratio": [0.5, 1, 2],
                                     "scale": [1, 2, 4],
                                     "pre_nms_topn": 60,
                                     "post_nms_topn": 12,
                                     "nms_thresh": 0.7})
    # A Split keeps the rois an output of the net (Caffe's outputs are the
    # blobs no layer consumes).
    net.layer("Split", "rois_split", [rois], ["rois_to_psroi", "rois_out"])
    group, dim = 3, 4
    ps = net.conv("psroi_features", x, 32, dim * group * group, 1)
    net.layer("PSROIAlign", "psroi", [ps, "rois_to_psroi"], ["psroi"],
              psroi_align_param={"spatial_scale": 1.0 / 16,
                                 "output_dim": dim, "group_size": group})
    notes = {"opencv": "trunk", "im_info": [64, 80, 1.0],
             "trunk_exclude": ["proposal", "rois_split", "psroi"],
             "trunk_outputs": ["rpn_cls_prob_reshape", "rpn_bbox_pred",
                               "psroi_features"],
             "proposal": {"feat_stride": 16, "base_size": 16, "min_size": 4,
                          "ratios": [0.5, 1, 2], "scales": [1, 2, 4],
                          "pre": 60, "post": 12, "nms": 0.7},
             "psroi": {"spatial_scale": 1.0 / 16, "output_dim": dim,
                       "group_size": group}}
    return net, notes


def ssd():
    net = Net("ssd_head", seed=6)
    x = net.input("data", [1, 3, 96, 96])
    x = net.conv("conv1", x, 3, 16, 3, stride=2, pad=1)
    net.relu("relu1", x)
    f1 = net.conv("conv2", x, 16, 16, 3, stride=2, pad=1)
    net.relu("relu2", f1)
    f2 = net.conv("conv3", f1, 16, 32, 3, stride=2, pad=1)
    net.relu("relu3", f2)
    classes = 4
    heads = [(f1, 16, {"min_size": [20.0], "max_size": [40.0],
                       "aspect_ratio": [2.0], "flip": True, "clip": False,
                       "variance": [0.1, 0.1, 0.2, 0.2]}, 4),
             (f2, 32, {"min_size": [40.0], "max_size": [70.0],
                       "aspect_ratio": [2.0, 3.0], "flip": True,
                       "clip": True, "variance": [0.1, 0.1, 0.2, 0.2],
                       "step": 8.0, "offset": 0.5}, 6)]
    locs, confs, priors = [], [], []
    for i, (f, channels, prior, per_cell) in enumerate(heads):
        name = "head%d" % i
        loc = net.conv(name + "_loc", f, channels, per_cell * 4, 3, pad=1)
        conf = net.conv(name + "_conf", f, channels, per_cell * classes, 3,
                        pad=1)
        for blob, out in ((loc, locs), (conf, confs)):
            perm = net.layer("Permute", blob + "_perm", [blob],
                             [blob + "_perm"],
                             permute_param={"order": [0, 2, 3, 1]})
            out.append(net.layer("Flatten", blob + "_flat", [perm],
                                 [blob + "_flat"]))
        priors.append(net.layer("PriorBox", name + "_priorbox", [f, "data"],
                                [name + "_priorbox"],
                                prior_box_param=prior))
    loc = net.layer("Concat", "mbox_loc", locs, ["mbox_loc"])
    conf = net.layer("Concat", "mbox_conf", confs, ["mbox_conf"])
    prior = net.layer("Concat", "mbox_priorbox", priors, ["mbox_priorbox"],
                      concat_param={"axis": 2})
    conf = net.layer("Reshape", "mbox_conf_reshape", [conf],
                     ["mbox_conf_reshape"],
                     reshape_param={"shape": {"dim": [0, -1, classes]}})
    conf = net.layer("Softmax", "mbox_conf_softmax", [conf],
                     ["mbox_conf_softmax"], softmax_param={"axis": 2})
    conf = net.layer("Flatten", "mbox_conf_flatten", [conf],
                     ["mbox_conf_flatten"])
    net.layer("DetectionOutput", "detection_out", [loc, conf, prior],
              ["detection_out"],
              detection_output_param={
                  "num_classes": classes, "share_location": True,
                  "background_label_id": 0,
                  "nms_param": {"nms_threshold": 0.45, "top_k": 40},
                  "code_type": "CENTER_SIZE", "keep_top_k": 20,
                  "confidence_threshold": 0.3})
    # OpenCV returns only the detections; MACE's op has a fixed row count
    # (keep_top_k per image) with -1 rows after the detections.
    return net, {"opencv": True, "pad_rows": {"detection_out": 20}}


NETS = {"squeezenet": squeezenet, "ssd": ssd, "mobilenet": mobilenet,
        "lenet_v1": lenet_v1, "coverage": coverage,
        "faster_rcnn": faster_rcnn}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.
                                     RawTextHelpFormatter)
    parser.add_argument("--dir", default=default_dir())
    parser.add_argument("--models", default="",
                        help="comma-separated subset of " + ",".join(NETS))
    args = parser.parse_args()
    names = [m for m in args.models.split(",") if m] or list(NETS)
    for name in names:
        if name not in NETS:
            parser.error("unknown net %s" % name)
        folder = os.path.join(args.dir, name)
        if os.path.isfile(os.path.join(folder, "meta.json")):
            continue
        net, notes = NETS[name]()
        net.write(folder, notes)
        print("wrote", folder)


if __name__ == "__main__":
    sys.exit(main())
