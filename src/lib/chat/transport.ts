/**
 * How the chat reaches the gateway. `ChatTransport` is the seam the tests fake; the default wraps
 * `@gradio/client`: one keyword-shaped `submit("/chat", {message, conversation_id, action})` per
 * message with `events: ["data", "status"]`, `cancel()` for Stop, `upload_files` for attachments.
 * @module
 */
import { ApiError, toErrorCode } from './errors.ts';
import type { FileRef, WireChatMessage } from './types.ts';

export interface SubmitInput {
  text: string;
  files: FileRef[];
  conversationId: string;
  /** A decision, or a fork (issue 29): Edit resends `text` in place of message `messageId`, Regenerate answers it again. */
  action: 'confirm' | 'deny' | 'edit' | 'regenerate' | null;
  /** The approval a confirm or deny decides (each card answers for itself). */
  approvalId?: string;
  /** A confirm that also makes a standing grant ("Allow for 1 hour", issue 27): the /chat `grant` parameter. */
  grant?: { ttl_s: number };
  /** A deny's reason, which the model is told: the /chat `text` parameter with action deny. */
  reason?: string;
  /** A confirm's arguments as the approver edited them (issue 27 item 1): the /chat `arguments` parameter. */
  arguments?: Record<string, unknown>;
  /** The stored message an edit or regenerate forks at: the /chat `message_id` parameter. */
  messageId?: string;
}

/** What one run yields: the gateway's messages, then at most one failure. */
export type TransportEvent = { type: 'message'; message: WireChatMessage } | { type: 'failed'; code: string; detail: string };

export interface ChatRun extends AsyncIterable<TransportEvent> {
  cancel(): Promise<void>;
}

export interface ChatTransport {
  submit(input: SubmitInput): ChatRun;
  upload(files: File[]): Promise<FileRef[]>;
  /** A cheap liveness check of the gateway. */
  probe(): Promise<boolean>;
  /** What `/config` says about the model, when it says anything. */
  readonly info: { offlineModel: boolean };
  close(): void;
}

/** A fixed token, or where to get a fresh one before each request (browser sessions renew theirs). */
export type TokenSource = string | (() => Promise<string | null>);

/** Opens a transport for a user token; throws ApiError UNAUTHORIZED or GRADIO_UNREACHABLE. */
export type ConnectTransport = (token: TokenSource) => Promise<ChatTransport>;

export const GRADIO_PATH = '/api/agent/gradio';

/** `upload_files` reports only `HTTP <status>`: the status is the whole signal. */
const UPLOAD_STATUS_CODES: Record<number, string> = {
  401: 'UNAUTHORIZED',
  413: 'PAYLOAD_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
  507: 'STORAGE_FULL',
};

/** Maps a Gradio error status (title/message) to a taxonomy code. */
export function codeFromStatus(status: { title?: unknown; message?: unknown; broken?: boolean }): { code: string; detail: string } {
  const message = typeof status.message === 'string' ? status.message : '';
  const title = typeof status.title === 'string' ? status.title : '';
  if (status.broken) return { code: 'GRADIO_UNREACHABLE', detail: message };
  const named = `${title} ${message}`.match(/\b([A-Z]+(?:_[A-Z]+)+|UNAUTHORIZED|FORBIDDEN|INTERNAL|CONFLICT)\b/);
  if (named && toErrorCode(named[1]) === named[1]) return { code: named[1], detail: message };
  // A 503 from /config (the client says "received status 503") or from a join (the client shows
  // Gradio's "currently busy" text): the gateway or its database is away; never a sign-out.
  if (/received status 50[24]\b/i.test(message)) return { code: 'GRADIO_UNREACHABLE', detail: message };
  if (/received status 503\b|currently busy/i.test(message)) return { code: 'SERVICE_UNAVAILABLE', detail: message };
  if (/not authenticated|credentials|\b401\b/i.test(message)) return { code: 'UNAUTHORIZED', detail: message };
  if (/connection errored|failed to fetch|networkerror|could not resolve app config/i.test(message)) return { code: 'GRADIO_UNREACHABLE', detail: message };
  return { code: 'INTERNAL', detail: message };
}

/** The default transport: `Client.connect(origin + "/api/agent/gradio")` with the user's bearer token. */
export const connectGradio: ConnectTransport = async (token) => {
  const { Client } = await import('@gradio/client');
  const base = `${location.origin}${GRADIO_PATH}`;
  const current = async () => (typeof token === 'string' ? token : ((await token()) ?? ''));
  const headers = { Authorization: `Bearer ${await current()}` };
  // The client reads `options.headers` on every request, so renewing this one object's header
  // before a submit, upload or probe renews every request that follows (short-lived tokens).
  const renew = async () => void (headers.Authorization = `Bearer ${await current()}`);
  let client: InstanceType<typeof Client>;
  try {
    client = await Client.connect(base, { headers, events: ['data', 'status'], record_history: false });
  } catch (error) {
    const { code, detail } = codeFromStatus({ message: (error as Error)?.message });
    throw new ApiError(code === 'INTERNAL' ? 'GRADIO_UNREACHABLE' : code, detail);
  }
  const config = (client.config ?? {}) as Record<string, unknown>;
  const info = { offlineModel: readOfflineFlag(config) };

  return {
    info,
    submit(input) {
      let submission: ReturnType<typeof client.submit> | null = null;
      let cancelled = false;
      async function* events(): AsyncGenerator<TransportEvent> {
        await renew();
        if (cancelled) return;
        submission = client.submit('/chat', {
          message: { text: input.text, files: input.files },
          // "new": a new conversation, not the one this Gradio session used last (issue 24 item 2).
          conversation_id: input.conversationId ?? 'new',
          action: input.action,
          approval_id: input.approvalId ?? null,
          ...(input.grant ? { grant: input.grant } : {}),
          ...(input.arguments ? { arguments: input.arguments } : {}),
          ...(input.reason ? { text: input.reason } : {}),
          ...(input.messageId ? { message_id: input.messageId } : {}),
        });
        let reported = false;
        for await (const event of submission) {
          if (event.type === 'data') {
            for (const value of event.data as unknown[]) {
              for (const message of Array.isArray(value) ? value : [value]) {
                if (!message || typeof message !== 'object') continue;
                const wire = message as WireChatMessage;
                if (wire.metadata?.type === 'error') reported = true;
                yield { type: 'message', message: wire };
              }
            }
          } else if (event.type === 'status' && event.stage === 'error') {
            // An error ChatMessage already told the UI; the error completion that follows it (for
            // Gradio clients: predict() raises) is the same failure, not a second one.
            if (!reported) yield { type: 'failed', ...codeFromStatus(event) };
            return;
          } else if (event.type === 'status' && event.stage === 'complete') return;
        }
      }
      const iterator = events();
      return {
        [Symbol.asyncIterator]: () => iterator,
        cancel: async () => {
          cancelled = true; // a Stop before the submit went out sends nothing
          await submission?.cancel();
        },
      };
    },
    async upload(files) {
      await renew();
      const root = String(config.root || base);
      const result = await client.upload_files(root, files);
      if (result.error || !result.files) {
        const status = Number(/HTTP (\d+)/.exec(result.error ?? '')?.[1] ?? 0);
        const code = UPLOAD_STATUS_CODES[status] ?? 'INTERNAL';
        throw new ApiError(code, result.error ?? 'Upload failed', status);
      }
      return result.files.map((path, i) => ({
        path, orig_name: files[i]?.name, size: files[i]?.size, mime_type: files[i]?.type || undefined,
        meta: { _type: 'gradio.FileData' as const },
      }));
    },
    async probe() {
      try {
        await renew();
        const response = await fetch(`${base}/config`, { headers, cache: 'no-store' });
        return response.ok;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
};

/** The gateway marks the offline demo model in its config; accept the spellings it may use. */
export function readOfflineFlag(config: Record<string, unknown>): boolean {
  const airlock = config.airlock as Record<string, unknown> | undefined;
  const metadata = config.metadata as Record<string, unknown> | undefined;
  return Boolean(config.offline_model ?? airlock?.offline_model ?? metadata?.offline_model);
}
