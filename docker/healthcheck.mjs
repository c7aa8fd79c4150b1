// Container healthcheck: `node healthcheck.mjs` asks the daemon's GET /health,
// `node healthcheck.mjs panel` asks the panel's page. Exit 0 healthy, 1 not.
// The address comes from the same variables the services listen on, read by the
// daemon's own settings code (TUNNEL_API_LISTEN, else API_PORT, else 127.0.0.1:8080).
import { daemonUrl } from '/app/dist/settings/settings.js';

const target = process.argv[2] === 'panel' ? 'panel' : 'api';
const listen = target === 'panel' ? process.env.PANEL_LISTEN || '127.0.0.1:5000' : new URL(daemonUrl(process.env)).host;

// A wildcard bind address is reached over loopback.
const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(listen);
if (!m) {
  console.error(`healthcheck: cannot read the listen address "${listen}"`);
  process.exit(1);
}
let host = m[1];
if (host === '0.0.0.0') host = '127.0.0.1';
if (host === '[::]') host = '[::1]';
const url = `http://${host}:${m[2]}${target === 'panel' ? '/' : '/health'}`;

try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (target === 'api') {
    const body = await res.json();
    if (res.status !== 200 || body?.ok !== true) throw new Error(`status ${res.status}`);
  } else if (res.status >= 500) {
    throw new Error(`status ${res.status}`);
  }
  process.exit(0);
} catch (e) {
  console.error(`healthcheck: ${url}: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
