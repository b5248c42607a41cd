// Lexer, parser and printer for schedule text.
#include "compiler/schedule/TraceText.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>

namespace tessel {

namespace {

struct Token {
  enum class Kind { Name, Integer, String, Symbol, End } kind = Kind::End;
  std::string text;
  int64_t value = 0;
  int column = 0;  // 1-based
};

Diagnostic textError(int line, int column, std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), "schedule", line, column, std::move(hint)};
}

// Splits one line into tokens; stops at '#'.
Expected<std::vector<Token>> tokenize(const std::string& line, int lineNumber) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '#') break;
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    Token token;
    token.column = int(i) + 1;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.'))
        ++i;
      token.kind = Token::Kind::Name;
      token.text = line.substr(start, i - start);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1])))) {
      size_t start = i++;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      token.kind = Token::Kind::Integer;
      token.text = line.substr(start, i - start);
      auto result = std::from_chars(token.text.data(), token.text.data() + token.text.size(), token.value);
      if (result.ec != std::errc())
        return textError(lineNumber, token.column, "number " + token.text + " is out of range");
      if (i < line.size() && (std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '.'))
        return textError(lineNumber, int(i) + 1, "unexpected '" + std::string(1, line[i]) + "' after a number");
    } else if (c == '"') {
      size_t start = ++i;
      while (i < line.size() && line[i] != '"') ++i;
      if (i == line.size()) return textError(lineNumber, token.column, "unterminated string", "add a closing \"");
      if (i == start) return textError(lineNumber, token.column, "empty name \"\"", "a quoted name needs a character");
      token.kind = Token::Kind::String;
      token.text = line.substr(start, i - start);
      ++i;
    } else if (std::string("(),=[]").find(c) != std::string::npos) {
      token.kind = Token::Kind::Symbol;
      token.text = std::string(1, c);
      ++i;
    } else {
      return textError(lineNumber, token.column, "unexpected character '" + std::string(1, c) + "'");
    }
    tokens.push_back(std::move(token));
  }
  Token end;
  end.column = int(line.size()) + 1;
  tokens.push_back(end);
  return tokens;
}

// One argument of a call: positional or keyword, a name, number or list of names.
struct Argument {
  std::string keyword;
  Token value;                     // Name, Integer or String
  std::vector<std::string> list;   // for [a, b]
  bool isList = false;
  int column = 0;
};

class LineParser {
public:
  LineParser(std::vector<Token> tokens, int line) : tokens_(std::move(tokens)), line_(line) {}

  Expected<std::optional<Primitive>> parse() {
    if (peek().kind == Token::Kind::End) return std::optional<Primitive>();
    Primitive p;
    p.location = {line_, peek().column};
    // Optional "a, b, c =" before the call.
    std::vector<std::string> results;
    size_t save = position_;
    bool hasResults = false;
    if (peek().kind == Token::Kind::Name) {
      std::vector<std::string> names;
      while (true) {
        if (peek().kind != Token::Kind::Name) break;
        names.push_back(next().text);
        if (isSymbol(peek(), ",")) { next(); continue; }
        if (isSymbol(peek(), "=")) { next(); hasResults = true; results = names; }
        break;
      }
    }
    if (!hasResults) position_ = save;
    const Token& nameToken = peek();
    if (nameToken.kind != Token::Kind::Name)
      return error(nameToken, "expected a primitive name such as split or vectorize");
    auto kind = parsePrimitiveName(nameToken.text);
    if (!kind)
      return error(nameToken, "unknown primitive '" + nameToken.text + "'",
                   "known: split, fuse, reorder, tile, vectorize, unroll, parallel, compute_at, compute_inline, "
                   "compute_root, cache_read, cache_write, rfactor, storage_align, pragma, bind, tensorize");
    next();
    p.kind = *kind;
    p.location.column = nameToken.column;
    if (!isSymbol(peek(), "(")) return error(peek(), "expected '(' after " + nameToken.text);
    next();
    std::vector<Argument> args;
    if (!isSymbol(peek(), ")")) {
      while (true) {
        auto arg = parseArgument();
        if (!arg) return arg.error();
        args.push_back(*arg);
        if (isSymbol(peek(), ",")) { next(); continue; }
        break;
      }
    }
    if (!isSymbol(peek(), ")")) return error(peek(), "expected ',' or ')'");
    int closeColumn = next().column;
    if (peek().kind != Token::Kind::End) return error(peek(), "unexpected text after the closing ')'",
                                                      "one primitive per line");
    auto status = fill(p, args, results, closeColumn);
    if (!status) return status.error();
    return std::optional<Primitive>(p);
  }

private:
  static bool isSymbol(const Token& t, const char* s) { return t.kind == Token::Kind::Symbol && t.text == s; }
  const Token& peek() const { return tokens_[position_]; }
  const Token& next() { return tokens_[position_ < tokens_.size() - 1 ? position_++ : position_]; }
  Diagnostic error(const Token& at, std::string message, std::string hint = "") const {
    return textError(line_, at.column, std::move(message), std::move(hint));
  }

  Expected<Argument> parseArgument() {
    Argument arg;
    arg.column = peek().column;
    if (peek().kind == Token::Kind::Name && isSymbol(tokens_[position_ + 1], "=")) {
      arg.keyword = next().text;
      next();
    }
    if (isSymbol(peek(), "[")) {
      next();
      arg.isList = true;
      while (!isSymbol(peek(), "]")) {
        if (peek().kind != Token::Kind::Name) return error(peek(), "expected a stage name in the list");
        arg.list.push_back(next().text);
        if (isSymbol(peek(), ",")) next();
        else if (!isSymbol(peek(), "]")) return error(peek(), "expected ',' or ']'");
      }
      next();
      return arg;
    }
    if (peek().kind == Token::Kind::Name || peek().kind == Token::Kind::Integer ||
        peek().kind == Token::Kind::String) {
      arg.value = next();
      return arg;
    }
    return error(peek(), "expected a name, a number or a list");
  }

  // Maps call arguments to the primitive's fields; each primitive documents its shape.
  Status fill(Primitive& p, const std::vector<Argument>& args, const std::vector<std::string>& results,
              int closeColumn) {
    const char* name = primitiveName(p.kind);
    std::vector<const Argument*> positional;
    std::vector<const Argument*> keywords;
    for (auto& arg : args) (arg.keyword.empty() ? positional : keywords).push_back(&arg);
    auto nameAt = [&](size_t i, const char* what) -> Expected<std::string> {
      if (i >= positional.size())
        return textError(line_, closeColumn, std::string(name) + " is missing its " + what, usage(p.kind));
      const Argument& arg = *positional[i];
      if (arg.isList || arg.value.kind == Token::Kind::Integer)
        return textError(line_, arg.column, std::string(name) + ": expected " + what + " here", usage(p.kind));
      return arg.value.text;
    };
    auto intArg = [&](const Argument& arg, const char* what) -> Expected<int64_t> {
      if (arg.isList || arg.value.kind != Token::Kind::Integer)
        return textError(line_, arg.column, std::string(name) + ": " + what + " must be an integer", usage(p.kind));
      return arg.value.value;
    };
    auto expectResults = [&](size_t count) -> Status {
      if (results.size() == count) return Status::success();
      if (count == 0)
        return textError(line_, p.location.column, std::string(name) + " creates nothing to name",
                         "remove the names before '='");
      return textError(line_, p.location.column,
                       std::string(name) + " creates " + std::to_string(count) + " name" + (count > 1 ? "s" : "") +
                           "; write them before '='",
                       usage(p.kind));
    };
    auto noMoreThan = [&](size_t count) -> Status {
      if (positional.size() <= count) return Status::success();
      return textError(line_, positional[count]->column, std::string(name) + " takes no more arguments here",
                       usage(p.kind));
    };
    auto unknownKeyword = [&](const Argument& arg) {
      return textError(line_, arg.column, std::string(name) + " has no argument named '" + arg.keyword + "'",
                       usage(p.kind));
    };

    auto stage = nameAt(0, "stage name");
    if (!stage) return stage.error();
    p.stage = *stage;

    switch (p.kind) {
      case PrimitiveKind::Split: {
        auto axis = nameAt(1, "loop name");
        if (!axis) return axis.error();
        p.axes = {*axis};
        if (positional.size() == 3) {
          auto factor = intArg(*positional[2], "the factor");
          if (!factor) return factor.error();
          p.values = {*factor};
        }
        if (Status s = noMoreThan(3); !s) return s;
        for (auto* kw : keywords) {
          if (kw->keyword != "factor" && kw->keyword != "nparts") return unknownKeyword(*kw);
          if (!p.values.empty())
            return textError(line_, kw->column, "split takes one factor or nparts, not both", usage(p.kind));
          auto v = intArg(*kw, kw->keyword.c_str());
          if (!v) return v.error();
          p.values = {*v};
          p.byParts = kw->keyword == "nparts";
        }
        if (p.values.empty()) return textError(line_, closeColumn, "split needs factor=N or nparts=N", usage(p.kind));
        if (Status s = expectResults(2); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::Fuse:
      case PrimitiveKind::Reorder: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        for (size_t i = 1; i < positional.size(); ++i) {
          auto axis = nameAt(i, "loop name");
          if (!axis) return axis.error();
          p.axes.push_back(*axis);
        }
        if (p.axes.size() < 2)
          return textError(line_, closeColumn, std::string(name) + " needs at least two loops", usage(p.kind));
        size_t count = p.kind == PrimitiveKind::Fuse ? 1 : 0;
        if (Status s = expectResults(count); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::Tile: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        for (size_t i = 1; i <= 2; ++i) {
          auto axis = nameAt(i, "loop name");
          if (!axis) return axis.error();
          p.axes.push_back(*axis);
        }
        for (size_t i = 3; i <= 4; ++i) {
          if (i >= positional.size()) return textError(line_, closeColumn, "tile needs two factors", usage(p.kind));
          auto v = intArg(*positional[i], "a tile factor");
          if (!v) return v.error();
          p.values.push_back(*v);
        }
        if (Status s = noMoreThan(5); !s) return s;
        if (Status s = expectResults(4); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::Vectorize:
      case PrimitiveKind::Unroll:
      case PrimitiveKind::Parallel: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        auto axis = nameAt(1, "loop name");
        if (!axis) return axis.error();
        p.axes = {*axis};
        if (Status s = noMoreThan(2); !s) return s;
        return expectResults(0);
      }
      case PrimitiveKind::ComputeAt: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        auto target = nameAt(1, "consumer stage");
        if (!target) return target.error();
        auto axis = nameAt(2, "loop of the consumer");
        if (!axis) return axis.error();
        p.target = *target;
        p.axes = {*axis};
        if (Status s = noMoreThan(3); !s) return s;
        return expectResults(0);
      }
      case PrimitiveKind::ComputeInline:
      case PrimitiveKind::ComputeRoot:
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        if (Status s = noMoreThan(1); !s) return s;
        return expectResults(0);
      case PrimitiveKind::CacheRead: {
        auto scope = nameAt(1, "storage scope");
        if (!scope) return scope.error();
        p.target = *scope;
        const Argument* readers = positional.size() > 2 ? positional[2] : nullptr;
        for (auto* kw : keywords) {
          if (kw->keyword != "readers") return unknownKeyword(*kw);
          readers = kw;
        }
        if (!readers || !readers->isList)
          return textError(line_, readers ? readers->column : closeColumn,
                           "cache_read needs the list of stages that read the copy", usage(p.kind));
        p.readers = readers->list;
        if (Status s = noMoreThan(3); !s) return s;
        if (Status s = expectResults(1); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::CacheWrite: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        auto scope = nameAt(1, "storage scope");
        if (!scope) return scope.error();
        p.target = *scope;
        if (Status s = noMoreThan(2); !s) return s;
        if (Status s = expectResults(1); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::Rfactor: {
        auto axis = nameAt(1, "reduction loop name");
        if (!axis) return axis.error();
        p.axes = {*axis};
        if (positional.size() > 2) {
          auto factor = intArg(*positional[2], "the factor");
          if (!factor) return factor.error();
          p.values = {*factor};
        }
        for (auto* kw : keywords) {
          if (kw->keyword != "factor") return unknownKeyword(*kw);
          auto v = intArg(*kw, "factor");
          if (!v) return v.error();
          p.values = {*v};
        }
        if (p.values.empty()) return textError(line_, closeColumn, "rfactor needs a factor", usage(p.kind));
        if (Status s = noMoreThan(3); !s) return s;
        if (Status s = expectResults(1); !s) return s;
        p.results = results;
        return Status::success();
      }
      case PrimitiveKind::StorageAlign: {
        auto axis = nameAt(1, "axis name");
        if (!axis) return axis.error();
        p.axes = {*axis};
        int64_t factor = -1, offset = -1;
        for (size_t i = 2; i < positional.size() && i < 4; ++i) {
          auto v = intArg(*positional[i], i == 2 ? "the factor" : "the offset");
          if (!v) return v.error();
          (i == 2 ? factor : offset) = *v;
        }
        for (auto* kw : keywords) {
          if (kw->keyword != "factor" && kw->keyword != "offset") return unknownKeyword(*kw);
          auto v = intArg(*kw, kw->keyword.c_str());
          if (!v) return v.error();
          (kw->keyword == "factor" ? factor : offset) = *v;
        }
        if (factor < 0 || offset < 0)
          return textError(line_, closeColumn, "storage_align needs a factor and an offset", usage(p.kind));
        p.values = {factor, offset};
        if (Status s = noMoreThan(4); !s) return s;
        return expectResults(0);
      }
      case PrimitiveKind::Pragma: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        auto axis = nameAt(1, "loop name");
        if (!axis) return axis.error();
        auto pragmaName = nameAt(2, "pragma name");
        if (!pragmaName) return pragmaName.error();
        p.axes = {*axis};
        p.target = *pragmaName;
        if (positional.size() > 3) {
          auto v = intArg(*positional[3], "the pragma value");
          if (!v) return v.error();
          p.values = {*v};
        }
        if (Status s = noMoreThan(4); !s) return s;
        return expectResults(0);
      }
      case PrimitiveKind::Bind:
      case PrimitiveKind::Tensorize: {
        if (!keywords.empty()) return unknownKeyword(*keywords[0]);
        auto axis = nameAt(1, "loop name");
        if (!axis) return axis.error();
        auto tag = nameAt(2, p.kind == PrimitiveKind::Bind ? "thread tag" : "tensor intrinsic");
        if (!tag) return tag.error();
        p.axes = {*axis};
        p.target = *tag;
        if (Status s = noMoreThan(3); !s) return s;
        return expectResults(0);
      }
    }
    return Status::success();
  }

  static std::string usage(PrimitiveKind kind) {
    switch (kind) {
      case PrimitiveKind::Split: return "usage: outer, inner = split(STAGE, LOOP, factor=N) or nparts=N";
      case PrimitiveKind::Fuse: return "usage: fused = fuse(STAGE, LOOP, LOOP, ...)";
      case PrimitiveKind::Reorder: return "usage: reorder(STAGE, LOOP, LOOP, ...)";
      case PrimitiveKind::Tile: return "usage: xo, yo, xi, yi = tile(STAGE, X, Y, X_FACTOR, Y_FACTOR)";
      case PrimitiveKind::Vectorize: return "usage: vectorize(STAGE, LOOP)";
      case PrimitiveKind::Unroll: return "usage: unroll(STAGE, LOOP)";
      case PrimitiveKind::Parallel: return "usage: parallel(STAGE, LOOP)";
      case PrimitiveKind::ComputeAt: return "usage: compute_at(STAGE, CONSUMER, CONSUMER_LOOP)";
      case PrimitiveKind::ComputeInline: return "usage: compute_inline(STAGE)";
      case PrimitiveKind::ComputeRoot: return "usage: compute_root(STAGE)";
      case PrimitiveKind::CacheRead: return "usage: COPY = cache_read(TENSOR, SCOPE, [READER, ...])";
      case PrimitiveKind::CacheWrite: return "usage: CACHE = cache_write(STAGE, SCOPE)";
      case PrimitiveKind::Rfactor: return "usage: PARTIAL = rfactor(STAGE, REDUCTION_LOOP, FACTOR)";
      case PrimitiveKind::StorageAlign: return "usage: storage_align(STAGE, AXIS, FACTOR, OFFSET)";
      case PrimitiveKind::Pragma: return "usage: pragma(STAGE, LOOP, NAME[, VALUE])";
      case PrimitiveKind::Bind: return "usage: bind(STAGE, LOOP, threadIdx.x)";
      case PrimitiveKind::Tensorize: return "usage: tensorize(STAGE, LOOP, INTRINSIC), e.g. dot_16x4_u8i8";
    }
    return "";
  }

  std::vector<Token> tokens_;
  size_t position_ = 0;
  int line_;
};

// A name as the tokenizer reads it back: bare when it is one Name token, else in quotes (a
// stage or loop named after an ONNX node may hold '/', '-' or ':').
std::string quotedIfNeeded(const std::string& name) {
  bool bare = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  return bare ? name : "\"" + name + "\"";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

Expected<Trace> parseTraceText(const std::string& text) {
  Trace trace;
  std::istringstream lines(text);
  std::string line;
  int lineNumber = 0;
  while (std::getline(lines, line)) {
    ++lineNumber;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto tokens = tokenize(line, lineNumber);
    if (!tokens) return tokens.error();
    auto primitive = LineParser(std::move(*tokens), lineNumber).parse();
    if (!primitive) return primitive.error();
    if (*primitive) trace.primitives.push_back(**primitive);
  }
  return trace;
}

std::string printPrimitive(const Primitive& p) {
  std::string out;
  if (!p.results.empty()) out += joined(p.results) + " = ";
  out += primitiveName(p.kind);
  out += "(" + quotedIfNeeded(p.stage);
  auto add = [&](const std::string& s) { out += ", " + s; };
  auto addName = [&](const std::string& s) { add(quotedIfNeeded(s)); };
  switch (p.kind) {
    case PrimitiveKind::Split:
      addName(p.axes.empty() ? "" : p.axes[0]);
      add(std::string(p.byParts ? "nparts=" : "factor=") + std::to_string(p.values.empty() ? 0 : p.values[0]));
      break;
    case PrimitiveKind::ComputeAt:
      addName(p.target);
      for (auto& a : p.axes) addName(a);
      break;
    case PrimitiveKind::CacheRead:
      addName(p.target);
      add("[" + joined(p.readers) + "]");
      break;
    case PrimitiveKind::CacheWrite: addName(p.target); break;
    case PrimitiveKind::Pragma:
    case PrimitiveKind::Bind:
    case PrimitiveKind::Tensorize:
      for (auto& a : p.axes) addName(a);
      addName(p.target);
      for (auto v : p.values) add(std::to_string(v));
      break;
    default:
      for (auto& a : p.axes) addName(a);
      for (auto v : p.values) add(std::to_string(v));
      break;
  }
  return out + ")";
}

std::string printTraceText(const Trace& trace) {
  std::string out;
  for (auto& p : trace.primitives) out += printPrimitive(p) + "\n";
  return out;
}

}  // namespace tessel
