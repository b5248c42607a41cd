// Stable, readable text for the loop IR: what the Studio shows and golden tests compare.
#pragma once

#include <ostream>
#include <string>

#include "core/ir/Stmt.h"

namespace tessel {

/// The infix spelling of a binary node kind (" + ", "//", ...), or null for kinds printed
/// as calls; and its binding strength (higher binds tighter; 10 for atoms and calls).
/// Shared by every printer of expressions, so they all read alike.
const char* infixSymbol(NodeKind kind);
int infixPrecedence(NodeKind kind);

std::string toString(const Expr& e);
std::string toString(const Stmt& s);
std::string toString(const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tessel
