/**
 * DNS-rebinding protection of the MCP server paths (issue 37 item 9; the MCP transport spec: "Servers
 * MUST validate the Origin header ... respond with HTTP 403"). Under rebinding the attacker's page
 * and its requests both carry the attacker's name (its Origin and the Host its browser sends), so
 * "the request's own host" proves nothing: the allowed names come from configuration only.
 * - With PUBLIC_URL: the Host's name must be PUBLIC_URL's, and an Origin, PUBLIC_URL's origin.
 * - Without it: the loopback names (localhost, 127.0.0.1, [::1]) on any port, http or https.
 * - No Origin passes (CLI clients and SDKs send none); `Origin: null` (a sandboxed page) does not.
 * The SDK's own allowedHosts/allowedOrigins options match whole strings (a port included) and are
 * deprecated for middleware of another framework, so the rule is here, as a Fastify hook. Pure.
 * @module
 */

const LOOPBACK: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A Host header's form: a name or IPv4, or a bracketed IPv6, then an optional port (no user info, no path). */
const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** A Host header's name (no port), lower case; null when it is no host. */
function hostName(host: string): string | null {
  if (!HOST.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** Why an MCP request is refused (403), or null when its Host and Origin are allowed. */
export function mcpOriginRefusal(headers: { host?: string; origin?: string | string[] }, publicUrl: string | undefined): string | null {
  const pinned = publicUrl ? new URL(publicUrl) : null;
  const allowedName = (name: string) => (pinned ? name === pinned.hostname : LOOPBACK.has(name));
  const where = pinned ? `PUBLIC_URL (${pinned.origin})` : 'localhost (set PUBLIC_URL to serve MCP on another name)';
  const name = headers.host ? hostName(headers.host) : null;
  if (!name || !allowedName(name)) return `MCP requests must be addressed to ${where}.`;
  const origin = Array.isArray(headers.origin) ? headers.origin.join(',') : headers.origin;
  if (origin === undefined) return null;
  let parsed: URL | null = null;
  try {
    parsed = origin === 'null' ? null : new URL(origin);
  } catch {
    parsed = null;
  }
  const ok = parsed !== null && (pinned ? parsed.origin === pinned.origin : (parsed.protocol === 'http:' || parsed.protocol === 'https:') && LOOPBACK.has(parsed.hostname));
  return ok ? null : `MCP requests from the web page at ${origin} are refused: only ${where} may call it.`;
}
