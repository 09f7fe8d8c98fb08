/**
 * Test doubles: a scripted transport (each submit gets a controllable run) and an in-memory api.
 */
import type { Api } from '../../../../../src/lib/chat/api.ts';
import type { ChatRun, ChatTransport, SubmitInput, TransportEvent } from '../../../../../src/lib/chat/transport.ts';
import type { SseFrame } from '../../../../../src/lib/chat/event-stream.ts';
import { runMarks, type RunMarks } from '../../../../../src/lib/chat/run-marks.ts';
import type { BranchFork } from '../../../../../src/lib/wire/branches.ts';
import type { StoredMessage, WireChatMessage } from '../../../../../src/lib/chat/types.ts';

/** One submit's stream, pushed by the test. */
export class FakeRun implements ChatRun {
  readonly input: SubmitInput;
  cancelled = false;
  #queue: (TransportEvent | null)[] = [];
  #wake: (() => void) | null = null;
  /** When set, cancel() ends the stream like the gateway does (completion after cancel). */
  endOnCancel = true;

  constructor(input: SubmitInput) {
    this.input = input;
  }
  push(message: WireChatMessage): void {
    this.#put({ type: 'message', message });
  }
  fail(code: string, detail = ''): void {
    this.#put({ type: 'failed', code, detail });
  }
  end(): void {
    this.#put(null);
  }
  async cancel(): Promise<void> {
    this.cancelled = true;
    if (this.endOnCancel) this.end();
  }
  #put(e: TransportEvent | null): void {
    this.#queue.push(e);
    this.#wake?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<TransportEvent> {
    for (;;) {
      while (this.#queue.length === 0) await new Promise<void>((r) => (this.#wake = r));
      const next = this.#queue.shift()!;
      if (next === null) return;
      yield next;
      if (next.type === 'failed') return;
    }
  }
}

export class FakeTransport implements ChatTransport {
  runs: FakeRun[] = [];
  closed = false;
  alive = true;
  info = { offlineModel: false };
  submit(input: SubmitInput): FakeRun {
    const run = new FakeRun(input);
    this.runs.push(run);
    return run;
  }
  async upload(files: File[]) {
    return files.map((f) => ({ path: `/tmp/${f.name}`, orig_name: f.name }));
  }
  async probe() {
    return this.alive;
  }
  close() {
    this.closed = true;
  }
  get last(): FakeRun {
    return this.runs[this.runs.length - 1];
  }
}

/**
 * The wire message helpers: `{role, content, metadata: {type, ...}}`, without the
 * `conversation_id` the UI does not read, and loose so that a test can send what the gateway
 * would not (an unknown code).
 */
const yielded = (content: string, metadata: object): WireChatMessage => ({ role: 'assistant', content, metadata }) as WireChatMessage;
export const wire = {
  token: (content: string, token: string) => yielded(content, { type: 'stream_token', token }),
  toolStart: (id: string, tool: string, input: unknown) => yielded('', { type: 'tool_start', tool, input, tool_call_id: id }),
  toolEnd: (id: string, tool: string, output: unknown, ms = 12) => yielded('', { type: 'tool_end', tool, output, tool_call_id: id, duration_ms: ms }),
  toolError: (id: string, tool: string, error: string) => yielded('', { type: 'tool_error', tool, error, tool_call_id: id }),
  confirm: (approvalId: string, tool: string, input: unknown, expiresAt: string) =>
    yielded('', { type: 'confirm_required', prompt: `Run ${tool}?`, thread_id: 't', approval_id: approvalId, tool, input, expires_at: expiresAt, timeout_s: 300 }),
  resolved: (approvalId: string, result: string) => yielded('', { type: 'confirm_resolved', result, approval_id: approvalId }),
  error: (code: string, detail = '', retryable = false) => yielded('', { type: 'error', code, detail, retryable }),
};

/** An api whose conversations and history live in memory; calls are recorded. */
export function fakeApi(
  history: Record<string, StoredMessage[]> = {},
  pageSize = 50,
  /**
   * `frames` for every events() call, or `connections`: the frames of the 1st, 2nd… call.
   * `last`: the kind of the event at the ledger head (eventAt), 'run.finished' unless set; a
   * test changes it (and `history`) while a followed run goes on.
   */
  stream: { ledgerSeq?: number; frames?: SseFrame[]; connections?: SseFrame[][]; last?: string; cancel?: () => Promise<void>; branches?: { active: number; forks: BranchFork[] } } = {},
) {
  const calls: string[] = [];
  let n = 0;
  const api = {
    calls,
    async createConversation(body: { title?: string; text?: string } = {}) {
      const title = body.title ?? body.text?.slice(0, 80);
      calls.push(`create:${title}`);
      const now = new Date().toISOString();
      return { id: `c${++n}`, title: title ?? null, created_at: now, updated_at: now, archived: false };
    },
    async history(id: string, before?: string | null, _limit?: number, branch?: number) {
      calls.push(`history:${id}:${before ?? ''}${branch === undefined ? '' : `@${branch}`}`);
      const all = history[id] ?? [];
      const end = before ? all.findIndex((m) => m.id === before) : all.length;
      const start = Math.max(0, end - pageSize);
      return { items: all.slice(start, end), next: start > 0 ? all[start].id : null, ledgerSeq: stream.ledgerSeq, activeBranch: stream.branches?.active ?? 0, forks: stream.branches?.forks ?? [] };
    },
    async eventAt(id: string, seq: number) {
      calls.push(`eventAt:${id}:${seq}`);
      return seq > 0 ? { seq, kind: stream.last ?? 'run.finished' } : null;
    },
    async switchBranch(id: string, branch: number) {
      calls.push(`branch:${id}:${branch}`);
      return { conversation_id: id, active_branch: branch, seq: 1 };
    },
    async removeQueued(id: string, requestId: string) {
      calls.push(`unqueue:${id}:${requestId}`);
    },
    async cancelRun(id: string) {
      calls.push(`cancel:${id}`);
      await stream.cancel?.();
    },
    async *events(id: string, after: number) {
      calls.push(`events:${id}:${after}`);
      const opened = calls.filter((c) => c.startsWith('events:')).length - 1;
      for (const frame of (stream.connections ? stream.connections[opened] : stream.frames) ?? []) {
        await settle();
        yield frame;
      }
    },
  };
  return api as unknown as Api & { calls: string[] };
}

/** Lets pending promise callbacks run. */
export const settle = () => new Promise<void>((r) => setTimeout(r, 0));

/** The runs a tab started, in memory (sessionStorage in the browser). */
export function memoryMarks(ids: string[] = [], now: () => number = Date.now): RunMarks {
  const store = new Map<string, string>();
  const marks = runMarks({ getItem: (k) => store.get(k) ?? null, setItem: (k, v) => void store.set(k, v), removeItem: (k) => void store.delete(k) }, now);
  ids.forEach((id) => marks.set(id));
  return marks;
}
