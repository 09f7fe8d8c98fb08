/**
 * The approval domain's words that the engine and the transports speak too: what a turn asks of a
 * pending approval, and where a decision came in (for its audit row). Declared here, the lowest
 * place that needs them; engine/types.ts re-exports them for the transports.
 * @module
 */

/** What a turn does to pending approvals: decide one (confirm or deny); null is a new message. */
export type TurnAction = 'confirm' | 'deny';

export interface DecisionOrigin {
  method: string;
  path: string;
  /** The service client of an on-behalf call (headless API with the service token). */
  serviceActor?: string | null;
}
