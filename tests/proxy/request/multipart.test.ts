// Reading an upload and giving each target its own: the client's bytes with only the
// model's value replaced where the form allows it, else the form written out again
// with every part kept; and the errors for what is not a usable upload.
import { describe, expect, it } from 'vitest';
import { readForm, writeForm, type Form } from '../../../src/proxy/request/multipart.js';
import type { ProxyError } from '../../../src/proxy/errors.js';

const CLIP = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function read(bytes: Buffer, contentType: string | undefined): Promise<{ ok: true; value: Form } | { ok: false; error: ProxyError }> {
  return new Promise((resolve) => readForm(bytes, contentType, resolve));
}

async function encoded(form: FormData): Promise<{ bytes: Buffer; type: string }> {
  const r = new Response(form);
  return { bytes: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type')! };
}

/** A body written by hand, CRLF line ends, as some clients frame it. */
const raw = (boundary: string, parts: string[], extra: { preamble?: string; epilogue?: string } = {}) =>
  Buffer.from(`${extra.preamble ?? ''}${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n${extra.epilogue ?? ''}`, 'latin1');

const asForm = (bytes: Buffer, type: string) => new Response(bytes, { headers: { 'content-type': type } }).formData();

describe('an upload', () => {
  it('reaches each target as the client\'s bytes with only the model replaced', async () => {
    const form = new FormData();
    form.append('language', 'en');
    form.append('model', 'gpu:whisper-large-v3');
    form.append('file', new Blob([CLIP], { type: 'audio/wav' }), 'clip.wav');
    form.append('temperature', '0');
    const { bytes, type } = await encoded(form);
    const r = await read(bytes, type);
    expect(r.ok && r.value.model).toBe('gpu:whisper-large-v3');
    const out = await writeForm((r as { value: Form }).value, 'whisper-large-v3');
    expect(out.contentType).toBe(type);
    const expected = Buffer.from(bytes.toString('latin1').replace('gpu:whisper-large-v3', 'whisper-large-v3'), 'latin1');
    expect(out.bytes.equals(expected)).toBe(true);
  });

  it('splices a form framed by hand, with a preamble, an epilogue and a quoted boundary', async () => {
    const body = raw(
      'b o-und',
      ['Content-Disposition: form-data; name="model"\r\n\r\ngpu:whisper', 'Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF'],
      { preamble: 'ignored preamble\r\n', epilogue: 'ignored epilogue' },
    );
    const r = await read(body, 'multipart/form-data; boundary="b o-und"');
    expect(r.ok && r.value.modelAt).not.toBeNull();
    const out = await writeForm((r as { value: Form }).value, 'whisper');
    expect(out.bytes.toString('latin1')).toBe(body.toString('latin1').replace('gpu:whisper', 'whisper'));
  });

  it('writes the form out again when the bytes are not the value as read (a charset of its own), keeping every part', async () => {
    const body = raw('xyz', [
      'Content-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\xe9',
      'Content-Disposition: form-data; name="model"\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\ngpu:m\xfcnchen',
      'Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF',
    ]);
    const r = await read(body, 'multipart/form-data; boundary=xyz');
    expect(r.ok && r.value.model).toBe('gpu:münchen');
    expect(r.ok && r.value.modelAt).toBeNull();
    const out = await writeForm((r as { value: Form }).value, 'münchen');
    const got = await asForm(out.bytes, out.contentType);
    expect([...got.keys()]).toEqual(['prompt', 'model', 'file']);
    expect([got.get('prompt'), got.get('model')]).toEqual(['café', 'münchen']);
    const file = got.get('file') as File;
    expect([file.name, file.type, Buffer.from(await file.arrayBuffer()).toString()]).toEqual(['a.wav', 'audio/wav', 'RIFF']);
  });

  it('writes the form out again when a part has no Content-Disposition (no field: the reader skips it), so no other part\'s bytes are touched', async () => {
    const body = raw('xyz', ['Content-Type: text/plain\r\n\r\ngpu:whisper', 'Content-Disposition: form-data; name="model"\r\n\r\ngpu:whisper']);
    const r = await read(body, 'multipart/form-data; boundary=xyz');
    expect(r.ok && r.value.modelAt).toBeNull();
    const out = await writeForm((r as { value: Form }).value, 'whisper');
    expect([...(await asForm(out.bytes, out.contentType))]).toEqual([['model', 'whisper']]);
  });

  it.each([
    ['no content type', undefined, /^this route takes a multipart\/form-data body .*found content-type "\(none\)"$/],
    ['JSON', 'application/json', /found content-type "application\/json"$/],
    ['no boundary', 'multipart/form-data; charset=utf-8', /^the multipart\/form-data body cannot be read: /],
  ])('refuses %s, saying what it found', async (_, type, message) => {
    const r = await read(Buffer.from('{}'), type);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatchObject({ status: 400, code: 'invalid_request', message: expect.stringMatching(message) });
  });

  it.each([
    ['no model', ['Content-Disposition: form-data; name="file"; filename="a"\r\n\r\nx'], 'missing required form field "model"'],
    ['two models', ['Content-Disposition: form-data; name="model"\r\n\r\na:b', 'Content-Disposition: form-data; name="model"\r\n\r\nc:d'], 'is given 2 times'],
    ['a model that is a file', ['Content-Disposition: form-data; name="model"; filename="m.txt"\r\n\r\na:b'], 'must be a non-empty text field'],
    ['an empty model', ['Content-Disposition: form-data; name="model"\r\n\r\n'], 'must be a non-empty text field'],
  ])('refuses a form with %s, naming the field', async (_, parts, message) => {
    const r = await read(raw('xyz', parts), 'multipart/form-data; boundary=xyz');
    expect(!r.ok && r.error).toMatchObject({ status: 400, param: 'model', message: expect.stringContaining(message) });
  });

  it('refuses a part that names no field (RFC 7578), field or file', async () => {
    for (const nameless of ['Content-Disposition: form-data\r\n\r\nx', 'Content-Disposition: form-data; filename="a.wav"\r\n\r\nRIFF']) {
      const r = await read(raw('xyz', ['Content-Disposition: form-data; name="model"\r\n\r\na:b', nameless]), 'multipart/form-data; boundary=xyz');
      expect(!r.ok && r.error.message).toBe('a part of the form names no field (Content-Disposition: form-data; name="…")');
    }
  });

  it('refuses a form of more than 100 parts', async () => {
    const parts = Array.from({ length: 101 }, (_, i) => `Content-Disposition: form-data; name="f${i}"\r\n\r\nx`);
    const r = await read(raw('xyz', ['Content-Disposition: form-data; name="model"\r\n\r\na:b', ...parts]), 'multipart/form-data; boundary=xyz');
    expect(!r.ok && r.error.message).toBe('the form has more than 100 parts; an upload has a file and a few fields');
  });

  it('refuses a body cut before its closing delimiter', async () => {
    const body = raw('xyz', ['Content-Disposition: form-data; name="model"\r\n\r\na:b']);
    const r = await read(body.subarray(0, body.length - 12), 'multipart/form-data; boundary=xyz');
    expect(!r.ok && r.error.message).toMatch(/^the multipart\/form-data body cannot be read: /);
  });
});
