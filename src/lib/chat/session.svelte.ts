/**
 * The signed-in user: the bearer token and user live in sessionStorage (this tab, this session),
 * injected with a default so tests pass a Map-backed storage.
 * @module
 */
import type { LoginResult } from './api.ts';
import type { User } from './types.ts';

const KEY = 'airlock.session';

export type SessionStorageLike = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

interface Saved {
  token: string;
  user: User;
  expiresAt: number;
}

export class Session {
  #saved = $state.raw<Saved | null>(null);
  #storage: SessionStorageLike | null;

  constructor(storage: SessionStorageLike | null = typeof sessionStorage === 'undefined' ? null : sessionStorage, now = Date.now()) {
    this.#storage = storage;
    try {
      const saved = JSON.parse(storage?.getItem(KEY) ?? 'null') as Saved | null;
      if (saved && saved.token && saved.expiresAt > now) this.#saved = saved;
    } catch {
      storage?.removeItem(KEY);
    }
  }

  get token(): string | null {
    return this.#saved?.token ?? null;
  }
  get user(): User | null {
    return this.#saved?.user ?? null;
  }

  signIn(result: LoginResult, now = Date.now()): void {
    this.#saved = { token: result.access_token, user: result.user, expiresAt: now + result.expires_in * 1000 };
    this.#storage?.setItem(KEY, JSON.stringify(this.#saved));
  }

  signOut(): void {
    this.#saved = null;
    this.#storage?.removeItem(KEY);
  }
}

/** Where to send the user after login: only same-origin paths. */
export function safeNext(next: string | null | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/';
}
