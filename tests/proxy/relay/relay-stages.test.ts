/** The relay's stages as a table: every stage, every event, fallible or not (relay/relay-stages.ts). */
import { describe, expect, it } from 'vitest';
import { next, type RelayEvent, type RelayStage } from '../../../src/proxy/relay/relay-stages.js';

const waiting: RelayStage = { id: 'waiting' };
const streaming: RelayStage = { id: 'streaming' };
const holding: RelayStage = { id: 'holding' };
const done: RelayStage = { id: 'done' };

const head = (verdict: 'stream' | 'hold' | 'refuse', retryable = false): RelayEvent => ({ type: 'head', retryable, verdict });
const end: RelayEvent = { type: 'end' };
const broken: RelayEvent = { type: 'broken' };
const unreachable: RelayEvent = { type: 'unreachable' };
const timeout: RelayEvent = { type: 'timeout' };
const clientClosed: RelayEvent = { type: 'client_closed' };

describe('relay stages', () => {
  it.each([
    // stage, event, fallible, next stage, effect
    [waiting, head('stream'), false, 'streaming', 'pass_head'],
    [waiting, head('stream'), true, 'streaming', 'pass_head'],
    [waiting, head('hold'), false, 'holding', 'hold'],
    [waiting, head('refuse'), false, 'done', 'error_answer'],
    // A 429 or 5xx goes elsewhere while another target may take it; the last target's is the client's.
    [waiting, head('stream', true), true, 'done', 'decline'],
    [waiting, head('hold', true), true, 'done', 'decline'],
    [waiting, head('refuse', true), true, 'done', 'decline'],
    [waiting, head('stream', true), false, 'streaming', 'pass_head'],
    [waiting, head('hold', true), false, 'holding', 'hold'],
    [waiting, head('refuse', true), false, 'done', 'error_answer'],
    [waiting, unreachable, true, 'done', 'decline'],
    [waiting, unreachable, false, 'done', 'error_answer'],
    [waiting, timeout, true, 'done', 'decline'],
    [waiting, timeout, false, 'done', 'error_answer'],
    [waiting, clientClosed, true, 'done', 'cancel'],
    [waiting, end, false, 'waiting', 'ignore'],
    [waiting, broken, false, 'waiting', 'ignore'],
    // Once the head was taken, nothing is declined: the answer is this target's.
    [streaming, end, true, 'done', 'complete'],
    [streaming, broken, true, 'done', 'error_event'],
    [streaming, timeout, true, 'done', 'error_event'],
    [streaming, unreachable, true, 'done', 'error_event'],
    [streaming, clientClosed, true, 'done', 'cancel'],
    [streaming, head('stream'), true, 'streaming', 'ignore'],
    [holding, end, true, 'done', 'complete'],
    [holding, broken, true, 'done', 'error_answer'],
    [holding, timeout, false, 'done', 'error_answer'],
    [holding, unreachable, false, 'done', 'error_answer'],
    [holding, clientClosed, false, 'done', 'cancel'],
    [holding, head('hold'), false, 'holding', 'ignore'],
  ] as const)('%o + %o (fallible %s) → %s, %s', (stage, event, fallible, nextStage, effect) => {
    const t = next(stage, event, fallible);
    expect(t.stage.id).toBe(nextStage);
    expect(t.effect).toBe(effect);
  });

  it('done ignores every event', () => {
    for (const event of [head('stream'), head('hold', true), end, broken, unreachable, timeout, clientClosed]) {
      for (const fallible of [true, false]) expect(next(done, event, fallible)).toEqual({ stage: { id: 'done' }, effect: 'ignore' });
    }
  });
});
