// Stable, readable text for the loop IR: what the Studio shows and golden tests compare.
#pragma once

#include <ostream>
#include <string>

#include "core/ir/Stmt.h"

namespace tessel {

std::string toString(const Expr& e);
std::string toString(const Stmt& s);
std::string toString(const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tessel
