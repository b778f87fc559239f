// L1: issue 34 items 1–3 — never lose typed text: restored drafts keep their base, saves send a
// snapshot and keep what was typed since, merge conflicts are resolved per block before a save.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

const BASE = '# Notes\n\nOne.\n';
const stored = (content, base = BASE) => ({content, base, base_sha256: page.sha256Hex(base), saved_at: '2026-01-01T00:00:00Z'});

test('a restored draft whose base is still on disk is a plain dirty document', () => {
  assert.deepEqual(page.restoreDraft(stored(`${BASE}Two.\n`), BASE),
    {loaded: BASE, draft: `${BASE}Two.\n`, banner: null, diskText: null});
});

test('a restored draft over a changed file keeps its base and shows the disk text as changed', () => {
  const disk = `${BASE}Outside.\n`;
  const restored = page.restoreDraft(stored(`Mine.\n${BASE}`), disk);
  assert.deepEqual(restored, {loaded: BASE, draft: `Mine.\n${BASE}`, banner: 'changed', diskText: disk});
  // The save's guard is the hash of the base, which the worker refuses for the changed file.
  assert.notEqual(page.sha256Hex(restored.loaded), page.sha256Hex(disk));
  assert.deepEqual(page.merge3(restored.loaded, restored.draft, restored.diskText), {text: `Mine.\n${BASE}Outside.\n`, conflicts: 0});
});

test('a draft without a trustworthy base is compared against the disk; an empty or equal one is dropped', () => {
  const disk = `${BASE}Outside.\n`;
  assert.deepEqual(page.restoreDraft({content: 'Mine.\n'}, disk), {loaded: disk, draft: 'Mine.\n', banner: 'changed', diskText: disk});
  assert.deepEqual(page.restoreDraft({...stored('Mine.\n'), base_sha256: '0'.repeat(64)}, disk).loaded, disk);
  assert.equal(page.restoreDraft(stored(disk), disk), null);
  assert.equal(page.restoreDraft(null, disk), null);
  assert.equal(page.restoreDraft({content: 7}, disk), null);
});

test('after a save, text typed while it ran stays the draft; otherwise the document is clean', () => {
  const doc = {key: 'a', loaded: BASE, draft: `${BASE}Sent.\n`};
  assert.deepEqual(page.afterSave(doc, `${BASE}Sent.\n`, `${BASE}Sent.\n`), {key: 'a', loaded: `${BASE}Sent.\n`, draft: `${BASE}Sent.\n`});
  const typing = {...doc, draft: `${BASE}Sent. More.\n`};
  const after = page.afterSave(typing, `${BASE}Sent.\n`, `${BASE}Sent.\n`);
  assert.equal(after.loaded, `${BASE}Sent.\n`);
  assert.equal(after.draft, `${BASE}Sent. More.\n`);
});

const MERGED = 'a\n<<<<<<< yours\nB1\n=======\nB2\n>>>>>>> on disk\nc\n<<<<<<< yours\n=======\nD2\nD3\n>>>>>>> on disk\ne\n';

test('conflict blocks are found in order with both sides', () => {
  assert.deepEqual(page.conflictBlocks(MERGED), [
    {open: 1, sep: 3, close: 5, mine: ['B1'], theirs: ['B2']},
    {open: 7, sep: 8, close: 11, mine: [], theirs: ['D2', 'D3']}]);
  assert.deepEqual(page.conflictBlocks('a\n<<<<<<< yours\nx\n||||||| installed\nb\n=======\ny\n>>>>>>> kit\n')[0].mine, ['x']);
  assert.deepEqual(page.conflictBlocks('<<<<<<< only\n=======\n'), []);
  assert.deepEqual(page.conflictBlocks('plain text\n'), []);
});

test('each conflict takes one side and leaves the others', () => {
  const first = page.takeSide(MERGED, 0, 'mine');
  assert.equal(first, 'a\nB1\nc\n<<<<<<< yours\n=======\nD2\nD3\n>>>>>>> on disk\ne\n');
  assert.equal(page.takeSide(first, 0, 'theirs'), 'a\nB1\nc\nD2\nD3\ne\n');
  assert.equal(page.takeSide(MERGED, 1, 'mine'), 'a\n<<<<<<< yours\nB1\n=======\nB2\n>>>>>>> on disk\nc\ne\n');
  assert.equal(page.takeSide(MERGED, 5, 'mine'), MERGED);
});

test('a save waits while the draft holds conflict blocks its base did not have', () => {
  assert.equal(page.blocksSave(MERGED, 'a\nc\ne\n'), true);
  assert.equal(page.blocksSave('a\nc\ne\n', MERGED), false);
  const documented = 'How to read a conflict:\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n';
  assert.equal(page.blocksSave(`${documented}More.\n`, documented), false, 'a skill about conflicts keeps its examples');
});

test('transport problems are told apart from the worker\'s own errors', () => {
  assert.equal(page.transportProblem(new Error("remote error (function_not_found): Function 'directory::skills::get' not found")), 'unreachable');
  assert.equal(page.transportProblem(new TypeError('Failed to fetch')), 'unreachable');
  assert.equal(page.transportProblem('remote error (invocation_failed): function directory::skills::list timed out'), 'timeout');
  assert.equal(page.transportProblem('remote error (D110): D110 not_found: skill "x" not found'), null);
  assert.equal(page.transportProblem('D114 invalid_input: skill "x" changed since you read it'), null);
  const said = page.humanError(new Error('remote error (function_not_found): Function directory::skills::get not found'), {op: 'get', noun: 'skill'});
  assert.deepEqual([said.sentence, said.action], ['The iii-directory worker is not reachable; nothing was changed.', 'retry']);
  assert.equal(page.humanError('request timed out after 30000 ms', {op: 'get'}).actionLabel, 'Retry');
});

/** Timers that run only when the test says so, and a clock the test moves. */
function manualTimers() {
  const pending = new Map();
  let id = 0;
  let clock = 1000;
  return {
    setTimer: (fn, ms) => { id += 1; pending.set(id, {fn, ms}); return id; },
    clearTimer: (t) => { pending.delete(t); },
    now: () => clock,
    delays: () => [...pending.values()].map((p) => p.ms),
    async fire() { const [[t, {fn, ms}]] = pending; pending.delete(t); clock += ms; fn(); await new Promise((r) => setImmediate(r)); },
  };
}

test('reachability: a failed call starts probing with back-off; any answer ends it', async () => {
  const timers = manualTimers();
  let answers = false;
  let probes = 0;
  const reach = page.createReachability(() => { probes += 1; return answers ? Promise.resolve({}) : Promise.reject(new Error('remote error (function_not_found): x')); }, timers);
  const seen = [];
  reach.subscribe((s) => seen.push(s.down));
  reach.markDown();
  reach.markDown();
  assert.deepEqual(timers.delays(), [2000], 'one probe scheduled, however many calls failed');
  assert.equal(reach.state.nextAt, 3000);
  await timers.fire();
  assert.deepEqual(timers.delays(), [4000]);
  await timers.fire();
  assert.deepEqual(timers.delays(), [8000]);
  assert.equal(probes, 2);
  answers = true;
  await reach.retry();
  assert.equal(reach.state.down, false);
  assert.deepEqual(timers.delays(), [], 'no probe after the worker answered');
  assert.deepEqual(seen, [true, true, true, false]);
  reach.markDown();
  reach.markUp();
  assert.deepEqual([reach.state.down, timers.delays()], [false, []]);
});

test('reachability: a probe answered with the worker\'s own error counts as reachable', async () => {
  const timers = manualTimers();
  const reach = page.createReachability(() => Promise.reject(new Error('remote error (D510): D510 not_found: no kit')), timers);
  reach.markDown();
  await timers.fire();
  assert.equal(reach.state.down, false);
});

test('kit ownership of skills comes from the lock records, never from the id', () => {
  const owners = page.skillOwners([
    {kit: 'acme/team', file_list: [{path: 'skills/acme/team/tickets/flow.md', kind: 'skill', id: 'acme/team/tickets/flow'},
      {path: 'agents/planner.md', kind: 'agent', id: 'planner'}]},
    null,
    {kit: 'other/kit', file_list: [{path: 'skills/shared/notes.md', kind: 'skill', id: 'shared/notes'}]}]);
  assert.equal(page.kitOfSkill('acme/team/tickets/flow', owners), 'acme/team');
  assert.equal(page.kitOfSkill('acme/team/mine', owners), null, 'made by the user under the kit namespace');
  assert.equal(page.kitOfSkill('shared/notes', owners), 'other/kit', 'a kit file outside its namespace is still the kit\'s');
  assert.equal(page.kitOfSkill('planner', owners), null);
  assert.equal(page.kitOfSkill('acme/team/x', ['acme/team']), null, 'a list of kit names says nothing about ownership');
  assert.deepEqual(page.originBadges('skills', {id: 'acme/team/mine'}, {kits: owners}).map((b) => b.text), []);
  assert.deepEqual(page.originBadges('skills', {id: 'acme/team/tickets/flow'}, {kits: owners}).map((b) => b.text), ['from kit acme/team']);
});

test('a kit has one state: a pending update review wins over "up to date"', () => {
  const kit = {kit: 'acme/team', version: '1.1.0', update: {available: null}};
  const pending = [{plan_id: 'kp_1', kit: 'acme/team', kind: 'update', from: '1.1.0', to: '1.2.0'}];
  assert.deepEqual(page.kitStatus(kit, pending), {text: 'Update 1.1.0 → 1.2.0 waiting for review', update: true, plan: pending[0]});
  assert.deepEqual(page.kitStatus(kit, []), {text: 'up to date', update: false, plan: null});
  assert.equal(page.kitStatus({...kit, update: {available: '2.0.0', major: true}}, []).text, '↑ 2.0.0 available · major');
  assert.equal(page.kitStatus({kit: 'acme/team', version: '1.0.0'}, []).text, null, 'never checked: nothing to say');
  assert.equal(page.kitStatus(kit, [{...pending[0], kind: 'remove'}]).text, 'up to date');
});

test('a failed apply says its error once: a step detail repeating it is dropped', () => {
  const error = 'D515 compose_error: compose::add failed: image pull failed';
  const steps = [{id: 'workers', label: 'Workers (1)', state: 'failed', detail: 'D515 compose_error: compose::add failed: image pull failed'},
    {id: 'files', label: 'Files (4)', state: 'pending'}, {id: 'other', label: 'x', state: 'failed', detail: 'pulling kanban'}];
  assert.deepEqual(page.failedSteps(steps, error), [{id: 'workers', label: 'Workers (1)', state: 'failed'}, steps[1], steps[2]]);
});

test('the functions picker keeps engine and internal functions back and says one line each', () => {
  assert.equal(page.isInternalFunction({id: 'engine::functions::list'}), true);
  assert.equal(page.isInternalFunction({id: 'configuration::set'}), true);
  assert.equal(page.isInternalFunction({id: 'iii-directory::ui-content', internal: true}), true);
  assert.equal(page.isInternalFunction({id: 'kanban::ticket::create'}), false);
  assert.equal(page.oneLine('Create a ticket. Then tell the agent how to use it in detail.\nMore lines.'), 'Create a ticket.');
  assert.equal(page.oneLine('x'.repeat(200)).length, 90);
  assert.equal(page.oneLine(''), '');
});

test('the title of a skill without front matter is its first heading outside code fences', () => {
  const text = 'Intro.\n```md\n# Not this\n```\n## Real title ##\r\nBody.\n# Second\n';
  assert.deepEqual(page.firstHeading(text), {index: 4, text: 'Real title'});
  assert.equal(page.setFirstHeading(text, 'New title'), 'Intro.\n```md\n# Not this\n```\n## New title\r\nBody.\n# Second\n');
  assert.equal(page.firstHeading('No heading\n#hashtag\n'), null);
  assert.equal(page.setFirstHeading('plain\n', 'x'), 'plain\n');
});

test('after a delete, focus goes to the next row, else the one before', () => {
  const items = [{type: 'group', key: 'g:a'}, {type: 'row', key: 'a/1'}, {type: 'row', key: 'a/2'}, {type: 'group', key: 'g:b'}, {type: 'row', key: 'b'}];
  assert.equal(page.neighbourKey(items, 'a/2'), 'b');
  assert.equal(page.neighbourKey(items, 'b'), 'a/2');
  assert.equal(page.neighbourKey([{type: 'row', key: 'only'}], 'only'), null);
  assert.equal(page.neighbourKey(items, 'gone'), null);
});
