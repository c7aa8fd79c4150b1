import { edited, lastNamed, membersOf, valueIs, type Edit, type Member } from './json-members.js';

/**
 * A chat or completions stream reports its usage only when asked
 * (`stream_options: {"include_usage": true}`, SPEC §9b): for a client whose tokens are
 * counted (`tpm`) the proxy asks on its behalf, and keeps from it what it did not ask
 * for (usage-strip.ts). This is the body the provider gets then: the client's, with
 * `include_usage` set and every other byte as it was.
 */

/** The endpoints whose streams report usage only when asked. */
export const USAGE_ON_REQUEST: ReadonlySet<string> = new Set(['/chat/completions', '/completions']);

const ASKED = '{"include_usage":true}';

/**
 * `body` asking for the stream's usage, or null when there is nothing to add: it does
 * not stream, the client asked already, or its `stream_options` is a value that cannot
 * ask (a string, a list: the provider's to refuse). Every `stream_options` member is
 * edited (duplicates too: providers' parsers may keep the first where JSON.parse keeps
 * the last); whether the client asked is read as JSON.parse reads the body.
 */
export function askingUsage(body: Buffer): Buffer | null {
  const top = membersOf(body);
  if (top === null) return null;
  const stream = lastNamed(top, 'stream');
  if (stream === undefined || !valueIs(body, stream, 'true')) return null;
  const options = top.filter((m) => m.name === 'stream_options');
  const last = top[top.length - 1];
  if (options.length === 0) return last === undefined ? null : edited(body, [{ from: last.valueEnd, to: last.valueEnd, text: `,"stream_options":${ASKED}` }]);
  const effective = options[options.length - 1];
  if (effective !== undefined && asks(body, effective)) return null;
  const edits: Edit[] = [];
  for (const o of options) {
    const e = asking(body, o);
    if (e === null) return null;
    edits.push(...e);
  }
  return edited(body, edits);
}

/** Whether `stream_options` asks already: an object whose (last) `include_usage` is true. */
function asks(body: Buffer, options: Member): boolean {
  const inner = membersOf(body, options.valueStart, options.valueEnd);
  const include = inner === null ? undefined : lastNamed(inner, 'include_usage');
  return include !== undefined && valueIs(body, include, 'true');
}

/** The edits that make one `stream_options` value ask; null for a value that is neither an object nor null. */
function asking(body: Buffer, options: Member): Edit[] | null {
  if (valueIs(body, options, 'null')) return [{ from: options.valueStart, to: options.valueEnd, text: ASKED }];
  const inner = membersOf(body, options.valueStart, options.valueEnd);
  if (inner === null) return null;
  const includes = inner.filter((m) => m.name === 'include_usage');
  if (includes.length > 0) return includes.map((m) => ({ from: m.valueStart, to: m.valueEnd, text: 'true' }));
  const first = inner[0];
  if (first === undefined) return [{ from: options.valueStart, to: options.valueEnd, text: ASKED }];
  return [{ from: first.keyStart, to: first.keyStart, text: '"include_usage":true,' }];
}
