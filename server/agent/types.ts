/**
 * The agent's public types (CONTRACTS.md §3): the events a run yields and the approval shapes.
 * @module
 */
import type { ErrorCode } from '../errors.ts';
import type { ArgumentLabels, EffectPreview } from '../operations/index.ts';
import type { ApprovalTerms, GrantOffer, GrantRule, PolicyDecision, PolicyStamp } from '../policy/index.ts';
import type { GrantUse } from './tools/context.ts';

/** The user's answer to one pending approval. */
export type ApprovalDecision =
  /**
   * `state_hash`: the state the approver saw in the preview; the call runs only while it holds (If-Match).
   * `args`: the arguments as an approver edited them (issue 27 item 1): the call runs these, not the
   * model's; the resume sends them only while their action hash is the approval's final_action_hash.
   * `approval_id`, `action_hash`: the approval that allowed the call and the action it bound (what an
   * OpenAPI backend's user JWT names, issue 41); absent on decisions made before they were sent.
   */
  | { approved: true; state_hash?: string; args?: Record<string, unknown>; approval_id?: string; action_hash?: string }
  /** `note`: the approver's reason for a Deny, which the model is told. */
  | { approved: false; reason: 'denied' | 'expired' | 'superseded' | 'mismatch'; note?: string };

/** One paused dangerous tool call, as `pendingApprovals()` and `approval_required` report it. */
export interface PendingApproval {
  interruptId: string;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  /** The card's question when the tool words its own (MCP tools name their server); else the catalog's. */
  prompt?: string;
  /** The policy decision that paused it (copied into the approval record). */
  policy?: PolicyStamp;
  /** The deciding rule's approvers, timeout and escalation (issue 26); absent: the defaults. */
  terms?: ApprovalTerms;
  /** The effect's preview (issue 27): null when the tool has none; absent on older interrupts. */
  preview?: EffectPreview | null;
  /** Human labels of the arguments, from the tool's schema. */
  labels?: ArgumentLabels;
  /** Set when this asks again because the state changed after an approval of the same call (412). */
  replaces?: { reason: 'state_changed' };
  /** The grant its approver may make instead of a one-off confirm (issue 27); null or absent: none. */
  grant?: GrantOffer | null;
  /** The rule such a grant is made under (issue 36 item 2); absent: no grant may be made. */
  grantRule?: GrantRule;
}

/** The value a dangerous tool passes to `interrupt()`. */
export interface ApprovalRequest {
  kind: 'approval';
  tool: string;
  args: Record<string, unknown>;
  toolCallId: string;
  prompt?: string;
  policy?: PolicyStamp;
  terms?: ApprovalTerms;
  preview?: EffectPreview | null;
  labels?: ArgumentLabels;
  replaces?: { reason: 'state_changed' };
  grant?: GrantOffer | null;
  grantRule?: GrantRule;
}

/**
 * An approver's edit of a paused call, checked as the call's user (AgentRuntime.reviewEdit): the
 * arguments against the tool's input schema (unknown fields refused), then the tool policy's
 * decision for the edited call.
 */
export type EditReview =
  | { ok: false; fields: Array<{ path: string; message: string }> }
  | { ok: true; args: Record<string, unknown>; policy: PolicyDecision };

export type AgentEvent =
  | { type: 'token'; token: string }
  /** `finished`: reported only once the call ended (a tool that may pause); its end follows at once. */
  | { type: 'tool_start'; tool: string; input: unknown; toolCallId: string; policy?: PolicyStamp; finished?: true; /** The grant it ran under, without a card (issue 27). */ grant?: GrantUse }
  | { type: 'tool_end'; tool: string; output: unknown; toolCallId: string; durationMs: number; grant?: GrantUse }
  | { type: 'tool_error'; tool: string; error: string; code?: ErrorCode; toolCallId: string }
  | { type: 'approval_required'; approvals: PendingApproval[] }
  | { type: 'done'; text: string };
