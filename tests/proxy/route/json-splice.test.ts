import { describe, expect, it } from 'vitest';
import { readJsonBody } from '../../../src/proxy/request/json-body.js';
import { spliceTopLevelString, topLevelValueSpans } from '../../../src/proxy/route/json-splice.js';

const splice = (text: string, value = 'bare'): string => spliceTopLevelString(Buffer.from(text), 'model', value).toString('utf8');

describe('splicing the model into the raw body', () => {
  it('changes the top-level model value and not one other byte', () => {
    const body = '{ "seed" : 9223372036854775807,\n\t"model":"gpu1:llama3:8b" ,"x":1.50e+3, "s":"caf\\u00e9 \\"q\\"", "é":"ü"}';
    expect(splice(body)).toBe(body.replace('"gpu1:llama3:8b"', '"bare"'));
  });

  it('leaves "model" inside strings, nested objects and arrays alone', () => {
    const body = '{"a":{"model":"x:y"},"b":["model",{"model":"z"}],"c":"\\"model\\":\\"q\\"","model":"p:m","d":{"e":[[{}],"}"]}}';
    const out = JSON.parse(splice(body)) as Record<string, unknown>;
    expect(out).toEqual({ ...(JSON.parse(body) as object), model: 'bare' });
    expect(splice(body)).toBe(body.replace('"model":"p:m"', '"model":"bare"'));
  });

  it('recognises an escaped key and replaces every duplicate', () => {
    expect(splice('{"mod\\u0065l":"a:b","model" :"c:d"}')).toBe('{"mod\\u0065l":"bare","model" :"bare"}');
  });

  it('handles strings ending in backslashes and multi-byte characters next to quotes', () => {
    const body = '{"k":"\\\\","model":"p:日本","t":"\\\\\\"","u":"😀"}';
    expect(splice(body, '日本')).toBe('{"k":"\\\\","model":"日本","t":"\\\\\\"","u":"😀"}');
  });

  it('writes the new value as a JSON string, escaped', () => {
    expect(splice('{"model":"p:x"}', 'a"b\\c')).toBe('{"model":"a\\"b\\\\c"}');
  });

  it('writes every kind of value as JSON.stringify would: plain ASCII as it is, anything else escaped', () => {
    for (const value of ['llama3:8b', 'org/model-7B_v1.5@q4', ' ~!', 'a"b', 'a\\b', 'tab\there', 'nl\n', 'del\u007f', 'é', '日本😀', '\u2028', '']) {
      expect(splice('{"model":"p:x","n":1}', value)).toBe(`{"model":${JSON.stringify(value)},"n":1}`);
    }
  });

  it('finds nothing in a body without the key', () => {
    expect(topLevelValueSpans(Buffer.from('{"a":[1,2,{"model":1}]}'), 'model')).toEqual([]);
  });

  it('agrees with JSON.parse on generated bodies', () => {
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const gen = (depth: number): unknown => {
      switch (rand(depth > 2 ? 4 : 6)) {
        case 0: return rand(1000) - 500;
        case 1: return ['model', 'a"b', '\\', 'x\\"y', '}{][', 'é😀'][rand(6)];
        case 2: return null;
        case 3: return rand(2) === 0;
        case 4: return Array.from({ length: rand(4) }, () => gen(depth + 1));
        default: return Object.fromEntries(Array.from({ length: rand(4) }, (_, i) => [rand(2) ? 'model' : `k${i}`, gen(depth + 1)]));
      }
    };
    for (let n = 0; n < 300; n++) {
      const obj = { pre: gen(0), model: 'p:m', post: gen(0) } as Record<string, unknown>;
      const text = JSON.stringify(obj, null, rand(2) ? 2 : undefined);
      expect(JSON.parse(splice(text))).toEqual({ ...obj, model: 'bare' });
    }
  });
});

describe('reading a JSON body', () => {
  it('refuses bytes that are not UTF-8, naming where', () => {
    const r = readJsonBody(Buffer.concat([Buffer.from('{"model":"p:'), Buffer.from([0xff]), Buffer.from('"}')]));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatchObject({ status: 400, code: 'invalid_json', message: 'the request body is not valid UTF-8 (byte 12 of 15)' });
  });

  it('refuses JSON that is not an object', () => {
    const r = readJsonBody(Buffer.from('[1]'));
    expect(!r.ok && r.error.message).toBe('the request body must be a JSON object, found an array');
  });
});
