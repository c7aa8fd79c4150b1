import { isMap, isScalar, type Pair } from 'yaml';
import { ENDPOINT_EXPECTED, parseEndpoint, type Endpoint } from '../tunnel/endpoint.js';
import { DIRECTIONS, NO_REMOTE_PORT, type Direction, type TunnelSpec } from '../tunnel/spec.js';
import { DEFAULT_DIRECTION, DEFAULT_NAME, entryHash, readInteractive, writtenText } from './identity.js';
import { checkRemoteHost, REMOTE_HOST_EXPECTED } from './remote-host.js';
import { readHealthCheck } from './health-check.js';
import { MERGE_KEY, mergedPairs, mergeSources, flattenMerges } from './merge.js';
import { readSshOptions } from './ssh-options-map.js';
import { child, describe, keyText, quote, scalarText, type Tree } from './tree.js';

export const TUNNEL_FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction', 'interactive', 'ssh_options', 'health_check', 'shared'] as const;
type TunnelField = (typeof TUNNEL_FIELDS)[number];

const MAX_NAME = 128;
const ENTRY_EXPECTED = 'a tunnel: a map with remote_host, remote_port and local_port (and optionally name, direction, interactive, ssh_options, health_check, shared)';
const MISSING = 'nothing (the field is missing)';

/** A validated entry with the nodes later checks (duplicates, listen conflicts) point at. */
export interface TunnelEntry {
  spec: TunnelSpec;
  index: number;
  node: unknown;
  portNodes: { remote_port: unknown; local_port: unknown };
}

const isKnown = (k: string): k is TunnelField => (TUNNEL_FIELDS as readonly string[]).includes(k);
const isNull = (n: unknown) => n === undefined || n === null || (isScalar(n) && n.value === null);

/**
 * Reads one `tunnels:` entry. Every problem in it is recorded in `tree`; the spec is
 * returned only when the entry has none. `written` is the entry as plain data, kept
 * whole (unknown keys too) for the API's /list.
 */
export function readTunnel(
  tree: Tree,
  raw: unknown,
  index: number,
  fileSshOptions: Readonly<Record<string, string>>,
  written: unknown,
): TunnelEntry | null {
  const path = `tunnels[${index}]`;
  const node = tree.deref(raw);
  if (!isMap(node)) {
    tree.error(node ?? raw, path, ENTRY_EXPECTED, describe(node));
    return null;
  }
  const errorsBefore = tree.errors.length;

  const fields = new Map<TunnelField, Pair>();
  for (const pair of node.items) {
    const key = keyText(tree.deref(pair.key));
    if (key === null) {
      tree.error(pair.key, path, 'a field name as the key', describe(tree.deref(pair.key)));
    } else if (key === MERGE_KEY) {
      for (const bad of mergeSources((n) => tree.deref(n), pair.value).bad) {
        tree.error(bad, child(path, key), 'a map, or a list of maps, to merge (<<: *defaults)', describe(bad));
      }
    } else if (!isKnown(key)) {
      tree.warn(pair.key, child(path, key), `one of the tunnel fields ${TUNNEL_FIELDS.join(', ')}`, `${quote(key)}, an unknown key (kept as written, not used)`);
    } else if (!fields.has(key)) {
      // A repeated key is already an error from the YAML parser; the first one counts.
      fields.set(key, pair);
    }
  }
  // Fields a merge key brings count as if written here; the entry's own win (YAML 1.1).
  for (const [key, pair] of mergedPairs((n) => tree.deref(n), node)) {
    if (isKnown(key)) fields.set(key, pair);
    else tree.warn(pair.key, child(path, key), `one of the tunnel fields ${TUNNEL_FIELDS.join(', ')}`, `${quote(key)}, an unknown key (kept as written, not used)`);
  }
  const value = (f: TunnelField) => tree.deref(fields.get(f)?.value);
  const required = (f: TunnelField, expected: string): unknown => {
    const v = value(f);
    if (isNull(v)) tree.error(fields.get(f)?.value ?? node, child(path, f), expected, fields.has(f) ? describe(v) : MISSING);
    return isNull(v) ? undefined : v;
  };

  const name = readName(tree, value('name'), child(path, 'name'));

  let remoteHost: string | null = null;
  const hostNode = required('remote_host', REMOTE_HOST_EXPECTED);
  if (hostNode !== undefined) {
    const text = isScalar(hostNode) && typeof hostNode.value === 'string' ? hostNode.value : null;
    const checked = text === null ? null : checkRemoteHost(text);
    if (text === null || checked === null) tree.error(hostNode, child(path, 'remote_host'), REMOTE_HOST_EXPECTED, describe(hostNode));
    else if (!checked.ok) tree.error(hostNode, child(path, 'remote_host'), REMOTE_HOST_EXPECTED, `${quote(text)}, which ${checked.error}`);
    else remoteHost = checked.value;
  }

  // Optional, as in the reference implementation: absent means remote_to_local.
  let direction: Direction | null = DEFAULT_DIRECTION;
  const directionExpected = `${DIRECTIONS.slice(0, -1).join(', ')} or ${DIRECTIONS[DIRECTIONS.length - 1]}`;
  const directionNode = value('direction');
  if (!isNull(directionNode)) {
    const v = isScalar(directionNode) ? directionNode.value : undefined;
    if (typeof v === 'string' && (DIRECTIONS as readonly string[]).includes(v)) direction = v as Direction;
    else if (v !== '') {
      direction = null;
      tree.error(directionNode, child(path, 'direction'), directionExpected, describe(directionNode));
    }
  }

  // A SOCKS proxy (ssh -D) connects wherever its clients ask: it has no remote_port,
  // and its hash takes an empty one (SPEC §14).
  let remotePortNode: unknown;
  let remotePort: Endpoint | null;
  if (direction === 'socks') {
    remotePortNode = value('remote_port');
    remotePort = NO_REMOTE_PORT;
    // An empty one (a form's empty field) is none.
    if (!isNull(remotePortNode) && !(isScalar(remotePortNode) && remotePortNode.value === '')) {
      remotePort = null;
      tree.error(remotePortNode, child(path, 'remote_port'), 'no remote_port for direction socks (a SOCKS proxy connects wherever its clients ask)', describe(remotePortNode));
    }
  } else {
    remotePortNode = required('remote_port', ENDPOINT_EXPECTED);
    remotePort = remotePortNode === undefined ? null : readEndpoint(tree, remotePortNode, child(path, 'remote_port'));
  }
  const localPortNode = required('local_port', ENDPOINT_EXPECTED);
  const localPort = localPortNode === undefined ? null : readEndpoint(tree, localPortNode, child(path, 'local_port'));

  const interactiveNode = value('interactive');
  const reading = readInteractive(interactiveNode);
  const interactive = reading.ok && reading.value;
  if (!reading.ok) {
    tree.error(interactiveNode, child(path, 'interactive'), 'true or false (also "true", "false", yes, no in any case)', describe(interactiveNode));
  } else if (!reading.canonical) {
    tree.warn(interactiveNode, child(path, 'interactive'), `plain ${String(reading.value)}`, `${describe(interactiveNode)}, read as ${String(reading.value)}; write ${String(reading.value)}`);
  }

  // SPEC §14: absent means shared; `false` gives the tunnel a connection of its own.
  const sharedNode = value('shared');
  let shared = true;
  if (!isNull(sharedNode)) {
    const v = isScalar(sharedNode) ? sharedNode.value : undefined;
    if (typeof v === 'boolean') shared = v;
    else tree.error(sharedNode, child(path, 'shared'), 'true or false (false: a connection of its own, not shared with other tunnels to the host)', describe(sharedNode));
  }

  const own = readSshOptions(tree, fields.get('ssh_options')?.value, child(path, 'ssh_options'));
  const healthCheck = readHealthCheck(tree, fields.get('health_check')?.value, child(path, 'health_check'));
  if (direction === 'socks' && healthCheck?.type === 'http') {
    // A SOCKS port speaks SOCKS: a plain HTTP request through it never gets an answer.
    tree.error(fields.get('health_check')?.value, child(child(path, 'health_check'), 'type'), 'tcp for a SOCKS tunnel (a plain HTTP request to a SOCKS port gets no answer)', 'http');
  }

  if (tree.errors.length > errorsBefore || name === null || remoteHost === null || remotePort === null || localPort === null || direction === null) {
    return null;
  }
  const hash = entryHash((f) => value(f));
  return {
    spec: {
      hash,
      name,
      remote_host: remoteHost,
      remote_port: remotePort,
      local_port: localPort,
      direction,
      interactive,
      ssh_options: { ...fileSshOptions, ...own },
      ...(healthCheck ? { health_check: healthCheck } : {}),
      ...(shared ? {} : { shared: false }),
      written: isPlainObject(written) ? (flattenMerges(written) as Record<string, unknown>) : {},
      line: tree.at(node).line,
    },
    index,
    node,
    portNodes: { remote_port: remotePortNode, local_port: localPortNode },
  };
}

function readName(tree: Tree, node: unknown, field: string): string | null {
  // The scalar's text as written (`name: 2024`, `name: true`), like the reference implementation reads it.
  const text = writtenText(node);
  if (text === null) {
    if (isScalar(node) && node.value === null && typeof node.comment === 'string' && /^\S/.test(node.comment)) {
      // `name: #1 primary`: YAML reads a comment (and autossh-tunnel-dockerized read the name).
      tree.warn(node, field, 'a name', `nothing: "#${node.comment}" after it is a comment to YAML, so the tunnel is "${DEFAULT_NAME}"; write name: ${JSON.stringify(`#${node.comment}`)} to make it the name`);
    }
    if (isNull(node) || (isScalar(node) && node.value === '')) return DEFAULT_NAME;
    tree.error(node, field, `a name of at most ${MAX_NAME} characters without control characters`, describe(node));
    return null;
  }
  const expected = `a name of at most ${MAX_NAME} characters without control characters`;
  if (/\p{Cc}/u.test(text)) tree.error(node, field, expected, `${quote(text)}, which holds a control character`);
  else if (text.length > MAX_NAME) tree.error(node, field, expected, `a name of ${text.length} characters`);
  else return text;
  return null;
}

/** Ports are an integer or a string; the text as written (`5432` → "5432") is what the hash uses. */
function readEndpoint(tree: Tree, node: unknown, field: string): Endpoint | null {
  const text = scalarText(node);
  const parsed = text === null ? null : parseEndpoint(text);
  if (parsed === null || !parsed.ok) {
    tree.error(node, field, ENDPOINT_EXPECTED, describe(node));
    return null;
  }
  return parsed.value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
