// Calling packed functions and checking their arguments.
#include "runtime/PackedFunc.h"

namespace tessel::runtime {

const Value& PackedArgs::operator[](size_t index) const {
  if (index >= values_.size())
    throw Error(functionName_ + ": argument " + std::to_string(index + 1) + " requested but only " +
                std::to_string(values_.size()) + " given");
  return values_[index];
}

void PackedArgs::expectCount(size_t count) const {
  if (values_.size() != count)
    throw Error(functionName_ + ": expected " + std::to_string(count) + " argument" + (count == 1 ? "" : "s") +
                ", got " + std::to_string(values_.size()));
}

const std::string& PackedFunc::name() const {
  static const std::string emptyName;
  return state_ ? state_->name : emptyName;
}

Value PackedFunc::callPacked(std::span<const Value> arguments) const {
  if (!state_) throw Error("called an empty PackedFunc (a function that was not found?)");
  return state_->body(PackedArgs(arguments, state_->name));
}

}  // namespace tessel::runtime
