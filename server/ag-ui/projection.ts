/**
 * Engine events -> AG-UI events, for one run as one AG-UI run. Pure (no I/O): fed the run's
 * events in order, it answers the frames to send, each frame of a committed event carrying its
 * ledger seq on the LAST frame of the group (the SSE `id:`), so a client's Last-Event-ID only
 * moves once it has every frame of that event.
 *
 *   partial            -> [TEXT_MESSAGE_START] TEXT_MESSAGE_CONTENT        (no id: live only)
 *   assistant.message  -> [START] [CONTENT rest not yet streamed] END
 *   tool.call          -> TOOL_CALL_START, TOOL_CALL_ARGS (the input as JSON), TOOL_CALL_END
 *   tool.result        -> TOOL_CALL_RESULT
 *   approval.requested -> TOOL_CALL_START/ARGS/END of the paused call (its Interrupt is kept)
 *   run.finished       -> RUN_FINISHED outcome success | interrupt (the Interrupts) | cancelled,
 *                         or RUN_ERROR with our taxonomy code (failed; or a stale resume:
 *                         APPROVAL_EXPIRED)
 *   user.message, approval.resolved -> an id-only frame (the client has them; snapshots too)
 *
 * A text message's id is `<run_id>:<seq of the run's last commit before it>` (0 when none), so a
 * snapshot rebuilt from the ledger (snapshot.ts) names it exactly as the live stream did.
 * @module
 */
import { EventType, type BaseEvent, type Interrupt } from '@ag-ui/core';
import type { LedgerEvent, LiveEvent, Payload } from '../engine/index.ts';
import { ERROR_CODES, isErrorCode } from '../errors.ts';

export interface Frame {
  /** null: an id-only SSE frame (a commit with nothing to show moves the client's Last-Event-ID). */
  event: BaseEvent | null;
  /** The ledger seq of the committed event this frame ends (SSE `id:`). */
  id?: number;
}

/** What a resume payload must look like (the Interrupt's responseSchema). */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: 'object',
  // grant (issue 27): with approved: true, {ttl_s, match?, scope?} also makes a standing grant (interrupt metadata.grantable says whether one may).
  properties: {
    approved: { type: 'boolean' },
    reason: { type: 'string' },
    grant: { type: 'object', properties: { ttl_s: { type: 'integer' }, match: { type: 'object' }, scope: { enum: ['user', 'tenant'] } }, required: ['ttl_s'], additionalProperties: false },
  },
  required: ['approved'],
  additionalProperties: false,
} as const;

export const textMessageId = (runId: string, afterSeq: number): string => `${runId}:${afterSeq}`;
export const toolResultMessageId = (toolCallId: string): string => `${toolCallId}:result`;

/** A tool's output or input as the text AG-UI carries (a string stays as it is). */
export const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/** An approval as AG-UI's Interrupt: the id a resume entry answers is the approval id. */
/** An `approval.approved` as clients see it (AG-UI CUSTOM value, Gradio confirm_progress). */
export function progressValue(p: Payload<'approval.approved'>) {
  return { approval_id: p.approval_id, by: p.by, approved_count: p.approved_count, approvals_required: p.approvals_required };
}

export function toInterrupt(p: Payload<'approval.requested'>): Interrupt {
  return {
    id: p.approval_id,
    reason: 'tool_approval',
    message: p.prompt,
    ...(p.tool_call_id ? { toolCallId: p.tool_call_id } : {}),
    responseSchema: APPROVAL_RESPONSE_SCHEMA,
    expiresAt: p.expires_at,
    metadata: { tool: p.tool, input: p.input, timeout_s: p.timeout_s, preview: p.preview ?? null, labels: p.labels ?? {}, grantable: p.grantable ?? null, ...(p.replaces ? { replaces: p.replaces } : {}) },
  };
}

interface OpenText {
  id: string;
  /** Text of this message the client already has (streamed, or in the snapshot). */
  shown: string;
  /** TEXT_MESSAGE_START went out on this stream (the client's verifier needs it before CONTENT). */
  started: boolean;
}

export class AgUiProjection {
  readonly #threadId: string;
  readonly #runId: string;
  /** The engine's run id (message ids derive from it). */
  readonly #engineRunId: string;
  #lastSeq = 0;
  #open: OpenText | null = null;
  #interrupts: Interrupt[] = [];
  /** Approvals this run's resume answered (status resolved): one found expired makes it stale. */
  readonly #answering: ReadonlySet<string>;
  #stale: string | null = null;

  constructor(ids: { threadId: string; runId: string; engineRunId: string; answering?: string[] }) {
    this.#threadId = ids.threadId;
    this.#runId = ids.runId;
    this.#engineRunId = ids.engineRunId;
    this.#answering = new Set(ids.answering ?? []);
  }

  runStarted(): Frame {
    return { event: { type: EventType.RUN_STARTED, threadId: this.#threadId, runId: this.#runId } };
  }

  /** The interrupts this run has asked for so far. */
  get interrupts(): readonly Interrupt[] {
    return this.#interrupts;
  }

  /** A paused run that asked nothing itself (a confirm while others wait) names those still pending. */
  addInterrupts(interrupts: Interrupt[]): void {
    this.#interrupts.push(...interrupts);
  }

  /**
   * Reconnect: the client got the thread as a snapshot; `text` is the answer streamed since the
   * run's last commit, which the snapshot carried under `currentTextId()`.
   */
  resumeText(text: string): void {
    this.#open = text ? { id: textMessageId(this.#engineRunId, this.#lastSeq), shown: text, started: false } : null;
  }

  /** The id the answer streaming now has (or the next one will have). */
  currentTextId(): string {
    return this.#open?.id ?? textMessageId(this.#engineRunId, this.#lastSeq);
  }

  apply(event: LiveEvent): Frame[] {
    if (event.kind === 'partial') return event.payload.token ? this.#content(event.payload.token) : [];
    const frames = this.#committed(event);
    this.#lastSeq = event.seq;
    const last = frames.at(-1);
    if (last) last.id = event.seq;
    else frames.push({ event: null, id: event.seq });
    return frames;
  }

  #committed(event: LedgerEvent): Frame[] {
    switch (event.kind) {
      case 'assistant.message': {
        const open = this.#open;
        const shown = open?.shown ?? '';
        const rest = event.payload.text.startsWith(shown) ? event.payload.text.slice(shown.length) : '';
        const frames = rest ? this.#content(rest) : [];
        const current = this.#open;
        if (current?.started) frames.push({ event: { type: EventType.TEXT_MESSAGE_END, messageId: current.id } });
        this.#open = null;
        return frames;
      }
      case 'tool.call':
        return [...this.#closeText(), ...toolCallFrames(event.payload.tool_call_id, event.payload.tool, event.payload.input)];
      case 'tool.result': {
        const p = event.payload;
        const content = p.status === 'done' ? asText(p.output) : JSON.stringify({ error: p.error ?? '', ...(p.code ? { code: p.code } : {}) });
        return [{ event: { type: EventType.TOOL_CALL_RESULT, messageId: toolResultMessageId(p.tool_call_id), toolCallId: p.tool_call_id, content, role: 'tool' } }];
      }
      case 'approval.requested': {
        const interrupt = toInterrupt(event.payload);
        this.#interrupts.push(interrupt);
        const p = event.payload;
        return [...this.#closeText(), ...(p.tool_call_id ? toolCallFrames(p.tool_call_id, p.tool, p.input) : [])];
      }
      case 'run.finished':
        return [...this.#closeText(), this.#finished(event.payload)];
      case 'approval.approved':
        // One approver of several approved (issue 26): AG-UI has no word for it, so a CUSTOM event
        // named as the Gradio wire's; the interrupt stays open.
        return [{ event: { type: EventType.CUSTOM, name: 'confirm_progress', value: progressValue(event.payload) } as BaseEvent }];
      case 'approval.resolved':
        // It expired between the adapter's check and the decision: AG-UI says a stale resume is a RunError.
        if (event.payload.result === 'expired' && this.#answering.has(event.payload.approval_id)) this.#stale = event.payload.approval_id;
        return [];
      case 'user.message':
        return [];
      case 'branch.forked':
      case 'branch.switched':
        // Issue 29: AG-UI has no word for a branch; a CUSTOM event named as the ledger's kind.
        return [{ event: { type: EventType.CUSTOM, name: event.kind, value: { ...event.payload, branch: event.payload.branch ?? 0 } } as BaseEvent }];
    }
  }

  #finished(p: Payload<'run.finished'>): Frame {
    const ids = { threadId: this.#threadId, runId: this.#runId };
    if (this.#stale && p.status !== 'failed') return errorFrame('APPROVAL_EXPIRED', `The approval ${this.#stale} had expired; it was not carried out.`);
    switch (p.status) {
      case 'done':
        return { event: { type: EventType.RUN_FINISHED, ...ids, outcome: { type: 'success' } } };
      case 'cancelled':
        return { event: { type: EventType.RUN_FINISHED, ...ids, outcome: { type: 'cancelled' } } };
      case 'paused':
        // An interrupt outcome needs at least one interrupt; the adapter adds the pending ones.
        if (this.#interrupts.length === 0) return errorFrame('INTERNAL', 'The run paused without an approval to answer.');
        return { event: { type: EventType.RUN_FINISHED, ...ids, outcome: { type: 'interrupt', interrupts: this.#interrupts } } };
      case 'failed': {
        const code = isErrorCode(p.error_code) ? p.error_code : 'INTERNAL';
        return errorFrame(code, p.error_detail ?? ERROR_CODES[code].message);
      }
    }
  }

  #content(delta: string): Frame[] {
    const frames: Frame[] = [];
    this.#open ??= { id: textMessageId(this.#engineRunId, this.#lastSeq), shown: '', started: false };
    if (!this.#open.started) {
      frames.push({ event: { type: EventType.TEXT_MESSAGE_START, messageId: this.#open.id, role: 'assistant' } });
      this.#open.started = true;
    }
    this.#open.shown += delta;
    frames.push({ event: { type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#open.id, delta } });
    return frames;
  }

  /** A text message still open when something else starts (the engine commits its end first). */
  #closeText(): Frame[] {
    const open = this.#open;
    this.#open = null;
    return open?.started ? [{ event: { type: EventType.TEXT_MESSAGE_END, messageId: open.id } }] : [];
  }
}

export function toolCallFrames(toolCallId: string, tool: string, input: unknown): Frame[] {
  return [
    { event: { type: EventType.TOOL_CALL_START, toolCallId, toolCallName: tool } },
    { event: { type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(input ?? {}) } },
    { event: { type: EventType.TOOL_CALL_END, toolCallId } },
  ];
}

/** RUN_ERROR with a taxonomy code: AG-UI leaves `code` open, ours are the error codes. */
export function errorFrame(code: keyof typeof ERROR_CODES, message: string): Frame {
  return { event: { type: EventType.RUN_ERROR, message, code } };
}
