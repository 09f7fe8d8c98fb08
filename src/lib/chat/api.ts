/**
 * The REST calls the UI makes (CONTRACTS §2). Errors `{error:{code,message}}` become `ApiError`
 * with the taxonomy code; a network failure is GRADIO_UNREACHABLE with status 0. Only a 401 calls
 * `onUnauthorized`: a 503 (database down) or a network failure keeps the session.
 * @module
 */
import type { PolicyCheck } from './edit-args.ts';
import { ApiError, toErrorCode } from './errors.ts';
import { readSse, type SseFrame } from './event-stream.ts';
import type { ServerClock } from './server-clock.ts';
import type { BranchFork } from '../wire/branches.ts';
import type { HistoryPage } from '../wire/index.ts';
import type { ActiveState, Conversation, StoredMessage, User } from './types.ts';

export interface ApiOptions {
  /** The bearer token, read on every call so a new login (or a renewed token) takes effect at once. */
  token: () => string | null | Promise<string | null>;
  /** A 401 first asks for a new token here (the refresh cookie) and retries once with it. */
  renew?: () => Promise<string | null>;
  /** Called once per 401 that renewing did not cure, before the ApiError is thrown. */
  onUnauthorized?: () => void;
  /** Called on an outage (server unreachable, or 502/503/504): the session stays, the connection shows it. */
  onOutage?: (reason: 'unreachable' | 'unavailable') => void;
  fetch?: typeof fetch;
  base?: string;
  /** Learns the server's time from each answer's Date header (approval countdowns). */
  clock?: Pick<ServerClock, 'observe'>;
}

export interface Page<T> {
  items: T[];
  next: string | null;
}

/** A history page as the chat state reads it: its branch's rows, and the conversation's forks (issue 29). */
export interface HistoryResult extends Page<StoredMessage> {
  ledgerSeq?: number;
  activeBranch: number;
  forks: BranchFork[];
}

/** A committed ledger event as the events page returns it (only what the UI reads). */
export interface LedgerEventRef {
  seq: number;
  kind: string;
}

export interface LoginResult {
  access_token: string;
  expires_in: number;
  user: User;
}

/** Creates the REST client; every method throws `ApiError` on failure. */
/** Session routes: their 401 means "no session", never "your session just ended". */
const SESSION_PATHS = new Set(['/api/auth/login', '/api/auth/refresh']);

export function createApi({ token, renew, onUnauthorized, onOutage, fetch: f = globalThis.fetch.bind(globalThis), base = '', clock }: ApiOptions) {
  async function call<T>(method: string, path: string, body?: unknown, renewed?: string): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const t = renewed ?? (await token());
    if (t) headers.authorization = `Bearer ${t}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    const sentAt = Date.now();
    try {
      response = await f(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      clock?.observe(response.headers?.get('date'), sentAt, Date.now());
    } catch (cause) {
      onOutage?.('unreachable');
      throw new ApiError('GRADIO_UNREACHABLE', `The server cannot be reached (${(cause as Error)?.message ?? cause}).`, 0);
    }
    if (response.status === 204) return undefined as T;
    const json = await response.json().catch(() => null);
    if (!response.ok) {
      const error = (json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
      const code = response.status === 401 ? 'UNAUTHORIZED' : toErrorCode(error?.code ?? statusCode(response.status));
      if (code === 'UNAUTHORIZED' && t && renewed === undefined && renew && !SESSION_PATHS.has(path)) {
        // The access token died early (revoked, or expired while the tab slept): one renewal, one retry.
        const next = await renew();
        if (next) return call<T>(method, path, body, next);
      }
      if (code === 'UNAUTHORIZED' && !SESSION_PATHS.has(path)) onUnauthorized?.();
      if (code === 'SERVICE_UNAVAILABLE') onOutage?.('unavailable');
      if (code === 'GRADIO_UNREACHABLE') onOutage?.('unreachable');
      throw new ApiError(code, typeof error?.message === 'string' ? error.message : response.statusText, response.status, error?.details);
    }
    return json as T;
  }
  const q = (params: Record<string, string | number | boolean | null | undefined>) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
    const text = s.toString();
    return text ? `?${text}` : '';
  };
  const id = encodeURIComponent;

  return {
    /** Browser sign-in: a short-lived access token here, the refresh cookie (httpOnly) for the session. */
    login: (username: string, password: string) => call<LoginResult>('POST', '/api/auth/login', { username, password, cookie: true }),
    /** A new access token from the refresh cookie (rotates it); UNAUTHORIZED when there is no session. */
    refresh: () => call<LoginResult>('POST', '/api/auth/refresh'),
    /** An SSO person's logout answers where the provider's own logout is (issue 39); otherwise nothing. */
    logout: () => call<{ end_session_url?: string } | undefined>('POST', '/api/auth/logout'),
    me: () => call<User & { permissions: string[] }>('GET', '/api/auth/me'),
    listConversations: async (o: { q?: string; cursor?: string | null; limit?: number; archived?: boolean } = {}): Promise<Page<Conversation>> => {
      const r = await call<{ items: Conversation[]; next_cursor: string | null }>('GET', `/api/assistant/conversations${q(o)}`);
      return { items: r.items, next: r.next_cursor };
    },
    getConversation: (cid: string) => call<Conversation>('GET', `/api/assistant/conversations/${id(cid)}`),
    /** `title`: the user's own; `text`: the first message, its title derived until the first answer names it. */
    createConversation: (body: { title?: string; text?: string } = {}) => call<Conversation>('POST', '/api/assistant/conversations', body),
    renameConversation: (cid: string, title: string) => call<Conversation>('PATCH', `/api/assistant/conversations/${id(cid)}`, { title }),
    archiveConversation: (cid: string) => call<void>('DELETE', `/api/assistant/conversations/${id(cid)}`),
    restoreConversation: (cid: string) => call<Conversation>('POST', `/api/assistant/conversations/${id(cid)}/restore`),
    /** `branch`: the branch whose rows to read (an older page of the branch shown); absent: the active one. */
    history: async (cid: string, before?: string | null, limit = 50, branch?: number): Promise<HistoryResult> => {
      const r = await call<HistoryPage>('GET', `/api/assistant/history${q({ conversation_id: cid, before, limit, branch })}`);
      const forks = (r.branches ?? []).map((b) => ({ branch: b.branch, parent: b.parent_branch, from: b.from_message_seq }));
      return { items: r.items, next: r.next_before, ledgerSeq: r.ledger_seq, activeBranch: r.active_branch ?? 0, forks };
    },
    /** The branch switch `‹ 1/2 ›` (issue 29): the conversation shows, and goes on from, `branch`. */
    switchBranch: (cid: string, branch: number) =>
      call<{ conversation_id: string; active_branch: number; seq: number }>('POST', `/api/agent/conversations/${id(cid)}/branch`, { branch }),
    /**
     * The conversation's event stream after `after` (SSE frames), until it ends or `signal` aborts.
     * With the answer's tokens (`partials=1`, opt-in since seed 001) and, on attaching to a running
     * answer, its segment so far (`snapshot=1`): how a tab follows another tab's answer.
     */
    events: async function* (cid: string, after: number, signal: AbortSignal): AsyncGenerator<SseFrame> {
      const t = await token();
      const response = await f(`${base}/api/agent/conversations/${id(cid)}/events/stream?after=${after}&partials=1&snapshot=1`, {
        headers: { accept: 'text/event-stream', ...(t ? { authorization: `Bearer ${t}` } : {}) },
        signal,
      });
      if (!response.ok || !response.body) throw new ApiError(statusCode(response.status), response.statusText, response.status);
      yield* readSse(response.body as unknown as AsyncIterable<Uint8Array>);
    },
    /**
     * The last committed event at or before `seq` (the history page's ledger_seq), or null: a
     * run is still open at that snapshot unless it is a run.finished.
     */
    eventAt: async (cid: string, seq: number): Promise<LedgerEventRef | null> => {
      if (seq <= 0) return null;
      const r = await call<{ events: LedgerEventRef[] }>('GET', `/api/agent/conversations/${id(cid)}/events${q({ after: seq - 1, limit: 1 })}`);
      return r.events[0] ?? null;
    },
    /**
     * Stops the conversation's running answer when no Gradio submission of this page carries it
     * (the page was reloaded while it ran). Needs the gateway's cancel route; see chat.svelte.ts.
     */
    cancelRun: (cid: string) => call<void>('POST', `/api/agent/conversations/${id(cid)}/cancel`),
    /** "Remove queued message": drops a message waiting behind the running answer (issue 24 item 4). */
    /** The policy's word on a call with these arguments (the edit's approvers, issue 37): v1's dry run. */
    policyCheck: (tool: string, args: Record<string, unknown>) => call<PolicyCheck>('POST', '/api/agent/v1/policy/check', { tool_name: tool, tool_args: args }),
    removeQueued: (cid: string, requestId: string) => call<void>('DELETE', `/api/agent/conversations/${id(cid)}/queue/${encodeURIComponent(requestId)}`),
    active: (cid: string) => call<ActiveState>('GET', `/api/agent/conversations/${id(cid)}/active`),
    /** The gateway's model facts (`offline_model` drives the demo-model notice; `model_titles`: a first answer's title may be followed by the model's). */
    agentInfo: () => call<{ model: string; offline_model: boolean; model_titles?: boolean; approval_timeout_s: number }>('GET', '/api/agent/info'),
  };
}

export type Api = ReturnType<typeof createApi>;

function statusCode(status: number): string {
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 400 || status === 422) return 'VALIDATION_ERROR';
  if (status === 413) return 'PAYLOAD_TOO_LARGE';
  if (status === 429) return 'RATE_LIMITED';
  // A proxy's "backend down" pages carry no code: an outage, never a reason to sign out. 502/504:
  // the proxy cannot reach the server at all; 503: the server is there but cannot serve now.
  if (status === 502 || status === 504) return 'GRADIO_UNREACHABLE';
  if (status === 503) return 'SERVICE_UNAVAILABLE';
  return 'INTERNAL';
}
