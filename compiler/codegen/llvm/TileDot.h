// The tile_u8i8 nest (compiler/transform/TileDotNest.h) as AMX code: the output tile's int32
// accumulators live in tile registers from the first product to the last, so the whole
// reduction costs one tdpbusd per 16 rows x 16 columns x 64 bytes and no accumulator traffic.
//
// Private to the LLVM backend. Written with LLVM's shape-carrying AMX intrinsics
// (tileloadd64/tdpbusd/tilestored64 ".internal"); LLVM assigns the eight tile registers and
// writes the tile configuration (ldtilecfg) itself. The rows are cut into groups of at most 16,
// the columns into tiles of 16, and each pass over the reduction computes at most 2 x 2 of
// them: four accumulators, two data tiles and two weight tiles, the eight registers there are,
// each loaded tile used twice.
#pragma once

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace tessel {

struct TileDotNest;

/// The nest's code with AMX. The three pointers (i8*) point at the accumulator, data and weight
/// elements of the nest's origin (accBase, dataBase, weightBase).
void emitTileDot(llvm::IRBuilderBase& builder, llvm::Module& module, const TileDotNest& nest, llvm::Value* acc,
                 llvm::Value* data, llvm::Value* weight);

}  // namespace tessel
