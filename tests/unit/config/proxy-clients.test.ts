// proxy.clients as `tunnel-manager check` and every reload read it: problems with their
// line and column, and a key never shown in one.
import { describe, expect, test } from 'vitest';
import { formatProblem } from '../../../src/config/load.js';
import { problems, valid } from './helpers.js';

describe('the clients of the proxy section', () => {
  test('a valid section is read as written, ${VAR} kept', () => {
    const { config, warnings } = valid(`proxy:
  clients:
    alice: {key: "\${ALICE_KEY}", models: ["gpu1:*", fast], rpm: 60, tpm: 200000}
    ci: {key: sk-literal-ci-key, max_concurrent: 4}
  providers:
    gpu1: {base_url: "http://127.0.0.1:11434/v1"}
`);
    expect(warnings).toEqual([]);
    expect(config.proxy?.clients).toEqual({ alice: { key: '${ALICE_KEY}', models: ['gpu1:*', 'fast'], rpm: 60, tpm: 200000 }, ci: { key: 'sk-literal-ci-key', max_concurrent: 4 } });
  });

  test('each problem points at its node; a key is never shown', () => {
    const text = problems(`proxy:
  clients:
    alice: {key: sk-secret-alice-123, rpm: 0}
    bob: {key: sk-secret-alice-123, burst: 3}
    carol: {key: 42}
  providers: {}
`).map(formatProblem);
    expect(text.join('\n')).toMatch(/line 3, column \d+: proxy\.clients\.alice\.rpm: expected a whole number of requests per minute, 1 or more, found "0"/);
    expect(text.join('\n')).toMatch(/proxy\.clients\.bob\.key: expected a key of its own; client "alice" has the same one/);
    expect(text.join('\n')).toMatch(/proxy\.clients\.bob: expected only the fields key, models, rpm, tpm and max_concurrent \(this one has "burst"\)/);
    expect(text.join('\n')).toMatch(/proxy\.clients\.carol\.key: expected a string/);
    expect(text.join('\n')).not.toContain('sk-secret-alice-123');
  });
});
