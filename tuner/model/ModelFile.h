// The cost model's file: a short text header (format version, feature count, ...) and the
// model bytes, guarded by a length and a checksum so damage is reported, never parsed.
#pragma once

#include <string>

#include "core/support/Error.h"

namespace tessel::tuner {

/// What the file says about the model before its bytes.
struct ModelFileHeader {
  int formatVersion = 0;
  int featureCount = 0;   ///< Features per candidate the model was trained on.
  int sampleCount = 0;    ///< Samples of its training.
  std::string objective;  ///< For a person reading the file; the bytes carry their own.
};

/// A model file's contents.
struct ModelFile {
  ModelFileHeader header;
  std::string payload;  ///< The model as XGBoost wrote it (UBJSON).
};

/// Writes the header and `payload` to `path` through a temporary file renamed over it, so a
/// process killed meanwhile leaves the old file whole.
[[nodiscard]] Status writeModelFile(const std::string& path, const ModelFileHeader& header,
                                    const std::string& payload);

/// Reads a file writeModelFile wrote. A Diagnostic naming the file for a missing file, a file
/// that is not a cost model, a format version other than `supportedVersion`, a malformed header,
/// or a payload that is truncated or fails its checksum.
[[nodiscard]] Expected<ModelFile> readModelFile(const std::string& path, int supportedVersion);

}  // namespace tessel::tuner
