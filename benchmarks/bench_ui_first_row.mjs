// Cold load of the Directory page to its first list row, three times (or `rounds`), against a
// running `iii-directory-console` (its printed address is the argument):
//   node benchmarks/bench_ui_first_row.mjs http://127.0.0.1:<port>/harness/#/worker/iii-directory/directory [rounds]
// The first row is stamped in the page by a MutationObserver installed before any script runs,
// as `performance.now()` (milliseconds since the navigation started), so the figure carries no
// polling back-off of the driver. Each round also prints when the harness was ready and when the
// page's `directory::skills::list` calls were sent and read (the first screen, asked with
// `limit`, and the whole list; the page's clock, from the resource timing of the bridge calls).
import {chromium} from '../tests/ui/node_modules/playwright-core/index.mjs';
const url = process.argv[2];
const rounds = Number(process.argv[3] || 3);
const b = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']});
const stamp = () => {
  const stamps = {row: null, ready: null};
  window.__firstRow = stamps;
  const look = () => {
    if (stamps.ready === null && window.__harness && window.__harness.ready) stamps.ready = performance.now();
    if (stamps.row === null && document.querySelector('ul[aria-label="skills"] li.iiid-row')) { stamps.row = performance.now(); observer.disconnect(); }
  };
  const observer = new MutationObserver(look);
  const start = () => observer.observe(document.documentElement, {childList: true, subtree: true, attributes: true});
  if (document.documentElement) start(); else document.addEventListener('readystatechange', start, {once: true});
};
const isList = (r) => r.url().endsWith('/bridge/trigger') && (r.postData() || '').includes('"directory::skills::list"');
for (let round = 0; round < rounds; round += 1) {
  const p = await b.newPage();
  await p.addInitScript(stamp);
  const lists = [];
  p.on('requestfinished', (r) => { if (isList(r)) lists.push({limit: /"limit":\d+/.test(r.postData() || ''), timing: r.timing()}); });
  await p.goto(url);
  await p.waitForFunction(() => window.__firstRow && window.__firstRow.row !== null, null, {timeout: 30000, polling: 'raf'});
  const {row, ready} = await p.evaluate(() => window.__firstRow);
  const nav = await p.evaluate(() => performance.timeOrigin);
  const span = ({timing}) => `${(timing.startTime - nav).toFixed(0)}–${(timing.startTime + timing.responseEnd - nav).toFixed(0)} ms`;
  const call = lists.map((l) => `, skills::list ${l.limit ? 'first screen' : 'whole'} ${span(l)}`).join('');
  console.log(`round ${round}: harness ready ${ready === null ? '?' : ready.toFixed(0)} ms, first row ${row.toFixed(0)} ms${call}`);
  await p.close();
}
await b.close();
