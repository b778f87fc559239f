// Cold load of the Directory page to its first list row, three times (or `rounds`), against a
// running `iii-directory-console` (its printed address is the argument):
//   node benchmarks/bench_ui_first_row.mjs http://127.0.0.1:<port>/harness/#/worker/iii-directory/directory [rounds]
// Each round also prints how long the page's `directory::skills::list` call took as the browser
// saw it (request sent to response read), so the worker's share and the page's can be told apart.
import {chromium} from '../tests/ui/node_modules/playwright-core/index.mjs';
const url = process.argv[2];
const rounds = Number(process.argv[3] || 3);
const b = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']});
const isList = (r) => r.url().endsWith('/bridge/trigger') && (r.postData() || '').includes('"directory::skills::list"');
for (let round = 0; round < rounds; round += 1) {
  const p = await b.newPage();
  const t0 = Date.now();
  let listSent = null;
  let listDone = null;
  p.on('request', (r) => { if (listSent === null && isList(r)) listSent = Date.now() - t0; });
  p.on('requestfinished', (r) => { if (listDone === null && isList(r)) listDone = Date.now() - t0; });
  await p.goto(url);
  await p.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 30000});
  const tReady = Date.now() - t0;
  await p.locator('ul[aria-label="skills"] li.iiid-row').first().waitFor({timeout: 30000});
  const tRow = Date.now() - t0;
  const list = listSent === null || listDone === null ? '' : `, skills::list ${listSent}–${listDone} ms (${listDone - listSent} ms)`;
  console.log(`round ${round}: harness ready ${tReady} ms, first row ${tRow} ms${list}`);
  await p.close();
}
await b.close();
