import busboy from 'busboy';
import { err, ok, type Result } from '../../kernel/result.js';
import { invalidRequest, type ProxyError } from '../errors.js';
import { parameters, splitParts, type RawPart } from './form-parts.js';

/**
 * Multipart request bodies: the uploads of audio transcription and translation
 * (`audio.transcriptions.create` sends the audio file and `model` as form fields).
 * Read with busboy, which checks the whole form, and split by the proxy itself
 * (form-parts.ts), which refuses a form that servers could read differently (two
 * names for a part, two Content-Disposition headers, a duplicated boundary, …): the
 * two readings must name the same fields in the same order, and the form must have
 * one `model` field, or the model is ambiguous (400). Each target gets the client's
 * bytes with the value of the `model` part replaced, like a JSON body: the splice is
 * made only where the bytes after the `model` part's headers are exactly the value
 * busboy read. Any form where that does not hold (a part without Content-Disposition,
 * which no reader takes as a field; a value in another charset) is written out again
 * by the platform's FormData instead, with every field the same and in the same
 * order. A part with no field name is refused (RFC 7578).
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
  // Busboy and the platform's MIME parser take the first of two boundaries, other servers the last.
  const type = parameters(contentType);
  if (!type.ok) return done(bad(`the content-type ${JSON.stringify(contentType.slice(0, 100))} cannot be read: ${type.error}`));
  const boundary = type.value.params.get('boundary')?.text;
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
    const split = boundary === undefined ? err('the content-type names no boundary') : splitParts(bytes, boundary);
    if (!split.ok) return settle(bad(`the multipart/form-data body is ambiguous: ${split.error}; no part of it was sent on`));
    if (nameless > 0) return settle(bad(`${nameless === 1 ? 'a part' : `${nameless} parts`} of the form name${nameless === 1 ? 's' : ''} no field (Content-Disposition: form-data; name="…")`));
    const raw = split.value;
    const named = raw.filter((p) => p.name !== null);
    if (named.length !== parts.length || named.some((p, i) => p.name !== parts[i]?.name)) {
      return settle(bad('the multipart/form-data body is ambiguous: its parts are not read alike by every reader; no part of it was sent on'));
    }
    const models = parts.filter((p) => p.name === 'model');
    const model = models[0];
    if (model === undefined) return settle(bad('missing required form field "model" (expected "<prefix>:<model_name>" or an alias)', 'model'));
    if (models.length > 1) return settle(bad(`the form field "model" is given ${models.length} times; give it once (servers differ on which one counts)`, 'model'));
    if (model.kind !== 'field' || model.value === '') return settle(bad('the form field "model" must be a non-empty text field "<prefix>:<model_name>" or an alias', 'model'));
    const index = parts.indexOf(model);
    const at = named[index];
    const encoding = at?.transferEncoding ?? null;
    if (encoding !== null && !['7bit', '8bit', 'binary'].includes(encoding)) {
      return settle(bad(`the form field "model" has Content-Transfer-Encoding ${JSON.stringify(encoding)}, which servers decode or not (RFC 7578 §4.7 retires it)`, 'model'));
    }
    // The splice needs the two readings to be the same parts: a part busboy skipped (no Content-Disposition) is written out again instead.
    settle(ok({ parts, model: model.value, bytes, contentType, modelAt: named.length === raw.length && at !== undefined ? valueAt(bytes, at, model.value) : null }));
  });
  parser.end(bytes);
}

/** Where the value of `part` lies in `bytes`, if its content is exactly `value`'s UTF-8; else null (another charset: written out again). */
function valueAt(bytes: Buffer, part: RawPart, value: string): { start: number; end: number } | null {
  return bytes.subarray(part.start, part.end).equals(Buffer.from(value, 'utf8')) ? { start: part.start, end: part.end } : null;
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
