/**
 * The stages of one relayed request, as a pure state machine: `next(stage, event)`
 * gives the next stage and the one effect the relay (relay.ts) performs, for an answer
 * passed as it came and for a translated one alike. No I/O, no clock: every transition is tested as
 * a table (tests/proxy/relay/relay-stages.test.ts).
 *
 *                 head: pass on                      body end
 *   waiting ─────────────────────▶ streaming ─────────────────────▶ done (complete)
 *     │  │                            │ timeout, provider died, cut mid-event,
 *     │  │                            │ undecodable ▶ done (error event / cut)
 *     │  │  head: hold back           │
 *     │  └────────────────▶ holding ──┴── body end ▶ done (complete: the held answer)
 *     │                        └── timeout, provider died ▶ done (error answer)
 *     │ timeout, unreachable, 429/5xx head ▶ done (declined, while `fallible`:
 *     │     the caller takes the request elsewhere; else the error answer or the head passed on)
 *     │ an undecodable error head with a key in use ▶ done (error answer)
 *     └── client closed (from any stage but done) ▶ done (cancelled)
 */

import { unreachable } from '../../kernel/unreachable.js';

/** Where a relay is. */
export type RelayStage =
  /** The request went to the provider; no status line yet. */
  | { readonly id: 'waiting' }
  /** The provider's answer passes to the client as it arrives (the head went, or goes with the first bytes). */
  | { readonly id: 'streaming' }
  /** The answer is kept until complete: an error to search for the key, or an answer translated whole. Nothing reached the client. */
  | { readonly id: 'holding' }
  | { readonly id: 'done' };

/** What the relay made of the provider's status line. */
export type HeadVerdict =
  /** Passed on as it comes. */
  | 'stream'
  /** Kept until complete. */
  | 'hold'
  /** Not passable at all (an error the proxy cannot search for the key): the proxy's own error instead. */
  | 'refuse';

/**
 * What becomes of a status line. Passed as it came (`translated` false), only an error
 * while a key is in use is held (to search it for the key), or refused when its
 * encoding cannot be searched; translated, every answer but a 2xx event stream is held
 * (to be translated whole), and one that cannot be decoded cannot be translated.
 */
export function headVerdict(status: number, translated: boolean, keyed: boolean, opaque: boolean, eventStream: boolean): HeadVerdict {
  if (translated) return opaque ? 'refuse' : status < 400 && eventStream ? 'stream' : 'hold';
  return status >= 400 && keyed ? (opaque ? 'refuse' : 'hold') : 'stream';
}

export type RelayEvent =
  /** The status line. `retryable`: 429 or 5xx, which another target may serve instead. */
  | { readonly type: 'head'; readonly retryable: boolean; readonly verdict: HeadVerdict }
  /** The body is complete. */
  | { readonly type: 'end' }
  /** The provider closed the connection, cut an event in half, or sent a body that does not decode. */
  | { readonly type: 'broken' }
  /** No answer: the connection failed before a status line. */
  | { readonly type: 'unreachable' }
  /** The timer ran out: for the head, or for the next piece of a body. */
  | { readonly type: 'timeout' }
  | { readonly type: 'client_closed' };

export type RelayEffect =
  /** Nothing reached the client: the relay stops, and its caller takes the request elsewhere. */
  | 'decline'
  /** Write the head (and pass the body on as it comes). */
  | 'pass_head'
  /** Keep the body until it is complete. */
  | 'hold'
  /** The body is complete: the last bytes, or the held answer, to the client. */
  | 'complete'
  /** Nothing reached the client: the proxy's own error answer (502, 504). */
  | 'error_answer'
  /** The answer began: it ends with the proxy's error event, or is cut so that it cannot pass for complete. */
  | 'error_event'
  /** The client left: the upstream request is abandoned and the fact logged. */
  | 'cancel'
  /** An event of a stage that is over (an upstream callback after the client left, say). */
  | 'ignore';

export interface Transition {
  readonly stage: RelayStage;
  readonly effect: RelayEffect;
}

const WAITING: RelayStage = { id: 'waiting' };
const STREAMING: RelayStage = { id: 'streaming' };
const HOLDING: RelayStage = { id: 'holding' };
const DONE: RelayStage = { id: 'done' };

// Made once: a request's transitions allocate nothing.
const to = (stage: RelayStage, effect: RelayEffect): Transition => ({ stage, effect });
const STAY: Record<RelayStage['id'], Transition> = { waiting: to(WAITING, 'ignore'), streaming: to(STREAMING, 'ignore'), holding: to(HOLDING, 'ignore'), done: to(DONE, 'ignore') };
const DECLINE = to(DONE, 'decline');
const PASS_HEAD = to(STREAMING, 'pass_head');
const HOLD = to(HOLDING, 'hold');
const COMPLETE = to(DONE, 'complete');
const ERROR_ANSWER = to(DONE, 'error_answer');
const ERROR_EVENT = to(DONE, 'error_event');
const CANCEL = to(DONE, 'cancel');

/**
 * The next stage. `fallible`: the request may still go to another target (this is not
 * its last), so a failure before anything reached the client is declined rather than
 * answered.
 */
export function next(stage: RelayStage, event: RelayEvent, fallible: boolean): Transition {
  switch (stage.id) {
    case 'waiting':
      switch (event.type) {
        case 'head':
          if (event.retryable && fallible) return DECLINE;
          return event.verdict === 'stream' ? PASS_HEAD : event.verdict === 'hold' ? HOLD : ERROR_ANSWER;
        case 'unreachable':
        case 'timeout':
          return fallible ? DECLINE : ERROR_ANSWER;
        case 'client_closed':
          return CANCEL;
        case 'end':
        case 'broken':
          // Only after a head; an upstream that reports them before one is answered as unreachable.
          return STAY.waiting;
        default:
          return unreachable(event, 'relay event');
      }
    case 'streaming':
    case 'holding':
      switch (event.type) {
        case 'end':
          return COMPLETE;
        case 'broken':
        case 'timeout':
        case 'unreachable':
          return stage.id === 'streaming' ? ERROR_EVENT : ERROR_ANSWER;
        case 'client_closed':
          return CANCEL;
        case 'head':
          return STAY[stage.id];
        default:
          return unreachable(event, 'relay event');
      }
    case 'done':
      return STAY.done;
    default:
      return unreachable(stage, 'relay stage');
  }
}

