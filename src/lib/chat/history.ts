/**
 * Stored transcript -> the same items live events produce (CONTRACTS §4 stored shapes), so a
 * reloaded conversation, including a still-pending approval, renders like a live one.
 * @module
 */
import { cardExtrasOf, decisionOf, grantUseOf } from './approval-view.ts';
import { isRefusal, isRetryable, toErrorCode } from './errors.ts';
import type { ApprovalStatus, ChatItem, StoredMessage, ToolStatus } from './types.ts';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const TOOL: readonly string[] = ['running', 'done', 'error'];
const APPROVAL: readonly string[] = ['pending', 'confirmed', 'denied', 'expired'];

/** Items for one page of history (oldest first). */
export function itemsFromHistory(messages: readonly StoredMessage[]): ChatItem[] {
  return messages.flatMap((message) => {
    const ref = { messageId: message.id, ...(message.seq === undefined ? {} : { seq: message.seq }) };
    return itemsFromMessage(message).map((item) => ({ ...item, ...ref }));
  });
}

function itemsFromMessage(message: StoredMessage): ChatItem[] {
  if (message.role === 'user') {
    const files = message.metadata?.files;
    return [{ kind: 'user', id: message.id, text: message.content, files: Array.isArray(files) ? files : [] }];
  }
  const m = message.metadata;
  switch (m?.type) {
    case 'tool':
      return [{
        kind: 'tool', id: message.id, ...(str(m.tool_call_id) ? { callId: str(m.tool_call_id) } : {}), tool: str(m.tool), input: m.input,
        status: (TOOL.includes(str(m.status)) ? m.status : 'done') as ToolStatus,
        output: m.output, error: typeof m.error === 'string' ? m.error : undefined,
        ...(isRefusal(m.code) ? { refused: true } : {}),
        durationMs: typeof m.duration_ms === 'number' ? m.duration_ms : undefined,
        ...grantUseOf(m),
      }];
    case 'approval':
      return [{
        kind: 'approval', id: str(m.approval_id) || message.id, tool: str(m.tool), input: m.input, prompt: str(m.prompt),
        expiresAt: typeof m.expires_at === 'string' ? m.expires_at : null,
        timeoutS: typeof m.timeout_s === 'number' ? m.timeout_s : null,
        status: (APPROVAL.includes(str(m.status)) ? m.status : 'pending') as ApprovalStatus,
        ...(str(m.reason) ? { reason: str(m.reason) } : {}),
        ...cardExtrasOf(m),
        ...decisionOf(m),
      }];
    default: {
      const items: ChatItem[] = [];
      if (message.content) {
        items.push({ kind: 'answer', id: message.id, text: message.content, streaming: false, cancelled: m?.cancelled === true || undefined });
      }
      const error = m?.error as { code?: unknown; detail?: unknown } | undefined;
      if (error && typeof error === 'object') {
        const code = toErrorCode(error.code);
        items.push({ kind: 'error', id: `${message.id}-error`, code, detail: str(error.detail), retryable: isRetryable(code) });
      }
      return items;
    }
  }
}
