// The Directory page's line diff on long files: time per call and changed rows, for this
// checkout's diff.js and, when given, another module exporting `lineDiff` (an older page.js)
// measured in the same run.
//   node benchmarks/bench_ui_diff.mjs [path/to/other/page.js]
import {resolve} from 'node:path';
import {pathToFileURL} from 'node:url';

const here = new URL('../src/iii_directory/ui/dist/diff.js', import.meta.url);
const pages = [['this page', await import(here.href)]];
if (process.argv[2]) pages.push([process.argv[2], await import(pathToFileURL(resolve(process.argv[2])).href)]);

const lines = (n) => Array.from({length: n}, (_, i) => `Line ${i + 1}: step ${i % 9} of the long procedure.`);
const edited = (n, at) => {
  const a = lines(n);
  const b = a.slice();
  for (const i of at) b[i] = `edited ${i}`;
  return [a.join('\n'), b.join('\n')];
};
const CASES = [
  ['1,500 lines, edits at lines 2 and 1,499', edited(1500, [1, 1498]), 20],
  ['3,000 lines, edits at 100 and 2,500', edited(3000, [99, 2499]), 20],
  ['3,000 lines, edits at 2 and 2,999', edited(3000, [1, 2998]), 20],
  ['20,000 lines, every other line rewritten', [lines(20000).join('\n'), lines(20000).map((l, i) => (i % 2 ? `r${i}` : l)).join('\n')], 3],
];

function msPerCall(fn, rounds) {
  fn();
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r += 1) fn();
  return Number(process.hrtime.bigint() - start) / 1e6 / rounds;
}

console.log(`| case | ${pages.map(([name]) => name).join(' | ')} |`);
console.log(`|---|${pages.map(() => '---').join('|')}|`);
for (const [name, [a, b], rounds] of CASES) {
  const cells = pages.map(([, page]) => {
    const ms = msPerCall(() => page.lineDiff(a, b), rounds);
    const rows = page.lineDiff(a, b).filter((row) => row.kind !== 'same').length;
    return `${ms.toFixed(1)} ms, ${rows} rows`;
  });
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
