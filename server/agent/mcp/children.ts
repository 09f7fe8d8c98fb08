/**
 * The stdio MCP servers this process has spawned and not yet closed. An orderly stop closes each
 * connection (the SDK ends stdin, then SIGTERM, then SIGKILL); but a start that fails exits with
 * `process.exit(1)` before any close hook runs, and a child that ignores the end of its stdin
 * would outlive us (issue 30, finding 8). So on exit every child still here is killed.
 * @module
 */

/** What we need of a transport: its child's pid, `null` once closed. */
interface Spawned {
  readonly pid: number | null;
}

const live = new Set<Spawned>();
let hooked = false;

/** Kills (SIGKILL) every child still open; `exit` handlers must be synchronous. */
export function killSpawnedChildren(): void {
  for (const child of live) {
    const pid = child.pid;
    if (pid !== null) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  live.clear();
}

/** Remembers a spawned transport until `forget`; installs the exit hook once. */
export function trackChild(child: Spawned): void {
  live.add(child);
  if (!hooked) {
    hooked = true;
    process.once('exit', killSpawnedChildren);
  }
}

export function forgetChild(child: Spawned): void {
  live.delete(child);
}

/** How many children are open now (tests). */
export function spawnedChildren(): number {
  return [...live].filter((c) => c.pid !== null).length;
}
