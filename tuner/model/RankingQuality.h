// How well a cost model's scores order candidates: the figures the tuner reports and the
// model's tests check.
#pragma once

#include <vector>

namespace tessel::tuner {

/// The fraction of candidate pairs that `predicted` orders the way `measured` does (higher is
/// better in both). Only pairs whose measured values differ count; a pair the prediction ties
/// counts half, so constant predictions score 0.5, as a coin would. NaN when no pair has
/// different measured values (fewer than two candidates, or all measured equal). O(n^2).
/// The two vectors must have the same length (a caller's bug otherwise).
double pairwiseAccuracy(const std::vector<double>& predicted, const std::vector<double>& measured);

/// |top k by prediction ∩ top k by measurement| / k: how many of the k truly fastest
/// candidates measuring the k best-predicted ones would find. k larger than the number of
/// candidates is clipped to it; NaN when k < 1 or there are no candidates. Among equal values
/// the earlier candidate counts as higher, so ties at the k-th place are settled by position.
/// The two vectors must have the same length (a caller's bug otherwise).
double topKRecall(const std::vector<double>& predicted, const std::vector<double>& measured, int k);

/// Spearman's rank correlation: Pearson's correlation of the two vectors' ranks (tied values
/// share their mean rank), in [-1, 1]; 1 when the prediction orders every candidate as
/// measured. NaN with fewer than two candidates or when either vector is constant.
double spearmanRho(const std::vector<double>& predicted, const std::vector<double>& measured);

/// Kendall's tau-b: (concordant - discordant pairs) / sqrt of the pairs untied in each vector,
/// in [-1, 1]. Related to pairwiseAccuracy (which counts prediction ties as half and ignores
/// measured ties) but symmetric, as statisticians report it. NaN as for spearmanRho. O(n^2).
double kendallTau(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace tessel::tuner
