/**
 * Helpers for the headless API tests (/api/agent/v1): real HTTP with fetch, SSE read frame by frame.
 */
import { expect } from 'vitest';

export interface V1Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function v1(base: string, path: string, options: { token?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<V1Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}/api/agent/v1${path}`, { method: options.method ?? (options.body === undefined ? 'GET' : 'POST'), headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

export interface V1Frame {
  event: string;
  /** Parsed JSON, or the raw text ("[DONE]"). */
  data: any;
}

/** One SSE block (`event:` + `data:` lines) as a frame, its data parsed as JSON when it is JSON; null for a comment. */
export function parseSseBlock(block: string): V1Frame | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (!data.length) return null;
  const raw = data.join('\n');
  let parsed: any = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    /* [DONE] */
  }
  return { event, data: parsed };
}

/** Reads an SSE response's raw text to its end; `onText` sees all of it so far after each chunk. */
export async function readRaw(res: Response, onText: (raw: string) => void | Promise<void>): Promise<string> {
  let raw = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    raw += decoder.decode(chunk, { stream: true });
    await onText(raw);
  }
  return raw;
}

/** POSTs a streaming completion and reads every SSE frame until the server ends the stream. */
export async function streamCompletion(base: string, token: string, body: Record<string, unknown>, onFrame?: (f: V1Frame) => void): Promise<{ status: number; contentType: string | null; frames: V1Frame[] }> {
  const res = await fetch(`${base}/api/agent/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const frames: V1Frame[] = [];
  if (!res.body || res.status !== 200) return { status: res.status, contentType: res.headers.get('content-type'), frames };
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop()!;
    for (const frame of blocks.map(parseSseBlock)) {
      if (!frame) continue;
      frames.push(frame);
      onFrame?.(frame);
    }
  }
  return { status: res.status, contentType: res.headers.get('content-type'), frames };
}

/** Polls a run until `until(run)` holds (bounded); returns the last reply body. */
export async function waitForRun(base: string, token: string, runId: string, until: (run: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: V1Reply | undefined;
  while (Date.now() < deadline) {
    last = await v1(base, `/runs/${runId}`, { token });
    if (last.status === 200 && until(last.body)) return last.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect.fail(`run ${runId} never reached the expected state; last: ${JSON.stringify(last?.body)}`);
}

/** Polls until `check()` returns a value (bounded). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) expect.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function serviceToken(base: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/service-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'airlock-gateway', client_secret: 'test-service-secret-0123456789' }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Starts a v1 background run that pauses on a staging deploy of `version`; its run and approval ids. */
export async function pausedDeploy(base: string, token: string, version: string): Promise<{ runId: string; approvalId: string }> {
  const started = await v1(base, '/runs', { token, body: { messages: [{ role: 'user', content: `deploy payments-api ${version} to staging` }] } });
  if (started.status !== 202) throw new Error(`POST /runs answered ${started.status}: ${JSON.stringify(started.body)}`);
  const paused = await waitForRun(base, token, started.body.run_id, (r) => r.status === 'awaiting_approval');
  return { runId: started.body.run_id, approvalId: paused.approval_request_ids[0] };
}
