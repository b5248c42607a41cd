#include "views/common/AnimatedPng.h"

#include <QBuffer>
#include <QFile>
#include <QSaveFile>

#include <array>
#include <cstdint>

namespace tessel::views {

namespace {

uint32_t crc32(const QByteArray& bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (char byte : bytes) c = table[(c ^ uint8_t(byte)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void appendU32(QByteArray& out, uint32_t value) {
  out.append(char(value >> 24)).append(char(value >> 16)).append(char(value >> 8)).append(char(value));
}
void appendU16(QByteArray& out, uint16_t value) { out.append(char(value >> 8)).append(char(value)); }

uint32_t readU32(const QByteArray& bytes, qsizetype at) {
  return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
         (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
}

void appendChunk(QByteArray& out, const char* type, const QByteArray& data) {
  appendU32(out, uint32_t(data.size()));
  QByteArray typed = QByteArray(type, 4) + data;
  out.append(typed);
  appendU32(out, crc32(typed));
}

struct PngParts {
  QByteArray header;            ///< IHDR's data.
  std::vector<QByteArray> data;  ///< Each IDAT's data, in order.
};

bool splitPng(const QByteArray& png, PngParts* parts) {
  qsizetype at = 8;  // after the signature
  while (at + 12 <= png.size()) {
    uint32_t length = readU32(png, at);
    QByteArray type = png.mid(at + 4, 4);
    if (at + 12 + qsizetype(length) > png.size()) return false;
    QByteArray data = png.mid(at + 8, length);
    if (type == "IHDR") parts->header = data;
    if (type == "IDAT") parts->data.push_back(data);
    at += 12 + length;
  }
  return !parts->header.isEmpty() && !parts->data.empty();
}

QByteArray frameControl(uint32_t sequence, const QSize& size, int milliseconds) {
  QByteArray control;
  appendU32(control, sequence);
  appendU32(control, uint32_t(size.width()));
  appendU32(control, uint32_t(size.height()));
  appendU32(control, 0);  // x offset
  appendU32(control, 0);  // y offset
  appendU16(control, uint16_t(std::min(milliseconds, 65535)));
  appendU16(control, 1000);  // delay denominator: milliseconds
  control.append(char(0));   // dispose: none (every frame covers the whole canvas)
  control.append(char(0));   // blend: source
  return control;
}

}  // namespace

Status writeAnimatedPng(const QString& path, const std::vector<QImage>& frames, int frameMilliseconds,
                        int lastFrameMilliseconds) {
  auto problem = [&](const QString& message) {
    return Status(Diagnostic{message.toStdString(), path.toStdString(), 0, 0, ""});
  };
  if (frames.empty()) return problem("there are no frames to write");
  const QSize size = frames.front().size();
  QByteArray out("\x89PNG\r\n\x1a\n", 8);
  uint32_t sequence = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].size() != size) return problem("the frames differ in size");
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!frames[i].convertToFormat(QImage::Format_ARGB32).save(&buffer, "PNG")) return problem("a frame could not be encoded");
    PngParts parts;
    if (!splitPng(png, &parts)) return problem("a frame could not be encoded");
    if (i == 0) {
      appendChunk(out, "IHDR", parts.header);
      QByteArray animation;
      appendU32(animation, uint32_t(frames.size()));
      appendU32(animation, 0);  // plays: forever
      appendChunk(out, "acTL", animation);
    }
    int milliseconds = i + 1 == frames.size() ? lastFrameMilliseconds : frameMilliseconds;
    appendChunk(out, "fcTL", frameControl(sequence++, size, milliseconds));
    for (const QByteArray& data : parts.data) {
      if (i == 0) {
        appendChunk(out, "IDAT", data);  // the first frame doubles as the still image
      } else {
        QByteArray frameData;
        appendU32(frameData, sequence++);
        frameData.append(data);
        appendChunk(out, "fdAT", frameData);
      }
    }
  }
  appendChunk(out, "IEND", {});
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(out) != out.size() || !file.commit())
    return problem("cannot write the file: " + file.errorString());
  return Status::success();
}

}  // namespace tessel::views
