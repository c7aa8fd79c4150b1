import type { TunnelExposure } from '../api/engine-api.js';
import { exposureOf, exposureText, type OwnListener } from '../tunnel/exposure.js';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';

/**
 * The exposure warnings (SPEC §5) of the tunnels in force after each load, logged once
 * per tunnel and finding: at the first load every one, at a reload those that are new
 * (a tunnel that keeps its exposure through a reload is not told again; one removed
 * and added back is). Which listeners are the product's own is read at each load: the
 * API's port is known only once it is bound.
 */
export function createExposureLog(
  mode: DirectionMode,
  own: () => readonly OwnListener[],
  log: (entry: Record<string, unknown>) => void,
): (tunnels: readonly TunnelSpec[]) => TunnelExposure[] {
  let told = new Set<string>();
  const key = (e: TunnelExposure) => `${e.hash}|${e.message}`;
  return (tunnels) => {
    const listeners = own();
    const found = tunnels.flatMap((t) =>
      exposureOf(t, mode, listeners).map((exposure): TunnelExposure => ({ hash: t.hash, name: t.name, line: t.line, exposure, message: exposureText(exposure) })),
    );
    for (const e of found) {
      if (!told.has(key(e))) log({ event: 'exposure_warning', tunnel: e.name, hash: e.hash, line: e.line, warning: e.message });
    }
    told = new Set(found.map(key));
    return found;
  };
}
