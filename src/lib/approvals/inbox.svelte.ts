/**
 * The signed-in user's approvals inbox, live (issue 26 items 1 and 2): the pending list from
 * `GET /api/agent/v1/approvals/stream` (one tab per browser holds it, reconnecting with backoff,
 * and shares each list with the others), the decided
 * list on demand, and decisions in place (`Airlock-Channel: inbox`). The layout reads `pending` for
 * the title's `(N)` and the sidebar's marks; a new approval while the tab is hidden raises a desktop
 * notification once the user opted in (kept in localStorage).
 * @module
 */
import { readSse } from '$lib/chat/event-stream.ts';
import { ApiError, toErrorCode } from '$lib/chat/errors.ts';
import { arrivals, type InboxApproval } from './words.ts';

const API = '/api/agent/v1/approvals';
const GRANTS = '/api/agent/v1/grants';

/** One standing grant as v1 `GET /grants` lists it. */
export interface StandingGrant {
  id: string;
  tool: string;
  match: Record<string, unknown>;
  scope: 'user' | 'tenant';
  created_by: string;
  /** Whom it lets run calls without a card (a user grant; null: the tenant's). */
  for_user?: string | null;
  expires_at: string;
  revoked_at: string | null;
  uses: number;
}
const OPT_IN_KEY = 'airlock.approvals.notify';
const RETRY_MS = [1_000, 2_000, 5_000, 10_000];
const LOCK = 'airlock.approvals.stream';
const CHANNEL = 'airlock.approvals';

export interface InboxOptions {
  token: () => string | null | Promise<string | null>;
  fetch?: typeof fetch;
}

export class ApprovalInbox {
  pending = $state<InboxApproval[]>([]);
  decided = $state<InboxApproval[]>([]);
  connected = $state(false);
  notify = $state(false);
  #known: Set<string> | null = null;
  #abort: AbortController | null = null;
  readonly #o: InboxOptions;
  readonly #fetch: typeof fetch;

  constructor(options: InboxOptions) {
    this.#o = options;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.notify = typeof localStorage !== 'undefined' && localStorage.getItem(OPT_IN_KEY) === 'on' && typeof Notification !== 'undefined' && Notification.permission === 'granted';
  }

  /**
   * Follows the list until the returned stop. One tab of the browser holds the stream (a Web Lock)
   * and hands each list to the others (a BroadcastChannel): a browser allows few connections per
   * host, and every tab already holds its own chat streams. When that tab closes, another takes over.
   */
  start(): () => void {
    const abort = (this.#abort = new AbortController());
    const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL);
    let latest: InboxApproval[] | null = null;
    if (channel) {
      channel.onmessage = (e: MessageEvent<{ list?: InboxApproval[]; hello?: true }>) => {
        if (e.data.list) this.#apply(e.data.list);
        // A new tab asks; the holder answers with what it has.
        else if (e.data.hello && latest) channel.postMessage({ list: latest });
      };
      channel.postMessage({ hello: true });
    }
    const follow = () =>
      this.#follow(abort.signal, (list) => {
        latest = list;
        this.#apply(list);
        channel?.postMessage({ list });
      });
    if (typeof navigator !== 'undefined' && navigator.locks && channel) {
      navigator.locks.request(LOCK, { signal: abort.signal }, follow).catch(() => undefined);
    } else void follow();
    return () => {
      abort.abort();
      channel?.close();
    };
  }

  /** Reads the stream, reconnecting with backoff, until `signal` aborts. */
  async #follow(signal: AbortSignal, onList: (list: InboxApproval[]) => void): Promise<void> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        for await (const frame of await this.#open(signal)) {
          attempt = 0;
          this.connected = true;
          if (frame.event === 'approvals') onList((frame.data as { approvals: InboxApproval[] }).approvals);
        }
      } catch {
        /* reconnect below */
      }
      this.connected = false;
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
    }
  }

  stop(): void {
    this.#abort?.abort();
  }

  async #open(signal: AbortSignal) {
    const t = await this.#o.token();
    const response = await this.#fetch(`${API}/stream`, { headers: { accept: 'text/event-stream', ...(t ? { authorization: `Bearer ${t}` } : {}) }, signal });
    if (!response.ok || !response.body) throw new Error(`approvals stream: ${response.status}`);
    return readSse(response.body as unknown as AsyncIterable<Uint8Array>);
  }

  #apply(list: InboxApproval[]): void {
    const fresh = arrivals(this.#known, list);
    this.#known = new Set(list.map((a) => a.id));
    this.pending = list;
    if (this.notify && fresh.length && typeof document !== 'undefined' && document.hidden) {
      for (const a of fresh) new Notification('Approval needed', { body: `${a.requested_by.split(':')[1] ?? a.requested_by}: ${a.content}`, tag: `approval-${a.id}` });
    }
  }

  /** The decided approvals (newest first), read now. */
  async loadDecided(): Promise<void> {
    const all = await this.call<{ approvals: InboxApproval[] }>('GET', `${API}?limit=100`);
    this.decided = all.approvals.filter((a) => a.status !== 'pending');
  }

  /**
   * Approves or denies one in place; the stream then updates the list. Throws ApiError (403, 409, …).
   * A step-up approval (issue 28) is signed with the user's passkey first: the WebAuthn ceremony
   * (passkey.ts, loaded only then) over the challenge the server issues for it.
   */
  async decide(id: string, decision: 'approve' | 'deny', reason: string, stepUp = false, args?: Record<string, unknown>): Promise<InboxApproval> {
    const passkey = stepUp && decision === 'approve' ? await (await import('./passkey.ts')).signApproval((m, p, b) => this.call(m, p, b), id) : undefined;
    const body = { ...(reason.trim() ? { reason: reason.trim() } : {}), ...(passkey ? { passkey } : {}), ...(args && decision === 'approve' ? { arguments: args } : {}) };
    const updated = await this.call<InboxApproval>('POST', `${API}/${encodeURIComponent(id)}/${decision}`, body);
    // Shown at once; the stream's next list agrees.
    this.pending = updated.status === 'pending' ? this.pending.map((a) => (a.id === id ? updated : a)) : this.pending.filter((a) => a.id !== id);
    return updated;
  }

  /** Asks for the Notification permission (a click's handler); true when on. */
  async enableNotifications(): Promise<boolean> {
    if (typeof Notification === 'undefined') return false;
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    this.notify = permission === 'granted';
    localStorage.setItem(OPT_IN_KEY, this.notify ? 'on' : 'off');
    return this.notify;
  }

  disableNotifications(): void {
    this.notify = false;
    localStorage.setItem(OPT_IN_KEY, 'off');
  }

  /** The live standing grants the user may see (issue 27: the Grants tab), newest first. */
  async listGrants(): Promise<StandingGrant[]> {
    const { grants } = await this.call<{ grants: StandingGrant[] }>('GET', GRANTS);
    const now = Date.now();
    return grants.filter((g) => g.revoked_at === null && Date.parse(g.expires_at) > now);
  }

  /** Revokes one: the very next matching call asks again, on every replica. */
  async revokeGrant(id: string): Promise<StandingGrant> {
    return this.call<StandingGrant>('DELETE', `${GRANTS}/${encodeURIComponent(id)}`);
  }

  /** One call of the approvals API as the signed-in user (the settings page's passkeys use it too). */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const t = await this.#o.token();
    const response = await this.#fetch(path, {
      method,
      headers: { accept: 'application/json', 'airlock-channel': 'inbox', ...(t ? { authorization: `Bearer ${t}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = response.status === 204 ? null : await response.json().catch(() => null);
    if (!response.ok) {
      const error = (json as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
      throw new ApiError(toErrorCode(error?.code ?? 'INTERNAL'), error?.message ?? response.statusText, response.status, error?.details);
    }
    return json as T;
  }
}
