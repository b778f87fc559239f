// L1: the page rules added for never losing work and speaking to people (issue 21): the SHA-256
// the stale-write guard compares, the three-way merge of the compare view, the D-code sentences
// and the install review's default for a user's own file.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {createHash} from 'node:crypto';

import {page} from './page.mjs';

const nodeSha = (text) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

test('sha256Hex equals the SHA-256 of the UTF-8 bytes', () => {
  const samples = ['', 'abc', 'é — ✓ 🚢\n', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(64), 'w'.repeat(1000), '# Notes\n\nKeep short notes.\n'];
  for (const text of samples) assert.equal(page.sha256Hex(text), nodeSha(text), JSON.stringify(text.slice(0, 20)));
  assert.equal(page.sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('merge3 takes one-sided changes from each side', () => {
  const base = '# Notes\n\nOne.\nTwo.\n';
  const mine = '# My notes\n\nOne.\nTwo.\n';
  const theirs = '# Notes\n\nOne.\nTwo.\nOutside.\n';
  assert.deepEqual(page.merge3(base, mine, theirs), {text: '# My notes\n\nOne.\nTwo.\nOutside.\n', conflicts: 0});
  assert.deepEqual(page.merge3(base, base, theirs), {text: theirs, conflicts: 0});
  assert.deepEqual(page.merge3(base, mine, base), {text: mine, conflicts: 0});
  assert.deepEqual(page.merge3(base, theirs, theirs), {text: theirs, conflicts: 0});
});

test('merge3 marks edits of the same lines as a conflict', () => {
  const merged = page.merge3('a\nb\nc\n', 'a\nB mine\nc\n', 'a\nB disk\nc\n');
  assert.equal(merged.conflicts, 1);
  assert.equal(merged.text, 'a\n<<<<<<< yours\nB mine\n=======\nB disk\n>>>>>>> on disk\nc\n');
  assert.equal(page.hasConflictMarkers(merged.text), true);
  const tails = page.merge3('a\n', 'a\nmine\n', 'a\ndisk\n');
  assert.equal(tails.conflicts, 1);
});

test('the stale-write refusal is recognised for skills and agent profiles', () => {
  const skill = new Error('remote error (D114): D114 invalid_input: skill "notes/howto" changed since you read it (expected sha256 abc…, the file now has def…); nothing was written.');
  const agent = new Error('remote error (D414): D414 invalid_input: agent profile "scribe" changed since you read it (x); nothing was written.');
  assert.equal(page.isStaleWrite(skill), true);
  assert.equal(page.isStaleWrite(agent), true);
  assert.equal(page.isStaleWrite(new Error('D114 invalid_input: skill "x" already exists.')), false);
  assert.equal(page.humanError(skill, {op: 'update', noun: 'skill'}).action, 'compare');
});

test('humanError speaks one sentence per D-code with an action where one helps', () => {
  const exists = page.humanError(new Error('remote error (D114): D114 invalid_input: skill "notes/howto" already exists. Next: call directory::skills::update to edit the existing skill.'), {op: 'create', noun: 'skill'});
  assert.deepEqual(exists, {code: 'D114', sentence: 'A skill with this id already exists.', action: 'open', actionLabel: 'Open it'});
  assert.equal(page.humanError('D414 invalid_input: agent profile "x" already exists.', {op: 'create', noun: 'agent profile'}).sentence,
    'An agent profile with this id already exists.');
  assert.equal(page.humanError('D113 invalid_input: content has an empty body after the frontmatter block; readers reject empty bodies.', {op: 'update', noun: 'skill'}).sentence,
    'A skill needs some text in its body.');
  assert.equal(page.humanError('D116 invalid_input: skill "pdf" is system-installed', {op: 'update', noun: 'skill'}).action, 'copy');
  assert.equal(page.humanError('D510 not_found: kit "acme/nope" does not exist in the registry.', {op: 'install'}).sentence, 'There is no kit with that name in the registry.');
  assert.equal(page.humanError('something odd', {op: 'update'}).sentence, 'The save did not go through.');
  assert.equal(page.errorCode('remote error (D520): D520 registry_error: x'), 'D520');
  assert.equal(page.errorCode('plain'), '');
});

test("the install review keeps a user's own file by default", () => {
  const plan = {kind: 'install', files: [
    {path: 'agents/reviewer.md', default: 'overwrite', options: ['overwrite', 'keep'], collision: {owner: 'local'}},
    {path: 'agents/global.md', default: 'overwrite', options: ['overwrite', 'keep'], collision: {owner: 'global'}},
    {path: 'agents/fromkit.md', default: 'overwrite', options: ['overwrite', 'keep'], collision: {owner: 'kit', kit: 'a/b'}},
    {path: 'agents/new.md', default: 'overwrite', options: ['overwrite']},
  ]};
  assert.deepEqual(page.initialChoices(plan), {'agents/reviewer.md': 'keep', 'agents/global.md': 'keep'});
  assert.deepEqual(page.initialChoices({...plan, kind: 'update'}), {});
  assert.equal(page.installPrimaryLabel(plan, page.initialChoices(plan)), 'Install and replace 1 profile');
});

test('listItems filters on every word and groups skills by namespace', () => {
  const adapter = page.ADAPTERS.skills;
  const rows = [{id: 'notes/howto', title: 'Notes how-to'}, {id: 'acme/team/flow', title: 'Flow', description: 'Tickets move left to right'}, {id: 'notes/a', title: 'A'}];
  const entries = rows.map((row) => ({row, key: row.id, hay: page.rowHaystack(adapter, row)}));
  const all = page.listItems(entries, '', true);
  assert.deepEqual(all.map((i) => (i.type === 'group' ? `#${i.name}:${i.count}` : i.key)), ['#acme:1', 'acme/team/flow', '#notes:2', 'notes/a', 'notes/howto']);
  assert.deepEqual(page.listItems(entries, 'tickets RIGHT', true).map((i) => i.key), ['acme/team/flow']);
  assert.deepEqual(page.listItems(entries, 'notes', true).map((i) => i.key), ['notes/a', 'notes/howto'], 'one namespace: no heading');
  assert.deepEqual(page.listItems(entries, '', false).map((i) => i.key), ['notes/howto', 'acme/team/flow', 'notes/a'], 'ungrouped keeps list order');
});

test('listItems also keeps rows whose body holds the words the cheap fields miss, and marks them', () => {
  const adapter = page.ADAPTERS.skills;
  const rows = [{id: 'ops/deploy', title: 'Deploy'}, {id: 'ops/notes', title: 'Notes', description: 'kubectl tips'}, {id: 'web/cdn', title: 'CDN'}];
  const entries = rows.map((row) => ({row, key: row.id, hay: page.rowHaystack(adapter, row)}));
  const bodyHits = new Map([['rollout', new Set(['ops/deploy', 'web/cdn'])], ['kubectl', new Set(['ops/deploy'])]]);
  assert.deepEqual(page.listItems(entries, 'rollout', false).map((i) => i.key), [], 'no body search, no body match');
  const both = page.listItems(entries, 'kubectl ROLLOUT', true, bodyHits);
  assert.deepEqual(both.map((i) => [i.key, !!i.viaBody]), [['ops/deploy', true]], 'every word must match, each in the fields or the body');
  const one = page.listItems(entries, 'kubectl', true, bodyHits);
  assert.deepEqual(one.map((i) => [i.key, !!i.viaBody]), [['ops/deploy', true], ['ops/notes', false]]);
  assert.deepEqual(page.filterWords('  Kubectl   rollout '), ['kubectl', 'rollout']);
});

test('windowRange finds the items meeting the viewport', () => {
  const offsets = Float64Array.from({length: 1001}, (_, i) => i * 78);
  assert.deepEqual(page.windowRange(offsets, 0, 780, 0), [0, 10]);
  assert.deepEqual(page.windowRange(offsets, 7800, 780, 2), [98, 112]);
  assert.deepEqual(page.windowRange(offsets, 78 * 995, 780, 6), [989, 1000]);
});

test('origins: read-only roots, kit-owned skills and profile badges', () => {
  assert.deepEqual(page.readOnlyRoots(null), ['.agents/skills', '~/.agents/skills']);
  assert.equal(page.isReadOnlyPath('/home/u/.agents/skills/pdf/SKILL.md', page.readOnlyRoots(null)), true);
  assert.equal(page.isReadOnlyPath('/p/custom/ro/pdf/SKILL.md', ['/p/custom/ro']), true);
  assert.equal(page.isReadOnlyPath('/p/custom/rother/x.md', ['/p/custom/ro']), false);
  assert.equal(page.isReadOnlyPath('/p/skills/notes/howto.md', page.readOnlyRoots(null)), false);
  assert.equal(page.kitOfSkill('acme/team/tickets/flow', new Map([['acme/team/tickets/flow', 'acme/team']])), 'acme/team');
  assert.equal(page.kitOfSkill('acme/teamwork/x', new Map([['acme/team/tickets/flow', 'acme/team']])), null);
  const builtinIds = new Set(page.BUILTIN_AGENT_IDS);
  assert.deepEqual(page.originBadges('agents', {id: 'default', builtin: true, source: {kind: 'builtin'}}, {builtinIds}).map((b) => b.text), ['built-in']);
  assert.deepEqual(page.originBadges('agents', {id: 'default', builtin: false, source: {kind: 'local'}}, {builtinIds}).map((b) => b.text), ['local override']);
  assert.deepEqual(page.originBadges('agents', {id: 'planner', source: {kind: 'kit', kit: 'acme/team'}}, {builtinIds}).map((b) => b.text), ['from kit acme/team']);
  assert.deepEqual(page.originBadges('skills', {id: 'pdf'}, {readOnlyIds: new Set(['pdf'])}).map((b) => b.text), ['read-only']);
  assert.deepEqual(page.originBadges('skills', {id: 'pdf', origin: 'read_only'}, {}).map((b) => b.text), ['read-only'], 'the list row says so before any open');
  assert.deepEqual(page.originBadges('skills', {id: 'acme/team/x', origin: 'kit'}, {kits: new Map([['acme/team/x', 'acme/team']])}).map((b) => b.text), ['from kit acme/team']);
  assert.deepEqual(page.originBadges('skills', {id: 'notes/a', origin: 'skills'}, {}).map((b) => b.text), []);
});
