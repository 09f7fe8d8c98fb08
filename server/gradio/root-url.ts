/**
 * The public `root` for `/config`: the configured public URL when there is one (nothing a request
 * says can change it), else the request's host and protocol as the server trusts them, plus the
 * mount path. "Trusts" is the caller's business: `meta.ts` passes Fastify's `request.host` and
 * `request.protocol`, which follow X-Forwarded-Host/-Proto only from the app's `trustProxy` peers,
 * so a client cannot make the server reflect a host of its choosing through forwarded headers.
 * Never a trailing slash; "" when the host is unusable (the JS client then uses its connect URL).
 * Pure.
 * @module
 */

const HOST_RE = /^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** Inputs of `computeRoot`. */
export interface RootInput {
  /** The host as trusted (a proxy's X-Forwarded-Host, else the Host header). */
  host: string | undefined;
  /** The protocol as trusted (`https` from a proxy's X-Forwarded-Proto or a TLS socket). */
  protocol: string | undefined;
  /** Public mount path, e.g. `/api/agent/gradio` (`""` or `/` at the top). */
  mountPath: string;
  /** `https://host[:port]`: when set, always the origin. */
  publicUrl?: string;
}

/** The root URL clients should use for everything after `/config`. */
export function computeRoot({ host, protocol, mountPath, publicUrl }: RootInput): string {
  const path = ('/' + mountPath.replace(/^\/+|\/+$/g, '')).replace(/^\/$/, '');
  if (publicUrl) {
    try {
      return `${new URL(publicUrl).origin}${path}`;
    } catch {
      return '';
    }
  }
  const value = host?.split(',')[0]?.trim();
  if (!value || !HOST_RE.test(value)) return '';
  return `${protocol?.toLowerCase() === 'https' ? 'https' : 'http'}://${value}${path}`;
}
