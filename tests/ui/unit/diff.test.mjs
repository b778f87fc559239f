// L1: the page's one diff (Myers, linear space) behind both the diff view and the three-way merge
// (issue 36 item 4): optimal on random inputs, few rows for few edits in long files, clean merges
// of edits that do not overlap.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

/** Length of a longest common subsequence by the textbook table (small inputs only). */
function lcsLength(a, b) {
  const row = new Array(b.length + 1).fill(0);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    let diag = 0;
    for (let j = b.length - 1; j >= 0; j -= 1) {
      const keep = row[j];
      row[j] = a[i] === b[j] ? diag + 1 : Math.max(row[j], row[j + 1]);
      diag = keep;
    }
  }
  return row[0];
}

/** A seeded generator, so a failure names the case that broke. */
function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

test('matchingPairs is a common subsequence of maximal length on 600 random pairs', () => {
  for (let seed = 1; seed <= 600; seed += 1) {
    const r = rng(seed);
    const alphabet = 1 + Math.floor(r() * 5);
    const line = () => `l${Math.floor(r() * alphabet)}`;
    const a = Array.from({length: Math.floor(r() * 14)}, line);
    const b = Array.from({length: Math.floor(r() * 14)}, line);
    const pairs = page.matchingPairs(a, b);
    let last = [-1, -1];
    for (const [i, j] of pairs) {
      assert.ok(i > last[0] && j > last[1], `seed ${seed}: pairs increase`);
      assert.equal(a[i], b[j], `seed ${seed}: pairs match equal lines`);
      last = [i, j];
    }
    assert.equal(pairs.length, lcsLength(a, b), `seed ${seed}: ${JSON.stringify([a, b])}`);
  }
});

const longSkill = (n) => Array.from({length: n}, (_, i) => `Line ${i + 1} of the long skill, step ${i % 7}.`);

test('a 3,000-line skill edited in two places diffs as two changed rows', () => {
  const base = longSkill(3000);
  const edited = base.slice();
  edited[99] = 'Line 100, edited here.';
  edited[2499] = 'Line 2500, edited there.';
  const rows = page.lineDiff(`${base.join('\n')}\n`, `${edited.join('\n')}\n`);
  const changed = rows.filter((row) => row.kind !== 'same');
  assert.deepEqual(changed.map((row) => [row.kind, row.leftNo, row.rightNo, row.right]),
    [['change', 100, 100, 'Line 100, edited here.'], ['change', 2500, 2500, 'Line 2500, edited there.']]);
  assert.equal(rows.length, 3000);
});

test('a rewritten half of a 20,000-line file diffs without giving up', () => {
  const base = longSkill(20000);
  const other = base.map((line, i) => (i % 2 ? `rewritten ${i}` : line));
  const rows = page.lineDiff(base.join('\n'), other.join('\n'));
  assert.equal(rows.filter((row) => row.kind === 'same').length, 10000);
  assert.equal(rows.filter((row) => row.kind === 'change').length, 10000);
});

test('merge3 of a 3,000-line skill edited apart on each side is clean and keeps every edit', () => {
  const base = longSkill(3000);
  const mine = base.slice();
  mine[9] = 'Mine, at line 10.';
  mine[2989] = 'Mine, at line 2990.';
  const theirs = base.slice();
  theirs[999] = 'Theirs, at line 1000.';
  theirs.splice(2500, 0, 'Theirs, a new line after 2500.');
  const merged = page.merge3(`${base.join('\n')}\n`, `${mine.join('\n')}\n`, `${theirs.join('\n')}\n`);
  assert.equal(merged.conflicts, 0);
  const expected = mine.slice();
  expected[999] = 'Theirs, at line 1000.';
  expected.splice(2500, 0, 'Theirs, a new line after 2500.');
  assert.equal(merged.text, `${expected.join('\n')}\n`);
});

test('merge3 agrees with the worker rule: a stretch changed on both sides differently conflicts', () => {
  const merged = page.merge3('a\nb\nc\nd\n', 'a\nB1\nc\nd\n', 'a\nB2\nc\nD\n');
  assert.equal(merged.conflicts, 1);
  assert.equal(merged.text, 'a\n<<<<<<< yours\nB1\n=======\nB2\n>>>>>>> on disk\nc\nD\n');
});
