// The browser half of bench_ui_page.py: drives the Directory page in headless Chromium and prints
// one JSON line of figures. Each keystroke is timed inside the page (performance.now): the
// synchronous work of its input event ("work", React commits discrete input synchronously), to
// the next painted frame ("frame", includes waiting for vsync) and to the last DOM change it
// caused ("settle", 150 ms of quiet ends a wait; deferred list renders land here).
// playwright-core is installed for the browser tests (bash tests/ui/setup.sh); reuse that copy.
import {chromium} from '../tests/ui/node_modules/playwright-core/index.mjs';

const BASE = process.env.III_UI_HARNESS_URL;
const ROUNDS = Number(process.env.III_BENCH_ROUNDS || 3);
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--enable-precise-memory-info'];

const INSTRUMENT = () => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const quiet = (since) => new Promise((resolve) => {
    const tick = () => (performance.now() - since.last > 150 || performance.now() - since.t0 > 5000 ? resolve() : setTimeout(tick, 10));
    tick();
  });
  const watch = () => {
    const since = {t0: performance.now(), last: performance.now()};
    const observer = new MutationObserver(() => { since.last = performance.now(); });
    observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
    return {since, stop: () => observer.disconnect()};
  };
  window.__bench = {
    async keystroke(selector, ch) {
      const el = document.querySelector(selector);
      el.focus();
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value').set;
      const {since, stop} = watch();
      since.t0 = performance.now();
      setter.call(el, ch === '\b' ? el.value.slice(0, -1) : el.value + ch);
      el.dispatchEvent(new Event('input', {bubbles: true}));
      await Promise.resolve();
      const work = performance.now() - since.t0;
      await frame();
      const input = performance.now() - since.t0;
      await quiet(since);
      stop();
      return {work, input, settle: Math.max(input, since.last - since.t0)};
    },
    async open(index) {
      const buttons = document.querySelectorAll('ul[aria-label="skills"] button.iiid-row__btn');
      const button = buttons[index % buttons.length];
      const key = button.querySelector('.iiid-row__id').textContent;
      const t0 = performance.now();
      button.click();
      for (;;) {
        await frame();
        const region = document.querySelector(`section[aria-label="Skill ${key}"]`);
        const editor = region && region.querySelector('textarea');
        if (editor && editor.value) break;
        if (performance.now() - t0 > 10000) throw new Error(`opening ${key} timed out`);
      }
      return performance.now() - t0;
    },
  };
};

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {median: Math.round(at(0.5) * 10) / 10, p95: Math.round(at(0.95) * 10) / 10, n: sorted.length};
};

const browser = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: FLAGS});
try {
  const page = await (await browser.newContext({viewport: {width: 1280, height: 800}})).newPage();
  page.setDefaultTimeout(60000);
  await page.addInitScript(INSTRUMENT);
  await page.goto(`${BASE}/harness/#/worker/iii-directory/directory`);
  await page.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 30000});
  await page.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'}).getByRole('radio', {name: 'Skills'}).click();
  await page.locator('.iiid-count').filter({hasText: /^\d{3,} skills$/}).waitFor({timeout: 60000});
  const open = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let i = 0; i < 5; i += 1) open.push(await page.evaluate((n) => window.__bench.open(n), i));
  }
  const filterWork = [];
  const filterInput = [];
  const filterSettle = [];
  const word = 'ticket 0';
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const ch of [...word, ...Array(word.length).fill('\b')]) {
      const r = await page.evaluate((c) => window.__bench.keystroke('input[aria-label="Filter"]', c), ch);
      filterWork.push(r.work);
      filterInput.push(r.input);
      filterSettle.push(r.settle);
    }
  }
  const editorWork = [];
  const editorInput = [];
  const editorSettle = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const ch of 'abcdefgh') {
      const r = await page.evaluate((c) => window.__bench.keystroke('textarea[aria-label="Skill body"]', c), ch);
      editorWork.push(r.work);
      editorInput.push(r.input);
      editorSettle.push(r.settle);
    }
  }
  const heap = await page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize / (1024 * 1024) : null));
  const domNodes = await page.evaluate(() => document.getElementsByTagName('*').length);
  console.log(JSON.stringify({
    filter_work_ms: stats(filterWork), filter_frame_ms: stats(filterInput), filter_settle_ms: stats(filterSettle),
    editor_work_ms: stats(editorWork), editor_frame_ms: stats(editorInput), editor_settle_ms: stats(editorSettle), open_ms: stats(open),
    js_heap_mb: heap == null ? null : Math.round(heap * 10) / 10, dom_nodes: domNodes,
  }));
} finally {
  await browser.close();
}
