// L1: page.js helpers beyond the §3.5 list — the split ratio, subscriber ids, the defensive
// readers of chat messages and model lists, and the backtick-to-code rendering.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

test('split ratio stays between 0.2 and 0.8, two decimals', () => {
  assert.equal(page.clampRatio(0.5), 0.5);
  assert.equal(page.clampRatio(0.05), 0.2);
  assert.equal(page.clampRatio(0.97), 0.8);
  assert.equal(page.clampRatio(0.3333), 0.33);
  for (const bad of [undefined, null, '0.3', NaN, Infinity]) assert.equal(page.clampRatio(bad), 0.5, String(bad));
  assert.equal(page.ratioFromPointer(160, 100, 200), 0.3);
  assert.equal(page.ratioFromPointer(100, 100, 200), 0.2);
  assert.equal(page.ratioFromPointer(400, 100, 200), 0.8);
  assert.equal(page.ratioFromPointer(150, 100, 0), 0.5);
});

test('subscriber ids follow §2.7', () => {
  assert.equal(page.subscriberId('kits-on-change', 'detail-acme/team', 3), 'iii::iii-directory-ui::kits-on-change::detail-acme-team-3');
  assert.equal(page.subscriberId('skills-on-change', 'browser-skills', 1), 'iii::iii-directory-ui::skills-on-change::browser-skills-1');
  assert.equal(page.subscriberId('kits-on-change', 'run-KP_1.x', 2), 'iii::iii-directory-ui::kits-on-change::run-kp_1-x-2');
});

test('model lists are read defensively', () => {
  assert.deepEqual(page.modelIds(['a', 'b']), ['a', 'b']);
  assert.deepEqual(page.modelIds({models: [{id: 'x'}, {name: 'y'}, {}, 7, 'z']}), ['x', 'y', 'z']);
  assert.deepEqual(page.modelIds(null), []);
  assert.deepEqual(page.modelIds({models: 'nope'}), []);
});

test('chat messages are read defensively', () => {
  assert.deepEqual(page.readMessage({functionId: 'f', input: {a: 1}, output: {b: 2}}), {functionId: 'f', input: {a: 1}, output: {b: 2}});
  assert.deepEqual(page.readMessage({function_id: 'f', arguments: {a: 1}, result: {content: [], details: {d: 1}}}),
    {functionId: 'f', input: {a: 1}, output: {d: 1}});
  assert.deepEqual(page.readMessage({function_id: 'f', args: 'not an object'}), {functionId: 'f', input: {}, output: undefined});
  assert.deepEqual(page.readMessage(null), {functionId: undefined, input: {}, output: undefined});
});

test('text between backticks renders as code', () => {
  const h = (tag, props, text) => ({tag, key: props.key, text});
  assert.deepEqual(page.withCode(h, 'apply it with `iii trigger x` now'), ['apply it with ', {tag: 'code', key: 1, text: 'iii trigger x'}, ' now']);
  assert.deepEqual(page.withCode(h, 'plain'), ['plain']);
  assert.deepEqual(page.withCode(h, null), ['']);
});
