import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { startHarness } from './harness.js';
const sh = (cmd: string) => promisify(execFile)('bash', ['-c', cmd]).then((x) => x.stdout, (e: any) => `EXIT ${e.code} ${e.stdout} ${e.stderr}`);
it('probe', async () => {
  let out = '';
  for (const listener of ['proxy', 'daemon'] as const) {
    const h = await startHarness((base) => ({ providers: { mock: { base_url: base } } }), {}, listener);
    const u = h.url;
    out += `== ${listener}\n`;
    out += 'no content-type: ' + (await sh(`curl -s -w ' %{http_code}' ${u}/v1/chat/completions -d '{"model":"mock:m","messages":[]}'`)).slice(0, 200) + '\n';
    const big = JSON.stringify({ model: 'mock:nomic', input: 'x'.repeat(2_000_000) });
    writeFileSync('/tmp/big.json', big);
    out += 'big expect-100: ' + (await sh(`curl -s -v -w ' %{http_code}' ${u}/v1/embeddings -H 'content-type: application/json' --data-binary @/tmp/big.json 2>&1 | grep -E '100 Continue|^< HTTP|Expect' ; echo`)).slice(0, 300) + '\n';
    out += 'mock got big: ' + h.mock.received.at(-1)?.bytes.length + ' vs ' + Buffer.byteLength(big) + '\n';
    out += 'chunked: ' + (await sh(`curl -s -w ' %{http_code}' ${u}/v1/chat/completions -H 'content-type: application/json' -H 'Transfer-Encoding: chunked' -d '{"model":"mock:m","messages":[]}'`)).slice(0, 200) + '\n';
    out += 'charset: ' + (await sh(`curl -s -w ' %{http_code}' ${u}/v1/chat/completions -H 'content-type: application/json; charset=utf-8' -d '{"model":"mock:m","messages":[]}'`)).slice(0, 120) + '\n';
    out += 'head models: ' + (await sh(`curl -s -I ${u}/v1/models | head -3`)) + '\n';
    out += 'query: ' + (await sh(`curl -s -w ' %{http_code}' '${u}/v1/chat/completions?api-version=1' -H 'content-type: application/json' -d '{"model":"mock:m","messages":[]}'`)).slice(0, 120) + ' mock url ' + h.mock.received.at(-1)?.url + '\n';
    out += 'reuse after cut: ' + (await sh(`/usr/bin/python3 - <<'PY'
import httpx
with httpx.Client() as c:
    with c.stream("POST", "${u}/v1/chat/completions", json={"model":"mock:cut-event","messages":[],"stream":True}) as r:
        lines=[l for l in r.iter_lines()]
    print(len(lines), lines[-3:])
    r2=c.post("${u}/v1/chat/completions", json={"model":"mock:m","messages":[]})
    print(r2.status_code, r2.json()["choices"][0]["message"]["content"])
    with c.stream("POST", "${u}/v1/chat/completions", json={"model":"mock:stall-stream","messages":[],"stream":True}, timeout=httpx.Timeout(5, read=1)) as r:
        try:
            for l in r.iter_lines(): pass
        except Exception as e: print("stall", type(e).__name__)
    r3=c.post("${u}/v1/chat/completions", json={"model":"mock:m","messages":[]})
    print(r3.status_code)
PY`)) + '\n';
    out += 'requests data= str: ' + (await sh(`/usr/bin/python3 - <<'PY'
import requests, json
r=requests.post("${u}/v1/chat/completions", data=json.dumps({"model":"mock:m","messages":[{"role":"user","content":"café"}]}))
print(r.status_code, r.text[:150])
r=requests.post("${u}/v1/chat/completions", data={"model":"mock:m"})
print(r.status_code, r.text[:200])
PY`)) + '\n';
    await h.close();
  }
  writeFileSync('/tmp/probe.txt', out);
}, 120_000);
