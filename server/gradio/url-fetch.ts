/**
 * Fetches a file a client names by URL (`FileData.path` = `https://…`, what `handle_file(url)` sends
 * in both Gradio clients; upstream downloads it) into the caller's uploads, guarded against
 * server-side request forgery:
 *   - only http and https, on their own port or any port the URL names;
 *   - the host is resolved here, every address checked (url-address.ts), and the socket connects to
 *     the address that was checked (the request's `lookup` answers with it), so a name that
 *     resolves to a public address now and a private one a moment later (DNS rebinding) cannot
 *     slip through; an IP literal is checked as it is;
 *   - redirects are followed by hand, at most 5, each hop checked the same way;
 *   - at most `maxBytes` (a Content-Length past it is refused before the body, a body past it is
 *     cut) and `timeoutMs` for the whole fetch, redirects and a slow body included;
 *   - the response and its size meter are joined by `stream.pipeline` from the first byte, so the
 *     meter's `too_large` (or a socket error) always has a listener and reaches the caller, even
 *     while the upload store has not started reading yet (an unheard one ended the process).
 * A refused fetch keeps nothing: the partial file is removed by the upload store.
 * @module
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type BlockList, type LookupFunction } from 'node:net';
import { pipeline, Transform, type Readable } from 'node:stream';
import { uploadName } from './files.ts';
import type { OwnerKey } from './ownership.ts';
import { addressAllowed } from './url-address.ts';
import { UploadLimitError, type UploadStorage } from './upload-store.ts';

/** Why a file URL was not fetched: `refused` (scheme or address), `too_large`, `timeout`, `failed` (DNS, connection, status). */
export class FileUrlError extends Error {
  override readonly name = 'FileUrlError';
  constructor(
    readonly reason: 'refused' | 'too_large' | 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export interface UrlFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Ranges allowed although private (FILE_URL_FETCH_ALLOW_CIDRS). */
  allow?: BlockList;
  /** DNS resolution (a seam for tests); default: the system resolver, every address. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

export interface FetchedFile {
  /** The upload path `<id>/<basename>`. */
  path: string;
  orig_name: string;
  size: number;
  mime_type?: string;
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const systemResolve = (hostname: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * Fetches `url` into `owner`'s uploads and returns the stored file. `name` is the client's
 * `orig_name`, else the URL's last path segment.
 */
export async function fetchUrlToUploads(
  url: string,
  target: { store: UploadStorage; owner: OwnerKey; name?: string },
  options: UrlFetchOptions,
): Promise<FetchedFile> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const timedOut = () => new FileUrlError('timeout', `The file at ${displayUrl(url)} did not arrive within ${options.timeoutMs} ms.`);
  let body: Readable | undefined;
  let streamError: Error | undefined;
  try {
    const response = await get(url, options, signal);
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      response.destroy();
      throw tooLarge(url, options.maxBytes);
    }
    const name = uploadName(target.name || lastSegment(response.url) || 'download');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(size > options.maxBytes ? tooLarge(url, options.maxBytes) : null, chunk);
      },
    });
    body = pipeline(response, meter, (error) => void (streamError ??= error ?? undefined));
    const source = body;
    const path = await target.store.withBudget(target.owner, (budget) => target.store.save(source, name, target.owner, budget, () => false));
    const type = response.headers['content-type']?.split(';')[0].trim();
    return { path, orig_name: name, size, ...(type ? { mime_type: type } : {}) };
  } catch (thrown) {
    body?.destroy();
    if (signal.aborted) throw timedOut();
    // The meter's own error says why the store's read failed (the store may only see it as a close).
    const error = streamError instanceof FileUrlError ? streamError : thrown;
    if (error instanceof UploadLimitError) throw new FileUrlError('too_large', `The file at ${displayUrl(url)} does not fit in your upload ${error.limit === 'quota' ? 'quota' : 'limit'}.`);
    if (error instanceof FileUrlError) throw error;
    throw new FileUrlError('failed', `The file at ${displayUrl(url)} could not be fetched: ${(error as Error).message}.`);
  }
}

/** The response of `url` after following redirects, each hop's address checked. */
async function get(url: string, options: UrlFetchOptions, signal: AbortSignal): Promise<IncomingMessage & { url: string }> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await getOnce(current, options, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || !location) {
      if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) > 299) {
        response.destroy();
        throw new FileUrlError('failed', `The file at ${displayUrl(url)} could not be fetched: its server answered ${response.statusCode}.`);
      }
      return Object.assign(response, { url: current });
    }
    response.resume();
    if (hop >= MAX_REDIRECTS) throw new FileUrlError('failed', `The file at ${displayUrl(url)} redirects more than ${MAX_REDIRECTS} times.`);
    current = new URL(location, current).toString();
  }
}

/** One request to `url`, connected to an address this function resolved and checked. */
async function getOnce(url: string, options: UrlFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const target = parseTarget(url);
  const literal = isIP(target.host);
  let addresses: LookupAddress[];
  if (literal) addresses = [{ address: target.host, family: literal }];
  else {
    try {
      addresses = await (options.resolve ?? systemResolve)(target.host);
    } catch {
      throw new FileUrlError('failed', `The file at ${displayUrl(url)} could not be fetched: its host does not resolve.`);
    }
  }
  // Every address the name has must be public: one private answer among public ones refuses it.
  if (addresses.length === 0 || !addresses.every((a) => addressAllowed(a.address, options.allow))) {
    throw new FileUrlError('refused', `The file at ${displayUrl(url)} is on a private, loopback or link-local address; only public addresses are fetched.`);
  }
  const checked = addresses[0];
  // The socket connects to `checked`: no second resolution happens (an IP literal skips lookup).
  const lookup: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [checked]);
    else callback(null, checked.address, checked.family);
  };
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(target.url, { method: 'GET', agent: false, lookup, signal, headers: { 'user-agent': 'airlock-file-fetch', accept: '*/*' } }, resolve);
    req.on('error', reject);
    req.end();
  });
}

function parseTarget(url: string): { url: URL; host: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FileUrlError('refused', `The file URL ${displayUrl(url)} is not a valid URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new FileUrlError('refused', `The file URL ${displayUrl(url)} is not http or https.`);
  if (parsed.username || parsed.password) throw new FileUrlError('refused', 'A file URL must not carry credentials.');
  return { url: parsed, host: parsed.hostname.replace(/^\[|\]$/g, '') };
}

const tooLarge = (url: string, maxBytes: number) => new FileUrlError('too_large', `The file at ${displayUrl(url)} is larger than ${maxBytes} bytes (FILE_URL_MAX_BYTES).`);

function lastSegment(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}

/** The URL as errors show it: no query (it may carry a signature), at most 200 characters. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.slice(0, 200);
  } catch {
    return url.slice(0, 200);
  }
}

/** Whether a FileData path names a URL to fetch rather than an upload. */
export const isHttpUrl = (path: string): boolean => /^https?:\/\//i.test(path);
