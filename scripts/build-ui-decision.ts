/**
 * Whether the UI needs a build: a pure decision over modification times, table-tested.
 * @module
 */

/** The newest of some mtimes; 0 for none. */
export function newestMtime(mtimes: number[]): number {
  return mtimes.reduce((a, b) => (b > a ? b : a), 0);
}

/** Why a build is needed, for the one line `npm start` prints; null when the build is current. */
export function buildReason({ outputMtime, newestInputMtime }: { outputMtime: number | null; newestInputMtime: number }): string | null {
  if (outputMtime === null) return 'not built yet';
  if (newestInputMtime > outputMtime) return 'sources changed since the last build';
  return null;
}
