/**
 * What request logs may say about a URL. A Gradio `session_hash` is a capability (with it, a
 * stream can be read and cancelled), so info-level logs must not carry it: it arrives in the query
 * (`/queue/data?session_hash=…`) and in the heartbeat path (`/heartbeat/<session_hash>`). A decision
 * link's token is one too (whoever holds it and signs in as its approver decides; CONTRACTS: it is
 * never stored): the segment after `/approve/` (the page `/approve/<token>` and the API's
 * `/api/agent/v1/approve/<token>[/approve|/deny]`) is cut as well. nginx's access log cuts the same
 * paths (the `$airlock_log_path` map in nginx/). Pure.
 * @module
 */

/** Query parameters whose values never reach the logs. */
export const SECRET_QUERY_KEYS = ['session_hash', 'token', 'access_token'];

export const REDACTED = '[redacted]';

/** The URL with capability values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).replace(/(\/heartbeat\/)[^/?#]+/, `$1${REDACTED}`).replace(/(\/approve\/)[^/?#]+/g, `$1${REDACTED}`);
  if (q === -1) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      let name = key;
      try {
        name = decodeURIComponent(key.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: compare the raw key
      }
      return SECRET_QUERY_KEYS.includes(name.toLowerCase()) ? `${key}=${REDACTED}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/** Fastify's default `req` serializer with the URL redacted. */
export function serializeRequest(request: {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
