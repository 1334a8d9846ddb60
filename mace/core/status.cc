#include "mace/core/status.h"

namespace mace {

class MaceStatus::Impl {
 public:
  Code code = MACE_SUCCESS;
  std::string information;
};

MaceStatus::MaceStatus() : impl_(new Impl) {}
MaceStatus::MaceStatus(const Code code) : impl_(new Impl) {
  impl_->code = code;
}
MaceStatus::MaceStatus(const Code code, const std::string &information)
    : impl_(new Impl) {
  impl_->code = code;
  impl_->information = information;
}
MaceStatus::MaceStatus(const MaceStatus &other)
    : impl_(new Impl(*other.impl_)) {}
MaceStatus::MaceStatus(MaceStatus &&other) : impl_(new Impl) {
  std::swap(impl_, other.impl_);
}
MaceStatus &MaceStatus::operator=(const MaceStatus &other) {
  *impl_ = *other.impl_;
  return *this;
}
MaceStatus &MaceStatus::operator=(const MaceStatus &&other) {
  *impl_ = *other.impl_;
  return *this;
}
MaceStatus::~MaceStatus() = default;

MaceStatus::Code MaceStatus::code() const { return impl_->code; }

std::string MaceStatus::information() const {
  if (impl_->information.empty()) {
    switch (impl_->code) {
      case MACE_SUCCESS: return "Success";
      case MACE_INVALID_ARGS: return "Invalid Arguments";
      case MACE_OUT_OF_RESOURCES: return "Out of resources";
      case MACE_UNSUPPORTED: return "Unsupported";
      case MACE_RUNTIME_ERROR: return "Runtime error";
    }
  }
  return impl_->information;
}

bool MaceStatus::operator==(const MaceStatus &other) const {
  return impl_->code == other.impl_->code;
}
bool MaceStatus::operator!=(const MaceStatus &other) const {
  return !(*this == other);
}

MaceStatus WithContext(const MaceStatus &status, const std::string &context) {
  if (status.code() == MaceStatus::MACE_SUCCESS) return status;
  return MaceStatus(status.code(), context + ": " + status.information());
}

}  // namespace mace
