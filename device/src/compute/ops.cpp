#include "sohusim/device/compute/ops.hpp"

namespace sohusim::device {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::None:
      return "none";
    case Activation::Relu:
      return "relu";
    case Activation::Gelu:
      return "gelu";
    case Activation::Silu:
      return "silu";
  }
  return "?";
}

const char* to_string(VectorOp op) {
  switch (op) {
    case VectorOp::RmsNorm:
      return "rmsnorm";
    case VectorOp::LayerNorm:
      return "layernorm";
    case VectorOp::Rope:
      return "rope";
    case VectorOp::Silu:
      return "silu";
    case VectorOp::Gelu:
      return "gelu";
    case VectorOp::Swiglu:
      return "swiglu";
    case VectorOp::Add:
      return "add";
    case VectorOp::Scale:
      return "scale";
    case VectorOp::Cast:
      return "cast";
    case VectorOp::Softmax:
      return "softmax";
  }
  return "?";
}

}  // namespace sohusim::device
