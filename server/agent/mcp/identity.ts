/**
 * The identities an MCP call carries to an HTTP server, as headers named in the tools file
 * (default `Authorization: Bearer <service token>` and `X-User-JWT: <user token>`).
 *
 * One connection serves every user at once, so the user's token cannot be a header fixed when the
 * transport is built: each call runs inside `withCallIdentity`, and the transport's fetch reads it
 * from AsyncLocalStorage. Tokens live only in these headers: never in the tool's arguments (so
 * never in the model's context, the events, the transcript or the checkpoint) and never in logs.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface CallIdentity {
  userToken: string;
  serviceToken: () => Promise<string>;
}

export interface IdentityHeaderNames {
  service_header: string | null;
  user_header: string | null;
}

const store = new AsyncLocalStorage<CallIdentity>();

/** Runs `fn` (one MCP request) with the caller's identity attached. */
export function withCallIdentity<T>(identity: CallIdentity, fn: () => Promise<T>): Promise<T> {
  return store.run(identity, fn);
}

/** The header value for a token: `Bearer <token>` for Authorization, the bare token elsewhere. */
export function tokenHeaderValue(header: string, token: string): string {
  return header.toLowerCase() === 'authorization' ? `Bearer ${token}` : token;
}

/**
 * A fetch that adds the static headers, then the identity headers (identity wins, so a tools file
 * cannot pin someone else's token). Outside a call (connect, list) only the service token goes,
 * when one can be had: discovery is the gateway's own business.
 */
export function identityFetch(options: {
  staticHeaders: Record<string, string>;
  names: IdentityHeaderNames;
  discoveryServiceToken?: () => Promise<string>;
  fetch?: typeof fetch;
}): typeof fetch {
  const doFetch = options.fetch ?? fetch;
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(options.staticHeaders)) headers.set(k, v);
    const identity = store.getStore();
    const { service_header: serviceHeader, user_header: userHeader } = options.names;
    if (serviceHeader) {
      const getToken = identity?.serviceToken ?? options.discoveryServiceToken;
      // Discovery may run before the api listens (one process): then it goes without the token.
      const token = getToken ? await getToken().catch((e) => (identity ? Promise.reject(e) : undefined)) : undefined;
      if (token) headers.set(serviceHeader, tokenHeaderValue(serviceHeader, token));
    }
    if (userHeader && identity) headers.set(userHeader, identity.userToken);
    return doFetch(input, { ...init, headers });
  };
}
