/**
 * Engine events -> /chat wire messages. One projection for a live turn and for a replayed one:
 * partial tokens stream as stream_token; a committed assistant.message adds only what the
 * partials did not already show (all of it when replayed from the ledger), so nothing doubles.
 * @module
 */
import type { LiveEvent } from '../engine/index.ts';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import type { ReportedFileRef } from '../engine/attachments.ts';
import type { ChatMetadata } from './chat-message.ts';

const asCode = (code: string | null | undefined): ErrorCode => (code && code in ERROR_CODES ? (code as ErrorCode) : 'INTERNAL');

export class ChatProjection {
  /** The answer text so far (a ChatMessage's `content`). */
  content = '';
  #segment = '';

  /** The wire metadata this event shows as, in order (often none, sometimes two). */
  apply(event: LiveEvent, conversationId: string): ChatMetadata[] {
    switch (event.kind) {
      case 'partial':
        return this.#text(event.payload.token);
      case 'assistant.message': {
        const { text } = event.payload;
        const rest = text.startsWith(this.#segment) ? text.slice(this.#segment.length) : '';
        this.#segment = '';
        return rest ? this.#text(rest, false) : [];
      }
      case 'tool.call':
        this.#segment = '';
        return [{ type: 'tool_start', tool: event.payload.tool, input: event.payload.input, tool_call_id: event.payload.tool_call_id, ...(event.payload.policy ? { policy: event.payload.policy } : {}) }];
      case 'tool.result': {
        const p = event.payload;
        if (p.status === 'done') return [{ type: 'tool_end', tool: p.tool, output: p.output, tool_call_id: p.tool_call_id, duration_ms: p.duration_ms ?? 0 }];
        const code = p.code ? asCode(p.code) : undefined;
        const out: ChatMetadata[] = [{ type: 'tool_error', tool: p.tool, error: p.error ?? '', tool_call_id: p.tool_call_id, ...(code ? { code } : {}) }];
        // Not allowed is the user's business, not the model's: say it as an error too. It is the
        // step's (tool_call_id), not the turn's: the agent goes on and explains (issue 24 item 2).
        if (code === 'FORBIDDEN' || code === 'UNAUTHORIZED') out.push({ type: 'error', code, detail: p.error ?? '', retryable: false, tool_call_id: p.tool_call_id });
        return out;
      }
      case 'approval.requested': {
        const p = event.payload;
        this.#segment = '';
        return [{ type: 'confirm_required', prompt: p.prompt, thread_id: conversationId, approval_id: p.approval_id, tool: p.tool, input: p.input, expires_at: p.expires_at, timeout_s: p.timeout_s }];
      }
      case 'approval.resolved':
        return [{ type: 'confirm_resolved', result: event.payload.result, approval_id: event.payload.approval_id, ...(event.payload.reason ? { reason: event.payload.reason } : {}) }];
      case 'run.finished': {
        const p = event.payload;
        if (p.status !== 'failed') return [];
        const code = asCode(p.error_code);
        return [{ type: 'error', code, detail: p.error_detail ?? ERROR_CODES[code].message, retryable: ERROR_CODES[code].retryable }];
      }
      case 'user.message':
        // What the model got of each attached file (status + note), as the live turn said it.
        return event.payload.files.length ? [{ type: 'attachments', files: event.payload.files as ReportedFileRef[] }] : [];
    }
  }

  #text(token: string, partial = true): ChatMetadata[] {
    this.content += token;
    if (partial) this.#segment += token;
    return [{ type: 'stream_token', token }];
  }
}
