/**
 * An async request handler for a test's own HTTP server (a model, a proxy, a receiver) whose
 * failure ends that request, not the test run. A rejected handler passed to `createServer` is an
 * unhandled rejection: vitest then fails the whole run with every test passed, and names no test.
 * Such failures are routine here: the gateway hangs up mid-answer (a Stop, a kill), or the
 * upstream goes away first in a teardown. The client sees the connection reset, where it matters.
 *
 *   createServer(guarded(async (req, res, signal) => { … fetch(url, { signal }) … }))
 *
 * `signal` aborts when the response closes (finished, or the client gone): pass it on to an
 * upstream fetch so nothing keeps streaming to no one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function guarded(handler: (req: IncomingMessage, res: ServerResponse, signal: AbortSignal) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const closed = new AbortController();
    res.once('close', () => closed.abort());
    handler(req, res, closed.signal).catch(() => res.destroy());
  };
}
