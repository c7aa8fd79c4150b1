/** Starts a mock upstream and the proxy in front of it, with a config the test can change live. */
import http from 'node:http';
import { proxySchema, type ProxyConfig } from '../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../src/proxy/index.js';
import { startMockUpstream, type MockUpstream } from './mock-upstream.js';

export interface Harness {
  mock: MockUpstream;
  proxy: ProxyServer;
  /** `http://127.0.0.1:<proxy port>` */
  url: string;
  logs: Record<string, unknown>[];
  /** Replaces the live config (parsed by the real schema, as the loader would). */
  setConfig(raw: unknown): void;
  close(): Promise<void>;
}

export async function startHarness(
  raw: (mockBaseUrl: string) => unknown,
  extra: { env?: NodeJS.ProcessEnv; tunnelForLocalEndpoint?: (host: string, port: number) => { name: string; hash: string; status: string } | undefined; maxBodyBytes?: number } = {},
): Promise<Harness> {
  const mock = await startMockUpstream();
  let config: ProxyConfig | null = parse(raw(mock.baseUrl));
  const logs: Record<string, unknown>[] = [];
  const proxy = await startProxyServer({
    host: '127.0.0.1',
    port: 0,
    deps: { getConfig: () => config, log: (e) => logs.push(e), ...extra },
  });
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
    const req = http.request(
      `${url}${options.path ?? '/v1/chat/completions'}`,
      { method: options.method ?? 'POST', headers: { 'content-type': 'application/json', ...options.headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown = null;
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
