import { edited, membersOf, valueIs, type Edit, type Member } from './json-members.js';

/**
 * What the provider sent because the proxy asked for usage on a client's behalf
 * (usage-request.ts), kept from a client that did not ask: the chunk that carries only
 * the usage (`"choices": []`) is left out, and the `usage` member of any other chunk
 * is cut from it — `"usage": null` on every chunk, as OpenAI's API sends once asked,
 * or counts beside the last choice, as some servers send. Every other byte passes as
 * it came. The record has read the usage already, from the provider's bytes.
 *
 * Works on whole events (what the SSE framing hands on); only events whose single
 * `data:` line holds `"usage"` are looked at, and only a top-level `usage` member is
 * touched: the word inside a string or a nested object stays.
 */

const USAGE = Buffer.from('"usage"');
const DATA = Buffer.from('data:');
const [LF, CR, SPACE] = [0x0a, 0x0d, 0x20];

/** `events` (whole server-sent events) without the usage the client did not ask for; the same buffer when there is none. */
export function withoutUsage(events: Buffer): Buffer {
  if (events.indexOf(USAGE) === -1) return events;
  const parts: Buffer[] = [];
  let copied = 0;
  let i = 0;
  const n = events.length;
  while (i < n) {
    const eventStart = i;
    let dataStart = -1;
    let dataEnd = -1;
    let dataLines = 0;
    // The event's lines, up to the blank line that ends it.
    while (i < n) {
      let end = i;
      while (end < n && events[end] !== LF && events[end] !== CR) end++;
      const next = end < n && events[end] === CR && events[end + 1] === LF ? end + 2 : end + 1;
      const blank = end === i;
      if (!blank && events.compare(DATA, 0, DATA.length, i, Math.min(n, i + DATA.length)) === 0) {
        dataLines++;
        dataStart = events[i + DATA.length] === SPACE ? i + DATA.length + 1 : i + DATA.length;
        dataEnd = end;
      }
      i = Math.min(n, next);
      if (blank) break;
    }
    if (dataLines !== 1) continue;
    const at = events.indexOf(USAGE, dataStart);
    if (at === -1 || at >= dataEnd) continue;
    const cut = cutUsage(events, dataStart, dataEnd);
    if (cut === null) continue;
    parts.push(events.subarray(copied, cut === 'drop' ? eventStart : dataStart));
    if (cut !== 'drop') parts.push(cut);
    copied = cut === 'drop' ? i : dataEnd;
  }
  if (copied === 0) return events;
  parts.push(events.subarray(copied));
  return Buffer.concat(parts);
}

/**
 * The chunk at `[start, end)` without its top-level `usage`: 'drop' when it held counts
 * and no choice (the usage chunk), null when there is nothing to cut (no such member,
 * or data that is not a JSON object).
 */
function cutUsage(b: Buffer, start: number, end: number): Buffer | 'drop' | null {
  const chunk = b.subarray(start, end);
  const members = membersOf(chunk);
  if (members === null) return null;
  const usage = members.filter((m) => m.name === 'usage');
  if (usage.length === 0) return null;
  const counts = usage.some((m) => !valueIs(chunk, m, 'null'));
  if (counts && members.every((m) => m.name !== 'choices' || emptyList(chunk, m))) return 'drop';
  if (usage.length > 1) {
    // Duplicate keys (no provider sends them): the object is written again from the members kept, each as it came.
    const kept = members.filter((m) => m.name !== 'usage').map((m) => chunk.toString('utf8', m.keyStart, m.valueEnd));
    return Buffer.from(`{${kept.join(',')}}`);
  }
  return edited(chunk, [removal(members, usage[0] as Member)]);
}

/** The bytes to remove with a member: from the end of the one before it, or for the first member up to the key of the next. */
function removal(members: readonly Member[], m: Member): Edit {
  const i = members.indexOf(m);
  const before = members[i - 1];
  if (before !== undefined) return { from: before.valueEnd, to: m.valueEnd, text: '' };
  const after = members[i + 1];
  return { from: m.keyStart, to: after === undefined ? m.valueEnd : after.keyStart, text: '' };
}

function emptyList(b: Buffer, m: Member): boolean {
  if (b[m.valueStart] !== 0x5b) return false;
  for (let i = m.valueStart + 1; i < m.valueEnd - 1; i++) if (b[i] !== SPACE && b[i] !== LF && b[i] !== CR && b[i] !== 0x09) return false;
  return true;
}
