// The benchmarks' statistics: a median, and how far it can be trusted.
//
// A repetition's ratio (this package's time over better-sqlite3's, the two measured one
// after the other) moves from repetition to repetition; the median of n of them is the
// figure quoted. `medianInterval` says how sure that figure is without assuming the
// ratios' distribution: for the true median m, each ratio lies below m with probability
// 1/2, so the number below it is Binomial(n, 1/2), and the k-th lowest and k-th highest
// ratios bracket m unless k or more of the n fall on one side. The largest k whose
// chance of that is at most 1 - level gives the narrowest such interval, and `level`
// reports the coverage it really has (a whole number of ratios rarely gives exactly 95%).

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** P(X ≤ k) for X ~ Binomial(n, 1/2). */
function binomialHalfCdf(n, k) {
  let term = 0.5 ** n; // P(X = 0)
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term = (term * (n - i + 1)) / i;
    sum += term;
  }
  return sum;
}

/**
 * A distribution-free interval for the median of `values` at `level` or more:
 * `{ low, high, level }` (its real coverage), or null when there are too few values to
 * give that level (five values reach 93.75% at most, six 96.9%).
 */
export function medianInterval(values, level = 0.95) {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  // The interval [sorted[k - 1], sorted[n - k]] misses the median with chance 2·P(X ≤ k - 1).
  let best = null;
  for (let k = 1; 2 * k <= n; k++) {
    const coverage = 1 - 2 * binomialHalfCdf(n, k - 1);
    if (coverage < level) break;
    best = { low: sorted[k - 1], high: sorted[n - k], level: coverage };
  }
  return best;
}

/** An interval of `medianInterval` as text: "0.97-1.03 at 97.3%"; "" for null. */
export function intervalText(interval, digits = 2) {
  if (interval === null) return '';
  const { low, high, level } = interval;
  return `${low.toFixed(digits)}-${high.toFixed(digits)} at ${(level * 100).toFixed(1)}%`;
}
