// L1: the pure rules of page.js and the exports of module.js (console-ui.md §5.3).
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page, setup} from './page.mjs';
import * as mod from '../../../src/iii_directory/ui/dist/module.js';

const NAMES = ['COLLECTIONS', 'cleanError', 'formatAgo', 'formatSize', 'routeFromContext', 'narrowPanes', 'draftAction', 'originLabel',
  'parseFrontmatter', 'setFrontmatterFields', 'functionsEdit', 'paletteRows', 'isKitReference', 'attentionBadge', 'lineDiff',
  'hasConflictMarkers', 'effectiveDecision', 'unresolvedFiles', 'ownerPhrase', 'workerLine', 'decisionLabel', 'groupFunctions',
  'skillGroups', 'collisionHeadline', 'installPrimaryLabel', 'updateGroups', 'changeCount', 'fileStateWord', 'permissionTally',
  'updatePrimary', 'removalPrimaryLabel', 'decisionsPayload', 'initialSteps', 'stepsFromEvent', 'applyOutcome', 'claimsFunction',
  'planSummary', 'parseSearchResult', 'configPatch'];

test('module shape', () => {
  assert.equal(typeof setup, 'function');
  for (const name of NAMES) assert.ok(name in page, `page.js exports ${name}`);
  assert.equal(mod.MODULE_API, 1);
  assert.equal(page.MODULE_API, mod.MODULE_API);
  assert.equal(typeof mod.createKitsReview, 'function');
  assert.match(page.PAGE_VERSION, /\S/);
});

const collidingAgent = (id, extra = {}) => ({path: `agents/${id}.md`, kind: 'agent', id, change: 'added', local: 'occupied',
  collision: {owner: 'local'}, default: 'overwrite', options: ['overwrite', 'keep'], ...extra});

test('install labels', () => {
  const plan = {kit: 'acme/team', files: [collidingAgent('a'), collidingAgent('b'), {path: 'skills/acme/team/x.md', kind: 'skill', change: 'added', default: 'overwrite', options: ['overwrite']}]};
  assert.equal(page.installPrimaryLabel(plan, {}), 'Install and replace 2 profiles');
  assert.equal(page.collisionHeadline(plan, {}), '2 existing profiles will be replaced');
  assert.equal(page.installPrimaryLabel(plan, {'agents/a.md': 'keep'}), 'Install and replace 1 profile');
  assert.equal(page.collisionHeadline(plan, {'agents/a.md': 'keep'}), '1 existing profile will be replaced');
  const both = {'agents/a.md': 'keep', 'agents/b.md': 'keep'};
  assert.equal(page.installPrimaryLabel(plan, both), 'Install');
  assert.equal(page.collisionHeadline(plan, both), 'No existing file will be replaced');
  plan.files.push({path: 'skills/acme/team/y.md', kind: 'skill', change: 'added', collision: {owner: 'local'}, default: 'overwrite', options: ['overwrite', 'keep']});
  assert.equal(page.installPrimaryLabel(plan, {}), 'Install and replace 2 profiles and 1 file');
  assert.equal(page.collisionHeadline(plan, {}), '2 existing profiles and 1 existing file will be replaced');
  assert.equal(page.collisionHeadline(plan, both), '1 existing file will be replaced');
});

test('owner phrases', () => {
  assert.equal(page.ownerPhrase({owner: 'worker', worker: 'kanban'}), 'came from worker kanban');
  assert.equal(page.ownerPhrase({owner: 'worker', worker: 'kanban', version: '1.2.0', modified: true}), 'came from worker kanban 1.2.0 (edited here)');
  assert.equal(page.ownerPhrase({owner: 'kit', kit: 'acme/x'}), 'belongs to kit acme/x');
  assert.equal(page.ownerPhrase({owner: 'kit', kit: 'acme/x', version: '2.0.0'}), 'belongs to kit acme/x 2.0.0');
  assert.equal(page.ownerPhrase({owner: 'local'}), 'created in this project — not from any package');
  assert.equal(page.ownerPhrase({owner: 'global'}), 'your user-global profile (~/.iii/agents)');
  assert.equal(page.ownerPhrase({owner: 'builtin'}), 'built into iii-directory');
});

test('decisions payload', () => {
  const plan = {files: [
    {path: 'a', default: 'overwrite'}, {path: 'b', default: 'overwrite'}, {path: 'c', default: 'merged', merge: 'clean'}, {path: 'd', default: null},
  ]};
  assert.deepEqual(page.decisionsPayload(plan, {}), {});
  assert.deepEqual(page.decisionsPayload(plan, {a: 'overwrite', b: 'keep', c: {choice: 'merged', content: 'x'}, d: 'mine'}),
    {b: 'keep', c: {choice: 'merged', content: 'x'}, d: 'mine'});
  assert.deepEqual(page.decisionsPayload(plan, {d: {choice: 'kit', content: 'old'}}), {d: 'kit'});
});

test('skill groups', () => {
  const files = [
    {path: 'skills/acme/team/tickets/z.md', kind: 'skill'}, {path: 'skills/acme/team/b.md', kind: 'skill'},
    {path: 'skills/acme/team/alpha/x.md', kind: 'skill'}, {path: 'skills/acme/team/a.md', kind: 'skill'},
    {path: 'skills/acme/team/tickets/flow.md', kind: 'skill'}, {path: 'agents/p.md', kind: 'agent'},
  ];
  const groups = page.skillGroups(files);
  assert.deepEqual(groups.map((g) => g.name), ['', 'alpha', 'tickets']);
  assert.deepEqual(groups[0].files.map((f) => f.path), ['skills/acme/team/a.md', 'skills/acme/team/b.md']);
  assert.deepEqual(groups[2].files.map((f) => f.path), ['skills/acme/team/tickets/flow.md', 'skills/acme/team/tickets/z.md']);
});

test('worker lines', () => {
  assert.equal(page.workerLine({name: 'kanban', action: 'add', range: '^1.4', to: '1.6.1'}), 'New worker kanban ^1.4 → 1.6.1');
  assert.equal(page.workerLine({name: 'kanban', action: 'add', range: '^1.4'}), 'New worker kanban ^1.4 → latest');
  assert.equal(page.workerLine({name: 'k', action: 'update', installed: '1.0.0', to: '2.0.3', range: '^2.0'}), 'k 1.0.0 → 2.0.3 (the kit asks ^2.0)');
  assert.equal(page.workerLine({name: 'k', action: 'redeclare', range_from: '^1.4', range: '^1.6', installed: '1.6.1'}), 'k range ^1.4 → ^1.6 (1.6.1 already satisfies it)');
  assert.equal(page.workerLine({name: 'k', action: 'remove'}), 'k is no longer part of the kit');
  assert.equal(page.workerLine({name: 'k', action: 'none', path: true, range: '^1'}), 'k runs from a local path; the kit asks ^1');
  assert.equal(page.workerLine({name: 'k', action: 'none', installed: '1.2.0', range: '^1'}), 'k 1.2.0 satisfies ^1');
  assert.equal(page.workerLine({name: 'k', action: 'none', installed: null, range: '^1'}), 'k satisfies ^1');
});

test('function groups', () => {
  const groups = page.groupFunctions([
    {id: 'zeta::b'}, {id: 'kanban::t::list', worker: 'kanban'}, {id: 'kanban::t::create'}, {id: 'ghost::x', status: 'unknown'}, {id: 'alpha::a', worker: 'alpha'},
  ]);
  assert.deepEqual(groups.map((g) => [g.name, g.unknown]), [['alpha', false], ['kanban', false], ['zeta', false], ['unknown', true]]);
  assert.deepEqual(groups[1].functions.map((f) => f.id), ['kanban::t::create', 'kanban::t::list']);
});

test('initial steps', () => {
  assert.deepEqual(page.initialSteps({workers: [{action: 'add'}], files: [{}]}).map((s) => [s.label, s.state]),
    [['Workers (1)', 'pending'], ['Files (1)', 'pending'], ['kits.lock', 'pending']]);
  assert.equal(page.initialSteps({workers: [{action: 'none'}], files: []})[0].label, 'Workers');
});

const updatePlan = () => ({
  kit: 'acme/team', from: '1.0.0', to: '1.1.0', kind: 'update',
  files: [
    {path: 'agents/planner.md', kind: 'agent', id: 'planner', change: 'modified', local: 'intact', default: 'kit', options: ['kit']},
    {path: 'skills/acme/team/tickets/flow.md', kind: 'skill', id: 'acme/team/tickets/flow', change: 'modified', local: 'edited', merge: 'conflicts', conflicts: 1, default: null, options: ['kit', 'mine', 'merged']},
    {path: 'skills/acme/team/tickets/triage.md', kind: 'skill', change: 'added', local: 'absent', default: 'overwrite', options: ['overwrite']},
    {path: 'skills/acme/team/legacy/old.md', kind: 'skill', change: 'removed', local: 'intact', default: 'remove', options: ['remove', 'keep']},
  ],
  workers: [
    {name: 'kanban', range: '^1.6', range_from: '^1.4', action: 'redeclare', installed: '1.6.1'},
    {name: 'github', range: '^2.0', action: 'add', to: '2.0.3'},
    {name: 'old', action: 'remove', range_from: '^1'},
  ],
  capabilities: {workers_added: ['github'], functions_added: [{agent: 'planner', function: 'github::pr::create'}], models_changed: [{agent: 'planner', from: 'sonnet', to: 'opus'}]},
  counts: {unchanged: 1},
});

test('update rules', () => {
  const plan = updatePlan();
  const groups = page.updateGroups(plan);
  assert.deepEqual(groups.map((g) => g.title), ['Changed profiles', 'New workers', 'Worker ranges', 'Workers dropped', 'New skills', 'Changed skills', 'Removed skills', 'Permissions']);
  assert.equal(page.changeCount(plan), 7);
  assert.equal(groups.find((g) => g.title === 'Changed skills').rows[0].label, 'acme/team/tickets/flow');
  assert.deepEqual(groups.find((g) => g.title === 'Worker ranges').rows.map((r) => r.state), ['^1.4 → ^1.6']);
  assert.equal(page.permissionTally({workers_added: ['g'], functions_added: [{}]}), '+1 worker · +1 function');
  assert.equal(page.permissionTally(plan.capabilities), '+1 worker · +1 function · ~1 model');
  assert.equal(page.permissionTally({}), '');
  assert.deepEqual(page.updatePrimary(plan, {}), {label: 'Update · 1 conflict pending', disabled: true, title: 'Resolve: skills/acme/team/tickets/flow.md'});
  const flow = 'skills/acme/team/tickets/flow.md';
  assert.deepEqual(page.updatePrimary(plan, {[flow]: 'mine'}), {label: 'Update to 1.1.0', disabled: false, title: ''});
  assert.equal(page.updatePrimary(plan, {[flow]: {choice: 'merged', content: '<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n'}}).disabled, true);
  assert.equal(page.updatePrimary(plan, {[flow]: {choice: 'merged', content: 'resolved\n'}}).disabled, false);
  assert.equal(page.updatePrimary(plan, {[flow]: 'merged'}).disabled, true);
});

test('file state words', () => {
  const w = (file, choices = {}) => page.fileStateWord(file, choices);
  const edited = {path: 'p', change: 'modified', local: 'edited', merge: 'conflicts', default: null};
  assert.equal(w(edited), 'conflict');
  assert.equal(w(edited, {p: 'mine'}), 'resolved');
  const clean = {path: 'p', change: 'modified', local: 'edited', merge: 'clean', default: 'merged'};
  assert.equal(w(clean), 'merges');
  assert.equal(w(clean, {p: 'kit'}), 'replaces');
  assert.equal(w(clean, {p: 'mine'}), 'kept yours');
  assert.equal(w({path: 'p', change: 'modified', local: 'missing', default: 'kit'}), 'deleted here');
  assert.equal(w({path: 'p', change: 'modified', local: 'intact', default: 'kit'}), 'changed');
  assert.equal(w({path: 'p', change: 'kept', default: 'keep'}), 'keep local');
  assert.equal(w({path: 'p', change: 'kept', default: 'keep'}, {p: 'overwrite'}), 'take kit');
  assert.equal(w({path: 'p', change: 'removed', default: 'remove'}), 'removed');
  assert.equal(w({path: 'p', change: 'removed', default: 'remove'}, {p: 'keep'}), 'kept yours');
  assert.equal(w({path: 'p', change: 'added', default: 'overwrite'}), 'new');
});

test('decision labels', () => {
  assert.equal(page.decisionLabel({change: 'added'}, 'overwrite'), 'Replace');
  assert.equal(page.decisionLabel({change: 'kept'}, 'overwrite'), "Take the kit's version");
  assert.equal(page.decisionLabel({change: 'added'}, 'keep'), 'Keep the current one');
  assert.equal(page.decisionLabel({change: 'removed'}, 'keep'), 'Keep as a local file');
  assert.equal(page.decisionLabel({}, 'kit'), "Use the kit's version");
  assert.equal(page.decisionLabel({local: 'edited'}, 'mine'), 'Keep mine');
  assert.equal(page.decisionLabel({local: 'missing'}, 'mine'), 'Keep it deleted');
  assert.equal(page.decisionLabel({}, 'merged'), 'Use the merged result');
  assert.equal(page.decisionLabel({}, 'remove'), 'Remove');
});

test('removal label', () => {
  const plan = {kit: 'acme/team', files: [{path: 'a', default: 'remove'}, {path: 'b', default: 'keep'}]};
  assert.equal(page.removalPrimaryLabel(plan, {}, ['kanban']), 'Remove acme/team · 1 file · 1 worker');
  assert.equal(page.removalPrimaryLabel(plan, {a: 'keep'}, []), 'Remove acme/team');
  assert.equal(page.removalPrimaryLabel(plan, {b: 'remove'}, ['x', 'y']), 'Remove acme/team · 2 files · 2 workers');
});

test('conflict markers', () => {
  assert.equal(page.hasConflictMarkers('a\n<<<<<<< mine\nx\n=======\ny\n>>>>>>> kit\n'), true);
  assert.equal(page.hasConflictMarkers('<<<<<<< only\n'), false);
  assert.equal(page.hasConflictMarkers('>>>>>>> first\n<<<<<<< then\n'), false);
  assert.equal(page.hasConflictMarkers('<<<<<<< x >>>>>>> y\n'), false);
  assert.equal(page.hasConflictMarkers(' <<<<<<< a\n >>>>>>> b\n'), false);
});

test('frontmatter parsing', () => {
  const text = '---\nname: Code Reviewer\nlogo: 🚢\nmodel: sonnet\nextends: base\nskills: [a, "b"]\nfunctions:\n  - kanban::ticket::create\n  - github::pr::create\n---\nThe body.\n';
  const p = page.parseFrontmatter(text);
  assert.equal(p.hasBlock, true);
  assert.deepEqual(p.fields, {name: 'Code Reviewer', logo: '🚢', model: 'sonnet', extends: 'base', skills: ['a', 'b'], functions: ['kanban::ticket::create', 'github::pr::create']});
  assert.equal(p.body, 'The body.\n');
  const crlf = page.parseFrontmatter('---\r\nname: X\r\nhidden: true\r\n---\r\nBody\r\n');
  assert.deepEqual(crlf.fields, {name: 'X', hidden: true});
  assert.equal(crlf.body, 'Body\r\n');
  assert.equal(crlf.eol, '\r\n');
  assert.equal(page.parseFrontmatter('no block\n').hasBlock, false);
  assert.equal(page.parseFrontmatter('---\nname: x\n---').body, '');
});

test('frontmatter editing keeps every other byte', () => {
  const text = '---\n# a comment\nname: Old\nunknown:\n  nested: 1\ndescription: keep me\n---\nBody stays.\n';
  assert.equal(page.setFrontmatterFields(text, {name: 'New'}), text.replace('name: Old', 'name: New'));
  assert.equal(page.setFrontmatterFields(text, {description: null}), text.replace('description: keep me\n', ''));
  assert.equal(page.setFrontmatterFields(text, {model: 'opus'}), text.replace('---\nBody', 'model: opus\n---\nBody'));
  assert.equal(page.setFrontmatterFields(text, {name: 'needs: colon'}), text.replace('name: Old', 'name: "needs: colon"'));
  assert.equal(page.setFrontmatterFields(text, {name: '#tag'}), text.replace('name: Old', 'name: "#tag"'));
  assert.equal(page.setFrontmatterFields(text, {name: 'Code Reviewer'}), text.replace('name: Old', 'name: Code Reviewer'));
  assert.equal(page.setFrontmatterFields(text, {logo: '🚢'}), text.replace('---\nBody', 'logo: 🚢\n---\nBody'));
  assert.equal(page.setFrontmatterFields(text, {functions: ['a::b', 'c::d']}), text.replace('---\nBody', 'functions:\n  - a::b\n  - c::d\n---\nBody'));
  assert.equal(page.setFrontmatterFields('Just a body\n', {name: 'X'}), '---\nname: X\n---\nJust a body\n');
  assert.equal(page.setFrontmatterFields('Just a body\n', {name: ''}), 'Just a body\n');
  const crlf = '---\r\nname: A\r\nskills:\r\n  - x\r\n\r\nmodel: m\r\n---\r\nB\r\n';
  assert.equal(page.setFrontmatterFields(crlf, {skills: ['y', 'z']}), '---\r\nname: A\r\nskills:\r\n  - y\r\n  - z\r\n\r\nmodel: m\r\n---\r\nB\r\n');
  assert.equal(page.setFrontmatterFields(text, {body: 'New body\n'}), text.replace('Body stays.\n', 'New body\n'));
  assert.equal(page.setFrontmatterFields(text, {hidden: true}), text.replace('---\nBody', 'hidden: true\n---\nBody'));
  assert.equal(page.setFrontmatterFields(text, {name: '12'}), text.replace('name: Old', 'name: "12"'));
  assert.deepEqual(page.functionsEdit(['a', 'b'], ['b', 'c']), {added: ['c'], removed: ['a']});
});

test('page rules', () => {
  assert.deepEqual(page.COLLECTIONS, ['skills', 'agents', 'kits']);
  assert.deepEqual(page.routeFromContext({collection: 'kits', plan_id: 'kp_1'}), {collection: 'kits', route: {name: 'plan', planId: 'kp_1'}});
  assert.deepEqual(page.routeFromContext({collection: 'kits', kit: 'a/b'}), {collection: 'kits', route: {name: 'kit', kit: 'a/b'}});
  assert.deepEqual(page.routeFromContext({collection: 'kits'}), {collection: 'kits', route: {name: 'home'}});
  assert.deepEqual(page.routeFromContext({collection: 'skills', key: 'x/y'}), {collection: 'skills', key: 'x/y'});
  assert.deepEqual(page.routeFromContext({collection: 'agents', action: 'create'}), {collection: 'agents', action: 'create'});
  for (const other of [null, {}, {collection: 'prompts'}, 'kits', [1], {collection: 'skills'}]) assert.equal(page.routeFromContext(other), null);
  assert.deepEqual(page.narrowPanes({narrow: false, creating: false, selected: false}), {list: true, document: true});
  assert.deepEqual(page.narrowPanes({narrow: true, creating: true, selected: false}), {list: false, document: true});
  assert.deepEqual(page.narrowPanes({narrow: true, creating: false, selected: true}), {list: false, document: true});
  assert.deepEqual(page.narrowPanes({narrow: true, creating: false, selected: false}), {list: true, document: false});
  const now = Date.parse('2025-01-01T12:00:00Z');
  const ago = '2025-01-01T11:55:00Z';
  assert.equal(page.originLabel({source: {kind: 'kit', kit: 'acme/team'}, modified_at: ago}, now), 'kit acme/team · 5 min ago');
  assert.equal(page.originLabel({source: {kind: 'kit', kit: 'acme/team', modified: true}, modified_at: ago}, now), 'kit acme/team · edited · 5 min ago');
  assert.equal(page.originLabel({source: {kind: 'worker', worker: 'kanban', modified: true}, modified_at: ago}, now), 'worker kanban · edited · 5 min ago');
  assert.equal(page.originLabel({source: {kind: 'local'}, modified_at: ago}, now), 'local · 5 min ago');
  assert.equal(page.originLabel({source: {kind: 'global'}, modified_at: ago}, now), 'global · 5 min ago');
  assert.equal(page.originLabel({source: {kind: 'builtin'}, modified_at: ''}, now), 'Built-in · edits save a local override');
  assert.equal(page.draftAction({loading: true, draft: 'x', loaded: 'y'}), 'keep');
  assert.equal(page.draftAction({loading: false, draft: 'x', loaded: 'x'}), 'clear');
  assert.equal(page.draftAction({loading: false, draft: null, loaded: 'x'}), 'clear');
  assert.equal(page.draftAction({loading: false, draft: 'x', loaded: 'y'}), 'write');
  assert.deepEqual([0, 3, 9, 10, 42].map(page.attentionBadge), ['', '3', '9', '9+', '9+']);
  for (const ok of ['acme/team', 'acme/team@1.2.0', ' acme/team ']) assert.equal(page.isKitReference(ok), true, ok);
  for (const bad of ['Acme/Team', 'acme', 'acme/team/x', '']) assert.equal(page.isKitReference(bad), false, bad);
  assert.equal(page.cleanError(new Error('remote error (invocation_failed): handler error: D513 invalid_input: x')), 'D513 invalid_input: x');
  assert.equal(page.cleanError(new Error('remote error (D110): D110 not_found: y')), 'D110 not_found: y');
  assert.equal(page.cleanError('plain text'), 'plain text');
  assert.equal(page.formatAgo('2025-01-01T11:59:30Z', now), 'just now');
  assert.equal(page.formatAgo('2025-01-01T09:00:00Z', now), '3 h ago');
  assert.equal(page.formatAgo('2024-12-29T12:00:00Z', now), '3 d ago');
  assert.equal(page.formatAgo('nonsense', now), '');
  assert.equal(page.formatAgo('', now), '');
  assert.deepEqual([0, 1023, 1024, 1536, 1048576 * 2.5].map(page.formatSize), ['0 B', '1023 B', '1.0 KB', '1.5 KB', '2.5 MB']);
});

test('palette rows and source', async () => {
  const skills = [{id: 'notes/howto', title: 'Notes how-to', description: 'Take notes'}, {id: 'x/y', title: 'Other', description: ''}];
  const agents = [{id: 'scribe', name: 'Scribe', description: 'Takes NOTES'}];
  const rows = page.paletteRows(skills, agents, 'notes');
  assert.deepEqual(rows.map((r) => [r.id, r.meta]), [['skills:notes/howto', 'Skill'], ['agents:scribe', 'Agent profile']]);
  assert.equal(page.paletteRows(skills, agents, 'X/Y').length, 1);
  const many = Array.from({length: 40}, (_, i) => ({id: `s${i}`, title: `match ${i}`}));
  assert.equal(page.paletteRows(many, [], 'match').length, 30);
  const calls = [];
  const opened = [];
  const host = {iii: {trigger: async (fn, payload) => { calls.push(fn); return fn.includes('skills') ? {skills} : {agents}; }},
    panels: {open: (x) => opened.push(x)}};
  const source = page.createPaletteSource(host, page);
  assert.equal(source.id, 'directory-entries');
  assert.equal(source.minQuery, 2);
  const found = await source.search('scribe', {});
  assert.deepEqual(calls.sort(), ['directory::agents::list', 'directory::skills::list']);
  assert.ok(!calls.includes('directory::system-prompts::list'));
  found[0].run();
  assert.deepEqual(opened, [{pageId: 'directory', context: {collection: 'agents', key: 'scribe'}}]);
});

test('cards', () => {
  const claimed = ['directory::skills::list', 'directory::skills::download_from_repo', 'directory::system-prompts::create', 'directory::agents::functions::remove',
    'directory::registry::workers::info', 'directory::download-kit', 'directory::kits::apply', 'directory::kits::list', 'directory::kits::check-updates'];
  for (const id of claimed) assert.equal(page.claimsFunction(id), true, id);
  for (const id of ['directory::skills::delete', 'directory::search_functions', 'directory::kits::discard']) assert.equal(page.claimsFunction(id), false, id);
  const summary = page.planSummary({kind: 'install', kit: 'acme/team', to: '1.0.0', counts: {agents: 2, skills: 2, workers: 1, functions: 1},
    files: [collidingAgent('reviewer')], warnings: [{code: 'agent_overwrite_local', message: 'w'}, {code: 'other', message: 'also this'}], blocking: [],
    capabilities: {workers_added: ['kanban']}}, {'agents/reviewer.md': 'keep'});
  assert.equal(summary.title, 'Install acme/team 1.0.0');
  assert.equal(summary.counts, '2 profiles · 2 skills · 1 worker · 1 function');
  assert.deepEqual(summary.replaced, [{path: 'agents/reviewer.md', kept: true}]);
  assert.deepEqual(summary.also, ['also this']);
  assert.deepEqual(summary.badges, ['2 warnings']);
  const full = page.parseSearchResult({guidance: 'g', workers: [{namespace: 'kanban', functions: [{function_id: 'kanban::a', description: 'd'}]}],
    installable: [{name: 'gh', version: '2', description: 'x', functions: [], install: {function: 'compose::add', payload: {worker: 'gh'}}}],
    skills: [{id: 's'}], triggers: [], search_mode: 'hybrid', latency_ms: 12.4});
  assert.equal(full.header, '1 worker · 1 function · 1 installable');
  assert.equal(full.latency, '12 ms');
  assert.equal(full.installable[0].install, 'compose::add {"worker":"gh"}');
  const bare = page.parseSearchResult({workers: [], search_mode: 'lexical', latency_ms: 1});
  assert.deepEqual([bare.installable, bare.skills, bare.triggers], [[], [], []]);
  for (const garbage of [null, 'x', [], {workers: 'no'}]) assert.equal(page.parseSearchResult(garbage), null);
});

test('apply outcomes and progress events', () => {
  assert.equal(page.applyOutcome({status: 'applied', report: {}, message: 'm'}).kind, 'done');
  assert.equal(page.applyOutcome({status: 'replanned', plan: {plan_id: 'kp_2'}, message: 'Not applied'}).kind, 'replan');
  assert.equal(page.applyOutcome({status: 'planned', plan: {plan_id: 'kp_2'}}).kind, 'replan');
  assert.equal(page.applyOutcome({status: 'up_to_date', message: 'ok'}).kind, 'notice');
  const failed = page.applyOutcome(new Error('remote error (D515): D515 compose_error: x'));
  assert.deepEqual(failed, {kind: 'failed', error: 'D515 compose_error: x'});
  const steps = [{id: 'workers', label: 'Workers (1)', state: 'running', detail: 'compose::add kanban@^1.4'}];
  assert.deepEqual(page.stepsFromEvent({op: 'progress', plan_id: 'kp_1', steps}, 'kp_1'), steps);
  assert.equal(page.stepsFromEvent({op: 'progress', plan_id: 'kp_2', steps}, 'kp_1'), null);
  assert.equal(page.stepsFromEvent({op: 'apply', plan_id: 'kp_1', steps}, 'kp_1'), null);
  assert.equal(page.stepsFromEvent(null, 'kp_1'), null);
});

test('configuration patches', () => {
  const value = {skills_folder: 'a', function_search_jev_x: 1, custom: true};
  assert.deepEqual(page.configPatch(value, 'skills_folder', {kind: 'text', raw: ''}), {value: {custom: true}});
  assert.deepEqual(page.configPatch(value, 'hint_min_workers', {kind: 'number', raw: '1.5'}), {error: 'Enter a whole number.'});
  assert.deepEqual(page.configPatch(value, 'hint_min_workers', {kind: 'number', raw: '4'}), {value: {skills_folder: 'a', custom: true, hint_min_workers: 4}});
  assert.deepEqual(page.configPatch(value, 'inject_hint', {kind: 'switch', raw: false}).value.inject_hint, false);
  assert.equal(page.configPatch(value, 'x', {kind: 'number', raw: ''}).value.x, undefined);
});

test('line diff', () => {
  assert.deepEqual(page.lineDiff('a\nb\n', 'a\nb\n').map((r) => r.kind), ['same', 'same']);
  assert.deepEqual(page.lineDiff('a\n', 'a\nb\nc\n').map((r) => [r.kind, r.right]), [['same', 'a'], ['add', 'b'], ['add', 'c']]);
  assert.deepEqual(page.lineDiff('a\nb\nc\n', 'a\n').map((r) => [r.kind, r.left]), [['same', 'a'], ['del', 'b'], ['del', 'c']]);
  assert.deepEqual(page.lineDiff('a\nb\nc\n', 'a\nB\nc\n').map((r) => [r.kind, r.left, r.right, r.leftNo, r.rightNo]),
    [['same', 'a', 'a', 1, 1], ['change', 'b', 'B', 2, 2], ['same', 'c', 'c', 3, 3]]);
  assert.deepEqual(page.lineDiff('', ''), []);
  assert.deepEqual(page.lineDiff('', 'x\n').map((r) => r.kind), ['add']);
  assert.deepEqual(page.lineDiff('x', '').map((r) => r.kind), ['del']);
});
