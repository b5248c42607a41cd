// The zip reading .npz needs: the central directory (zip64 where numpy writes it), each
// entry's local header, and inflate (zlib) for numpy.savez_compressed's entries.
#include "app/cli/NpzArchive.h"

#include <zlib.h>

#include <fstream>
#include <sstream>

#include "runtime/Npy.h"

namespace tessel::cli {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50, kZip64EndOfDirectory = 0x06064b50, kDirectoryEntry = 0x02014b50,
                   kLocalHeader = 0x04034b50;
constexpr uint16_t kStored = 0, kDeflated = 8, kZip64ExtraField = 0x0001;

class Bytes {
public:
  Bytes(const std::string& data, std::string path) : data_(data), path_(std::move(path)) {}
  bool has(uint64_t at, uint64_t count) const { return at <= data_.size() && count <= data_.size() - at; }
  uint64_t read(uint64_t at, int width) const {
    if (!has(at, uint64_t(width))) throw Diagnostic{"the zip archive is truncated", path_, 0, 0, "save it again"};
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) value = value << 8 | uint8_t(data_[size_t(at) + size_t(i)]);
    return value;
  }
  uint16_t u16(uint64_t at) const { return uint16_t(read(at, 2)); }
  uint32_t u32(uint64_t at) const { return uint32_t(read(at, 4)); }
  uint64_t u64(uint64_t at) const { return read(at, 8); }

private:
  const std::string& data_;
  std::string path_;
};

std::string inflateRaw(const std::string& compressed, uint64_t size, const std::string& where) {
  std::string out(size_t(size), '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) throw Diagnostic{"cannot start inflating", where, 0, 0, ""};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = uInt(compressed.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = uInt(out.size());
  int result = inflate(&stream, Z_FINISH);
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (result != Z_STREAM_END || produced != size)
    throw Diagnostic{"the compressed entry is corrupt", where, 0, 0, "save the archive again"};
  return out;
}

}  // namespace

Expected<std::vector<std::pair<std::string, runtime::NDArray>>> readNpz(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return Diagnostic{"cannot read the file", path, 0, 0, "check the path"};
  std::ostringstream buffer;
  buffer << stream.rdbuf();
  const std::string data = buffer.str();
  Bytes bytes(data, path);
  try {
    // The end-of-directory record is the last 22 bytes, before a comment of up to 64 KiB.
    if (data.size() < 22) throw Diagnostic{"not a zip archive (too short)", path, 0, 0, "write it with numpy.savez"};
    int64_t end = -1;
    for (int64_t at = int64_t(data.size()) - 22; at >= 0 && at >= int64_t(data.size()) - 22 - 65535; --at)
      if (bytes.u32(uint64_t(at)) == kEndOfDirectory) {
        end = at;
        break;
      }
    if (end < 0) throw Diagnostic{"not a zip archive (no end of directory)", path, 0, 0, "write it with numpy.savez"};
    uint64_t entries = bytes.u16(uint64_t(end) + 10), directory = bytes.u32(uint64_t(end) + 16);
    if (entries == 0xffff || directory == 0xffffffff) {
      // zip64: its locator sits just before the end record and points at the zip64 record.
      if (end < 20 || bytes.u32(uint64_t(end) - 20) != 0x07064b50)
        throw Diagnostic{"the zip64 directory locator is missing", path, 0, 0, ""};
      uint64_t record = bytes.u64(uint64_t(end) - 20 + 8);
      if (bytes.u32(record) != kZip64EndOfDirectory) throw Diagnostic{"the zip64 directory is corrupt", path, 0, 0, ""};
      entries = bytes.u64(record + 32);
      directory = bytes.u64(record + 48);
    }
    std::vector<std::pair<std::string, runtime::NDArray>> arrays;
    uint64_t at = directory;
    for (uint64_t i = 0; i < entries; ++i) {
      if (bytes.u32(at) != kDirectoryEntry) throw Diagnostic{"the zip directory is corrupt", path, 0, 0, ""};
      uint16_t method = bytes.u16(at + 10);
      uint64_t compressedSize = bytes.u32(at + 20), size = bytes.u32(at + 24), local = bytes.u32(at + 42);
      uint16_t nameLength = bytes.u16(at + 28), extraLength = bytes.u16(at + 30), commentLength = bytes.u16(at + 32);
      if (!bytes.has(at + 46, nameLength)) throw Diagnostic{"the zip archive is truncated", path, 0, 0, ""};
      std::string name = data.substr(size_t(at + 46), nameLength);
      // Sizes and offsets too large for 32 bits are in the zip64 extra field, in this order.
      for (uint64_t extra = at + 46 + nameLength; extra + 4 <= at + 46 + nameLength + extraLength;) {
        uint16_t id = bytes.u16(extra), length = bytes.u16(extra + 2);
        if (id == kZip64ExtraField) {
          uint64_t field = extra + 4;
          if (size == 0xffffffff) size = bytes.u64(field), field += 8;
          if (compressedSize == 0xffffffff) compressedSize = bytes.u64(field), field += 8;
          if (local == 0xffffffff) local = bytes.u64(field);
        }
        extra += 4 + uint64_t(length);
      }
      std::string where = path + ": " + name;
      if (bytes.u32(local) != kLocalHeader) throw Diagnostic{"the entry's local header is corrupt", where, 0, 0, ""};
      uint64_t start = local + 30 + bytes.u16(local + 26) + bytes.u16(local + 28);
      if (!bytes.has(start, compressedSize)) throw Diagnostic{"the entry is truncated", where, 0, 0, ""};
      std::string stored = data.substr(size_t(start), size_t(compressedSize));
      std::string contents;
      if (method == kStored) contents = std::move(stored);
      else if (method == kDeflated) contents = inflateRaw(stored, size, where);
      else
        throw Diagnostic{"the entry uses zip compression method " + std::to_string(method), where, 0, 0,
                         "write it with numpy.savez or numpy.savez_compressed"};
      std::string array = name.size() > 4 && name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
      try {
        arrays.emplace_back(array, runtime::parseNpy(contents, where));
      } catch (const std::exception& e) {
        throw Diagnostic{e.what(), "", 0, 0, ""};  // its message starts with `where`
      }
      at += 46 + uint64_t(nameLength) + extraLength + commentLength;
    }
    return arrays;
  } catch (const Diagnostic& diagnostic) {
    return diagnostic;
  }
}

}  // namespace tessel::cli
