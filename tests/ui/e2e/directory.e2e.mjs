// L3 scenarios (console-ui.md §5.11): one story in one browser, state carried from step to step.
// Run by tests/ui/test_click_through.py, which starts the worker, the fakes and the harness server.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {chromium} from 'playwright-core';
import {createHash} from 'node:crypto';

const BASE = process.env.III_UI_HARNESS_URL;
const ART = process.env.III_UI_ARTIFACTS || 'test-artifacts/console-ui';
const PROJECT = process.env.III_UI_PROJECT;
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];
mkdirSync(ART, {recursive: true});

let browser;
let context;
let page;
const consoleLog = [];
const fatal = [];
/** Substrings of console errors a scenario provokes on purpose (they do not fail the run). */
const expected = [];

async function json(path, body) {
  const res = await fetch(BASE + path, body === undefined ? {} : {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(body)});
  return res.json();
}
const calls = () => json('/bridge/calls');
const callsTo = async (fn) => (await calls()).filter((c) => c.function_id === fn);
const readFile = (path) => json(`/control/files/read?path=${encodeURIComponent(path)}`);
const writeFile = (path, content) => json('/control/files/write', {path, content});
const sha256 = (text) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
const shot = (name) => page.screenshot({path: join(ART, name), fullPage: true});

async function until(check, message, timeout = 8000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try { last = await check(); if (last) return last; } catch (error) { last = error; }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out: ${message} (${last})`);
}

async function failureArtefacts(name) {
  try {
    await page.screenshot({path: join(ART, `failure-${name}.png`), fullPage: true});
    writeFileSync(join(ART, 'page.html'), await page.content());
  } catch { /* the page may be gone */ }
  writeFileSync(join(ART, 'browser-console.log'), consoleLog.join('\n'));
  writeFileSync(join(ART, 'bridge-calls.json'), JSON.stringify(await calls(), null, 2));
}

let failed = false;

function scenario(name, fn) {
  test(name, async (t) => {
    // III_UI_KEEP_GOING=1 runs every scenario after a failure (to see which ones an old page fails).
    if (failed && !process.env.III_UI_KEEP_GOING) { t.skip('an earlier scenario failed; state carries from one scenario to the next'); return; }
    try { await fn(); } catch (error) { failed = true; await failureArtefacts(name.split(' ')[0]); throw error; }
    assert.deepEqual(fatal.splice(0), [], 'no page errors, hook errors or [iii-ui] errors');
  });
}

before(async () => {
  browser = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: FLAGS});
  context = await browser.newContext({viewport: {width: 1280, height: 800}});
  context.setDefaultTimeout(10000);
  page = await context.newPage();
  listen(page, 'main');
});

/** Collect a page's console and errors; hook errors, [iii-ui] errors and page errors fail the run. */
function listen(target, label) {
  target.on('console', (msg) => {
    const text = `[${label}] [${msg.type()}] ${msg.text()}`;
    consoleLog.push(text);
    if (msg.type() !== 'error' || expected.some((e) => text.includes(e))) return;
    if (text.includes('Invalid hook call') || text.includes('[iii-ui]')) fatal.push(text);
  });
  target.on('pageerror', (error) => { consoleLog.push(`[${label}] [pageerror] ${error.stack || error}`); fatal.push(String(error)); });
}

after(async () => {
  writeFileSync(join(ART, 'browser-console.log'), consoleLog.join('\n'));
  const others = consoleLog.filter((line) => line.includes('[error]') && !fatal.includes(line) && !expected.some((e) => line.includes(e)));
  console.log(others.length ? `other browser console errors (${others.length}):\n${others.join('\n')}` : 'no other browser console errors');
  if (browser) await browser.close();
});

const root = () => page.locator('[data-iii-ui="iii-directory"] .iiid-page');
const switcher = () => page.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'});

scenario('S1 load', async () => {
  await page.goto(`${BASE}/harness/#/worker/iii-directory/directory`);
  await page.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 15000});
  const log = await page.evaluate(() => window.__harness.loaderLog);
  assert.ok(log.indexOf('style:iii-directory/styles.css') >= 0 && log.indexOf('style:iii-directory/styles.css') < log.indexOf('script:iii-directory/page.js'), log.join(','));
  assert.equal(await page.locator('link[data-iii-ui-asset="iii-directory/styles.css"]').count(), 1);
  const regs = await page.evaluate(() => window.__harness.registrations.map((r) => ({kind: r.kind, id: r.id, title: r.title, titles: r.titles})));
  const pages = regs.filter((r) => r.kind === 'page');
  assert.deepEqual(pages.map((p) => [p.id, p.title]), [['directory', 'Directory']]);
  assert.ok(regs.some((r) => r.kind === 'palette' && r.id === 'directory-entries'));
  assert.ok(regs.some((r) => r.kind === 'command' && r.titles.includes('Open Directory')));
  assert.deepEqual(regs.filter((r) => r.kind === 'functionTrigger').map((r) => r.id).sort(), ['iii-directory/page.js#directory', 'iii-directory/page.js#search']);
  assert.ok(regs.some((r) => r.kind === 'configForm' && r.id === 'iii-directory'));
  await root().waitFor();
  assert.ok(await root().getAttribute('data-iii-directory-version'));
  await until(async () => (await callsTo('directory::kits::list')).length >= 1, 'badge listing');
  const browserId = await page.evaluate(() => window.__harness.browserId);
  const kitBindings = (await json('/bridge/bindings')).filter((b) => b.type === 'directory::kits::on-change');
  assert.equal(kitBindings.length, 1, JSON.stringify(kitBindings));
  assert.ok(kitBindings[0].function_id.startsWith('iii::iii-directory-ui::kits-on-change::badge-'));
  assert.ok(kitBindings[0].function_id.endsWith(`::${browserId}`));
  assert.deepEqual((await callsTo('directory::kits::list')).map((c) => c.payload), [{}]);
  await shot('01-load.png');
});

scenario('S2 edit a skill', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: /Notes how-to/}).click();
  await until(async () => (await callsTo('directory::skills::get')).some((c) => c.payload.id === 'notes/howto' && c.payload.raw === true), 'skills::get raw');
  const body = page.getByRole('textbox', {name: 'Skill body'});
  const skillDoc = page.getByRole('region', {name: 'Skill notes/howto'});
  await body.waitFor();
  await body.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' Extra line.');
  await page.getByText('Unsaved changes').waitFor();
  await page.keyboard.press('Control+s');
  await skillDoc.getByText('Saved', {exact: true}).waitFor();
  const update = (await callsTo('directory::skills::update')).at(-1);
  assert.equal(update.payload.id, 'notes/howto');
  assert.ok(update.payload.content.trimEnd().endsWith('Extra line.'));
  assert.ok((await readFile('skills/notes/howto.md')).content.includes('Extra line.'));
  const disk = (await readFile('skills/notes/howto.md')).content;
  await new Promise((r) => setTimeout(r, 1500)); // let the watcher consume the mark of the page's own save
  await writeFile('skills/notes/howto.md', `${disk}Edited outside.\n`);
  await until(async () => (await body.inputValue()).includes('Edited outside.'), 'editor shows the outside edit', 8000);
  await body.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('Mine.');
  await writeFile('skills/notes/howto.md', `${disk}Edited outside.\nAgain outside.\n`);
  await page.getByText('notes/howto changed on disk while you were editing.').waitFor({timeout: 8000});
  await page.getByRole('button', {name: 'Reload'}).click();
  await until(async () => (await body.inputValue()).includes('Again outside.'), 'reloaded text');
  await skillDoc.getByText('Saved', {exact: true}).waitFor();
  await shot('02-skill-editor.png');

  // Split view: a draggable separator sets the editor / preview ratio, kept per pane and collection.
  const modes = skillDoc.getByRole('radiogroup', {name: 'View mode'});
  await modes.getByRole('radio', {name: 'Split'}).click();
  await skillDoc.locator('.iiid-split__preview').getByText('Again outside.').waitFor();
  const handle = skillDoc.getByRole('separator', {name: 'Resize editor and preview'});
  assert.equal(await handle.getAttribute('aria-valuenow'), '50');
  const grip = await handle.boundingBox();
  const area = await skillDoc.locator('.iiid-split--split').boundingBox();
  await page.mouse.move(grip.x + grip.width / 2, grip.y + 40);
  await page.mouse.down();
  await page.mouse.move(area.x + area.width * 0.3, grip.y + 40, {steps: 5});
  await page.mouse.up();
  const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem('iii-directory:view:harness:skills')));
  await until(async () => Math.abs((await stored()).ratio - 0.3) <= 0.01, 'the dragged ratio is stored');
  assert.equal((await stored()).mode, 'split');
  assert.ok(Math.abs(Number(await handle.getAttribute('aria-valuenow')) - 30) <= 1);
  await handle.press('ArrowRight');
  await until(async () => Math.abs((await stored()).ratio - 0.35) <= 0.011, 'ArrowRight widens the editor');
  await body.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' Split typing.');
  await skillDoc.locator('.iiid-split__preview').getByText('Split typing.', {exact: false}).waitFor();
  await shot('02-skill-split.png');
  await skillDoc.getByRole('button', {name: 'Revert'}).click();
  await modes.getByRole('radio', {name: 'Edit'}).click();
  await skillDoc.locator('.iiid-split__preview').waitFor({state: 'detached'});
  assert.equal((await stored()).mode, 'edit');
  assert.ok(Math.abs((await stored()).ratio - 0.35) <= 0.011);
});

// ---------------------------------------------------------------- issue 21: never lose work

scenario('S2b a save after an outside change offers a compare, never overwrites', async () => {
  const body = page.getByRole('textbox', {name: 'Skill body'});
  const skillDoc = page.getByRole('region', {name: 'Skill notes/howto'});
  await body.waitFor();
  const disk = (await readFile('skills/notes/howto.md')).content;
  await body.click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.type('Intro line.\n');
  await skillDoc.getByText('Unsaved changes').waitFor();
  const outside = `${disk}Outside line.\n`;
  await writeFile('skills/notes/howto.md', outside);
  await page.keyboard.press('Control+s');  // before or after the watcher noticed: both must end in the compare view
  const dialog = page.getByRole('dialog', {name: 'notes/howto changed on disk'});
  await dialog.waitFor();
  await dialog.getByText('disk/notes/howto').waitFor();
  await dialog.getByText('yours/notes/howto').waitFor();
  assert.equal((await readFile('skills/notes/howto.md')).content, outside, 'the outside edit is still on disk');
  for (const update of await callsTo('directory::skills::update')) {
    if (update.payload.content.includes('Intro line.')) assert.ok(update.error || !update.result, 'a stale update was refused');
  }
  await shot('13-stale-compare.png');
  await dialog.getByRole('button', {name: 'Merge'}).click();
  await dialog.waitFor({state: 'detached'});
  await until(async () => { const text = await body.inputValue(); return text.includes('Intro line.') && text.includes('Outside line.'); }, 'the merge keeps both edits');
  await skillDoc.getByRole('button', {name: 'Save', exact: true}).click();
  await skillDoc.getByText('Saved', {exact: true}).waitFor();
  const saved = (await callsTo('directory::skills::update')).at(-1);
  assert.equal(saved.payload.expected_sha256, sha256(outside));
  const merged = (await readFile('skills/notes/howto.md')).content;
  assert.ok(merged.includes('Intro line.') && merged.includes('Outside line.'), merged);

  // Overwrite: after the banner, Save still asks first; Overwrite then writes the draft over the disk text.
  await new Promise((r) => setTimeout(r, 1500));
  await body.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('Mine wins.');
  await writeFile('skills/notes/howto.md', `${merged}Second outside.\n`);
  await page.getByText('notes/howto changed on disk while you were editing.').waitFor({timeout: 8000});
  await skillDoc.getByRole('button', {name: 'Save', exact: true}).click();
  await dialog.waitFor();
  await dialog.getByRole('button', {name: 'Overwrite'}).click();
  await skillDoc.getByText('Saved', {exact: true}).waitFor();
  const overwrite = (await callsTo('directory::skills::update')).at(-1);
  assert.equal(overwrite.payload.expected_sha256, sha256(`${merged}Second outside.\n`));
  const final = (await readFile('skills/notes/howto.md')).content;
  assert.ok(final.includes('Mine wins.') && !final.includes('Second outside.'), final);
});

// ---------------------------------------------------------------- issue 34: no keystroke is ever lost

const howtoDoc = () => page.getByRole('region', {name: 'Skill notes/howto'});
const skillBody = () => page.getByRole('textbox', {name: 'Skill body'});

/** Type `text` at the start (`Control+Home`) or the end (`Control+End`) of the skill body. */
async function typeAt(key, text) {
  await skillBody().click();
  await page.keyboard.press(key);
  await page.keyboard.type(text);
}

scenario('S2c a draft restored after a reload is compared and guarded like a live edit', async () => {
  await new Promise((r) => setTimeout(r, 1500)); // the watcher consumes the mark of the last save
  await typeAt('Control+Home', 'Draft before reload.\n');
  await howtoDoc().getByText('Unsaved changes').waitFor();
  const stored = await until(() => page.evaluate(() => JSON.parse(localStorage.getItem('iii-directory:draft:skills:notes/howto'))), 'draft stored');
  const base = (await readFile('skills/notes/howto.md')).content;
  assert.equal(stored.base, base);
  await page.reload();
  await page.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 15000});
  const outside = `${base}Outside after reload.\n`;
  await writeFile('skills/notes/howto.md', outside);
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: /Notes how-to/}).click();
  await page.getByText('notes/howto changed on disk while you were editing.').waitFor();
  assert.ok((await skillBody().inputValue()).startsWith('Draft before reload.\n'), 'the draft is restored');
  const updatesBefore = (await callsTo('directory::skills::update')).length;
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  const dialog = page.getByRole('dialog', {name: 'notes/howto changed on disk'});
  await dialog.waitFor();
  assert.equal((await readFile('skills/notes/howto.md')).content, outside, 'the outside edit is still on disk');
  assert.equal((await callsTo('directory::skills::update')).length, updatesBefore, 'nothing was written before the compare');
  await dialog.getByRole('button', {name: 'Merge'}).click();
  await dialog.waitFor({state: 'detached'});
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  await howtoDoc().getByText('Saved', {exact: true}).waitFor();
  const update = (await callsTo('directory::skills::update')).at(-1);
  assert.equal(update.payload.expected_sha256, sha256(outside), 'the merged save is guarded by the disk text it merged with');
  const merged = (await readFile('skills/notes/howto.md')).content;
  assert.ok(merged.startsWith('Draft before reload.\n') && merged.endsWith('Outside after reload.\n'), merged);
});

scenario('S2d text typed while Saving… shows stays in the draft and is saved next', async () => {
  await new Promise((r) => setTimeout(r, 1500));
  await page.evaluate(() => window.__harness.hold('directory::skills::update'));
  await typeAt('Control+End', 'Saved part.');
  await page.keyboard.press('Control+s');
  await howtoDoc().getByRole('status').getByText('Saving…').waitFor();
  await until(() => page.evaluate(() => window.__harness.heldCalls() === 1), 'the save is on its way');
  await page.keyboard.type(' Typed while saving.');
  await page.evaluate(() => window.__harness.release());
  await until(async () => (await callsTo('directory::skills::update')).at(-1).payload.content.endsWith('Saved part.'), 'the snapshot was sent');
  await howtoDoc().getByText('Unsaved changes').waitFor();
  assert.ok((await skillBody().inputValue()).endsWith('Saved part. Typed while saving.'), 'the typing is kept');
  assert.ok((await readFile('skills/notes/howto.md')).content.endsWith('Saved part.'));
  await page.keyboard.press('Control+s');
  await howtoDoc().getByText('Saved', {exact: true}).waitFor();
  assert.ok((await readFile('skills/notes/howto.md')).content.endsWith('Saved part. Typed while saving.'));

  // The same for Create: the snapshot is created, what was typed meanwhile stays unsaved.
  await page.getByRole('button', {name: 'New skill'}).click();
  const fresh = page.getByRole('region', {name: 'New skill'});
  await fresh.getByRole('textbox', {name: 'New skill id'}).fill('notes/typed-while-creating');
  await typeAt('Control+End', 'Created part.');
  await page.evaluate(() => window.__harness.hold('directory::skills::create'));
  await fresh.getByRole('button', {name: 'Create'}).click();
  await until(() => page.evaluate(() => window.__harness.heldCalls() === 1), 'the create is on its way');
  await typeAt('Control+End', ' Typed while creating.');
  await page.evaluate(() => window.__harness.release());
  const created = page.getByRole('region', {name: 'Skill notes/typed-while-creating'});
  await created.getByText('Unsaved changes').waitFor();
  assert.ok((await readFile('skills/notes/typed-while-creating.md')).content.endsWith('Created part.'));
  assert.ok((await skillBody().inputValue()).endsWith('Created part. Typed while creating.'));
  await page.keyboard.press('Control+s');
  await created.getByText('Saved', {exact: true}).waitFor();
  assert.ok((await readFile('skills/notes/typed-while-creating.md')).content.endsWith('Created part. Typed while creating.'));
  await created.getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('dialog', {name: 'Delete skill?'}).getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('button', {name: 'Dismiss'}).click();
  await page.getByRole('button', {name: /Notes how-to/}).click();
});

scenario('S2e a merge with conflicts never saves markers; each conflict takes mine or theirs', async () => {
  await new Promise((r) => setTimeout(r, 1500));
  const disk = (await readFile('skills/notes/howto.md')).content;
  const lines = disk.split('\n');
  await typeAt('Control+Home', 'Mine first. ');
  await typeAt('Control+End', ' Mine last.');
  const outside = [`Disk first. ${lines[0]}`, ...lines.slice(1, -1), `${lines.at(-1)} Disk last.`].join('\n');
  await writeFile('skills/notes/howto.md', outside);
  await page.getByText('notes/howto changed on disk while you were editing.').waitFor();
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  const dialog = page.getByRole('dialog', {name: 'notes/howto changed on disk'});
  await dialog.getByRole('button', {name: 'Merge'}).click();
  await dialog.waitFor({state: 'detached'});
  const conflicts = howtoDoc().getByRole('region', {name: 'Merge conflicts'});
  await conflicts.getByText(/^2 conflicts left from the merge\./).waitFor();
  assert.equal(await howtoDoc().getByRole('button', {name: 'Save', exact: true}).isDisabled(), true, 'Save waits for the conflicts');
  await howtoDoc().getByRole('status').getByText('Conflicts to resolve').waitFor();
  const updates = (await callsTo('directory::skills::update')).length;
  await skillBody().click();
  await page.keyboard.press('Control+s');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await callsTo('directory::skills::update')).length, updates, 'Control+S writes no markers');
  await shot('02-merge-conflicts.png');
  await conflicts.getByRole('group', {name: 'Conflict 1'}).getByRole('button', {name: 'Keep yours'}).click();
  await conflicts.getByText(/^1 conflict left from the merge\./).waitFor();
  await conflicts.getByRole('group', {name: 'Conflict 1'}).getByRole('button', {name: 'Keep disk version'}).click();
  await conflicts.waitFor({state: 'detached'});
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  await howtoDoc().getByText('Saved', {exact: true}).waitFor();
  const saved = (await readFile('skills/notes/howto.md')).content;
  assert.ok(!saved.includes('<<<<<<<') && !saved.includes('>>>>>>>'), saved);
  assert.ok(saved.startsWith(`Mine first. ${lines[0]}`) && saved.endsWith(`${lines.at(-1)} Disk last.`), saved);
});

/**
 * Replace a textarea's text the way a paste does: one input event through the native setter, so
 * React sees it (Playwright's fill inserts 120 KB in ~20 s, the same in a bare textarea).
 */
async function pasteInto(locator, text) {
  await locator.evaluate((node, value) => {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(node, value);
    node.dispatchEvent(new Event('input', {bubbles: true}));
  }, text);
}

scenario('S2f a 3,000-line skill edited in two places: a two-hunk diff and a clean merge', async () => {
  const original = Array.from({length: 3000}, (_, i) => (i ? `Line ${i + 1}: step ${i % 9} of the long procedure.` : '# Long procedure'));
  await writeFile('skills/notes/long.md', `${original.join('\n')}\n`);
  await page.getByRole('button', {name: /Long procedure/}).click({timeout: 10000});
  const longDoc = page.getByRole('region', {name: 'Skill notes/long'});
  await until(async () => (await skillBody().inputValue()).startsWith('# Long procedure'), 'the long skill is open');
  await new Promise((r) => setTimeout(r, 1500));
  const mine = original.slice();
  mine[99] = 'Line 100: edited here.';
  await pasteInto(skillBody(), `${mine.join('\n')}\n`);
  await longDoc.getByText('Unsaved changes').waitFor();
  const theirs = original.slice();
  theirs[2499] = 'Line 2500: edited on disk.';
  await writeFile('skills/notes/long.md', `${theirs.join('\n')}\n`);
  await page.getByText('notes/long changed on disk while you were editing.').waitFor();
  await longDoc.getByRole('button', {name: 'Save', exact: true}).click();
  const dialog = page.getByRole('dialog', {name: 'notes/long changed on disk'});
  await dialog.waitFor();
  const changed = dialog.locator('.iiid-diff__row.is-change');
  assert.equal(await changed.count(), 2, 'two changed rows');
  assert.equal(await dialog.locator('.iiid-diff__row.is-add, .iiid-diff__row.is-del').count(), 0);
  await changed.first().getByText('Line 100: edited here.').waitFor();
  await changed.last().getByText('Line 2500: edited on disk.').waitFor();
  await shot('02-long-diff.png');
  await dialog.getByRole('button', {name: 'Merge'}).click();
  await dialog.waitFor({state: 'detached'});
  assert.equal(await longDoc.getByRole('region', {name: 'Merge conflicts'}).count(), 0, 'a clean merge');
  await longDoc.getByRole('button', {name: 'Save', exact: true}).click();
  await longDoc.getByText('Saved', {exact: true}).waitFor();
  const expected = mine.slice();
  expected[2499] = 'Line 2500: edited on disk.';
  assert.equal((await readFile('skills/notes/long.md')).content, `${expected.join('\n')}\n`);
  await longDoc.getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('dialog', {name: 'Delete skill?'}).getByRole('button', {name: 'Delete'}).click();
  await longDoc.waitFor({state: 'detached'});
});

// ---------------------------------------------------------------- issue 34: the worker goes away and comes back

scenario('S2g the worker stops and comes back: the open document and its draft return', async () => {
  await new Promise((r) => setTimeout(r, 1500));
  await page.getByRole('button', {name: /Notes how-to/}).click();
  await howtoDoc().waitFor();
  await typeAt('Control+Home', 'Typed before the worker stopped.\n');
  await howtoDoc().getByText('Unsaved changes').waitFor();
  await json('/control/worker/stop', {});
  await root().waitFor({state: 'detached'});
  await json('/control/worker/start', {});
  await root().waitFor();
  await howtoDoc().waitFor();
  await until(async () => (await skillBody().inputValue()).startsWith('Typed before the worker stopped.\n'), 'the draft is back');
  await howtoDoc().getByText('Unsaved changes').waitFor();
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  await howtoDoc().getByText('Saved', {exact: true}).waitFor();
  assert.ok((await readFile('skills/notes/howto.md')).content.startsWith('Typed before the worker stopped.\n'));
});

/** Press Retry now, unless the page's own probe found the worker first and the banner is gone. */
async function retryNow() {
  try { await page.getByRole('button', {name: 'Retry now'}).click({timeout: 3000}); } catch { /* the automatic retry won */ }
}

scenario('S2h an unreachable worker: one banner that retries, read-only documents, failed opens with Retry', async () => {
  const banner = page.getByText(/^The iii-directory worker is not reachable\./);
  await page.evaluate(() => window.__harness.unreachable(true));
  await page.getByRole('button', {name: /PDF tools/}).click();
  const pdfDoc = page.getByRole('region', {name: 'Skill pdf'});
  await pdfDoc.getByText('Could not load pdf.').waitFor();
  await pdfDoc.getByText('The iii-directory worker is not reachable; nothing was changed.').waitFor();
  await pdfDoc.getByRole('status').getByText('Not loaded', {exact: true}).waitFor();
  assert.equal(await pdfDoc.getByText('Saved', {exact: true}).count(), 0, 'a document that did not load never reads Saved');
  await banner.waitFor();
  assert.equal(await banner.count(), 1, 'one banner');
  await shot('02-worker-unreachable.png');
  await page.evaluate(() => window.__harness.unreachable(false));
  await retryNow();
  await banner.waitFor({state: 'detached'});
  await until(async () => (await skillBody().inputValue()).includes('Read PDF files page by page.'), 'the failed open is retried once the worker answers');

  await page.getByRole('button', {name: /Notes how-to/}).click();
  await howtoDoc().waitFor();
  await typeAt('Control+End', ' Offline words.');
  await page.evaluate(() => window.__harness.unreachable(true));
  await page.keyboard.press('Control+s');
  await howtoDoc().getByText('The iii-directory worker is not reachable; nothing was changed.').waitFor();
  await banner.waitFor();
  assert.equal(await skillBody().getAttribute('readonly'), '', 'read-only while the worker is away');
  assert.equal(await howtoDoc().getByRole('button', {name: 'Save', exact: true}).isDisabled(), true);
  await page.evaluate(() => window.__harness.unreachable(false));
  await retryNow();
  await banner.waitFor({state: 'detached'});
  assert.equal(await skillBody().getAttribute('readonly'), null);
  await howtoDoc().getByRole('button', {name: 'Save', exact: true}).click();
  await howtoDoc().getByText('Saved', {exact: true}).waitFor();
  assert.ok((await readFile('skills/notes/howto.md')).content.endsWith(' Offline words.'));
});

scenario('S2i loading states tell the truth: no "0 skills" while listing, no "Saved" while opening', async () => {
  const slow = await openTab('/harness/?hold=directory::skills::list#/worker/iii-directory/directory', 'slow-list');
  await slow.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'}).getByRole('radio', {name: 'Skills'}).click();
  await slow.getByText('Loading skills…').waitFor();
  assert.equal(await slow.getByText(/^0 skills/).count(), 0);
  await slow.evaluate(() => window.__harness.release());
  await slow.getByRole('button', {name: /Notes how-to/}).waitFor();
  await slow.evaluate(() => window.__harness.hold('directory::skills::get'));
  await slow.getByRole('button', {name: /PDF tools/}).click();
  const pdfDoc = slow.getByRole('region', {name: 'Skill pdf'});
  await pdfDoc.getByRole('status').getByText('Loading…', {exact: true}).waitFor();
  assert.equal(await pdfDoc.getByText('Saved', {exact: true}).count(), 0);
  await slow.evaluate(() => window.__harness.release());
  await pdfDoc.getByText('Saved', {exact: true}).waitFor();
  await slow.close();
});

scenario('S2j a title from the first heading; Delete says so with Undo and focuses the next row', async () => {
  await page.getByRole('button', {name: /Notes how-to/}).click();
  const title = howtoDoc().getByRole('textbox', {name: 'Title'});
  await until(async () => (await title.inputValue()) === 'Notes how-to', 'the Title field shows the first heading');
  await title.fill('Notes how-to guide');
  await until(async () => /(^|\n)# Notes how-to guide\n/.test(await skillBody().inputValue()), 'the heading follows the Title field');
  await howtoDoc().getByRole('button', {name: 'Revert'}).click();

  const content = '# Temp note\n\nTo be deleted.\n';
  await writeFile('skills/notes/zz-temp.md', content);
  await page.getByRole('button', {name: /^Temp note/}).click();
  const tempDoc = page.getByRole('region', {name: 'Skill notes/zz-temp'});
  await tempDoc.getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('dialog', {name: 'Delete skill?'}).getByRole('button', {name: 'Delete'}).click();
  await page.getByText('Deleted notes/zz-temp.').waitFor();
  assert.equal((await readFile('skills/notes/zz-temp.md')).exists, false);
  await until(() => page.evaluate(() => document.activeElement && document.activeElement.dataset.key === 'pdf'), 'focus is on the next row');
  await shot('02-deleted-undo.png');
  await page.getByRole('button', {name: 'Undo'}).click();
  await tempDoc.waitFor();
  assert.equal((await readFile('skills/notes/zz-temp.md')).content, content, 'Undo restores the content');
  await page.getByText('Deleted notes/zz-temp.').waitFor({state: 'detached'});
  await tempDoc.getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('dialog', {name: 'Delete skill?'}).getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('button', {name: 'Dismiss'}).click();
});

scenario('S3 add a preloaded function to a profile', async () => {
  const original = (await readFile('agents/scribe.md')).content;
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  await page.getByRole('button', {name: /Scribe/}).waitFor();
  assert.ok(await page.getByText(/^local · /).first().isVisible());
  await page.getByText('Built-in · edits save a local override').first().waitFor();
  await page.getByRole('button', {name: /Scribe/}).click();
  await page.getByText(/^Models could not be loaded/).waitFor();
  const search = page.getByRole('textbox', {name: 'Search functions'});
  await search.fill('ticket');
  await page.getByRole('option', {name: /kanban::ticket::create/}).waitFor();
  await search.press('Enter');
  await page.getByRole('button', {name: 'Remove kanban::ticket::create'}).waitFor();
  const updatesBefore = (await callsTo('directory::agents::update')).length;
  await page.getByRole('button', {name: 'Save', exact: true}).click();
  await until(async () => (await callsTo('directory::agents::functions::add')).length === 1, 'functions::add');
  const add = (await callsTo('directory::agents::functions::add'))[0];
  assert.deepEqual(add.payload, {id: 'scribe', functions: ['kanban::ticket::create']});
  assert.equal((await callsTo('directory::agents::update')).length, updatesBefore);
  const expected = original.replace('---\nYou take', 'functions:\n  - kanban::ticket::create\n---\nYou take');
  assert.equal((await readFile('agents/scribe.md')).content, expected);
  await page.getByRole('region', {name: 'Agent profile scribe'}).getByText('Saved', {exact: true}).waitFor();
  await page.getByRole('textbox', {name: 'Description'}).fill('Takes careful notes');
  await page.getByRole('button', {name: 'Save', exact: true}).click();
  await until(async () => (await callsTo('directory::agents::update')).length === updatesBefore + 1, 'agents::update');
  const update = (await callsTo('directory::agents::update')).at(-1);
  assert.ok(update.payload.content.includes('description: Takes careful notes'));
  assert.ok(update.payload.content.includes('  - kanban::ticket::create'));
  await page.getByRole('region', {name: 'Agent profile scribe'}).getByText('Saved', {exact: true}).waitFor();
  await shot('03-agent-functions.png');
});

scenario('S3i the functions picker hides engine and internal functions until asked, one line each', async () => {
  await page.getByRole('button', {name: /Scribe/}).click();
  const search = page.getByRole('textbox', {name: 'Search functions'});
  await search.fill('engine::functions');
  const listed = page.getByRole('listbox', {name: 'Preloaded functions available'});
  await listed.waitFor();
  assert.equal(await listed.getByRole('option', {name: /^engine::functions::list/}).count(), 0, 'engine functions are hidden by default');
  await page.getByRole('checkbox', {name: /^Show \d+ internal functions?$/}).check();
  await listed.getByRole('option', {name: /^engine::functions::list/}).waitFor();
  for (const text of await listed.getByRole('option').allInnerTexts()) assert.ok(!text.trim().includes('\n\n') && text.length < 250, text);
  await page.getByRole('checkbox', {name: /^Show \d+ internal functions?$/}).uncheck();
  await search.fill('');
});

scenario('S3b creating over an existing id or a built-in warns; deleting an override says what returns', async () => {
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  await page.getByRole('button', {name: 'New agent profile'}).click();
  const id = page.getByRole('textbox', {name: 'New agent profile id'});
  const creating = page.getByRole('region', {name: 'New agent profile'});
  await id.fill('scribe');
  await creating.getByText('An agent profile with this id already exists.').waitFor();
  assert.equal(await creating.getByRole('button', {name: 'Create', exact: true}).isDisabled(), true);
  await creating.getByRole('button', {name: 'Open it'}).click();
  await page.getByRole('region', {name: 'Agent profile scribe'}).waitFor();
  await page.getByRole('button', {name: 'New agent profile'}).click();
  await id.fill('default');
  await creating.getByText(/^“default” is a built-in agent profile\. Creating it saves a local override/).waitFor();
  await page.getByRole('textbox', {name: 'Name'}).fill('My default');
  await shot('13-create-over-builtin.png');
  await creating.getByRole('button', {name: 'Create override'}).click();
  await until(async () => (await callsTo('directory::agents::create')).some((c) => c.payload.id === 'default'), 'agents::create default');
  const doc = page.getByRole('region', {name: 'Agent profile default'});
  await doc.getByRole('button', {name: 'Delete override'}).click();
  const dialog = page.getByRole('dialog', {name: 'Delete your override?'});
  await dialog.getByText('Delete your local “default”? Its file is removed and the built-in “default” agent profile is used again.').waitFor();
  assert.equal(await dialog.getByText('cannot be undone').count(), 0);
  await dialog.getByRole('button', {name: 'Delete override'}).click();
  await until(async () => (await callsTo('directory::agents::delete')).some((c) => c.payload.id === 'default'), 'agents::delete default');
  assert.equal((await readFile('agents/default.md')).exists, false);
});

scenario('S3c Save is disabled until something changed; a new entry never reads Saved', async () => {
  await page.getByRole('button', {name: /Scribe/}).first().click();
  const doc = page.getByRole('region', {name: 'Agent profile scribe'});
  const save = doc.getByRole('button', {name: 'Save', exact: true});
  await save.waitFor();
  assert.equal(await save.isDisabled(), true);
  const updates = (await callsTo('directory::agents::update')).length;
  await page.keyboard.press('Control+s');
  const description = doc.getByRole('textbox', {name: 'Description'});
  const was = await description.inputValue();
  await description.fill(`${was}!`);
  assert.equal(await save.isDisabled(), false);
  await doc.getByRole('button', {name: 'Revert'}).click();
  assert.equal(await save.isDisabled(), true);
  assert.equal((await callsTo('directory::agents::update')).length, updates, 'no write without a change');
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: 'New skill'}).click();
  const fresh = page.getByRole('region', {name: 'New skill'});
  await fresh.getByText('Not created yet').waitFor();
  assert.equal(await fresh.getByText('Saved', {exact: true}).count(), 0);
  await page.getByRole('button', {name: /Notes how-to/}).click();
  await page.getByRole('region', {name: 'Skill notes/howto'}).waitFor();
});

scenario('S3d errors speak once, with the raw text under Details, and the toolbar stays put', async () => {
  const doc = page.getByRole('region', {name: 'Skill notes/howto'});
  const bar = doc.locator('.iiid-doc__bar');
  const before = (await bar.boundingBox()).height;
  const body = doc.getByRole('textbox', {name: 'Skill body'});
  await body.fill('');
  await doc.getByRole('button', {name: 'Save', exact: true}).click();
  await doc.getByText('A skill needs some text in its body.').waitFor();
  assert.equal(await page.getByText(/D113 invalid_input/).count(), 1, 'the raw text appears once');
  assert.equal(await page.getByText(/D113 invalid_input/).isVisible(), false, 'folded under Details');
  await doc.getByText('Details', {exact: true}).click();
  assert.equal(await page.getByText(/D113 invalid_input/).isVisible(), true);
  assert.equal((await bar.boundingBox()).height, before, 'the toolbar keeps its height');
  await doc.getByText('Not saved', {exact: true}).waitFor();
  await shot('13-error-details.png');
  await doc.getByRole('button', {name: 'Revert'}).click();
  await doc.getByText('Saved', {exact: true}).waitFor();
});

scenario('S3e the models warning is said once, quietly', async () => {
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  const asked = (await callsTo('router::models::list')).length;
  assert.ok(asked >= 1);
  for (const [name, id] of [[/Reviewer/, 'reviewer'], [/^Default/, 'default']]) {
    await page.getByRole('button', {name}).first().click();
    await page.getByRole('region', {name: `Agent profile ${id}`}).getByRole('combobox', {name: 'Model'}).waitFor();
  }
  assert.equal((await callsTo('router::models::list')).length, asked, 'asked once per page, not once per profile');
  assert.equal(await page.getByText(/Models could not be loaded/).count(), 0, 'said once, not again on later profiles');
  assert.equal(await page.getByText(/router::models::list/).count(), 0, 'no raw worker text on the form');
  assert.equal(await page.locator('.iiid-agentform [role="status"], .iiid-agentform [role="alert"]').count(), 0, 'quiet: no live region');
});

scenario('S3f truthful empty and failure states; the connection banner', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  const filter = page.getByRole('textbox', {name: 'Filter'});
  await filter.fill('zzzz-nothing');
  await page.getByText('No skills match “zzzz-nothing”.').waitFor();
  assert.equal(await page.getByText('No skills yet.').count(), 0);
  await page.getByRole('button', {name: 'Clear filter'}).click();
  await page.getByRole('button', {name: /Notes how-to/}).waitFor();
  await page.evaluate(() => window.__harness.setConnection('disconnected'));
  await page.getByText(/^Not connected to the engine\./).waitFor();
  await shot('13-disconnected.png');
  await page.evaluate(() => window.__harness.setConnection('connecting'));
  await page.getByText('Reconnecting to the engine…').waitFor();
  await page.evaluate(() => window.__harness.setConnection('connected'));
  await page.getByText('Reconnecting to the engine…').waitFor({state: 'detached'});
  const broken = await openTab('/harness/?fail=directory::kits::list#/worker/iii-directory/directory', 'kits-fail');
  await broken.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'}).getByRole('radio', {name: 'Kits'}).click();
  await broken.getByText('Installed kits could not be loaded.').waitFor();
  await broken.getByText('Kits could not be loaded.', {exact: true}).waitFor();
  assert.equal(await broken.getByText('No kits installed').count(), 0);
  assert.equal(await broken.getByText('No kits yet.').count(), 0);
  await broken.screenshot({path: join(ART, '13-kits-failed.png'), fullPage: true});
  await broken.close();
});

scenario('S3g the preview renders markdown itself, raw HTML as text', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await writeFile('skills/notes/sample.md', '# Markdown sample\n\nSome *emphasis* and a [link](https://example.invalid/x).\n\n'
    + '| Col | Val |\n|---|---:|\n| a | 1 |\n\n- one\n- two\n\n```\ncode <b>here</b>\n```\n\n<img src=x onerror="window.__xss = 1">\n');
  await page.getByRole('button', {name: /Markdown sample/}).click({timeout: 15000});
  const doc = page.getByRole('region', {name: 'Skill notes/sample'});
  await doc.getByRole('radiogroup', {name: 'View mode'}).getByRole('radio', {name: 'Preview'}).click();
  const preview = doc.locator('.iiid-split__preview');
  await preview.getByRole('heading', {name: 'Markdown sample'}).waitFor();
  assert.equal(await preview.locator('em').innerText(), 'emphasis');
  assert.equal(await preview.getByRole('link', {name: 'link'}).getAttribute('href'), 'https://example.invalid/x');
  assert.equal(await preview.getByRole('cell', {name: 'a'}).count(), 1);
  assert.equal(await preview.locator('li').count(), 2);
  await preview.getByText('<img src=x onerror="window.__xss = 1">').waitFor();
  assert.equal(await preview.locator('img, b').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  await shot('13-markdown-preview.png');
  await doc.getByRole('radiogroup', {name: 'View mode'}).getByRole('radio', {name: 'Edit'}).click();
});

scenario('S3h read-only skills say so before any edit and offer a copy', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: /^PDF tools/}).first().getByText('read-only', {exact: true}).waitFor({timeout: 4000});
  assert.ok((await callsTo('directory::skills::list')).some((c) => c.payload && c.payload.include_origin === true), 'the list asks for row origins');
  await page.getByRole('button', {name: /^PDF tools/}).first().click();
  const doc = page.getByRole('region', {name: 'Skill pdf'});
  await doc.getByText(/^Read-only: another tool installed this skill/).waitFor();
  assert.equal(await doc.getByRole('textbox', {name: 'Skill body'}).isEditable(), false);
  assert.equal(await doc.getByRole('button', {name: 'Save', exact: true}).count(), 0);
  assert.equal(await doc.getByRole('button', {name: 'Delete'}).count(), 0);
  await page.getByRole('button', {name: /^PDF tools/}).first().getByText('read-only', {exact: true}).waitFor();
  await shot('13-read-only.png');
  const disk = (await readFile('.agents/skills/pdf/SKILL.md')).content;
  await doc.getByRole('button', {name: 'Copy to skills folder'}).click();
  const fresh = page.getByRole('region', {name: 'New skill'});
  assert.equal(await fresh.getByRole('textbox', {name: 'New skill id'}).inputValue(), 'pdf-copy');
  await fresh.getByRole('button', {name: 'Create', exact: true}).click();
  await until(async () => (await callsTo('directory::skills::create')).some((c) => c.payload.id === 'pdf-copy'), 'create pdf-copy');
  await page.getByRole('region', {name: 'Skill pdf-copy'}).waitFor();
  assert.equal((await readFile('skills/pdf-copy.md')).content, disk);
});

scenario('S4 narrow pane', async () => {
  await page.setViewportSize({width: 600, height: 800});
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.waitForSelector('.iiid-page.iiid-narrow');
  await page.getByRole('button', {name: 'Back'}).first().click();
  await page.getByRole('button', {name: /Notes how-to/}).waitFor();
  await page.getByRole('button', {name: /Notes how-to/}).click();
  await page.getByRole('button', {name: 'Back'}).first().waitFor();
  await shot('04-narrow.png');
  await page.getByRole('button', {name: 'Back'}).first().click();
  await page.setViewportSize({width: 1280, height: 800});
});

let planId;

scenario('S5 kits home', async () => {
  await switcher().getByRole('radio', {name: 'Kits'}).click();
  await page.getByText('No kits installed').waitFor();
  await page.getByText(`kits.lock · ${PROJECT}/kits.lock`).waitFor();
  const input = page.getByRole('textbox', {name: 'kit to install'});
  const submit = page.getByRole('button', {name: 'Review install'});
  for (const bad of ['Acme/Team', 'acme']) { await input.fill(bad); assert.equal(await submit.isDisabled(), true, bad); }
  await input.fill('acme/team');
  assert.equal(await submit.isDisabled(), false);
});

scenario('S5c an install error says what happened once, raw text under Details', async () => {
  const input = page.getByRole('textbox', {name: 'kit to install'});
  await input.fill('acme/nope');
  await page.getByRole('button', {name: 'Review install'}).click();
  await page.getByText('There is no kit with that name in the registry.').waitFor({timeout: 15000});
  assert.equal(await page.getByText(/^D510 not_found/).count(), 1);
  assert.equal(await page.getByText(/^D510 not_found/).isVisible(), false);
  await input.fill('acme/team');
});

/** In the Split layout each side of a diff row takes half of the view (not a squeezed column). */
async function splitColumnsAreWide(scope) {
  const view = await scope.locator('.iiid-diff__split').boundingBox();
  const halves = scope.locator('.iiid-diff__half');
  assert.ok((await halves.count()) >= 2);
  for (const index of [0, 1]) {
    const box = await halves.nth(index).boundingBox();
    assert.ok(box.width > view.width * 0.4, `diff half ${index} is ${box.width}px of ${view.width}px`);
  }
}

scenario('S6 plan an install, decide, see a diff', async () => {
  await page.getByRole('button', {name: 'Review install'}).click();
  await page.getByRole('heading', {name: 'Install acme/team 1.0.0'}).waitFor({timeout: 15000});
  const download = (await callsTo('directory::download-kit')).at(-1);
  assert.deepEqual(download.payload, {kit: 'acme/team'});
  planId = download.result.plan.plan_id;
  assert.ok((await callsTo('directory::kits::plan')).some((c) => c.payload.plan_id === planId && c.payload.contents === true));
  // A profile the user wrote is kept unless they choose to replace it (issue 21 §5).
  const decide = page.getByRole('radiogroup', {name: 'What to do with agents/reviewer.md'});
  assert.equal(await decide.getByRole('radio', {name: 'Keep the current one'}).getAttribute('aria-checked'), 'true');
  await page.getByText('No existing file will be replaced').waitFor();
  await page.getByRole('button', {name: 'Install', exact: true}).waitFor();
  await page.getByText('created in this project — not from any package').waitFor();
  await page.getByText('New worker kanban ^1.4 → 1.6.1').waitFor();
  await page.getByText('Install 1.0.0').waitFor();
  await decide.getByRole('radio', {name: 'Replace'}).click();
  await page.getByText('1 existing profile will be replaced').waitFor();
  await page.getByRole('button', {name: 'Install and replace 1 profile'}).waitFor();
  await decide.getByRole('radio', {name: 'Keep the current one'}).click();
  await page.getByRole('button', {name: 'Install', exact: true}).waitFor();
  await shot('06-install-review.png');
  await page.getByRole('button', {name: 'View diff'}).click();
  const dialog = page.getByRole('dialog', {name: 'agents/reviewer.md'});
  await dialog.getByText('current/agents/reviewer.md').waitFor();
  await dialog.getByText('kit/agents/reviewer.md').waitFor();
  await splitColumnsAreWide(dialog);
  await shot('06-install-diff.png');
  await dialog.getByRole('radio', {name: 'Unified'}).click();
  await dialog.getByRole('button', {name: 'Close'}).first().click();
  await dialog.waitFor({state: 'detached'});
});

/** Open a second tab of the same browser on a harness URL and wait for its first sync. */
async function openTab(path, label) {
  const tab = await context.newPage();
  listen(tab, label);
  await tab.goto(`${BASE}${path}`);
  await tab.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 15000});
  return tab;
}

const cardUrl = (query, fn, fixture) => `/harness/${query}#/card?fn=${encodeURIComponent(fn)}&fixture=${encodeURIComponent(fixture)}`;

scenario("S6a a fresh review of the install keeps the user's own profile by default", async () => {
  const fresh = await openTab('/harness/#/worker/iii-directory/directory', 'fresh-review');
  await fresh.evaluate((id) => window.__harness.openPanel({collection: 'kits', plan_id: id}), planId);
  await fresh.getByRole('heading', {name: 'Install acme/team 1.0.0'}).waitFor({timeout: 15000});
  const decide = fresh.getByRole('radiogroup', {name: 'What to do with agents/reviewer.md'});
  assert.equal(await decide.getByRole('radio', {name: 'Keep the current one'}).getAttribute('aria-checked'), 'true');
  await fresh.getByRole('button', {name: 'Install', exact: true}).waitFor();
  assert.equal(await fresh.getByRole('button', {name: /Install and replace/}).count(), 0);
  await fresh.close();
});

scenario('S6b old console, chat cards, dark theme', async () => {
  const old = await openTab('/harness/?noImportModule=1#/worker/iii-directory/directory', 'old-console');
  await old.evaluate((id) => window.__harness.openPanel({collection: 'kits', plan_id: id}), planId);
  await old.getByText('This console predates lazy modules, so the review cannot open here.').waitFor();
  await old.getByText(`iii trigger directory::kits::apply plan_id=${planId}`).first().waitFor();
  await old.getByRole('heading', {name: 'Install acme/team 1.0.0'}).waitFor();
  await old.getByRole('button', {name: 'Discard plan'}).waitFor();
  await old.getByRole('button', {name: 'Copy'}).first().waitFor();
  await old.screenshot({path: join(ART, '06-old-console.png'), fullPage: true});
  await old.close();

  const card = await openTab(cardUrl('', 'directory::download-kit', 'last:directory::download-kit'), 'card');
  await card.getByText('Install acme/team 1.0.0').waitFor();
  await card.getByRole('button', {name: 'Review install'}).click();
  const opened = await card.evaluate(() => window.__harness.panelsOpened);
  assert.deepEqual(opened.at(-1), {pageId: 'directory', context: {collection: 'kits', plan_id: planId}});
  await card.screenshot({path: join(ART, '06-chat-card.png'), fullPage: true});
  await card.close();

  const compact = await openTab(cardUrl('?noPanels=1', 'directory::download-kit', 'last:directory::download-kit'), 'card-no-panels');
  await compact.getByText('Install acme/team 1.0.0').waitFor();
  await compact.getByRole('button', {name: 'Install with these defaults'}).waitFor();
  assert.equal(await compact.getByRole('button', {name: 'Review install'}).count(), 0);
  await compact.close();

  const dark = await openTab('/harness/?theme=dark#/worker/iii-directory/directory', 'dark');
  assert.equal(await dark.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await dark.evaluate((id) => window.__harness.openPanel({collection: 'kits', plan_id: id}), planId);
  await dark.getByRole('heading', {name: 'Install acme/team 1.0.0'}).waitFor({timeout: 15000});
  await dark.getByText('No existing file will be replaced').waitFor();
  await dark.screenshot({path: join(ART, '06-install-review-dark.png'), fullPage: true});
  await dark.close();
});

scenario('S7 apply: failure, retry, live progress', async () => {
  await json('/control/compose', {mode: 'fail'});
  await page.getByRole('button', {name: 'Install', exact: true}).click();
  await page.getByRole('heading', {name: 'Install stopped'}).waitFor({timeout: 15000});
  const apply = (await callsTo('directory::kits::apply')).at(-1);
  assert.deepEqual(apply.payload, {plan_id: planId, decisions: {'agents/reviewer.md': 'keep'}, remove_workers: []});
  await page.getByText('The apply stopped before finishing.').waitFor();
  // One human sentence, once; the raw worker text only behind Details.
  const run = page.locator('.iiid-run');
  await run.getByText('Compose could not finish the change.', {exact: true}).waitFor();
  assert.equal(await run.getByText('Compose could not finish the change.', {exact: true}).count(), 1);
  assert.equal(await run.getByText(/D515 compose_error/).count(), 1, 'the raw text is said once');
  assert.equal(await run.getByText(/D515 compose_error/).isVisible(), false, 'folded under Details');
  await run.getByText('Details', {exact: true}).click();
  await run.getByText(/D515 compose_error/).waitFor();
  assert.equal((await readFile('agents/planner.md')).exists, false);
  assert.equal((await readFile('kits.lock')).exists, false);
  await shot('07-apply-failed.png');
  await json('/control/compose', {mode: 'ok', delay_ms: 1500});
  await page.getByRole('button', {name: 'Try again'}).click();
  await page.getByText(/compose::add kanban@\^1\.4/).first().waitFor({timeout: 5000});
  await shot('07-apply-progress.png');
  await page.getByRole('heading', {name: /^Installed acme\/team 1\.0\.0/}).waitFor({timeout: 20000});
  const retry = (await callsTo('directory::kits::apply')).at(-1);
  assert.deepEqual(retry.payload, apply.payload);
  for (const text of ['3 written', '1 kept as they were', '1 worker added']) await page.getByText(text, {exact: true}).waitFor();
  await page.getByRole('button', {name: 'Open planner'}).waitFor();
  await page.getByText(`Recorded in ${PROJECT}/kits.lock — commit it with the project.`).waitFor();
  await shot('07-apply-done.png');
  await page.getByRole('button', {name: 'Back to kits'}).click();
  await page.getByText('2 profiles · 2 skills · 1 worker').waitFor();
  await page.getByText('1 kept yours').waitFor();
  await shot('07-kits-home.png');
});

const FLOW = 'skills/acme/team/tickets/flow.md';
const kitCard = () => page.locator('.iiid-cards').getByRole('button', {name: /^acme\/team \d/});
const backToKits = () => page.getByRole('button', {name: 'Kits', exact: true}).first();
/** The state chip of one file row of the installed kit's Files tab. */
const fileState = (path) => page.locator('.iiid-filerow', {has: page.locator('code', {hasText: path})}).locator('.iiid-chip');

async function openKitCard() {
  await kitCard().click();
  await until(async () => (await callsTo('directory::kits::get')).length > 0, 'kits::get');
  await page.getByRole('tab', {name: /^Files/}).click();
}

scenario('S8 installed kit', async () => {
  const before = (await callsTo('directory::kits::get')).length;
  await openKitCard();
  const get = (await callsTo('directory::kits::get')).at(-1);
  assert.ok((await callsTo('directory::kits::get')).length > before);
  assert.deepEqual(get.payload, {kit: 'acme/team', registry: true});
  await page.getByRole('heading', {name: 'acme/team 1.0.0'}).waitFor();
  assert.equal(await fileState('agents/reviewer.md').innerText(), 'kept yours');
  for (const path of ['agents/planner.md', FLOW, 'skills/acme/team/legacy/old.md']) assert.equal(await fileState(path).innerText(), 'intact', path);
  const flow = (await readFile(FLOW)).content;
  assert.ok(flow.includes('Step two.\n'), flow);
  await writeFile(FLOW, flow.replace('Step two.\n', 'Step two (mine).\n'));
  await backToKits().click();
  await page.getByText('No kits installed').waitFor({state: 'detached'});
  await openKitCard();
  await page.getByRole('tab', {name: 'Files · 1 changed'}).waitFor();
  await until(async () => (await fileState(FLOW).innerText()) === 'edited', 'flow is edited');
  await page.getByRole('button', {name: 'View my changes'}).click();
  const dialog = page.getByRole('dialog', {name: FLOW});
  await dialog.getByText('Left: what the kit installed. Right: the file on disk.').waitFor();
  await dialog.getByText(`kit/${FLOW}`).waitFor();
  await dialog.getByText(`disk/${FLOW}`).waitFor();
  await dialog.getByText('Step two (mine).').waitFor();
  await splitColumnsAreWide(dialog);
  assert.deepEqual((await callsTo('directory::kits::diff')).at(-1).payload, {kit: 'acme/team', path: FLOW});
  await shot('08-kit-files.png');
  await dialog.getByRole('button', {name: 'Close'}).first().click();
  await dialog.waitFor({state: 'detached'});
});

scenario('S8b rows show their origin; editing a kit-managed file warns it will diverge', async () => {
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  const row = page.getByRole('button', {name: /^Planner/});
  await row.getByText('from kit acme/team').waitFor();
  await page.getByRole('button', {name: /^Default/}).getByText('built-in', {exact: true}).waitFor();
  await row.click();
  const doc = page.getByRole('region', {name: 'Agent profile planner'});
  const description = doc.getByRole('textbox', {name: 'Description'});
  await description.fill(`${await description.inputValue()} (mine)`);
  await doc.getByText(/^This agent profile comes from kit acme\/team\. Saving makes it differ from the kit/).waitFor();
  await shot('13-kit-managed.png');
  await doc.getByRole('button', {name: 'Revert'}).click();
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: /^acme\/team\/tickets\/flow|^Flow/}).first().getByText('from kit acme/team').waitFor();
  // A skill the user made under the kit's namespace is theirs: ownership comes from kits.lock, not the id.
  await writeFile('skills/acme/team/mine.md', '# My own team notes\n\nWritten by hand.\n');
  const mine = page.getByRole('button', {name: /^My own team notes/});
  await mine.waitFor();
  assert.equal(await mine.getByText(/from kit/).count(), 0, 'no kit chip on a skill the kit did not install');
  await mine.click();
  const mineDoc = page.getByRole('region', {name: 'Skill acme/team/mine'});
  await typeAt('Control+End', ' More.');
  await mineDoc.getByText('Unsaved changes').waitFor();
  assert.equal(await mineDoc.getByText(/comes from kit/).count(), 0, 'no divergence warning');
  await mineDoc.getByRole('button', {name: 'Revert'}).click();
  await mineDoc.getByRole('button', {name: 'Delete'}).click();
  await page.getByRole('dialog', {name: 'Delete skill?'}).getByRole('button', {name: 'Delete'}).click();
  await mineDoc.waitFor({state: 'detached'});
  await switcher().getByRole('radio', {name: 'Kits'}).click();
});

const kitsBadge = () => switcher().getByRole('radio', {name: 'Kits'}).locator('.iiid-badge');
const mergedResult = () => page.getByRole('textbox', {name: `Merged result for ${FLOW}`});
const RESOLVED = '# Flow\n\nStep one.\nStep two (kit, and mine).\nStep three.\n';

scenario('S9 update with a conflict', async () => {
  await json('/control/registry/publish', {kit: 'acme/team', version: '1.1.0'});
  await backToKits().click();
  await page.getByRole('button', {name: 'Check for updates'}).click();
  await until(async () => (await callsTo('directory::kits::check-updates')).length === 1, 'check-updates');
  assert.deepEqual((await callsTo('directory::kits::check-updates'))[0].payload, {});
  await page.getByText('↑ 1.1.0 available').waitFor();
  await until(async () => (await kitsBadge().innerText()) === '1', 'the Kits badge reads 1');
  await page.getByRole('button', {name: 'View update'}).click();
  await page.getByRole('heading', {name: 'Update acme/team 1.0.0 → 1.1.0'}).waitFor({timeout: 15000});
  assert.deepEqual((await callsTo('directory::kits::plan-update')).at(-1).payload, {kit: 'acme/team'});
  const groups = await page.locator('.iiid-prview__list .iiid-group__title').allTextContents();
  assert.deepEqual(groups, ['Changed profiles', 'New workers', 'Worker ranges', 'New skills', 'Changed skills', 'Removed skills', 'Permissions']);
  await page.getByText('+1 worker · +1 function · ~1 model').waitFor();
  await page.getByText('1 file unchanged').waitFor();
  const selected = page.locator('.iiid-changerow.is-active');
  assert.equal(await selected.locator('.iiid-row__title').innerText(), 'acme/team/tickets/flow');
  assert.equal(await selected.locator('.iiid-chip').innerText(), 'conflict');
  const primary = page.getByRole('button', {name: 'Update · 1 conflict pending'});
  assert.equal(await primary.isDisabled(), true);
  assert.equal(await primary.getAttribute('title'), `Resolve: ${FLOW}`);
  await page.getByRole('tab', {name: 'Result', selected: true}).waitFor();
  assert.ok((await mergedResult().inputValue()).includes('<<<<<<<'));
  await page.getByText('The result still has conflict markers.').waitFor();
  await shot('09-update-conflict.png');
  // Issue 34 item 9: the actions stay on screen, the ticks say what they are, conflicts go hunk by hunk.
  const foot = await primary.boundingBox();
  assert.ok(foot && foot.y >= 0 && foot.y + foot.height <= 800, `the primary action is on screen at 1280×800 (${JSON.stringify(foot)})`);
  await page.getByText(/^Tick a row once you have looked at it/).waitFor();
  const hunks = page.getByRole('list', {name: `Conflicts in ${FLOW}`});
  await hunks.getByRole('group', {name: 'Conflict 1'}).getByRole('button', {name: "Take the kit's"}).click();
  await page.getByText('The result still has conflict markers.').waitFor({state: 'detached'});
  assert.ok(!(await mergedResult().inputValue()).includes('<<<<<<<'), 'the hunk took the kit side');
  await hunks.waitFor({state: 'detached'});

  const resolve = page.getByRole('radiogroup', {name: `Resolve ${FLOW}`});
  await resolve.getByRole('radio', {name: 'Keep mine'}).click();
  assert.equal(await selected.locator('.iiid-chip').innerText(), 'resolved');
  await page.getByRole('button', {name: 'Update to 1.1.0'}).waitFor();
  await mergedResult().fill(RESOLVED);
  await resolve.getByRole('radio', {name: 'Use the merged result'}).click();
  await page.getByText('The result still has conflict markers.').waitFor({state: 'detached'});
  assert.equal(await page.getByRole('button', {name: 'Update to 1.1.0'}).isDisabled(), false);
  await shot('09-update-resolved.png');

  await page.getByRole('button', {name: 'Update to 1.1.0'}).click();
  await page.getByRole('heading', {name: 'Updating acme/team 1.0.0 → 1.1.0…'}).waitFor();
  await page.locator('.iiid-step__label').first().getByText('Workers (2)').waitFor();
  await page.getByRole('heading', {name: /^Updated acme\/team/}).waitFor({timeout: 20000});
  const apply = (await callsTo('directory::kits::apply')).at(-1);
  assert.deepEqual(apply.payload.decisions, {[FLOW]: {choice: 'merged', content: RESOLVED}});
  assert.deepEqual(apply.payload.remove_workers, []);
  for (const text of ['2 written', '1 merged', '1 removed', '1 worker added', '1 worker updated']) await page.getByText(text, {exact: true}).waitFor();
  assert.equal((await readFile(FLOW)).content, RESOLVED);
  await page.getByText('1 installed · 0 to review').waitFor();  // the listing is reloaded after the apply
  await shot('09-update-done.png');
});

const needsReview = () => page.getByRole('region', {name: 'Needs review'});

scenario('S10 replanned, discarded, stale link, ignored', async () => {
  await json('/control/registry/publish', {kit: 'acme/team', version: '1.2.0'});
  await page.getByRole('button', {name: 'Back to kits'}).click();
  const checks = (await callsTo('directory::kits::check-updates')).length;
  await page.getByRole('button', {name: 'Check for updates'}).click();
  await until(async () => (await callsTo('directory::kits::check-updates')).length === checks + 1, 'check-updates');
  await page.getByText('↑ 1.2.0 available').waitFor();
  await page.getByRole('button', {name: 'View update'}).click();
  await page.getByRole('heading', {name: 'Update acme/team 1.1.0 → 1.2.0'}).waitFor({timeout: 15000});
  const firstPlan = (await callsTo('directory::kits::plan-update')).at(-1).result.plan.plan_id;
  const planner = (await readFile('agents/planner.md')).content;
  await writeFile('agents/planner.md', `${planner}A line of my own.\n`);
  await page.getByRole('button', {name: 'Update to 1.2.0'}).click();
  await page.getByText(/^Not applied: agents\/planner\.md changed on disk/).waitFor({timeout: 20000});
  const apply = (await callsTo('directory::kits::apply')).at(-1);
  assert.equal(apply.payload.plan_id, firstPlan);
  assert.equal(apply.result.status, 'replanned');
  const newPlan = apply.result.plan.plan_id;
  assert.notEqual(newPlan, firstPlan);
  await until(async () => (await callsTo('directory::kits::plan')).some((c) => c.payload.plan_id === newPlan), 'the new plan is loaded');
  await page.getByRole('heading', {name: 'Update acme/team 1.1.0 → 1.2.0'}).waitFor();
  await shot('10-replanned.png');
  await page.getByRole('button', {name: 'Discard plan'}).click();
  const dialog = page.getByRole('dialog', {name: 'Discard this plan?'});
  await dialog.getByText('Nothing was written; you can plan it again any time.').waitFor();
  await dialog.getByRole('button', {name: 'Discard'}).click();
  await until(async () => (await callsTo('directory::kits::discard')).some((c) => c.payload.plan_id === newPlan), 'discard of the new plan');
  assert.deepEqual((await callsTo('directory::kits::discard')).at(-1).payload, {plan_id: newPlan});
  await page.getByRole('button', {name: 'Check for updates'}).waitFor();
  await until(async () => (await needsReview().count()) === 0, 'nothing under Needs review');

  await page.evaluate(() => window.__harness.openPanel({collection: 'kits', plan_id: 'kp_missing'}));
  await page.getByText('This plan is no longer available.').waitFor();
  await page.getByRole('button', {name: 'Back to kits'}).click();

  await page.getByRole('button', {name: 'View update'}).click();
  await page.getByRole('heading', {name: 'Update acme/team 1.1.0 → 1.2.0'}).waitFor({timeout: 15000});
  await page.getByRole('button', {name: 'Ignore 1.2.0'}).click();
  await until(async () => (await callsTo('directory::kits::ignore')).length === 1, 'ignore');
  assert.deepEqual((await callsTo('directory::kits::ignore'))[0].payload, {kit: 'acme/team', version: '1.2.0', ignore: true});
  await page.getByRole('button', {name: 'Check for updates'}).waitFor();
  await page.locator('.iiid-kitcard').getByText('up to date').waitFor();
  assert.equal(await page.locator('.iiid-kitcard').getByRole('button', {name: /update/}).count(), 0);
});

scenario('S10b Cancel on a removal discards its plan', async () => {
  await kitCard().click();
  await page.getByRole('button', {name: 'Remove kit'}).click();
  await page.getByRole('heading', {name: 'Remove acme/team 1.1.0'}).waitFor({timeout: 15000});
  const planOf = (await callsTo('directory::kits::remove')).at(-1).result.plan.plan_id;
  await page.getByRole('button', {name: 'Cancel', exact: true}).click();
  await until(async () => (await callsTo('directory::kits::discard')).some((c) => c.payload.plan_id === planOf), 'the removal plan is discarded');
  await page.getByRole('button', {name: 'Check for updates'}).waitFor();
  await until(async () => (await needsReview().count()) === 0, 'nothing under Needs review');
});

scenario('S11 removal', async () => {
  await kitCard().click();
  await page.getByRole('button', {name: 'Remove kit'}).click();
  await page.getByRole('heading', {name: 'Remove acme/team 1.1.0'}).waitFor({timeout: 15000});
  assert.deepEqual((await callsTo('directory::kits::remove')).at(-1).payload, {kit: 'acme/team'});
  const box = (name) => page.getByRole('checkbox', {name, exact: true});
  const row = (path) => page.locator('.iiid-filerow', {has: page.getByRole('checkbox', {name: path, exact: true})});
  for (const path of [FLOW, 'agents/planner.md']) {
    assert.equal(await box(path).isChecked(), false, path);
    await row(path).getByText('edited', {exact: true}).waitFor();
    await row(path).getByText('stays as a local file').waitFor();
  }
  assert.equal(await box('skills/acme/team/tickets/triage.md').isChecked(), true);
  for (const name of ['kanban', 'github']) {
    assert.equal(await box(`Remove worker ${name}`).isChecked(), false, name);
    assert.equal(await box(`Remove worker ${name}`).isEnabled(), true, name);
  }
  await page.getByText('Workers stay unless you tick them.').waitFor();
  await page.getByRole('button', {name: 'Remove acme/team · 1 file', exact: true}).waitFor();
  await box('Remove worker kanban').check();
  await page.getByRole('button', {name: 'Remove acme/team · 1 file · 1 worker'}).click();
  await page.getByRole('heading', {name: /^Removed acme\/team/}).waitFor({timeout: 20000});
  const apply = (await callsTo('directory::kits::apply')).at(-1);
  assert.deepEqual(apply.payload.remove_workers, ['kanban']);
  assert.deepEqual(apply.payload.decisions, {});
  assert.equal(await page.getByRole('button', {name: 'View acme/team'}).count(), 0);
  await page.getByText('0 installed · 0 to review').waitFor();
  await shot('11-removal.png');
  await page.getByRole('button', {name: 'Back to kits'}).click();
  await page.getByText('No kits installed').waitFor();
  assert.equal((await readFile('skills/acme/team/tickets/triage.md')).exists, false);
  assert.equal((await readFile(FLOW)).exists, true);
  assert.equal((await readFile('agents/planner.md')).exists, true);
});

scenario('S12 hot reload', async () => {
  const browserId = await page.evaluate(() => window.__harness.browserId);
  const kitBindings = async () => (await json('/bridge/bindings'))
    .filter((b) => b.browser_id === browserId && b.type === 'directory::kits::on-change').length;
  const before = await kitBindings();
  assert.ok(before > 0);
  const errorsBefore = consoleLog.filter((line) => line.includes('[error]')).length;
  const pagePath = join(process.env.III_UI_WATCH, 'page.js');
  writeFileSync(pagePath, readFileSync(pagePath, 'utf8').replace(/^export const PAGE_VERSION = '[^']*';/m, "export const PAGE_VERSION = 'hot-reload-test';"));
  await until(async () => (await root().getAttribute('data-iii-directory-version')) === 'hot-reload-test', 'the new page version renders', 5000);
  const pages = await page.evaluate(() => window.__harness.registrations.filter((r) => r.kind === 'page').map((r) => r.id));
  assert.deepEqual(pages, ['directory']);
  await until(async () => (await kitBindings()) === before, `live kits bindings back to ${before}`, 5000);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await kitBindings(), before);
  assert.deepEqual(consoleLog.filter((line) => line.includes('[error]')).slice(errorsBefore), []);

  const link = page.locator('link[data-iii-ui-asset="iii-directory/styles.css"]');
  const href = await link.getAttribute('href');
  const stylePath = join(process.env.III_UI_WATCH, 'styles.css');
  writeFileSync(stylePath, `${readFileSync(stylePath, 'utf8')}\n[data-iii-ui="iii-directory"] .iiid-title { color: var(--color-accent, #0969da); }\n`);
  await until(async () => (await link.count()) === 1 && (await link.getAttribute('href')) !== href, 'the stylesheet is swapped', 5000);
  assert.equal(await link.count(), 1);
  await shot('12-hot-reload.png');

  // A version whose setup fails is torn down alone; the last good version stays registered.
  const good = readFileSync(pagePath, 'utf8');
  const setupLine = 'export default async function setup(host) {';
  assert.ok(good.includes(setupLine));
  expected.push('[iii-ui] failed to load iii-directory/page.js@');
  const logged = consoleLog.length;
  writeFileSync(pagePath, good.replace(setupLine, `${setupLine}\n  host.pages.register({id: 'directory', title: 'Broken', render: () => null});\n  throw new Error('broken on purpose');`));
  await until(async () => consoleLog.slice(logged).some((line) => line.includes('[iii-ui] failed to load iii-directory/page.js@')),
    'the failing version is reported', 5000);
  const after = await page.evaluate(() => window.__harness.registrations.filter((r) => r.kind === 'page').map((r) => [r.id, r.title]));
  assert.deepEqual(after, [['directory', 'Directory']]);
  assert.equal(await root().getAttribute('data-iii-directory-version'), 'hot-reload-test');
  writeFileSync(pagePath, good.replace("PAGE_VERSION = 'hot-reload-test'", "PAGE_VERSION = 'after-a-failure'"));
  await until(async () => (await root().getAttribute('data-iii-directory-version')) === 'after-a-failure', 'the next good version loads', 5000);
  await until(async () => (await kitBindings()) === before, `live kits bindings back to ${before}`, 5000);
});

scenario('S13 a long list renders a window of rows, finds deep rows and groups by namespace', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  const total = 120;
  for (let i = 0; i < total; i += 1) {
    await writeFile(`skills/bulk${String(i % 3)}/entry-${String(i).padStart(3, '0')}.md`, `# Bulk entry ${i}\n\nBulk body ${i} mentions zebra-${i}.\n`);
  }
  const count = page.locator('.iiid-sidebar:visible .iiid-count');
  await until(async () => Number((await count.innerText()).split(' ')[0]) >= total, 'the list holds the new skills', 20000);
  const rows = page.locator('ul[aria-label="skills"] > li.iiid-row');
  assert.ok((await rows.count()) < 60, `windowed: ${await rows.count()} rows in the DOM`);
  const groups = await page.locator('ul[aria-label="skills"] .iiid-listgroup__name').allTextContents();
  assert.ok(groups.includes('bulk0'), groups.join(','));
  await page.locator('.iiid-sidebar:visible').evaluate((node) => { node.scrollTop = node.scrollHeight; });
  await page.getByRole('button', {name: /^PDF tools/}).first().waitFor();
  await page.getByRole('textbox', {name: 'Filter'}).fill('zebra-117');
  await page.getByRole('button', {name: /^Bulk entry 117/}).waitFor();
  assert.equal(await rows.count(), 1);
  await page.getByRole('textbox', {name: 'Filter'}).fill('');
  await shot('13-long-list.png');
});

scenario('S13c the windowed list tells screen readers its size and each row\'s place; namespaces are headings', async () => {
  const count = Number((await page.locator('.iiid-sidebar:visible .iiid-count').innerText()).split(' ')[0]);
  const first = page.locator('ul[aria-label="skills"] > li.iiid-row').first();
  assert.equal(await first.getAttribute('aria-posinset'), '1');
  assert.equal(Number(await first.getAttribute('aria-setsize')), count);
  await page.getByRole('heading', {name: 'bulk0', level: 3}).waitFor();
  const row = page.getByRole('button', {name: 'Bulk entry 3 · bulk0/entry-003', exact: true});
  await row.waitFor();
  const about = (await row.getAttribute('aria-describedby')).split(' ');
  const said = await Promise.all(about.map((id) => page.locator(`[id="${id}"]`).textContent()));
  assert.match(said.join(' · '), /Bulk body 3 mentions zebra-3/);
  await switcher().getByRole('radio', {name: 'Kits'}).click();
  await page.getByRole('region', {name: 'Kits'}).waitFor();
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  // A skill just created is scrolled into view in the long list.
  await page.locator('.iiid-sidebar:visible').evaluate((node) => { node.scrollTop = node.scrollHeight; });
  await page.getByRole('button', {name: 'New skill'}).click();
  const fresh = page.getByRole('region', {name: 'New skill'});
  await fresh.getByRole('textbox', {name: 'New skill id'}).fill('bulk0/aa-created');
  await fresh.getByRole('button', {name: 'Create'}).click();
  const created = page.getByRole('button', {name: /bulk0\/aa-created/});
  await created.waitFor();
  await until(async () => {
    const [box, pane] = [await created.boundingBox(), await page.locator('.iiid-sidebar:visible').boundingBox()];
    return box && pane && box.y >= pane.y && box.y + box.height <= pane.y + pane.height;
  }, 'the new row is in view');
});

scenario('S13d the first screen of a long list shows from a small answer while the whole list loads', async () => {
  const before = (await callsTo('directory::skills::list')).length;
  const tab = await openTab('/harness/?holdWhole=directory::skills::list#/worker/iii-directory/directory', 'first-screen');
  await tab.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'}).getByRole('radio', {name: 'Skills'}).click();
  const first = tab.locator('ul[aria-label="skills"] > li.iiid-row').first();
  await first.waitFor();
  // Only part of the list is here: the count says so, and no size or group count is claimed.
  await tab.getByText('Loading skills…').waitFor();
  assert.equal(await first.getAttribute('aria-setsize'), '-1');
  const rows = await tab.locator('ul[aria-label="skills"] > li.iiid-row').count();
  assert.ok(rows > 0 && rows <= 60, `${rows} rows from the first screen`);
  const asked = (await callsTo('directory::skills::list')).slice(before).map((c) => c.payload);
  assert.ok(asked.some((p) => p.limit === 60 && p.include_origin === true && p.include_description === true), JSON.stringify(asked));
  assert.ok(await tab.evaluate(() => window.__harness.heldCalls()) >= 1, 'the whole list is still on its way');
  await tab.evaluate(() => window.__harness.release());
  const count = tab.locator('.iiid-sidebar:visible .iiid-count');
  await until(async () => /^\d+ skills/.test(await count.innerText()), 'the whole list replaces the first screen');
  const total = Number((await count.innerText()).split(' ')[0]);
  assert.ok(total > 60, `${total} skills`);
  assert.equal(Number(await tab.locator('ul[aria-label="skills"] > li.iiid-row').first().getAttribute('aria-setsize')), total);
  await tab.close();
});

scenario('S13b the filter finds skills by words only in their body, and says it searches bodies', async () => {
  await switcher().getByRole('radio', {name: 'Skills'}).click();
  const filter = page.getByRole('textbox', {name: 'Filter'});
  assert.match(await filter.getAttribute('placeholder'), /body/, 'the placeholder says bodies are searched');
  await writeFile('skills/ops/rollback.md', '# Rollback\n\nUndo a bad release.\n\n## Steps\n\nPull the quokka-lever, then verify.\n');
  await filter.fill('quokka-lever');
  const row = page.getByRole('button', {name: /^Rollback/});
  await row.waitFor();
  assert.equal(await page.locator('ul[aria-label="skills"] > li.iiid-row').count(), 1);
  await row.getByText('matches body').waitFor();
  const asked = (await callsTo('directory::skills::list')).filter((c) => c.payload && c.payload.search_body === true);
  assert.ok(asked.some((c) => c.payload.search === 'quokka-lever'), JSON.stringify(asked.map((c) => c.payload)));
  // The light answer: the ids of the matching skills, not their rows.
  assert.ok(asked.every((c) => c.payload.ids_only === true), JSON.stringify(asked.map((c) => c.payload)));
  await filter.fill('rollback QUOKKA-LEVER');
  const count = page.locator('.iiid-sidebar:visible .iiid-count');
  await until(async () => /^1 skill\b(?!s)/.test(await count.innerText()), 'one skill matches the title word plus the body word');
  await row.waitFor();
  await shot('13b-body-search.png');
  await filter.fill('quokka-lever nowhere-word');
  await page.getByText('No skills match “quokka-lever nowhere-word”.').waitFor();
  await filter.fill('');
  await page.getByRole('button', {name: /^Bulk entry 0\b/}).first().waitFor();
});

scenario('S14 keyboard: dialogs trap focus and close on Escape, / from anywhere, focus rings, sticky bars, labels at 390 px', async () => {
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('aria-label')), 'Filter');
  await page.getByRole('button', {name: /^Bulk entry 0\b/}).first().click();
  const doc = page.getByRole('region', {name: /^Skill bulk0\/entry-000/});
  await doc.getByRole('button', {name: 'Delete'}).click();
  const dialog = page.getByRole('dialog', {name: 'Delete skill?'});
  await dialog.waitFor();
  for (let i = 0; i < 6; i += 1) {
    await page.keyboard.press('Tab');
    assert.equal(await dialog.evaluate((node) => node.contains(document.activeElement)), true, `Tab ${i} stays in the dialog`);
  }
  await page.keyboard.press('Shift+Tab');
  assert.equal(await dialog.evaluate((node) => node.contains(document.activeElement)), true);
  const close = dialog.getByRole('button', {name: 'Close'});
  await close.focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  assert.notEqual(await close.evaluate((node) => getComputedStyle(node).outlineStyle), 'none', 'the icon button shows a focus ring');
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  await page.keyboard.press('Escape');
  await dialog.waitFor({state: 'detached'});
  assert.equal(await doc.locator('.iiid-doc__bar').evaluate((node) => getComputedStyle(node).position), 'sticky');
  assert.equal(await page.locator('.iiid-sidebar:visible .iiid-sidebar__tools').evaluate((node) => getComputedStyle(node).position), 'sticky');
  await page.setViewportSize({width: 390, height: 800});
  for (const name of ['Skills', 'Agent Profiles', 'Kits']) {
    const radio = switcher().getByRole('radio', {name});
    const visible = (await radio.innerText()).replace(/\d+$/, '').trim();
    assert.ok(visible.length > 0 && name.toLowerCase().includes(visible.toLowerCase()), `${name} shows its label (${visible})`);
  }
  // Issue 34 item 12: one toolbar row at 390 px, 44 px targets.
  const bar = page.locator('.iiid-doc:visible .iiid-doc__bar');
  await until(async () => (await bar.boundingBox()).height <= 62, 'the document toolbar is one row');
  const tops = await bar.locator('button:visible').evaluateAll((nodes) => nodes.map((n) => Math.round(n.getBoundingClientRect().top)));
  assert.equal(new Set(tops).size, 1, `one row of buttons: ${tops}`);
  for (const height of await bar.locator('button:visible').evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().height))) assert.ok(height >= 44, `toolbar target ${height}px`);
  for (const height of await switcher().getByRole('radio').evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().height))) assert.ok(height >= 44, `switcher target ${height}px`);
  await page.getByRole('button', {name: 'Delete'}).waitFor();
  await shot('14-narrow-390.png');
  await page.setViewportSize({width: 1280, height: 800});
  const filter = page.getByRole('textbox', {name: 'Filter'});
  const fits = await filter.evaluate((node) => {
    const style = getComputedStyle(node);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${style.fontSize} ${style.fontFamily}`;
    const room = node.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return ctx.measureText(node.placeholder).width <= room;
  });
  assert.ok(fits, 'the filter placeholder is not cut at 1280 px');
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  // The pane shows its document again: the one open before S12's hot reload (restored), or the empty state.
  await page.locator('.iiid-browser:not([hidden]) .iiid-doc').waitFor();
});
