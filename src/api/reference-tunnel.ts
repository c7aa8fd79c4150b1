import { z } from 'zod';
import type { EntryView } from '../config-edit/read-entries.js';
import { inputHash, type TunnelInput } from '../config-edit/tunnel-input.js';
import { DEFAULT_DIRECTION, DEFAULT_NAME } from '../config/identity.js';

/**
 * A tunnel in the shape of the reference implementation's configuration API
 * (autossh-tunnel-dockerized v2.3.1): every field a string except `interactive`, ports
 * as their text, `direction` filled in, and the `hash`. Its web panel and scripts read
 * exactly these keys.
 */
export interface ReferenceTunnel {
  name: string;
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
  interactive: boolean;
  hash: string;
}

export function referenceTunnel(e: EntryView): ReferenceTunnel {
  const f = e.fields;
  return {
    name: f.name === '' ? DEFAULT_NAME : f.name,
    remote_host: f.remote_host,
    remote_port: f.remote_port,
    local_port: f.local_port,
    direction: f.direction === '' ? DEFAULT_DIRECTION : f.direction,
    interactive: e.interactive,
    hash: e.hash ?? inputHash({ fields: f, interactive: e.interactive }),
  };
}

const text = (max: number) => z.union([z.string().max(max), z.number().int()]).transform((v) => String(v).trim());
// The reference's panel sends a boolean; its shell scripts took "true"/"false" too.
const flag = z.union([z.boolean(), z.enum(['true', 'false', 'yes', 'no', 'True', 'False', 'TRUE', 'FALSE'])]).transform((v) => v === true || /^(true|yes)$/i.test(String(v)));

/**
 * One tunnel in a request body. `hash` and `status` are what GET /config and the
 * reference's panel hand back; they are derived, so they are accepted and not used.
 * Any other key is refused by name rather than dropped without a word.
 */
export const ReferenceTunnelBody = z.strictObject({
  name: text(256).optional(),
  remote_host: text(1024),
  remote_port: text(300),
  local_port: text(300),
  direction: text(64).optional(),
  interactive: flag.optional(),
  hash: z.string().optional(),
  status: z.string().optional(),
});

export const ReferenceConfigBody = z.strictObject({ tunnels: z.array(ReferenceTunnelBody).max(10_000) });

/** A parsed body tunnel as the editor takes it; an absent direction is written out as the default. */
export function tunnelInput(b: z.infer<typeof ReferenceTunnelBody>): TunnelInput {
  return {
    fields: {
      name: b.name ?? '',
      remote_host: b.remote_host,
      remote_port: b.remote_port,
      local_port: b.local_port,
      direction: b.direction === undefined || b.direction === '' ? DEFAULT_DIRECTION : b.direction,
    },
    interactive: b.interactive ?? false,
  };
}


/** zod's issues as one sentence naming each field. */
export function bodyProblems(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}
