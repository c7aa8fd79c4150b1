import { err, ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import type { BodyTranslation, EventTranslation } from '../relay/body-translation.js';
import { isObject } from './shape.js';
import { readEvents } from './sse-events.js';
import type { AnswerTranslation, StreamTranslator } from './stream.js';
import { upstreamError } from './upstream-error.js';

/**
 * A translation's answers as the relay's plug (relay/body-translation.ts): the relay
 * hands over the provider's bytes (whole events, a whole answer, an error answer) and
 * gets the client's back; the translators work on events and JSON values.
 */
export function answerPlug(answer: AnswerTranslation): Pick<BodyTranslation, 'whole' | 'stream' | 'error'> {
  return {
    whole: (text, status, prefix) => wholeAnswer(answer, text, status, prefix),
    stream: () => new EventsOf(answer.stream()),
    error(status, text, prefix) {
      const own = upstreamError(status, text, prefix);
      return answer.error?.(status, own, prefix) ?? own;
    },
  };
}

function wholeAnswer(answer: AnswerTranslation, text: string, status: number, prefix: string): Result<string, ProxyError> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!isObject(parsed)) return err({ status: 502, type: 'upstream_error', code: 'upstream_bad_answer', message: `provider "${prefix}" answered ${status} with a body that is not a JSON object` });
  const translated = answer.json(parsed);
  return translated.ok ? ok(JSON.stringify(translated.value)) : translated;
}

/** A stream's translator fed whole events as the relay's framing cuts them. */
class EventsOf implements EventTranslation {
  constructor(private readonly stream: StreamTranslator) {}

  events(whole: Buffer): string {
    let out = '';
    for (const e of readEvents(whole.toString('utf8'))) out += this.stream.event(e);
    return out;
  }

  end(): string | null {
    return this.stream.end();
  }

  fail(e: ProxyError): string {
    return this.stream.fail(e);
  }
}
