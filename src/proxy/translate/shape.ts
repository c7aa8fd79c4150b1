import { err, type Result } from '../../kernel/result.js';
import { invalidRequest, type ProxyError } from '../errors.js';
import { describe } from '../request/json-body.js';

/** A JSON object as parsed; translations read it field by field. */
export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A request field that has no counterpart in the provider's format: a 400 that names it. */
export function refused(param: string, message: string): Result<never, ProxyError> {
  return err({ ...invalidRequest(`${param}: ${message}`, param), code: 'untranslatable_field' });
}

/** A request field that is not of the expected shape. */
export function malformed(param: string, expected: string, found: unknown): Result<never, ProxyError> {
  return err(invalidRequest(`"${param}" must be ${expected}, found ${describe(found)}`, param));
}

/**
 * The names of the fields a translation leaves out, for `x-tunnel-manager-dropped`:
 * each once, in the order first met, written as the field's general path
 * (`messages[].content[].cache_control`), not each place it occurred.
 */
export class Dropped {
  // Made on the first name: most requests drop nothing.
  private names: Set<string> | null = null;

  add(name: string): void {
    (this.names ??= new Set()).add(name);
  }

  list(): string[] {
    return this.names === null ? [] : [...this.names];
  }
}

/** A translated request: the body for the provider (the client's model still in it) and what was left out. */
export interface TranslatedRequest {
  body: Json;
  dropped: string[];
}

/** Copies `from[name]` to `to[as]` when present. */
export function carry(from: Json, to: Json, name: string, as = name): void {
  if (from[name] !== undefined) to[as] = from[name];
}
