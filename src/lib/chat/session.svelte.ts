/**
 * The signed-in user (issue 8). The access token lives only in this object's memory: it is
 * short-lived and renewed through the refresh cookie, which is httpOnly (no script reads it) and
 * shared by every tab of the browser, so a new tab signs itself in with one `POST /api/auth/refresh`.
 * localStorage holds no secret, only a "this browser has a session" flag: it tells a session that
 * ended from a first visit, and its removal (the `storage` event) signs out every other tab.
 * Refreshes are serialized across tabs with a Web Lock: the server treats a spent refresh token
 * shown again as a replay and ends the session, so two tabs must never spend the same one.
 * @module
 */
import { isApiError } from './errors.ts';
import type { LoginResult } from './api.ts';
import type { User } from './types.ts';

const FLAG = 'airlock.signed-in';
const LOCK = 'airlock.refresh';

export type FlagStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
type Locks = { request<T>(name: string, callback: () => Promise<T>): Promise<T> };

export interface SessionOptions {
  /** `POST /api/auth/refresh` (the cookie goes with it); throws ApiError UNAUTHORIZED when there is no session. */
  refresh: () => Promise<LoginResult>;
  storage?: FlagStorage | null;
  locks?: Locks | null;
  now?: () => number;
}

interface Current {
  token: string;
  user: User;
  expiresAt: number;
}

/** Pure: is a token that expires at `expiresAt` (after living `ttlMs`) still good enough to send at `now`? */
export function stillFresh(expiresAt: number, ttlMs: number, now: number): boolean {
  // A quarter of its life (at most 30 s) is kept in reserve for clock skew and slow networks.
  return expiresAt - now > Math.min(30_000, ttlMs / 4);
}

export class Session {
  #current = $state.raw<Current | null>(null);
  #ttlMs = 0;
  #pending: Promise<string | null> | null = null;
  #options: Required<SessionOptions>;

  constructor(options: SessionOptions) {
    this.#options = {
      storage: typeof localStorage === 'undefined' ? null : localStorage,
      locks: typeof navigator === 'undefined' ? null : ((navigator as { locks?: Locks }).locks ?? null),
      now: Date.now,
      ...options,
    } as Required<SessionOptions>;
  }

  get token(): string | null {
    return this.#current?.token ?? null;
  }
  get user(): User | null {
    return this.#current?.user ?? null;
  }
  /** Did this browser sign in and not sign out since? (false on a first visit) */
  get hadSession(): boolean {
    return this.#options.storage?.getItem(FLAG) === '1';
  }

  signIn(result: LoginResult): void {
    this.#ttlMs = result.expires_in * 1000;
    this.#current = { token: result.access_token, user: result.user, expiresAt: this.#options.now() + this.#ttlMs };
    this.#options.storage?.setItem(FLAG, '1');
  }

  /** Signs out this browser: every other tab hears it through the `storage` event. */
  signOut(): void {
    this.#current = null;
    this.#options.storage?.removeItem(FLAG);
  }

  /** Forgets the token here only (another tab already signed out). */
  forget(): void {
    this.#current = null;
  }

  /**
   * A token good to send now: the one in memory while fresh, else a new one from the refresh
   * cookie. null when there is no session. A network failure keeps the current token (the call
   * that follows shows the outage) instead of signing out.
   */
  async fresh(): Promise<string | null> {
    const c = this.#current;
    if (c && stillFresh(c.expiresAt, this.#ttlMs, this.#options.now())) return c.token;
    return this.renew();
  }

  /** Always asks the server for a new token (one request per tab at a time). */
  renew(): Promise<string | null> {
    this.#pending ??= this.#renew().finally(() => (this.#pending = null));
    return this.#pending;
  }

  async #renew(): Promise<string | null> {
    const run = async () => {
      try {
        this.signIn(await this.#options.refresh());
        return this.token;
      } catch (error) {
        if (isApiError(error) && error.code === 'UNAUTHORIZED') {
          this.#current = null;
          return null;
        }
        return this.token;
      }
    };
    const locks = this.#options.locks;
    return locks ? locks.request(LOCK, run) : run();
  }

  /** Calls `onChange(signedIn)` when another tab signs in or out; returns the unsubscribe. */
  watch(onChange: (signedIn: boolean) => void): () => void {
    if (typeof addEventListener === 'undefined') return () => undefined;
    const listener = (e: StorageEvent) => {
      if (e.key === FLAG || e.key === null) onChange(e.newValue === '1');
    };
    addEventListener('storage', listener);
    return () => removeEventListener('storage', listener);
  }
}

/** Where to send the user after login: only same-origin paths. */
export function safeNext(next: string | null | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/';
}
