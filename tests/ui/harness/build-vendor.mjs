// Bundle React and ReactDOM as ES modules for the harness import map (console-ui.md §5.7).
// One esbuild run with splitting: React lives in one shared chunk, so the page and the harness
// share one React instance exactly like the console. Skipped when .vendor/ is newer than the lock.
// `--production` writes React's production build (NODE_ENV=production, minified) to
// .vendor-production/ instead, for the page benchmarks (benchmarks/bench_ui_page.py --vendor).
import {build} from 'esbuild';
import {mkdirSync, statSync, writeFileSync, existsSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');
const out = join(here, production ? '.vendor-production' : '.vendor');
const lock = join(here, '..', 'package-lock.json');
const stamp = join(out, 'react.js');
if (existsSync(stamp) && existsSync(lock) && statSync(stamp).mtimeMs > statSync(lock).mtimeMs) {
  console.log('vendor modules are up to date');
  process.exit(0);
}
const entries = join(here, '.vendor-src');
mkdirSync(entries, {recursive: true});
const reactNames = ['Children', 'Component', 'Fragment', 'PureComponent', 'StrictMode', 'Suspense', 'cloneElement', 'createContext',
  'createElement', 'createRef', 'forwardRef', 'isValidElement', 'lazy', 'memo', 'startTransition', 'use', 'useCallback', 'useContext',
  'useDebugValue', 'useDeferredValue', 'useEffect', 'useId', 'useImperativeHandle', 'useInsertionEffect', 'useLayoutEffect', 'useMemo',
  'useReducer', 'useRef', 'useState', 'useSyncExternalStore', 'useTransition', 'version'];
const reexport = (spec, names) => `import m from '${spec}';\nexport default m;\nexport const {${names.join(', ')}} = m;\n`;
writeFileSync(join(entries, 'react.js'), reexport('react', reactNames));
writeFileSync(join(entries, 'react-dom.js'), reexport('react-dom', ['createPortal', 'flushSync', 'version']));
writeFileSync(join(entries, 'react-dom-client.js'), reexport('react-dom/client', ['createRoot', 'hydrateRoot']));
writeFileSync(join(entries, 'jsx-runtime.js'), reexport('react/jsx-runtime', ['Fragment', 'jsx', 'jsxs']));
await build({
  entryPoints: ['react', 'react-dom', 'react-dom-client', 'jsx-runtime'].map((n) => ({in: join(entries, `${n}.js`), out: n})),
  bundle: true, format: 'esm', splitting: true, outdir: out, absWorkingDir: join(here, '..'),
  define: {'process.env.NODE_ENV': production ? '"production"' : '"development"'}, minify: production, logLevel: 'warning',
});
console.log(`vendor modules written to ${out}`);
