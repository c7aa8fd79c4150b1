// A request whose model servers could read differently is a 400 naming the problem,
// never a guess (SPEC §9b): duplicate `model` members in JSON, and uploads whose
// `model` part one multipart reader finds and another does not (a second `model`
// part, a part with two names, two Content-Disposition headers, a second boundary …).
// The proxy checks the model against the client's list: a body read two ways would be
// let in as one model and served as another. Nothing of a refused body reaches a provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startHarness, type Answer, type Harness } from '../harness.js';

const KEY = 'sk-ambiguous-0123456789';
let h: Harness;

beforeAll(async () => {
  // The client may use provider a only: b is what a second model would smuggle in.
  h = await startHarness((base) => ({ clients: { c: { key: KEY, models: ['a:*'] } }, providers: { a: { base_url: base }, b: { base_url: base } } }));
});
afterAll(() => h?.close());

const auth = { authorization: `Bearer ${KEY}` };

async function unsent(fn: () => Promise<Answer>): Promise<Answer> {
  const before = h.mock.received.length;
  const r = await fn();
  expect(h.mock.received.length).toBe(before);
  return r;
}
const last = () => h.mock.received[h.mock.received.length - 1]!;

describe('duplicate model members in a JSON body', () => {
  const post = (path: string, text: string) => call(h.url, { path, headers: auth, body: text });
  const messages = '"messages":[{"role":"user","content":"hi"}]';

  it.each([
    ['plain', `{"model":"a:x","model":"b:y",${messages}}`],
    ['the allowed one last', `{"model":"b:y",${messages},"model":"a:x"}`],
    ['one spelled with an escape', `{"model":"a:x","mod\\u0065l":"b:y",${messages}}`],
    ['both spelled with escapes', `{"\\u006dodel":"a:x","\\u006d\\u006f\\u0064\\u0065\\u006c":"b:y",${messages}}`],
    ['three of them', `{"model":"a:x","model":"a:x","model":"b:y",${messages}}`],
  ])('%s: 400 naming model, on chat', async (_, body) => {
    const r = await unsent(() => post('/v1/chat/completions', body));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    expect(r.json.error.message).toMatch(/^the body has \d "model" members; give it once/);
  });

  it('on every JSON route, in its family\'s shape', async () => {
    for (const [path, body] of [
      ['/v1/responses', '{"model":"a:x","input":"hi","model":"b:y"}'],
      ['/v1/embeddings', '{"model":"a:x","input":"hi","model":"a:x"}'],
      ['/v1/messages/count_tokens', `{"model":"a:x","model":"b:y",${messages}}`],
    ] as const) {
      const r = await unsent(() => post(path, body));
      expect(r.status, path).toBe(400);
      expect(r.json.error.message, path).toContain('"model" members');
    }
    const m = await unsent(() => post('/v1/messages', `{"model":"a:x","max_tokens":5,"model":"b:y",${messages}}`));
    expect(m.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('"model" elsewhere than at the top, in strings, and escapes in other keys are no duplicate', async () => {
    const body = '{"model":"a:x","messages":[{"role":"user","content":"model \\"model\\": caf\\u00e9","model":"b:y"}],"metadata":{"model":"b:z"},"mo\\u0064e":1}';
    const r = await post('/v1/chat/completions', body);
    expect(r.status).toBe(200);
    expect(last().json?.model).toBe('x');
  });
});

/** A body framed by hand, CRLF line ends; `type` is its content-type. */
const form = (parts: string[], boundary = 'xyz', tail = `--${boundary}--\r\n`) => Buffer.from(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}${tail}`, 'latin1');
const FILE = 'Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF';
const field = (name: string, value: string, headers = '') => `Content-Disposition: form-data; name="${name}"\r\n${headers}\r\n${value}`;
const upload = (body: Buffer, type = 'multipart/form-data; boundary=xyz') => call(h.url, { path: '/v1/audio/transcriptions', headers: { ...auth, 'content-type': type }, body });

describe('an upload whose model servers could read differently', () => {
  it.each<[string, Buffer, string?, RegExp?]>([
    ['a second model field', form([field('model', 'a:whisper'), FILE, field('model', 'b:whisper')]), undefined, /the form field "model" is given 2 times/],
    ['a model field and a model file', form([field('model', 'a:whisper'), 'Content-Disposition: form-data; name="model"; filename="m.txt"\r\n\r\nb:whisper', FILE])],
    ['a part with two names, the allowed one first', form(['Content-Disposition: form-data; name="model"; name="prompt"\r\n\r\na:whisper', field('prompt', 'x'), FILE]), undefined, /gives name= twice/],
    ['a part with two names, the allowed one last', form([field('model', 'a:whisper'), 'Content-Disposition: form-data; name="prompt"; name="model"\r\n\r\nb:whisper', FILE]), undefined, /gives name= twice/],
    ['two names in other cases', form(['Content-Disposition: form-data; name="model"; NAME="x"\r\n\r\na:whisper', FILE]), undefined, /gives name= twice/],
    ['a name and a name*', form([field('model', 'a:whisper'), "Content-Disposition: form-data; name=\"prompt\"; name*=utf-8''model\r\n\r\nb:whisper", FILE]), undefined, /name\*=/],
    ['two Content-Disposition headers', form(['Content-Disposition: form-data; name="prompt"\r\nContent-Disposition: form-data; name="model"\r\n\r\nb:whisper', field('model', 'a:whisper'), FILE]), undefined, /part 1 has two content-disposition headers/],
    ['two Content-Disposition headers, the model first', form(['Content-Disposition: form-data; name="model"\r\ncontent-disposition: form-data; name="prompt"\r\n\r\na:whisper', FILE]), undefined, /two content-disposition headers/],
    ['a disposition other than form-data', form([field('model', 'a:whisper'), 'Content-Disposition: attachment; name="model"\r\n\r\nb:whisper', FILE]), undefined, /is "attachment", not form-data/],
    ['a folded Content-Disposition', form(['Content-Disposition: form-data;\r\n name="model"\r\n\r\na:whisper', FILE]), undefined, /folds a header/],
    ['a field name with a backslash escape', form(['Content-Disposition: form-data; name="mod\\el"\r\n\r\na:whisper', field('model', 'b:whisper'), FILE]), undefined, /backslash escape/],
    ['a second boundary in the content-type', form([field('model', 'a:whisper'), FILE]), 'multipart/form-data; boundary=xyz; boundary=other', /gives boundary= twice/],
    ['the boundary followed by more than a line end', form([`${field('model', 'a:whisper')}\r\n--xyzzy\r\n${field('model', 'b:whisper')}`, FILE]), undefined, /its boundary is followed by "zy/],
    ['the boundary followed by spaces', form([field('model', 'a:whisper'), FILE], 'xyz', '--xyz  \r\nContent-Disposition: form-data; name="model"\r\n\r\nb:whisper\r\n--xyz--\r\n'), undefined, /its boundary is followed by/],
    ['a base64 model', form([field('model', 'YTp3aGlzcGVy', 'Content-Transfer-Encoding: base64\r\n'), FILE]), undefined, /Content-Transfer-Encoding "base64"/],
  ])('%s: 400, and nothing reaches a provider', async (_, body, type, message) => {
    const r = await unsent(() => upload(body, type));
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('invalid_request_error');
    if (message !== undefined) expect(r.json.error.message).toMatch(message);
  });

  it('uploads as clients write them still pass, with the model spliced in', async () => {
    const fd = new FormData();
    fd.append('model', 'a:whisper');
    fd.append('file', new Blob([Buffer.from('RIFF')], { type: 'audio/wav' }), 'clip.wav');
    fd.append('language', 'en');
    const encoded = new Response(fd);
    const r = await upload(Buffer.from(await encoded.arrayBuffer()), encoded.headers.get('content-type')!);
    expect(r.status).toBe(200);
    expect(last().form?.get('model')).toBe('whisper');
    // As curl and Python's requests frame them: an unquoted name, a filename*, a quoted boundary, 8bit.
    const byHand = form(['Content-Disposition: form-data; name=model\r\nContent-Transfer-Encoding: 8bit\r\n\r\na:whisper', "Content-Disposition: form-data; name=\"file\"; filename=\"a.wav\"; filename*=utf-8''%C3%A9.wav\r\nContent-Type: audio/wav\r\n\r\nRIFF"], 'b-1');
    const ok = await upload(byHand, 'multipart/form-data; boundary="b-1"');
    expect(ok.status).toBe(200);
    expect(last().bytes.toString('latin1')).toBe(byHand.toString('latin1').replace('a:whisper', 'whisper'));
  });
});
