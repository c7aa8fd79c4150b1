import type { RelayObserver } from '../relay/relay-request.js';

/**
 * Who made each stored response that passed through the proxy, so that the calls by
 * id (`responses.retrieve`, `.delete`, `.cancel`, `.inputItems.list`:
 * `/v1/responses/{id}…`, which name no model) reach the server that holds it, and only
 * for the client that made it (endpoints/admission.ts). Kept in memory for the most
 * recent MAX_OWNERS responses; a restart forgets them (then `default_provider`, if set,
 * gets such a call from a key that may use all of its models).
 */
export const MAX_OWNERS = 10_000;

/** Who made a stored response: the provider that holds it, the client that asked, and the target's model. */
export interface ResponseOwner {
  provider: string;
  /** The client of `proxy.clients` whose key it came with; null for a shared key or an open proxy. */
  client: string | null;
  /** The target it was made with, `<prefix>:<model>`: a client no longer allowed it is refused its responses. */
  model: string;
}

export class ResponseOwners {
  private readonly owners = new Map<string, ResponseOwner>();

  constructor(private readonly max = MAX_OWNERS) {}

  remember(id: string, owner: ResponseOwner): void {
    // Re-inserted so that the map's order stays oldest first.
    this.owners.delete(id);
    this.owners.set(id, owner);
    const oldest = this.owners.keys().next();
    if (this.owners.size > this.max && oldest.done !== true) this.owners.delete(oldest.value);
  }

  ownerOf(id: string): ResponseOwner | undefined {
    return this.owners.get(id);
  }
}

/** Response ids as servers make them (`resp_…`): nothing else is taken from a body or a path. */
export const RESPONSE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
const HEAD_BYTES = 4096;
const KEY = Buffer.from('"id"');
const [SPACE, TAB, CR, LF, COLON, QUOTE] = [32, 9, 13, 10, 58, 34];

/**
 * The response's id in the first piece of a `/v1/responses` answer: the first `"id"`
 * string in it. That is the response's own in both forms the API answers: the
 * response object starts with it, and a stream's first event (`response.created`)
 * holds the response object before any item with an id of its own.
 */
export function responseIdIn(chunk: Buffer): string | null {
  const head = chunk.length > HEAD_BYTES ? chunk.subarray(0, HEAD_BYTES) : chunk;
  const at = head.indexOf(KEY);
  if (at === -1) return null;
  let i = at + KEY.length;
  const skip = (): void => {
    while (i < head.length && (head[i] === SPACE || head[i] === TAB || head[i] === CR || head[i] === LF)) i++;
  };
  skip();
  if (head[i] !== COLON) return null;
  i++;
  skip();
  if (head[i] !== QUOTE) return null;
  const end = head.indexOf(QUOTE, i + 1);
  if (end === -1) return null;
  const id = head.toString('latin1', i + 1, end);
  return RESPONSE_ID.test(id) ? id : null;
}

type Observer = RelayObserver;

/**
 * A request's observer that also notes who created the response it answers: the
 * start of a successful `/v1/responses` answer names the response (looked for in its
 * first HEAD_BYTES, however they arrive: the id may be cut between two pieces, or
 * follow a stream's comment lines), and its owner is the client and the target being
 * tried at that moment.
 */
export function notingOwner(observer: Observer, owners: ResponseOwners, current: { owner(): ResponseOwner; readonly res: { statusCode: number } }): Observer {
  let head: Buffer | null = Buffer.alloc(0);
  return {
    tap(chunk) {
      if (head !== null) {
        head = current.res.statusCode < 300 ? Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]) : null;
        const id = head === null ? null : responseIdIn(head);
        if (id !== null) owners.remember(id, current.owner());
        if (id !== null || (head !== null && head.length >= HEAD_BYTES)) head = null;
      }
      observer.tap(chunk);
    },
    read: (chunk) => observer.read(chunk),
    sent: (bytes) => observer.sent(bytes),
    metered: observer.metered,
    watch: (relay) => observer.watch(relay),
    cut: () => observer.cut(),
  };
}
