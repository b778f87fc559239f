// iii-directory — front matter: read (YAML block scalars as PyYAML), first heading, write (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (no window, document or storage),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

export const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*)|[ \t]*)$/;

export function unquote(value) {
  const v = value.trim();
  if (v.length >= 2 && v[0] === '"' && v[v.length - 1] === '"') {
    try { return JSON.parse(v); } catch { return v.slice(1, -1); }
  }
  if (v.length >= 2 && v[0] === "'" && v[v.length - 1] === "'") return v.slice(1, -1).replace(/''/g, "'");
  return v;
}

export function scalar(value) {
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v.startsWith('[') && v.endsWith(']')) {
    const inner = v.slice(1, -1).trim();
    return inner ? splitInline(inner).map(unquote) : [];
  }
  return unquote(v);
}

export function splitInline(text) {
  const out = [];
  let quote = null;
  let current = '';
  for (const ch of text) {
    if (quote) {
      current += ch;
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** Split text into lines that keep their line endings. */
export function rawLines(text) {
  const out = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\n') {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

export const stripEol = (line) => line.replace(/\r?\n$/, '');

export const BLOCK_HEADER = /^([|>])(?:([1-9])([+-])?|([+-])([1-9])?)?(?:[ \t]+#.*)?$/;

/**
 * The value of a YAML block scalar (YAML 1.2 §8.1–§8.2), or undefined when `header` is not one.
 * `header` is `|` (literal) or `>` (folded), then optionally a chomping indicator (`-` strip the
 * final line breaks, `+` keep them all, none: keep one) and an indentation indicator, in either
 * order; `lines` are the raw lines under the key. Literal keeps every line break; folded joins
 * neighbouring lines at the content indentation with a space, and keeps the breaks of empty and
 * more-indented lines. Why: `description: |` must show the text, never `|`.
 */
export function blockScalar(header, lines, parentIndent = 0) {
  const m = BLOCK_HEADER.exec(String(header).trim());
  if (!m) return undefined;
  const folded = m[1] === '>';
  const chomp = m[3] || m[4] || '';
  const texts = lines.map(stripEol);
  let indent = parentIndent + Number(m[2] || m[5] || 0);
  if (indent === parentIndent) {
    const first = texts.find((t) => t.trim() !== '');
    indent = first === undefined ? parentIndent + 1 : first.length - first.replace(/^ +/, '').length;
  }
  const body = [];
  for (const t of texts) {
    const lead = t.length - t.replace(/^ +/, '').length;
    if (t.trim() === '' && lead <= indent) body.push('');
    else if (lead < indent) break;
    else body.push(t.slice(indent));
  }
  let trailing = 0;
  while (body.length && body[body.length - 1] === '') { body.pop(); trailing += 1; }
  let out = '';
  let seen = false;
  let prevMore = false;
  let empties = 0;
  for (const line of body) {
    if (line === '') { empties += 1; continue; }
    const more = /^[ \t]/.test(line);
    if (!seen) out += '\n'.repeat(empties);
    else if (!folded || more || prevMore) out += '\n'.repeat(1 + empties);
    else out += empties ? '\n'.repeat(empties) : ' ';
    out += line;
    seen = true;
    prevMore = more;
    empties = 0;
  }
  if (chomp === '-') return out;
  if (chomp === '+') return out + '\n'.repeat((seen ? 1 : 0) + trailing + (seen ? 0 : empties));
  return seen ? `${out}\n` : '';
}

/**
 * A frontmatter block exists only when the text starts with `---\n` / `---\r\n`; it ends at the
 * first line that is exactly `---` (followed by a line break or the end of the text). Returns
 * `{hasBlock, fields, extents, lines, body, eol, head, tail}`: `lines` are the raw inner lines,
 * `extents[key] = {start, end}` line indexes into `lines` (end exclusive), `head` the opening fence
 * and `tail` the closing fence with its line break, so head + lines + tail + body === text.
 */
export function parseFrontmatter(text) {
  const source = typeof text === 'string' ? text : '';
  const eol = source.startsWith('---\r\n') ? '\r\n' : '\n';
  const empty = {hasBlock: false, fields: {}, extents: {}, lines: [], body: source, eol, head: '', tail: ''};
  if (!(source.startsWith('---\n') || source.startsWith('---\r\n'))) return empty;
  const lines = rawLines(source);
  let close = -1;
  for (let i = 1; i < lines.length; i += 1) {
    const bare = stripEol(lines[i]);
    if (bare === '---' && (lines[i] !== bare || i === lines.length - 1)) { close = i; break; }
  }
  if (close < 0) return empty;
  const inner = lines.slice(1, close);
  const fields = {};
  const extents = {};
  for (let i = 0; i < inner.length; i += 1) {
    const match = KEY_LINE.exec(stripEol(inner[i]));
    if (!match) continue;
    const key = match[1];
    let end = i + 1;
    while (end < inner.length && /^([ \t]|\r?\n$|$)/.test(inner[end]) && !KEY_LINE.test(stripEol(inner[end]))) end += 1;
    const block = match[2] === undefined ? undefined : blockScalar(match[2], inner.slice(i + 1, end));
    while (end > i + 1 && stripEol(inner[end - 1]).trim() === '') end -= 1;
    extents[key] = {start: i, end};
    const rest = match[2] === undefined ? '' : match[2];
    if (block !== undefined) {
      fields[key] = block;
    } else if (rest.trim() === '') {
      const items = [];
      for (let j = i + 1; j < end; j += 1) {
        const item = /^[ \t]*-[ \t]*(.*)$/.exec(stripEol(inner[j]));
        if (item) items.push(unquote(item[1]));
      }
      fields[key] = items.length ? items : (end > i + 1 ? [] : null);
    } else {
      fields[key] = scalar(rest);
    }
    i = end - 1;
  }
  return {
    hasBlock: true, fields, extents, lines: inner, eol,
    head: lines[0], tail: lines[close], body: lines.slice(close + 1).join(''),
  };
}

/**
 * The first markdown heading of a text outside fenced code blocks: `{index, text}` (`index` is
 * the line) or null. A skill without a front-matter title is titled by it, as the worker titles
 * it, so the Title field shows and edits that heading.
 */
export function firstHeading(text) {
  const lines = rawLines(String(text ?? ''));
  let fence = null;
  for (let i = 0; i < lines.length; i += 1) {
    const line = stripEol(lines[i]);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (marker) {
      if (!fence) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
      continue;
    }
    const heading = fence ? null : /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/.exec(line);
    if (heading && heading[1]) return {index: i, text: heading[1]};
  }
  return null;
}

/** `text` with its first heading's words replaced by `title`, its level and line ending kept. */
export function setFirstHeading(text, title) {
  const found = firstHeading(text);
  if (!found) return String(text ?? '');
  const lines = rawLines(String(text));
  const line = lines[found.index];
  const eol = line.slice(stripEol(line).length);
  const hashes = /^ {0,3}#{1,6}/.exec(line)[0];
  lines[found.index] = `${hashes} ${title}${eol}`;
  return lines.join('');
}

export const SPECIAL_START = '-?:,[]{}#&*!|>\'"%@`';

/** Whether a string may be written as a bare YAML scalar (§4.4). */
export function isBareScalar(value) {
  if (typeof value !== 'string' || value === '') return false;
  if (value !== value.trim()) return false;
  if (SPECIAL_START.includes(value[0])) return false;
  if (value.includes(': ') || value.includes(' #') || /[\r\n]/.test(value) || value.endsWith(':')) return false;
  if (['true', 'false', 'null', '~'].includes(value.toLowerCase())) return false;
  if (/^[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) || /^0[xo][0-9a-f]+$/i.test(value)) return false;
  return true;
}

export function yamlScalar(value) {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  const text = String(value);
  return isBareScalar(text) ? text : JSON.stringify(text);
}

export function renderField(key, value, eol) {
  if (Array.isArray(value)) return [`${key}:${eol}`, ...value.map((item) => `  - ${yamlScalar(item)}${eol}`)];
  return [`${key}: ${yamlScalar(value)}${eol}`];
}

export const removes = (value) => value == null || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * Rewrite only the changed keys of the frontmatter: a changed key's extent is replaced in place,
 * a null / empty value removes it, a new key is appended before the closing fence, and a text
 * without frontmatter gets a new block at the top. Every other byte stays as it was.
 * `changes.body` (a string), when given, replaces the body.
 */
export function setFrontmatterFields(text, changes) {
  const parsed = parseFrontmatter(text);
  const entries = Object.entries(changes || {}).filter(([key]) => key !== 'body');
  const body = typeof (changes || {}).body === 'string' ? changes.body : parsed.body;
  const {eol} = parsed;
  if (!parsed.hasBlock) {
    const lines = entries.filter(([, v]) => !removes(v)).flatMap(([k, v]) => renderField(k, v, eol));
    if (!lines.length) return body;
    return `---${eol}${lines.join('')}---${eol}${body}`;
  }
  const lines = parsed.lines.slice();
  const replacements = [];
  const appended = [];
  for (const [key, value] of entries) {
    const extent = parsed.extents[key];
    const rendered = removes(value) ? [] : renderField(key, value, eol);
    if (extent) replacements.push({extent, rendered});
    else if (rendered.length) appended.push(...rendered);
  }
  replacements.sort((a, b) => b.extent.start - a.extent.start);
  for (const {extent, rendered} of replacements) lines.splice(extent.start, extent.end - extent.start, ...rendered);
  if (appended.length && lines.length && !/\n$/.test(lines[lines.length - 1])) lines[lines.length - 1] += eol;
  return parsed.head + lines.join('') + appended.join('') + parsed.tail + body;
}
