import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../harness.js';

const body = JSON.stringify({ model: 'mock:x', messages: [{ role: 'user', content: 'hi' }] });

/** One request on `agent`; the local port of the connection it used, and the Keep-Alive header answered. */
function post(url: string, agent: http.Agent): Promise<{ status: number; localPort: number; keepAlive: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, localPort: req.socket!.localPort!, keepAlive: res.headers['keep-alive'] as string | undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Clients such as httpx keep an idle connection 5 s and do not read `Keep-Alive`: the
// listener must keep it longer, or a request sent as it closes meets the close.
describe.each(['proxy', 'daemon'] as const)('kept-alive client connections (%s listener)', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base } } }), {}, listener);
  });
  afterAll(async () => {
    await h.close();
  });

  it('announces 65 s and still serves a connection idle for longer than 5 s', async () => {
    // The agent's own idle limit is above the listener's old 5 s, like a client that never looks at the header.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: 30_000 });
    const first = await post(h.url, agent);
    expect(first.status).toBe(200);
    expect(first.keepAlive).toBe('timeout=65');
    await new Promise((r) => setTimeout(r, 5_500));
    const second = await post(h.url, agent);
    expect(second.status).toBe(200);
    expect(second.localPort).toBe(first.localPort);
    agent.destroy();
  }, 20_000);
});
