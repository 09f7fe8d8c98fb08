/**
 * One conversation's live state: history, the running submit, confirm/deny, Stop, Retry.
 * Wire events go through the pure `applyChatEvent`; token frames are applied at most once per
 * animation frame so a fast stream costs one render per frame.
 * @module
 */
import type { Api } from './api.ts';
import type { Connection } from './connection.svelte.ts';
import { isApiError } from './errors.ts';
import { EventsToWire } from './event-stream.ts';
import { itemsFromHistory } from './history.ts';
import { FrameBatch } from './frame-batch.ts';
import { applyChatEvent, initialView, type ChatEvent, type ChatView } from './reducer.ts';
import type { ChatRun, SubmitInput } from './transport.ts';
import type { ChatItem, ChatPhase, FileRef, WireChatMessage } from './types.ts';

export interface ChatStateOptions {
  api: Api;
  connection: Pick<Connection, 'require' | 'lost'>;
  onUnauthorized?: () => void;
  /** A new conversation was created for the first message. */
  onCreated?: (conversation: { id: string; title: string | null }) => void;
  /** The phase changed (the tab gate tells other tabs). */
  onPhase?: (phase: ChatPhase) => void;
  /** Runs `fn` before the next paint; tests pass a synchronous one. */
  schedule?: (fn: () => void) => void;
  /** How long Stop waits for the gateway's terminal message before giving up on the run. */
  stopGraceMs?: number;
}

export class ChatState {
  #view = $state.raw<ChatView>(initialView());
  #conversationId = $state<string | null>(null);
  #older = $state<string | null>(null);
  #loading = $state<'idle' | 'history' | 'older'>('idle');
  #loadError = $state<string | null>(null);
  #owns = $state(false);
  #options: ChatStateOptions;
  #run: ChatRun | null = null;
  /** The signal of the watch() following the conversation's event stream, if any. */
  #watching: AbortSignal | null = null;
  #runToken = 0;
  #tokens: FrameBatch<WireChatMessage>;
  #sending = false;
  #lastInput: SubmitInput | null = null;
  #stopped = -1;
  /** The ledger seq the shown history reflects (a followed run's events come after it). */
  #ledgerSeq: number | null = null;

  readonly items: ChatItem[] = $derived(this.#view.items);
  readonly phase: ChatPhase = $derived(this.#view.phase);
  readonly busy: boolean = $derived(this.#view.phase === 'streaming');
  readonly announcement: string = $derived(this.#view.announcement);
  readonly pendingApproval = $derived(this.#view.items.find((i) => i.kind === 'approval' && i.status === 'pending') ?? null);

  constructor(options: ChatStateOptions) {
    this.#options = options;
    this.#tokens = new FrameBatch((messages) => {
      let view = this.#view;
      for (const message of messages) view = applyChatEvent(view, { type: 'message', message });
      this.#set(view);
    }, options.schedule);
  }

  get conversationId(): string | null {
    return this.#conversationId;
  }
  get hasOlder(): boolean {
    return this.#older !== null;
  }
  get loading(): 'idle' | 'history' | 'older' {
    return this.#loading;
  }
  get loadError(): string | null {
    return this.#loadError;
  }
  /** True when this tab's own submit put the conversation in its phase (not a pause seen in history). */
  get ownsPhase(): boolean {
    return this.#owns && this.#view.phase !== 'idle';
  }

  /** Switches to a conversation (null: a new, empty one) and loads its latest page. */
  async open(id: string | null): Promise<void> {
    if (id === this.#conversationId && id !== null) return;
    this.#abandon();
    this.#conversationId = id;
    this.#older = null;
    this.#loadError = null;
    this.#owns = false;
    this.#dispatch({ type: 'loaded', items: [] });
    if (id) await this.reload();
  }

  /** Reloads the latest page (after another tab finished, or after a reconnect). */
  async reload(): Promise<void> {
    const id = this.#conversationId;
    if (!id || this.busy) return;
    this.#loading = 'history';
    try {
      const page = await this.#options.api.history(id);
      if (id !== this.#conversationId || this.busy) return;
      this.#older = page.next;
      this.#owns = false;
      this.#ledgerSeq = page.ledgerSeq ?? null;
      this.#dispatch({ type: 'loaded', items: itemsFromHistory(page.items) });
    } catch (error) {
      this.#loadFailed(error);
    } finally {
      this.#loading = 'idle';
    }
  }

  /**
   * Follows a run this tab did not start (another tab's, or the one a reload left running), live
   * and read-only: the answer continues in place. Ends with the run; the gate's release then
   * reloads the stored truth. `pause` follows a paused run instead: whoever answers its
   * approval (another tab, the approvals API, expiry), the card resolves here and the resumed
   * answer streams in.
   */
  async watch(signal: AbortSignal, options: { pause?: boolean } = {}): Promise<void> {
    // One live follower at a time (the gate's and a pause's may both ask): a second would repeat
    // frames. One whose signal was aborted is ending and reads nothing more.
    if (this.#watching && !this.#watching.aborted) return;
    this.#watching = signal;
    try {
      await this.#watch(signal, options.pause ?? false);
    } finally {
      if (this.#watching === signal) this.#watching = null;
    }
  }

  /**
   * `pause`: the view already shows everything up to the pause (the card is on screen), so only
   * the ledger position is fetched and the view is left as it is (#catchUp); what follows is a
   * decision made elsewhere (another tab or browser, the headless approvals API, the expiry) and
   * the resumed answer.
   */
  async #watch(signal: AbortSignal, pause: boolean): Promise<void> {
    const ownRuns = this.#runToken;
    if (!pause) await this.reload(); // a fresh page and the ledger seq it reflects
    else if (!(await this.#catchUp())) return;
    const id = this.#conversationId;
    // A submit of this tab from here on is its own run: the stream's copy of it is not applied.
    if (!id || this.busy || this.#ledgerSeq === null || signal.aborted || this.#runToken !== ownRuns) return;
    // The answer being written is in history as far as it was flushed; the stream's first
    // partial frame is the whole of it, so the stored copy gives way.
    const last = this.#view.items[this.#view.items.length - 1];
    if (!pause && last?.kind === 'answer') this.#dispatch({ type: 'dismiss', id: last.id });
    const toWire = new EventsToWire(id);
    try {
      // A server that drains (a restart, a replica stopping) says when to come back: reconnect
      // after the last seq seen (Last-Event-ID), to whichever process answers, a few times.
      for (let reconnects = 0; ; reconnects++) {
        let retryAfterMs: number | null = null;
        try {
          for await (const frame of this.#options.api.events(id, this.#ledgerSeq!, signal)) {
            if (id !== this.#conversationId || this.#run || this.#runToken !== ownRuns) return;
            if (frame.id !== undefined) this.#ledgerSeq = frame.id;
            for (const message of toWire.apply(frame)) this.#queue(message);
            if (frame.event === 'run.finished') return;
            if (frame.event === 'drain') {
              retryAfterMs = drainDelay(frame.data);
              break;
            }
          }
        } catch (error) {
          // A lost stream is not an error of this tab (the reload after the run shows what
          // happened); after a drain the server may still be restarting: try again.
          if (reconnects === 0 || signal.aborted) throw error;
          retryAfterMs = DRAIN_RETRY_MS;
        }
        if (retryAfterMs === null || reconnects >= MAX_DRAIN_RECONNECTS || signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
        toWire.reconnected();
      }
    } catch {
      // As above: the reload when the run ends shows the outcome.
    } finally {
      if (id === this.#conversationId && !this.#run && this.#runToken === ownRuns) {
        this.#tokens.flush();
        this.#dispatch({ type: 'ended', reason: 'complete' });
      }
    }
  }

  /**
   * The ledger seq of what is shown, for following a pause: the view stays as it is (re-rendering
   * would take the focus off the card) unless the pause was answered meanwhile, which reloads.
   * False when there is nothing left to follow.
   */
  async #catchUp(): Promise<boolean> {
    const id = this.#conversationId;
    if (!id || this.busy) return false;
    try {
      const page = await this.#options.api.history(id);
      if (id !== this.#conversationId || this.busy) return false;
      const stillPending = itemsFromHistory(page.items).some((item) => item.kind === 'approval' && item.status === 'pending');
      if (!stillPending) {
        await this.reload();
        return false;
      }
      this.#ledgerSeq = page.ledgerSeq ?? null;
      return true;
    } catch {
      return false; // the card stays; a reload or the next run shows the outcome
    }
  }

  /** Loads the page before the oldest shown. */
  async loadOlder(): Promise<void> {
    const id = this.#conversationId;
    if (!id || !this.#older || this.#loading !== 'idle') return;
    this.#loading = 'older';
    try {
      const page = await this.#options.api.history(id, this.#older);
      if (id !== this.#conversationId) return;
      this.#older = page.next;
      this.#dispatch({ type: 'loaded', items: itemsFromHistory(page.items), prepend: true });
    } catch (error) {
      this.#loadFailed(error);
    } finally {
      this.#loading = 'idle';
    }
  }

  /** Sends a message; creates the conversation first when there is none. */
  async send(text: string, files: FileRef[] = []): Promise<boolean> {
    if (this.busy || this.#sending || (!text.trim() && files.length === 0)) return false;
    let id = this.#conversationId;
    if (!id) {
      this.#sending = true; // a second Enter while the conversation is being created
      try {
        const created = await this.#options.api.createConversation(text.trim().slice(0, 80) || 'Attachment');
        id = created.id;
        this.#conversationId = id;
        this.#options.onCreated?.(created);
      } catch (error) {
        this.#dispatch({ type: 'submitted', text, files });
        this.#fail(error);
        return true;
      } finally {
        this.#sending = false;
      }
    }
    void this.#start({ text, files, conversationId: id, action: null }, { type: 'submitted', text, files });
    return true;
  }

  confirm(approvalId: string): void {
    this.#decide(approvalId, 'confirm');
  }
  deny(approvalId: string): void {
    this.#decide(approvalId, 'deny');
  }

  /** Stop: cancels the running submit; the answer so far stays, marked stopped. */
  async stop(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    const token = this.#runToken;
    this.#stopped = token;
    await run.cancel().catch(() => undefined);
    setTimeout(() => {
      // The gateway should end the event itself; if it does not, stop listening to it.
      if (this.#runToken === token && this.#run === run) {
        this.#abandon();
        this.#dispatch({ type: 'ended', reason: 'cancelled' });
      }
    }, this.#options.stopGraceMs ?? 3_000);
  }

  /** Retry after a retryable error: removes its card and repeats the last submit. */
  retry(errorId: string): void {
    const input = this.#lastInput;
    if (this.busy) return;
    if (!input) {
      // An error from history: ask again with the user message that led to it.
      const at = this.#view.items.findIndex((i) => i.id === errorId);
      const asked = this.#view.items.slice(0, at).findLast((i) => i.kind === 'user');
      this.#dispatch({ type: 'dismiss', id: errorId });
      if (asked && asked.kind === 'user') void this.send(asked.text, asked.files);
      return;
    }
    this.#dispatch({ type: 'dismiss', id: errorId });
    const approvalId = input.action ? input.approvalId : undefined;
    void this.#start(input, { type: 'submitted', text: input.text, files: input.files, action: input.action, approvalId, retry: true });
  }

  /** Marks approvals past their deadline expired (called by a clock). */
  tick(now = Date.now()): void {
    this.#dispatch({ type: 'tick', now });
  }

  #decide(approvalId: string, action: 'confirm' | 'deny'): void {
    const card = this.#view.items.find((i) => i.id === approvalId);
    if (!card || card.kind !== 'approval' || card.status !== 'pending' || card.deciding || this.busy) return;
    const id = this.#conversationId;
    if (!id) return;
    void this.#start({ text: action, files: [], conversationId: id, action, approvalId }, { type: 'submitted', text: action, action, approvalId });
  }

  async #start(input: SubmitInput, event: ChatEvent): Promise<void> {
    this.#lastInput = input;
    this.#owns = true;
    const token = ++this.#runToken;
    this.#dispatch(event);
    let run: ChatRun;
    try {
      run = this.#options.connection.require().submit(input);
    } catch (error) {
      this.#fail(error);
      return;
    }
    this.#run = run;
    try {
      for await (const e of run) {
        if (token !== this.#runToken) return;
        if (e.type === 'message') {
          this.#queue(e.message);
          const m = e.message.metadata;
          if (m?.type === 'error' && m.code === 'UNAUTHORIZED') this.#options.onUnauthorized?.();
          if (m?.type === 'error' && m.code === 'SERVICE_UNAVAILABLE') this.#options.connection.lost('unavailable');
        } else {
          this.#tokens.flush();
          if (this.#stopped === token) break; // Stop won the race: the run ends as stopped, not as an error
          if (e.code === 'GRADIO_UNREACHABLE') this.#options.connection.lost();
          if (e.code === 'SERVICE_UNAVAILABLE') this.#options.connection.lost('unavailable');
          if (e.code === 'UNAUTHORIZED') this.#options.onUnauthorized?.();
          this.#dispatch({ type: 'failed', code: e.code, detail: e.detail });
          return;
        }
      }
      if (token !== this.#runToken) return;
      this.#tokens.flush();
      this.#dispatch({ type: 'ended', reason: this.#stopped === token ? 'cancelled' : 'complete' });
    } catch (error) {
      if (token === this.#runToken) this.#fail(error);
    } finally {
      if (this.#run === run) this.#run = null;
    }
  }

  /** Only tokens are batched; cards and decisions show at once, in order. */
  #queue(message: WireChatMessage): void {
    if (message.metadata?.type === 'stream_token') return this.#tokens.push(message);
    this.#tokens.flush();
    this.#dispatch({ type: 'message', message });
  }

  #fail(error: unknown): void {
    this.#tokens.flush();
    const code = isApiError(error) ? error.code : 'INTERNAL';
    if (code === 'UNAUTHORIZED') this.#options.onUnauthorized?.();
    if (code === 'GRADIO_UNREACHABLE') this.#options.connection.lost();
    if (code === 'SERVICE_UNAVAILABLE') this.#options.connection.lost('unavailable');
    this.#dispatch({ type: 'failed', code, detail: error instanceof Error ? error.message : String(error) });
  }

  #loadFailed(error: unknown): void {
    if (isApiError(error) && error.code === 'UNAUTHORIZED') return this.#options.onUnauthorized?.();
    this.#loadError = error instanceof Error ? error.message : String(error);
  }

  /** Forgets the running submit (conversation switched, or Stop got no answer). */
  #abandon(): void {
    this.#runToken++;
    this.#tokens.clear();
    this.#run = null;
  }

  #dispatch(event: ChatEvent): void {
    this.#set(applyChatEvent(this.#view, event));
  }

  #set(view: ChatView): void {
    const before = this.#view.phase;
    this.#view = view;
    if (view.phase !== before) this.#options.onPhase?.(view.phase);
  }
}

/** How often, and how long apart at least, a followed stream is reopened after a drain. */
const MAX_DRAIN_RECONNECTS = 10;
const DRAIN_RETRY_MS = 1_000;

/** The drain frame's `retry_after_ms` (bounded), else the default. */
function drainDelay(data: unknown): number {
  const ms = (data as { retry_after_ms?: unknown } | null)?.retry_after_ms;
  return typeof ms === 'number' && Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 30_000) : DRAIN_RETRY_MS;
}
