// Writing and checking the cost model's file.
#include "tuner/model/ModelFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessel::tuner {

namespace {

const char* const kMagic = "tessel-cost-model";
const char* const kRetrainHint = "delete the file; the model is retrained from the records";

// FNV-1a: enough to tell a damaged file from a good one, and a few lines instead of a library.
uint64_t checksum(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
  return hash;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

Diagnostic fileError(const std::string& path, std::string message, std::string hint = kRetrainHint) {
  return Diagnostic{std::move(message), path, 0, 0, std::move(hint)};
}

bool writeAll(int fd, const std::string& contents) {
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return false;
    data += written;
    left -= size_t(written);
  }
  return true;
}

// Reads the header's lines one by one from the start of the file's text.
class HeaderReader {
public:
  explicit HeaderReader(const std::string& text) : text_(text) {}

  // The next line, if there is one before the end of the text.
  bool line(std::string& out) {
    size_t end = text_.find('\n', position_);
    if (end == std::string::npos) return false;
    out = text_.substr(position_, end - position_);
    position_ = end + 1;
    return true;
  }

  // The value of a "<key> <value>" line.
  bool field(const std::string& key, std::string& value) {
    std::string text;
    if (!line(text) || text.compare(0, key.size() + 1, key + " ") != 0) return false;
    value = text.substr(key.size() + 1);
    return true;
  }

  template <class Number>
  bool number(const std::string& key, Number& value, int base = 10) {
    std::string text;
    if (!field(key, text)) return false;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    return error == std::errc() && end == text.data() + text.size();
  }

  size_t position() const { return position_; }

private:
  const std::string& text_;
  size_t position_ = 0;
};

}  // namespace

Status writeModelFile(const std::string& path, const ModelFileHeader& header, const std::string& payload) {
  std::ostringstream contents;
  contents << kMagic << "\nversion " << header.formatVersion << "\nfeatures " << header.featureCount
           << "\nsamples " << header.sampleCount << "\nobjective " << header.objective << "\npayload-bytes "
           << payload.size() << "\npayload-fnv1a " << hex(checksum(payload)) << "\n"
           << payload;
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fileError(path, "cannot create " + temporary + ": " + std::strerror(errno), "");
  // fsync before the rename: otherwise a crash of the machine can leave the new name on no data.
  std::string failure;
  if (!writeAll(fd, contents.str()) || ::fsync(fd) != 0) failure = std::strerror(errno);
  if (::close(fd) != 0 && failure.empty()) failure = std::strerror(errno);
  if (failure.empty() && ::rename(temporary.c_str(), path.c_str()) != 0) failure = std::strerror(errno);
  if (!failure.empty()) {
    ::unlink(temporary.c_str());
    return fileError(path, "cannot save the cost model: " + failure, "");
  }
  return Status::success();
}

Expected<ModelFile> readModelFile(const std::string& path, int supportedVersion) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fileError(path, std::string("cannot open the cost model: ") + std::strerror(errno), "");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fileError(path, "cannot read the cost model", "");
  const std::string text = buffer.str();

  HeaderReader reader(text);
  ModelFile file;
  std::string magic;
  if (!reader.line(magic) || magic != kMagic) return fileError(path, "not a Tessel cost model file");
  if (!reader.number("version", file.header.formatVersion))
    return fileError(path, "the cost model's header has no readable format version");
  if (file.header.formatVersion != supportedVersion)
    return fileError(path, "the cost model has format version " + std::to_string(file.header.formatVersion) +
                               "; this Tessel reads version " + std::to_string(supportedVersion));
  size_t payloadBytes = 0;
  uint64_t expectedChecksum = 0;
  if (!reader.number("features", file.header.featureCount) || file.header.featureCount < 1 ||
      !reader.number("samples", file.header.sampleCount) || file.header.sampleCount < 0 ||
      !reader.field("objective", file.header.objective) || !reader.number("payload-bytes", payloadBytes) ||
      !reader.number("payload-fnv1a", expectedChecksum, 16))
    return fileError(path, "the cost model's header is damaged");
  file.payload = text.substr(reader.position());
  if (file.payload.size() != payloadBytes)
    return fileError(path, "the cost model is truncated or has trailing bytes: " + std::to_string(payloadBytes) +
                               " model bytes expected, " + std::to_string(file.payload.size()) + " found");
  if (checksum(file.payload) != expectedChecksum)
    return fileError(path, "the cost model is corrupt (its checksum does not match)");
  return file;
}

}  // namespace tessel::tuner
