// Cold load of the Directory page to its first list row, three times, against a running
// `iii-directory-console` (its printed address is the argument):
//   node benchmarks/bench_ui_first_row.mjs http://127.0.0.1:<port>/harness/#/worker/iii-directory/directory
import {chromium} from '../tests/ui/node_modules/playwright-core/index.mjs';
const url = process.argv[2];
const b = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']});
for (let round = 0; round < 3; round += 1) {
  const p = await b.newPage();
  const t0 = Date.now();
  await p.goto(url);
  await p.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 30000});
  const tReady = Date.now() - t0;
  await p.locator('ul[aria-label="skills"] li.iiid-row').first().waitFor({timeout: 30000});
  console.log(`round ${round}: harness ready ${tReady} ms, first row ${Date.now() - t0} ms`);
  await p.close();
}
await b.close();
