// Checked access to packed-function values.
#include "runtime/Value.h"

namespace tessel::runtime {

const char* Value::kindName(Kind kind) {
  switch (kind) {
    case Kind::None: return "none";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::Pointer: return "pointer";
    case Kind::Array: return "array";
  }
  return "unknown";
}

std::string Value::describe() const {
  std::string name = kindName(kind());
  switch (kind()) {
    case Kind::None: return name;
    case Kind::Int: return name + " " + std::to_string(std::get<int64_t>(storage_));
    case Kind::Float: return name + " " + std::to_string(std::get<double>(storage_));
    case Kind::String: {
      const std::string& text = std::get<std::string>(storage_);
      return name + " \"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\"";
    }
    case Kind::Pointer: return name;
    case Kind::Array: return name + " " + std::get<NDArray>(storage_).describe();
  }
  return name;
}

void Value::throwKindMismatch(const char* expected) const {
  throw Error("expected " + std::string(expected) + " but got " + describe());
}

int64_t Value::asInt() const {
  if (kind() != Kind::Int) throwKindMismatch("an int");
  return std::get<int64_t>(storage_);
}

double Value::asDouble() const {
  if (kind() == Kind::Int) return static_cast<double>(std::get<int64_t>(storage_));
  if (kind() != Kind::Float) throwKindMismatch("a float");
  return std::get<double>(storage_);
}

const std::string& Value::asString() const {
  if (kind() != Kind::String) throwKindMismatch("a string");
  return std::get<std::string>(storage_);
}

void* Value::asPointer() const {
  if (kind() != Kind::Pointer) throwKindMismatch("a pointer");
  return std::get<void*>(storage_);
}

const NDArray& Value::asArray() const {
  if (kind() != Kind::Array) throwKindMismatch("an array");
  return std::get<NDArray>(storage_);
}

}  // namespace tessel::runtime
