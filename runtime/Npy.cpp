// A minimal .npy reader and writer: the header is a Python dict literal with three known keys.
#include "runtime/Npy.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "runtime/Error.h"

namespace tessel::runtime {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

/// NumPy's type string ("<f4") for a runtime type; nullopt when NumPy has none.
std::optional<std::string> npyDescriptor(DataType dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  std::string bytes = std::to_string(dtype.bytes());
  switch (dtype.code) {
    case DataType::Code::Bool: return std::string("|b1");
    case DataType::Code::Int:
      if (dtype.bits == 8) return std::string("|i1");
      if (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64) return "<i" + bytes;
      return std::nullopt;
    case DataType::Code::UInt:
      if (dtype.bits == 8) return std::string("|u1");
      if (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64) return "<u" + bytes;
      return std::nullopt;
    case DataType::Code::Float:
      if (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64) return "<f" + bytes;
      return std::nullopt;
    case DataType::Code::BFloat: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DataType> typeOfDescriptor(const std::string& descriptor) {
  if (descriptor.size() < 3) return std::nullopt;
  char order = descriptor[0];
  char kind = descriptor[1];
  std::string width = descriptor.substr(2);
  if (width != "1" && width != "2" && width != "4" && width != "8") return std::nullopt;
  int bytes = std::stoi(width);
  // One-byte types carry no byte order ('|'); wider ones must be little-endian ('<', or '='
  // on this little-endian host).
  bool littleEndian = order == '<' || (order == '=' && std::endian::native == std::endian::little);
  if (bytes > 1 && !littleEndian) return std::nullopt;
  if (bytes == 1 && order != '|' && order != '<' && order != '=') return std::nullopt;
  uint8_t bits = static_cast<uint8_t>(bytes * 8);
  switch (kind) {
    case 'b': return bytes == 1 ? std::optional(DataType::boolean()) : std::nullopt;
    case 'i': return DataType{DataType::Code::Int, bits, 1};
    case 'u': return DataType{DataType::Code::UInt, bits, 1};
    case 'f': return bytes >= 2 ? std::optional(DataType{DataType::Code::Float, bits, 1}) : std::nullopt;
    default: return std::nullopt;
  }
}

/// Parses the header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
class HeaderParser {
public:
  HeaderParser(std::string text, const std::string& path) : text_(std::move(text)), path_(path) {}

  std::string stringValue(const std::string& key) {
    size_t at = valueStart(key);
    char quote = text_[at];
    if (quote != '\'' && quote != '"') fail("'" + key + "' is not a string");
    size_t end = text_.find(quote, at + 1);
    if (end == std::string::npos) fail("unterminated string for '" + key + "'");
    return text_.substr(at + 1, end - at - 1);
  }
  bool boolValue(const std::string& key) {
    size_t at = valueStart(key);
    if (text_.compare(at, 4, "True") == 0) return true;
    if (text_.compare(at, 5, "False") == 0) return false;
    fail("'" + key + "' is not True or False");
  }
  std::vector<int64_t> tupleValue(const std::string& key) {
    size_t at = valueStart(key);
    if (text_[at] != '(') fail("'" + key + "' is not a tuple");
    size_t end = text_.find(')', at);
    if (end == std::string::npos) fail("unterminated tuple for '" + key + "'");
    std::vector<int64_t> values;
    std::string item;
    std::istringstream items(text_.substr(at + 1, end - at - 1));
    while (std::getline(items, item, ',')) {
      size_t first = item.find_first_not_of(" \t");
      if (first == std::string::npos) continue;  // the trailing comma of a 1-tuple
      size_t last = item.find_last_not_of(" \tL");
      std::string digits = item.substr(first, last - first + 1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18)
        fail("'" + key + "' holds \"" + digits + "\", not a non-negative integer");
      values.push_back(std::stoll(digits));
    }
    return values;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(path_ + ": malformed .npy header: " + message);
  }

private:
  size_t valueStart(const std::string& key) {
    size_t at = std::string::npos;
    for (const char* quote : {"'", "\""}) {
      at = text_.find(quote + key + quote);
      if (at != std::string::npos) break;
    }
    if (at == std::string::npos) fail("no '" + key + "' entry");
    size_t colon = text_.find(':', at + key.size() + 2);
    if (colon == std::string::npos) fail("no value for '" + key + "'");
    size_t value = text_.find_first_not_of(" \t", colon + 1);
    if (value == std::string::npos) fail("no value for '" + key + "'");
    return value;
  }

  std::string text_;
  const std::string& path_;
};

}  // namespace

NDArray readNpy(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << stream.rdbuf();
  return parseNpy(buffer.str(), path);
}

NDArray parseNpy(const std::string& contents, const std::string& path) {
  if (contents.size() < kMagicBytes + 4 || contents.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
    throw Error(path + ": not a .npy file (no \\x93NUMPY magic)");
  auto byteAt = [&](size_t i) { return static_cast<uint8_t>(contents[i]); };
  int major = byteAt(6);
  size_t headerLength = 0;
  size_t headerStart = 0;
  if (major == 1) {
    headerLength = byteAt(8) | (size_t(byteAt(9)) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (contents.size() < 12) throw Error(path + ": truncated .npy header");
    headerLength = byteAt(8) | (size_t(byteAt(9)) << 8) | (size_t(byteAt(10)) << 16) | (size_t(byteAt(11)) << 24);
    headerStart = 12;
  } else {
    throw Error(path + ": unsupported .npy format version " + std::to_string(major));
  }
  if (contents.size() < headerStart + headerLength) throw Error(path + ": truncated .npy header");

  HeaderParser header(contents.substr(headerStart, headerLength), path);
  std::string descriptor = header.stringValue("descr");
  auto dtype = typeOfDescriptor(descriptor);
  if (!dtype) throw Error(path + ": unsupported element type '" + descriptor + "' (expected little-endian bool, int, uint or float)");
  if (header.boolValue("fortran_order")) throw Error(path + ": Fortran-order arrays are not supported; save a C-order array");
  std::vector<int64_t> shape = header.tupleValue("shape");

  int64_t elements = 1;
  for (int64_t extent : shape) {
    if (extent != 0 && elements > std::numeric_limits<int64_t>::max() / dtype->bytes() / extent)
      throw Error(path + ": shape is too large");
    elements *= extent;
  }
  size_t dataBytes = static_cast<size_t>(elements * dtype->bytes());
  size_t dataStart = headerStart + headerLength;
  if (contents.size() - dataStart != dataBytes)
    throw Error(path + ": holds " + std::to_string(contents.size() - dataStart) + " data bytes, its header (" +
                descriptor + ", " + std::to_string(shape.size()) + " dimensions) needs " + std::to_string(dataBytes));
  NDArray array = NDArray::empty(shape, *dtype);
  array.copyFrom(contents.data() + dataStart, dataBytes);
  return array;
}

void writeNpy(const std::string& path, const NDArray& array) {
  if (!array.defined()) throw Error(path + ": cannot write an undefined array");
  auto descriptor = npyDescriptor(array.dtype());
  if (!descriptor) throw Error(path + ": " + array.dtype().toString() + " has no .npy equivalent");

  std::string shape = "(";
  for (int64_t extent : array.shape()) shape += std::to_string(extent) + ", ";
  if (array.ndim() > 1) shape.resize(shape.size() - 2);
  else if (array.ndim() == 1) shape.resize(shape.size() - 1);  // keep the comma of a 1-tuple
  shape += ")";
  std::string header = "{'descr': '" + *descriptor + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and end with a newline so that the data starts 64-byte aligned, as NumPy does.
  size_t unpadded = kMagicBytes + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) throw Error(path + ": shape too long for a version 1.0 header");

  std::vector<char> data(static_cast<size_t>(array.byteSize()));
  array.copyTo(data.data(), data.size());
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) throw Error(path + ": cannot create: " + std::strerror(errno));
  stream.write(kMagic, kMagicBytes);
  const char version[2] = {1, 0};
  stream.write(version, 2);
  const char length[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  stream.write(length, 2);
  stream.write(header.data(), std::streamsize(header.size()));
  stream.write(data.data(), std::streamsize(data.size()));
  if (!stream.flush()) throw Error(path + ": write failed");
}

}  // namespace tessel::runtime
