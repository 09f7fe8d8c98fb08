/**
 * The token of an `Authorization: Bearer <token>` header value.
 * @module
 */

/** The token, or null when the value is missing, not Bearer, or holds more than one token. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
