/**
 * `proxy.clients` (SPEC §9b): one key per client, with the models it may use and its
 * limits. Keys are written as provider keys are (a literal, or `${VAR}` read from the
 * environment when the proxy uses it) and never shown in an error.
 */
import { z } from 'zod';

/** A client's name: it becomes a log field and a metrics label, so it keeps to a label's characters. */
export const CLIENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const count = (what: string) =>
  z
    .number({ error: `expected a whole number of ${what}, 1 or more` })
    .int({ error: `expected a whole number of ${what}, 1 or more` })
    .min(1, { error: `expected a whole number of ${what}, 1 or more` });

const pattern = z
  .string({ error: 'expected a model name or pattern, e.g. "gpu1:*" or an alias' })
  .min(1, { error: 'expected a model name or pattern, e.g. "gpu1:*" or an alias' })
  .max(256, { error: 'expected a pattern of at most 256 characters' });

export const clientSchema = z.strictObject(
  {
    key: z.string({ error: 'expected a string (a key, or ${VAR} to read it from the environment)' }).min(1, { error: 'expected a non-empty string' }),
    models: z.array(pattern, { error: 'expected a list of model names or patterns ("*" matches any run of characters)' }).min(1, { error: 'expected at least one pattern; leave models out to allow every model' }).optional(),
    rpm: count('requests per minute').optional(),
    tpm: count('tokens per minute').optional(),
    max_concurrent: count('requests at once').optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `expected only the fields key, models, rpm, tpm and max_concurrent (this one has ${issue.keys.map((k) => `"${k}"`).join(', ')})` : 'expected a map such as {key: "${ALICE_KEY}", models: ["gpu1:*"], rpm: 60}') },
);

const NAME_MESSAGE = 'expected a client name of letters, digits, ".", "_" or "-", at most 64 characters, starting with a letter or digit';

export const clientsSchema = z
  .record(z.string().regex(CLIENT_NAME_PATTERN, { error: NAME_MESSAGE }), clientSchema, {
    error: (issue) => (issue.code === 'invalid_key' ? NAME_MESSAGE : 'expected a map of clients by name, e.g. alice: {key: "${ALICE_KEY}", models: ["gpu1:*"]}'),
  })
  .superRefine(
    (clients, ctx) => {
      // Two clients with one key could not be told apart: the second would never be recognised.
      const byKey = new Map<string, string>();
      for (const [name, c] of Object.entries(clients as Record<string, unknown>)) {
        if (typeof c !== 'object' || c === null || typeof (c as { key?: unknown }).key !== 'string') continue;
        const key = (c as { key: string }).key;
        const other = byKey.get(key);
        if (other !== undefined) ctx.addIssue({ code: 'custom', path: [name, 'key'], message: `expected a key of its own; client "${other}" has the same one` });
        else byKey.set(key, name);
      }
    },
    // Run even when a client has other problems, so that one pass reports them all.
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

export type ClientConfig = z.infer<typeof clientSchema>;
