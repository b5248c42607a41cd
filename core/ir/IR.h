// Convenience header: the whole loop IR vocabulary.
#pragma once

#include "core/ir/DataType.h"
#include "core/ir/Expr.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "core/ir/IRVisitor.h"
#include "core/ir/StructuralEqual.h"
#include "core/ir/Stmt.h"
#include "core/support/Error.h"
