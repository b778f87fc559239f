// iii-directory — the kit review screens, loaded on demand by page.js through
// host.importModule (docs/rules/console.md §3.3, §4.8–§4.13). Imports nothing: page.js hands over
// React, the host, the pure rules and the shared UI pieces.

export const MODULE_API = 1;

const TWENTY_MINUTES = 20 * 60 * 1000;
const COLLISION_WARNINGS = new Set(['builtin_override', 'file_overwrite_local']);
const WORKER_WORD = {add: 'new', update: 'updates', redeclare: 'range', remove: 'dropped'};
const TONE = {conflict: 'alert', resolved: 'ok', new: 'accent', removed: 'alert', 'deleted here': 'warn', 'kept yours': 'neutral'};

/** Text with `backticks` rendered as code elements. */
function withCode(h, text) {
  return String(text || '').split('`').map((part, i) => (i % 2 ? h('code', {key: i}, part) : part));
}

function localDate(iso) {
  const t = Date.parse(iso || '');
  return Number.isNaN(t) ? '' : new Date(t).toLocaleString();
}

function baseName(path) {
  return String(path || '').split('/').pop();
}

export function createKitsReview(deps) {
  const {React, rules, ui} = deps;
  const h = React.createElement;
  const {useState, useRef, useMemo} = React;
  const {Button, Choice, Tabs, Checkbox, Chip, Alert, StepList, DiffView, DiffDialog, Confirm, Markdown, Editor, Icon, useSubscription, call, ErrorNote} = ui;
  const {plural} = rules;

  function Header({plan, onRoute}) {
    const author = plan.author || {};
    const badges = [];
    if (plan.kind === 'update') badges.push(h(Chip, {key: 'bump', tone: plan.major ? 'alert' : 'neutral'}, plan.major ? 'major' : (plan.bump || 'update')));
    if (plan.kind === 'update' && plan.published_at) badges.push(h(Chip, {key: 'pub'}, `published ${rules.formatAgo(plan.published_at)}`));
    return h('div', {className: 'iiid-planhead'},
      h(Button, {variant: 'ghost', label: 'Kits', onClick: () => onRoute({name: 'home'})}, h(Icon, {name: 'back'}), ' Kits'),
      h('div', {className: 'iiid-pagehead'},
        h('span', {className: 'iiid-kitmark', 'aria-hidden': 'true'}, String(plan.kit || '').split('/').pop().slice(0, 2).toUpperCase()),
        h('h2', {className: 'iiid-h2'}, rules.planTitle(plan)), ...badges),
      plan.kind !== 'remove' ? h('div', {className: 'iiid-meta'},
        author.handle || author.name ? h('span', null, `by ${author.name || author.handle}`, author.verified ? h('span', {className: 'iiid-verified', role: 'img', 'aria-label': 'verified'}, ' ✓') : null) : null,
        plan.license ? h('span', null, plan.license) : null,
        plan.registry_url ? h('a', {href: plan.registry_url, target: '_blank', rel: 'noopener noreferrer', className: 'iiid-link'}, 'Open in registry') : null) : null,
      plan.kind !== 'remove' && plan.description ? h('p', null, plan.description) : null);
  }

  function Blocked({plan}) {
    const blocking = plan.blocking || [];
    return h(Alert, {title: 'This plan cannot be applied'},
      h('p', null, blocking.length === 1 ? '1 issue blocks this plan' : `${blocking.length} issues block this plan`),
      h('ul', null, blocking.map((b, i) => h('li', {key: i}, withCode(h, b.message)))));
  }

  function DecisionRadio({file, choices, setChoice}) {
    return h(Choice, {label: `What to do with ${file.path}`, variant: 'radio', value: rules.effectiveDecision(file, choices),
      onChange: (value) => setChoice(file.path, value),
      options: (file.options || []).map((o) => ({value: o, label: rules.decisionLabel(file, o)}))});
  }

  function AgentPreview({file, contents, plan}) {
    const [source, setSource] = useState(false);
    const a = file.agent || {};
    const text = file.theirs ? (contents.blobs || {})[file.theirs] : ((contents.ours || {})[file.path] ?? (contents.blobs || {})[file.base]);
    const parsed = rules.parseFrontmatter(text || '');
    const kitSkills = new Set((plan.files || []).filter((f) => f.kind === 'skill').map((f) => f.id));
    return h('div', {className: 'iiid-preview'},
      h('div', {className: 'iiid-pagehead'},
        h('span', {className: `iiid-avatar iiid-color-${a.color || 'neutral'}`, 'aria-hidden': 'true'}, a.logo || (a.name || file.id || '?').slice(0, 1).toUpperCase()),
        h('strong', null, a.name || file.id), h('code', {className: 'iiid-muted'}, file.path), h('span', {className: 'iiid-spacer'}),
        h(Choice, {label: 'Preview or source', value: source ? 'source' : 'preview', onChange: (v) => setSource(v === 'source'),
          options: [{value: 'preview', label: 'Preview'}, {value: 'source', label: 'Source'}]})),
      source ? h('pre', {className: 'iiid-source'}, text || '') : [
        a.description ? h('p', {key: 'd'}, a.description) : null,
        h('dl', {key: 'f', className: 'iiid-facts'},
          a.model ? [h('dt', {key: 'mt'}, 'model'), h('dd', {key: 'md'}, `${a.model}${a.reasoning_effort ? ` · ${a.reasoning_effort}` : ''}`)] : null,
          a.extends ? [h('dt', {key: 'et'}, 'extends'), h('dd', {key: 'ed'}, a.extends)] : null,
          a.icon || a.color ? [h('dt', {key: 'lt'}, 'look'), h('dd', {key: 'ld'}, [a.icon, a.color].filter(Boolean).join(' · '))] : null,
          (a.skills || []).length ? [h('dt', {key: 'st'}, 'skills'), h('dd', {key: 'sd'}, a.skills.map((s) => h(Chip, {key: s, tone: kitSkills.has(s) ? 'accent' : 'neutral'}, s)))] : null,
          (a.functions || []).length ? [h('dt', {key: 'ft'}, 'functions'), h('dd', {key: 'fd'}, a.functions.map((f) => h('code', {key: f, className: 'iiid-fn'}, f)))] : null),
        parsed.body.trim() ? h(Markdown, {key: 'b', content: parsed.body})
          : h('p', {key: 'e', className: 'iiid-muted'}, a.extends ? `No prompt of its own — it serves ${a.extends}'s` : 'No prompt of its own.'),
      ]);
  }

  function SkillPreview({file, contents, plan}) {
    const s = file.skill || {};
    const text = file.theirs ? (contents.blobs || {})[file.theirs] : ((contents.ours || {})[file.path] ?? (contents.blobs || {})[file.base]);
    const users = (plan.files || []).filter((f) => f.kind === 'agent' && f.agent && (f.agent.skills || []).includes(file.id)).map((f) => f.id);
    return h('div', {className: 'iiid-preview'},
      h('strong', null, s.title || file.id), ' ', h('code', {className: 'iiid-muted'}, file.id),
      s.description ? h('p', null, s.description) : null,
      users.length ? h('p', null, 'preloaded by ', users.map((u) => h(Chip, {key: u}, u))) : null,
      h(Markdown, {content: rules.parseFrontmatter(text || '').body}));
  }

  function WorkerPreview({worker, plan, removeWorkers, toggleWorker}) {
    const others = worker.used_by || [];
    return h('div', {className: 'iiid-preview'},
      h('strong', null, worker.name), worker.type ? h(Chip, null, worker.type) : null,
      worker.description ? h('p', null, worker.description) : null,
      h('dl', {className: 'iiid-facts'},
        h('dt', null, 'range'), h('dd', null, worker.range || '—'),
        h('dt', null, 'installed'), h('dd', null, worker.installed || 'not installed'),
        worker.to ? [h('dt', {key: 'tt'}, 'resolves to'), h('dd', {key: 'td'}, worker.to)] : null),
      h('p', null, rules.workerLine(worker)),
      others.length ? h('p', {className: 'iiid-muted'}, `Also used by ${others.join(', ')}`) : null,
      !worker.range && worker.action === 'remove' && toggleWorker ? h('div', null,
        h(Checkbox, {label: `Also remove ${worker.name} from this project`, checked: removeWorkers.includes(worker.name), onChange: () => toggleWorker(worker.name)}),
        h('p', {className: 'iiid-muted'}, others.length ? `Also declared by ${others.join(', ')}.` : 'Workers are never removed unless you tick this.')) : null,
      !worker.range && worker.action === 'none' ? h('p', {className: 'iiid-muted'}, worker.path
        ? 'It runs from a local path, so the kit cannot remove it.' : 'The project does not declare it, so there is nothing to remove.') : null);
  }

  // ------------------------------------------------------------------ screen C: install

  function InstallReview({plan, contents, choices, setChoice, narrow}) {
    const [selected, setSelected] = useState(() => {
      const first = (plan.files || []).find((f) => f.kind === 'agent') || (plan.files || [])[0];
      return first ? `file:${first.path}` : null;
    });
    const [diffPath, setDiffPath] = useState(null);
    const [showFunctions, setShowFunctions] = useState(false);
    const files = plan.files || [];
    const colliding = files.filter((f) => f.collision);
    const blocked = (plan.blocking || []).length > 0;
    const warnings = (plan.warnings || []).filter((w) => !String(w.code).startsWith('agent_') && !COLLISION_WARNINGS.has(w.code));
    const alertTone = colliding.some((f) => f.collision.owner === 'local' && rules.effectiveDecision(f, choices) === 'overwrite');
    const changing = (plan.workers || []).filter((w) => ['add', 'update', 'redeclare'].includes(w.action));
    const groups = rules.groupFunctions(plan.functions || []);
    const namedGroups = groups.filter((g) => !g.unknown).length;
    const agents = files.filter((f) => f.kind === 'agent');
    const ranged = (plan.workers || []).filter((w) => w.range);
    const diffFile = diffPath ? files.find((f) => f.path === diffPath) : null;
    const rowButton = (key, label, extra) => h('li', {key, className: `iiid-row${selected === key ? ' is-active' : ''}`},
      h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => setSelected(key)}, h('span', {className: 'iiid-row__main'}, label), extra));
    const fileExtra = (f) => (f.collision ? [h('span', {key: 'w', className: 'iiid-warnicon', role: 'img', 'aria-label': 'collision'}, '⚠'),
      rules.effectiveDecision(f, choices) === 'keep' ? h(Chip, {key: 'k'}, 'kept') : null] : null);
    const selectedFile = selected && selected.startsWith('file:') ? files.find((f) => `file:${f.path}` === selected) : null;
    const selectedWorker = selected && selected.startsWith('worker:') ? ranged.find((w) => `worker:${w.name}` === selected) : null;
    return h('div', {className: 'iiid-review'},
      blocked ? h(Blocked, {plan}) : null,
      colliding.length ? h('section', {className: `iiid-collisions iiid-banner iiid-banner--${alertTone ? 'alert' : 'warn'}`, 'aria-label': 'Existing files'},
        h('strong', {className: 'iiid-banner__title'}, rules.collisionHeadline(plan, choices)),
        colliding.map((f) => h('div', {key: f.path, className: 'iiid-collision'},
          h('div', null, h('code', null, f.path), ' ', h('span', {className: 'iiid-muted'}, rules.ownerPhrase(f.collision)),
            (contents.ours || {})[f.path] != null ? h(Button, {variant: 'ghost', onClick: () => setDiffPath(f.path)}, 'View diff') : null),
          h(DecisionRadio, {file: f, choices, setChoice})))) : null,
      !blocked && warnings.length ? h('section', {className: 'iiid-banner iiid-banner--warn', role: 'status'},
        h('strong', {className: 'iiid-banner__title'}, warnings.length === 1 ? '1 thing to know' : `${warnings.length} things to know`),
        h('ul', null, warnings.map((w, i) => h('li', {key: i}, withCode(h, w.message))))) : null,
      h('section', {className: 'iiid-permissions', 'aria-label': 'Permissions'},
        changing.length ? changing.map((w) => h('div', {key: w.name, className: 'iiid-permline'},
          h('strong', null, rules.workerLine(w)), w.type === 'binary' ? h('span', {className: 'iiid-muted'}, ' — a binary that will run on this machine') : null,
          w.description ? h('div', {className: 'iiid-muted'}, w.description) : null,
          w.registry_url ? h('a', {href: w.registry_url, target: '_blank', rel: 'noopener noreferrer', className: 'iiid-link'}, 'registry') : null))
          : h('div', {className: 'iiid-permline'}, `No worker is added or changed — ${(plan.workers || []).map(rules.workerLine).join('; ')}`),
        (plan.functions || []).length ? h('div', {className: 'iiid-permline'},
          `The profiles preload ${plural(plan.functions.length, 'function')} from ${plural(namedGroups, 'worker')} `,
          h(Button, {variant: 'ghost', onClick: () => setShowFunctions(!showFunctions)}, showFunctions ? 'Hide list' : 'Show list')) : null,
        showFunctions ? h('table', {className: 'iiid-table'}, h('tbody', null, groups.flatMap((g) => [
          h('tr', {key: `g-${g.name}`}, h('th', {colSpan: 3}, g.name)),
          ...g.functions.map((fn) => h('tr', {key: fn.id}, h('td', null, h('code', null, fn.id), g.unknown ? h(Chip, {tone: 'warn'}, 'unknown') : null),
            h('td', null, (fn.used_by || []).join(', ')), h('td', null, fn.description || '')))]))) : null),
      h('div', {className: `iiid-columns${narrow ? ' is-narrow' : ''}`},
        h('section', {className: 'iiid-column', 'aria-label': 'Profiles'}, h('h3', {className: 'iiid-h3'}, `Profiles (${agents.length})`),
          h('ul', {className: 'iiid-list'}, agents.map((f) => rowButton(`file:${f.path}`, [h('span', {key: 't', className: 'iiid-row__title'}, (f.agent && f.agent.name) || f.id), h('span', {key: 'i', className: 'iiid-row__id'}, f.path)], fileExtra(f))))),
        h('section', {className: 'iiid-column', 'aria-label': 'Skills'}, h('h3', {className: 'iiid-h3'}, `Skills (${files.filter((f) => f.kind === 'skill').length})`),
          rules.skillGroups(files).map((g) => h('div', {key: g.name || '-'}, g.name ? h('div', {className: 'iiid-group__title'}, g.name) : null,
            h('ul', {className: 'iiid-list'}, g.files.map((f) => rowButton(`file:${f.path}`, [h('span', {key: 't', className: 'iiid-row__title'}, (f.skill && f.skill.title) || f.id), h('span', {key: 'i', className: 'iiid-row__id'}, f.path)], fileExtra(f))))))),
        h('section', {className: 'iiid-column', 'aria-label': 'Workers'}, h('h3', {className: 'iiid-h3'}, `Workers (${ranged.length})`),
          h('ul', {className: 'iiid-list'}, ranged.map((w) => rowButton(`worker:${w.name}`, [h('span', {key: 't', className: 'iiid-row__title'}, w.name), h('span', {key: 'i', className: 'iiid-row__id'}, w.range)],
            h(Chip, {tone: w.action === 'add' ? 'accent' : 'neutral'}, w.action === 'none' ? (w.path ? 'local' : 'ok') : WORKER_WORD[w.action])))))),
      selectedFile ? (selectedFile.kind === 'agent' ? h(AgentPreview, {file: selectedFile, contents, plan}) : h(SkillPreview, {file: selectedFile, contents, plan}))
        : selectedWorker ? h(WorkerPreview, {worker: selectedWorker, plan, removeWorkers: []}) : null,
      h(DiffDialog, {open: !!diffFile, onClose: () => setDiffPath(null), title: diffFile ? diffFile.path : '', narrow,
        note: diffFile ? `Left: the current file (${diffFile.note || rules.ownerPhrase(diffFile.collision)}). Right: the kit's version.` : '',
        left: diffFile ? (contents.ours || {})[diffFile.path] : '', right: diffFile ? (contents.blobs || {})[diffFile.theirs] : '',
        leftCaption: diffFile ? `current/${diffFile.path}` : '', rightCaption: diffFile ? `kit/${diffFile.path}` : ''}));
  }

  // ------------------------------------------------------------------ screen E: edited and changed

  function EditedAndChanged({file, contents, choices, setChoice, edits, setEdit, narrow}) {
    const base = file.base ? (contents.blobs || {})[file.base] : undefined;
    const theirs = (contents.blobs || {})[file.theirs] ?? '';
    const yours = (contents.ours || {})[file.path] ?? '';
    const hasBase = typeof base === 'string';
    const conflicts = file.merge === 'conflicts' && hasBase;
    const [tab, setTab] = useState(conflicts ? 'result' : 'kit');
    const choice = choices[file.path];
    const resultText = edits[file.path] ?? (choice && typeof choice === 'object' && typeof choice.content === 'string' ? choice.content
      : ((contents.merged || {})[file.path] ?? yours));
    const decision = rules.effectiveDecision(file, choices);
    const headline = !hasBase ? 'Edited by you and changed in the kit — cannot be merged'
      : (file.merge === 'conflicts' ? `Edited by you and changed in the kit — ${plural(file.conflicts || 0, 'conflict')}` : 'Edited by you and changed in the kit — merges cleanly');
    const onResult = (text) => {
      setEdit(file.path, text);
      if (decision === 'merged') setChoice(file.path, {choice: 'merged', content: text});
    };
    const noBase = h('p', {className: 'iiid-muted'}, 'The installed version is no longer in the registry, so its changes cannot be shown.');
    const name = baseName(file.path);
    let body;
    if (tab === 'kit') body = hasBase ? h(DiffView, {left: base, right: theirs, leftCaption: `base/${name}`, rightCaption: `kit/${name}`, narrow}) : noBase;
    else if (tab === 'yours') body = hasBase ? h(DiffView, {left: base, right: yours, leftCaption: `base/${name}`, rightCaption: `yours/${name}`, narrow}) : noBase;
    else {
      body = h(DiffView, {left: yours, right: resultText, leftCaption: `yours/${name}`, rightCaption: `result/${name}`, narrow,
        editor: h(Editor, {value: resultText, onChange: onResult, label: `Merged result for ${file.path}`, rows: 14})});
    }
    const labels = {kit: "Use the kit's version", mine: file.local === 'missing' ? 'Keep it deleted' : 'Keep mine', merged: 'Use the merged result'};
    return h('section', {className: 'iiid-edited', 'aria-label': headline},
      h('h4', {className: 'iiid-h4'}, headline),
      h(Tabs, {label: `Changes to ${file.path}`, value: tab, onChange: setTab,
        tabs: [{id: 'kit', label: "Kit's changes"}, {id: 'yours', label: 'Your changes'}, {id: 'result', label: 'Result'}]}),
      h('div', {className: 'iiid-tabpanel', role: 'tabpanel'}, body),
      rules.hasConflictMarkers(resultText) ? h(Alert, {tone: 'warn'}, 'The result still has conflict markers.') : null,
      rules.conflictBlocks ? h(HunkChoices, {text: resultText, onResult, path: file.path}) : null,
      h(Choice, {label: `Resolve ${file.path}`, variant: 'radio', value: decision,
        onChange: (value) => setChoice(file.path, value === 'merged' ? {choice: 'merged', content: resultText} : value),
        options: (file.options || []).map((o) => ({value: o, label: labels[o] || rules.decisionLabel(file, o)}))}),
      decision == null ? h('p', {className: 'iiid-muted', role: 'status'}, 'Choose how to resolve this file to update.') : null);
  }

  /** Each conflict of a merged result, taken one at a time: yours or the kit's. */
  function HunkChoices({text, onResult, path}) {
    const blocks = rules.conflictBlocks(text);
    if (!blocks.length) return null;
    const first = (lines) => (lines.find((l) => l.trim()) || '(nothing)').trim().slice(0, 60);
    return h('ol', {className: 'iiid-conflicts__list', 'aria-label': `Conflicts in ${path}`}, blocks.map((b, i) => h('li', {key: `${i}:${b.open}`, className: 'iiid-conflicts__item', role: 'group', 'aria-label': `Conflict ${i + 1}`},
      h('span', {className: 'iiid-conflicts__text'}, `Conflict ${i + 1}: yours “${first(b.mine)}” · kit “${first(b.theirs)}”`),
      h(Button, {onClick: () => onResult(rules.takeSide(text, i, 'mine'))}, 'Keep yours'),
      h(Button, {onClick: () => onResult(rules.takeSide(text, i, 'theirs'))}, "Take the kit's"))));
  }

  function AgentChanges({file}) {
    const c = file.agent_changes;
    if (!c) return null;
    const fields = Object.entries(c.fields || {});
    const chips = [
      ...(c.functions_added || []).map((x) => h(Chip, {key: `fa${x}`, tone: 'ok'}, `+ ${x}`)),
      ...(c.functions_removed || []).map((x) => h(Chip, {key: `fr${x}`, tone: 'alert'}, `− ${x}`)),
      ...(c.skills_added || []).map((x) => h(Chip, {key: `sa${x}`, tone: 'ok'}, `+ ${x}`)),
      ...(c.skills_removed || []).map((x) => h(Chip, {key: `sr${x}`, tone: 'alert'}, `− ${x}`)),
    ];
    if (!fields.length && !chips.length) return h('p', {className: 'iiid-muted'}, 'No frontmatter changes — only the prompt changed.');
    return h('div', {className: 'iiid-agentchanges'},
      fields.map(([k, [from, to]]) => h('div', {key: k}, `${k}: ${from ?? '—'} → ${to ?? '—'}`)), chips.length ? h('div', null, chips) : null);
  }

  // ------------------------------------------------------------------ screen D: update

  function UpdateReview({plan, contents, choices, setChoice, edits, setEdit, reviewed, setReviewed, removeWorkers, toggleWorker, narrow}) {
    const groups = useMemo(() => rules.updateGroups(plan), [plan]);
    const rows = groups.flatMap((g) => g.rows);
    const [selected, setSelected] = useState(() => {
      const conflict = (plan.files || []).find((f) => f.default == null);
      return conflict ? `file:${conflict.path}` : (rows[0] ? rows[0].key : null);
    });
    const row = rows.find((r) => r.key === selected);
    const blocked = (plan.blocking || []).length > 0;
    const planWarnings = (plan.warnings || []).filter((w) => !w.path);
    let detail = null;
    if (row && row.type === 'permissions') {
      const c = plan.capabilities || {};
      detail = h('div', {className: 'iiid-preview'}, h('h4', {className: 'iiid-h4'}, 'What this update grants'),
        (c.workers_added || []).length ? h('ul', null, (plan.workers || []).filter((w) => (c.workers_added || []).includes(w.name)).map((w) => h('li', {key: w.name}, rules.workerLine(w)))) : null,
        (c.functions_added || []).length ? h('ul', null, c.functions_added.map((f, i) => h('li', {key: i}, `${f.agent}: `, h('code', null, f.function)))) : null,
        (c.models_changed || []).length ? h('ul', null, c.models_changed.map((m, i) => h('li', {key: i}, `${m.agent}: ${m.from ?? '—'} → ${m.to ?? '—'}`))) : null);
    } else if (row && row.type === 'worker') {
      detail = h(WorkerPreview, {worker: row.worker, plan, removeWorkers, toggleWorker});
    } else if (row && row.type === 'file') {
      const f = row.file;
      const name = baseName(f.path);
      const blobs = contents.blobs || {};
      if (f.change === 'modified' && f.local === 'edited') {
        detail = h('div', {className: 'iiid-preview'}, f.kind === 'agent' ? h(AgentChanges, {file: f}) : null,
          h(EditedAndChanged, {key: f.path, file: f, contents, choices, setChoice, edits, setEdit, narrow}));
      } else if (f.change === 'modified') {
        detail = h('div', {className: 'iiid-preview'},
          f.local === 'missing' ? h('p', {className: 'iiid-muted'}, 'You deleted this file; the update restores it unless you keep it deleted.') : null,
          f.local === 'missing' ? h(DecisionRadio, {file: f, choices, setChoice}) : null,
          f.kind === 'agent' ? h(AgentChanges, {file: f}) : null,
          h(DiffView, {left: blobs[f.base] ?? '', right: blobs[f.theirs] ?? '', leftCaption: `${plan.from}/${name}`, rightCaption: `${plan.to}/${name}`, narrow}));
      } else if (f.change === 'kept') {
        detail = h('div', {className: 'iiid-preview'}, f.note ? h('p', {className: 'iiid-muted'}, f.note) : null, h(DecisionRadio, {file: f, choices, setChoice}),
          h(DiffView, {left: (contents.ours || {})[f.path] ?? '', right: blobs[f.theirs] ?? '', leftCaption: `current/${name}`, rightCaption: `${plan.to}/${name}`, narrow}));
      } else if (f.change === 'removed') {
        detail = h('div', {className: 'iiid-preview'}, f.note ? h('p', {className: 'iiid-muted'}, f.note) : null, h(DecisionRadio, {file: f, choices, setChoice}),
          h('pre', {className: 'iiid-source'}, (contents.ours || {})[f.path] ?? blobs[f.base] ?? ''));
      } else {
        detail = h('div', {className: 'iiid-preview'},
          f.collision ? [h('p', {key: 'c'}, `This path already exists: it ${rules.ownerPhrase(f.collision)}.`), h(DecisionRadio, {key: 'r', file: f, choices, setChoice})] : null,
          f.kind === 'agent' ? h(AgentPreview, {file: f, contents, plan}) : h(SkillPreview, {file: f, contents, plan}));
      }
    }
    return h('div', {className: 'iiid-review'},
      plan.notes ? h('details', {className: 'iiid-notes', open: true}, h('summary', null, `Release notes · ${plan.to}`), h(Markdown, {content: plan.notes})) : null,
      blocked ? h(Blocked, {plan}) : (planWarnings.length ? h(Alert, {tone: 'warn', role: 'status'}, h('ul', null, planWarnings.map((w, i) => h('li', {key: i}, withCode(h, w.message))))) : null),
      h('div', {className: `iiid-prview${narrow ? ' is-narrow' : ''}`},
        h('section', {className: 'iiid-prview__list', 'aria-label': 'Changes'},
          h('h3', {className: 'iiid-h3'}, `Changes (${rules.changeCount(plan)})`),
          h('p', {className: 'iiid-muted iiid-help'}, 'Tick a row once you have looked at it: the ticks only help you keep track and change nothing.'),
          groups.map((g) => h('div', {key: g.id, className: 'iiid-group'},
            h('h4', {className: 'iiid-group__title'}, g.title),
            h('ul', {className: 'iiid-list'}, g.rows.map((r) => {
              const state = r.type === 'file' ? rules.fileStateWord(r.file, choices) : r.state;
              return h('li', {key: r.key, className: `iiid-row iiid-changerow${selected === r.key ? ' is-active' : ''}`},
                h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => setSelected(r.key), 'aria-current': selected === r.key ? 'true' : undefined},
                  h('span', {className: 'iiid-sign', 'aria-hidden': 'true'}, r.sign),
                  h('span', {className: 'iiid-row__title'}, r.label),
                  h(Chip, {tone: TONE[state] || 'neutral'}, state)),
                h('input', {type: 'checkbox', className: 'iiid-reviewed', 'aria-label': `Mark ${r.label} as reviewed`, title: 'Reviewed (only for you; changes nothing)', checked: !!reviewed[r.key],
                  onChange: (e) => setReviewed(r.key, e.target.checked)}));
            })))),
          (plan.counts || {}).unchanged > 0 ? h('p', {className: 'iiid-muted'}, `${plural(plan.counts.unchanged, 'file')} unchanged`) : null),
        h('section', {className: 'iiid-prview__detail'}, detail)));
  }

  // ------------------------------------------------------------------ screen F: removal

  function RemovalReview({plan, choices, setChoice, removeWorkers, toggleWorker}) {
    const files = plan.files || [];
    const box = (f) => {
      const ticked = rules.effectiveDecision(f, choices) === 'remove';
      return h('li', {key: f.path, className: 'iiid-filerow'},
        h(Checkbox, {label: f.path, checked: ticked, onChange: (on) => setChoice(f.path, on ? 'remove' : 'keep')}, h('code', null, f.path)),
        f.local === 'edited' ? h(Chip, {tone: 'warn'}, 'edited') : null,
        !ticked ? h('span', {className: 'iiid-muted'}, 'stays as a local file') : null);
    };
    const agents = files.filter((f) => f.kind === 'agent');
    const skills = files.filter((f) => f.kind !== 'agent');
    const workers = plan.workers || [];
    return h('div', {className: 'iiid-review'},
      (plan.warnings || []).length ? h(Alert, {tone: 'warn', role: 'status'}, h('ul', null, plan.warnings.map((w, i) => h('li', {key: i}, withCode(h, w.message))))) : null,
      h('p', null, 'Ticked files are deleted. The kit leaves kits.lock; files you keep become ordinary local files.'),
      h('section', {'aria-label': 'Profiles'}, h('h3', {className: 'iiid-h3'}, `Profiles (${agents.length})`), h('ul', {className: 'iiid-list--plain'}, agents.map(box))),
      h('section', {'aria-label': 'Skills'}, h('h3', {className: 'iiid-h3'}, `Skills (${skills.length})`), h('ul', {className: 'iiid-list--plain'}, skills.map(box))),
      h('section', {'aria-label': 'Workers'}, h('h3', {className: 'iiid-h3'}, `Workers (${workers.length})`),
        h('ul', {className: 'iiid-list--plain'}, workers.map((w) => h('li', {key: w.name, className: 'iiid-filerow'},
          h(Checkbox, {label: `Remove worker ${w.name}`, checked: removeWorkers.includes(w.name), disabled: w.action !== 'remove', onChange: () => toggleWorker(w.name)}, w.name),
          h('span', {className: 'iiid-muted'}, [w.range_from || w.range, w.path ? 'local path' : (w.installed || 'not installed')].filter(Boolean).join(' · '),
            (w.used_by || []).length ? ` · also used by ${w.used_by.join(', ')}` : '')))),
        h('p', {className: 'iiid-muted'}, 'Workers stay unless you tick them.')));
  }

  // ------------------------------------------------------------------ apply run, failed and done views

  const RUN_TITLE = {install: (p) => `Installing ${p.kit} ${p.to}…`, update: (p) => `Updating ${p.kit} ${p.from} → ${p.to}…`, remove: (p) => `Removing ${p.kit} ${p.from}…`};
  const STOP_TITLE = {install: 'Install stopped', update: 'Update stopped', remove: 'Removal stopped'};

  function DoneView({plan, run, onRoute, onOpenAgent}) {
    const r = run.report || {};
    const rows = [
      ['written', r.files_written, (n) => `${n} written`], ['merged', r.files_merged, (n) => `${n} merged`], ['removed', r.files_removed, (n) => `${n} removed`],
      ['kept', r.files_kept, (n) => `${n} kept as they were`], ['added', r.workers_added, (n) => `${plural(n, 'worker')} added`],
      ['updated', r.workers_updated, (n) => `${plural(n, 'worker')} updated`], ['wremoved', r.workers_removed, (n) => `${plural(n, 'worker')} removed`],
    ].filter(([, list]) => Array.isArray(list) && list.length > 0);
    return h('div', {className: 'iiid-run'},
      h('h2', {className: 'iiid-h2'}, h('span', {className: 'iiid-okmark', 'aria-hidden': 'true'}, '✓ '), run.message),
      h(StepList, {steps: r.steps || run.steps}),
      h('ul', {className: 'iiid-list--plain iiid-report'}, rows.map(([key, list, label]) => h('li', {key},
        h('details', null, h('summary', null, label(list.length)), h('ul', null, list.map((x) => h('li', {key: x}, h('code', null, x)))))))),
      h('div', {className: 'iiid-footer'},
        (r.agents || []).slice(0, 4).map((a) => h(Button, {key: a, onClick: () => onOpenAgent(a)}, `Open ${a}`)),
        plan.kind !== 'remove' ? h(Button, {onClick: () => onRoute({name: 'kit', kit: plan.kit})}, `View ${plan.kit}`) : null,
        h(Button, {variant: 'primary', onClick: () => onRoute({name: 'home'})}, 'Back to kits')),
      h('p', {className: 'iiid-muted'}, `Recorded in ${r.lock_path || 'kits.lock'} — commit it with the project.`));
  }

  // ------------------------------------------------------------------ the plan screen

  function PlanScreen({record, notice, onRoute, onOpenAgent, plansState, narrow, onDiscarded, refreshList}) {
    const plan = record.plan;
    const contents = record.contents || {blobs: {}, ours: {}, merged: {}};
    const saved = (plansState && plansState[plan.plan_id])
      || {choices: rules.initialChoices ? rules.initialChoices(plan) : {}, edits: {}, reviewed: {}, removeWorkers: []};
    const [choices, setChoices] = useState(saved.choices);
    const [edits, setEdits] = useState(saved.edits);
    const [reviewed, setReviewedState] = useState(saved.reviewed);
    const [removeWorkers, setRemoveWorkers] = useState(saved.removeWorkers);
    const [run, setRun] = useState({phase: 'review'});
    const [discarding, setDiscarding] = useState(false);
    const [ignoring, setIgnoring] = useState(false);
    const lastPayload = useRef(null);
    const remember = (patch) => { if (plansState) plansState[plan.plan_id] = {choices, edits, reviewed, removeWorkers, ...patch}; };
    const setChoice = (path, value) => { const next = {...choices, [path]: value}; setChoices(next); remember({choices: next}); };
    const setEdit = (path, text) => { const next = {...edits, [path]: text}; setEdits(next); remember({edits: next}); };
    const setReviewed = (key, on) => { const next = {...reviewed, [key]: on}; setReviewedState(next); remember({reviewed: next}); };
    const toggleWorker = (name) => {
      const next = removeWorkers.includes(name) ? removeWorkers.filter((n) => n !== name) : [...removeWorkers, name];
      setRemoveWorkers(next);
      remember({removeWorkers: next});
    };

    useSubscription('directory::kits::on-change', 'kits-on-change', `run-${plan.plan_id}`, (payload) => {
      const steps = rules.stepsFromEvent(payload, plan.plan_id);
      if (steps) setRun((r) => (r.phase === 'running' || r.phase === 'failed' ? {...r, steps} : r));
    });

    const execute = async (payload) => {
      lastPayload.current = payload;
      setRun({phase: 'running', steps: rules.initialSteps(plan)});
      let response;
      try {
        response = await call('directory::kits::apply', payload, TWENTY_MINUTES);
      } catch (error) {
        response = error instanceof Error ? error : new Error(String(error));
      }
      const outcome = rules.applyOutcome(response);
      if (typeof refreshList === 'function') refreshList();  // the listing changes after every apply
      if (outcome.kind === 'done') {
        if (plansState) delete plansState[plan.plan_id];
        setRun((r) => ({phase: 'done', steps: outcome.report.steps || r.steps, report: outcome.report, message: outcome.message}));
      } else if (outcome.kind === 'replan') {
        onRoute({name: 'plan', planId: outcome.plan.plan_id}, {notice: outcome.message});
      } else if (outcome.kind === 'notice') {
        onRoute({name: 'home'}, {notice: outcome.message});
      } else {
        setRun((r) => ({phase: 'failed', steps: r.steps, error: outcome.error}));
      }
    };

    const apply = () => execute({plan_id: plan.plan_id, decisions: rules.decisionsPayload(plan, choices),
      remove_workers: plan.kind === 'install' ? [] : removeWorkers.slice()});

    const discard = async () => {
      setDiscarding(false);
      try { await call('directory::kits::discard', {plan_id: plan.plan_id}); } catch { /* ignored */ }
      onDiscarded();
    };
    const ignore = async () => {
      setIgnoring(true);
      try { await call('directory::kits::ignore', {kit: plan.kit, version: plan.to, ignore: true}); } catch { /* the list shows the state */ }
      setIgnoring(false);
      onRoute({name: 'home'});
    };

    if (run.phase === 'running') {
      return h('div', {className: 'iiid-run', 'aria-busy': 'true'}, h('h2', {className: 'iiid-h2'}, RUN_TITLE[plan.kind](plan)), h(StepList, {steps: run.steps}));
    }
    if (run.phase === 'failed') {
      return h('div', {className: 'iiid-run'},
        h('h2', {className: 'iiid-h2'}, STOP_TITLE[plan.kind]),
        h(StepList, {steps: rules.failedSteps ? rules.failedSteps(run.steps, run.error) : run.steps}),
        h(ErrorNote, {error: run.error, title: 'The apply stopped before finishing.', context: {op: plan.kind === 'remove' ? 'remove' : 'install'}}),
        h('div', {className: 'iiid-footer'},
          h(Button, {variant: 'primary', onClick: () => execute(lastPayload.current)}, 'Try again'),
          h(Button, {onClick: () => setRun({phase: 'review'})}, 'Back to the review')),
        h('p', {className: 'iiid-muted'}, 'Trying again is safe: files already written are recognised and kits.lock is only written once everything else succeeded.'));
    }
    if (run.phase === 'done') return h(DoneView, {plan, run, onRoute, onOpenAgent});

    const blocked = (plan.blocking || []).length > 0;
    let screen;
    let primary = null;
    let secondary = [];
    if (plan.kind === 'update') {
      screen = h(UpdateReview, {plan, contents, choices, setChoice, edits, setEdit, reviewed, setReviewed, removeWorkers, toggleWorker, narrow});
      const p = rules.updatePrimary(plan, choices);
      primary = blocked ? null : h(Button, {variant: 'primary', disabled: p.disabled, title: p.title, onClick: apply}, p.label);
      secondary = [h(Button, {key: 'ignore', disabled: ignoring, onClick: ignore}, `Ignore ${plan.to}`), h(Button, {key: 'later', title: 'Keep this plan under Needs review', onClick: () => onRoute({name: 'home'})}, 'Later')];
    } else if (plan.kind === 'remove') {
      screen = h(RemovalReview, {plan, choices, setChoice, removeWorkers, toggleWorker});
      primary = h(Button, {variant: 'danger', onClick: apply}, rules.removalPrimaryLabel(plan, choices, removeWorkers));
      // Cancel means "do not remove": the plan is discarded, not left waiting under Needs review.
      secondary = [h(Button, {key: 'cancel', title: 'Discard this removal plan; nothing is removed', onClick: discard}, 'Cancel')];
    } else {
      screen = h(InstallReview, {plan, contents, choices, setChoice, narrow});
      primary = blocked ? null : h(Button, {variant: 'primary', onClick: apply}, rules.installPrimaryLabel(plan, choices));
      secondary = [h(Button, {key: 'notnow', title: 'Keep this plan under Needs review', onClick: () => onRoute({name: 'home'})}, 'Not now')];
    }
    return h('div', {className: 'iiid-plan'},
      notice ? h(Alert, {tone: 'warn', role: 'status'}, withCode(h, notice)) : null,
      record.progress && record.progress.error ? h(Alert, {tone: 'warn', role: 'status'}, `A previous apply stopped: ${record.progress.error}. Applying again is safe.`) : null,
      h(Header, {plan, onRoute}),
      screen,
      h('div', {className: 'iiid-footer iiid-planfoot'},
        h(Button, {variant: 'ghost', onClick: () => setDiscarding(true)}, 'Discard plan'),
        plan.expires_at ? h('span', {className: 'iiid-muted'}, `expires ${localDate(plan.expires_at)}`) : null,
        h('span', {className: 'iiid-spacer'}),
        ...secondary, primary),
      h(Confirm, {open: discarding, title: 'Discard this plan?', text: 'Nothing was written; you can plan it again any time.', confirmLabel: 'Discard', danger: true,
        onCancel: () => setDiscarding(false), onConfirm: discard}));
  }

  return {PlanScreen};
}
