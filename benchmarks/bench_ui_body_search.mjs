// A body search on the Directory page, timed from the keystrokes to the first matching row,
// against a running `iii-directory-console` (its printed address and a word found only in skill
// bodies are the arguments; the page searches bodies after a 250 ms pause in typing). Each round
// also prints when the page sent the body search and when its answer was read:
//   node benchmarks/bench_ui_body_search.mjs http://127.0.0.1:<port>/harness/#/worker/iii-directory/directory record [rounds]
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
  let sent = null;
  let done = null;
  p.on('request', (r) => { if (sent === null && isBody(r)) sent = Date.now() - t0; });
  p.on('requestfinished', (r) => { if (done === null && isBody(r)) done = Date.now() - t0; });
  const t0 = Date.now();
  await filter.fill(word);
  await p.locator(rows).first().waitFor({timeout: 30000});
  const call = sent === null || done === null ? '' : `, the worker asked at ${sent} ms and answered at ${done} ms`;
  console.log(`round ${round}: "${word}" to its first body match ${Date.now() - t0} ms${call}`);
  await p.close();
}
await b.close();
