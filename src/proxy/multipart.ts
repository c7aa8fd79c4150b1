import busboy from 'busboy';
import { err, ok, type Result } from '../result.js';
import type { ProxyError } from './errors.js';

/**
 * Multipart request bodies: the uploads of audio transcription and translation
 * (`audio.transcriptions.create` sends the audio file and `model` as form fields).
 * Read with busboy; each target gets the form written out again by the platform's
 * FormData, with `model` replaced and every other part (names, values, files, file
 * names, content types) the same and in the same order. Unlike a JSON body, the model
 * cannot be spliced into the client's bytes: the form's boundary and part headers are
 * the writer's to choose.
 */
export type FormPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; mimeType: string; data: Buffer };

/** A form that passed the proxy's checks, with `model` as the client sent it. */
export interface Form {
  parts: FormPart[];
  model: string;
}

const bad = (message: string, param: string | null = null): Result<never, ProxyError> => err({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message, param });

/** Reads a whole multipart/form-data body and its `model` field. */
export function readForm(bytes: Buffer, contentType: string | undefined, done: (form: Result<Form, ProxyError>) => void): void {
  if (contentType === undefined || !/^\s*multipart\/form-data\s*;/i.test(contentType)) {
    return done(bad(`this route takes a multipart/form-data body (the audio file and "model" as form fields), found content-type ${JSON.stringify((contentType ?? '(none)').slice(0, 100))}`));
  }
  let parser: busboy.Busboy;
  try {
    // The body is already within the route's limit; no part of it is cut here.
    parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', defCharset: 'utf8', limits: { fieldSize: bytes.length } });
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
  parser.on('field', (name, value) => parts.push({ kind: 'field', name, value }));
  parser.on('file', (name, stream, info) => {
    const part: FormPart = { kind: 'file', name, filename: info.filename ?? 'file', mimeType: info.mimeType, data: Buffer.alloc(0) };
    parts.push(part);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => (part.data = Buffer.concat(chunks)));
  });
  parser.on('error', (e: Error) => settle(bad(`the multipart/form-data body cannot be read: ${e.message}`)));
  parser.on('close', () => {
    const models = parts.filter((p) => p.name === 'model');
    const model = models[0];
    if (model === undefined) return settle(bad('missing required form field "model" (expected "<prefix>:<model_name>" or an alias)', 'model'));
    if (models.length > 1) return settle(bad(`the form field "model" is given ${models.length} times; give it once`, 'model'));
    if (model.kind !== 'field' || model.value === '') return settle(bad('the form field "model" must be a non-empty text field "<prefix>:<model_name>" or an alias', 'model'));
    settle(ok({ parts, model: model.value }));
  });
  parser.end(bytes);
}

/** The form as a target gets it: `model` replaced, everything else as the client sent it. */
export async function writeForm(form: Form, model: string): Promise<{ bytes: Buffer; contentType: string }> {
  const out = new FormData();
  for (const p of form.parts) {
    if (p.kind === 'field') out.append(p.name, p.name === 'model' ? model : p.value);
    else out.append(p.name, new Blob([p.data], { type: p.mimeType }), p.filename);
  }
  const encoded = new Response(out);
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}
