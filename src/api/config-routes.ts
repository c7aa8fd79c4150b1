import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import type { EditPlan, ConfigStore, ConfigView, SaveFailure } from '../config-edit/store.js';
import type { EngineApi } from './engine-api.js';
import { err, ok, type Result } from '../kernel/result.js';
import { resolveAmong } from './resolve.js';
import { apiError, internalErrorHandler } from './errors.js';
import { bodyProblems, ReferenceConfigBody, ReferenceTunnelBody, referenceTunnel, tunnelInput } from './reference-tunnel.js';
import type { SuccessBody, WrittenTunnel } from './types.js';
import { unreachable } from '../kernel/unreachable.js';

/**
 * The reference implementation's configuration API (SPEC §6, §12) on the daemon's own
 * file, through the same editor as the panel: atomic writes, comments and unknown keys
 * kept, backups, validation with the daemon's loader. GET answers with an ETag (the
 * file's version); a write with If-Match is refused with 409 when the file changed
 * since, and every write is refused when the file changes while it runs. After a write
 * the daemon reloads at once, so /status reflects it when the answer arrives, and the
 * answer carries the exposure warnings (SPEC §5) of what was written as `warnings`:
 * the daemon runs it (the user may mean it), and says who can reach it.
 */
export function createConfigApp(engine: EngineApi, store: ConfigStore, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();

  const fail = (f: SaveFailure): Response => {
    switch (f.reason) {
      case 'conflict':
        return apiError('config_conflict', f.message, { headers: { etag: etag(f.current.version) } });
      case 'invalid':
        return apiError('invalid_tunnel', f.message.replace('the tunnel was not saved', 'nothing was saved'), { fields: f.errors.fields, general: f.errors.general });
      case 'not_editable':
        return apiError('config_not_editable', `${store.path}: ${f.message}`);
      case 'not_found':
        return apiError('tunnel_not_found', f.message);
      default:
        return unreachable(f);
    }
  };

  /** The full hash a hash or prefix names in the file now (4+ hex characters; the reference's 8 are a case of it). */
  const resolve = async (param: string): Promise<Result<string, Response>> => {
    const view = await store.view();
    const known = view.entries.flatMap((e) => (e.hash === null ? [] : [e.hash]));
    return resolveAmong(known, param, (message) => apiError('tunnel_not_found', `${message} in ${store.path}`));
  };

  /** The entry's place when the save runs; gone by then (the file changed) is not_found. */
  const at = (hash: string) => (view: ConfigView): Result<number, SaveFailure> => {
    const i = view.entries.findIndex((e) => e.hash === hash);
    return i >= 0 ? ok(i) : err({ reason: 'not_found', message: `the tunnel ${hash} is no longer in ${store.path}: the file changed meanwhile` });
  };

  const write = async (c: Context, plan: EditPlan, answer: (after: ConfigView) => Response): Promise<Response> => {
    const r = await store.save(ifMatch(c), plan, null);
    if (!r.ok) return fail(r.error);
    await engine.reload();
    return answer(r.value.view);
  };

  /** The exposure of the tunnels in force after the write's reload, as the daemon logged it. */
  const exposureOf = (hash: string | null): string[] =>
    engine.configHealth().exposure.flatMap((e) => (hash === null ? [`tunnel ${JSON.stringify(e.name)} (line ${e.line}): ${e.message}`] : e.hash === hash ? [e.message] : []));

  /** The entry at `index` of the file as written, in the reference's shape: the answer to an add or an update. */
  const entryAt = (view: ConfigView, index: number, status: 200 | 201): Response => {
    const entry = view.entries[index];
    if (entry === undefined) return apiError('config_conflict', `${store.path} changed while the tunnel was being written; read it again`);
    const record = referenceTunnel(entry);
    return json({ ...record, warnings: exposureOf(record.hash) } satisfies WrittenTunnel, status, view.version);
  };

  const body = async <T>(c: Context, schema: z.ZodType<T>): Promise<Result<T, Response>> => {
    const raw: unknown = await c.req.json().catch(() => undefined);
    if (raw === undefined) return err(apiError('invalid_body', 'expected a JSON body'));
    const parsed = schema.safeParse(raw);
    return parsed.success ? ok(parsed.data) : err(apiError('invalid_body', bodyProblems(parsed.error)));
  };

  app.get('/config', async () => {
    const view = await store.view();
    if (view.not_editable !== null && !view.missing) return apiError('config_not_editable', `${store.path}: ${view.not_editable}`);
    return json({ tunnels: view.entries.map(referenceTunnel) }, 200, view.version);
  });

  app.get('/config/:hash', async (c) => {
    const hash = await resolve(c.req.param('hash'));
    if (!hash.ok) return hash.error;
    const view = await store.view();
    const i = at(hash.value)(view);
    const entry = i.ok ? view.entries[i.value] : undefined;
    return entry ? json(referenceTunnel(entry), 200, view.version) : apiError('tunnel_not_found', `the tunnel ${hash.value} is no longer in ${store.path}`);
  });

  const replaceAll = async (c: Context) => {
    const b = await body(c, ReferenceConfigBody);
    if (!b.ok) return b.error;
    return write(c, { kind: 'replace', tunnels: b.value.tunnels.map(tunnelInput) }, () => json({ ...success('Configuration saved'), warnings: exposureOf(null) }, 200));
  };
  app.post('/config', replaceAll);
  app.put('/config', replaceAll);

  app.post('/config/new', async (c) => {
    const b = await body(c, ReferenceTunnelBody);
    if (!b.ok) return b.error;
    return write(c, { kind: 'add', ...tunnelInput(b.value) }, (after) => entryAt(after, after.entries.length - 1, 201));
  });

  const update = async (c: Context) => {
    const b = await body(c, ReferenceTunnelBody);
    if (!b.ok) return b.error;
    const input = tunnelInput(b.value);
    const hash = await resolve(c.req.param('hash') ?? '');
    if (!hash.ok) return hash.error;
    const index = at(hash.value);
    let edited = -1;
    return write(
      c,
      (view) => {
        const i = index(view);
        if (!i.ok) return i;
        edited = i.value;
        return ok({ kind: 'update', index: i.value, ...input });
      },
      (after) => entryAt(after, edited, 200),
    );
  };
  app.post('/config/:hash', update);
  app.put('/config/:hash', update);

  const remove = async (c: Context) => {
    const hash = await resolve(c.req.param('hash') ?? '');
    if (!hash.ok) return hash.error;
    const index = at(hash.value);
    return write(
      c,
      (view) => {
        const i = index(view);
        return i.ok ? ok({ kind: 'delete', index: i.value }) : i;
      },
      () => json(success('Tunnel deleted'), 200),
    );
  };
  app.delete('/config/:hash', remove);
  app.post('/config/:hash/delete', remove);

  app.onError(internalErrorHandler(onBug));
  return app;
}

const success = (message: string): SuccessBody => ({ status: 'success', message });

const etag = (version: string) => `"${version}"`;

/** The version a client read (If-Match: "<sha256>"), or null to write over what is on disk now. */
function ifMatch(c: Context): string | null {
  const h = c.req.header('if-match');
  if (h === undefined || h.trim() === '*') return null;
  return h.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

function json(body: unknown, status: 200 | 201, version?: string): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(version ? { etag: etag(version) } : {}) },
  });
}
