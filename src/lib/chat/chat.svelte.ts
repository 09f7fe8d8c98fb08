/**
 * One conversation's live state: history, the running submit, confirm/deny, Stop, Retry.
 * Wire events go through the pure `applyChatEvent`; token frames are applied at most once per
 * animation frame so a fast stream costs one render per frame.
 * @module
 */
import type { Api, HistoryResult } from './api.ts';
import type { Connection } from './connection.svelte.ts';
import { errorText, isApiError } from './errors.ts';
import { EventsToWire } from './event-stream.ts';
import { itemsFromHistory } from './history.ts';
import { branchSwitches, type BranchFork, type BranchSwitch } from '../wire/branches.ts';
import { resumeDecision, tabRunMarks, type RunMarks } from './run-marks.ts';
import { FrameBatch } from './frame-batch.ts';
import { QueuedMessages } from './queued.svelte.ts';
import { applyChatEvent, initialView, type ChatEvent, type ChatView } from './reducer.ts';
import type { ChatRun, SubmitInput } from './transport.ts';
import type { ApprovalItem, ChatItem, ChatPhase, FileRef, WireChatMessage } from './types.ts';

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
  /** The runs this tab started, across its reloads (sessionStorage by default). */
  marks?: RunMarks;
}

/** A run this page follows from the event stream rather than from its own submission. */
interface Follow {
  id: string;
  /** This tab started it (before a reload): shown as its own, with Stop. */
  own: boolean;
  controller: AbortController;
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
  /** The signal of the watchPause() following a paused run, if any. */
  #watching: AbortSignal | null = null;
  /** The open run this page follows (found by reload()), if any. */
  #follow = $state.raw<Follow | null>(null);
  #notice = $state<string | null>(null);
  /** The open conversation's first page has loaded (until then, whether it runs is unknown). */
  #ready = $state(true);
  #marks: RunMarks;
  /** A reload that raced this tab's own submit looks again (resumeDecision 'wait'). */
  #lookAgain: ReturnType<typeof setTimeout> | undefined;
  #runToken = 0;
  #tokens: FrameBatch<WireChatMessage>;
  #sending = false;
  #lastInput: SubmitInput | null = null;
  #stopped = -1;
  /** The ledger seq the shown history reflects (a followed run's events come after it). */
  #ledgerSeq: number | null = null;
  /** A queued message's turn started while this tab's own submit still ended: follow it after. */
  #followQueued = false;
  /** This tab's messages waiting behind the running answer (issue 24 item 4). */
  readonly queued: QueuedMessages;
  /** The conversation's forks and the branch it shows (issue 29), from its last history page. */
  #branches = $state.raw<{ active: number; forks: BranchFork[] }>({ active: 0, forks: [] });
  /** Every place on the shown branch where another version exists: `‹ 1/2 ›`. */
  readonly switches: BranchSwitch[] = $derived(branchSwitches(this.#branches.forks, this.#branches.active));

  readonly items: ChatItem[] = $derived(this.#view.items);
  readonly phase: ChatPhase = $derived(this.#view.phase);
  readonly busy: boolean = $derived(this.#view.phase === 'streaming');
  readonly announcement: string = $derived(this.#view.announcement);
  readonly pendingApproval = $derived(this.#view.items.find((i) => i.kind === 'approval' && i.status === 'pending') ?? null);
  /** Approvals still waiting for someone, none of them being decided: a new message would deny them. */
  readonly waitingApprovals: ApprovalItem[] = $derived(
    this.#view.items.filter((i): i is ApprovalItem => i.kind === 'approval' && i.status === 'pending' && !i.deciding),
  );

  constructor(options: ChatStateOptions) {
    this.#options = options;
    this.#marks = options.marks ?? tabRunMarks();
    this.queued = new QueuedMessages({
      submit: (input) => this.#options.connection.require().submit(input),
      remove: (cid, requestId) => this.#options.api.removeQueued(cid, requestId),
      onStarted: (cid) => this.#queuedStarted(cid),
      onRefused: (code) => (this.#notice = `Your message was not queued: ${errorText(code)}`),
    });
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
    this.queued.reset();
    this.#conversationId = id;
    this.#older = null;
    this.#loadError = null;
    this.#notice = null;
    this.#owns = false;
    this.#ready = id === null;
    this.#branches = { active: 0, forks: [] };
    this.#dispatch({ type: 'loaded', items: [] });
    if (id) await this.reload();
  }

  /**
   * Loads the stored truth: the latest page, and whether the ledger shows a run still open at
   * that snapshot. An open run is followed live from there (#follow): with Stop when this tab
   * started it (a reload mid-answer), read-only otherwise. `follow`: another holder is known to
   * stream (the tab gate): follow from the snapshot even if its run has not shown in the ledger
   * yet, until that signal aborts. While a run streams into the view (a paused run resumed by a
   * decision made elsewhere) nothing is reloaded, unless `force` (resync).
   */
  async reload(options: { follow?: AbortSignal; force?: boolean } = {}): Promise<void> {
    const id = this.#conversationId;
    if (!id || this.#run || this.#follow || (this.busy && !options.force) || options.follow?.aborted) return;
    clearTimeout(this.#lookAgain);
    this.#loading = 'history';
    try {
      const page = await this.#options.api.history(id);
      const seq = page.ledgerSeq ?? null;
      const last = seq ? await this.#options.api.eventAt(id, seq) : null;
      if (id !== this.#conversationId || this.#run || this.#follow || (this.busy && !options.force) || options.follow?.aborted) return;
      this.#older = page.next;
      this.#owns = false;
      this.#ledgerSeq = seq;
      this.#branchesOf(page);
      const decision = resumeDecision({ last, markAge: this.#marks.age(id) });
      // One synchronous step from the stored page to the followed run: no frame shows the
      // stored part of a running answer as if it were final.
      this.#dispatch({ type: 'loaded', items: itemsFromHistory(page.items) });
      if (seq !== null && (decision === 'own' || decision === 'other' || options.follow)) {
        this.#startFollow(id, seq, decision === 'own', last?.kind ?? null, options.follow);
      } else if (decision === 'wait') {
        this.#lookAgain = setTimeout(() => void this.reload(), LOOK_AGAIN_MS);
      } else {
        this.#marks.clear(id);
      }
    } catch (error) {
      this.#loadFailed(error);
    } finally {
      if (id === this.#conversationId) this.#ready = true;
      this.#loading = 'idle';
    }
  }

  /**
   * Whether this page knows the open conversation's state yet: until its first page (and the
   * ledger's word on a running run) has loaded, a run the server reports may well be this tab's
   * own, left running by a reload; the tab gate does not call it someone else's before then.
   */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * The connection came back: what this tab shows may be stale (an answer cut by the outage, an
   * error card about the connection). The ledger is the truth; load it again, as a reload would.
   */
  async resync(): Promise<void> {
    if (!this.#conversationId) return;
    this.#abandon(); // an own submission went with the old connection
    await this.reload({ force: true });
  }

  /** True while this tab follows a run another tab or browser holds (read-only here). */
  get followingOther(): boolean {
    return this.#follow !== null && !this.#follow.own;
  }

  /** A message for the user about Stop (the page could not stop a run it follows). */
  get notice(): string | null {
    return this.#notice;
  }
  dismissNotice(): void {
    this.#notice = null;
  }

  #startFollow(id: string, after: number, own: boolean, lastKind: string | null, until?: AbortSignal): void {
    const controller = new AbortController();
    until?.addEventListener('abort', () => this.#follow === follow && this.#stopFollowing(), { once: true });
    const follow: Follow = { id, own, controller };
    this.#follow = follow;
    this.#owns = own;
    // The answer being written is stored as far as it was flushed (not yet committed as an
    // assistant.message): the stream's partial_snapshot is all of it, and continues it here.
    const last = this.#view.items[this.#view.items.length - 1];
    const adopt = last?.kind === 'answer' && lastKind !== 'assistant.message' && lastKind !== 'run.finished' ? last.id : null;
    this.#dispatch({ type: 'following', answerId: adopt });
    void this.#runFollow(follow, after);
  }

  async #runFollow(follow: Follow, after: number): Promise<void> {
    const outcome = await this.#stream(follow.id, after, follow.controller.signal, new EventsToWire(follow.id), () => this.#follow === follow);
    if (this.#follow !== follow) return; // switched, resynced, or this tab submitted
    this.#follow = null;
    this.#tokens.flush();
    if (outcome === 'finished') {
      this.#marks.clear(follow.id);
      this.#dispatch({ type: 'ended', reason: 'complete' });
      // The followed copy was rebuilt from events; the stored page is the one every reload shows.
      await this.reload();
    } else {
      // The stream broke: the gateway may be gone. Nothing here is final; when the connection
      // comes back, resync() shows what became of the run.
      this.#options.connection.lost();
    }
  }

  #stopFollowing(): void {
    this.#follow?.controller.abort();
    this.#follow = null;
  }

  /**
   * Reads the conversation's event stream from `after` into the view until the run finishes.
   * A server that drains (a restart, a replica stopping) says when to come back: reconnect after
   * the last seq seen, to whichever process answers, a few times. `current` is false once
   * nothing more may be applied.
   */
  async #stream(id: string, after: number, signal: AbortSignal, toWire: EventsToWire, current: () => boolean): Promise<'finished' | 'broken' | 'aborted'> {
    let seq = after;
    for (let reconnects = 0; ; reconnects++) {
      let retryAfterMs: number | null = null;
      try {
        for await (const frame of this.#options.api.events(id, seq, signal)) {
          if (!current() || id !== this.#conversationId) return 'aborted';
          if (frame.id !== undefined) this.#ledgerSeq = seq = frame.id;
          for (const message of toWire.apply(frame)) this.#queue(message);
          if (frame.event === 'run.finished') return 'finished';
          if (frame.event === 'drain') {
            retryAfterMs = drainDelay(frame.data);
            break;
          }
        }
      } catch {
        if (signal.aborted || !current()) return 'aborted';
        // Right after a drain the server may still be restarting: try again.
        if (reconnects === 0) return 'broken';
        retryAfterMs = DRAIN_RETRY_MS;
      }
      if (signal.aborted || !current()) return 'aborted';
      if (retryAfterMs === null || reconnects >= MAX_DRAIN_RECONNECTS) return 'broken';
      // The reopened stream starts with the segment so far (partial_snapshot): toWire adds its unseen rest.
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    }
  }

  /**
   * Follows a paused run shown here: whoever answers its approval (another tab, the approvals
   * API, expiry), the card resolves here and the resumed answer streams in. The view already
   * shows everything up to the pause (the card is on screen), so only the ledger position is
   * fetched and the view is left as it is (#catchUp). Ends with the run.
   */
  async watchPause(signal: AbortSignal): Promise<void> {
    // One live follower at a time: a second would repeat frames. One whose signal was aborted
    // is ending and reads nothing more.
    if ((this.#watching && !this.#watching.aborted) || this.#follow) return;
    this.#watching = signal;
    try {
      const ownRuns = this.#runToken;
      if (!(await this.#catchUp())) return;
      const id = this.#conversationId;
      // A submit of this tab from here on is its own run: the stream's copy of it is not applied.
      const current = () => !this.#run && !this.#follow && this.#runToken === ownRuns;
      if (!id || this.busy || this.#ledgerSeq === null || signal.aborted || !current()) return;
      for (;;) {
        const outcome = await this.#stream(id, this.#ledgerSeq, signal, new EventsToWire(id), current);
        if (id !== this.#conversationId || !current()) return;
        this.#tokens.flush();
        this.#dispatch({ type: 'ended', reason: 'complete' });
        // A decision that left the approval pending (one approver of several, issue 26): the
        // pause goes on, and so does the watch.
        if (outcome !== 'finished' || signal.aborted || !this.pendingApproval || this.#ledgerSeq === null) return;
      }
    } finally {
      if (this.#watching === signal) this.#watching = null;
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

  #branchesOf(page: HistoryResult): void {
    this.#branches = { active: page.activeBranch, forks: page.forks };
  }

  /**
   * After a run of this tab: its items learn their stored ids from the last history page, which
   * Edit and Regenerate need (the stream names no stored message). Merged into the items shown
   * rather than reloaded, so nothing on screen is rebuilt (an open tool result stays open).
   */
  async #learnStored(): Promise<void> {
    const id = this.#conversationId;
    if (!id) return;
    try {
      const page = await this.#options.api.history(id);
      if (id !== this.#conversationId || this.#run || this.#follow || this.busy) return;
      this.#branchesOf(page);
      this.#dispatch({ type: 'stored', items: itemsFromHistory(page.items) });
    } catch {
      // Edit and Regenerate wait for the next load of this conversation.
    }
  }

  /**
   * Edit (`text`: the new message) or Regenerate (issue 29) of a stored message: the server forks
   * a new branch there and answers on it; what the action already did stays on the old branch and
   * is never run again (the server's rule). The page then loads the new branch (`‹ 2/2 ›`).
   */
  fork(itemId: string, action: 'edit' | 'regenerate', text = ''): void {
    const item = this.#view.items.find((i) => i.id === itemId);
    const id = this.#conversationId;
    if (!id || !item?.messageId || this.busy || (action === 'edit' && !text.trim())) return;
    // An edit keeps the message's files (the server gives them to the model again, as a regenerate's).
    const files = action === 'edit' && item.kind === 'user' ? item.files : [];
    void this.#start({ text, files, conversationId: id, action, messageId: item.messageId }, { type: 'forked', at: itemId, action, text });
  }

  /** The switch `‹ 1/2 ›`: the conversation shows, and goes on from, `branch`. */
  async switchBranch(branch: number): Promise<void> {
    const id = this.#conversationId;
    if (!id || this.busy) return;
    try {
      await this.#options.api.switchBranch(id, branch);
    } catch (error) {
      this.#notice = `Could not switch branches: ${isApiError(error) ? errorText(error.code) : String(error)}`;
      return;
    }
    await this.reload();
  }

  /** Loads the page before the oldest shown. */
  async loadOlder(): Promise<void> {
    const id = this.#conversationId;
    if (!id || !this.#older || this.#loading !== 'idle') return;
    this.#loading = 'older';
    try {
      // The branch shown, though another tab may have switched the conversation since.
      const page = await this.#options.api.history(id, this.#older, undefined, this.#branches.active);
      if (id !== this.#conversationId) return;
      this.#older = page.next;
      this.#dispatch({ type: 'loaded', items: itemsFromHistory(page.items), prepend: true });
    } catch (error) {
      this.#loadFailed(error);
    } finally {
      this.#loading = 'idle';
    }
  }

  /**
   * Sends a message; creates the conversation first when there is none. Sent while an answer runs
   * (this tab's, or `queue`: another tab's), it waits for its turn (never a decision, never a denial).
   */
  async send(text: string, files: FileRef[] = [], options: { queue?: boolean } = {}): Promise<boolean> {
    if ((this.busy || options.queue) && this.#conversationId && (text.trim() || files.length > 0)) {
      this.queued.add({ text, files, conversationId: this.#conversationId, action: null });
      return true;
    }
    if (this.busy || this.#sending || (!text.trim() && files.length === 0)) return false;
    let id = this.#conversationId;
    if (!id) {
      this.#sending = true; // a second Enter while the conversation is being created
      try {
        const created = await this.#options.api.createConversation({ text: text.trim() || 'Attachment' });
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

  /** Confirm; with `grant`, also allow matching calls for `ttl_s` seconds ("Allow for 1 hour"). */
  confirm(approvalId: string, grant?: { ttl_s: number }, args?: Record<string, unknown>): void {
    this.#decide(approvalId, 'confirm', { ...(grant ? { grant } : {}), ...(args ? { arguments: args } : {}) });
  }
  /** Deny; `reason` (optional) is told to the model. */
  deny(approvalId: string, reason?: string): void {
    this.#decide(approvalId, 'deny', reason?.trim() ? { reason: reason.trim() } : {});
  }

  /** Stop: cancels the running submit; the answer so far stays, marked stopped. */
  async stop(): Promise<void> {
    const run = this.#run;
    if (!run) return this.#stopFollowed();
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

  /**
   * Stop for an answer this tab asked for before a reload: its Gradio submission is gone with the
   * old page, so the gateway is asked to cancel the conversation's run; the stream then brings
   * the cancelled end. A gateway without that route leaves the answer to finish on its own.
   */
  async #stopFollowed(): Promise<void> {
    const follow = this.#follow;
    if (!follow?.own) return;
    try {
      await this.#options.api.cancelRun(follow.id);
    } catch {
      if (this.#follow === follow) this.#notice = 'This answer cannot be stopped from here since the page was reloaded; it will finish on its own.';
    }
  }

  /** Whether Retry sends a message (which supersedes waiting approvals) rather than a decision. */
  get retrySendsMessage(): boolean {
    // An error from history (no submit of this page yet) asks again with its message.
    return !this.#lastInput || this.#lastInput.action === null;
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
    // A fork's retry sends it again as it was (its message_id); the view keeps what it shows.
    const action = input.action === 'confirm' || input.action === 'deny' ? input.action : null;
    const approvalId = action ? input.approvalId : undefined;
    void this.#start(input, { type: 'submitted', text: input.text, files: input.files, action, approvalId, retry: true });
  }

  /** Marks approvals past their deadline expired (called by a clock). */
  tick(now = Date.now()): void {
    this.#dispatch({ type: 'tick', now });
  }

  #decide(approvalId: string, action: 'confirm' | 'deny', extras: Pick<SubmitInput, 'grant' | 'reason' | 'arguments'>): void {
    const card = this.#view.items.find((i) => i.id === approvalId);
    if (!card || card.kind !== 'approval' || card.status !== 'pending' || card.deciding || this.busy) return;
    const id = this.#conversationId;
    if (!id) return;
    void this.#start({ text: action, files: [], conversationId: id, action, approvalId, ...extras }, { type: 'submitted', text: action, action, approvalId });
  }

  async #start(input: SubmitInput, event: ChatEvent): Promise<void> {
    this.#lastInput = input;
    this.#stopFollowing(); // a pause's resumed run, say: this submission carries it from here
    clearTimeout(this.#lookAgain);
    this.#owns = true;
    const token = ++this.#runToken;
    // Survives a reload of this tab: the reloaded page follows this run as its own.
    this.#marks.set(input.conversationId);
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
          // Only a lost connection leaves the run's fate open (the reconnect's resync follows it).
          if (e.code !== 'GRADIO_UNREACHABLE') this.#marks.clear(input.conversationId);
          if (e.code === 'GRADIO_UNREACHABLE') this.#options.connection.lost();
          if (e.code === 'SERVICE_UNAVAILABLE') this.#options.connection.lost('unavailable');
          if (e.code === 'UNAUTHORIZED') this.#options.onUnauthorized?.();
          this.#dispatch({ type: 'failed', code: e.code, detail: e.detail });
          return;
        }
      }
      if (token !== this.#runToken) return;
      this.#marks.clear(input.conversationId);
      this.#tokens.flush();
      this.#dispatch({ type: 'ended', reason: this.#stopped === token ? 'cancelled' : 'complete' });
    } catch (error) {
      if (token === this.#runToken) this.#fail(error);
    } finally {
      if (this.#run === run) this.#run = null;
      if (this.#followQueued && !this.#run) {
        this.#followQueued = false;
        void this.reload();
      } else if (!this.#run && token === this.#runToken) {
        // A fork shows a new branch: load it (its switch, its rows); any other run learns its ids.
        void (input.action === 'edit' || input.action === 'regenerate' ? this.reload() : this.#learnStored());
      }
    }
  }

  /**
   * A queued message's turn started: it is this tab's (marked, so Stop reaches it), and the
   * conversation follows it from the ledger once this tab's own submit has ended.
   */
  #queuedStarted(id: string): void {
    if (id !== this.#conversationId) return;
    this.#marks.set(id);
    if (this.#run || this.#follow || this.busy) this.#followQueued = true;
    else void this.reload();
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

  /** Forgets the running submit and any followed run (conversation switched, resync, or Stop got no answer). */
  #abandon(): void {
    this.#runToken++;
    this.#followQueued = false;
    this.#tokens.clear();
    this.#run = null;
    this.#stopFollowing();
    clearTimeout(this.#lookAgain);
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

/** How soon a reload that raced this tab's own submit looks at the ledger again. */
const LOOK_AGAIN_MS = 600;

/** How often, and how long apart at least, a followed stream is reopened after a drain. */
const MAX_DRAIN_RECONNECTS = 10;
const DRAIN_RETRY_MS = 1_000;

/** The drain frame's `retry_after_ms` (bounded), else the default. */
function drainDelay(data: unknown): number {
  const ms = (data as { retry_after_ms?: unknown } | null)?.retry_after_ms;
  return typeof ms === 'number' && Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 30_000) : DRAIN_RETRY_MS;
}
