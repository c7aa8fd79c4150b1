import busboy from 'busboy';
import { MIMEType } from 'node:util';
import { err, ok, type Result } from '../../result.js';
import { invalidRequest, type ProxyError } from '../errors.js';

/**
 * Multipart request bodies: the uploads of audio transcription and translation
 * (`audio.transcriptions.create` sends the audio file and `model` as form fields).
 * Read with busboy, which checks the whole form. Each target gets the client's bytes
 * with the value of the `model` part replaced, like a JSON body: the parts are
 * delimited by the boundary (which the content never holds, RFC 2046), busboy reports
 * them in the same order, and the splice is made only where the bytes after the
 * `model` part's headers are exactly the value busboy read. Any form where that does
 * not hold (a part without Content-Disposition, which busboy skips; a value in another
 * charset) is written out again by the platform's FormData instead, with every field
 * the same and in the same order. A part with no field name is refused (RFC 7578).
 */
export type FormPart =
  | { kind: 'field'; name: string; value: string }
  /** A file's bytes as they came: joined only if the form has to be written out again. */
  | { kind: 'file'; name: string; filename: string; mimeType: string; chunks: Buffer[] };

/** A form that passed the proxy's checks, with `model` as the client sent it. */
export interface Form {
  parts: FormPart[];
  model: string;
  /** The body as received, its content type, and where the `model` value lies in it (null: it is written out again instead). */
  bytes: Buffer;
  contentType: string;
  modelAt: { start: number; end: number } | null;
}

// An upload is a file and a handful of fields; a form of thousands of tiny parts is
// refused before it costs more than a real one.
const MAX_PARTS = 100;

const bad = (message: string, param: string | null = null): Result<never, ProxyError> => err(invalidRequest(message, param));

/** Reads a whole multipart/form-data body and its `model` field. */
export function readForm(bytes: Buffer, contentType: string | undefined, done: (form: Result<Form, ProxyError>) => void): void {
  if (contentType === undefined || !/^\s*multipart\/form-data\s*;/i.test(contentType)) {
    return done(bad(`this route takes a multipart/form-data body (the audio file and "model" as form fields), found content-type ${JSON.stringify((contentType ?? '(none)').slice(0, 100))}`));
  }
  let parser: busboy.Busboy;
  try {
    // The body is already within the route's limit; no part of it is cut here.
    parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', defCharset: 'utf8', limits: { fieldSize: bytes.length, parts: MAX_PARTS } });
  } catch (e) {
    return done(bad(`the multipart/form-data body cannot be read: ${(e as Error).message}`));
  }
  const parts: FormPart[] = [];
  let settled = false;
  const settle = (r: Result<Form, ProxyError>): void => {
    if (settled) return;
    settled = true;
    done(r);
  };
  // RFC 7578: every part names its field; busboy reports one that does not with no name.
  let nameless = 0;
  parser.on('field', (name: string | undefined, value) => {
    if (name === undefined) nameless++;
    else parts.push({ kind: 'field', name, value });
  });
  parser.on('file', (name: string | undefined, stream, info) => {
    if (name === undefined) {
      nameless++;
      stream.resume();
      return;
    }
    const chunks: Buffer[] = [];
    parts.push({ kind: 'file', name, filename: info.filename ?? 'file', mimeType: info.mimeType, chunks });
    stream.on('data', (c: Buffer) => chunks.push(c));
  });
  parser.on('error', (e: Error) => settle(bad(`the multipart/form-data body cannot be read: ${e.message}`)));
  parser.on('partsLimit', () => settle(bad(`the form has more than ${MAX_PARTS} parts; an upload has a file and a few fields`)));
  parser.on('close', () => {
    if (nameless > 0) return settle(bad(`${nameless === 1 ? 'a part' : `${nameless} parts`} of the form name${nameless === 1 ? 's' : ''} no field (Content-Disposition: form-data; name="…")`));
    const models = parts.filter((p) => p.name === 'model');
    const model = models[0];
    if (model === undefined) return settle(bad('missing required form field "model" (expected "<prefix>:<model_name>" or an alias)', 'model'));
    if (models.length > 1) return settle(bad(`the form field "model" is given ${models.length} times; give it once`, 'model'));
    if (model.kind !== 'field' || model.value === '') return settle(bad('the form field "model" must be a non-empty text field "<prefix>:<model_name>" or an alias', 'model'));
    settle(ok({ parts, model: model.value, bytes, contentType, modelAt: valueAt(bytes, contentType, parts.indexOf(model), parts.length, model.value) }));
  });
  parser.end(bytes);
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * Where the value of the `index`-th of `count` parts lies in `bytes`, if the body has
 * exactly `count` parts and that one's content is exactly `value`'s UTF-8; else null.
 */
function valueAt(bytes: Buffer, contentType: string, index: number, count: number, value: string): { start: number; end: number } | null {
  let boundary: string | undefined;
  try {
    boundary = new MIMEType(contentType).params.get('boundary') ?? undefined;
  } catch {
    return null;
  }
  if (boundary === undefined) return null;
  // A delimiter is CRLF, "--" and the boundary; the first one may open the body without its CRLF.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let at = bytes.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? 0 : bytes.indexOf(delimiter);
  let found: { start: number; end: number } | null = null;
  let parts = 0;
  for (; at !== -1; parts++) {
    const next = bytes.indexOf(delimiter, at + delimiter.length - 2);
    // The last delimiter (`--boundary--`) closes the last part.
    if (next === -1) break;
    if (parts === index) {
      const headersEnd = bytes.indexOf(CRLF2, at + delimiter.length - 2);
      if (headersEnd === -1 || headersEnd > next) return null;
      found = { start: headersEnd + CRLF2.length, end: next };
    }
    at = next;
  }
  if (found === null || parts !== count || !bytes.subarray(found.start, found.end).equals(Buffer.from(value, 'utf8'))) return null;
  return found;
}

/** The form as a target gets it: `model` replaced, everything else as the client sent it. */
export async function writeForm(form: Form, model: string): Promise<{ bytes: Buffer; contentType: string }> {
  const at = form.modelAt;
  if (at !== null) {
    const bytes = Buffer.concat([form.bytes.subarray(0, at.start), Buffer.from(model, 'utf8'), form.bytes.subarray(at.end)]);
    return { bytes, contentType: form.contentType };
  }
  const out = new FormData();
  for (const p of form.parts) {
    if (p.kind === 'field') out.append(p.name, p.name === 'model' ? model : p.value);
    else out.append(p.name, new Blob(p.chunks, { type: p.mimeType }), p.filename);
  }
  const encoded = new Response(out);
  // A form body always has one (multipart/form-data with its boundary); without it the provider could not read the upload.
  const contentType = encoded.headers.get('content-type');
  if (contentType === null) throw new Error('the form was encoded without a content-type');
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType };
}
