/**
 * The agent's public types (CONTRACTS.md §3): the events a run yields and the approval shapes.
 * @module
 */
import type { ErrorCode } from '../errors.ts';
import type { PolicyStamp } from '../policy/index.ts';

/** The user's answer to one pending approval. */
export type ApprovalDecision =
  | { approved: true }
  | { approved: false; reason: 'denied' | 'expired' | 'superseded' | 'mismatch' };

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
}

/** The value a dangerous tool passes to `interrupt()`. */
export interface ApprovalRequest {
  kind: 'approval';
  tool: string;
  args: Record<string, unknown>;
  toolCallId: string;
  prompt?: string;
  policy?: PolicyStamp;
}

export type AgentEvent =
  | { type: 'token'; token: string }
  /** `finished`: reported only once the call ended (a tool that may pause); its end follows at once. */
  | { type: 'tool_start'; tool: string; input: unknown; toolCallId: string; policy?: PolicyStamp; finished?: true }
  | { type: 'tool_end'; tool: string; output: unknown; toolCallId: string; durationMs: number }
  | { type: 'tool_error'; tool: string; error: string; code?: ErrorCode; toolCallId: string }
  | { type: 'approval_required'; approvals: PendingApproval[] }
  | { type: 'done'; text: string };
