import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { DirectionMode } from '../tunnel/spec.js';
import type { Edit, TunnelFields } from '../config-edit/tunnel-input.js';
import type { ConfigStore, ConfigView, SaveFailure } from '../config-edit/store.js';
import { describeTunnel, directionChoices, tunnelWords } from './describe.js';
import { codeProblem } from './problem-codes.js';
import { apiError } from './http-errors.js';
import { unreachable } from '../kernel/unreachable.js';
import { exposureOfWritten, exposureText, type OwnListener } from '../tunnel/exposure.js';

export interface ConfigRoutesDeps {
  store: ConfigStore;
  mode: DirectionMode;
  sshHosts: () => Promise<string[]>;
  /** The product's own listeners (the daemon's API, this panel), for the exposure warnings on each tunnel. */
  ownListeners?: readonly OwnListener[];
}

/** The defaults of SPEC §2, when the panel is not told where they are. */
export const DEFAULT_OWN_LISTENERS: readonly OwnListener[] = [
  { kind: 'api', host: '127.0.0.1', port: 8080 },
  { kind: 'panel', host: '127.0.0.1', port: 5000 },
];

const field = (max: number) => z.string().max(max).transform((s) => s.trim());
const Fields = z.strictObject({
  name: field(256),
  remote_host: field(1024),
  remote_port: field(300),
  local_port: field(300),
  direction: field(64),
});
const HealthCheckBody = z.strictObject({ type: field(16), interval: field(16), failures: field(16), path: field(256) });
const Version = z.string().min(1).max(200);
const Hash = z.string().regex(/^[0-9a-f]{32}$/).nullable().default(null);
const SaveBody = z.strictObject({ version: Version, fields: Fields, hash: Hash, health_check: HealthCheckBody.nullable().optional() });
/** The form's health_check, when it sent one (absent: leave the entry's as written). */
const healthCheck = (b: z.infer<typeof SaveBody>) => (b.health_check === undefined ? {} : { health_check: b.health_check });
const DeleteBody = z.strictObject({ version: Version, hash: Hash });
const ExposureBody = z.strictObject({ fields: Fields });
const Index = z.coerce.number().int().min(0).max(100_000);

/** What fields as written would open beyond this machine: the parts the page words, and the daemon's English sentence. */
function exposureFor(fields: z.infer<typeof Fields>, mode: DirectionMode, own: readonly OwnListener[]) {
  return exposureOfWritten(fields, mode, own).map((x) => ({ ...x, message: exposureText(x) }));
}

/**
 * The file's view for the page: entries with their sentence (and its parts) and what
 * each opens beyond this machine (SPEC §5: the parts the page words, and the daemon's
 * English sentence), problems with their code and text.
 */
export function present(view: ConfigView, mode: DirectionMode, own: readonly OwnListener[] = DEFAULT_OWN_LISTENERS) {
  return {
    ...view,
    problems: view.problems.map(codeProblem),
    warnings: view.warnings.map(codeProblem),
    entries: view.entries.map((e) => ({
      ...e,
      description: describeTunnel(e.fields, mode),
      words: tunnelWords(e.fields, mode),
      exposure: exposureFor(e.fields, mode, own),
    })),
  };
}

/** Reading the config file and editing its tunnels. */
export function createConfigApp(deps: ConfigRoutesDeps): Hono {
  const app = new Hono();
  const { store, mode } = deps;
  const own = deps.ownListeners ?? DEFAULT_OWN_LISTENERS;

  const fail = (c: Context, f: SaveFailure) => {
    switch (f.reason) {
      case 'conflict':
        return apiError(c, 409, 'conflict', f.message, { current: present(f.current, mode, own), theirs: f.theirs, theirs_unchanged: f.theirs_unchanged });
      case 'invalid':
        return apiError(c, 400, 'invalid', f.message, {
          fields: f.errors.fields,
          general: f.errors.general,
          problems: f.errors.problems.map((p) => ({ form_field: p.field, ...codeProblem(p.problem) })),
        });
      case 'not_editable':
        return apiError(c, 409, 'not_editable', f.message);
      case 'not_found':
        return apiError(c, 404, 'not_found', f.message);
      default:
        return unreachable(f, 'failure');
    }
  };

  const save = async (c: Context, version: string, edit: Edit, hash: string | null) => {
    const r = await store.save(version, edit, hash);
    if (!r.ok) return fail(c, r.error);
    return c.json({ config: present(r.value.view, mode, own), backup_error: r.value.backup_error });
  };

  const bad = (c: Context, e: z.ZodError) =>
    apiError(c, 400, 'invalid_body', e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));

  app.get('/config', async (c) => c.json({ mode, directions: directionChoices(mode), config: present(await store.view(), mode, own) }));

  app.get('/ssh-hosts', async (c) => c.json({ hosts: await deps.sshHosts() }));

  // The form asks while it is filled in, so the warning is there before the save.
  app.post('/exposure', async (c) => {
    const body = ExposureBody.safeParse(await c.req.json().catch(() => null));
    if (!body.success) return bad(c, body.error);
    return c.json({ exposure: exposureFor(body.data.fields, mode, own) });
  });

  app.post('/tunnels', async (c) => {
    const body = SaveBody.safeParse(await c.req.json().catch(() => null));
    if (!body.success) return bad(c, body.error);
    return save(c, body.data.version, { kind: 'add', fields: body.data.fields as TunnelFields, ...healthCheck(body.data) }, null);
  });

  app.put('/tunnels/:index', async (c) => {
    const index = Index.safeParse(c.req.param('index'));
    const body = SaveBody.safeParse(await c.req.json().catch(() => null));
    if (!index.success) return bad(c, index.error);
    if (!body.success) return bad(c, body.error);
    return save(c, body.data.version, { kind: 'update', index: index.data, fields: body.data.fields as TunnelFields, ...healthCheck(body.data) }, body.data.hash);
  });

  app.delete('/tunnels/:index', async (c) => {
    const index = Index.safeParse(c.req.param('index'));
    const body = DeleteBody.safeParse(await c.req.json().catch(() => null));
    if (!index.success) return bad(c, index.error);
    if (!body.success) return bad(c, body.error);
    return save(c, body.data.version, { kind: 'delete', index: index.data }, body.data.hash);
  });

  return app;
}
