/**
 * The /chat wire messages: one ChatMessage per yield, `content` holding the answer so far and
 * `metadata.type` saying what happened (ARCHITECTURE.md, "The /chat endpoint"). Pure.
 * @module
 */
import type { AgentEvent } from '../agent/index.ts';
import type { ErrorCode } from '../errors.ts';
import type { PolicyStamp } from '../policy/index.ts';
import type { ApprovalReason } from '../approvals/rules.ts';
import type { ReportedFileRef } from '../engine/attachments.ts';

export type ChatMetadata =
  | { type: 'stream_token'; token: string }
  /** `policy`: the tool policy decision that routed the call (`action: caution` flags it). */
  | { type: 'tool_start'; tool: string; input: unknown; tool_call_id: string; policy?: PolicyStamp }
  | { type: 'tool_end'; tool: string; output: unknown; tool_call_id: string; duration_ms: number }
  | { type: 'tool_error'; tool: string; error: string; tool_call_id: string; code?: ErrorCode }
  | {
      type: 'confirm_required';
      prompt: string;
      thread_id: string;
      approval_id: string;
      tool: string;
      input: Record<string, unknown>;
      expires_at: string;
      timeout_s: number;
    }
  | { type: 'confirm_resolved'; result: 'confirmed' | 'denied' | 'expired'; approval_id: string; reason?: ApprovalReason }
  /**
   * `tool_call_id`: the error is one step's (a tool the user may not run), said to the user while
   * the turn goes on; the turn still completes. Without it, the turn itself failed.
   */
  | { type: 'error'; code: ErrorCode; detail: string; retryable: boolean; tool_call_id?: string }
  | { type: 'attachments'; files: ReportedFileRef[] };

export interface ChatMessage {
  role: 'assistant';
  content: string;
  metadata: ChatMetadata & { conversation_id: string };
}

export function chatMessage(conversationId: string, content: string, metadata: ChatMetadata): ChatMessage {
  return { role: 'assistant', content, metadata: { ...metadata, conversation_id: conversationId } };
}

/** The wire metadata for a streamed agent event; null for events the gateway handles itself. */
export function agentEventMetadata(event: AgentEvent): ChatMetadata | null {
  switch (event.type) {
    case 'token':
      return { type: 'stream_token', token: event.token };
    case 'tool_start':
      return { type: 'tool_start', tool: event.tool, input: event.input, tool_call_id: event.toolCallId, ...(event.policy ? { policy: event.policy } : {}) };
    case 'tool_end':
      return { type: 'tool_end', tool: event.tool, output: event.output, tool_call_id: event.toolCallId, duration_ms: event.durationMs };
    case 'tool_error':
      return {
        type: 'tool_error',
        tool: event.tool,
        error: event.error,
        tool_call_id: event.toolCallId,
        ...(event.code ? { code: event.code } : {}),
      };
    default:
      return null;
  }
}
