/**
 * Ledger events -> /chat wire metadata, written once: the gateway projects a live or replayed turn
 * with it (server/chat/chat-handler.ts), and the UI a run it follows from the event stream
 * (src/lib/chat/event-stream.ts), so a followed run renders like an own one. Partial tokens stream
 * as stream_token; a committed assistant.message adds only what the partials did not already show
 * (all of it when replayed from the ledger), so nothing doubles. Pure.
 * @module
 */
import type { ApprovalReason, ArgumentLabels, ArgumentsEdit, ChatMessage, ChatMetadata, EffectPreview, FileRef, GrantMade, GrantOffer, PolicyStamp, Replaces } from './chat-metadata.ts';
import { ERROR_CODES, toErrorCode, type ErrorField } from './errors.ts';

/**
 * The ledger events the projection reads (CONTRACTS §5), with the fields it uses: the engine's
 * live events (server/engine/events.ts) are these, and so are the SSE frames of
 * `/events/stream` (`event:` the kind, `data:` the payload). Other kinds show as nothing.
 */
/** A call run under a standing grant (issue 27): which, by whom, until when. */
type GrantUseFields = { grant_id?: string; grant_by?: string; grant_until?: string };
const grantUseOf = (p: GrantUseFields): GrantUseFields =>
  p.grant_id ? { grant_id: p.grant_id, ...(p.grant_by !== undefined ? { grant_by: p.grant_by } : {}), ...(p.grant_until ? { grant_until: p.grant_until } : {}) } : {};

export type ProjectedEvent =
  | { kind: 'partial'; payload: { token: string } }
  /** `partials=1&snapshot=1`: the running answer's segment so far, once, on attaching to it. */
  | { kind: 'partial_snapshot'; payload: { token: string } }
  /** `files`: as the engine stores them (its statuses are the attachment module's). */
  | { kind: 'user.message'; payload: { files: ReadonlyArray<Omit<FileRef, 'kind' | 'status'> & { kind?: string; status?: string }> } }
  | { kind: 'assistant.message'; payload: { text: string } }
  | { kind: 'tool.call'; payload: { tool: string; input?: unknown; tool_call_id: string; policy?: PolicyStamp } & GrantUseFields }
  | {
      kind: 'tool.result';
      payload: { tool: string; tool_call_id: string; status: 'done' | 'error'; output?: unknown; error?: string; code?: string; duration_ms?: number } & GrantUseFields;
    }
  | {
      kind: 'approval.requested';
      payload: {
        approval_id: string; tool: string; input: Record<string, unknown>; prompt: string; expires_at: string; timeout_s: number;
        approvals_required?: number;
        approvers?: { roles: string[]; users: string[] };
        step_up?: 'passkey';
        /** Issue 27; absent on older events (null preview and no labels then). */
        preview?: EffectPreview | null;
        labels?: ArgumentLabels;
        replaces?: Replaces;
        grantable?: GrantOffer | null;
      };
    }
  /** One approver of several approved (issue 26): the approval stays pending. */
  | { kind: 'approval.approved'; payload: { approval_id: string; by: string; approved_count: number; approvals_required: number } }
  | { kind: 'approval.resolved'; payload: { approval_id: string; result: 'confirmed' | 'denied' | 'expired'; reason?: ApprovalReason; by?: string; edited?: ArgumentsEdit & { original_action_hash?: string | null; action_hash?: string }; grant_made?: GrantMade } }
  | { kind: 'run.finished'; payload: { status: string; error_code: string | null; error_detail?: string; error_fields?: ErrorField[] } }
  /** Issue 29: the /chat stream shows nothing of them; history names the branch (`active_branch`). */
  | { kind: 'branch.forked' | 'branch.switched'; payload: { branch?: number } };

export class ChatProjection {
  /** The answer text so far (a ChatMessage's `content`). */
  content = '';
  /** The answer segment since the last card, as partials showed it. */
  #segment = '';

  /** The wire metadata this event shows as, in order (often none, sometimes two). */
  apply(event: ProjectedEvent, conversationId: string): ChatMetadata[] {
    switch (event.kind) {
      case 'partial':
        return this.#text(event.payload.token);
      case 'partial_snapshot': {
        // The segment so far, of which the reader may already show a part (the stream reopened
        // after a drain): only its unseen rest is new.
        const { token } = event.payload;
        const rest = token.startsWith(this.#segment) ? token.slice(this.#segment.length) : '';
        return rest ? this.#text(rest) : [];
      }
      case 'assistant.message': {
        const { text } = event.payload;
        const rest = text.startsWith(this.#segment) ? text.slice(this.#segment.length) : '';
        this.#segment = '';
        return rest ? this.#text(rest, false) : [];
      }
      case 'tool.call': {
        const p = event.payload;
        this.#segment = '';
        return [{ type: 'tool_start', tool: p.tool, input: p.input, tool_call_id: p.tool_call_id, ...(p.policy ? { policy: p.policy } : {}), ...grantUseOf(p) }];
      }
      case 'tool.result': {
        const p = event.payload;
        if (p.status === 'done') return [{ type: 'tool_end', tool: p.tool, output: p.output, tool_call_id: p.tool_call_id, duration_ms: p.duration_ms ?? 0, ...grantUseOf(p) }];
        const code = p.code ? toErrorCode(p.code) : undefined;
        const out: ChatMetadata[] = [{ type: 'tool_error', tool: p.tool, error: p.error ?? '', tool_call_id: p.tool_call_id, ...(code ? { code } : {}) }];
        // Not allowed is the user's business, not the model's: say it as an error too. It is the
        // step's (tool_call_id), not the turn's: the agent goes on and explains (issue 24 item 2).
        if (code === 'FORBIDDEN' || code === 'UNAUTHORIZED') out.push({ type: 'error', code, detail: p.error ?? '', retryable: false, tool_call_id: p.tool_call_id });
        return out;
      }
      case 'approval.requested': {
        const p = event.payload;
        this.#segment = '';
        return [{
          type: 'confirm_required', prompt: p.prompt, thread_id: conversationId, approval_id: p.approval_id, tool: p.tool, input: p.input,
          expires_at: p.expires_at, timeout_s: p.timeout_s, ...(p.approvals_required ? { approvals_required: p.approvals_required, ...(p.approvers ? { approvers: p.approvers } : {}) } : {}),
          ...(p.step_up ? { step_up: p.step_up } : {}),
          // What the card shows besides the arguments (issue 27): preview (null: none) and labels always, replaces when it asks again.
          preview: p.preview ?? null, labels: p.labels ?? {}, ...(p.replaces ? { replaces: p.replaces } : {}),
          grantable: p.grantable ?? null,
        }];
      }
      case 'approval.approved': {
        // One approver of several (issue 26): the card says "1 of 2 approved (by ann)" and stays pending.
        const p = event.payload;
        return [{ type: 'confirm_progress', approval_id: p.approval_id, by: p.by, approved_count: p.approved_count, approvals_required: p.approvals_required }];
      }
      case 'approval.resolved': {
        const p = event.payload;
        const edited = p.edited ? { original_args: p.edited.original_args, args: p.edited.args, patch: p.edited.patch } : undefined;
        return [{ type: 'confirm_resolved', result: p.result, approval_id: p.approval_id, ...(p.reason ? { reason: p.reason } : {}), ...(p.by ? { by: p.by } : {}), ...(edited ? { edited } : {}), ...(p.grant_made ? { grant_made: p.grant_made } : {}) }];
      }
      case 'run.finished': {
        const p = event.payload;
        if (p.status !== 'failed') return [];
        const code = toErrorCode(p.error_code);
        return [{ type: 'error', code, detail: p.error_detail ?? ERROR_CODES[code].message, retryable: ERROR_CODES[code].retryable, ...(p.error_fields?.length ? { fields: p.error_fields } : {}) }];
      }
      case 'user.message':
        // What the model got of each attached file (status + note), as the live turn said it.
        return event.payload.files.length ? [{ type: 'attachments', files: event.payload.files as FileRef[] }] : [];
      default:
        return [];
    }
  }

  #text(token: string, partial = true): ChatMetadata[] {
    this.content += token;
    if (partial) this.#segment += token;
    return [{ type: 'stream_token', token }];
  }
}

/** One /chat yield: the metadata of one event, the answer so far, and the conversation it belongs to. */
export function chatMessage(conversationId: string, content: string, metadata: ChatMetadata): ChatMessage {
  return { role: 'assistant', content, metadata: { ...metadata, conversation_id: conversationId } };
}
