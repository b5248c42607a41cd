// Type-erased functions over Values: how modules expose kernels and how tools call them.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "runtime/Error.h"
#include "runtime/Value.h"

namespace tessel::runtime {

/// The arguments of one call, with the function's name so that errors can say whose
/// argument was wrong.
class PackedArgs {
public:
  PackedArgs(std::span<const Value> values, const std::string& functionName)
      : values_(values), functionName_(functionName) {}

  size_t size() const { return values_.size(); }
  /// Argument `index`; Error when the call has fewer arguments.
  const Value& operator[](size_t index) const;
  /// Argument `index` converted to T; Error naming the function and the argument on a kind
  /// mismatch ("add: argument 2 expected an int but got string \"x\"").
  template <class T>
  T get(size_t index) const {
    try {
      return (*this)[index].template as<T>();
    } catch (const Error& error) {
      throw Error(functionName_ + ": argument " + std::to_string(index + 1) + " " + error.what());
    }
  }
  /// Error unless exactly `count` arguments were passed.
  void expectCount(size_t count) const;

  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }

private:
  std::span<const Value> values_;
  const std::string& functionName_;
};

namespace detail {
/// Argument and result types of a lambda, functor or function pointer.
template <class F>
struct CallableTraits : CallableTraits<decltype(&F::operator())> {};
template <class R, class... A>
struct CallableTraits<R (*)(A...)> {
  using Result = R;
  using Arguments = std::tuple<std::decay_t<A>...>;
};
template <class C, class R, class... A>
struct CallableTraits<R (C::*)(A...) const> : CallableTraits<R (*)(A...)> {};
template <class C, class R, class... A>
struct CallableTraits<R (C::*)(A...)> : CallableTraits<R (*)(A...)> {};
}  // namespace detail

/// A named function over Values. Empty (false) when default-constructed; calling an empty
/// function throws Error. Copies share the callable.
class PackedFunc {
public:
  using Body = std::function<Value(PackedArgs)>;

  PackedFunc() = default;
  /// A function that unpacks its arguments itself (see PackedArgs::get / expectCount).
  PackedFunc(std::string name, Body body)
      : state_(std::make_shared<State>(State{std::move(name), std::move(body)})) {}

  /// Wraps a typed callable: the argument count and each argument's kind are checked and
  /// converted with Value::as; a void result becomes a None value.
  ///   PackedFunc add = PackedFunc::fromTyped("add", [](int64_t a, double b) { return a + b; });
  template <class F>
  static PackedFunc fromTyped(std::string name, F callable) {
    using Traits = detail::CallableTraits<std::decay_t<F>>;
    return fromTypedImpl<typename Traits::Result>(std::move(name), std::move(callable),
                                                 static_cast<typename Traits::Arguments*>(nullptr));
  }

  explicit operator bool() const { return state_ != nullptr; }
  /// The name given at construction; empty for an empty function.
  const std::string& name() const;

  /// Calls with already packed arguments.
  Value callPacked(std::span<const Value> arguments) const;

  /// Calls with any arguments a Value can hold: f(array, 3, 0.5, "relu").
  template <class... Arguments>
  Value operator()(Arguments&&... arguments) const {
    std::array<Value, sizeof...(Arguments)> packed{Value(std::forward<Arguments>(arguments))...};
    return callPacked(packed);
  }

private:
  struct State {
    std::string name;
    Body body;
  };

  template <class Result, class F, class... A>
  static PackedFunc fromTypedImpl(std::string name, F callable, std::tuple<A...>*) {
    return PackedFunc(std::move(name), [callable = std::move(callable)](PackedArgs args) -> Value {
      args.expectCount(sizeof...(A));
      return [&]<size_t... I>(std::index_sequence<I...>) -> Value {
        if constexpr (std::is_void_v<Result>) {
          callable(args.get<A>(I)...);
          return Value();
        } else {
          return Value(callable(args.get<A>(I)...));
        }
      }(std::index_sequence_for<A...>{});
    });
  }

  std::shared_ptr<const State> state_;
};

}  // namespace tessel::runtime
