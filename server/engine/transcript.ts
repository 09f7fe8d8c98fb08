/**
 * Writes the conversation as it happens: the user message, tool cards, approval cards and the
 * answer, in the shapes the UI renders (CONTRACTS.md §4). Answer text is kept in memory and
 * written at segment ends (a tool call, a pause, the end, a cancel) and every few seconds, not
 * per token. Writes that a ledger event describes take that event's transaction (`tx`), so the
 * history and the ledger never disagree; a failure there fails the commit (the turn decides what
 * to keep). Periodic answer flushes are not ledger events: while the database is away they keep
 * the text in memory for the next write.
 * @module
 */
import type { ApprovalProgress, OpenedApproval } from '../approvals/decide.ts';
import type { ApprovalReason } from '../approvals/rules.ts';
import { isDatabaseUnavailable, type Queryable } from '../db/index.ts';
import { appendMessage, patchNewestByMetadata, updateMessage } from '../db/messages.ts';
import type { ErrorCode } from '../errors.ts';
import type { FileRef } from './types.ts';

const FLUSH_EVERY_MS = 2_000;

export type ToolOutcome = { output: unknown; durationMs: number } | { error: string; code?: ErrorCode };

/** What a tool card says once its call ended. */
function toolCardEnd(result: ToolOutcome): Record<string, unknown> {
  return 'error' in result
    ? { status: 'error', error: result.error, ...(result.code ? { code: result.code } : {}) }
    : { status: 'done', output: result.output, duration_ms: result.durationMs };
}

interface AnswerSegment {
  /** Null until its row could be written. */
  id: string | null;
  text: string;
  flushedAt: number;
}

export class Transcript {
  readonly #db: Queryable;
  readonly #conversationId: string;
  readonly #toolMessageIds = new Map<string, string>();
  #answer: AnswerSegment | null = null;
  /** The branch its rows are written on (issue 29); a fork moves the turn to its new branch. */
  branch = 0;
  #flushing: Promise<void> | null = null;
  #flushError: unknown = null;

  constructor(db: Queryable, conversationId: string) {
    this.#db = db;
    this.#conversationId = conversationId;
  }

  /** A copy of the current answer segment, to restore before a failed commit is retried. */
  async saveAnswer(): Promise<AnswerSegment | null> {
    await this.#flushing; // its row id belongs in the copy
    this.#flushError = null; // the turn is already failing: its own error is the one reported
    return this.#answer && { ...this.#answer };
  }

  restoreAnswer(saved: AnswerSegment | null): void {
    this.#answer = saved && { ...saved };
  }

  /**
   * Runs a commit that may end the answer segment (`endAnswer` in its transaction). When the
   * commit fails (a connection lost mid-transaction rolls its writes back), the segment is as it
   * was before, so the turn's error path still has the answer to keep and to write: without this,
   * an answer ended in a transaction that never committed was gone from memory and from the table.
   */
  async atomically<T>(commit: () => Promise<T>): Promise<T> {
    await this.#flushing; // a background write may still be giving the segment its row id
    const before = this.#answer && { ...this.#answer };
    try {
      return await commit();
    } catch (error) {
      this.#answer = before;
      throw error;
    }
  }

  /** The answer text of the current segment (not yet ended). */
  get answerText(): string {
    return this.#answer?.text ?? '';
  }

  async user(text: string, files: FileRef[], tx: Queryable = this.#db): Promise<void> {
    await appendMessage(tx, { conversationId: this.#conversationId, branch: this.branch, role: 'user', content: text, metadata: files.length ? { files } : {} });
  }

  /**
   * Adds a token. The periodic answer write runs in the background, one at a time: a token never
   * waits on the database (time to first token, per-token cost). The partial was never a
   * committed event, so a crash loses at most what it always could; every write that ends a
   * segment first waits for the background one (endAnswer), so the row is inserted once.
   */
  token(token: string): void {
    this.#throwFlushError();
    if (!this.#answer) {
      this.#answer = { id: null, text: token, flushedAt: Date.now() };
      this.#startFlush();
      return;
    }
    this.#answer.text += token;
    if (!this.#flushing && Date.now() - this.#answer.flushedAt > FLUSH_EVERY_MS) this.#startFlush();
  }

  #startFlush(): void {
    this.#flushing = this.#tryFlush(this.#answer!)
      .catch((error: unknown) => void (this.#flushError = error))
      .finally(() => (this.#flushing = null));
  }

  /** A background write's failure other than "database away" fails the turn at its next step. */
  #throwFlushError(): void {
    if (this.#flushError === null) return;
    const error = this.#flushError;
    this.#flushError = null;
    throw error;
  }

  /** Waits for the background answer write, if any (then the segment's row id is known). */
  async #idle(): Promise<void> {
    await this.#flushing;
    this.#throwFlushError();
  }

  /** A periodic write: with the database away the text simply stays in memory for the next one. */
  async #tryFlush(answer: AnswerSegment): Promise<void> {
    try {
      await this.#writeAnswer(answer, {}, this.#db);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      answer.flushedAt = Date.now();
    }
  }

  /** The card of a call as it starts (`running`); with `ended`, of a call reported only once it ended. */
  async toolStart(tool: string, input: unknown, toolCallId: string, tx: Queryable = this.#db, ended?: ToolOutcome, grant?: { id: string; by: string; until: string }): Promise<void> {
    await this.endAnswer({}, tx);
    const row = await appendMessage(tx, {
      conversationId: this.#conversationId,
      branch: this.branch,
      role: 'assistant',
      content: '',
      metadata: {
        type: 'tool', tool, input, tool_call_id: toolCallId, ...(ended ? toolCardEnd(ended) : { status: 'running' }),
        // Run under a standing grant, without a card (issue 27): the stored card says which, by whom, until when.
        ...(grant ? { grant_id: grant.id, grant_by: grant.by, grant_until: grant.until } : {}),
      },
    });
    this.#toolMessageIds.set(toolCallId, row.id);
  }

  async toolEnd(toolCallId: string, result: ToolOutcome, tx: Queryable = this.#db): Promise<void> {
    const patch = toolCardEnd(result);
    const id = this.#toolMessageIds.get(toolCallId);
    if (id) await updateMessage(tx, { id, metadataPatch: patch });
    else await this.#patchCard('tool_call_id', toolCallId, patch, tx);
  }

  async approvalRequested(card: OpenedApproval, tx: Queryable = this.#db): Promise<void> {
    await this.endAnswer({}, tx);
    await appendMessage(tx, {
      conversationId: this.#conversationId,
      branch: this.branch,
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
        preview: card.preview,
        labels: card.labels,
        grantable: card.grant,
        ...(card.stepUp ? { step_up: card.stepUp } : {}),
        ...(card.replaces ? { replaces: { approval_id: card.replaces.approvalId, reason: card.replaces.reason } } : {}),
        ...(card.approvalsRequired > 1 ? { approvals_required: card.approvalsRequired, approved_by: [], ...(card.approvers ? { approvers: card.approvers } : {}) } : {}),
      },
    });
  }

  /** One approver of several approved (issue 26): the card says who so far, as the live one does after a reload. */
  async approvalProgress(p: ApprovalProgress, tx: Queryable = this.#db): Promise<void> {
    await this.#patchCard('approval_id', p.approvalId, { approvals_required: p.approvalsRequired, approved_by: p.approvedBy }, tx);
  }

  /** `extra`: who decided and an edit's arguments (drafts.ts resolvedCardPatch), so a reload says "Approved with changes by …". */
  async approvalResolved(approvalId: string, status: 'confirmed' | 'denied' | 'expired', reason: ApprovalReason, tx: Queryable = this.#db, extra: Record<string, unknown> = {}): Promise<void> {
    await this.#patchCard('approval_id', approvalId, { ...extra, status, reason }, tx);
  }

  /** Updates a card written by an earlier run (a resumed turn's tool, a paused turn's approval). */
  async #patchCard(key: string, value: string, metadataPatch: Record<string, unknown>, tx: Queryable): Promise<void> {
    await patchNewestByMetadata(tx, { conversationId: this.#conversationId, key, value, metadataPatch });
  }

  /**
   * Writes the current answer segment (with `extra` marks) and starts a new one at the next
   * token. On failure the segment is kept, so a retry of the commit writes it whole.
   */
  async endAnswer(extra: Record<string, unknown> = {}, tx: Queryable = this.#db): Promise<void> {
    await this.#idle();
    const answer = this.#answer ?? (Object.keys(extra).length ? { id: null, text: '', flushedAt: 0 } : null);
    if (!answer) return;
    await this.#writeAnswer(answer, extra, tx);
    this.#answer = null;
  }

  /** Inserts the segment's row on its first write, updates it after; the text is cumulative. */
  async #writeAnswer(answer: AnswerSegment, extra: Record<string, unknown>, db: Queryable): Promise<void> {
    const patch = Object.keys(extra).length ? extra : undefined;
    if (answer.id === null) {
      const row = await appendMessage(db, { conversationId: this.#conversationId, branch: this.branch, role: 'assistant', content: answer.text, metadata: { type: 'answer', ...patch } });
      answer.id = row.id;
    } else {
      await updateMessage(db, { id: answer.id, content: answer.text, ...(patch ? { metadataPatch: patch } : {}) });
    }
    answer.flushedAt = Date.now();
  }
}
