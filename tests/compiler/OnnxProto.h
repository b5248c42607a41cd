// The ONNX protobuf types for tests that build models in C++. The frontend links ONNX privately,
// so ONNX's compile definitions do not reach the tests: they are set here, once.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>
