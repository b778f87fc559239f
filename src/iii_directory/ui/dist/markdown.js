// iii-directory — the preview's own markdown renderer (safe links, a fixed set of tags) (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (no window, document or storage),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

/** Link targets the preview keeps clickable: http(s), mailto, in-page anchors and relative paths. */
export function safeHref(url) {
  const href = String(url || '').trim();
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return null;
  return href || null;
}

/**
 * Inline markdown to nodes: `code`, **strong** / __strong__, *em* / _em_, [text](url). Everything
 * else stays text — HTML included, which the renderer prints as text and never parses.
 */
export function markdownInline(text) {
  const out = [];
  const source = String(text ?? '');
  const pattern = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|(?<![A-Za-z0-9])_([^_\s][^_]*?)_(?![A-Za-z0-9])|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
  let last = 0;
  let match;
  while ((match = pattern.exec(source)) !== null) {
    if (match.index > last) out.push({t: 'text', text: source.slice(last, match.index)});
    if (match[1]) out.push({t: 'code', text: match[2].replace(/^ (.*) $/, '$1')});
    else if (match[3] || match[4]) out.push({t: 'strong', c: markdownInline(match[3] || match[4])});
    else if (match[5] || match[6]) out.push({t: 'em', c: markdownInline(match[5] || match[6])});
    else {
      const href = safeHref(match[8]);
      out.push(href ? {t: 'a', href, c: markdownInline(match[7])} : {t: 'text', text: match[7]});
    }
    last = pattern.lastIndex;
  }
  if (last < source.length) out.push({t: 'text', text: source.slice(last)});
  return out;
}

export const tableCells = (line) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());

export const isTableRule = (line) => /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/.test(line) && line.includes('-');

/**
 * Block markdown to a node tree: ATX headings, fenced code, block quotes, bullet and numbered
 * lists (one level; indented lines continue an item), pipe tables with a rule line, thematic
 * breaks and paragraphs. The tree holds text only; the page turns it into elements.
 */
export function markdownBlocks(text) {
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let i = 0;
  const isBlank = (line) => line.trim() === '';
  const startsBlock = (line, next) => /^\s{0,3}(#{1,6}\s|```|~~~|>|[-*+]\s|\d{1,9}[.)]\s)/.test(line) || /^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)
    || (line.includes('|') && next !== undefined && isTableRule(next));
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) { i += 1; continue; }
    const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) { body.push(lines[i]); i += 1; }
      i += 1;
      blocks.push({t: 'pre', lang: fence[2] || '', text: body.join('\n')});
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) { blocks.push({t: `h${heading[1].length}`, c: markdownInline(heading[2])}); i += 1; continue; }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { blocks.push({t: 'hr'}); i += 1; continue; }
    if (/^\s{0,3}>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) { quoted.push(lines[i].replace(/^\s{0,3}>\s?/, '')); i += 1; }
      blocks.push({t: 'blockquote', c: markdownBlocks(quoted.join('\n'))});
      continue;
    }
    const item = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]);
      const items = [];
      while (i < lines.length) {
        const m = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const parts = [m[2]];
        i += 1;
        while (i < lines.length && !isBlank(lines[i]) && /^\s{2,}\S/.test(lines[i]) && !/^\s{0,3}([-*+]|\d{1,9}[.)])\s/.test(lines[i])) { parts.push(lines[i].trim()); i += 1; }
        items.push({t: 'li', c: markdownInline(parts.join(' '))});
        if (i < lines.length && isBlank(lines[i]) && i + 1 < lines.length && /^\s{0,3}([-*+]|\d{1,9}[.)])\s/.test(lines[i + 1])) i += 1;
      }
      const start = ordered ? Number.parseInt(item[1], 10) : 1;
      blocks.push(ordered ? {t: 'ol', start, c: items} : {t: 'ul', c: items});
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && isTableRule(lines[i + 1])) {
      const head = tableCells(line);
      const align = tableCells(lines[i + 1]).map((cell) => (cell.endsWith(':') ? (cell.startsWith(':') ? 'center' : 'right') : (cell.startsWith(':') ? 'left' : null)));
      i += 2;
      const rows = [];
      while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) { rows.push(tableCells(lines[i])); i += 1; }
      const cell = (tag, texts, k) => ({t: tag, align: align[k] || null, c: markdownInline(texts[k] ?? '')});
      blocks.push({t: 'table', c: [
        {t: 'thead', c: [{t: 'tr', c: head.map((_, k) => cell('th', head, k))}]},
        {t: 'tbody', c: rows.map((row) => ({t: 'tr', c: head.map((_, k) => cell('td', row, k))}))},
      ]});
      continue;
    }
    const para = [line.trim()];
    i += 1;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i], lines[i + 1])) { para.push(lines[i].trim()); i += 1; }
    blocks.push({t: 'p', c: markdownInline(para.join('\n'))});
  }
  return blocks;
}

export const MD_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'pre', 'blockquote', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  'hr', 'a', 'strong', 'em', 'code']);

/** The node tree as React elements: a fixed set of tags, text children only, safe hrefs. */
export function markdownElements(h, nodes) {
  return (nodes || []).map((node, key) => {
    if (node.t === 'text') return node.text;
    if (!MD_TAGS.has(node.t)) return null;
    if (node.t === 'hr') return h('hr', {key});
    if (node.t === 'code') return h('code', {key}, node.text);
    if (node.t === 'pre') return h('pre', {key, 'data-lang': node.lang || undefined}, h('code', null, node.text));
    if (node.t === 'a') return h('a', {key, href: node.href, target: '_blank', rel: 'noopener noreferrer'}, markdownElements(h, node.c));
    const props = {key};
    if (node.t === 'ol' && node.start !== 1) props.start = node.start;
    if ((node.t === 'th' || node.t === 'td') && node.align) props.style = {textAlign: node.align};
    return h(node.t, props, markdownElements(h, node.c));
  });
}

// ------------------------------------------------------------------ origins (§6)
