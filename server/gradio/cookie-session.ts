/**
 * The cookie `/login` sets (Gradio's `access-token-<id>`): named per mount so two Gradio apps on
 * one host keep apart, stable across replicas (derived from the mount path, not random as
 * upstream's per-process id). HttpOnly and SameSite=Lax (upstream's SameSite=None would let other
 * sites' forms post with it); Secure when the request came over https. Pure.
 * @module
 */
import { createHash } from 'node:crypto';

/** The cookie name for a mount path. */
export function cookieName(mountPath: string): string {
  return `access-token-${createHash('sha256').update(mountPath || '/').digest('hex').slice(0, 16)}`;
}

/**
 * The cookie's value from a Cookie header, or null. Tolerates the JS client's habit of echoing
 * the whole Set-Cookie line (attributes and all) back as its Cookie header.
 */
export function readCookie(header: string | string[] | undefined, name: string): string | null {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return null;
  for (const part of text.split(/[;,]/)) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    try {
      return value ? decodeURIComponent(value) : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** The Set-Cookie line for a token. */
export function setCookieLine(name: string, token: string, options: { path: string; secure: boolean }): string {
  return `${name}=${encodeURIComponent(token)}; Path=${options.path || '/'}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
}

/** The Set-Cookie line that removes the cookie. */
export function clearCookieLine(name: string, options: { path: string; secure: boolean }): string {
  return `${name}=; Path=${options.path || '/'}; HttpOnly; SameSite=Lax; Max-Age=0${options.secure ? '; Secure' : ''}`;
}
