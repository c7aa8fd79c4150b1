/** Starts a mock upstream and the proxy in front of it, with a config the test can change live. */
import http from 'node:http';
import net from 'node:net';
import { proxySchema, type ProxyConfig } from '../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyDeps } from '../../src/proxy/index.js';
import { startDaemonListener } from './daemon-listener.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';

export interface Harness {
  mock: MockUpstream;
  proxy: { port: number; close(): Promise<void> };
  /** `http://127.0.0.1:<proxy port>` */
  url: string;
  logs: Record<string, unknown>[];
  /** Replaces the live config (parsed by the real schema, as the loader would). */
  setConfig(raw: unknown): void;
  close(): Promise<void>;
}

/** Which listener serves /v1: `tunnel-manager proxy`'s, or the daemon's TCP listener. */
export type Listener = 'proxy' | 'daemon';

export async function startHarness(
  raw: (mockBaseUrl: string) => unknown,
  extra: Omit<ProxyDeps, 'getConfig' | 'log'> = {},
  listener: Listener = 'proxy',
): Promise<Harness> {
  const mock = await startMockUpstream();
  let config: ProxyConfig | null = parse(raw(mock.baseUrl));
  const logs: Record<string, unknown>[] = [];
  const deps: ProxyDeps = { getConfig: () => config, log: (e) => logs.push(e), ...extra };
  const proxy = listener === 'proxy' ? await startProxyServer({ host: '127.0.0.1', port: 0, deps }) : await startDaemonListener(deps);
  return {
    mock,
    proxy,
    url: `http://127.0.0.1:${proxy.port}`,
    logs,
    setConfig(next) {
      config = next === null ? null : parse(next);
    },
    async close() {
      await proxy.close();
      await mock.close();
    },
  };
}

function parse(raw: unknown): ProxyConfig {
  const r = proxySchema.safeParse(raw);
  if (!r.success) throw new Error(`bad test config: ${r.error.message}`);
  return r.data;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** One plain HTTP exchange over a fresh connection (no client library between the test and the proxy). */
export function call(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // The path goes out as written (a URL string would have its dot segments resolved).
    const req = http.request(
      url,
      { path: options.path ?? '/v1/chat/completions', method: options.method ?? 'POST', headers: { 'content-type': 'application/json', ...options.headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = null;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const chat = (model: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

/** A streamed exchange the test reads piece by piece and can abandon at any point. */
export interface OpenExchange {
  /** Resolves with the status and headers once they arrive. */
  head: Promise<{ status: number; headers: http.IncomingHttpHeaders }>;
  /** Everything received so far. */
  text(): string;
  /** Resolves when the received text satisfies `test`. */
  until(test: (text: string) => boolean): Promise<string>;
  /** Resolves when the response ended (`'end'`) or was cut (`'cut'`). */
  done: Promise<'end' | 'cut'>;
  /** Closes the connection from the client side, as a user pressing Ctrl-C would. */
  abort(): void;
}

export function open(url: string, body: string, headers: Record<string, string> = {}, path = '/v1/chat/completions'): OpenExchange {
  let received = '';
  const watchers: (() => void)[] = [];
  let onHead!: (h: { status: number; headers: http.IncomingHttpHeaders }) => void;
  const head = new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve) => (onHead = resolve));
  let onDone!: (how: 'end' | 'cut') => void;
  const done = new Promise<'end' | 'cut'>((resolve) => (onDone = resolve));
  const req = http.request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false }, (res) => {
    onHead({ status: res.statusCode ?? 0, headers: res.headers });
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      received += c;
      watchers.splice(0).forEach((w) => w());
    });
    res.on('end', () => onDone('end'));
    res.on('error', () => onDone('cut'));
    res.on('close', () => onDone(res.complete ? 'end' : 'cut'));
  });
  req.on('error', () => onDone('cut'));
  req.end(body);
  return {
    head,
    text: () => received,
    until(test) {
      return new Promise((resolve) => {
        const check = (): void => {
          if (test(received)) resolve(received);
          else watchers.push(check);
        };
        check();
      });
    },
    done,
    abort: () => req.destroy(),
  };
}

/** Resolves when `test()` holds, checking every 10 ms (for log entries written just after a response). */
export async function eventually(test: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`still not true after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Sends `raw` bytes on a fresh connection; resolves with what came back before the
 * server closed it. `halfClose`: end the sending side at once (a request the server
 * answers at once); false keeps it open, as a client waiting for a relayed answer does.
 */
export function rawExchange(port: number, raw: string, halfClose = true): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString('utf8')));
    s.on('error', reject);
    s.on('close', () => {
      const cut = got.indexOf('\r\n\r\n');
      resolve({ status: Number(got.slice(9, 12)), headers: got.slice(0, cut).toLowerCase(), body: got.slice(cut + 4) });
    });
    if (halfClose) s.end(raw);
    else s.write(raw);
  });
}
