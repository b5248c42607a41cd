// Registration of the shape and data-movement operators; each family lives in its own
// Shape*Ops.cpp file.
#include "compiler/opdefs/OpRegistry.h"
#include "compiler/opdefs/ShapeOpSupport.h"

namespace tessel::graph {

void registerShapeOps(OpRegistry& registry) {
  shape_ops::registerReshapeOps(registry);
  shape_ops::registerIndexingOps(registry);
  shape_ops::registerGeneratorOps(registry);
  shape_ops::registerResizeOps(registry);
}

}  // namespace tessel::graph
