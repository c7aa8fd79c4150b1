import type { ProviderFormat } from '../../config/proxy-schema.js';
import { err, type Result } from '../../kernel/result.js';
import { splitModel } from './model-field.js';
import type { TunnelLookup } from '../deps.js';
import { invalidRequest, type ProxyError } from '../errors.js';
import { withCredentialFor, type ProviderEntry, type Runtime, type Target } from './providers.js';
import type { Provider } from '../relay/provider.js';

const notFound = (message: string): Result<never, ProxyError> => ({
  ok: false,
  error: { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model', message },
});

const shown = (text: string): string => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);

/**
 * Where a model name goes, in this order: an alias (its targets, in order); then
 * `<prefix>:<model>` with a known prefix, split at the first colon; then the whole
 * name to `default_provider`. Anything else is 404 `model_not_found`.
 */
export function targetsFor(model: string, runtime: Runtime): Result<Target[], ProxyError> {
  const alias = runtime.aliases.get(model);
  if (alias !== undefined) return { ok: true, value: alias };
  const split = splitModel(model);
  if (split !== null && runtime.providers.has(split.prefix)) {
    if (split.model === '') {
      return err(invalidRequest(`model ${shown(model)} names no model after the prefix`, 'model'));
    }
    return { ok: true, value: [split] };
  }
  if (runtime.defaultProvider !== null) return { ok: true, value: [{ prefix: runtime.defaultProvider, model }] };
  const known = [...runtime.providers.keys()];
  const list = known.length === 0 ? 'no providers are configured' : `known prefixes: ${known.join(', ')}`;
  const aliases = runtime.aliases.size === 0 ? '' : `; aliases: ${[...runtime.aliases.keys()].slice(0, 20).join(', ')}`;
  if (split === null) return notFound(`model ${shown(model)} has no provider prefix; expected "<prefix>:<model_name>" (${list}${aliases})`);
  return notFound(`no provider ${shown(split.prefix)} (${list}${aliases})`);
}

/** The 400 for a request whose format the provider does not take. */
export function formatMismatch(endpointPath: string, format: ProviderFormat, entry: ProviderEntry): ProxyError {
  return {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_format',
    param: 'model',
    message: `provider "${entry.prefix}" takes the ${entry.formats.join(' and ')} format${entry.formats.length > 1 ? 's' : ''}, and ${endpointPath} is the ${format} format; send the request to a provider with format: ${format}, or use the endpoint of its format`,
  };
}

/**
 * The provider as a request reaches it right now: a tunnel-bound one at its
 * tunnel's local end, refused at once (503, naming the tunnel and its state)
 * while the tunnel is not RUNNING.
 */
export function locate(entry: ProviderEntry, format: ProviderFormat, lookup: TunnelLookup | undefined): Result<Provider, ProxyError> {
  if (entry.kind === 'url') return { ok: true, value: withCredentialFor(entry.provider, format) };
  const refuse = (code: string, message: string): Result<never, ProxyError> => ({ ok: false, error: { status: 503, type: 'upstream_error', code, message } });
  if (lookup === undefined) {
    return refuse(
      'tunnel_unavailable',
      `provider "${entry.prefix}" is bound to tunnel '${entry.tunnel}', and this server runs no tunnels (tunnel-manager proxy); serve the proxy from the daemon (tunnel-manager serve), or give "${entry.prefix}" a base_url`,
    );
  }
  const t = lookup(entry.tunnel);
  if (t === undefined) {
    return refuse('tunnel_unknown', `provider "${entry.prefix}" is bound to tunnel '${entry.tunnel}', and no tunnel of that name forwards a local port (remote_to_local)`);
  }
  if (t.state !== 'RUNNING') {
    return refuse('tunnel_not_running', `provider "${entry.prefix}" is the local end of tunnel '${entry.tunnel}', which is ${t.state}, not RUNNING`);
  }
  return { ok: true, value: withCredentialFor(entry.at(t.localHost, t.localPort), format) };
}
