// A Caffe net as the frontend sees it: the layers of the .prototxt (V2
// `layer` or V1 `layers`, TEST phase) with their parameters as text trees,
// and the blobs of the .caffemodel matched to them by layer name.

#ifndef MACE_CONVERTER_CAFFE_CAFFE_NET_H_
#define MACE_CONVERTER_CAFFE_CAFFE_NET_H_

#include <map>
#include <string>
#include <vector>

#include "mace/converter/caffe/caffe_text_format.h"
#include "mace/core/tensor.h"
#include "mace/public/mace.h"

namespace mace {
namespace converter {

struct CaffeBlob {
  Shape shape;
  std::vector<float> values;
};

struct CaffeLayerDef {
  std::string name;
  // The V2 type name ("Convolution"); V1 enum types are translated.
  std::string type;
  std::vector<std::string> bottoms;
  std::vector<std::string> tops;
  // The layer's block of the prototxt (parameters such as
  // convolution_param are read from it by name).
  const TextMessage *params = nullptr;
  int line = 0;
};

struct CaffeNetDef {
  TextMessage text;  // owns the parse tree the layers point into
  std::vector<CaffeLayerDef> layers;
  // Legacy net-level inputs (`input:` with `input_shape` / `input_dim`).
  std::vector<std::string> inputs;
  std::vector<Shape> input_shapes;
  bool v1 = false;
};

// Reads the prototxt: syntax errors carry line and column; V0 nets (layers
// nested as `layers { layer { ... } }`) are rejected with a pointer to
// Caffe's upgrade tools; layers excluded from the TEST phase are dropped.
MaceStatus ReadCaffePrototxt(const std::string &path, CaffeNetDef *net);
// Same, from text in memory (tests, fuzzing); `path` only names it.
MaceStatus ParseCaffePrototxt(const std::string &text, const std::string &path,
                              CaffeNetDef *net);

// Reads the .caffemodel: blobs by layer name (V2 or V1 layers); a
// truncated or corrupted file, a blob whose data does not fill its shape,
// or a V0 model is an error naming the file (and layer).
MaceStatus ReadCaffeModelBlobs(
    const std::string &path,
    std::map<std::string, std::vector<CaffeBlob>> *blobs);
MaceStatus ParseCaffeModelBlobs(
    const std::string &bytes, const std::string &path,
    std::map<std::string, std::vector<CaffeBlob>> *blobs);

// The V2 name of a V1 LayerType enum name ("CONVOLUTION" → "Convolution");
// empty when unknown.
std::string CaffeV1TypeName(const std::string &v1_type);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_CAFFE_CAFFE_NET_H_
