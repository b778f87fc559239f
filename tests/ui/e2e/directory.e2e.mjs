// L3 scenarios (console-ui.md §5.11): one story in one browser, state carried from step to step.
// Run by tests/ui/test_click_through.py, which starts the worker, the fakes and the harness server.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {mkdirSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {chromium} from 'playwright-core';

const BASE = process.env.III_UI_HARNESS_URL;
const ART = process.env.III_UI_ARTIFACTS || 'test-artifacts/console-ui';
const PROJECT = process.env.III_UI_PROJECT;
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];
mkdirSync(ART, {recursive: true});

let browser;
let page;
const consoleLog = [];
const fatal = [];

async function json(path, body) {
  const res = await fetch(BASE + path, body === undefined ? {} : {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(body)});
  return res.json();
}
const calls = () => json('/bridge/calls');
const callsTo = async (fn) => (await calls()).filter((c) => c.function_id === fn);
const readFile = (path) => json(`/control/files/read?path=${encodeURIComponent(path)}`);
const writeFile = (path, content) => json('/control/files/write', {path, content});
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
    if (failed) { t.skip('an earlier scenario failed; state carries from one scenario to the next'); return; }
    try { await fn(); } catch (error) { failed = true; await failureArtefacts(name.split(' ')[0]); throw error; }
    assert.deepEqual(fatal, [], 'no page errors, hook errors or [iii-ui] errors');
  });
}

before(async () => {
  browser = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: FLAGS});
  const context = await browser.newContext({viewport: {width: 1280, height: 800}});
  context.setDefaultTimeout(10000);
  page = await context.newPage();
  page.on('console', (msg) => {
    const text = `[${msg.type()}] ${msg.text()}`;
    consoleLog.push(text);
    if (msg.type() === 'error' && (text.includes('Invalid hook call') || text.includes('[iii-ui]'))) fatal.push(text);
  });
  page.on('pageerror', (error) => { consoleLog.push(`[pageerror] ${error.stack || error}`); fatal.push(String(error)); });
});

after(async () => {
  writeFileSync(join(ART, 'browser-console.log'), consoleLog.join('\n'));
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
  assert.ok(kitBindings.length >= 1 && kitBindings.every((b) => b.function_id.endsWith(`::${browserId}`)));
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
});

scenario('S3 add a preloaded function to a profile', async () => {
  const original = (await readFile('agents/scribe.md')).content;
  await switcher().getByRole('radio', {name: 'Agent Profiles'}).click();
  await page.getByRole('button', {name: /Scribe/}).waitFor();
  assert.ok(await page.getByText(/^local · /).first().isVisible());
  await page.getByText('Built-in · edits save a local override').first().waitFor();
  await page.getByRole('button', {name: /Scribe/}).click();
  await page.getByText('Models could not be loaded.').waitFor();
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

scenario('S6 plan an install, decide, see a diff', async () => {
  await page.getByRole('button', {name: 'Review install'}).click();
  await page.getByRole('heading', {name: 'Install acme/team 1.0.0'}).waitFor({timeout: 15000});
  const download = (await callsTo('directory::download-kit')).at(-1);
  assert.deepEqual(download.payload, {kit: 'acme/team'});
  planId = download.result.plan.plan_id;
  assert.ok((await callsTo('directory::kits::plan')).some((c) => c.payload.plan_id === planId && c.payload.contents === true));
  await page.getByText('1 existing profile will be replaced').waitFor();
  await page.getByText('created in this project — not from any package').waitFor();
  await page.getByText('New worker kanban ^1.4 → 1.6.1').waitFor();
  await page.getByRole('button', {name: 'Install and replace 1 profile'}).waitFor();
  await page.getByText('Install 1.0.0').waitFor();
  await page.getByRole('radiogroup', {name: 'What to do with agents/reviewer.md'}).getByRole('radio', {name: 'Keep the current one'}).click();
  await page.getByRole('button', {name: 'Install', exact: true}).waitFor();
  await shot('06-install-review.png');
  await page.getByRole('button', {name: 'View diff'}).click();
  const dialog = page.getByRole('dialog', {name: 'agents/reviewer.md'});
  await dialog.getByText('current/agents/reviewer.md').waitFor();
  await dialog.getByText('kit/agents/reviewer.md').waitFor();
  await shot('06-install-diff.png');
  await dialog.getByRole('radio', {name: 'Unified'}).click();
  await dialog.getByRole('button', {name: 'Close'}).first().click();
  await dialog.waitFor({state: 'detached'});
});

scenario('S7 apply: failure, retry, live progress', async () => {
  await json('/control/compose', {mode: 'fail'});
  await page.getByRole('button', {name: 'Install', exact: true}).click();
  await page.getByRole('heading', {name: 'Install stopped'}).waitFor({timeout: 15000});
  const apply = (await callsTo('directory::kits::apply')).at(-1);
  assert.deepEqual(apply.payload, {plan_id: planId, decisions: {'agents/reviewer.md': 'keep'}, remove_workers: []});
  await page.getByText('The apply stopped before finishing.').waitFor();
  await page.getByText(/D515 compose_error/).first().waitFor();
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
