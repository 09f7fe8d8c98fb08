/**
 * Whether an error is the multipart parser refusing a malformed body (no boundary, a body that
 * ends mid-part…). busboy throws plain Errors without a status, which would otherwise be answered
 * as 500; they are the client's fault, so the plugin answers 400. Matched by busboy's fixed
 * messages (its only stable signal). Pure.
 * @module
 */

const BUSBOY_MESSAGES = [
  /^Multipart: Boundary not found$/,
  /^Unexpected end of multipart data$/,
  /terminated early due to unexpected end of multipart data$/,
  /^Unsupported Content-Type\.$/,
  /^Malformed (urlencoded )?(part )?header/i,
];

export function isMalformedMultipart(error: unknown): boolean {
  if (!(error instanceof Error) || (error as { statusCode?: number }).statusCode !== undefined) return false;
  return BUSBOY_MESSAGES.some((re) => re.test(error.message));
}
