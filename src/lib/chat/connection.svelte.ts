/**
 * The gateway connection: green when connected; on GRADIO_UNREACHABLE or SERVICE_UNAVAILABLE (its
 * database is down) it retries 5 times 5 s apart (red dot, counting, saying which), then waits for
 * a manual retry. Only UNAUTHORIZED signs out. While connected, a light probe every `probeMs`
 * notices a gateway that went away between messages.
 * @module
 */
import { ApiError, isApiError } from './errors.ts';

/** Why the connection is down: the gateway cannot be reached, or it answers but cannot serve. */
export type OutageReason = 'unreachable' | 'unavailable';
import type { ChatTransport } from './transport.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'retrying' | 'offline' | 'unauthorized';

export interface ConnectionOptions {
  connect: () => Promise<ChatTransport>;
  onUnauthorized?: () => void;
  retries?: number;
  delayMs?: number;
  /** 0 turns probing off. */
  probeMs?: number;
}

/**
 * Why Send is off, in a few words, or null while connected (issue 23: a message sent to a gateway
 * that is away only became an error card; the composer now keeps it until the gateway is back).
 */
export function sendBlockedReason(status: ConnectionStatus): string | null {
  switch (status) {
    case 'connected':
      return null;
    case 'connecting':
      return 'Connecting to the assistant…';
    case 'unauthorized':
      return 'Signed out.';
    default:
      return 'Reconnecting to the assistant… Your message stays here until then.';
  }
}

/** Reactive connection state; `status` drives the dot, `transport` is set while connected. */
export class Connection {
  #status = $state<ConnectionStatus>('connecting');
  #retry = $state(0);
  #reason = $state<OutageReason>('unreachable');
  #transport = $state.raw<ChatTransport | null>(null);
  #options: Required<Omit<ConnectionOptions, 'onUnauthorized'>> & Pick<ConnectionOptions, 'onUnauthorized'>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #generation = 0;
  #disposed = false;

  constructor(options: ConnectionOptions) {
    this.#options = { retries: 5, delayMs: 5_000, probeMs: 10_000, ...options };
  }

  get status(): ConnectionStatus {
    return this.#status;
  }
  /** How many automatic retries have been made in the current outage. */
  get retry(): number {
    return this.#retry;
  }
  /** Why the last attempt failed (drives the dot's wording). */
  get reason(): OutageReason {
    return this.#reason;
  }
  get retries(): number {
    return this.#options.retries;
  }
  get transport(): ChatTransport | null {
    return this.#transport;
  }

  /** First connection. */
  start(): Promise<void> {
    this.#retry = 0;
    return this.#attempt();
  }

  /** The manual retry after the automatic ones ran out (or at any time). */
  reconnect(): Promise<void> {
    this.#clear();
    this.#retry = 0;
    return this.#attempt();
  }

  /** Tells the connection the gateway is gone (a run broke, a probe failed) or cannot serve. */
  lost(reason: OutageReason = 'unreachable'): void {
    if (this.#status !== 'connected') return;
    this.#reason = reason;
    this.#drop();
    this.#retry = 0;
    this.#scheduleRetry();
  }

  /** The transport, or GRADIO_UNREACHABLE when there is none. */
  require(): ChatTransport {
    if (!this.#transport) throw new ApiError('GRADIO_UNREACHABLE', 'The assistant gateway is not connected.');
    return this.#transport;
  }

  dispose(): void {
    this.#disposed = true;
    this.#clear();
    this.#drop();
  }

  async #attempt(): Promise<void> {
    const generation = ++this.#generation;
    this.#status = this.#retry === 0 ? 'connecting' : 'retrying';
    try {
      const transport = await this.#options.connect();
      if (generation !== this.#generation || this.#disposed) return transport.close();
      this.#transport = transport;
      this.#status = 'connected';
      this.#retry = 0;
      this.#scheduleProbe();
    } catch (error) {
      if (generation !== this.#generation || this.#disposed) return;
      if (isApiError(error) && error.code === 'UNAUTHORIZED') {
        this.#status = 'unauthorized';
        this.#options.onUnauthorized?.();
        return;
      }
      this.#reason = isApiError(error) && error.code === 'SERVICE_UNAVAILABLE' ? 'unavailable' : 'unreachable';
      this.#scheduleRetry();
    }
  }

  #scheduleRetry(): void {
    this.#clear();
    if (this.#retry >= this.#options.retries) {
      this.#status = 'offline';
      return;
    }
    this.#status = 'retrying';
    this.#timer = setTimeout(() => {
      this.#retry += 1;
      void this.#attempt();
    }, this.#options.delayMs);
  }

  #scheduleProbe(): void {
    this.#clear();
    if (!this.#options.probeMs) return;
    this.#timer = setTimeout(async () => {
      const transport = this.#transport;
      if (!transport) return;
      const alive = await transport.probe();
      if (this.#transport !== transport) return;
      if (alive) this.#scheduleProbe();
      else this.lost();
    }, this.#options.probeMs);
  }

  #drop(): void {
    this.#transport?.close();
    this.#transport = null;
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
