/**
 * Public types of the Gradio sse_v3 server: endpoint definitions, handler requests, plugin options
 * and the server messages that travel on `/gradio_api/queue/data`.
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';

/** A JSON-schema fragment as Gradio puts it in `/info` (`{type:"string"}`, `{}` = any JSON). */
export type JsonSchema = Record<string, unknown>;

/** One input or output slot of an endpoint. */
export interface ComponentSpec {
  /** Parameter name in `/info` (`parameter_name`); inputs only. Keyword calls use it. */
  name?: string;
  /** Human label (`label`). */
  label: string;
  /** Gradio component type, lower case: `textbox`, `json`, `multimodaltextbox`, `number`, `checkbox`, `file`… */
  component: string;
  /** JSON-schema type of the value; defaults by component (`textbox` -> string, `json` -> any). */
  type?: JsonSchema;
  /** Python type shown by `view_api()`; defaults by component. */
  pythonType?: string;
  /** Default value. Its presence (even `null`) makes the parameter optional. */
  default?: unknown;
  /** Example value for `/info` (`example_input`). */
  example?: unknown;
  description?: string;
  /** Extra component props for `/config` (merged over `{name, label}`). */
  props?: Record<string, unknown>;
}

/** Headers as Node parses them. */
export type RequestHeaders = IncomingHttpHeaders | Record<string, string | string[] | undefined>;

/** What a handler receives for one event. */
export interface EndpointRequest<Identity = unknown> {
  /** One value per input, defaults applied for missing or null values. */
  data: unknown[];
  /** The join's top-level `event_data` (the 3rd `submit()` argument), or null. */
  eventData: unknown;
  /** What `authenticate()` returned. */
  identity: Identity;
  headers: Record<string, string | string[] | undefined>;
  /** The connection: aborted on /cancel, client disconnect or server shutdown. */
  signal: AbortSignal;
  /**
   * The user's intent: aborted only on /cancel and server shutdown, never by a client that goes
   * away. Work that should outlive its connection (a run that commits its answer) listens here.
   */
  cancelSignal: AbortSignal;
  sessionHash: string;
  /**
   * The session the client named, where it differs from `sessionHash`: a curl call (`POST
   * /call/{api}`) runs in a session of its own, and this is the body's `session_hash` (upstream
   * keeps per-session State under it). Absent when the client named none.
   */
  clientSessionHash?: string;
  eventId: string;
  /**
   * Which way the call came, where an endpoint records it: `mcp` for a tool call of the MCP server
   * (`/gradio_api/mcp/`); absent for Gradio's own routes (the queue, /run, the curl call API).
   */
  via?: 'mcp';
  /**
   * Sends Gradio's `log` message (a toast in the UI, `status.log` in JS, a job update in Python).
   * A no-op where no stream carries it (the unqueued /run call, the curl call API).
   */
  log(level: LogLevel, message: string, options?: { title?: string; duration?: number | null }): void;
  /** Sends Gradio's `progress` message (`progress_data`: one unit per nesting level). Same carriers as `log`. */
  progress(units: ProgressUnit[]): void;
}

/** Levels of Gradio's `log` message (gr.Info, gr.Warning, gr.Success; `error` is a gr.Error toast). */
export type LogLevel = 'info' | 'warning' | 'success' | 'error';

/** One level of a `progress` message, as Gradio's ProgressUnit. */
export interface ProgressUnit {
  index?: number | null;
  length?: number | null;
  unit?: string | null;
  /** 0..1 when index/length are unknown. */
  progress?: number | null;
  desc?: string | null;
}

/** Handler result: an async iterable of output arrays (streaming) or one output array. */
export type EndpointResult = AsyncIterable<unknown[]> | Promise<unknown[]> | unknown[];

/** A typed endpoint served under `/gradio_api` and listed in `/config` and `/info`. */
export interface EndpointDefinition<Identity = unknown> {
  /** `"chat"` -> `"/chat"`. */
  apiName: string;
  description?: string;
  inputs: ComponentSpec[];
  outputs: ComponentSpec[];
  /** Events of this endpoint running at once (default 64). */
  concurrencyLimit?: number;
  /** Pending + running cap; joins beyond it get 503 (default 1000). */
  queueSize?: number;
  /** Events of this endpoint one identity may run at once (default: no cap; needs `identityKey`). */
  userConcurrencyLimit?: number;
  /** Pending + running events one identity may hold; beyond it 429 (default: no cap; needs `identityKey`). */
  userQueueSize?: number;
  /** Listed in `/info` (default true); false lists it only for `/info?all_endpoints=true` (still callable). */
  showApi?: boolean;
  /**
   * How the MCP server (`/gradio_api/mcp/`) offers it as a tool named `apiName`: by default every
   * input with its `/info` schema; `parameters` narrows that to the named inputs with these JSON
   * schemas (the others take their defaults); false: not a tool.
   */
  mcp?: false | { parameters?: Record<string, JsonSchema>; elicit?: (outputs: unknown[]) => McpElicitation | null };
  /** Whether `/config` marks it a generator (default true). */
  generator?: boolean;
  handler: (request: EndpointRequest<Identity>) => EndpointResult;
}

/**
 * A question the MCP server asks the user (MCP elicitation) after a tool call, when the client
 * supports it on a session transport (`/sse`): its answer becomes the next call's arguments.
 */
export interface McpElicitation {
  message: string;
  /** How long to wait for the answer (default the MCP SDK's 60 s); past it the result is returned as it is. */
  timeoutMs?: number;
  /** A flat object of primitive properties, as MCP elicitation allows. */
  requestedSchema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[] };
  /** The next call's arguments for the answer, or null to return the result as it is. */
  next(answer: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }): Record<string, unknown> | null;
}

/** Headers in, identity out; null answers 401, a throw 503 (could not decide; see auth.ts). */
export type Authenticate<Identity = unknown> = (headers: RequestHeaders) => Identity | null | Promise<Identity | null>;

/** Options of `gradioPlugin`. */
export interface GradioPluginOptions<Identity = unknown> {
  /** Mount path, e.g. `/api/agent/gradio` (Fastify's register prefix). */
  prefix?: string;
  endpoints: EndpointDefinition<Identity>[];
  authenticate: Authenticate<Identity>;
  /** Absolute folder for uploads (`<owner folder>/<random id>/<basename>`, 0700 folders, 0600 files). */
  dataDir: string;
  /** Largest accepted upload file, bytes (413 beyond). */
  uploadMaxBytes: number;
  title?: string;
  /** JSON body limit for join/cancel/run, bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Public path of the mount when a proxy rewrites it (default: `prefix`). */
  rootPath?: string;
  /** Public origin (`https://host`) used when no X-Forwarded-Host arrives (default: the Host header). */
  publicUrl?: string;
  /** `/config`'s `connect_heartbeat` (default false: the JS client then opens no heartbeat stream). */
  connectHeartbeat?: boolean;
  /** Heartbeat period on open streams (default 15 000 ms). */
  heartbeatMs?: number;
  /** On close, how long running events may finish before they are aborted (default 0). */
  drainMs?: number;
  /** Abort a session's events when no stream attaches within this time (default 60 000 ms). */
  orphanTimeoutMs?: number;
  /** Reflect CORS for browsers on other origins (default false: same origin only). */
  cors?: boolean;
  /**
   * Stable owner key of an identity (e.g. the user id). When set, sessions, events and uploads are
   * bound to it: another identity cannot read a session's stream, cancel its events (unless it
   * presents both the session_hash and the event_id, which is what the JS client sends), download
   * or see its files. Unset: upstream Gradio's capability model (knowing the hash is enough).
   */
  identityKey?: (identity: any) => string;
  /** Total bytes of one upload request (413 beyond; default 4 x `uploadMaxBytes`). */
  uploadRequestMaxBytes?: number;
  /** Bytes one owner may keep stored (413 beyond; default: no quota). */
  uploadQuotaBytes?: number;
  /** Stored files older than this are swept (default: kept forever). */
  uploadRetentionMs?: number;
  /** How often the sweep runs (default a tenth of the retention, 1 s to 1 h). */
  uploadSweepIntervalMs?: number;
  /** Keeps a file the sweep would remove, e.g. one a stored message still names (`path`: the client path `<id>/<name>`). */
  isFileReferenced?: (path: string) => boolean | Promise<boolean>;
  /** Heartbeat streams held open per identity; more are ended after one period (default 8). */
  heartbeatsPerIdentity?: number;
  /** Bytes of one call-API event (`GET /call/{api}/{id}`); past it the stream ends with a PAYLOAD_TOO_LARGE error event (default 8 MiB). */
  callStreamMaxBytes?: number;
  /**
   * Username + password -> a credential `authenticate()` accepts as `Authorization: Bearer <token>`,
   * or null for wrong credentials (400, as Gradio). Enables `POST /login` (form-urlencoded or
   * multipart, what the Python and JS clients send): the token goes into an HttpOnly cookie, and a
   * request bearing that cookie (and no Authorization header) is authenticated with it. A throw
   * that is a GradioError is answered as it is (e.g. 429 while throttled).
   */
  login?: (username: string, password: string, request: { ip: string; headers: RequestHeaders }) => Promise<string | null>;
  /** Called by `GET /logout` with the cookie's token (revoke it); the cookie is cleared either way. */
  logout?: (token: string) => Promise<void>;
  /**
   * Serve Gradio's MCP server under `/gradio_api/mcp/` (as `launch(mcp_server=True)`): every
   * endpoint not marked `mcp: false` is a tool (default false).
   */
  mcpServer?: boolean;
  /** Swap the in-memory session bus (e.g. for a PostgreSQL LISTEN/NOTIFY one). */
  bus?: import('./session-bus.ts').SessionBus;
  /** Swap the upload storage (default: `dataDir` on disk; `PgUploadStore` shares uploads between replicas). */
  uploadStore?: import('./upload-store.ts').UploadStorage;
}

/** A diff operation as Gradio sends it: `[action, path, value]`. */
export type DiffOp = ['replace' | 'append' | 'add' | 'delete', (string | number)[], unknown];

/** A message on the session stream. Field order is the wire order. */
export type ServerMessage =
  | { msg: 'estimation'; event_id: string; rank: number; queue_size: number; rank_eta: number | null }
  | { msg: 'process_starts'; event_id: string; eta: number | null }
  | { msg: 'process_generating'; event_id: string; success: true; output: { data: unknown[]; is_generating: true } }
  | { msg: 'process_completed'; event_id: string; success: true; output: { data: unknown[]; is_generating: false } }
  | { msg: 'process_completed'; event_id: string; success: false; title: string; output: ErrorOutput }
  | { msg: 'log'; event_id: string; log: string; level: LogLevel; duration: number | null; visible: true; title: string }
  | { msg: 'progress'; event_id: string; progress_data: Required<ProgressUnit>[] }
  | { msg: 'heartbeat'; event_id: null }
  | { msg: 'close_stream'; event_id: null }
  | { msg: 'unexpected_error'; event_id: null; message: string; session_not_found: boolean; success: false };

/** The only keys the Python client accepts in an error completion's `output`. */
export interface ErrorOutput {
  error: string | null;
  duration: number | null;
  visible: boolean;
  title: string;
}
