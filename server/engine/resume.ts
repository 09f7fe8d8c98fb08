/**
 * Resuming a paused thread with the decisions it is owed (approvals/decide.ts works them out): the
 * decisions count as consumed once the graph is past the pause; a confirmed action runs before a
 * new message, never dropped.
 * @module
 */
import type { AgentEvent, AgentRuntime } from '../agent/index.ts';
import type { ToolPolicy } from '../agent/run-tool-allowlist.ts';
import type { OwedResume } from '../approvals/decide.ts';
import { listPendingApprovals, markResumed } from '../db/approvals.ts';
import type { Pool } from '../db/index.ts';
import type { Span } from '../telemetry/index.ts';

export interface ResumeContext {
  threadId: string;
  userToken: string;
  conversationId: string;
  signal: AbortSignal;
  toolPolicy?: ToolPolicy | null;
  /** Where a new message's run goes on from (a branch switch, issue 29); null: the thread's newest. */
  fromCheckpoint?: string | null;
  callerSystem?: string | null;
  /** The turn's span: the parent of the run's model and tool spans (server/telemetry). */
  trace?: Span;
}

/** Resumes the paused batch with its decisions, marking them resumed once the graph is past the pause. */
export async function* resumeOwed(deps: { pool: Pool; agent: AgentRuntime; now: () => Date }, owed: OwedResume, context: ResumeContext): AsyncGenerator<AgentEvent> {
  for await (const event of deps.agent.resume({ ...context, decisions: owed.decisions, pending: owed.paused })) {
    if (event.type === 'approval_required' || event.type === 'done') await markResumed(deps.pool, owed.approvalIds, deps.now());
    yield event;
  }
}

/** The first stream, then the second, unless the first paused for approval (its `done` is dropped). */
export async function* concatUnlessPaused(first: AsyncIterable<AgentEvent>, second: () => AsyncIterable<AgentEvent>): AsyncGenerator<AgentEvent> {
  for await (const event of first) {
    if (event.type === 'done') break;
    yield event;
    if (event.type === 'approval_required') return;
  }
  yield* second();
}

/** When the first approval still waiting for its own decision expires (null: none waits). */
export async function stillPending(pool: Pool, conversationId: string): Promise<Date | null> {
  const [first] = await listPendingApprovals(pool, conversationId);
  return first?.expiresAt ?? null;
}

/**
 * Starts pulling `source` now (its first value is requested at once) and hands the values out
 * later, in order. `stop()` ends it when nobody will read it.
 */
export function startEarly<T>(source: AsyncIterable<T>): AsyncIterable<T> & { stop(): Promise<void> } {
  const it = source[Symbol.asyncIterator]();
  const first = it.next();
  first.catch(() => {}); // read (and rethrown) by the consumer; no unhandled rejection meanwhile
  let finished = false;
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let r = await first; !r.done; r = await it.next()) yield r.value;
        finished = true;
      } finally {
        if (!finished) await it.return?.(undefined);
      }
    },
    async stop() {
      await first.catch(() => {});
      await it.return?.(undefined).catch(() => {});
    },
  };
}
