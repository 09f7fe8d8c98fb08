/**
 * A live headless run followed from its first turn to its end, for the transports that stream one
 * (v1's completions, the OpenAI face in server/openai): the first turn's events as they happen,
 * numbered as /runs/{id}/events replays them; then, when it pauses for an approval and the caller
 * wants the end, the rest of the run wherever the decision is made (a tab, the v1 approvals API, a
 * decision link, the expiry), read from the ledger as its turns commit, until it ends, is cancelled
 * or the approval expires. A client that goes away stops the following only: the run is the
 * engine's and goes on.
 * @module
 */
import { getAgentRun, type AgentRun } from '../db/agent-runs.ts';
import type { TurnHandle } from '../engine/index.ts';
import { liveNumbering, type AgentEventV1, type EventScope } from './agent-events.ts';
import type { V1Deps } from './deps.ts';
import { isTerminal, runStatus } from './run-status.ts';

/** How often it looks for the run's new durable events while it waits. */
const FOLLOW_POLL_MS = 250;

export interface FollowOptions {
  /** Each event, in order; the first turn's token deltas one by one, later turns' answers whole. */
  send(event: AgentEventV1): void;
  /** `end`: follow through approval pauses to the run's end; `pause`: stop at the first pause. */
  until: 'end' | 'pause';
  /** The run paused and will be followed: the caller's live-run slot may be freed (nothing runs while it waits). */
  onPause?(): void;
  /** True once the client went away: the following stops (the run does not). */
  gone(): boolean;
  /** The sequence already sent before the first turn's events (session_start: 1). */
  after?: number;
}

/**
 * Follows `run` (its first turn `handle`, started in this process) as `o` asks; returns the run
 * as it is at the end of the following. Throws when the first turn could not commit its end.
 */
export async function followLiveRun(deps: Pick<V1Deps, 'pool' | 'runs'>, run: AgentRun, handle: TurnHandle, scope: EventScope, o: FollowOptions): Promise<AgentRun | null> {
  const number = liveNumbering(scope);
  let seen = o.after ?? 1;
  const send = (event: AgentEventV1) => {
    seen = event.sequence;
    o.send(event);
  };
  await deps.runs.drive(run.id, handle, (e) => {
    const event = number(e);
    if (event) send(event);
  });
  let now = await getAgentRun(deps.pool, run.id);
  if (o.until !== 'end' || !now || runStatus(now) !== 'awaiting_approval') return now;
  o.onPause?.();
  for (;;) {
    // Its turns' committed events since the last one sent (sequences as the replay numbers them).
    for (const e of (await deps.runs.events(now)).filter((x) => x.sequence > seen)) send(e);
    if (isTerminal(runStatus(now)) || o.gone()) return now;
    await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
    now = await getAgentRun(deps.pool, run.id);
    if (!now) return null;
  }
}
