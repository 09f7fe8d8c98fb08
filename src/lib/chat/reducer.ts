/**
 * The chat pane as a pure function of events: `applyChatEvent(view, event)` returns the next view.
 * Wire events are the `/chat` yields; local events are what the user and the transport did.
 * Every step is idempotent where the wire repeats itself (the completion re-sends the last yield).
 * @module
 */
import { cardExtrasOf, decisionOf, grantUseOf } from './approval-view.ts';
import { SUPERSEDED } from './approval-words.ts';
import { keptBeforeFork, withStoredRefs } from './branch-view.ts';
import { NOT_ALLOWED, errorText, isRefusal, isRetryable, toErrorCode } from './errors.ts';
import type { ApprovalItem, ApprovalStatus, ChatItem, ChatPhase, FileRef, ToolItem, UserItem, WireChatMessage } from './types.ts';
import { errorFieldsOf } from '../wire/index.ts';

export interface ChatView {
  items: ChatItem[];
  phase: ChatPhase;
  /** The answer bubble the current run writes into, once it has one. */
  answerId: string | null;
  /** Where the current answer segment starts in the run's accumulated `content` (cards split answers, as the transcript does). */
  answerBase: number;
  /** Counts runs, so item ids stay unique. */
  run: number;
  /** A polite screen-reader message: completions and approval requests, never single tokens. */
  announcement: string;
}

export type ChatEvent =
  | { type: 'message'; message: WireChatMessage }
  | { type: 'submitted'; text: string; files?: FileRef[]; action?: 'confirm' | 'deny' | null; approvalId?: string; retry?: boolean }
  | { type: 'ended'; reason: 'complete' | 'cancelled' | 'error' }
  | { type: 'failed'; code: string; detail?: string }
  | { type: 'tick'; now: number }
  | { type: 'loaded'; items: ChatItem[]; prepend?: boolean }
  /**
   * The page follows a run it found open in the ledger (after a reload, a reconnect, or another
   * tab's): it streams from here. `answerId`: the stored answer that run is still writing, which
   * its stream continues in place.
   */
  | { type: 'following'; answerId: string | null }
  | { type: 'dismiss'; id: string }
  /** Edit (`text`: the new message) or Regenerate of item `at` (issue 29): the new branch streams after what it keeps. */
  | { type: 'forked'; at: string; action: 'edit' | 'regenerate'; text: string }
  /** The last history page after a run of this tab: its items learn their stored ids. */
  | { type: 'stored'; items: ChatItem[] };

export function initialView(): ChatView {
  return { items: [], phase: 'idle', answerId: null, answerBase: 0, run: 0, announcement: '' };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : String(v));

/** Next view for one event. Never mutates `view`. */
export function applyChatEvent(view: ChatView, event: ChatEvent): ChatView {
  switch (event.type) {
    case 'submitted': {
      const run = view.run + 1;
      let items = view.items;
      if (event.action && event.approvalId) {
        items = replaceItem(items, event.approvalId, (a) => (a.kind === 'approval' ? { ...a, deciding: event.action!, fieldErrors: undefined } : a));
      } else if (!event.action) {
        // The server takes a new message as the denial of every approval still waiting: those
        // cards are being decided now, by this message (the composer asked before sending).
        items = items.map((i) => (i.kind === 'approval' && i.status === 'pending' && !i.deciding ? { ...i, deciding: 'supersede' as const } : i));
        if (!event.retry) items = [...items, { kind: 'user', id: `user-${run}`, text: event.text, files: event.files ?? [] }];
      }
      return { ...view, items, run, phase: 'streaming', answerId: null, answerBase: 0, announcement: '' };
    }
    case 'message':
      return applyWire(view, event.message);
    case 'ended': {
      const cancelled = event.reason === 'cancelled';
      const items = view.items.map((item) => {
        if (item.kind === 'answer' && item.streaming) return { ...item, streaming: false, cancelled: cancelled || item.cancelled };
        if (item.kind === 'approval' && item.deciding) return { ...item, deciding: undefined };
        return item;
      });
      const pending = items.some((i) => i.kind === 'approval' && i.status === 'pending');
      const errored = event.reason === 'error' || items[items.length - 1]?.kind === 'error';
      const announcement =
        pending || errored ? view.announcement : cancelled ? 'Answer stopped.' : view.phase === 'streaming' ? 'Answer complete.' : view.announcement;
      return { ...view, items, phase: pending ? 'awaiting_confirmation' : 'idle', answerId: null, announcement };
    }
    case 'failed':
      // A failure of this page's own transport: its detail is a library's message ("Connection
      // errored out."), for the card's details, not for its sentence.
      return applyChatEvent(addError(view, event.code, '', event.detail), { type: 'ended', reason: 'error' });
    case 'tick': {
      let changed = false;
      const items = view.items.map((item) => {
        if (item.kind !== 'approval' || item.status !== 'pending' || !item.expiresAt) return item;
        if (Date.parse(item.expiresAt) > event.now) return item;
        changed = true;
        return { ...item, status: 'expired' as const, deciding: undefined };
      });
      if (!changed) return view;
      const pending = items.some((i) => i.kind === 'approval' && i.status === 'pending');
      const phase = view.phase === 'awaiting_confirmation' && !pending ? 'idle' : view.phase;
      return { ...view, items, phase, announcement: 'The approval request expired.' };
    }
    case 'loaded': {
      const items = event.prepend ? [...event.items, ...view.items] : event.items;
      if (event.prepend) return { ...view, items };
      const pending = items.some((i) => i.kind === 'approval' && i.status === 'pending');
      return { ...view, items, phase: pending ? 'awaiting_confirmation' : 'idle', answerId: null };
    }
    case 'dismiss':
      return { ...view, items: view.items.filter((i) => i.id !== event.id) };
    case 'forked': {
      const kept = { ...view, items: keptBeforeFork(view.items, event.at, event.action) };
      // An edit shows its new message, as a new message would; a regenerate answers the one kept.
      return applyChatEvent(kept, { type: 'submitted', text: event.text, retry: event.action === 'regenerate' });
    }
    case 'stored':
      return { ...view, items: withStoredRefs(view.items, event.items) };
    case 'following': {
      const items = event.answerId ? replaceItem(view.items, event.answerId, (a) => (a.kind === 'answer' ? { ...a, streaming: true } : a)) : view.items;
      return { ...view, items, run: view.run + 1, phase: 'streaming', answerId: event.answerId, answerBase: 0, announcement: '' };
    }
  }
}

function applyWire(view: ChatView, message: WireChatMessage): ChatView {
  const m = message.metadata as WireChatMessage['metadata'] | undefined;
  // A message without a type (a plain one, or a stored answer's): its content is the answer so far.
  if (typeof m?.type !== 'string' || (m.type as string) === 'answer') return writeAnswer(view, message.content, '');
  switch (m.type) {
    case 'stream_token':
      return writeAnswer(view, message.content, str(m.token));
    case 'tool_start':
      return upsertTool(closeSegment(view, message.content), str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, (t) =>
        t ? t : { kind: 'tool', id: str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, tool: str(m.tool), input: m.input, status: 'running', ...grantUseOf(m) },
      );
    case 'tool_end':
      return upsertTool(view, str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, (t) => ({
        kind: 'tool', id: str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, tool: str(m.tool), input: t?.input,
        status: 'done', output: m.output, durationMs: typeof m.duration_ms === 'number' ? m.duration_ms : undefined, ...(t?.grant ? { grant: t.grant } : grantUseOf(m)),
      }));
    case 'tool_error':
      return upsertTool(view, str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, (t) => ({
        kind: 'tool', id: str(m.tool_call_id) || `${str(m.tool)}-${view.run}`, tool: str(m.tool), input: t?.input,
        status: 'error', error: str(m.error) || errorText('TOOL_FAILURE'), durationMs: t?.durationMs,
        ...(isRefusal(m.code) || t?.refused ? { refused: true } : {}),
      }));
    case 'confirm_required': {
      const id = str(m.approval_id) || `approval-${view.run}`;
      if (view.items.some((i) => i.id === id)) return { ...view, phase: 'awaiting_confirmation' };
      const card: ApprovalItem = {
        kind: 'approval', id, tool: str(m.tool), input: m.input, prompt: str(m.prompt),
        expiresAt: typeof m.expires_at === 'string' ? m.expires_at : null,
        timeoutS: typeof m.timeout_s === 'number' ? m.timeout_s : null, status: 'pending', ...cardExtrasOf(m),
      };
      // Its `content` is the answer plus a plain-text approval note (for Gradio clients that print
      // only `content`); the tokens before it already carried the answer, so it is not used here.
      const next = closeSegment(view, undefined);
      return { ...next, items: [...next.items, card], phase: 'awaiting_confirmation', announcement: `Approval needed: ${card.prompt || card.tool}` };
    }
    case 'confirm_progress': {
      // One approver of several approved (issue 26): still pending, now with who approved.
      const id = str(m.approval_id);
      const by = str(m.by);
      const items = view.items.map((i) =>
        i.kind === 'approval' && i.id === id
          ? { ...i, deciding: undefined, approvalsRequired: typeof m.approvals_required === 'number' ? m.approvals_required : i.approvalsRequired, approvedBy: [...(i.approvedBy ?? []).filter((u) => u !== by), by] }
          : i,
      );
      return { ...view, items, phase: 'awaiting_confirmation', announcement: `Approved by ${by}; more approvals needed.` };
    }
    case 'confirm_resolved': {
      const result = str(m.result) as ApprovalStatus;
      const status: ApprovalStatus = result === 'confirmed' || result === 'denied' || result === 'expired' ? result : 'denied';
      const id = str(m.approval_id);
      const items = view.items.map((i) => {
        if (i.kind !== 'approval' || !(i.id === id || (!id && i.status === 'pending'))) return i;
        // The server's reason when it sends one; else what this tab knows: its new message
        // superseded the card (a followed run's decision made elsewhere stays unexplained).
        const reason = str(m.reason) || (status === 'denied' && i.deciding === 'supersede' ? SUPERSEDED : '');
        return { ...i, status, deciding: undefined, ...(reason ? { reason } : {}), ...decisionOf(m) };
      });
      return { ...view, items, phase: 'streaming', announcement: `Action ${status}.` };
    }
    case 'attachments':
      return withAttachmentReports(view, m.files);
    case 'error': {
      const code = toErrorCode(m.code);
      let next = view;
      if (code === 'APPROVAL_EXPIRED') next = resolvePending(view, 'expired');
      // A refused step (its tool_call_id) is said on its tool card; the agent goes on and explains.
      const refused = isRefusal(code) ? refuseTool(next, str(m.tool_call_id)) : null;
      if (refused) return refused;
      // Edited arguments the server refused: said by the card's fields, which stay as typed.
      const placed = code === 'VALIDATION_ERROR' ? withFieldErrors(next, m.fields) : null;
      if (placed) return placed;
      return addError(next, code, str(m.detail));
    }
    default:
      return view;
  }
}

/** The card whose confirm is in flight gets `fields` (a VALIDATION_ERROR's), or null when none fits. */
function withFieldErrors(view: ChatView, fields: unknown): ChatView | null {
  const errors = errorFieldsOf(fields);
  const card = view.items.find((i) => i.kind === 'approval' && i.deciding === 'confirm');
  if (errors.length === 0 || !card) return null;
  return { ...view, items: replaceItem(view.items, card.id, (a) => (a.kind === 'approval' ? { ...a, fieldErrors: errors } : a)) };
}

function writeAnswer(view: ChatView, content: unknown, token: string): ChatView {
  const current = view.answerId ? view.items.find((i) => i.id === view.answerId) : undefined;
  // `content` carries the whole answer so far, so a repeated or coalesced frame cannot duplicate text.
  const text = typeof content === 'string' ? content.slice(view.answerBase) : `${current && current.kind === 'answer' ? current.text : ''}${token}`;
  if (current && current.kind === 'answer') {
    if (current.text === text) return view;
    return { ...view, items: replaceItem(view.items, current.id, () => ({ ...current, text })) };
  }
  if (!text) return view;
  const id = `answer-${view.run}-${view.items.length}`;
  return { ...view, items: [...view.items, { kind: 'answer', id, text, streaming: true }], answerId: id };
}

function upsertTool(view: ChatView, id: string, make: (existing: ToolItem | undefined) => ToolItem): ChatView {
  // A card from history is keyed by its message id and knows its call id: a followed run's
  // result for that call updates it rather than adding a second card.
  const existing = view.items.findLast((i) => i.kind === 'tool' && (i.id === id || i.callId === id));
  if (existing && existing.kind === 'tool') {
    const made = make(existing);
    if (existing.status !== 'running' && made.status === 'running') return view;
    const next = { ...made, id: existing.id, ...(existing.callId ? { callId: existing.callId } : {}) };
    return { ...view, items: replaceItem(view.items, existing.id, () => next) };
  }
  return { ...view, items: [...view.items, make(undefined)] };
}

/** A card ends the current answer segment; text after it starts a new bubble below the card. */
function closeSegment(view: ChatView, content: unknown): ChatView {
  const answerBase = typeof content === 'string' ? content.length : view.answerBase;
  if (!view.answerId) return answerBase === view.answerBase ? view : { ...view, answerBase };
  const items = replaceItem(view.items, view.answerId, (a) => (a.kind === 'answer' ? { ...a, streaming: false } : a));
  return { ...view, items, answerId: null, answerBase };
}

/** Marks the card of call `id` refused; null when there is no such card (then the error gets its own). */
function refuseTool(view: ChatView, id: string): ChatView | null {
  const card = id ? view.items.findLast((i) => i.kind === 'tool' && (i.id === id || i.callId === id)) : undefined;
  if (!card || card.kind !== 'tool') return null;
  const items = replaceItem(view.items, card.id, (t) => (t.kind === 'tool' ? { ...t, status: 'error', refused: true } : t));
  return { ...view, items, announcement: NOT_ALLOWED };
}

function resolvePending(view: ChatView, status: ApprovalStatus): ChatView {
  const items = view.items.map((i) => (i.kind === 'approval' && (i.status === 'pending' || i.deciding) ? { ...i, status, deciding: undefined } : i));
  return { ...view, items };
}

function addError(view: ChatView, code: string, detail = '', diagnostic = ''): ChatView {
  const last = view.items[view.items.length - 1];
  if (last && last.kind === 'error' && last.code === code && last.detail === detail) return view;
  const item: ChatItem = {
    kind: 'error', id: `error-${view.run}-${view.items.length}`, code, detail, retryable: isRetryable(code),
    ...(diagnostic ? { diagnostic } : {}),
  };
  return { ...view, items: [...view.items, item], announcement: errorText(code) };
}

function replaceItem(items: ChatItem[], id: string, f: (item: ChatItem) => ChatItem): ChatItem[] {
  return items.map((i) => (i.id === id ? f(i) : i));
}

/** The gateway's report on the files of the message just sent: they replace the last user item's files. */
function withAttachmentReports(view: ChatView, files: unknown): ChatView {
  if (!Array.isArray(files)) return view;
  const index = view.items.findLastIndex((i) => i.kind === 'user');
  if (index < 0) return view;
  const items = view.items.slice();
  items[index] = { ...(items[index] as UserItem), files: files as FileRef[] };
  return { ...view, items };
}
