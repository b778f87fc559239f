// L1: the page's front-matter reader reads YAML block scalars (issue 36 item 5) and its writer
// keeps every byte it was not asked to change. The expected values are what PyYAML's safe_load
// returns for the same documents.
import {test} from 'node:test';
import assert from 'node:assert/strict';

import {page} from './page.mjs';

/** [front-matter lines, the value of `description`] */
const BLOCK_SCALARS = [
  ["description: |\n  Reviews code.\n  Keeps notes.\nname: R\n", "Reviews code.\nKeeps notes.\n"],
  ["description: >\n  Reviews code\n  carefully.\n\n  Second paragraph.\nname: R\n", "Reviews code carefully.\nSecond paragraph.\n"],
  ["description: |-\n  one\n  two\n\nname: R\n", "one\ntwo"],
  ["description: >-\n  folded\n  text\n", "folded text"],
  ["description: |+\n  kept\n\n\nname: R\n", "kept\n\n\n"],
  ["description: >+\n  kept\n\n", "kept\n\n"],
  ["description: |2\n    indented by four\n  two\n", "  indented by four\ntwo\n"],
  ["description: >2-\n   more\n  normal\n  joined\n", " more\nnormal joined"],
  ["description: |-2\n  x\n   y\n", "x\n y"],
  ["description: > # a comment\n  a\n    b more\n  c\n  d\n", "a\n  b more\nc d\n"],
  ["description: |\n\n  after a blank\n  line\n", "\nafter a blank\nline\n"],
  ["description: >\n  a\n\n\n  b\n", "a\n\nb\n"],
  ["description: |\n  \ttab kept\n  plain\n", "\ttab kept\nplain\n"],
  ["description: >\n  a\n  \tb\n  c\n", "a\n\tb\nc\n"],
  ["description: |\nname: R\n", ""],
  ["description: >-\n  Spans\n  lines\nskills:\n  - a\n  - b\n", "Spans lines"],
];

test('block scalars: literal, folded, chomping and indentation indicators read as YAML does', () => {
  for (const [inner, want] of BLOCK_SCALARS) {
    const parsed = page.parseFrontmatter(`---\n${inner}---\nBody\n`);
    assert.equal(parsed.fields.description, want, JSON.stringify(inner));
    if (inner.includes('name: R')) assert.equal(parsed.fields.name, 'R', JSON.stringify(inner));
    assert.equal(parsed.body, 'Body\n');
  }
  const lists = page.parseFrontmatter('---\ndescription: >-\n  Spans\n  lines\nskills:\n  - a\n  - b\n---\n');
  assert.deepEqual(lists.fields.skills, ['a', 'b']);
});

test('block scalars keep CRLF files readable', () => {
  const parsed = page.parseFrontmatter('---\r\nname: R\r\ndescription: |\r\n  one\r\n  two\r\n---\r\nBody\r\n');
  assert.equal(parsed.fields.description, 'one\ntwo\n');
  assert.equal(parsed.fields.name, 'R');
});

test('the writer keeps a block scalar it was not asked to change, byte for byte', () => {
  const text = '---\nname: Reviewer\ndescription: >-\n  Reviews code\n  carefully.\n\nmodel: m1 # pinned\n---\nYou review.\n';
  const renamed = page.setFrontmatterFields(text, {name: 'Critic'});
  assert.equal(renamed, text.replace('name: Reviewer', 'name: Critic'));
  assert.equal(page.parseFrontmatter(renamed).fields.description, 'Reviews code carefully.');
  const described = page.setFrontmatterFields(text, {description: 'Short.'});
  assert.equal(described, '---\nname: Reviewer\ndescription: Short.\n\nmodel: m1 # pinned\n---\nYou review.\n');
  assert.equal(page.setFrontmatterFields(text, {}), text);
});
