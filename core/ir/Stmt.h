// Statements of the loop IR and PrimFunc, the unit of code generation.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "core/ir/Expr.h"

namespace tessel {

struct StmtNode;
struct PrimFuncNode;

/// Handle to an immutable statement node.
class Stmt : public NodeHandle {
public:
  Stmt() = default;
  explicit Stmt(const StmtNode* node);
  const StmtNode* get() const;
  const StmtNode* operator->() const { return get(); }
};

struct StmtNode : Node {
  using Node::Node;
};

enum class ForKind : uint8_t {
  Serial,
  Parallel,       ///< Iterations run on the runtime thread pool.
  Vectorized,     ///< Turned into vector instructions (constant extent required).
  Unrolled,       ///< Replicated body (constant extent required).
  ThreadBinding,  ///< Bound to a GPU thread index (threadTag); reserved for GPU targets.
};
const char* forKindName(ForKind kind);

struct ForNode : StmtNode {
  TESSEL_DECLARE_NODE(For);
  ForNode(Var loopVar, Expr min, Expr extent, ForKind forKind, Stmt body, std::string threadTag)
      : StmtNode(kKind), loopVar(std::move(loopVar)), min(std::move(min)), extent(std::move(extent)),
        forKind(forKind), body(std::move(body)), threadTag(std::move(threadTag)) {}
  const Var loopVar;
  const Expr min, extent;
  const ForKind forKind;
  const Stmt body;
  const std::string threadTag;  ///< "threadIdx.x" etc. for ThreadBinding; empty otherwise.
  static Stmt make(Var loopVar, Expr min, Expr extent, ForKind forKind, Stmt body,
                   std::string threadTag = {});
  auto fields() const { return std::tie(loopVar, min, extent, forKind, body, threadTag); }
};

/// Memory for `buffer` (its shape gives the size) live during `body`.
struct AllocateNode : StmtNode {
  TESSEL_DECLARE_NODE(Allocate);
  AllocateNode(Buffer buffer, Stmt body) : StmtNode(kKind), buffer(std::move(buffer)), body(std::move(body)) {}
  const Buffer buffer;
  const Stmt body;
  static Stmt make(Buffer buffer, Stmt body);
  auto fields() const { return std::tie(buffer, body); }
};

struct IfThenElseNode : StmtNode {
  TESSEL_DECLARE_NODE(IfThenElse);
  IfThenElseNode(Expr condition, Stmt thenCase, Stmt elseCase)
      : StmtNode(kKind), condition(std::move(condition)), thenCase(std::move(thenCase)),
        elseCase(std::move(elseCase)) {}
  const Expr condition;
  const Stmt thenCase;
  const Stmt elseCase;  ///< May be undefined.
  static Stmt make(Expr condition, Stmt thenCase, Stmt elseCase = Stmt());
  auto fields() const { return std::tie(condition, thenCase, elseCase); }
};

struct SeqStmtNode : StmtNode {
  TESSEL_DECLARE_NODE(SeqStmt);
  explicit SeqStmtNode(std::vector<Stmt> seq) : StmtNode(kKind), seq(std::move(seq)) {}
  const std::vector<Stmt> seq;
  /// Flattens nested sequences and drops undefined entries; one entry returns it alone.
  static Stmt make(std::vector<Stmt> seq);
  auto fields() const { return std::tie(seq); }
};

struct LetStmtNode : StmtNode {
  TESSEL_DECLARE_NODE(LetStmt);
  LetStmtNode(Var var, Expr value, Stmt body)
      : StmtNode(kKind), var(std::move(var)), value(std::move(value)), body(std::move(body)) {}
  const Var var;
  const Expr value;
  const Stmt body;
  static Stmt make(Var var, Expr value, Stmt body);
  auto fields() const { return std::tie(var, value, body); }
};

struct EvaluateNode : StmtNode {
  TESSEL_DECLARE_NODE(Evaluate);
  explicit EvaluateNode(Expr value) : StmtNode(kKind), value(std::move(value)) {}
  const Expr value;
  static Stmt make(Expr value);
  auto fields() const { return std::tie(value); }
};

/// An annotation on `body`: a pragma from the schedule ("pragma_unroll_explicit"), a
/// storage alignment, etc. Backends ignore keys they do not know.
struct AttrStmtNode : StmtNode {
  TESSEL_DECLARE_NODE(AttrStmt);
  AttrStmtNode(std::string key, Expr value, Stmt body)
      : StmtNode(kKind), key(std::move(key)), value(std::move(value)), body(std::move(body)) {}
  const std::string key;
  const Expr value;
  const Stmt body;
  static Stmt make(std::string key, Expr value, Stmt body);
  auto fields() const { return std::tie(key, value, body); }
};

/// buffer[indices...] = value.
struct BufferStoreNode : StmtNode {
  TESSEL_DECLARE_NODE(BufferStore);
  BufferStoreNode(Buffer buffer, Expr value, std::vector<Expr> indices)
      : StmtNode(kKind), buffer(std::move(buffer)), value(std::move(value)), indices(std::move(indices)) {}
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices);
  auto fields() const { return std::tie(buffer, value, indices); }
};

/// Before storage flattening: `buffer` holds the region `bounds` (one Range per dimension,
/// in the buffer's logical coordinates) during `body`.
struct BufferRealizeNode : StmtNode {
  TESSEL_DECLARE_NODE(BufferRealize);
  BufferRealizeNode(Buffer buffer, std::vector<Range> bounds, Stmt body)
      : StmtNode(kKind), buffer(std::move(buffer)), bounds(std::move(bounds)), body(std::move(body)) {}
  const Buffer buffer;
  const std::vector<Range> bounds;
  const Stmt body;
  static Stmt make(Buffer buffer, std::vector<Range> bounds, Stmt body);
  auto fields() const { return std::tie(buffer, bounds, body); }
};

/// A function over buffers: the unit that lowering produces and codegen compiles.
class PrimFunc : public NodeHandle {
public:
  PrimFunc() = default;
  explicit PrimFunc(const PrimFuncNode* node);
  PrimFunc(std::string name, std::vector<Buffer> params, Stmt body);
  const PrimFuncNode* get() const;
  const PrimFuncNode* operator->() const { return get(); }
};

struct PrimFuncNode : Node {
  static constexpr NodeKind kKind = NodeKind::PrimFunc;
  PrimFuncNode(std::string name, std::vector<Buffer> params, Stmt body)
      : Node(kKind), name(std::move(name)), params(std::move(params)), body(std::move(body)) {}
  const std::string name;
  const std::vector<Buffer> params;
  const Stmt body;
  auto fields() const { return std::tie(name, params, body); }
};

inline Stmt::Stmt(const StmtNode* node) : NodeHandle(node) {}
inline const StmtNode* Stmt::get() const { return static_cast<const StmtNode*>(NodeHandle::get()); }
inline PrimFunc::PrimFunc(const PrimFuncNode* node) : NodeHandle(node) {}
inline const PrimFuncNode* PrimFunc::get() const {
  return static_cast<const PrimFuncNode*>(NodeHandle::get());
}

}  // namespace tessel
