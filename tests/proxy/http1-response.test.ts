import { describe, expect, it } from 'vitest';
import { createResponseParser } from '../../src/proxy/http1-response.js';

interface Seen {
  heads: { status: number; raw: string[] }[];
  body: string;
  pieces: number;
  end: boolean | null;
  error: string | null;
}

/** Feeds `parts` one by one (stopping at the first error), then an end of stream when `eof`. */
function parse(parts: (string | Buffer)[], eof = false): Seen {
  const seen: Seen = { heads: [], body: '', pieces: 0, end: null, error: null };
  const parser = createResponseParser({
    head: (status, raw) => seen.heads.push({ status, raw }),
    data: (chunk) => {
      seen.body += chunk.toString('latin1');
      seen.pieces++;
    },
    end: (reusable) => {
      expect(seen.end).toBeNull();
      seen.end = reusable;
    },
  });
  for (const part of parts) {
    seen.error = parser.push(Buffer.isBuffer(part) ? part : Buffer.from(part, 'latin1'));
    if (seen.error !== null) return seen;
  }
  if (eof) seen.error = parser.eof();
  return seen;
}

/** Every way of cutting `text` in two, plus byte by byte. */
function splits(text: string): string[][] {
  const out: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

const LENGTH = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}';
const CHUNKED =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  '6\r\ndata: \r\n' +
  '9;ext=1\r\n{"n":1}\n\n\r\n' +
  '0\r\nx-trailer: t\r\n\r\n';

describe('the upstream response parser', () => {
  it('reads a content-length answer however the bytes are cut, keeping the header names as sent', () => {
    for (const parts of splits(LENGTH)) {
      const seen = parse(parts);
      expect(seen.error).toBeNull();
      expect(seen.heads).toEqual([{ status: 200, raw: ['Content-Type', 'application/json', 'Content-Length', '11'] }]);
      expect(seen.body).toBe('{"ok":true}');
      expect(seen.end).toBe(true);
    }
  });

  it('reads a chunked answer (extensions, trailers) however the bytes are cut, passing on only the data', () => {
    for (const parts of splits(CHUNKED)) {
      const seen = parse(parts);
      expect(seen.error, JSON.stringify(parts)).toBeNull();
      expect(seen.heads[0]!.status).toBe(200);
      expect(seen.body).toBe('data: {"n":1}\n\n');
      expect(seen.end).toBe(true);
    }
  });

  it('hands on body bytes as they arrive, not when the answer is complete', () => {
    const seen = parse(['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n20\r\nfirst part']);
    expect(seen.body).toBe('first part');
    expect(seen.end).toBeNull();
  });

  it('reads a body that ends with the connection, and never reuses that connection', () => {
    const seen = parse(['HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"a":', '1}'], true);
    expect(seen.error).toBeNull();
    expect(seen.body).toBe('{"a":1}');
    expect(seen.end).toBe(false);
  });

  it('says when a connection may carry another request', () => {
    const reusable = (head: string, tail = '') => parse([`${head}\r\ncontent-length: 2\r\n\r\nok${tail}`]).end;
    expect(reusable('HTTP/1.1 200 OK')).toBe(true);
    expect(reusable('HTTP/1.1 200 OK\r\nConnection: close')).toBe(false);
    expect(reusable('HTTP/1.0 200 OK')).toBe(false);
    expect(reusable('HTTP/1.0 200 OK\r\nconnection: Keep-Alive')).toBe(true);
    expect(reusable('HTTP/1.1 200 OK', 'extra bytes')).toBe(false);
    // A length next to a transfer coding: the coding wins, and the connection is not trusted again.
    expect(parse(['HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n']).end).toBe(false);
  });

  it('skips interim 1xx answers and knows that 204 and 304 have no body', () => {
    const seen = parse(['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n', LENGTH]);
    expect(seen.heads.map((h) => h.status)).toEqual([200]);
    expect(seen.body).toBe('{"ok":true}');
    for (const status of ['204 No Content', '304 Not Modified']) {
      const empty = parse([`HTTP/1.1 ${status}\r\nx: y\r\n\r\n`]);
      expect(empty.end).toBe(true);
      expect(empty.body).toBe('');
    }
    expect(parse(['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n']).end).toBe(true);
  });

  it('refuses what is not HTTP/1.x', () => {
    const cases: [string, RegExp][] = [
      ['SSH-2.0-OpenSSH_9.2p1\r\n\r\n', /not an HTTP\/1\.x status line/],
      ['HTTP/2 200\r\n\r\n', /not an HTTP\/1\.x status line/],
      ['HTTP/1.1 200 OK\r\nbad header\r\n\r\n', /malformed header line/],
      ['HTTP/1.1 200 OK\r\n folded: x\r\n\r\n', /malformed header line/],
      ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n', /bad content-length/],
      ['HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /bad content-length/],
      ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/],
      ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokay\r\n', /chunk data longer than its size/],
      ['HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
    ];
    for (const [text, error] of cases) expect(parse([text]).error, text).toMatch(error);
    expect(parse([`HTTP/1.1 200 OK\r\nx: ${'y'.repeat(70 * 1024)}`]).error).toMatch(/larger than 64 KiB/);
  });

  it('tells a connection that closed early from a complete answer', () => {
    expect(parse([], true).error).toBe('the connection closed without a response');
    expect(parse(['HTTP/1.1 200 OK\r\ncontent-le'], true).error).toBe('the connection closed without a response');
    expect(parse(['HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'], true).error).toBe('the connection closed before the response was complete');
    expect(parse(['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab'], true).error).toBe('the connection closed before the response was complete');
    expect(parse([LENGTH], true).error).toBeNull();
  });

  it('passes body bytes through as views of what arrived, without copying', () => {
    const input = Buffer.from(LENGTH, 'latin1');
    let piece: Buffer | null = null;
    const parser = createResponseParser({ head: () => {}, data: (c) => (piece = c), end: () => {} });
    parser.push(input);
    expect(piece!.buffer).toBe(input.buffer);
  });
});
