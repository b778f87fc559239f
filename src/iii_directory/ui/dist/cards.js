// iii-directory — chat cards, the configuration form and the session chip (docs/console-page.md, docs/rules/console.md §3.3).
//
// Imports nothing: page.js loads it with host.importModule and calls `createCards(ui, rules) / createExtras(ui, rules)` with the
// console's React and host (through `ui`) and the pure rules (`rules`, page.js `composeRules`).

export function createCards(ui, rules) {
  const {CONFIG_SECTIONS, TIMEOUT_20_MIN, TIMEOUT_2_MIN, TOPOLOGY_KEYS, claimsFunction, cleanError, configPatch, initialSteps, parseSearchResult, planSummary, plural, readMessage, stepsFromEvent} = rules;
  const {h, React, host, Button, Chip, Alert, StepList, Markdown, useSubscription, call} = ui;
  const {useState, useEffect} = React;
  const canPanels = () => !!(host.panels && typeof host.panels.open === 'function');
  const openPanel = (context) => host.panels.open({pageId: 'directory', context});

  function PlanCard({plan, decisions, compact}) {
    const s = planSummary(plan, decisions);
    const [applying, setApplying] = useState(null);
    const reviewLabel = plan.kind === 'update' ? 'Review update' : (plan.kind === 'remove' ? 'Review removal' : 'Review install');
    const defaultsLabel = plan.kind === 'update' ? 'Update with these defaults' : (plan.kind === 'remove' ? 'Remove with these defaults' : 'Install with these defaults');
    const applyDefaults = () => {
      setApplying({status: 'running'});
      call('directory::kits::apply', {plan_id: plan.plan_id, decisions: {}}, TIMEOUT_20_MIN)
        .then((res) => setApplying({status: 'done', message: res.message}), (err) => setApplying({status: 'failed', error: cleanError(err)}));
    };
    let action = null;
    if (!compact && canPanels()) action = h(Button, {variant: 'primary', onClick: () => openPanel({collection: 'kits', plan_id: plan.plan_id})}, reviewLabel);
    else if (!compact) {
      action = !s.blocking.length && !((plan.counts || {}).decisions_required > 0)
        ? (applying ? h('p', {role: applying.status === 'failed' ? 'alert' : 'status'}, applying.status === 'running' ? 'Applying…' : (applying.message || applying.error))
          : h(Button, {variant: 'primary', onClick: applyDefaults}, defaultsLabel))
        : h('p', {className: 'iiid-muted'}, plan.review);
    }
    return h('div', {className: 'iiid-card'},
      h('div', {className: 'iiid-card__title'}, s.title, ' ', s.badges.map((b) => h(Chip, {key: b, tone: b === 'blocked' || b === 'major' ? 'alert' : 'warn'}, b))),
      h('div', {className: 'iiid-muted'}, s.counts),
      s.blocking.map((m, i) => h(Alert, {key: `b${i}`}, m)),
      s.replaced.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, `existing files replaced · ${s.replaced.length}`),
        s.replaced.map((r) => h('div', {key: r.path}, h('code', null, r.path), ' ', h(Chip, {tone: r.kept ? 'neutral' : 'warn'}, r.kept ? 'kept' : 'replaced')))) : null,
      s.conflicts.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, `conflicts · ${s.conflicts.length}`),
        s.conflicts.map((p) => h('div', {key: p}, h('code', null, p)))) : null,
      s.permissions ? h('div', {className: 'iiid-card__section'}, h('span', {className: 'iiid-card__label'}, 'permissions'), ' ', s.permissions) : null,
      s.also.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'also'), s.also.map((m, i) => h('div', {key: i}, m))) : null,
      action);
  }

  function ApplyRunning({planId}) {
    const [steps, setSteps] = useState(null);
    useSubscription('directory::kits::on-change', 'kits-on-change', `card-${planId}`, (payload) => {
      const next = stepsFromEvent(payload, planId);
      if (next) setSteps(next);
    }, !!planId);
    return h('div', {className: 'iiid-card'}, steps ? h(StepList, {steps}) : h('p', {className: 'iiid-muted'}, 're-checking the plan…'));
  }

  function ApprovalPreview({input}) {
    const [state, setState] = useState({status: 'loading'});
    useEffect(() => {
      call('directory::kits::plan', {plan_id: input.plan_id}, TIMEOUT_2_MIN).then((res) => setState({status: 'ready', plan: res.plan}),
        (err) => setState({status: 'error', error: cleanError(err)}));
    }, [input.plan_id]);
    if (state.status === 'loading') return h('div', {className: 'iiid-card'}, 'awaiting approval');
    if (state.status === 'error') return h('div', {className: 'iiid-card'}, h(Chip, null, 'awaiting approval'), h(Alert, null, state.error));
    return h('div', {className: 'iiid-card'}, h(Chip, {tone: 'warn'}, 'awaiting approval'),
      h(PlanCard, {plan: state.plan, decisions: input.decisions, compact: true}),
      canPanels() ? h(Button, {onClick: () => openPanel({collection: 'kits', plan_id: input.plan_id})}, 'Open the full review') : null,
      h('p', {className: 'iiid-muted'}, initialSteps(state.plan).map((s) => s.label).join(' → ')));
  }

  const openButton = (collection, key) => (canPanels() ? h(Button, {onClick: () => openPanel({collection, key})}, 'Open in Directory') : null);

  function renderDone(functionId, input, output) {
    const kitFn = ['directory::download-kit', 'directory::kits::plan-update', 'directory::kits::remove', 'directory::kits::apply'].includes(functionId);
    if (kitFn) {
      if (output.plan) return h(PlanCard, {plan: output.plan, decisions: input.decisions});
      if (functionId === 'directory::kits::apply' && output.status === 'applied' && output.report) {
        const r = output.report;
        const written = (r.files_written || []).length + (r.files_merged || []).length;
        return h('div', {className: 'iiid-card'},
          h('div', {className: 'iiid-card__title'}, output.message, ' ', h(Chip, {tone: 'ok'}, 'applied')),
          h('div', {className: 'iiid-muted'}, [`${written} written`, `${(r.files_removed || []).length} removed`, `${(r.files_kept || []).length} kept`,
            `${(r.workers_added || []).length + (r.workers_updated || []).length + (r.workers_removed || []).length} workers`].join(' · ')),
          (r.agents || []).length ? h('div', {className: 'iiid-card__section'}, h('span', {className: 'iiid-card__label'}, 'profiles from this kit'), ' ',
            r.agents.map((a) => (canPanels() ? h(Button, {key: a, variant: 'ghost', onClick: () => openPanel({collection: 'agents', key: a})}, a) : h(Chip, {key: a}, a)))) : null);
      }
      return h('div', {className: 'iiid-card'}, output.message || '');
    }
    if (functionId === 'directory::kits::check-updates') {
      const rows = (output.kits || []).filter((k) => k.available);
      if (!rows.length) return h('div', {className: 'iiid-card'}, 'Every installed kit is up to date.');
      return h('div', {className: 'iiid-card'}, rows.map((k) => h('div', {key: k.kit, className: 'iiid-card__row'}, `${k.kit} ${k.current} → ${k.available}`,
        k.major ? h(Chip, {tone: 'alert'}, 'major') : null, canPanels() ? h(Button, {onClick: () => openPanel({collection: 'kits', kit: k.kit})}, 'View') : null)));
    }
    if (functionId === 'directory::kits::list') {
      return h('div', {className: 'iiid-card'}, h('div', null, `${(output.kits || []).length} installed · ${(output.pending || []).length} to review`),
        (output.kits || []).map((k) => h('div', {key: k.kit}, `${k.kit} ${k.version}`, k.update && k.update.available ? ` ↑ ${k.update.available}` : '')));
    }
    const [, family, verb] = /^directory::([^:]+)::(.+)$/.exec(functionId) || [];
    if (family === 'skills') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, h('div', null, plural((output.skills || []).length, 'skill')),
        (output.skills || []).slice(0, 8).map((s) => h('div', {key: s.id}, h('code', null, s.id), ' ', s.title)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.title || input.id), ' ', h('code', null, output.id || input.id),
        h('pre', {className: 'iiid-source'}, String(output.body || '').split('\n').slice(0, 8).join('\n')));
      if (verb === 'index') return h('div', {className: 'iiid-card'}, plural(output.workers_count || 0, 'worker'), h('pre', {className: 'iiid-source'}, String(output.body || '').slice(0, 400)));
      if (verb === 'create' || verb === 'update') return h('div', {className: 'iiid-card'}, `Saved skill ${output.id}`, ' ', openButton('skills', output.id));
      const families = [['skills_written', 'skills'], ['system_prompts_written', 'system prompts'], ['agents_written', 'agent profiles'], ['agents_skipped', 'skipped profiles']];
      return h('div', {className: 'iiid-card'}, h('div', null, [output.namespace, output.source].filter(Boolean).join(' · ')),
        families.map(([k, label]) => (Array.isArray(output[k]) && output[k].length ? h('div', {key: k}, `${label} · ${output[k].length}: `,
          output[k].map((x) => (typeof x === 'string' ? x : `${x.id || x.name || ''}${x.owned_by ? ` (${x.owned_by})` : ''}`)).join(', ')) : null)));
    }
    if (family === 'system-prompts') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, (output.system_prompts || output.prompts || []).map((p) => h('div', {key: p.name}, h('strong', null, p.name), ' ', p.description)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.name), ' ', output.description);
      return h('div', {className: 'iiid-card'}, `Saved system prompt ${output.name}`);
    }
    if (family === 'agents') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, h('div', null, plural((output.agents || []).length, 'agent profile')),
        (output.agents || []).map((a) => h('div', {key: a.id}, h('code', null, a.id), ' ', a.name)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.name), ' ', output.model || '',
        h('div', {className: 'iiid-muted'}, `${plural((output.skills || []).length, 'skill')} · ${plural((output.functions || []).length, 'function')}`),
        (output.unknown_skills || []).length ? h('div', null, `unknown skills: ${output.unknown_skills.join(', ')}`) : null,
        (output.unknown_functions || []).length ? h('div', null, `unknown functions: ${output.unknown_functions.join(', ')}`) : null);
      if (verb === 'create' || verb === 'update') return h('div', {className: 'iiid-card'}, `Saved agent profile ${output.id}`, ' ', openButton('agents', output.id));
      if (verb.startsWith('functions::')) {
        const ids = verb.endsWith('add') ? output.added : output.removed;
        return h('div', {className: 'iiid-card'}, output.unchanged ? 'Nothing changed.' : `${verb.endsWith('add') ? 'Added' : 'Removed'}: ${(ids || []).join(', ')}`);
      }
    }
    if (family === 'registry') {
      const rows = Array.isArray(output.workers) ? output.workers : [output];
      return h('div', {className: 'iiid-card'}, rows.map((w, i) => h('div', {key: w.name || i}, h('strong', null, w.name), ' ', w.version || w.latest_version || '', ' ', w.description || '')));
    }
    return null;
  }

  const safe = (fn) => (msg) => {
    try { return fn(msg); } catch (error) { console.warn('[iii-directory] card render failed:', error); return null; }
  };

  const directoryRenderer = {
    id: 'iii-directory/page.js#directory',
    isMatch: (functionId) => claimsFunction(functionId),
    tryRender: safe((msg) => {
      const {functionId, input, output} = readMessage(msg);
      if (!output || typeof output !== 'object' || output.error) return null;
      return renderDone(functionId, input, output);
    }),
    tryRenderRunning: safe((msg) => {
      const {functionId, input} = readMessage(msg);
      if (['directory::download-kit', 'directory::kits::plan-update', 'directory::kits::remove'].includes(functionId)) return h('div', {className: 'iiid-card'}, `Planning ${input.kit || ''}…`);
      if (functionId === 'directory::kits::apply') return h(ApplyRunning, {planId: input.plan_id});
      if (functionId === 'directory::kits::check-updates') return h('div', {className: 'iiid-card'}, 'Checking installed kits for updates…');
      return null;
    }),
    tryRenderPreview: safe((msg) => {
      const {functionId, input} = readMessage(msg);
      if (functionId !== 'directory::kits::apply' || !input.plan_id) return null;
      return h(ApprovalPreview, {input});
    }),
  };

  function SearchCard({model, input}) {
    const [open, setOpen] = useState(false);
    const caps = Array.isArray(input.capabilities) ? input.capabilities : (Array.isArray(input.queries) ? input.queries : []);
    return h('div', {className: 'iiid-card'},
      h('div', {className: 'iiid-card__title'}, model.header, ' ', model.mode ? h(Chip, null, model.mode) : null, ' ', h('span', {className: 'iiid-muted'}, model.latency)),
      caps.length ? h('div', null, caps.map((c, i) => h(Chip, {key: i}, typeof c === 'string' ? c : JSON.stringify(c)))) : null,
      model.workers.map((w) => h('div', {key: w.namespace, className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, w.namespace),
        w.functions.map((f) => h('div', {key: f.function_id}, h('code', null, f.function_id), ' ', h('span', {className: 'iiid-muted'}, f.description))))),
      model.installable.map((w) => h('div', {key: w.name, className: 'iiid-card__section'}, h('strong', null, w.name), ' ', w.version, ' ', w.description,
        h('div', null, h('code', null, w.install)))),
      model.skills.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'skills'), model.skills.map((s, i) => h('div', {key: i}, h('code', null, s.id), ' ', s.title))) : null,
      model.triggers.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'triggers'), model.triggers.map((t, i) => h('div', {key: i}, h('code', null, t.trigger_type), ' → ', t.function_id))) : null,
      model.guidance ? h('details', {open, onToggle: (e) => setOpen(e.target.open)}, h('summary', null, 'guidance'), h(Markdown, {content: model.guidance})) : null);
  }

  const searchRenderer = {
    id: 'iii-directory/page.js#search',
    isMatch: (functionId) => functionId === 'directory::search_functions',
    tryRender: safe((msg) => {
      const {input, output} = readMessage(msg);
      const model = parseSearchResult(output);
      return model ? h(SearchCard, {model, input}) : null;
    }),
  };

  return {directoryRenderer, searchRenderer};
}

export function createExtras(ui, rules) {
  const {CONFIG_SECTIONS, TIMEOUT_20_MIN, TIMEOUT_2_MIN, TOPOLOGY_KEYS, claimsFunction, cleanError, configPatch, initialSteps, parseSearchResult, planSummary, plural, readMessage, stepsFromEvent} = rules;
  const {h, React, host, Button, Dialog, Chip, Alert, CopyButton, call} = ui;
  const {useState, useEffect, useRef} = React;

  function ConfigForm({schema, value, onChange, errors, focusField}) {
    const [texts, setTexts] = useState({});
    const [fieldErrors, setFieldErrors] = useState({});
    const refs = useRef({});
    const current = value && typeof value === 'object' ? value : {};
    useEffect(() => {
      const key = Array.isArray(focusField) ? focusField[0] : null;
      const node = key && refs.current[key];
      if (node) { node.focus(); if (node.scrollIntoView) node.scrollIntoView({block: 'center'}); }
    }, [Array.isArray(focusField) ? focusField.join('/') : '']);
    const errorFor = (key) => (errors && typeof errors.get === 'function' ? errors.get(`/${key}`) : null);
    const known = new Set(CONFIG_SECTIONS.flatMap((s) => s.fields.map((f) => `/${f[0]}`)));
    const others = errors && typeof errors.forEach === 'function' ? (() => { const out = []; errors.forEach((msg, ptr) => { if (!known.has(ptr)) out.push(`${ptr || '/'}: ${msg}`); }); return out; })() : [];
    const apply = (key, input) => {
      const result = configPatch(current, key, input);
      if (result.error) { setFieldErrors({...fieldErrors, [key]: result.error}); return; }
      setFieldErrors({...fieldErrors, [key]: null});
      onChange(result.value);
    };
    const field = ([key, label, kind, choices, fallback]) => {
      const id = `iiid-cfg-${key}`;
      let control;
      if (kind === 'switch') {
        control = h('input', {id, type: 'checkbox', role: 'switch', ref: (n) => { refs.current[key] = n; }, checked: current[key] === true,
          'aria-label': label, onChange: (e) => apply(key, {kind: 'switch', raw: e.target.checked})});
      } else if (kind === 'choice') {
        control = h('select', {id, className: 'iiid-select', ref: (n) => { refs.current[key] = n; }, value: current[key] ?? fallback, 'aria-label': label,
          onChange: (e) => apply(key, {kind: 'choice', raw: e.target.value})}, choices.map((c) => h('option', {key: c, value: c}, c)));
      } else {
        const shown = Object.prototype.hasOwnProperty.call(texts, key) ? texts[key] : (current[key] ?? '');
        control = h('input', {id, className: 'iiid-input', type: 'text', inputMode: kind === 'number' ? 'numeric' : undefined, ref: (n) => { refs.current[key] = n; },
          value: String(shown), 'aria-label': label, onChange: (e) => { setTexts({...texts, [key]: e.target.value}); apply(key, {kind, raw: e.target.value}); }});
      }
      const message = fieldErrors[key] || errorFor(key);
      return h('div', {key, className: 'iiid-field iiid-cfgfield'},
        h('label', {htmlFor: id, className: 'iiid-field__label'}, label, ' ', h('code', {className: 'iiid-cfgkey'}, key),
          TOPOLOGY_KEYS.includes(key) ? h(Chip, {tone: 'warn'}, 'Restart required') : null),
        control,
        message ? h('span', {className: 'iiid-fielderror', role: 'alert'}, message) : null);
    };
    return h('div', {className: 'iiid-config'},
      others.length ? h(Alert, null, h('ul', null, others.map((m, i) => h('li', {key: i}, m)))) : null,
      CONFIG_SECTIONS.map((section) => h('fieldset', {key: section.title, className: 'iiid-cfgsection'},
        h('legend', null, section.title), section.fields.map(field))));
  }

  function partsOf(answer) {
    const list = Array.isArray(answer) ? answer : (answer && Array.isArray(answer.parts) ? answer.parts : null);
    if (!list) return null;
    return list.filter((p) => p && typeof p === 'object').map((p) => ({kind: String(p.kind ?? p.type ?? 'part'), title: p.title ? String(p.title) : '',
      text: String(p.text ?? p.content ?? '')}));
  }

  function SystemPromptChip({sessionId}) {
    const [meta, setMeta] = useState(null);
    const [open, setOpen] = useState(false);
    const [detail, setDetail] = useState(null);
    const load = () => {
      if (!sessionId) return;
      call('session::get', {session_id: sessionId}).then((res) => {
        const sp = (res && (res.metadata || res.meta || {}).system_prompt) || {};
        const choice = sp.choice || {};
        setMeta({name: choice.named || 'default', mode: sp.strategy === 'override' ? 'replace' : 'enrich', raw: sp});
      }, () => setMeta({name: 'default', mode: 'enrich'}));
    };
    useEffect(() => {
      load();
      if (!sessionId || !host.iii || typeof host.iii.on !== 'function') return undefined;
      const ids = [['session::meta-updated', `iii::iii-directory-ui::sysprompt-meta::${sessionId}`], ['session::created', `iii::iii-directory-ui::sysprompt-created::${sessionId}`]];
      const offs = ids.map(([type, id]) => {
        const off = host.iii.on(id, (payload) => { if (!payload || payload.session_id === sessionId) load(); });
        const offTrigger = host.iii.registerTrigger({type, function_id: `${id}::${host.iii.browserId}`, config: {}});
        return () => { try { offTrigger(); } catch { /* gone */ } try { off(); } catch { /* gone */ } };
      });
      return () => offs.forEach((f) => f());
    }, [sessionId]);
    const show = () => {
      setOpen(true);
      setDetail({status: 'loading'});
      const payload = {session_id: sessionId};
      if (meta && meta.raw && meta.raw.strategy) payload.mode = meta.raw.strategy;
      if (meta && meta.name && meta.name !== 'default') payload.selected_prompt = meta.name;
      call('harness::system-prompt::get', payload).then((res) => setDetail({status: 'ready', parts: partsOf(res), raw: res}),
        (err) => setDetail({status: 'error', error: cleanError(err)}));
    };
    if (!meta) return null;
    return h('span', {className: 'iiid-chipwrap'},
      h('button', {type: 'button', className: 'iiid-chip iiid-chip--neutral iiid-chipbtn', onClick: show}, `${meta.name} · ${meta.mode}`),
      open ? h('div', {'data-iii-ui': 'iii-directory', style: {display: 'contents'}},
        h(Dialog, {open, onClose: () => setOpen(false), title: 'Effective system prompt', wide: true},
          !detail || detail.status === 'loading' ? h('p', null, 'Loading…') : detail.status === 'error' ? h(Alert, null, detail.error)
            : detail.parts ? detail.parts.map((p, i) => h('section', {key: i, className: 'iiid-card'},
              h('div', {className: 'iiid-card__title'}, p.title || p.kind, ' ', h(Chip, null, `~${Math.round(p.text.length / 4)} tokens`), ' ', h(CopyButton, {text: p.text})),
              h('pre', {className: 'iiid-source'}, p.text)))
              : h('pre', {className: 'iiid-source'}, JSON.stringify(detail.raw, null, 2)))) : null);
  }

  return {ConfigForm, SystemPromptChip};
}
