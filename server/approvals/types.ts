/**
 * The approval domain's words that the engine and the transports speak too: what a turn asks of a
 * pending approval, and where a decision came in (for its audit row). Declared here, the lowest
 * place that needs them; engine/types.ts re-exports them for the transports.
 * @module
 */
import type { PasskeyProof } from '../audit/passkey.ts';
import type { DecisionChannel } from './approvers.ts';

/** A decision of a pending approval. */
export type DecisionAction = 'confirm' | 'deny';

/**
 * What a turn does: decide a pending approval (confirm or deny), or fork the conversation at a
 * message (issue 29: `edit` resends a user message changed, `regenerate` answers one again). A
 * fork, like a new message (null), supersedes what is pending.
 */
export type TurnAction = DecisionAction | 'regenerate' | 'edit';

/** Whether the turn decides an approval (a fork and a new message do not). */
export const isDecision = (action: TurnAction | null | undefined): action is DecisionAction => action === 'confirm' || action === 'deny';

export interface DecisionOrigin {
  method: string;
  path: string;
  /** The service client of an on-behalf call (headless API with the service token). */
  serviceActor?: string | null;
  /** Which way the decision came (issue 26); absent: `chat`. */
  channel?: DecisionChannel;
  /** The hash of the one-use link this decision came by: consumed in the decision's transaction. */
  linkTokenHash?: string;
  /**
   * The approver's passkey signature (issue 28 step-up), verified by the route that took it over
   * `actionHash`; the decision step records it only when that is still the approval's hash.
   */
  passkey?: { actionHash: string; proof: PasskeyProof };
}

/**
 * Pure: the channel a decision came by (issue 26). Gradio /chat sends no origin of its own, so
 * absent is `chat`; the MCP tool `chat`, AG-UI, v1, the inbox and links each name theirs.
 */
export function channelOf(origin: DecisionOrigin | undefined): DecisionChannel {
  return origin?.channel ?? 'chat';
}
