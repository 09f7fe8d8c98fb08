/**
 * The OpenID provider as Airlock sees it (issue 39): discovery from OIDC_ISSUER with openid-client
 * v6, begun at start and never awaited by it (a provider that is down or misconfigured never
 * blocks a start). Until it succeeds, single sign-on is unavailable with a reason in words (the
 * login page and /ready say it); a failed discovery is tried again at the next use, at most every
 * RETRY_MS. `OIDC_ALLOW_HTTP` lets an http: issuer through, and only on a loopback host.
 * @module
 */
import * as oidc from 'openid-client';
import type { Config } from '../../config.ts';

export const RETRY_MS = 10_000;
const DISCOVERY_TIMEOUT_S = 5;

export interface OidcStatus {
  configured: boolean;
  available: boolean;
  reason?: string;
}

export interface OidcProvider {
  readonly name: string;
  readonly issuer: string;
  status(): OidcStatus;
  /** The discovered configuration, or an Error whose message says why single sign-on is unavailable. */
  configuration(): Promise<oidc.Configuration>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function createOidcProvider(settings: Config['oidc'], now = () => Date.now()): OidcProvider | null {
  const issuer = settings.issuer;
  if (!issuer) return null;
  const insecure = settings.allowHttp && new URL(issuer).protocol === 'http:' && LOOPBACK.has(new URL(issuer).hostname);
  let found: oidc.Configuration | undefined;
  let reason = 'Single sign-on is starting.';
  let pending: Promise<oidc.Configuration> | undefined;
  let lastTry = -Infinity;

  const discover = (): Promise<oidc.Configuration> => {
    lastTry = now();
    pending ??= oidc
      .discovery(
        new URL(issuer),
        settings.clientId,
        settings.clientSecret ? { client_secret: settings.clientSecret } : undefined,
        settings.clientSecret ? oidc.ClientSecretPost(settings.clientSecret) : oidc.None(),
        { timeout: DISCOVERY_TIMEOUT_S, ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}) },
      )
      .then((configuration) => (found = configuration))
      .catch((error: Error) => {
        reason = `The identity provider at ${issuer} cannot be reached or is misconfigured (${error.message}).`;
        throw new Error(reason, { cause: error });
      })
      .finally(() => (pending = undefined));
    return pending;
  };
  discover().catch(() => {}); // at start, never awaited

  return {
    name: settings.name,
    issuer,
    status: () => (found ? { configured: true, available: true } : { configured: true, available: false, reason }),
    async configuration() {
      if (found) return found;
      if (pending) return pending;
      if (now() - lastTry < RETRY_MS) throw new Error(reason);
      return discover();
    },
  };
}
