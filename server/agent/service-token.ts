/**
 * The gateway's service JWT: fetched from `POST /api/auth/service-token` with client credentials,
 * cached, refreshed shortly before it expires, one request at a time however many tools ask.
 * @module
 */
import { AirlockError } from '../errors.ts';

export interface ServiceCredentials {
  clientId: string;
  clientSecret: string;
}

export interface ServiceTokenProvider {
  /** A valid token (cached or fresh). */
  get(): Promise<string>;
  /** Forget the cached token (after a 401), so the next get() fetches a new one. */
  invalidate(): void;
}

export interface ServiceTokenOptions {
  apiUrl: () => string;
  credentials: ServiceCredentials;
  fetch?: typeof fetch;
  now?: () => number;
  timeoutMs?: number;
}

/** When to refresh: 30 s before expiry, or at 80 % of the lifetime for tokens shorter than 150 s. */
export function refreshAt(issuedAtMs: number, expiresInS: number): number {
  const lifetime = expiresInS * 1000;
  return issuedAtMs + Math.max(lifetime - 30_000, lifetime * 0.8);
}

/** Creates a cached service-token provider. */
export function createServiceTokenProvider(options: ServiceTokenOptions): ServiceTokenProvider {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  let cached: { token: string; refreshAt: number } | null = null;
  let inflight: Promise<string> | null = null;

  async function fetchToken(): Promise<string> {
    const issuedAt = now();
    let response: Response;
    try {
      response = await doFetch(`${options.apiUrl()}/api/auth/service-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: options.credentials.clientId, client_secret: options.credentials.clientSecret }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch (cause) {
      throw new AirlockError('TOOL_FAILURE', 'The backend API is unreachable (service token).', { cause });
    }
    if (!response.ok) {
      const code = response.status === 401 || response.status === 403 ? 'UNAUTHORIZED' : 'TOOL_FAILURE';
      throw new AirlockError(code, `The service token request failed with HTTP ${response.status}.`);
    }
    const body = (await response.json()) as { access_token?: string; expires_in?: number };
    if (!body.access_token) throw new AirlockError('TOOL_FAILURE', 'The service token response has no access_token.');
    cached = { token: body.access_token, refreshAt: refreshAt(issuedAt, body.expires_in ?? 300) };
    return body.access_token;
  }

  return {
    async get() {
      if (cached && now() < cached.refreshAt) return cached.token;
      inflight ??= fetchToken().finally(() => (inflight = null));
      return inflight;
    },
    invalidate() {
      cached = null;
    },
  };
}
