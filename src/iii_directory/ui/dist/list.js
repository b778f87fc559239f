// iii-directory — the entry list (windowed) and the pieces of a document: pickers, agent form, skill fields (docs/console-page.md, docs/rules/console.md §3.3).
//
// Imports nothing: page.js loads it with host.importModule and calls `createListParts(ui, rules)` with the
// console's React and host (through `ui`) and the pure rules (`rules`, page.js `composeRules`).

export function createListParts(ui, rules) {
  const {AGENT_COLORS, AGENT_ICONS, EFFORTS, asList, cleanError, firstHeading, formatAgo, formatSize, isInternalFunction, modelIds, oneLine, originLabel, parseFrontmatter, plural, setFirstHeading, setFrontmatterFields, windowRange} = rules;
  const {h, React, Button, TextInput, Dialog, Markdown, Editor, Choice, Checkbox, Chip, Alert, Skeleton, Confirm, Icon,
    SplitLayout, useSubscription, useCoalesced, call, DiffView, ErrorNote, useReachability} = ui;
  const {useState, useEffect, useRef, useMemo, useCallback} = React;

  const ROW_HEIGHT = 78;
  const GROUP_HEIGHT = 30;
  const WINDOW_FROM = 80;

  /**
   * The entry list. Up to WINDOW_FROM items render in full; longer lists render only the rows
   * near the sidebar's viewport (fixed row heights, spacers above and below), so typing and
   * opening stay cheap at a thousand skills.
   */
  function WindowedList({items, label, renderRow, scrollRef, activeKey, reveal, partial}) {
    const windowed = items.length > WINDOW_FROM;
    const listRef = useRef(null);
    const revealed = useRef(null);
    const [view, setView] = useState({top: 0, height: 800});
    const offsets = useMemo(() => {
      if (!windowed) return null;
      const out = new Float64Array(items.length + 1);
      for (let i = 0; i < items.length; i += 1) out[i + 1] = out[i] + (items[i].type === 'group' ? GROUP_HEIGHT : ROW_HEIGHT);
      return out;
    }, [items, windowed]);
    useEffect(() => {
      const scroller = scrollRef && scrollRef.current;
      if (!windowed || !scroller) return undefined;
      let frame = 0;
      const measure = () => {
        frame = 0;
        const list = listRef.current;
        const listTop = list ? list.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop : 0;
        setView((v) => {
          const next = {top: Math.max(0, scroller.scrollTop - listTop), height: scroller.clientHeight || 800};
          return v.top === next.top && v.height === next.height ? v : next;
        });
      };
      const onScroll = () => { if (!frame) frame = requestAnimationFrame(measure); };
      measure();
      scroller.addEventListener('scroll', onScroll, {passive: true});
      globalThis.addEventListener('resize', onScroll);
      return () => { scroller.removeEventListener('scroll', onScroll); globalThis.removeEventListener('resize', onScroll); if (frame) cancelAnimationFrame(frame); };
    }, [windowed, scrollRef]);
    // Screen readers hear the whole list's size and each row's place in it, also when windowed.
    const positions = useMemo(() => {
      const out = new Map();
      for (const item of items) if (item.type !== 'group') out.set(item.key, out.size + 1);
      return out;
    }, [items]);
    const render = (item) => (item.type === 'group'
      ? h('li', {key: item.key, className: 'iiid-listgroup', role: 'presentation'}, h('h3', {className: 'iiid-listgroup__name'}, item.name),
        partial ? null : h('span', {className: 'iiid-muted', 'aria-label': plural(item.count, 'entry', 'entries')}, String(item.count)))
      : renderRow(item, item.key === activeKey, positions.get(item.key), partial ? -1 : positions.size));
    // A row asked for (a skill just created or restored) is scrolled into view once it is listed.
    useEffect(() => {
      const scroller = scrollRef && scrollRef.current;
      if (!reveal || revealed.current === reveal.n || !scroller) return;
      const at = items.findIndex((item) => item.key === reveal.key && item.type !== 'group');
      if (at < 0) return;
      revealed.current = reveal.n;
      if (!windowed) {
        const node = listRef.current && [...listRef.current.querySelectorAll('button[data-key]')].find((b) => b.dataset.key === reveal.key);
        if (node) node.scrollIntoView({block: 'nearest'});
        return;
      }
      const list = listRef.current;
      const listTop = list ? list.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop : 0;
      const top = listTop + offsets[at];
      if (top < scroller.scrollTop || top + ROW_HEIGHT > scroller.scrollTop + scroller.clientHeight) {
        scroller.scrollTop = Math.max(0, top - scroller.clientHeight / 2);
      }
    }, [reveal, items, windowed]);
    if (!windowed) return h('ul', {className: 'iiid-list', 'aria-label': label, ref: listRef}, items.map(render));
    const [start, end] = windowRange(offsets, view.top, view.height);
    return h('ul', {className: 'iiid-list iiid-list--windowed', 'aria-label': label, ref: listRef,
      style: {paddingTop: `${offsets[start]}px`, paddingBottom: `${offsets[items.length] - offsets[end]}px`}},
    items.slice(start, end).map(render));
  }

  const EntryRow = React.memo(function EntryRow({adapter, row, active, onOpen, badges, posInSet, setSize}) {
    const key = adapter.key(row);
    const meta = adapter.collection === 'skills'
      ? [formatSize(row.bytes), formatAgo(row.modified_at)].filter(Boolean).join(' · ')
      : originLabel(row);
    // The name is short (title and id); chips, summary and meta are the description.
    const title = adapter.title(row);
    const about = `iiid-${adapter.collection}-${key}`;
    const chips = [row.hidden ? h(Chip, {key: 'hidden'}, 'hidden') : null, ...(badges || []).map((b) => h(Chip, {key: b.text, tone: b.tone}, b.text))].filter(Boolean);
    return h('li', {className: `iiid-row${active ? ' is-active' : ''}`, 'aria-posinset': posInSet, 'aria-setsize': setSize},
      h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => onOpen(key), 'aria-current': active ? 'true' : undefined,
        'aria-label': title && title !== key ? `${title} · ${key}` : key, 'data-key': key,
        'aria-describedby': [chips.length ? `${about}-chips` : '', row.description ? `${about}-desc` : '', `${about}-meta`].filter(Boolean).join(' ')},
        adapter.collection === 'agents'
          ? h('span', {className: `iiid-avatar iiid-color-${row.color || 'neutral'}`, 'aria-hidden': 'true'}, row.logo || (row.name || row.id || '?').slice(0, 1).toUpperCase())
          : null,
        h('span', {className: 'iiid-row__main'},
          h('span', {className: 'iiid-row__title'}, h('span', {className: 'iiid-row__name'}, title),
            chips.length ? h('span', {id: `${about}-chips`, style: {display: 'contents'}}, chips) : null),
          h('span', {className: 'iiid-row__id'}, key),
          row.description ? h('span', {className: 'iiid-row__desc', id: `${about}-desc`}, row.description) : null,
          h('span', {className: 'iiid-row__meta', id: `${about}-meta`}, meta))));
  });

  /** Picker with Selected / Available lists (§4.4). */
  function Picker({title, searchLabel, own, inherited, inheritedFrom, unknown, available, status, error, onRetry, onChange, failText, hideInternal}) {
    const [query, setQuery] = useState('');
    const [highlight, setHighlight] = useState(0);
    const [showInternal, setShowInternal] = useState(false);
    const unknownSet = new Set(unknown || []);
    const q = query.trim().toLowerCase();
    const ownSet = new Set(own);
    const internalCount = hideInternal ? (available || []).filter(isInternalFunction).length : 0;
    const candidates = (available || []).filter((item) => !ownSet.has(item.id) && (showInternal || !hideInternal || !isInternalFunction(item))
      && (!q || item.id.toLowerCase().includes(q) || (item.description || '').toLowerCase().includes(q))).slice(0, 50);
    const add = (id) => { if (id && !ownSet.has(id)) onChange([...own, id]); };
    const onKeyDown = (e) => {
      if (e.key === 'ArrowDown') { e.preventDefault(); setHighlight(Math.min(highlight + 1, Math.max(candidates.length - 1, 0))); }
      else if (e.key === 'ArrowUp') { e.preventDefault(); setHighlight(Math.max(highlight - 1, 0)); }
      else if (e.key === 'Enter') { e.preventDefault(); const item = candidates[highlight]; if (item) { add(item.id); setHighlight(0); } }
      else if (e.key === 'Escape') { e.preventDefault(); setQuery(''); setHighlight(0); }
    };
    const inheritedOnly = (inherited || []).filter((id) => !ownSet.has(id));
    return h('section', {className: 'iiid-picker', 'aria-label': title},
      h('h4', {className: 'iiid-field__label'}, title),
      h('div', {className: 'iiid-picker__cols'},
        h('div', {className: 'iiid-picker__col'},
          h('div', {className: 'iiid-picker__head'}, 'Selected'),
          own.length ? h('ul', {className: 'iiid-picker__list'}, own.map((id) => h('li', {key: id, className: 'iiid-picker__item'},
            h('code', null, id), unknownSet.has(id) ? h(Chip, {tone: 'warn'}, 'unknown') : null,
            h('button', {type: 'button', className: 'iiid-iconbtn', 'aria-label': `Remove ${id}`, onClick: () => onChange(own.filter((x) => x !== id))}, h(Icon, {name: 'close', size: 14})))))
            : h('p', {className: 'iiid-muted'}, 'None selected.'),
          inheritedOnly.length ? h('div', {className: 'iiid-picker__inherited'},
            h('div', {className: 'iiid-picker__head'}, `inherited from ${inheritedFrom || 'the parent'}`),
            h('ul', {className: 'iiid-picker__list'}, inheritedOnly.map((id) => h('li', {key: id, className: 'iiid-picker__item is-readonly'}, h('code', null, id),
              unknownSet.has(id) ? h(Chip, {tone: 'warn'}, 'unknown') : null)))) : null),
        h('div', {className: 'iiid-picker__col'},
          h('div', {className: 'iiid-picker__head'}, 'Available'),
          h(TextInput, {value: query, onChange: (v) => { setQuery(v); setHighlight(0); }, label: searchLabel, placeholder: searchLabel, onKeyDown}),
          internalCount ? h(Checkbox, {label: `Show ${plural(internalCount, 'internal function')}`, checked: showInternal, onChange: (v) => { setShowInternal(v); setHighlight(0); }},
            `Show ${plural(internalCount, 'internal function')} (engine and console plumbing)`) : null,
          status === 'error' ? h(Alert, {tone: 'warn', role: 'status'}, h('span', null, failText), ' ', h('span', {className: 'iiid-muted'}, error), ' ', h(Button, {onClick: onRetry}, 'Retry'))
            : status === 'loading' ? h(Skeleton, {rows: 2})
              : h('ul', {className: 'iiid-picker__list', role: 'listbox', 'aria-label': `${title} available`}, candidates.map((item, i) => h('li', {
                key: item.id, role: 'option', 'aria-selected': i === highlight ? 'true' : 'false',
                className: `iiid-picker__item is-option${i === highlight ? ' is-hl' : ''}`, onMouseDown: (e) => { e.preventDefault(); add(item.id); },
              }, h('code', null, item.id), item.description ? h('span', {className: 'iiid-muted'}, item.description) : null))))));
  }

  /**
   * The models list is asked once per page, not once per profile: without a router worker (a
   * normal set-up) `router::models::list` does not exist, and the form says so once, quietly.
   */
  const models = {state: null, promise: null, toldFor: null, listeners: new Set()};
  const loadModels = (force) => {
    if (models.promise && !force) return models.promise;
    models.promise = call('router::models::list', {}).then((res) => ({status: 'ready', items: modelIds(res), error: ''}),
      (err) => ({status: 'error', items: [], error: cleanError(err)}))
      .then((state) => { models.state = state; models.listeners.forEach((l) => l(state)); return state; });
    return models.promise;
  };
  function useModels(entryKey) {
    const [state, setState] = useState(models.state || {status: 'loading', items: [], error: ''});
    const tellHere = models.toldFor == null || models.toldFor === entryKey;
    useEffect(() => {
      models.listeners.add(setState);
      loadModels(false);
      return () => { models.listeners.delete(setState); };
    }, []);
    useEffect(() => { if (tellHere && state.status === 'error') models.toldFor = entryKey; }, [tellHere, state.status, entryKey]);
    return [state, () => loadModels(true), tellHere];
  }

  /** Loads a picker catalog once per mount; failures stay inside the picker. */
  function useCatalog(fn, payload, map) {
    const [state, setState] = useState({status: 'loading', items: [], error: ''});
    const load = useCallback(() => {
      setState((s) => ({...s, status: 'loading'}));
      call(fn, payload).then((res) => setState({status: 'ready', items: map(res), error: ''}),
        (err) => setState({status: 'error', items: [], error: cleanError(err)}));
    }, [fn]);
    useEffect(() => { load(); }, [load]);
    return [state, load];
  }

  /** The agent profile form: every field edits the draft text through setFrontmatterFields. */
  function AgentForm({draft, onDraft, resolved, agents, creating, narrow, entryKey}) {
    const parsed = useMemo(() => parseFrontmatter(draft), [draft]);
    const f = parsed.fields;
    const set = (changes) => onDraft(setFrontmatterFields(draft, changes));
    const [models, reloadModels, tellModels] = useModels(entryKey);
    const [functionsCatalog, reloadFunctions] = useCatalog('engine::functions::list', {include_internal: true}, (res) => {
      const rows = Array.isArray(res) ? res : (res && Array.isArray(res.functions) ? res.functions : []);
      return rows.map((r) => (typeof r === 'string' ? {id: r} : {id: r.function_id || r.id || r.name, description: oneLine(r.description),
        internal: !!(r.metadata && r.metadata.internal)}))
        .filter((r) => r.id).sort((a, b) => a.id.localeCompare(b.id));
    });
    const [skillsCatalog, reloadSkills] = useCatalog('directory::skills::list', {include_description: true}, (res) => (res.skills || []).map((s) => ({id: s.id, description: s.title || s.description || ''})));
    const r = resolved || {};
    const effort = typeof f.reasoning_effort === 'string' ? f.reasoning_effort : '';
    const modelListId = useMemo(() => `iiid-models-${Math.random().toString(36).slice(2, 8)}`, []);
    return h('div', {className: 'iiid-agentform'},
      r.inheritance_error ? h(Alert, {tone: 'warn', role: 'status'}, r.inheritance_error) : null,
      h('div', {className: 'iiid-agentform__identity'},
        h('span', {className: `iiid-avatar iiid-avatar--lg iiid-color-${f.color || 'neutral'}`, 'aria-hidden': 'true'}, f.logo || (f.name || '?').slice(0, 1).toUpperCase()),
        h('div', {className: 'iiid-agentform__names'},
          h(TextInput, {value: typeof f.name === 'string' ? f.name : '', onChange: (v) => set({name: v}), label: 'Name', placeholder: 'Name (required)', className: 'iiid-input--title'}),
          h(TextInput, {value: typeof f.description === 'string' ? f.description : '', onChange: (v) => set({description: v}), label: 'Description', placeholder: 'Description'}))),
      h('div', {className: 'iiid-grid'},
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Icon'),
          h('select', {className: 'iiid-select', 'aria-label': 'Icon', value: f.icon || '', onChange: (e) => set({icon: e.target.value || null})},
            h('option', {value: ''}, 'none'), AGENT_ICONS.map((i) => h('option', {key: i, value: i}, i)))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Colour'),
          h('select', {className: 'iiid-select', 'aria-label': 'Colour', value: f.color || '', onChange: (e) => set({color: e.target.value || null})},
            h('option', {value: ''}, 'default'), AGENT_COLORS.map((c) => h('option', {key: c, value: c}, c)))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Logo'),
          h(TextInput, {value: typeof f.logo === 'string' ? f.logo : '', onChange: (v) => set({logo: v}), label: 'Logo', placeholder: 'an emoji'})),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Model'),
          h(TextInput, {value: typeof f.model === 'string' ? f.model : '', onChange: (v) => set({model: v}), label: 'Model', placeholder: r.model || 'the send decides', list: modelListId}),
          h('datalist', {id: modelListId}, models.items.map((m) => h('option', {key: m, value: m}))),
          models.status === 'error' && tellModels ? h('span', {className: 'iiid-hint', title: models.error}, 'Models could not be loaded; type a model id. ',
            h('button', {type: 'button', className: 'iiid-linkbtn', onClick: reloadModels}, 'Retry')) : null),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Reasoning effort'),
          h('select', {className: 'iiid-select', 'aria-label': 'Reasoning effort', value: EFFORTS.includes(effort) || !effort ? effort : '__custom',
            onChange: (e) => set({reasoning_effort: e.target.value === '__custom' ? effort || 'custom' : (e.target.value || null)})},
          h('option', {value: ''}, 'default'), EFFORTS.map((x) => h('option', {key: x, value: x}, x)), h('option', {value: '__custom'}, effort && !EFFORTS.includes(effort) ? effort : 'other…'))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Extends'),
          h('select', {className: 'iiid-select', 'aria-label': 'Extends', value: f.extends || '', onChange: (e) => set({extends: e.target.value || null})},
            h('option', {value: ''}, 'none'), (agents || []).filter((a) => a.id !== r.id).map((a) => h('option', {key: a.id, value: a.id}, a.id))))),
      h(Picker, {title: 'Skills', searchLabel: 'Search skills', own: asList(f.skills), inherited: r.skills, inheritedFrom: f.extends || r.extends,
        unknown: r.unknown_skills, available: skillsCatalog.items, status: skillsCatalog.status, error: skillsCatalog.error, onRetry: reloadSkills,
        onChange: (list) => set({skills: list}), failText: 'Skills could not be loaded.'}),
      h(Picker, {title: 'Preloaded functions', searchLabel: 'Search functions', own: asList(f.functions), inherited: r.functions, inheritedFrom: f.extends || r.extends,
        unknown: r.unknown_functions, available: functionsCatalog.items, status: functionsCatalog.status, error: functionsCatalog.error, onRetry: reloadFunctions, hideInternal: true,
        onChange: (list) => set({functions: list}), failText: 'Functions could not be loaded.'}),
      h('div', {className: 'iiid-grid'},
        h(Checkbox, {label: 'Hidden', checked: f.hidden === true, onChange: (v) => set({hidden: v ? true : null})}, 'Hidden from the new-session gallery'),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Composer placeholder'),
          h(TextInput, {value: typeof f.composer_placeholder === 'string' ? f.composer_placeholder : '', maxLength: 200,
            onChange: (v) => set({composer_placeholder: v.slice(0, 200)}), label: 'Composer placeholder', placeholder: 'An example request'}))),
      h('label', {className: 'iiid-field iiid-field--full'}, h('span', {className: 'iiid-field__label'}, 'System prompt'),
        h(Editor, {value: parsed.body, onChange: (body) => onDraft(setFrontmatterFields(draft, {body})), label: 'System prompt', rows: narrow ? 10 : 14})));
  }

  /** Skill structured fields (Title, Description) above the markdown body. */
  function SkillFields({draft, onDraft, mode, narrow, ratio, onRatio, readOnly}) {
    const parsed = useMemo(() => parseFrontmatter(draft), [draft]);
    const f = parsed.fields;
    const titleKey = Object.prototype.hasOwnProperty.call(f, 'title') ? 'title' : 'name';
    const heading = typeof f[titleKey] === 'string' ? null : firstHeading(parsed.body);
    const setTitle = (v) => onDraft(heading ? setFrontmatterFields(draft, {body: setFirstHeading(parsed.body, v)}) : setFrontmatterFields(draft, {[titleKey]: v}));
    const editor = h(Editor, {value: parsed.body, label: 'Skill body', rows: narrow ? 12 : 20, readOnly,
      onChange: (body) => onDraft(setFrontmatterFields(draft, {body}))});
    const effective = narrow && mode === 'split' ? 'edit' : mode;
    return h('div', {className: 'iiid-skilldoc'},
      h('div', {className: 'iiid-grid'},
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Title'),
          h(TextInput, {value: typeof f[titleKey] === 'string' ? f[titleKey] : (heading ? heading.text : ''), label: 'Title', disabled: readOnly, onChange: setTitle})),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Description'),
          h(TextInput, {value: typeof f.description === 'string' ? f.description : '', label: 'Description', disabled: readOnly, onChange: (v) => onDraft(setFrontmatterFields(draft, {description: v}))}))),
      h(SplitLayout, {mode: effective, ratio, onRatio, editor, preview: h(Markdown, {content: parsed.body})}));
  }

  const firstLine = (lines) => {
    const line = (lines.find((l) => l.trim() !== '') || '').trim();
    return line ? `“${line.length > 48 ? `${line.slice(0, 47)}…` : line}”` : 'nothing';
  };

  /** The merge's unresolved conflicts, each with its own way out; Save waits for all of them. */
  function ConflictList({conflicts, onTake}) {
    return h('section', {className: 'iiid-banner iiid-banner--warn iiid-conflicts', 'aria-label': 'Merge conflicts'},
      h('p', null, `${plural(conflicts.length, 'conflict')} left from the merge. Save waits until each is resolved: keep yours, keep the disk version, or edit the text between <<<<<<< and >>>>>>>.`),
      h('ol', {className: 'iiid-conflicts__list'}, conflicts.map((c, i) => h('li', {key: `${i}:${c.open}`, className: 'iiid-conflicts__item', role: 'group', 'aria-label': `Conflict ${i + 1}`},
        h('span', {className: 'iiid-conflicts__text'}, `Conflict ${i + 1}: yours ${firstLine(c.mine)} · on disk ${firstLine(c.theirs)}`),
        h(Button, {onClick: () => onTake(i, 'mine')}, 'Keep yours'),
        h(Button, {onClick: () => onTake(i, 'theirs')}, 'Keep disk version')))));
  }

  return {ROW_HEIGHT, GROUP_HEIGHT, WINDOW_FROM, WindowedList, EntryRow, Picker, models, loadModels, useModels, useCatalog, AgentForm, SkillFields, firstLine, ConflictList};
}
