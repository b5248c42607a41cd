// AMX code for the tile_u8i8 nest, as TileDot.h describes.
#include "compiler/codegen/llvm/TileDot.h"

#include <algorithm>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

#include "compiler/transform/TileDotNest.h"
#include "core/support/Error.h"

namespace tessel {

namespace {

constexpr int64_t kTileRows = 16;     // rows of a tile register
constexpr int64_t kTileBytes = 64;    // bytes of a tile row
constexpr int64_t kTileColumns = 16;  // int32 accumulators of a tile row

// One tile's rows: where its first row starts in the accumulators and in the data (elements
// from the nest's origin), and how many rows it has.
struct Rows {
  int64_t accOffset, dataOffset, count;
};

// Each block's rows cut into the fewest groups of at most 16, as even as can be: a tdpbusd
// costs the same for 14 rows as for 16, so 28 rows are two tiles of 14, not 16 and 12.
std::vector<Rows> rowGroups(const TileDotNest& nest) {
  int64_t groups = (nest.rows + kTileRows - 1) / kTileRows;
  int64_t each = (nest.rows + groups - 1) / groups;
  std::vector<Rows> result;
  for (int64_t block = 0; block < nest.rowBlocks; ++block)
    for (int64_t first = 0; first < nest.rows; first += each)
      result.push_back({block * nest.accRowBlockStride + first * nest.accRowStride,
                        block * nest.dataRowBlockStride + first * nest.dataRowStride, std::min(each, nest.rows - first)});
  return result;
}

class TileEmitter {
public:
  TileEmitter(llvm::IRBuilderBase& builder, llvm::Module& module, const TileDotNest& nest)
      : b_(builder), module_(module), nest_(nest) {}

  void emit(llvm::Value* acc, llvm::Value* data, llvm::Value* weight) {
    std::vector<Rows> groups = rowGroups(nest_);
    int64_t columnTiles = nest_.columns / kTileColumns;
    for (size_t g = 0; g < groups.size(); g += 2)
      for (int64_t j = 0; j < columnTiles; j += 2) {
        std::vector<Rows> passRows(groups.begin() + long(g), groups.begin() + long(std::min(g + 2, groups.size())));
        std::vector<int64_t> passColumns;
        for (int64_t c = j; c < std::min(j + 2, columnTiles); ++c) passColumns.push_back(c);
        emitPass(acc, data, weight, passRows, passColumns);
      }
  }

private:
  llvm::Value* i16(int64_t v) { return b_.getInt16(uint16_t(v)); }
  llvm::Value* i64(int64_t v) { return b_.getInt64(uint64_t(v)); }
  llvm::Value* bytesAt(llvm::Value* base, llvm::Value* offset) { return b_.CreateInBoundsGEP(b_.getInt8Ty(), base, offset); }
  llvm::Value* call(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args) {
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, id), args);
  }

  // One pass: accumulators for `rows` x `columns` tiles, loaded (or zeroed), carried through
  // every reduction loop, stored.
  void emitPass(llvm::Value* acc, llvm::Value* data, llvm::Value* weight, const std::vector<Rows>& rows,
                const std::vector<int64_t>& columns) {
    const int64_t accRowBytes = nest_.accRowStride * 4;
    auto accAt = [&](const Rows& r, int64_t column) {
      return bytesAt(acc, i64((r.accOffset + column * kTileColumns) * 4));
    };
    std::vector<llvm::Value*> tiles;
    for (const Rows& r : rows)
      for (int64_t column : columns)
        tiles.push_back(nest_.initializes
                            ? call(llvm::Intrinsic::x86_tilezero_internal, {i16(r.count), i16(kTileBytes)})
                            : call(llvm::Intrinsic::x86_tileloadd64_internal,
                                   {i16(r.count), i16(kTileBytes), accAt(r, column), i64(accRowBytes)}));
    tiles = emitLoops(0, tiles, i64(0), i64(0), data, weight, rows, columns);
    size_t t = 0;
    for (const Rows& r : rows)
      for (int64_t column : columns)
        call(llvm::Intrinsic::x86_tilestored64_internal,
             {i16(r.count), i16(kTileBytes), accAt(r, column), i64(accRowBytes), tiles[t++]});
  }

  // The reduction loops from `level` inward, as bottom-tested loops (every extent is at least
  // 1) whose phis carry the accumulator tiles; the byte offsets into data and weight grow with
  // each loop's strides.
  std::vector<llvm::Value*> emitLoops(size_t level, std::vector<llvm::Value*> tiles, llvm::Value* dataOffset,
                                      llvm::Value* weightOffset, llvm::Value* data, llvm::Value* weight,
                                      const std::vector<Rows>& rows, const std::vector<int64_t>& columns) {
    if (level == nest_.outerReductions.size())
      return emitProducts(tiles, dataOffset, weightOffset, data, weight, rows, columns);
    const TileDotNest::ReductionLoop& loop = nest_.outerReductions[level];
    if (loop.extent == 1)
      return emitLoops(level + 1, tiles, dataOffset, weightOffset, data, weight, rows, columns);
    llvm::Function* function = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    llvm::BasicBlock* body = llvm::BasicBlock::Create(module_.getContext(), loop.var.name() + ".tile", function);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(module_.getContext(), loop.var.name() + ".tile.exit", function);
    b_.CreateBr(body);
    b_.SetInsertPoint(body);
    llvm::PHINode* index = b_.CreatePHI(b_.getInt64Ty(), 2, loop.var.name());
    index->addIncoming(i64(0), preheader);
    std::vector<llvm::PHINode*> carried;
    for (llvm::Value* tile : tiles) {
      carried.push_back(b_.CreatePHI(tile->getType(), 2));
      carried.back()->addIncoming(tile, preheader);
    }
    // int8 data and weights: an element is a byte.
    llvm::Value* innerData = b_.CreateAdd(dataOffset, b_.CreateMul(index, i64(loop.dataStride)));
    llvm::Value* innerWeight = b_.CreateAdd(weightOffset, b_.CreateMul(index, i64(loop.weightStride)));
    std::vector<llvm::Value*> updated(carried.begin(), carried.end());
    updated = emitLoops(level + 1, updated, innerData, innerWeight, data, weight, rows, columns);
    llvm::Value* next = b_.CreateAdd(index, i64(1));
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    index->addIncoming(next, latch);
    for (size_t t = 0; t < carried.size(); ++t) carried[t]->addIncoming(updated[t], latch);
    b_.CreateCondBr(b_.CreateICmpSLT(next, i64(loop.extent)), body, exit);
    b_.SetInsertPoint(exit);
    return updated;
  }

  // Each data tile and each weight tile loaded once and used by the two accumulators it feeds.
  std::vector<llvm::Value*> emitProducts(std::vector<llvm::Value*> tiles, llvm::Value* dataOffset,
                                         llvm::Value* weightOffset, llvm::Value* data, llvm::Value* weight,
                                         const std::vector<Rows>& rows, const std::vector<int64_t>& columns) {
    const int64_t rowBytes = 4 * nest_.groups;
    std::vector<llvm::Value*> dataTiles, weightTiles;
    for (const Rows& r : rows) {
      llvm::Value* at = bytesAt(data, b_.CreateAdd(dataOffset, i64(r.dataOffset)));
      dataTiles.push_back(call(llvm::Intrinsic::x86_tileloadd64_internal,
                               {i16(r.count), i16(rowBytes), at, i64(nest_.dataRowStride)}));
    }
    for (int64_t column : columns) {
      llvm::Value* at = bytesAt(weight, b_.CreateAdd(weightOffset, i64(column * kTileColumns * 4)));
      weightTiles.push_back(call(llvm::Intrinsic::x86_tileloadd64_internal,
                                 {i16(nest_.groups), i16(kTileBytes), at, i64(nest_.weightGroupStride)}));
    }
    size_t t = 0;
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t c = 0; c < columns.size(); ++c, ++t)
        tiles[t] = call(llvm::Intrinsic::x86_tdpbusd_internal,
                        {i16(rows[r].count), i16(kTileBytes), i16(rowBytes), tiles[t], dataTiles[r], weightTiles[c]});
    return tiles;
  }

  llvm::IRBuilderBase& b_;
  llvm::Module& module_;
  const TileDotNest& nest_;
};

}  // namespace

void emitTileDot(llvm::IRBuilderBase& builder, llvm::Module& module, const TileDotNest& nest, llvm::Value* acc,
                 llvm::Value* data, llvm::Value* weight) {
  TESSEL_ICHECK(nest.groups >= 1 && nest.groups * 4 <= kTileBytes && nest.columns % kTileColumns == 0)
      << "tile_u8i8 nest of an unexpected shape reached codegen";
  TileEmitter(builder, module, nest).emit(acc, data, weight);
}

}  // namespace tessel
