/**
 * The public `root` for `/config`, Gradio's rule: host from X-Forwarded-Host (else the configured
 * public URL, else Host), https when X-Forwarded-Proto says so, path = the mount path. Never a
 * trailing slash; "" when the host is unusable (the JS client then uses its connect URL). Pure.
 * @module
 */

const HOST_RE = /^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.split(',')[0]?.trim() || undefined;
}

/** Inputs of `computeRoot`. */
export interface RootInput {
  headers: Record<string, string | string[] | undefined>;
  /** Public mount path, e.g. `/api/agent/gradio` (`""` or `/` at the top). */
  mountPath: string;
  /** `https://host[:port]` used when no X-Forwarded-Host arrives. */
  publicUrl?: string;
  /** Whether the connection itself is TLS. */
  encrypted?: boolean;
}

/** The root URL clients should use for everything after `/config`. */
export function computeRoot({ headers, mountPath, publicUrl, encrypted = false }: RootInput): string {
  const path = ('/' + mountPath.replace(/^\/+|\/+$/g, '')).replace(/^\/$/, '');
  const forwardedHost = first(headers['x-forwarded-host']);
  const forwardedProto = first(headers['x-forwarded-proto'])?.toLowerCase();
  let origin: string | undefined;
  if (forwardedHost) {
    if (!HOST_RE.test(forwardedHost)) return '';
    origin = `${forwardedProto === 'https' ? 'https' : 'http'}://${forwardedHost}`;
  } else if (publicUrl) {
    try {
      origin = new URL(publicUrl).origin;
    } catch {
      return '';
    }
  } else {
    const host = first(headers.host);
    if (!host || !HOST_RE.test(host)) return '';
    origin = `${forwardedProto === 'https' || encrypted ? 'https' : 'http'}://${host}`;
  }
  return `${origin}${path}`;
}
