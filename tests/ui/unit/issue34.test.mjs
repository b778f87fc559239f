// L1: issue 34 items 1–3 — never lose typed text: restored drafts keep their base, saves send a
// snapshot and keep what was typed since, merge conflicts are resolved per block before a save.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import * as page from '../../../src/iii_directory/ui/dist/page.js';

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
