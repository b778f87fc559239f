// L1: the page's own markdown preview (issue 21 §9): headings, lists, code, links, emphasis and
// tables become a tree of known tags holding text only; raw HTML stays text and unsafe links drop.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

/** A tiny createElement that renders the element tree to HTML with text escaped, like React does. */
function h(tag, props, ...children) { return {tag, props: props || {}, children: children.flat(Infinity)}; }
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
function html(node) {
  if (node == null || node === false) return '';
  if (Array.isArray(node)) return node.map(html).join('');
  if (typeof node !== 'object') return esc(node);
  const attrs = Object.entries(node.props).filter(([k, v]) => k !== 'key' && v != null && typeof v !== 'object').map(([k, v]) => ` ${k}="${esc(v)}"`).join('');
  return `<${node.tag}${attrs}>${html(node.children)}</${node.tag}>`;
}
const render = (text) => html(page.markdownElements(h, page.markdownBlocks(text)));

test('headings, paragraphs, emphasis, code and links', () => {
  assert.equal(render('# Title\n\nSome *em* and **strong** and `code` and [a link](https://x.dev/a).'),
    '<h1>Title</h1><p>Some <em>em</em> and <strong>strong</strong> and <code>code</code> and <a href="https://x.dev/a" target="_blank" rel="noopener noreferrer">a link</a>.</p>');
  assert.equal(render('## Two ##\n### Three'), '<h2>Two</h2><h3>Three</h3>');
  assert.equal(render('snake_case_name stays'), '<p>snake_case_name stays</p>');
});

test('lists, fenced code, quotes, rules', () => {
  assert.equal(render('- one\n- two\n  continued\n\n1. first\n2. second'),
    '<ul><li>one</li><li>two continued</li></ul><ol><li>first</li><li>second</li></ol>');
  assert.equal(render('```js\nconst a = 1 < 2;\n```'), '<pre data-lang="js"><code>const a = 1 &lt; 2;</code></pre>');
  assert.equal(render('> quoted *text*'), '<blockquote><p>quoted <em>text</em></p></blockquote>');
  assert.equal(render('a\n\n---\n\nb'), '<p>a</p><hr></hr><p>b</p>');
});

test('pipe tables with alignment', () => {
  const out = render('| Name | Size |\n|:-----|-----:|\n| a | 1 |\n| b | 22 |');
  assert.ok(out.startsWith('<table><thead><tr><th>Name</th><th>Size</th></tr></thead><tbody><tr><td>a</td><td>1</td></tr>'), out);
  const tree = page.markdownBlocks('| A | B |\n| :-: | --: |\n| x | y |');
  assert.deepEqual(tree[0].c[0].c[0].c.map((c) => c.align), ['center', 'right']);
});

test('raw HTML is text, never markup', () => {
  const attacks = [
    '<img src=x onerror="alert(1)">', '<script>alert(1)</script>', '<a href="javascript:alert(1)">x</a>',
    '# <b onmouseover=alert(1)>hi</b>', '| <svg onload=alert(1)> | b |\n|---|---|\n| <iframe> | c |', '`<script>`', '- <style>*{}</style>',
  ];
  for (const attack of attacks) {
    const out = render(attack);
    assert.ok(!/<(img|script|svg|iframe|style|b)\b/i.test(out), `${attack} → ${out}`);
    assert.ok(out.includes('&lt;'), out);
  }
});

test('only safe link targets stay links', () => {
  for (const bad of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,<script>', 'vbscript:x', '//evil.example/x']) {
    const out = render(`[click](${bad})`);
    assert.ok(!out.includes('<a '), `${bad} → ${out}`);
    assert.ok(out.includes('click'));
  }
  for (const good of ['https://a.dev', 'http://a.dev/x', 'mailto:a@b.c', '#anchor', 'docs/other.md']) {
    assert.ok(render(`[ok](${good})`).includes(`href="${good}"`), good);
  }
  assert.equal(page.safeHref(' javascript:x'), null);
});

test('the element tree uses only the known tags', () => {
  const tree = page.markdownBlocks('# a\n\n<div>x</div>\n\n- b\n\n| c | d |\n|---|---|\n| e | f |\n\n```\ng\n```');
  const tags = new Set();
  const walk = (nodes) => nodes.forEach((n) => { tags.add(n.t); if (n.c) walk(n.c); });
  walk(tree);
  for (const tag of tags) assert.ok(['h1', 'p', 'text', 'ul', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'pre'].includes(tag), tag);
});
