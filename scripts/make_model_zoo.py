#!/usr/bin/python3
# Interpreter: /usr/bin/python3, Debian's packages python3-torch (1.13) and
# python3-torchvision (0.14) (apt-get install python3-torchvision); numpy.
# The pip python3 on PATH (onnx, onnxruntime) is not needed here: torch
# writes the ONNX files itself.
"""Builds the model zoo in code: architectures written here or taken from
torchvision, fixed-seed random weights, exported to ONNX. Nothing is
downloaded.

Random weights easily make a test meaningless (activations vanish through
deep nets, a softmax comes out uniform), so every model is conditioned
before export:
  * BatchNorm: random affine parameters, then running statistics
    re-estimated by train-mode forward passes over random batches
    (momentum=None: a plain average), then eval mode;
  * nets without normalisation (SqueezeNet): each convolution rescaled in
    turn so its output has unit standard deviation (LSUV-style);
  * the transformer's query/key projections scaled so attention logits are
    spread (softmax far from uniform);
  * the final classifier / head scaled so outputs have a standard deviation
    of about 3 across classes.
The conditioned model's own output on the fixed input is checked for spread
before anything is written.

Layout of the cache (${MACE_ZOO_DIR:-$HOME/.cache/mace/zoo}):
  <cache>/<model>/model.onnx            the exported model
  <cache>/<model>/input_<i>.npy         fixed-seed input i (graph input order)
  <cache>/<model>/torch_output_<name>.npy   torch's output (export check)
  <cache>/<model>/meta.json             names, shapes, opset, kind, stats
  <cache>/<model>/output_<name>.npy     ONNX Runtime reference, written by
                                        scripts/zoo_reference.py
A model is regenerated only when model.onnx, meta.json or an input file is
missing; it is built in a temporary folder and moved into place, so an
interrupted run never leaves a half-written model.
"""
import argparse
import json
import os
import shutil
import sys
import time
import types
import warnings
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

LOGIT_STD = 3.0        # target spread of classifier outputs
ATTN_LOGIT_STD = 3.0   # target spread of attention logits
CALIB_BATCHES = 4


def default_cache_dir():
    return os.environ.get("MACE_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "zoo")


# ---------------------------------------------------------------------------
# Architectures written here.

class MobileNetV1(nn.Module):
    """MobileNetV1 1.0 224: a strided 3x3 stem, 13 depthwise-separable
    blocks (3x3 depthwise + 1x1 pointwise, each with BN + ReLU6), global
    average pooling, a 1000-way fully connected layer."""

    CFG = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
           (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
           (1024, 1)]

    def __init__(self, num_classes=1000):
        super().__init__()

        def conv_bn(cin, cout, k, s, groups=1):
            return [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups,
                              bias=False),
                    nn.BatchNorm2d(cout), nn.ReLU6(inplace=True)]

        layers = conv_bn(3, 32, 3, 2)
        cin = 32
        for cout, stride in self.CFG:
            layers += conv_bn(cin, cin, 3, stride, groups=cin)
            layers += conv_bn(cin, cout, 1, 1)
            cin = cout
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(1024, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


class TwoStream(nn.Module):
    """A two-input net: a small conv trunk on a 64x64 image and an MLP on a
    16-value side vector, joined by concatenation before the classifier.
    Without `features` (the conditioning passes feed one tensor), the side
    vector is drawn at random."""

    def __init__(self, side=16, num_classes=10):
        super().__init__()
        self.side = side
        self.trunk = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32),
            nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.side_mlp = nn.Sequential(nn.Linear(side, 32), nn.ReLU())
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, image, features=None):
        if features is None:
            features = torch.randn(image.shape[0], self.side)
        joined = torch.cat([torch.flatten(self.trunk(image), 1),
                            self.side_mlp(features)], dim=1)
        return self.classifier(joined)


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNetBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(conv_bn_relu(cin, cout), conv_bn_relu(cout, cout))


class UNet(nn.Module):
    """A small UNet-style segmentation net on 64x64 inputs: Conv+BN+ReLU
    encoder with max pooling; a decoder that upsamples once with a
    ConvTranspose (k3 s2 p1 output_padding 1), once with bilinear and once
    with nearest interpolation (Resize), concatenates the encoder's skip
    features (Concat), and ends in a 1x1 convolution head."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.enc1 = UNetBlock(3, 16)
        self.enc2 = UNetBlock(16, 32)
        self.enc3 = UNetBlock(32, 64)
        self.bottleneck = UNetBlock(64, 128)
        self.up3 = nn.ConvTranspose2d(128, 64, 3, stride=2, padding=1,
                                      output_padding=1)
        self.dec3 = UNetBlock(128, 64)
        self.reduce2 = nn.Conv2d(64, 32, 1)
        self.dec2 = UNetBlock(64, 32)
        self.reduce1 = nn.Conv2d(32, 16, 1)
        self.dec1 = UNetBlock(32, 16)
        self.head = nn.Conv2d(16, num_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)                       # 16 x 64 x 64
        e2 = self.enc2(F.max_pool2d(e1, 2))     # 32 x 32 x 32
        e3 = self.enc3(F.max_pool2d(e2, 2))     # 64 x 16 x 16
        b = self.bottleneck(F.max_pool2d(e3, 2))  # 128 x 8 x 8
        d3 = self.dec3(torch.cat([self.up3(b), e3], 1))
        u2 = F.interpolate(d3, scale_factor=2.0, mode="bilinear",
                           align_corners=False)
        d2 = self.dec2(torch.cat([self.reduce2(u2), e2], 1))
        u1 = F.interpolate(d2, scale_factor=2.0, mode="nearest")
        d1 = self.dec1(torch.cat([self.reduce1(u1), e1], 1))
        return self.head(d1)


class SelfAttention(nn.Module):
    """Multi-head self-attention with explicit matmuls and softmax."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.record = False
        self.last_logits = None

    def forward(self, x):
        b, t, c = x.shape
        h = self.heads
        d = c // h
        q = self.q(x).reshape(b, t, h, d).transpose(1, 2)     # b h t d
        k = self.k(x).reshape(b, t, h, d).permute(0, 2, 3, 1)  # b h d t
        v = self.v(x).reshape(b, t, h, d).transpose(1, 2)     # b h t d
        logits = torch.matmul(q, k) * (1.0 / float(d) ** 0.5)
        if self.record:
            self.last_logits = logits.detach()
        att = torch.softmax(logits, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.gelu = nn.GELU()  # exact: exported with Erf
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class TransformerEncoder(nn.Module):
    """Two pre-LN encoder layers over 16 token embeddings of width 64:
    learned position embedding (broadcast Add), 4-head self-attention
    (MatMul, Softmax), LayerNorm, exact-GELU MLP (Erf), residual Adds, a
    final LayerNorm and a linear head."""

    def __init__(self, tokens=16, dim=64, heads=4, hidden=256, layers=2,
                 out_dim=32):
        super().__init__()
        self.pos = nn.Parameter(0.5 * torch.randn(1, tokens, dim))
        self.layers = nn.ModuleList(
            [EncoderLayer(dim, heads, hidden) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, out_dim)
        for m in self.modules():
            if isinstance(m, nn.LayerNorm):  # not the trivial 1 / 0
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.normal_(m.bias, 0.0, 0.2)

    def forward(self, x):
        x = x + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x))


# ---------------------------------------------------------------------------
# Conditioning of random weights.

def randomize_batchnorm_affine(model):
    """BN weight 1 / bias 0 would make BN folding trivially right."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.2)


def reestimate_batchnorm(model, shape, batches=CALIB_BATCHES, batch=8):
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    model.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the passes
        m.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch, *shape[1:]))
    for m in bns:
        m.momentum = 0.1
    model.eval()
    return len(bns)


def output_std_of(model, module, x):
    """Standard deviation of `module`'s output when the model runs on x."""
    seen = []
    handle = module.register_forward_hook(
        lambda _m, _i, out: seen.append(out.detach().std().item()))
    with torch.no_grad():
        model(x)
    handle.remove()
    return seen[0]


def lsuv(model, shape, batch=8):
    """Rescales every convolution, in order, to a unit-std output."""
    model.eval()
    x = torch.randn(batch, *shape[1:])
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    for conv in convs:
        std = output_std_of(model, conv, x)
        with torch.no_grad():
            conv.weight.div_(std)
            if conv.bias is not None:
                conv.bias.div_(std)
    return len(convs)


def class_spread(out):
    """Mean over samples (and pixels/tokens) of the std across classes."""
    if out.dim() == 4:     # N C H W: classes along C
        return out.std(dim=1).mean().item()
    return out.std(dim=-1).mean().item()


def scale_head(model, head, shape, batch=8):
    """Scales the final affine layer (followed only by positively
    homogeneous ops) so outputs spread by about LOGIT_STD across classes."""
    x = torch.randn(batch, *shape[1:])
    with torch.no_grad():
        spread = class_spread(model(x))
        factor = LOGIT_STD / spread
        head.weight.mul_(factor)
        if head.bias is not None:
            head.bias.mul_(factor)
    return factor


def scale_attention(model, shape, batch=8):
    """Scales q and k projections until attention logits spread by about
    ATTN_LOGIT_STD (two rounds: later layers see earlier layers' change)."""
    attns = [m for m in model.modules() if isinstance(m, SelfAttention)]
    x = torch.randn(batch, *shape[1:])
    for _ in range(2):
        for a in attns:
            a.record = True
        with torch.no_grad():
            model(x)
            for a in attns:
                factor = (ATTN_LOGIT_STD / a.last_logits.std().item()) ** 0.5
                for lin in (a.q, a.k):
                    lin.weight.mul_(factor)
                    lin.bias.mul_(factor)
        for a in attns:
            a.record = False
            a.last_logits = None
    for a in attns:
        a.record = True
    with torch.no_grad():
        model(x)
    stats = []
    for a in attns:
        p = torch.softmax(a.last_logits, dim=-1)
        stats.append(p.max(dim=-1).values.mean().item())
        a.record = False
        a.last_logits = None
    return stats  # mean max attention probability per layer


# ---------------------------------------------------------------------------
# The zoo.

def tv(name, **kwargs):
    return getattr(torchvision.models, name)(weights=None, **kwargs)


def shufflenet_split():
    """torchvision's ShuffleNetV2 whose units split the shuffled tensor with
    torch.split, exported as one ONNX Split (the zoo's other ShuffleNet
    splits with chunk, exported as Slices), as tf.split and Caffe's Slice
    layer give it too."""
    from torchvision.models.shufflenetv2 import (InvertedResidual,
                                                 channel_shuffle)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = torch.split(x, int(x.shape[1]) // 2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)

    model = tv("shufflenet_v2_x1_0")
    for module in model.modules():
        if isinstance(module, InvertedResidual):
            module.forward = types.MethodType(forward, module)
    return model


# name: (builder, input shape, opset, output kind, final-layer getter)
MODELS = {
    "mobilenet_v1": (lambda: MobileNetV1(), (1, 3, 224, 224), 13,
                     "classifier", lambda m: m.classifier),
    "mobilenet_v2": (lambda: tv("mobilenet_v2"), (1, 3, 224, 224), 13,
                     "classifier", lambda m: m.classifier[-1]),
    "mobilenet_v3_large": (lambda: tv("mobilenet_v3_large"),
                           (1, 3, 224, 224), 13, "classifier",
                           lambda m: m.classifier[-1]),
    "squeezenet1_1": (lambda: tv("squeezenet1_1"), (1, 3, 224, 224), 13,
                      "classifier", lambda m: m.classifier[1]),
    "resnet18": (lambda: tv("resnet18"), (1, 3, 224, 224), 13,
                 "classifier", lambda m: m.fc),
    "resnet50": (lambda: tv("resnet50"), (1, 3, 224, 224), 13,
                 "classifier", lambda m: m.fc),
    "inception_v3": (lambda: tv("inception_v3", aux_logits=False,
                                transform_input=False, init_weights=True),
                     (1, 3, 299, 299), 13, "classifier", lambda m: m.fc),
    "densenet121": (lambda: tv("densenet121"), (1, 3, 224, 224), 13,
                    "classifier", lambda m: m.classifier),
    "shufflenet_v2_x1_0": (lambda: tv("shufflenet_v2_x1_0"),
                           (1, 3, 224, 224), 13, "classifier",
                           lambda m: m.fc),
    "shufflenet_v2_split": (shufflenet_split, (1, 3, 224, 224), 13,
                            "classifier", lambda m: m.fc),
    "efficientnet_b0": (lambda: tv("efficientnet_b0"), (1, 3, 224, 224), 13,
                        "classifier", lambda m: m.classifier[-1]),
    "unet": (lambda: UNet(), (1, 3, 64, 64), 13, "segmentation",
             lambda m: m.head),
    "transformer_encoder": (lambda: TransformerEncoder(), (1, 16, 64), 17,
                            "features", lambda m: m.head),
    "two_stream": (lambda: TwoStream(), (1, 3, 64, 64), 13, "classifier",
                   lambda m: m.classifier),
}

# Inputs after the first ("input"): name → shape.
EXTRA_INPUTS = {"two_stream": [("features", (1, 16))]}


def model_seed(name):
    return zlib.crc32(name.encode()) & 0x7fffffff


def check_spread(name, out):
    """The same checks as zoo_reference.py, on torch's output."""
    out = out.astype(np.float64)
    std, mean = out.std(), out.mean()
    if np.abs(out).max() < 1e-6:
        raise RuntimeError("%s: output is near zero" % name)
    if std < 1e-3 * (abs(mean) + 1e-6):
        raise RuntimeError("%s: output is near constant (std %g, mean %g)" %
                           (name, std, mean))


def is_complete(folder, meta_name="meta.json"):
    meta_path = os.path.join(folder, meta_name)
    if not (os.path.isfile(os.path.join(folder, "model.onnx")) and
            os.path.isfile(meta_path)):
        return False
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return all(os.path.isfile(os.path.join(folder, i["file"]))
               for i in meta["inputs"])


def sanitize(name):
    return name.replace("/", "_").replace(":", "_")


def build(name, folder):
    builder, shape, opset, kind, head_of = MODELS[name]
    start = time.time()
    torch.manual_seed(model_seed(name))
    model = builder()
    model.eval()
    notes = {}
    randomize_batchnorm_affine(model)
    if name == "squeezenet1_1":
        notes["lsuv_convs"] = lsuv(model, shape)
    notes["batchnorms"] = reestimate_batchnorm(model, shape)
    if name == "transformer_encoder":
        notes["attention_max_prob"] = [
            round(v, 3) for v in scale_attention(model, shape)]
    notes["head_scale"] = round(scale_head(model, head_of(model), shape), 4)
    model.eval()

    rng = np.random.default_rng(model_seed(name) + 1)
    x = rng.standard_normal(shape).astype(np.float32)
    extras = EXTRA_INPUTS.get(name, [])
    xs = [x] + [rng.standard_normal(s).astype(np.float32) for _, s in extras]
    names = ["input"] + [n for n, _ in extras]
    with torch.no_grad():
        out = model(*[torch.from_numpy(v) for v in xs]).numpy()
    check_spread(name, out)

    tmp = folder + ".tmp-%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    onnx_path = os.path.join(tmp, "model.onnx")
    assert not model.training
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and constant-folding notes
        torch.onnx.export(model, tuple(torch.from_numpy(v) for v in xs),
                          onnx_path,
                          opset_version=opset, do_constant_folding=True,
                          input_names=names, output_names=["output"],
                          # PRESERVE on an eval-mode model: inference
                          # graph, but BatchNormalization stays a node (EVAL
                          # would fold it into the Conv before mace sees it).
                          training=torch.onnx.TrainingMode.PRESERVE)
    for i, v in enumerate(xs):
        np.save(os.path.join(tmp, "input_%d.npy" % i), v)
    np.save(os.path.join(tmp, "torch_output_output.npy"), out)
    params = sum(p.numel() for p in model.parameters())
    meta = {
        "name": name,
        "kind": kind,
        "opset": opset,
        "seed": model_seed(name),
        "inputs": [{"name": n, "shape": list(v.shape),
                    "file": "input_%d.npy" % i}
                   for i, (n, v) in enumerate(zip(names, xs))],
        "outputs": [{"name": "output", "shape": list(out.shape),
                     "file": "output_%s.npy" % sanitize("output")}],
        "params": params,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "output_std": float(out.std()),
        "output_mean": float(out.mean()),
        "class_spread": float(class_spread(torch.from_numpy(out))),
        "notes": notes,
        "generate_s": round(time.time() - start, 2),
    }
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    shutil.rmtree(folder, ignore_errors=True)  # stale references go too
    os.rename(tmp, folder)
    return meta


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="default: $MACE_ZOO_DIR or ~/.cache/mace/zoo")
    parser.add_argument("--models", default="",
                        help="comma-separated subset (default: all): " +
                        ",".join(MODELS))
    parser.add_argument("--force", action="store_true",
                        help="regenerate even when the files exist")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error("unknown model(s) %s; known: %s" %
                     (",".join(unknown), ",".join(MODELS)))
    torch.set_num_threads(os.cpu_count() or 1)
    os.makedirs(args.cache_dir, exist_ok=True)
    failed = 0
    for name in names:
        folder = os.path.join(args.cache_dir, name)
        if not args.force and is_complete(folder):
            print("%-20s cached" % name, flush=True)
            continue
        try:
            meta = build(name, folder)
        except Exception as e:  # report every model, then fail
            failed += 1
            print("%-20s FAILED: %s" % (name, e), flush=True)
            continue
        size = os.path.getsize(os.path.join(folder, "model.onnx"))
        print("%-20s generated in %6.1f s: %5.1f MB, %9d params, output %s "
              "std %.3g mean %.3g, class spread %.3g" % (
                  name, meta["generate_s"], size / 1e6, meta["params"],
                  "x".join(map(str, meta["outputs"][0]["shape"])),
                  meta["output_std"], meta["output_mean"],
                  meta["class_spread"]), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
