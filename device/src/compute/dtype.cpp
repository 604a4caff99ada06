#include "sohusim/device/compute/dtype.hpp"

#include <stdexcept>

namespace sohusim::device {

unsigned bytes_of(DataType t) {
  switch (t) {
    case DataType::FP8_E4M3:
    case DataType::FP8_E5M2:
      return 1;
    case DataType::BF16:
    case DataType::FP16:
      return 2;
    case DataType::FP32:
      return 4;
  }
  return 0;
}

DataType parse_data_type(std::string_view n) {
  if (n == "fp8" || n == "fp8_e4m3" || n == "e4m3") return DataType::FP8_E4M3;
  if (n == "fp8_e5m2" || n == "e5m2") return DataType::FP8_E5M2;
  if (n == "bf16") return DataType::BF16;
  if (n == "fp16") return DataType::FP16;
  if (n == "fp32") return DataType::FP32;
  throw std::invalid_argument("unknown data type '" + std::string(n) +
                              "' (accepted: fp8, fp8_e4m3, fp8_e5m2, bf16, fp16, fp32)");
}

const char* to_string(DataType t) {
  switch (t) {
    case DataType::FP8_E4M3:
      return "fp8_e4m3";
    case DataType::FP8_E5M2:
      return "fp8_e5m2";
    case DataType::BF16:
      return "bf16";
    case DataType::FP16:
      return "fp16";
    case DataType::FP32:
      return "fp32";
  }
  return "?";
}

bool valid_data_type(unsigned code) {
  return code < kNumDataTypes;
}

Dataflow parse_dataflow(std::string_view n) {
  if (n == "ws") return Dataflow::WeightStationary;
  if (n == "os") return Dataflow::OutputStationary;
  if (n == "is") return Dataflow::InputStationary;
  throw std::invalid_argument("unknown dataflow '" + std::string(n) + "' (accepted: ws, os, is)");
}

const char* to_string(Dataflow d) {
  switch (d) {
    case Dataflow::WeightStationary:
      return "ws";
    case Dataflow::OutputStationary:
      return "os";
    case Dataflow::InputStationary:
      return "is";
  }
  return "?";
}

FoldModel parse_fold_model(std::string_view n) {
  if (n == "overlap") return FoldModel::Overlap;
  if (n == "scalesim") return FoldModel::Scalesim;
  throw std::invalid_argument("unknown fold model '" + std::string(n) + "' (accepted: overlap, scalesim)");
}

const char* to_string(FoldModel f) {
  return f == FoldModel::Overlap ? "overlap" : "scalesim";
}

}  // namespace sohusim::device
