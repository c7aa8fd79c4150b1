import { Scalar } from 'yaml';
import { DEFAULT_DIRECTION, DEFAULT_NAME, entryHash } from '../config/identity.js';

/**
 * What a client sends to edit the `tunnels:` list (the panel's form or the daemon's
 * `/config` API): the form's fields, one tunnel, one edit, and what those values mean.
 */

/** The fields the panel's form edits, in the order a new entry is written. */
export const FORM_FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'] as const;
export type FormField = (typeof FORM_FIELDS)[number];
export type TunnelFields = Record<FormField, string>;

/** A `health_check:` as the form edits it: the text of each field, '' when absent (the daemon's validation judges it). */
export interface HealthCheckInput {
  type: string;
  interval: string;
  failures: string;
  path: string;
}
export const HEALTH_CHECK_KEYS = ['type', 'interval', 'failures', 'path'] as const;

/** One tunnel as a client sends it: the form's fields, and `interactive` when the client sets it. */
export interface TunnelInput {
  fields: TunnelFields;
  /** Undefined leaves the entry's `interactive` as written (the panel's form does not show it). */
  interactive?: boolean;
  /** Undefined leaves `health_check` as written; null (or an empty type) removes it. */
  health_check?: HealthCheckInput | null;
}

export type Edit =
  | ({ kind: 'add' } & TunnelInput)
  | ({ kind: 'update'; index: number } & TunnelInput)
  | { kind: 'delete'; index: number }
  /** The whole list replaced (the reference's `POST /config`); entries that keep their hash keep their node. */
  | { kind: 'replace'; tunnels: TunnelInput[] };

/** The hash a tunnel sent by a client gets once written (SPEC §5), read by the one identity rule of the config. */
export function inputHash(t: TunnelInput): string {
  return entryHash((key) => {
    if (key === 'interactive') return t.interactive === undefined ? undefined : new Scalar(String(t.interactive));
    return new Scalar(t.fields[key]);
  });
}

/** What a form value means: an empty name or direction is the default, written or not. */
export function fieldMeaning(field: FormField, text: string): string {
  if (text !== '') return text;
  if (field === 'name') return DEFAULT_NAME;
  return field === 'direction' ? DEFAULT_DIRECTION : '';
}
