// A body search on the Directory page, timed from the keystroke to the first matching row,
// against a running `iii-directory-console` (its printed address and a word found only in skill
// bodies are the arguments):
//   node benchmarks/bench_ui_body_search.mjs http://127.0.0.1:<port>/harness/#/worker/iii-directory/directory record [rounds]
// Both ends are read in the page: the filter's `input` event and the first matching row are
// stamped with `performance.now()` (a MutationObserver), so the figure does not carry the
// back-off of a polling wait (Playwright's waits poll at 0, 20, 100, 100, 500 ms …, which alone
// puts a row that appears at 300 ms near 800 ms). Each round also prints when the page sent
// the body search and when its answer was read, relative to the keystroke.
import {chromium} from '../tests/ui/node_modules/playwright-core/index.mjs';
const [url, word] = process.argv.slice(2, 4);
const rounds = Number(process.argv[4] || 3);
const b = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']});
const rows = 'ul[aria-label="skills"] li.iiid-row';
const isBody = (r) => r.url().endsWith('/bridge/trigger') && (r.postData() || '').includes('"search_body":true');
for (let round = 0; round < rounds; round += 1) {
  const p = await b.newPage();
  await p.goto(url);
  await p.locator(rows).first().waitFor({timeout: 30000});
  const filter = p.getByPlaceholder(/^Filter incl\. body text/);
  await filter.fill('zzzz-nothing');
  await p.waitForFunction((sel) => !document.querySelector(sel), rows, {timeout: 30000});
  await p.waitForTimeout(600); // the miss's own body search is answered and forgotten
  // Stamp the keystroke and the first row in the page's clock.
  await p.evaluate((sel) => {
    const stamps = {input: null, row: null};
    window.__bodyBench = stamps;
    document.addEventListener('input', () => { if (stamps.input === null) stamps.input = performance.now(); }, true);
    const seen = () => { if (stamps.row === null && stamps.input !== null && document.querySelector(sel)) { stamps.row = performance.now(); observer.disconnect(); } };
    const observer = new MutationObserver(seen);
    observer.observe(document.body, {childList: true, subtree: true});
  }, rows);
  let sent = null;
  let done = null;
  p.on('request', (r) => { if (sent === null && isBody(r)) sent = Date.now(); });
  p.on('requestfinished', (r) => { if (done === null && isBody(r)) done = Date.now(); });
  const t0 = Date.now();
  await filter.fill(word);
  await p.waitForFunction(() => window.__bodyBench.row !== null, null, {timeout: 30000, polling: 'raf'});
  const {input, row} = await p.evaluate(() => window.__bodyBench);
  const call = sent === null || done === null ? '' : `; the worker asked at ${sent - t0} ms and answered at ${done - t0} ms after fill()`;
  console.log(`round ${round}: "${word}" keystroke to its first body match ${(row - input).toFixed(1)} ms${call}`);
  await p.close();
}
await b.close();
