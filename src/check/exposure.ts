import { exposureOf, exposureText, type OwnListener } from '../tunnel/exposure.js';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';
import type { CheckProblem } from './report.js';

/**
 * The exposure warnings (SPEC §5) of the tunnels `check` loaded, one per finding, in
 * the daemon's own words (tunnel/exposure.ts): a warning with no command to paste,
 * since only an edit of the entry changes what it opens, if it was not meant.
 */
export function exposureProblems(tunnels: readonly TunnelSpec[], mode: DirectionMode, own: readonly OwnListener[]): CheckProblem[] {
  return tunnels.flatMap((t) =>
    exposureOf(t, mode, own).map((e) => ({ where: `tunnel ${JSON.stringify(t.name)} (line ${t.line})`, what: exposureText(e), fix: null })),
  );
}
