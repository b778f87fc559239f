// Issue 35 item 8: the page is a few ES modules the console serves as `console:module` assets and
// page.js's setup imports through host.importModule; none has a static import.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {readFileSync, readdirSync} from 'node:fs';

import {modules, composed, page} from './page.mjs';

const DIST = new URL('../../../src/iii_directory/ui/dist/', import.meta.url);
const sources = readdirSync(DIST).filter((f) => f.endsWith('.js')).map((f) => [f, readFileSync(new URL(f, DIST), 'utf8')]);

test('every module is small, has no static import and imports nothing but react', () => {
  assert.ok(sources.length >= 10, sources.map(([f]) => f).join(', '));
  for (const [file, text] of sources) {
    assert.ok(text.split('\n').length <= 600, `${file} is under 600 lines`);
    assert.doesNotMatch(text, /^\s*import\s[^(]/m, `${file} has no static import`);
    assert.doesNotMatch(text, /^\s*export\s+(\*|\{[^}]*\})\s+from\s/m, `${file} re-exports nothing`);
    const imports = [...text.matchAll(/\bimport\(\s*([^)]*)\)/g)].map((m) => m[1]);
    assert.deepEqual(imports, file === 'page.js' ? ['siblingUrl(path, base', "'react'"] : [], `${file} imports ${imports}`);
  }
});

test('PAGE_MODULES names every module file beside page.js and module.js', () => {
  const files = sources.map(([f]) => f).filter((f) => !['page.js', 'module.js'].includes(f)).sort();
  assert.deepEqual(Object.values(page.PAGE_MODULES).map((p) => p.replace('iii-directory/', '')).sort(), files);
  assert.deepEqual(Object.keys(page.PAGE_MODULES).sort(), Object.keys(modules).sort());
});

test('the pure modules export disjoint names; composeRules joins them and refuses a clash', () => {
  for (const name of ['plural', 'sha256Hex', 'parseFrontmatter', 'markdownBlocks', 'planSummary', 'ADAPTERS', 'listItems', 'withCode']) {
    assert.equal(typeof composed[name] === 'undefined', false, name);
  }
  assert.equal(composed.MODULE_API, page.MODULE_API);
  assert.throws(() => page.composeRules({...modules, diff: {...modules.diff, plural: () => 'other'}}), /export plural twice/);
});

test('setup imports every page module through host.importModule, retrying a failed import once', async () => {
  const asked = [];
  let failures = 1;
  const host = {importModule: async (path) => {
    asked.push(path);
    if (failures > 0) { failures -= 1; throw new Error('404'); }
    return modules[Object.entries(page.PAGE_MODULES).find(([, p]) => p === path)[0]];
  }};
  const waits = [];
  const loaded = await page.loadPageModules(host, {wait: async (ms) => { waits.push(ms); }});
  assert.deepEqual(waits, [1000]);
  assert.deepEqual(Object.keys(loaded).sort(), Object.keys(modules).sort());
  for (const [name, mod] of Object.entries(loaded)) assert.equal(mod, modules[name]);
  const paths = Object.values(page.PAGE_MODULES);
  assert.deepEqual(asked.slice(-paths.length), paths);
});

test('a console without host.importModule gets the modules from beside page.js, same version', async () => {
  assert.equal(page.siblingUrl('iii-directory/rules.js', 'http://c/ui/iii-directory/page.js?v=0123456789abcdef'),
    'http://c/ui/iii-directory/rules.js?v=0123456789abcdef');
  assert.equal(page.siblingUrl('iii-directory/ui.js', 'file:///x/dist/page.js'), 'file:///x/dist/ui.js');
  const loaded = await page.loadPageModules({});
  for (const [name, mod] of Object.entries(loaded)) assert.deepEqual(Object.keys(mod).sort(), Object.keys(modules[name]).sort(), name);
});
