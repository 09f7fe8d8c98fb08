/**
 * A checkpointer that writes behind. The graph runs with durability "sync" (each step's checkpoint
 * stored before the next step starts); through this saver a step's writes are answered at once and
 * stored in the background, puts in order per thread, so the model's first token no longer waits
 * for a checkpoint's round trips. What "sync" was for is kept where it matters:
 * - before a side effect: a tool awaits `stored(thread)` first (ToolContext.checkpointed), so the
 *   step that asked for the call is stored before anything runs, and a crash re-runs the call under
 *   the same id (the api's Idempotency-Key), never under a new one;
 * - before a read: getTuple and list wait for the thread's writes; the runtime awaits them before a
 *   run ends, so the turn's last ledger commit comes after its checkpoints, as before.
 * A failed write fails the next wait (once): the run fails and nothing builds on a short thread.
 * @module
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';

interface ThreadWrites {
  /** The last put: the next one starts after it (LangGraph chains them the same way). */
  lastPut: Promise<unknown>;
  inFlight: Set<Promise<unknown>>;
  failure?: { error: unknown };
}

export class WriteBehindSaver extends BaseCheckpointSaver {
  readonly #inner: BaseCheckpointSaver;
  readonly #threads = new Map<string, ThreadWrites>();

  constructor(inner: BaseCheckpointSaver) {
    super(inner.serde);
    this.#inner = inner;
  }

  /** Threads with writes not yet stored, or a failure not yet reported (the rest are forgotten). */
  get pendingThreads(): number {
    return this.#threads.size;
  }

  /** Resolves once every write of the thread so far is stored; rejects (once) when one failed. */
  async stored(threadId: string): Promise<void> {
    const thread = this.#threads.get(threadId);
    if (!thread) return;
    while (thread.inFlight.size > 0) await Promise.allSettled([...thread.inFlight]);
    if (!thread.failure) return; // stored: #track has forgotten the thread
    // Reported once, then the thread starts afresh (its puts after the failed one were skipped).
    if (this.#threads.get(threadId) === thread && thread.inFlight.size === 0) this.#threads.delete(threadId);
    const { error } = thread.failure;
    thread.failure = undefined;
    throw error;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.stored(threadOf(config));
    return this.#inner.getTuple(config);
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId) await this.stored(threadId);
    else await Promise.all([...this.#threads.keys()].map((id) => this.stored(id)));
    yield* this.#inner.list(config, options);
  }

  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = threadOf(config);
    const thread = this.#thread(threadId);
    // A put after a failed one is skipped (it would store a checkpoint whose parent is missing).
    const write = thread.lastPut.then(() => this.#inner.put(config, checkpoint, metadata, newVersions));
    thread.lastPut = write;
    this.#track(thread, write, threadId);
    // What PostgresSaver and MemorySaver return, known without waiting.
    return Promise.resolve({ configurable: { thread_id: threadId, checkpoint_ns: config.configurable?.checkpoint_ns ?? '', checkpoint_id: checkpoint.id } });
  }

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = threadOf(config);
    this.#track(this.#thread(threadId), this.#inner.putWrites(config, writes, taskId, taskPath), threadId);
    return Promise.resolve();
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.stored(threadId).catch(() => {});
    await this.#inner.deleteThread(threadId);
  }

  getNextVersion(current: number | undefined): number {
    return this.#inner.getNextVersion(current);
  }

  #thread(threadId: string): ThreadWrites {
    let thread = this.#threads.get(threadId);
    if (!thread) this.#threads.set(threadId, (thread = { lastPut: Promise.resolve(), inFlight: new Set() }));
    return thread;
  }

  #track(thread: ThreadWrites, write: Promise<unknown>, threadId: string): void {
    const settled = (error?: { error: unknown }) => {
      thread.inFlight.delete(tracked);
      if (error) thread.failure ??= error;
      // Nothing left to wait for or to report: forget the thread (a run aborted mid-write leaves none behind).
      if (thread.inFlight.size === 0 && !thread.failure && this.#threads.get(threadId) === thread) this.#threads.delete(threadId);
    };
    const tracked: Promise<unknown> = write.then(() => settled(), (error: unknown) => settled({ error }));
    thread.inFlight.add(tracked);
  }
}

function threadOf(config: RunnableConfig): string {
  const threadId = config.configurable?.thread_id as string | undefined;
  if (!threadId) throw new Error('A checkpoint needs configurable.thread_id.');
  return threadId;
}
