// The page's exports as one namespace for the unit tests: page.js's own, every pure rule
// (composed as page.js's setup composes them for the UI modules) and the UI modules' factories.
// The modules import nothing, so node imports each file directly.
import * as pageJs from '../../../src/iii_directory/ui/dist/page.js';
import * as rules from '../../../src/iii_directory/ui/dist/rules.js';
import * as frontmatter from '../../../src/iii_directory/ui/dist/frontmatter.js';
import * as diff from '../../../src/iii_directory/ui/dist/diff.js';
import * as markdown from '../../../src/iii_directory/ui/dist/markdown.js';
import * as plans from '../../../src/iii_directory/ui/dist/plans.js';
import * as entries from '../../../src/iii_directory/ui/dist/entries.js';
import * as ui from '../../../src/iii_directory/ui/dist/ui.js';
import * as list from '../../../src/iii_directory/ui/dist/list.js';
import * as browser from '../../../src/iii_directory/ui/dist/browser.js';
import * as kits from '../../../src/iii_directory/ui/dist/kits.js';
import * as cards from '../../../src/iii_directory/ui/dist/cards.js';

export const modules = {rules, frontmatter, diff, markdown, plans, entries, ui, list, browser, kits, cards};
export const composed = pageJs.composeRules(modules);
export const page = {...composed, ...ui, ...list, ...browser, ...kits, ...cards, ...pageJs};
export const setup = pageJs.default;
