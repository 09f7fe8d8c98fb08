/**
 * The multi-tab gate: while another tab streams on this conversation, this tab is read-only (a
 * pending approval stays answerable in every tab). Tabs of one browser tell each other through a BroadcastChannel (instant); other
 * browsers are seen by polling `GET /api/agent/conversations/:id/active`.
 * @module
 */
import { createSubscriber } from 'svelte/reactivity';
import type { ActiveState, ChatPhase } from './types.ts';

export interface GateMessage {
  tab: string;
  conversationId: string;
  phase: ChatPhase;
  /** A new tab asks the others to say what they are doing. */
  hello?: boolean;
}

/** The pure decision: is another holder busy on this conversation? */
export function isHeldElsewhere({ local, tabs, server, ready = true }: {
  local: ChatPhase;
  tabs: readonly ChatPhase[];
  server: ActiveState | null;
  /** This tab knows its own state (after a reload, the run the server sees may be its own). */
  ready?: boolean;
}): { held: boolean; state: 'streaming' | 'idle' } {
  // A pause is anyone's to answer (each decision names its approval and takes effect once), so
  // only another tab's running answer holds this one.
  if (tabs.includes('streaming')) return { held: true, state: 'streaming' };
  // This tab's own run is what the server sees, or the pause is ours to answer.
  if (local === 'streaming' || !ready) return { held: false, state: 'idle' };
  if (server?.active && server.state === 'streaming') return { held: true, state: 'streaming' };
  return { held: false, state: 'idle' };
}

export interface GateOptions {
  conversationId: () => string | null;
  localPhase: () => ChatPhase;
  fetchActive: (id: string) => Promise<ActiveState>;
  /** False while this tab does not know yet whether the conversation's run is its own. */
  ready?: () => boolean;
  channel?: () => BroadcastChannel | null;
  pollMs?: number;
}

/** Reactive gate; reading `held` subscribes to the channel and the poll. */
export class TabGate {
  readonly tab = Math.random().toString(36).slice(2);
  #tabs = $state.raw<Record<string, ChatPhase>>({});
  #server = $state.raw<ActiveState | null>(null);
  #options: GateOptions;
  #channel: BroadcastChannel | null;
  #subscribe: () => void;
  /** Bumped whenever this tab's phase changes, so a poll that started before is discarded. */
  #epoch = 0;
  /** The server still reports our own just-finished run for a moment (lease release); ignore it until then. */
  #quietUntil = 0;

  constructor(options: GateOptions) {
    this.#options = options;
    this.#channel = (options.channel ?? defaultChannel)();
    this.#subscribe = createSubscriber((update) => {
      const onMessage = (e: MessageEvent<GateMessage>) => {
        this.receive(e.data);
        update();
      };
      this.#channel?.addEventListener('message', onMessage);
      this.announce(true);
      const timer = setInterval(() => void this.poll().then(update), options.pollMs ?? 3_000);
      void this.poll().then(update);
      return () => {
        clearInterval(timer);
        this.#channel?.removeEventListener('message', onMessage);
      };
    });
  }

  #decision() {
    const id = this.#options.conversationId();
    const tabs = id ? Object.entries(this.#tabs).filter(([k]) => k.startsWith(`${id}|`)).map(([, p]) => p) : [];
    return isHeldElsewhere({ local: this.#options.localPhase(), tabs, server: id && this.#server ? this.#server : null, ready: this.#options.ready?.() ?? true });
  }

  /** True while another tab or browser holds this conversation. */
  get held(): boolean {
    this.#subscribe();
    return this.#decision().held;
  }

  /** What the other holder is doing (for the banner). */
  get state(): 'streaming' | 'idle' {
    this.#subscribe();
    return this.#decision().state;
  }

  /** Tells other tabs what this tab is doing now (call on every local phase change). */
  announce(hello = false): void {
    this.#epoch++;
    if (!hello) {
      // Whatever the server said was about a moment when our own run may have held the lease.
      this.#server = null;
      if (this.#options.localPhase() !== 'streaming') this.#quietUntil = Date.now() + 2_000;
    }
    const conversationId = this.#options.conversationId();
    if (!conversationId) return;
    this.#channel?.postMessage({ tab: this.tab, conversationId, phase: this.#options.localPhase(), hello } satisfies GateMessage);
  }

  /** Handles one channel message (public for tests). */
  receive(message: GateMessage): void {
    if (!message || message.tab === this.tab) return;
    const key = `${message.conversationId}|${message.tab}`;
    this.#tabs = { ...this.#tabs, [key]: message.phase };
    if (message.hello && message.conversationId === this.#options.conversationId()) this.announce();
  }

  /** One poll of the active endpoint (public for tests). */
  async poll(): Promise<void> {
    const id = this.#options.conversationId();
    if (!id) return;
    const epoch = this.#epoch;
    try {
      const active = await this.#options.fetchActive(id);
      // A snapshot taken around our own run's end would show our own run as someone else's.
      if (epoch !== this.#epoch || Date.now() < this.#quietUntil || id !== this.#options.conversationId()) return;
      this.#server = active;
    } catch {
      // The gate is advisory; the server still refuses a second run with CONVERSATION_BUSY.
    }
  }

  /** Say goodbye so other tabs do not stay read-only after this one closes. */
  leave(): void {
    const conversationId = this.#options.conversationId();
    if (conversationId) this.#channel?.postMessage({ tab: this.tab, conversationId, phase: 'idle' } satisfies GateMessage);
  }
}

function defaultChannel(): BroadcastChannel | null {
  return typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('airlock-chat');
}
