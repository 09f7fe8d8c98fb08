/**
 * A decision as a turn, for callers with no client attached: the v1 approvals API and the start-up
 * recovery of owed resumes. Both submit one turn through the engine, as the requester, and both
 * wait a moment while a tab is just taking the conversation (CONVERSATION_BUSY). One way to run a
 * decision (issue 25 item 2), one busy-retry.
 *
 * Approvals sit below the engine (the engine's turns use their rules), so the engine's submit is
 * passed in: `DecisionTurns` is the part of it a decision needs, and the engine fits it as it is.
 * @module
 */
import { isAirlockError } from '../errors.ts';
import type { DecisionAction, DecisionOrigin } from './types.ts';
import type { GrantRequest } from '../../src/lib/wire/index.ts';

export interface DecisionTurnInput {
  text: string;
  files: [];
  conversationId: string;
  action: DecisionAction;
  requestId: string | null;
  /** Which approval it decides; null: the only one pending (recovery: the owed batch). */
  approvalId: string | null;
  decidedBy?: string | null;
  decisionNote?: string | null;
  origin?: DecisionOrigin;
  /** An approval that also makes a standing grant (issue 27). */
  grant?: GrantRequest | null;
  /** A confirm's arguments as its approver edited them (issue 27 item 1). */
  editedArgs?: Record<string, unknown> | null;
}

/** What a decision reads of the run it started: its events, to `run.finished`. */
export interface DecisionRun {
  events(): AsyncIterableIterator<{ kind: string; payload?: unknown }>;
}

/** The engine's submit, as a decision uses it. */
export type SubmitDecisionTurn = (input: DecisionTurnInput, user: { userId: string; token: string }) => Promise<DecisionRun>;

/**
 * Runs `attempt` again every `everyMs` while it fails with CONVERSATION_BUSY, until `untilMs` (ms
 * since the epoch) or `signal` ends it; then its last failure is thrown.
 */
export async function retryWhileBusy<T>(attempt: () => Promise<T>, options: { untilMs: number; everyMs: number; signal?: AbortSignal }): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const busy = isAirlockError(error) && error.code === 'CONVERSATION_BUSY';
      if (!busy || Date.now() >= options.untilMs || options.signal?.aborted) throw error;
      await abortableDelay(options.everyMs, options.signal);
    }
  }
}

function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
