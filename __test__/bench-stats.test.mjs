// The benchmarks' statistics (bench/stats.mjs): the medians the docs quote and the 95%
// interval printed beside them, checked against the binomial tails they rest on.
import assert from 'node:assert/strict';
import test from 'node:test';

import { intervalText, median, medianInterval } from '../bench/stats.mjs';

/** 1..n, highest first, so that the functions have to sort. */
const descending = (n) => Array.from({ length: n }, (_, i) => n - i);

test('median: the middle value, the mean of the middle two, NaN for none; the input is left alone', () => {
  const values = [3, 1, 2];
  assert.equal(median(values), 2);
  assert.deepEqual(values, [3, 1, 2]);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([0.9, 1.1]), 1);
  assert.ok(Number.isNaN(median([])));
});

test('medianInterval: the order statistics whose binomial tails give at least 95%', () => {
  // Five values cannot give 95%: even the lowest and highest miss the median with chance
  // 2 / 32, so no interval is offered.
  assert.equal(medianInterval(descending(5)), null);
  assert.equal(medianInterval([]), null);
  // Six: the lowest and highest, 1 - 2 / 64.
  assert.deepEqual(medianInterval(descending(6)), { low: 1, high: 6, level: 1 - 2 / 64 });
  // Eleven: the 2nd and 10th (the 3rd and 9th would give 1 - 2 * 67 / 2048, under 95%).
  assert.deepEqual(medianInterval(descending(11)), { low: 2, high: 10, level: 1 - (2 * 12) / 2048 });
  // Twenty-one: the 6th and 16th, P(X <= 5) = 27,896 / 2^21.
  const interval = medianInterval(descending(21));
  assert.deepEqual([interval.low, interval.high], [6, 16]);
  assert.ok(Math.abs(interval.level - (1 - (2 * 27896) / 2 ** 21)) < 1e-12);
  // A lower level widens nothing and narrows the interval.
  const loose = medianInterval(descending(21), 0.9);
  assert.ok(loose.low >= interval.low && loose.high <= interval.high && loose.level >= 0.9);
});

test('intervalText: two decimals and the real coverage; empty for no interval', () => {
  assert.equal(intervalText(medianInterval([1.02, 0.98, 1.1, 0.97, 1.0, 1.01, 0.99])), '0.97-1.10 at 98.4%');
  assert.equal(intervalText(null), '');
});
