#!/usr/bin/python3
# Interpreter: /usr/bin/python3, Debian's python3-opencv (cv2.dnn imports
# Caffe nets independently of our code) and python3-numpy.
"""Validates the Caffe frontend end to end on the nets of
scripts/make_caffe_models.py: references from OpenCV's DNN module
(cv2.dnn.readNetFromCaffe) and, for layers OpenCV lacks or runs otherwise,
float64 NumPy implementations of the layer semantics:
  * Proposal: py-faster-rcnn's proposal_layer.py (generate_anchors,
    bbox_transform_inv, clip, min-size filter, score sort, greedy NMS),
    padded with zero rows to min(post_nms_topn, pre_nms_topn, H*W*A) rows
    as MACE's Proposal op (OpenCV's Proposal layer differs: it runs its own
    DetectionOutput-based NMS);
  * PSROIAlign (OpenCV has no such layer): MACE's sampling rule
    (docs/ops.md);
both run on the outputs of the part of the net OpenCV can run
(trunk.prototxt); and DetectionOutput's rows, which OpenCV returns by score
and Caffe by label, are reordered to Caffe's order and padded with -1 rows
to MACE's fixed row count. Then converts each net with `mace convert --platform
caffe`, runs it with `mace run --validate-outputs` and compares every
output in float64: pass iff cosine >= 0.99999 and
rel = ||out - ref|| / ||ref - mean(ref)|| <= 1e-4.
References are cached beside the nets (ref_<output>.npy).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

COSINE, REL = 0.99999, 1e-4


def default_dir():
    return os.environ.get("MACE_CAFFE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mace", "caffe_models")


# ---- NumPy references -------------------------------------------------------

def generate_anchors(base_size, ratios, scales):
    def whctrs(a):
        w, h = a[2] - a[0] + 1, a[3] - a[1] + 1
        return w, h, a[0] + 0.5 * (w - 1), a[1] + 0.5 * (h - 1)

    def mk(ws, hs, x, y):
        ws, hs = ws[:, None], hs[:, None]
        return np.hstack((x - 0.5 * (ws - 1), y - 0.5 * (hs - 1),
                          x + 0.5 * (ws - 1), y + 0.5 * (hs - 1)))
    base = np.array([1, 1, base_size, base_size], np.float64) - 1
    w, h, x, y = whctrs(base)
    size_ratios = w * h / np.array(ratios, np.float64)
    ws = np.round(np.sqrt(size_ratios))
    hs = np.round(ws * np.array(ratios, np.float64))
    ratio_anchors = mk(ws, hs, x, y)
    out = []
    for a in ratio_anchors:
        w, h, x, y = whctrs(a)
        s = np.array(scales, np.float64)
        out.append(mk(w * s, h * s, x, y))
    return np.vstack(out)


def proposal(cls_prob, bbox_pred, im_info, p):
    anchors = generate_anchors(p["base_size"], p["ratios"], p["scales"])
    a = anchors.shape[0]
    scores = cls_prob.astype(np.float64)[:, a:, :, :]
    deltas = bbox_pred.astype(np.float64)
    h, w = scores.shape[2:]
    sx, sy = np.meshgrid(np.arange(w) * p["feat_stride"],
                         np.arange(h) * p["feat_stride"])
    shifts = np.vstack((sx.ravel(), sy.ravel(), sx.ravel(),
                        sy.ravel())).transpose()
    boxes = (anchors.reshape((1, a, 4)) +
             shifts.reshape((1, -1, 4)).transpose((1, 0, 2))).reshape((-1, 4))
    deltas = deltas.transpose((0, 2, 3, 1)).reshape((-1, 4))
    scores = scores.transpose((0, 2, 3, 1)).reshape(-1)
    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    cx = boxes[:, 0] + 0.5 * widths
    cy = boxes[:, 1] + 0.5 * heights
    pcx = deltas[:, 0] * widths + cx
    pcy = deltas[:, 1] * heights + cy
    pw = np.exp(deltas[:, 2]) * widths
    ph = np.exp(deltas[:, 3]) * heights
    props = np.stack([pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw,
                      pcy + 0.5 * ph], axis=1)
    info = im_info.astype(np.float64).reshape(-1)
    props[:, 0::2] = np.clip(props[:, 0::2], 0, info[1] - 1)
    props[:, 1::2] = np.clip(props[:, 1::2], 0, info[0] - 1)
    min_size = p["min_size"] * info[2]
    ws = props[:, 2] - props[:, 0] + 1
    hs = props[:, 3] - props[:, 1] + 1
    keep = np.where((ws >= min_size) & (hs >= min_size))[0]
    props, scores = props[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")[:p["pre"]]
    props = props[order]
    x1, y1, x2, y2 = props.T
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    kept, suppressed = [], np.zeros(len(props), bool)
    for i in range(len(props)):
        if suppressed[i]:
            continue
        kept.append(i)
        xx1 = np.maximum(x1[i], x1)
        yy1 = np.maximum(y1[i], y1)
        xx2 = np.minimum(x2[i], x2)
        yy2 = np.minimum(y2[i], y2)
        inter = np.maximum(0, xx2 - xx1 + 1) * np.maximum(0, yy2 - yy1 + 1)
        iou = inter / (areas[i] + areas - inter)
        suppressed |= iou > p["nms"]
    kept = kept[:p["post"]]
    rows = min(p["post"], p["pre"], h * w * a)
    out = np.zeros((rows, 5))
    out[:len(kept), 1:] = props[kept]
    return out


def psroi_align(features, rois, p):
    feats = features.astype(np.float64)
    _, _, height, width = feats.shape
    g, dim, scale = p["group_size"], p["output_dim"], p["spatial_scale"]
    out = np.zeros((len(rois), dim, g, g))

    def sample(b, c, h, w):
        v = 0.0
        for y in (int(np.floor(h)), int(np.ceil(h))):
            if y < 0 or y >= height:
                continue
            for x in (int(np.floor(w)), int(np.ceil(w))):
                if x < 0 or x >= width:
                    continue
                v += (1 - abs(h - y)) * (1 - abs(w - x)) * feats[b, c, y, x]
        return v

    for r, roi in enumerate(rois.astype(np.float64)):
        sw, sh = roi[1] * scale, roi[2] * scale
        rw = max((roi[3] + 1) * scale - sw, 0.1)
        rh = max((roi[4] + 1) * scale - sh, 0.1)
        for ph in range(g):
            for pw in range(g):
                hs = min(max(sh + ph * rh / g, 0), height)
                he = min(max(sh + (ph + 1) * rh / g, 0), height)
                ws = min(max(sw + pw * rw / g, 0), width)
                we = min(max(sw + (pw + 1) * rw / g, 0), width)
                if he <= hs or we <= ws:
                    continue
                area = (he - hs) * (we - ws)
                for c in range(dim):
                    ci = (c * g + ph) * g + pw
                    total, i = 0.0, 0
                    while hs + i < he:
                        j = 0
                        while ws + j < we:
                            total += sample(int(roi[0]), ci, hs + i, ws + j)
                            j += 1
                        i += 1
                    out[r, c, ph, pw] = total / area
    return out


# ---- references and validation --------------------------------------------

def opencv_forward(prototxt, caffemodel, inputs, outputs=None):
    net = cv2.dnn.readNetFromCaffe(prototxt, caffemodel)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    for name, data in inputs.items():
        net.setInput(data, name)
    names = outputs or list(net.getUnconnectedOutLayersNames())
    return dict(zip(names, net.forward(names)))


def references(folder, meta):
    inputs = {i["name"]: np.load(os.path.join(folder, i["file"]))
              for i in meta["inputs"]}
    notes = meta["notes"]
    model = os.path.join(folder, "net.caffemodel")
    if notes.get("opencv") is True:
        refs = opencv_forward(os.path.join(folder, "net.prototxt"), model,
                              inputs)
        for name, rows in notes.get("pad_rows", {}).items():
            # Detections: OpenCV returns only the rows found; MACE's op has
            # a fixed row count with -1 rows after them.
            found = refs[name].reshape(-1, 7)
            found = found[found[:, 1] >= 0] if len(found) else found
            # OpenCV orders the kept boxes by score; Caffe (and MACE) by
            # image, then label, then score.
            found = found[np.lexsort((-found[:, 2], found[:, 1],
                                      found[:, 0]))]
            padded = -np.ones((rows, 7), np.float32)
            padded[:len(found)] = found[:rows]
            refs[name] = padded.reshape(1, 1, rows, 7)
        return refs
    trunk = opencv_forward(os.path.join(folder, "trunk.prototxt"), model,
                           {"data": inputs["data"]}, notes["trunk_outputs"])
    rois = proposal(trunk["rpn_cls_prob_reshape"], trunk["rpn_bbox_pred"],
                    inputs["im_info"], notes["proposal"])
    psroi = psroi_align(trunk["psroi_features"], rois, notes["psroi"])
    return {"rois_out": rois, "psroi": psroi}


def metrics(out, ref):
    out = out.astype(np.float64).reshape(-1)
    ref = ref.astype(np.float64).reshape(-1)
    denom = np.linalg.norm(out) * np.linalg.norm(ref)
    cosine = float(out @ ref / denom) if denom > 0 else 0.0
    spread = np.linalg.norm(ref - ref.mean())
    rel = float(np.linalg.norm(out - ref) / spread) if spread > 0 else \
        float("inf")
    return cosine, rel


def run(cmd):
    start = time.time()
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=600)
    return result, time.time() - start


def validate(mace, folder, meta, work):
    refs = {}
    for name in meta.get("outputs", []):
        refs[name] = np.load(os.path.join(folder, "ref_%s.npy" % name))
    conv, convert_s = run([
        mace, "convert", "--platform", "caffe",
        "--model-file", os.path.join(folder, "net.prototxt"),
        "--weight-file", os.path.join(folder, "net.caffemodel"),
        "--output-dir", work, "--name", "m"])
    if conv.returncode != 0:
        return False, "convert: " + conv.stdout.strip()[-600:], convert_s, 0
    out_dir = os.path.join(work, "out")
    cmd = [mace, "run", "--model", os.path.join(work, "m.pb"),
           "--data", os.path.join(work, "m.data"), "--output-dir", out_dir,
           "--validate-threshold", str(COSINE)]
    for i in meta["inputs"]:
        cmd += ["--input", "%s=%s" % (i["name"],
                                      os.path.join(folder, i["file"]))]
    for name in refs:
        cmd += ["--validate-outputs",
                "%s=%s" % (name, os.path.join(folder, "ref_%s.npy" % name))]
    result, run_s = run(cmd)
    if result.returncode != 0:
        return False, "run: " + result.stdout.strip()[-600:], convert_s, run_s
    problems, lines = [], []
    for name, ref in refs.items():
        got = np.load(os.path.join(out_dir, name.replace("/", "_") + ".npy"))
        if got.shape != ref.shape:
            problems.append("%s: shape %s, expected %s" % (name, got.shape,
                                                           ref.shape))
            continue
        cosine, rel = metrics(got, ref)
        lines.append("%s cosine %.8f rel %.1e" % (name, cosine, rel))
        if cosine < COSINE or not rel <= REL:
            problems.append("%s: cosine %.8f rel %.2e" % (name, cosine, rel))
    return not problems, "; ".join(problems or lines), convert_s, run_s


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mace", default="build/bin/mace")
    parser.add_argument("--dir", default=default_dir())
    parser.add_argument("--models", default="")
    args = parser.parse_args()
    mace = os.path.abspath(args.mace)
    names = [m for m in args.models.split(",") if m] or sorted(
        d for d in os.listdir(args.dir)
        if os.path.isfile(os.path.join(args.dir, d, "meta.json")))
    failed = 0
    for name in names:
        folder = os.path.join(args.dir, name)
        meta_path = os.path.join(folder, "meta.json")
        with open(meta_path) as f:
            meta = json.load(f)
        if "outputs" not in meta:
            refs = references(folder, meta)
            for out, value in refs.items():
                np.save(os.path.join(folder, "ref_%s.npy" % out),
                        value.astype(np.float32))
            meta["outputs"] = sorted(refs)
            with open(meta_path, "w") as f:
                json.dump(meta, f, indent=1)
        with tempfile.TemporaryDirectory() as work:
            ok, message, convert_s, run_s = validate(mace, folder, meta, work)
        failed += not ok
        print("%-12s %-4s convert %.2fs run %.2fs  %s" % (
            name, "PASS" if ok else "FAIL", convert_s, run_s, message))
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
