import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/api/sse-parser.js';

describe('server-sent events parser (tunnel-cli and the panel)', () => {
  it('parses events and comments split anywhere, with \\n or \\r\\n', () => {
    const text = ': connected\n\nevent: status\ndata: {"a":1}\n\n: keep-alive\r\n\r\nevent: reload\r\ndata: x\r\ndata: y\r\n\r\ndata: plain\n\n';
    for (const size of [1, 2, 3, 7, text.length]) {
      const p = new SseParser();
      const items = [];
      for (let i = 0; i < text.length; i += size) items.push(...p.push(text.slice(i, i + size)));
      expect(items, `chunks of ${size}`).toEqual([
        { kind: 'comment', text: 'connected' },
        { kind: 'event', event: 'status', data: '{"a":1}' },
        { kind: 'comment', text: 'keep-alive' },
        { kind: 'event', event: 'reload', data: 'x\ny' },
        { kind: 'event', event: 'message', data: 'plain' },
      ]);
    }
  });

  it('waits when a chunk ends in CR (maybe half a CRLF); lone CRs end lines; an event without data is dropped', () => {
    const p = new SseParser();
    expect(p.push(': connected\n\nevent: status\ndata: {"a"')).toEqual([{ kind: 'comment', text: 'connected' }]);
    expect(p.push(':1}\n\r\nevent: reload\r\ndata: {}\r')).toEqual([{ kind: 'event', event: 'status', data: '{"a":1}' }]);
    expect(p.push('\n\r\n')).toEqual([{ kind: 'event', event: 'reload', data: '{}' }]);
    expect(p.push('data: a\rdata:b\r\r\n')).toEqual([{ kind: 'event', event: 'message', data: 'a\nb' }]);
    expect(p.push('event: x\n\n')).toEqual([]);
  });
});
