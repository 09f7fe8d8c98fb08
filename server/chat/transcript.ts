/**
 * Writes the conversation as it happens: the user message, tool cards, approval cards and the
 * answer, in the shapes the UI renders (CONTRACTS.md §4). Answer text is kept in memory and
 * written at segment ends (a tool call, a pause, the end, a cancel) and every few seconds, not
 * per token. While the database is away, answer writes do not fail the stream: the text stays in
 * memory, and a segment that ends during the outage is handed to `PendingWrites`, which writes
 * it whole when the database is back.
 * @module
 */
import { appendMessage, findMessageByMetadata, updateMessage } from '../db/messages.ts';
import type { AgentEvent } from '../agent/index.ts';
import { isDatabaseUnavailable, type Queryable } from '../db/index.ts';
import type { ErrorCode } from '../errors.ts';
import type { OpenedApproval } from './approvals.ts';
import type { FileRef } from './input.ts';
import type { PendingWrites } from './pending-writes.ts';

const FLUSH_EVERY_MS = 2_000;

export class Transcript {
  readonly #db: Queryable;
  readonly #conversationId: string;
  readonly #toolMessageIds = new Map<string, string>();
  /** The answer segment being streamed; `id` is null until its row could be written. */
  #answer: { id: string | null; text: string; flushedAt: number } | null = null;
  readonly #pending: PendingWrites | undefined;

  constructor(db: Queryable, conversationId: string, pending?: PendingWrites) {
    this.#db = db;
    this.#conversationId = conversationId;
    this.#pending = pending;
  }

  /** The user's message; `files` may carry what the model got of each (ReportedFileRef). */
  async user(text: string, files: FileRef[]): Promise<void> {
    await appendMessage(this.#db, {
      conversationId: this.#conversationId,
      role: 'user',
      content: text,
      metadata: files.length ? { files } : {},
    });
  }

  /** Records a streamed agent event (tokens and tool cards); other events are the caller's. */
  async record(event: AgentEvent): Promise<void> {
    switch (event.type) {
      case 'token':
        return this.token(event.token);
      case 'tool_start':
        return this.toolStart(event.tool, event.input, event.toolCallId);
      case 'tool_end':
        return this.toolEnd(event.toolCallId, { output: event.output, durationMs: event.durationMs });
      case 'tool_error':
        return this.toolEnd(event.toolCallId, { error: event.error, code: event.code });
    }
  }

  async token(token: string): Promise<void> {
    if (!this.#answer) {
      this.#answer = { id: null, text: token, flushedAt: Date.now() };
      return this.#tryFlush();
    }
    this.#answer.text += token;
    if (Date.now() - this.#answer.flushedAt > FLUSH_EVERY_MS) await this.#tryFlush();
  }

  /** A periodic write: with the database away the text simply stays in memory for the next one. */
  async #tryFlush(): Promise<void> {
    try {
      await this.#flushAnswer();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || !this.#pending) throw error;
      this.#answer!.flushedAt = Date.now();
    }
  }

  async toolStart(tool: string, input: unknown, toolCallId: string): Promise<void> {
    await this.endAnswer();
    const row = await appendMessage(this.#db, {
      conversationId: this.#conversationId,
      role: 'assistant',
      content: '',
      metadata: { type: 'tool', tool, input, tool_call_id: toolCallId, status: 'running' },
    });
    this.#toolMessageIds.set(toolCallId, row.id);
  }

  async toolEnd(toolCallId: string, result: { output: unknown; durationMs: number } | { error: string; code?: ErrorCode }): Promise<void> {
    const id = this.#toolMessageIds.get(toolCallId) ?? (await this.#findCard('tool_call_id', toolCallId));
    const patch = 'error' in result
      ? { status: 'error', error: result.error, ...(result.code ? { code: result.code } : {}) }
      : { status: 'done', output: result.output, duration_ms: result.durationMs };
    if (id) await updateMessage(this.#db, { id, metadataPatch: patch });
  }

  async approvalRequested(card: OpenedApproval): Promise<void> {
    await this.endAnswer();
    await appendMessage(this.#db, {
      conversationId: this.#conversationId,
      role: 'assistant',
      content: '',
      metadata: {
        type: 'approval',
        approval_id: card.approvalId,
        tool: card.tool,
        input: card.input,
        prompt: card.prompt,
        expires_at: card.expiresAt.toISOString(),
        timeout_s: card.timeoutS,
        status: 'pending',
      },
    });
  }

  async approvalResolved(approvalId: string, status: 'confirmed' | 'denied' | 'expired'): Promise<void> {
    const id = await this.#findCard('approval_id', approvalId);
    if (id) await updateMessage(this.#db, { id, metadataPatch: { status } });
  }

  /** A card written by an earlier run (a resumed turn's tool, a paused turn's approval). */
  async #findCard(key: string, value: string): Promise<string | undefined> {
    return (await findMessageByMetadata(this.#db, { conversationId: this.#conversationId, key, value }))?.id;
  }

  /**
   * Writes the current answer segment and starts a new one at the next token. With the database
   * away (and a PendingWrites given) the segment is kept and written when it is back.
   */
  async endAnswer(extra: Record<string, unknown> = {}): Promise<void> {
    const answer = this.#answer ?? (Object.keys(extra).length ? { id: null, text: '', flushedAt: 0 } : null);
    if (!answer) return;
    try {
      await this.#writeAnswer(answer, extra);
    } catch (error) {
      // Anything else keeps the segment, so the caller's error path can still mark it.
      if (!isDatabaseUnavailable(error) || !this.#pending) throw error;
      const segment = { ...answer };
      this.#pending.defer(`answer of conversation ${this.#conversationId}`, () => this.#writeAnswer(segment, extra));
    }
    this.#answer = null;
  }

  async #flushAnswer(): Promise<void> {
    await this.#writeAnswer(this.#answer!);
  }

  /** Inserts the segment's row on its first write, updates it after; the text is cumulative. */
  async #writeAnswer(answer: { id: string | null; text: string; flushedAt: number }, extra: Record<string, unknown> = {}): Promise<void> {
    const patch = Object.keys(extra).length ? extra : undefined;
    if (answer.id === null) {
      const row = await appendMessage(this.#db, {
        conversationId: this.#conversationId,
        role: 'assistant',
        content: answer.text,
        metadata: { type: 'answer', ...patch },
      });
      answer.id = row.id;
    } else {
      await updateMessage(this.#db, { id: answer.id, content: answer.text, ...(patch ? { metadataPatch: patch } : {}) });
    }
    answer.flushedAt = Date.now();
  }
}
