// Issue 34 item 14 on the page's side: a body search asks at once after a quiet spell and waits
// only inside a burst of typing; its light answer (`ids_only`) is read as a set of keys.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

test('a keystroke after a quiet spell asks for a body search at once, one inside a burst waits', () => {
  const pause = page.BODY_SEARCH_PAUSE_MS;
  assert.ok(pause > 0 && pause < 300, 'the pause leaves room under the 300 ms floor');
  assert.equal(page.bodySearchDelay(-Infinity, 0, pause), 0, 'the first keystroke ever');
  assert.equal(page.bodySearchDelay(1000, 1000 + pause, pause), 0, 'typing resumed after the pause');
  assert.equal(page.bodySearchDelay(1000, 1000 + pause - 1, pause), pause, 'still typing');
  assert.equal(page.bodySearchDelay(1000, 1040, pause), pause);
});

test('a body search answer is read from ids_only ids, or from rows of a worker without it', () => {
  const skills = page.ADAPTERS.skills;
  assert.deepEqual([...page.bodyMatchKeys({skills: [], ids: ['a/b', 'c']}, skills)], ['a/b', 'c']);
  assert.deepEqual([...page.bodyMatchKeys({skills: [{id: 'x'}, {id: 'y/z'}]}, skills)], ['x', 'y/z']);
  assert.deepEqual([...page.bodyMatchKeys(null, skills)], []);
});

test('the skills list asks for a first screen of rows beside the whole list', () => {
  const list = page.ADAPTERS.skills.list;
  assert.ok(list.first > 0 && list.first <= 100);
  assert.equal(page.ADAPTERS.agents.list.first, undefined, 'agent profiles are few: one call');
});

test('setup asks for the first screen of skills at once and hands it to the list once, while fresh', async () => {
  const skills = page.ADAPTERS.skills.list;
  const request = {...skills.payload, limit: skills.first};
  assert.equal(page.FIRST_SCREEN.fn, skills.fn);
  assert.deepEqual(page.FIRST_SCREEN.payload, request, 'page.js asks exactly what the list would ask');
  const asked = [];
  let clock = 1000;
  const host = {iii: {trigger: (fn, payload) => { asked.push([fn, payload]); return Promise.resolve({skills: [{id: 'a'}]}); }}};
  const take = page.prefetchFirstScreen(host, () => clock);
  assert.deepEqual(asked, [[skills.fn, request]], 'asked before anything else happens');
  assert.equal(take(skills.fn, {...skills.payload}), null, 'another request is not served from it');
  assert.equal(take('directory::agents::list', request), null);
  const reordered = {limit: skills.first, ...skills.payload};
  assert.deepEqual(await take(skills.fn, reordered), {skills: [{id: 'a'}]});
  assert.equal(take(skills.fn, request), null, 'handed out once');
  const stale = page.prefetchFirstScreen(host, () => clock);
  clock += 30001;
  assert.equal(stale(skills.fn, request), null, 'too old: the list asks itself');
  assert.equal(page.prefetchFirstScreen({})(skills.fn, request), null, 'a host without iii.trigger');
});
