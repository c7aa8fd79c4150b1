// ESLint for src, tests and the node scripts: the recommended rules, a few type-aware
// ones that catch real bugs (promises nobody awaits), and the one-way dependencies
// between src/ folders that STYLE.md describes. No formatting rules.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Globals of Node scripts (scripts/*.mjs and the extensionless bench/soak scripts). */
const NODE_GLOBALS = Object.fromEntries(
  [
    'process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval',
    'clearInterval', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'structuredClone', 'fetch', 'Response', 'FormData', 'Blob',
    'Request', 'Headers', 'AbortController', 'AbortSignal', 'TextEncoder', 'TextDecoder', 'performance', 'WebSocket',
    'EventSource', 'globalThis',
  ].map((name) => [name, 'readonly']),
);

/** Globals of the panel's browser modules (src/panel/static/*.js). */
const BROWSER_GLOBALS = Object.fromEntries(
  [
    'window', 'document', 'console', 'fetch', 'URL', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval',
    'clearInterval', 'EventSource', 'AbortController', 'location', 'history', 'navigator', 'localStorage',
    'sessionStorage', 'Node', 'HTMLElement', 'Event', 'CustomEvent', 'FormData', 'requestAnimationFrame', 'structuredClone',
    'WebSocket', 'TextEncoder',
  ].map((name) => [name, 'readonly']),
);

const SRC_FOLDERS = ['kernel', 'edge', 'settings', 'tunnel', 'config', 'config-edit', 'ssh-config', 'supervisor', 'check', 'api', 'daemon', 'panel', 'cli', 'proxy'];

/**
 * One `files` block per folder of src/: the folders (and main.ts) it may not import.
 * Layers: kernel (result, unreachable, log entry, version) under everything; edge (the
 * HTTP edge: listeners, host and origin rules, the identity rule, tokens) and settings
 * (flags and environment, default paths) above it; config, tunnel → supervisor → api →
 * daemon → main; check reads config and tunnel; cli uses the API's types (and its SSE
 * reader: the client side of the wire format); the panel reads config and tunnel and
 * talks to the daemon over HTTP like the CLI; the proxy knows only its config schema.
 */
function layer(folder, forbidden, extra = {}) {
  const patterns = forbidden.map((f) => ({
    // From src/<folder>/ and from one folder deeper (src/cli/commands/).
    group: f === 'main' ? ['../main.js', '../../main.js'] : [`../${f}/*`, `../../${f}/*`, ...(extra.allow?.[f] ?? []).flatMap((p) => [`!${p}`, `!../${p}`])],
    message: `src/${folder} may not import src/${f}: dependencies run one way (see eslint.config.js and STYLE.md).`,
  }));
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...patterns, ...(extra.patterns ?? [])] }],
    },
  };
}
// Every folder may use the kernel.
const others = (...allowed) => [...SRC_FOLDERS.filter((f) => f !== 'kernel' && !allowed.includes(f)), 'main'];

/**
 * src/proxy/ by the stages of a request, lowest first: each folder may import the ones
 * before it, never one after it. observe/ records (log, series, usage, Server-Timing);
 * clients/ knows callers' keys and limits; request/ reads what a client sent (body,
 * encoding, JSON, multipart, CORS, request id); relay/ talks to a provider and carries
 * its answer back (upstream client, headers, key scrubbing, SSE framing); translate/
 * turns one API's format into another's on the way; route/ picks the targets of a
 * model and walks them (providers, aliases, rests, fallback); endpoints/ answers each
 * kind of /v1 route with those stages. Above them, outside the folders: the Hono
 * sub-app, the dispatch of the route table, the standalone listener and the index.
 * errors.ts, deps.ts and routes.ts (the route table) sit below every stage but observe/,
 * which imports nothing else of src/proxy.
 */
const PROXY_STAGES = ['observe', 'clients', 'request', 'relay', 'translate', 'route', 'endpoints'];
const PROXY_TOP = ['app.js', 'server.js', 'index.js', 'dispatch.js', 'in-memory-http.js'];

function proxyStages() {
  // The proxy knows nothing of the tunnel side, from any depth of src/proxy/.
  const outside = others('proxy', 'edge', 'config').map((f) => ({
    group: f === 'main' ? ['../main.js', '../../main.js', '../../../main.js'] : [`../${f}/*`, `../../${f}/*`, `../../../${f}/*`],
    message: `src/proxy may not import src/${f}: dependencies run one way (see eslint.config.js and STYLE.md).`,
  }));
  // Its own section of the config: proxy-schema.ts, and the forward_headers and clients fields it uses.
  const own = ['proxy-schema.js', 'forward-headers.js', 'proxy-clients.js'];
  const config = {
    group: ['../config/*', '../../config/*', ...own.flatMap((f) => [`!../config/${f}`, `!../../config/${f}`])],
    message: 'src/proxy knows only its own config schema; inject the rest.',
  };
  const rule = (files, extra) => ({
    files,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...outside, config, ...extra] }] },
  });
  const top = { group: PROXY_TOP.map((f) => `../${f}`), message: 'The stages of src/proxy are composed by app.ts, dispatch.ts and server.ts; they do not import them.' };
  return [
    rule(['src/proxy/**/*.ts'], []),
    // An index or a lookup that may miss says what happens when it does, instead of `!`.
    { files: ['src/proxy/**/*.ts'], rules: { '@typescript-eslint/no-non-null-assertion': 'error' } },
    rule(['src/proxy/errors.ts', 'src/proxy/deps.ts', 'src/proxy/routes.ts'], [
      {
        group: [...PROXY_STAGES.filter((s) => s !== 'observe').map((s) => `./${s}/*`), ...PROXY_TOP.map((f) => `./${f}`)],
        message: 'errors.ts, deps.ts and routes.ts sit below every stage of src/proxy but observe/.',
      },
    ]),
    ...PROXY_STAGES.map((stage, i) => {
      const later = PROXY_STAGES.slice(i + 1);
      const patterns = [top];
      // The ground floor: what the request's record and series need, nothing of the proxy's answers.
      if (stage === 'observe') patterns.push({ group: ['../*.js'], message: 'src/proxy/observe/ is the ground floor: it imports nothing else of src/proxy.' });
      if (later.length > 0) {
        patterns.push({
          group: later.map((s) => `../${s}/*`),
          message: `src/proxy/${stage}/ may not import ${later.map((s) => `${s}/`).join(', ')}: the stages depend one way (${PROXY_STAGES.join(' → ')}, each on those before it).`,
        });
      }
      return rule([`src/proxy/${stage}/**/*.ts`], patterns);
    }),
  ];
}

/**
 * src/supervisor/ by concept, lowest first: each sub-folder may import the ones before it
 * (and the root's vocabulary: types, backoff, clock, spacing), never one after it.
 * state/ is the state dir; process/ the ssh children; health/ probes and health checks;
 * effects/ the one shell mechanism of both lifecycles; connection/ a shared master and
 * its forwards; plan/ what ssh -G makes of a tunnel; tunnel/ one tunnel, riding on all
 * of them. supervisor.ts at the root composes them.
 */
const SUPERVISOR_ORDER = ['state', 'process', 'health', 'effects', 'connection', 'plan', 'tunnel'];

function supervisorOrder() {
  return SUPERVISOR_ORDER.map((folder, i) => {
    const later = SUPERVISOR_ORDER.slice(i + 1);
    return {
      files: [`src/supervisor/${folder}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: later.length === 0 ? [{ group: ['../supervisor.js', '../supervisor-start.js'], message: 'supervisor.ts composes the sub-folders; they do not import it.' }] : [
              { group: later.map((f) => `../${f}/*`), message: `src/supervisor/${folder}/ may not import ${later.map((f) => `${f}/`).join(', ')}: the concepts depend one way (${SUPERVISOR_ORDER.join(' → ')}, each on those before it).` },
              { group: ['../supervisor.js', '../supervisor-start.js'], message: 'supervisor.ts composes the sub-folders; they do not import it.' },
            ],
          },
        ],
      },
    };
  });
}

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'test-artifacts/', 'scripts/.portkey/', 'coverage/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Type-aware, and each one a real bug when it fires.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // TypeScript itself reports undefined names.
      'no-undef': 'off',
    },
  },
  {
    // Tests read JSON bodies of many shapes field by field; their expects are the check.
    files: ['tests/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      // Matching control characters is deliberate here (ANSI colours, NULs in configs, terminal output).
      'no-control-regex': 'off',
      // Best-effort cleanup (kill, unlink, close) ignores its failure on purpose.
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Literal spaces in expected YAML and table output read as what they match.
      'no-regex-spaces': 'off',
    },
  },
  {
    files: ['scripts/**/*.mjs', 'scripts/bench-*', 'scripts/soak', 'scripts/demo', 'docker/**/*.mjs', 'eslint.config.js'],
    ignores: ['scripts/**/*.ts'],
    languageOptions: { sourceType: 'module', globals: NODE_GLOBALS },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
  {
    files: ['src/panel/static/**/*.js'],
    languageOptions: { sourceType: 'module', globals: BROWSER_GLOBALS },
  },
  layer('kernel', others('kernel')),
  layer('edge', others('edge', 'kernel')),
  layer('settings', others('settings', 'kernel', 'edge', 'tunnel')),
  layer('tunnel', others('tunnel', 'kernel')),
  layer('config', others('config', 'tunnel')),
  // What ssh makes of the user's ssh config (ssh -G, the daemon's own -F file): beside config and tunnel.
  layer('ssh-config', others('ssh-config')),
  layer('supervisor', others('supervisor', 'settings', 'config', 'tunnel', 'ssh-config')),
  layer('check', others('check', 'settings', 'config', 'tunnel', 'ssh-config')),
  // Editing the config file, shared by the panel and the daemon's /config routes.
  layer('config-edit', others('config-edit', 'config', 'tunnel')),
  layer('api', others('api', 'edge', 'config', 'config-edit', 'tunnel', 'supervisor')),
  layer('daemon', ['panel', 'cli', 'check', 'main']),
  layer('panel', others('panel', 'edge', 'settings', 'config', 'config-edit', 'tunnel', 'api'), {
    // The panel is a client of the daemon's HTTP API: its wire types, and its SSE reader.
    patterns: [{ group: ['../api/*', '!../api/sse-reader.js'], allowTypeImports: true, message: 'src/panel takes only types from src/api (and its SSE reader).' }],
  }),
  layer('cli', others('cli', 'edge', 'settings', 'api'), {
    // `tunnel-cli hash` computes the reference's hash offline, with the one hash function,
    // and checks its arguments with the config file's own field rules (pure modules).
    allow: { tunnel: ['../tunnel/hash.js', '../tunnel/endpoint.js', '../tunnel/spec.js'], config: ['../config/remote-host.js'] },
    // The API's schemas too (zod only), with which it checks the daemon's answers.
    patterns: [{ group: ['../api/*', '../../api/*', '!../api/sse-reader.js', '!../api/schemas.js', '!../../api/schemas.js'], allowTypeImports: true, message: 'tunnel-cli takes only types from src/api (and the SSE reader and answer schemas).' }],
  }),
  ...proxyStages(),
  ...supervisorOrder(),
);
