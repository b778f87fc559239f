// The Directory page served by `iii-directory-console` (issue 34 item 15), in headless Chromium:
// the user's own skills folder is listed, a skill opens, an edit saves to the file on disk.
// Run by tests/ui/test_console_command.py with III_UI_CONSOLE_URL set to the printed address.
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync, mkdirSync} from 'node:fs';
import {join} from 'node:path';
import {chromium} from 'playwright-core';

const URL_ = process.env.III_UI_CONSOLE_URL;
const PROJECT = process.env.III_UI_PROJECT;
const ART = process.env.III_UI_ARTIFACTS || 'test-artifacts/console-ui';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];
mkdirSync(ART, {recursive: true});
let browser;
after(async () => { if (browser) await browser.close(); });

test('the console command serves the Directory page over the current folders', async () => {
  browser = await chromium.launch({executablePath: '/usr/bin/chromium', headless: true, args: FLAGS});
  const page = await (await browser.newContext({viewport: {width: 1280, height: 800}})).newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.setDefaultTimeout(15000);
  await page.goto(URL_);
  await page.waitForFunction(() => window.__harness && window.__harness.ready, null, {timeout: 20000});
  await page.getByRole('radiogroup', {name: 'Browse skills, agent profiles or kits'}).getByRole('radio', {name: 'Skills'}).click();
  await page.getByRole('button', {name: /Demo skill/}).click();
  const body = page.getByRole('textbox', {name: 'Skill body'});
  await body.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('Typed in the console command.');
  await page.keyboard.press('Control+s');
  await page.getByRole('region', {name: 'Skill demo/hello'}).getByText('Saved', {exact: true}).waitFor();
  assert.ok(readFileSync(join(PROJECT, 'skills', 'demo', 'hello.md'), 'utf8').endsWith('Typed in the console command.'));
  await page.screenshot({path: join(ART, '15-console-command.png')});
  assert.deepEqual(errors, []);
});
