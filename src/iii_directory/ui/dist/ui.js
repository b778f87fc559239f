// iii-directory — the shared UI: console component adapters with plain fallbacks, dialogs, diff view, hooks (docs/console-page.md, docs/rules/console.md §3.3).
//
// Imports nothing: page.js loads it with host.importModule and calls `createUi(React, host, rules)` with the
// console's React and host (through `ui`) and the pure rules (`rules`, page.js `composeRules`).

/** Console components the adapters may take from host.components; remove a name to switch it off. */
export const CONSOLE_COMPONENTS = ['Button', 'Input', 'Dialog', 'MarkdownPreview', 'CodeEditor'];

let subscriberCounter = 0;

const ICON_PATHS = {
  file: 'M6 2h9l5 5v15H6z M14 2v6h6',
  puzzle: 'M10 3h4v3a2 2 0 1 0 4 0V3h3v7h-3a2 2 0 1 0 0 4h3v7h-7v-3a2 2 0 1 0-4 0v3H3v-7h3a2 2 0 1 0 0-4H3V3z',
  book: 'M4 4h7a3 3 0 0 1 3 3v13a2 2 0 0 0-2-2H4z M20 4h-5a3 3 0 0 0-3 3',
  person: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z M4 21a8 8 0 0 1 16 0',
  check: 'M4 12l5 5L20 6',
  close: 'M6 6l12 12 M18 6L6 18',
  back: 'M15 5l-7 7 7 7',
  warn: 'M12 3l10 18H2z M12 10v5 M12 18v.5',
  plus: 'M12 5v14 M5 12h14',
  trash: 'M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13',
};

/** Build the UI toolkit for one React instance and host: adapters with plain fallbacks and the page's own elements. */
export function createUi(React, host, rules) {
  const {clampRatio, cleanError, createReachability, humanError, lineDiff, markdownBlocks, markdownElements, ratioFromPointer, subscriberId, transportProblem} = rules;
  const h = React.createElement;
  const {useState, useEffect, useRef, useCallback} = React;

  class Boundary extends React.Component {
    constructor(props) { super(props); this.state = {failed: false}; }
    static getDerivedStateFromError() { return {failed: true}; }
    componentDidCatch(error) { console.warn('[iii-directory] a console component failed; using the plain element:', error); }
    render() { return this.state.failed ? this.props.fallback : this.props.children; }
  }

  const components = (host && host.components) || {};
  const consoleComponent = (name) => (CONSOLE_COMPONENTS.includes(name) && typeof components[name] === 'function' ? components[name]
    : (CONSOLE_COMPONENTS.includes(name) && components[name] && typeof components[name] === 'object' ? components[name] : null));
  const adapt = (name, props, fallback) => {
    const Comp = consoleComponent(name);
    return Comp ? h(Boundary, {fallback}, h(Comp, props)) : fallback;
  };

  function Icon({name, size = 16, label}) {
    return h('svg', {className: 'iiid-icon', width: size, height: size, viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor',
      strokeWidth: 2, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': label ? undefined : 'true',
      role: label ? 'img' : undefined, 'aria-label': label},
    h('path', {d: ICON_PATHS[name] || ICON_PATHS.file}));
  }

  function Button({variant = 'secondary', onClick, disabled, title, label, children, className, type}) {
    const fallback = h('button', {type: type || 'button', className: `iiid-btn iiid-btn--${variant}${className ? ` ${className}` : ''}`,
      onClick, disabled, title: title || undefined, 'aria-label': label}, children);
    return adapt('Button', {onClick, disabled, title, 'aria-label': label, variant, children}, fallback);
  }

  function TextInput({value, onChange, placeholder, label, disabled, inputRef, onKeyDown, className, onBlur, maxLength, list, title}) {
    const props = {type: 'text', value: value ?? '', onChange: (e) => onChange && onChange(e.target.value), placeholder, title,
      'aria-label': label, disabled, ref: inputRef, onKeyDown, className: `iiid-input${className ? ` ${className}` : ''}`,
      onBlur, maxLength, list, spellCheck: false};
    if (inputRef || onKeyDown || list) return h('input', props);
    return adapt('Input', {value: value ?? '', onChange: props.onChange, placeholder, 'aria-label': label, disabled}, h('input', props));
  }

  function PlainDialog({open, onClose, title, children, footer, wide}) {
    const ref = useRef(null);
    useEffect(() => {
      if (!open) return undefined;
      const previous = globalThis.document ? globalThis.document.activeElement : null;
      const node = ref.current;
      if (node) {
        const target = node.querySelector('[data-autofocus], button, input, textarea, select') || node;
        target.focus();
      }
      return () => { if (previous && previous.focus) previous.focus(); };
    }, [open]);
    // Escape closes from anywhere; Tab and Shift+Tab cycle inside the dialog.
    const closeRef = useRef(onClose);
    closeRef.current = onClose;
    useEffect(() => {
      if (!open || !globalThis.document) return undefined;
      const onKey = (e) => {
        const node = ref.current;
        if (!node) return;
        if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); if (closeRef.current) closeRef.current(); return; }
        if (e.key !== 'Tab') return;
        const focusable = [...node.querySelectorAll('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])')]
          .filter((el) => !el.disabled && el.getClientRects().length > 0);
        if (!focusable.length) { e.preventDefault(); node.focus(); return; }
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        const inside = node.contains(globalThis.document.activeElement);
        if (e.shiftKey && (!inside || globalThis.document.activeElement === first || globalThis.document.activeElement === node)) { e.preventDefault(); last.focus(); }
        else if (!e.shiftKey && (!inside || globalThis.document.activeElement === last)) { e.preventDefault(); first.focus(); }
      };
      globalThis.document.addEventListener('keydown', onKey, true);
      return () => globalThis.document.removeEventListener('keydown', onKey, true);
    }, [open]);
    if (!open) return null;
    return h('div', {className: 'iiid-backdrop', onMouseDown: (e) => { if (e.target === e.currentTarget) onClose && onClose(); }},
      h('div', {className: `iiid-dialog${wide ? ' iiid-dialog--wide' : ''}`, role: 'dialog', 'aria-modal': 'true', 'aria-label': title,
        tabIndex: -1, ref},
      h('div', {className: 'iiid-dialog__head'}, h('h2', {className: 'iiid-dialog__title'}, title),
        h('button', {type: 'button', className: 'iiid-iconbtn', 'aria-label': 'Close', onClick: onClose}, h(Icon, {name: 'close'}))),
      h('div', {className: 'iiid-dialog__body'}, children),
      footer ? h('div', {className: 'iiid-dialog__foot'}, footer) : null));
  }

  function Dialog(props) {
    const fallback = h(PlainDialog, props);
    if (!props.open) return null;
    return adapt('Dialog', {open: props.open, onOpenChange: (o) => { if (!o && props.onClose) props.onClose(); }, title: props.title,
      children: [props.children, props.footer]}, fallback);
  }

  /** The console's markdown component when it has one, else this page's own renderer (no raw HTML). */
  function Markdown({content}) {
    const blocks = React.useMemo(() => markdownBlocks(content || ''), [content]);
    return adapt('MarkdownPreview', {content: content || ''}, h('div', {className: 'iiid-md iiid-md--own'}, markdownElements(h, blocks)));
  }

  function Editor({value, onChange, label, rows = 18, readOnly, onKeyDown}) {
    const fallback = h('textarea', {className: 'iiid-editor', spellCheck: false, value: value ?? '', 'aria-label': label, rows, readOnly,
      onChange: (e) => onChange && onChange(e.target.value), onKeyDown});
    if (onKeyDown || readOnly) return fallback;
    return adapt('CodeEditor', {value: value ?? '', onChange: (text) => onChange && onChange(text), language: 'markdown', 'aria-label': label}, fallback);
  }

  /** A choice group: role radiogroup with role radio options (segmented controls, radio lists). */
  function Choice({label, options, value, onChange, variant = 'segmented', disabled}) {
    const refs = useRef([]);
    const move = (index, delta) => {
      const next = (index + delta + options.length) % options.length;
      onChange(options[next].value);
      const node = refs.current[next];
      if (node) node.focus();
    };
    return h('div', {role: 'radiogroup', 'aria-label': label, className: `iiid-choice iiid-choice--${variant}`},
      options.map((option, index) => h('button', {
        key: option.value, type: 'button', role: 'radio', 'aria-checked': option.value === value ? 'true' : 'false',
        'aria-label': option.ariaLabel, title: option.title, disabled: disabled || option.disabled,
        tabIndex: option.value === value || (value == null && index === 0) ? 0 : -1,
        ref: (node) => { refs.current[index] = node; },
        className: `iiid-choice__opt${option.value === value ? ' is-on' : ''}`,
        onClick: () => onChange(option.value),
        onKeyDown: (e) => {
          if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); move(index, 1); }
          if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); move(index, -1); }
        },
      }, variant === 'radio' ? h('span', {className: 'iiid-radio-dot', 'aria-hidden': 'true'}) : null, option.content ?? option.label)));
  }

  function Tabs({label, tabs, value, onChange}) {
    return h('div', {role: 'tablist', 'aria-label': label, className: 'iiid-tabs'},
      tabs.map((tab) => h('button', {key: tab.id, type: 'button', role: 'tab', 'aria-selected': tab.id === value ? 'true' : 'false',
        className: `iiid-tab${tab.id === value ? ' is-on' : ''}`, onClick: () => onChange(tab.id)}, tab.label)));
  }

  function Checkbox({label, checked, onChange, disabled, children}) {
    return h('label', {className: `iiid-check${disabled ? ' is-disabled' : ''}`},
      h('input', {type: 'checkbox', checked: !!checked, disabled, 'aria-label': label, onChange: (e) => onChange(e.target.checked)}),
      h('span', null, children ?? label));
  }

  function Chip({tone = 'neutral', children, title}) {
    return h('span', {className: `iiid-chip iiid-chip--${tone}`, title}, children);
  }

  function Alert({tone = 'alert', title, children, role}) {
    return h('div', {className: `iiid-banner iiid-banner--${tone}`, role: role || (tone === 'alert' ? 'alert' : 'status')},
      title ? h('strong', {className: 'iiid-banner__title'}, title) : null, children);
  }

  function Skeleton({rows = 4}) {
    return h('div', {className: 'iiid-skeleton', 'aria-busy': 'true', 'aria-label': 'Loading'},
      Array.from({length: rows}, (_, i) => h('div', {key: i, className: 'iiid-skeleton__row'})));
  }

  const STEP_GLYPH = {pending: '○', running: '◐', done: '✓', failed: '✕', skipped: '–'};

  function StepList({steps}) {
    return h('ol', {className: 'iiid-steps'}, (steps || []).map((step, i) => h('li', {key: step.id || i, className: `iiid-step is-${step.state}`},
      h('span', {className: 'iiid-step__icon', 'aria-hidden': 'true'}, STEP_GLYPH[step.state] || '○'),
      h('span', {className: 'iiid-step__label'}, step.label),
      h('span', {className: 'iiid-step__state'}, step.state),
      step.detail ? h('div', {className: 'iiid-step__detail'}, step.detail) : null)));
  }

  function CopyButton({text}) {
    const [copied, setCopied] = useState(false);
    useEffect(() => {
      if (!copied) return undefined;
      const t = setTimeout(() => setCopied(false), 1500);
      return () => clearTimeout(t);
    }, [copied]);
    const copy = () => {
      try {
        const p = globalThis.navigator && globalThis.navigator.clipboard && globalThis.navigator.clipboard.writeText(text);
        if (p && p.catch) p.catch(() => {});
      } catch {
        // ignored: copying is best effort
      }
      setCopied(true);
    };
    return h(Button, {onClick: copy, variant: 'ghost'}, copied ? 'Copied' : 'Copy');
  }

  function CodeLine({text}) {
    return h('div', {className: 'iiid-codeline'}, h('code', null, text), h(CopyButton, {text}));
  }

  /** Split (two numbered columns) or Unified (+/− markers); long unchanged runs collapse. */
  function DiffView({left, right, leftCaption, rightCaption, narrow, editor}) {
    const [layout, setLayout] = useState(narrow ? 'unified' : 'split');
    const [expanded, setExpanded] = useState({});
    const rows = React.useMemo(() => lineDiff(left ?? '', right ?? ''), [left, right]);
    const blocks = [];
    let i = 0;
    while (i < rows.length) {
      if (rows[i].kind === 'same') {
        let j = i;
        while (j < rows.length && rows[j].kind === 'same') j += 1;
        const run = rows.slice(i, j);
        if (run.length > 6 && !expanded[i]) {
          const head = i === 0 ? [] : run.slice(0, 3);
          const tail = j === rows.length ? [] : run.slice(-3);
          const hidden = run.length - head.length - tail.length;
          if (hidden > 0) {
            blocks.push(...head);
            blocks.push({kind: 'fold', at: i, hidden});
            blocks.push(...tail);
          } else blocks.push(...run);
        } else blocks.push(...run);
        i = j;
      } else { blocks.push(rows[i]); i += 1; }
    }
    const fold = (row) => h('button', {key: `fold-${row.at}`, type: 'button', className: 'iiid-diff__fold',
      onClick: () => setExpanded({...expanded, [row.at]: true})}, `… ${row.hidden} unchanged lines`);
    const cell = (no, text, cls) => [h('span', {className: 'iiid-diff__no', key: 'n'}, no ?? ''), h('span', {className: `iiid-diff__text ${cls}`, key: 't'}, text ?? '')];
    let body;
    const sideClass = (text, kind, mark) => (text == null ? 'is-none' : (kind === 'same' ? '' : mark));
    const pairRow = (row, k) => {
      if (row.kind === 'fold') return h('div', {key: k, className: 'iiid-diff__foldrow'}, fold(row));
      return h('div', {key: k, className: `iiid-diff__row iiid-diff__row--pair is-${row.kind}`},
        h('div', {className: 'iiid-diff__half'}, cell(row.leftNo, row.left, sideClass(row.left, row.kind, 'is-del'))),
        h('div', {className: 'iiid-diff__half'}, cell(row.rightNo, row.right, sideClass(row.right, row.kind, 'is-add'))));
    };
    const leftRow = (row, k) => {
      if (row.kind === 'fold') return fold(row);
      return h('div', {key: k, className: `iiid-diff__row is-${row.kind}`}, cell(row.leftNo, row.left, sideClass(row.left, row.kind, 'is-del')));
    };
    if (layout === 'split') {
      const captions = [h('div', {key: 'cl', className: 'iiid-diff__caption'}, leftCaption), h('div', {key: 'cr', className: 'iiid-diff__caption'}, rightCaption)];
      body = editor
        ? h('div', {className: 'iiid-diff__split iiid-diff__split--editor'}, captions,
          h('div', {className: 'iiid-diff__col'}, blocks.filter((r) => r.kind === 'fold' || r.left != null).map(leftRow)),
          h('div', {className: 'iiid-diff__col'}, editor))
        : h('div', {className: 'iiid-diff__split'}, captions, blocks.map(pairRow));
    } else {
      const lines = [];
      blocks.forEach((row, k) => {
        if (row.kind === 'fold') { lines.push(fold(row)); return; }
        if (row.kind === 'same') lines.push(h('div', {key: `${k}s`, className: 'iiid-diff__uline'}, h('span', {className: 'iiid-diff__mark'}, ' '), row.left));
        if (row.left != null && row.kind !== 'same') lines.push(h('div', {key: `${k}d`, className: 'iiid-diff__uline is-del'}, h('span', {className: 'iiid-diff__mark'}, '−'), row.left));
        if (row.right != null && row.kind !== 'same') lines.push(h('div', {key: `${k}a`, className: 'iiid-diff__uline is-add'}, h('span', {className: 'iiid-diff__mark'}, '+'), row.right));
      });
      body = h('div', {className: 'iiid-diff__unified'},
        h('div', {className: 'iiid-diff__caption'}, `${leftCaption} → ${rightCaption}`),
        editor ? editor : (lines.length ? lines : h('div', {className: 'iiid-muted'}, 'No differences.')));
    }
    return h('div', {className: 'iiid-diff'},
      h('div', {className: 'iiid-diff__bar'}, h(Choice, {label: 'Diff layout', value: layout, onChange: setLayout,
        options: [{value: 'split', label: 'Split'}, {value: 'unified', label: 'Unified'}]})),
      body);
  }

  function DiffDialog({open, onClose, title, note, left, right, leftCaption, rightCaption, narrow}) {
    return h(Dialog, {open, onClose, title, wide: true, footer: h(Button, {onClick: onClose}, 'Close')},
      note ? h('p', {className: 'iiid-muted'}, note) : null,
      h(DiffView, {left, right, leftCaption, rightCaption, narrow}));
  }

  /**
   * A rejection told once, in people's words (`humanError`): one sentence, an optional action
   * button, and the worker's own text folded under Details.
   */
  function ErrorNote({error, context, onAction, title}) {
    if (!error) return null;
    const said = humanError(error, context);
    return h('div', {className: 'iiid-banner iiid-banner--alert iiid-errornote', role: 'alert'},
      h('div', {className: 'iiid-errornote__line'},
        title ? h('strong', {className: 'iiid-banner__title'}, title, ' ') : null,
        h('span', {className: 'iiid-errornote__sentence'}, said.sentence),
        said.action && onAction ? h(Button, {onClick: () => onAction(said.action)}, said.actionLabel) : null),
      h('details', {className: 'iiid-errornote__details'}, h('summary', null, 'Details'),
        h('pre', {className: 'iiid-errornote__raw'}, cleanError(error))));
  }

  function Confirm({open, title, text, confirmLabel, onConfirm, onCancel, danger}) {
    return h(Dialog, {open, onClose: onCancel, title,
      footer: [h(Button, {key: 'c', onClick: onCancel}, 'Cancel'), h(Button, {key: 'ok', variant: danger ? 'danger' : 'primary', onClick: onConfirm}, confirmLabel)]},
    h('p', null, text));
  }

  /**
   * Edit / Split / Preview: the editor stays mounted (hidden in Preview) so its undo history
   * survives; in Split a draggable separator (also ArrowLeft / ArrowRight) sets the ratio, which
   * `onRatio` persists once the drag ends.
   */
  function SplitLayout({mode, ratio, onRatio, editor, preview}) {
    const container = useRef(null);
    const [dragging, setDragging] = useState(null);
    const shown = clampRatio(dragging ?? ratio);
    const fromEvent = (e) => {
      const rect = container.current ? container.current.getBoundingClientRect() : null;
      return rect ? ratioFromPointer(e.clientX, rect.left, rect.width) : shown;
    };
    const separator = h('div', {
      key: 'sep', role: 'separator', tabIndex: 0, className: `iiid-split__handle${dragging != null ? ' is-dragging' : ''}`,
      'aria-orientation': 'vertical', 'aria-label': 'Resize editor and preview', 'aria-valuemin': 20, 'aria-valuemax': 80,
      'aria-valuenow': Math.round(shown * 100),
      onPointerDown: (e) => { e.preventDefault(); if (e.currentTarget.setPointerCapture) e.currentTarget.setPointerCapture(e.pointerId); setDragging(fromEvent(e)); },
      onPointerMove: (e) => { if (dragging != null) setDragging(fromEvent(e)); },
      onPointerUp: (e) => { if (dragging != null) { const next = fromEvent(e); setDragging(null); onRatio(next); } },
      onPointerCancel: () => setDragging(null),
      onKeyDown: (e) => {
        const step = e.key === 'ArrowLeft' ? -0.05 : (e.key === 'ArrowRight' ? 0.05 : 0);
        if (step) { e.preventDefault(); onRatio(clampRatio(shown + step)); }
      },
    });
    return h('div', {className: `iiid-split iiid-split--${mode}`, ref: container,
      style: mode === 'split' ? {gridTemplateColumns: `minmax(0, ${shown}fr) 8px minmax(0, ${1 - shown}fr)`} : undefined},
    h('div', {key: 'edit', className: 'iiid-split__edit', hidden: mode === 'preview'}, editor),
    mode === 'split' ? separator : null,
    mode !== 'edit' ? h('div', {key: 'preview', className: 'iiid-split__preview'}, preview) : null);
  }

  /** Subscribe to one of the worker's trigger types for the life of a component (§2.7). */
  function useSubscription(triggerType, topic, subscriber, handler, active = true) {
    const ref = useRef(handler);
    ref.current = handler;
    useEffect(() => {
      if (!active || !host || !host.iii || typeof host.iii.on !== 'function') return undefined;
      subscriberCounter += 1;
      const id = subscriberId(topic, subscriber, subscriberCounter);
      let off = null;
      let offTrigger = null;
      try {
        off = host.iii.on(id, (payload) => ref.current(payload));
        offTrigger = host.iii.registerTrigger({type: triggerType, function_id: `${id}::${host.iii.browserId}`, config: {}});
      } catch (error) {
        console.warn(`[iii-directory] subscription ${id} unavailable: ${error}`);
      }
      return () => {
        try { if (typeof offTrigger === 'function') offTrigger(); } catch { /* already gone */ }
        try { if (typeof off === 'function') off(); } catch { /* already gone */ }
      };
    }, [triggerType, topic, subscriber, active]);
  }

  /** A function that runs `fn` once, 250 ms after the last of a burst of calls. */
  function useCoalesced(fn, delay = 250) {
    const ref = useRef(fn);
    ref.current = fn;
    const timer = useRef(null);
    useEffect(() => () => clearTimeout(timer.current), []);
    return useCallback(() => {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => ref.current(), delay);
    }, [delay]);
  }

  const rawCall = (functionId, payload, timeoutMs) => host.iii.trigger(functionId, payload ?? {}, timeoutMs ? {timeoutMs} : undefined);
  // Every answer proves the worker reachable; a call the engine cannot route starts the probe.
  const reach = createReachability(() => rawCall('directory::kits::list', {}, 10000));
  const call = (functionId, payload, timeoutMs) => rawCall(functionId, payload, timeoutMs).then((res) => { reach.markUp(); return res; }, (error) => {
    if (transportProblem(error) === 'unreachable' && String(functionId).startsWith('directory::')) reach.markDown();
    throw error;
  });
  /** `{down, nextAt, attempt}` of the worker's reachability, re-rendering on change. */
  function useReachability() {
    const [state, setState] = useState(reach.state);
    useEffect(() => reach.subscribe(setState), []);
    return state;
  }

  return {h, React, host, Boundary, Icon, Button, TextInput, Dialog, Markdown, Editor, Choice, Tabs, Checkbox, Chip, Alert, Skeleton,
    StepList, CopyButton, CodeLine, DiffView, DiffDialog, Confirm, ErrorNote, SplitLayout, useSubscription, useCoalesced, call, reach, useReachability};
}
