/**
 * Every setting, read from the environment once and validated. Defaults work on a fresh machine:
 * embedded PostgreSQL, the offline model, demo users, generated service credentials.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';

export const ROLES = ['web', 'api', 'gateway'] as const;
export type Role = (typeof ROLES)[number];

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());

const EnvSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: optionalUrl,
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Public base URL (scheme://host[:port]) when behind a proxy that sets no X-Forwarded-* headers. */
  PUBLIC_URL: optionalUrl,
  /** Where the gateway reaches the api role. Unset: this process's own address. */
  API_URL: optionalUrl,
  /** OpenAI-compatible endpoint. Unset: the built-in offline model. */
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_API_KEY: z.string().default('offline'),
  OPENAI_MODEL: z.string().default('airlock-offline-1'),
  OPENAI_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** A model stream silent this long between chunks (comments such as `: ping` do not count) ends the turn with LLM_UNAVAILABLE. */
  MODEL_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  /** The model accepts image content parts; otherwise it is told an image was attached and cannot be seen. */
  OPENAI_VISION: bool.default(false),
  /** A real model titles each conversation after its first answer (one small prompt); off, or the offline model: the rule's title stays. */
  MODEL_TITLES: bool.default(true),
  /** Attached text (files, PDF text) the model gets per file and per turn; beyond: head + tail + a note. */
  ATTACHMENT_MAX_BYTES_PER_FILE: z.coerce.number().int().positive().default(100_000),
  ATTACHMENT_MAX_BYTES_PER_TURN: z.coerce.number().int().positive().default(250_000),
  /** PDF reading (server/attachments/pdf-limits.ts): memory of one reader worker (MB; PDF.js alone takes
   * ~35), readers at once, and the most pages (a PDF with more becomes a "too large" note). */
  ATTACHMENT_PDF_MAX_MB: z.coerce.number().int().min(64).default(256),
  ATTACHMENT_PDF_WORKERS: z.coerce.number().int().positive().max(64).default(2),
  ATTACHMENT_PDF_MAX_PAGES: z.coerce.number().int().positive().default(500),
  /** Time one PDF may take once its reader runs (ms); longer becomes a note. */
  ATTACHMENT_PDF_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  /** Pause between words of the offline model's answers. */
  OFFLINE_MODEL_DELAY_MS: z.coerce.number().int().min(0).default(25),
  APPROVAL_TIMEOUT_S: z.coerce.number().int().positive().default(300),
  /** Approval webhooks (issue 26): a JSON list (a value starting with "[") or the path of a file holding it. */
  APPROVAL_WEBHOOKS: z.string().optional(),
  /** The first retry delay of a failed webhook delivery (ms); it doubles per attempt up to 300 times this (1 s -> 5 min). */
  APPROVAL_WEBHOOK_RETRY_MS: z.coerce.number().int().min(10).default(1000),
  /** Approval streams (GET /api/agent/v1/approvals/stream) one user may hold open in one process. */
  APPROVAL_STREAMS_PER_USER: z.coerce.number().int().min(1).default(8),
  /** Seconds between signed audit chain heads (issue 36 item 3); every export signs one too. */
  AUDIT_CHECKPOINT_S: z.coerce.number().int().min(1).default(3600),
  /** Unset: on for the embedded one-command start, off when DATABASE_URL names a real database. */
  DEMO_USERS: z.preprocess((v) => (v === '' ? undefined : v), bool.optional()),
  /**
   * Peers whose X-Forwarded-For/-Host/-Proto are believed: comma-separated IPs or CIDRs; empty
   * trusts nobody. Anyone else's forwarded headers are ignored (they are the client's own words).
   */
  TRUST_PROXY: z.string().default('127.0.0.1,::1'),
  DEMO_PASSWORD: z.string().min(8).optional(),
  SERVICE_CLIENT_ID: z.string().default('airlock-gateway'),
  SERVICE_CLIENT_SECRET: z.string().min(16).optional(),
  JWT_ISSUER: z.string().default('airlock'),
  USER_TOKEN_TTL_S: z.coerce.number().int().positive().default(8 * 3600),
  SERVICE_TOKEN_TTL_S: z.coerce.number().int().positive().default(300),
  /** Browser sessions: the in-memory access token's lifetime (the refresh cookie lasts USER_TOKEN_TTL_S). */
  SESSION_ACCESS_TTL_S: z.coerce.number().int().positive().default(300),
  /**
   * Headless runs: lifetime of the token minted for the user at the start of each turn (longer than
   * a turn takes: the graph's step limit x the model timeout); never above USER_TOKEN_TTL_S.
   */
  AGENT_TOKEN_TTL_S: z.coerce.number().int().positive().default(1800),
  UPLOAD_MAX_BYTES: z.coerce.number().int().positive().default(20 * 1024 * 1024),
  /** Total bytes of one upload request (default 4 x UPLOAD_MAX_BYTES). */
  UPLOAD_REQUEST_MAX_BYTES: z.coerce.number().int().positive().optional(),
  /** Bytes of uploads one user may keep stored. */
  UPLOAD_QUOTA_BYTES: z.coerce.number().int().positive().default(500 * 1024 * 1024),
  /** Uploads no message names are removed after this many days (0 keeps them forever). */
  UPLOAD_RETENTION_DAYS: z.coerce.number().min(0).default(30),
  /** /chat files given by an http(s) URL are fetched (off: such a file is refused, naming this setting). */
  FILE_URL_FETCH: bool.default(false),
  /** Largest file fetched by URL (default UPLOAD_MAX_BYTES), and the whole fetch's time, redirects included. */
  FILE_URL_MAX_BYTES: z.coerce.number().int().positive().optional(),
  FILE_URL_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** IPs/CIDRs a file URL may reach although private or loopback (an own file server; tests). Empty: none. */
  FILE_URL_FETCH_ALLOW_CIDRS: z.string().default(''),
  /** /chat events one user may run at once, and hold queued + running. */
  CHAT_USER_CONCURRENCY: z.coerce.number().int().positive().default(4),
  /** /chat events one process runs at once (the rest wait in the queue). A run mostly waits on the
   * model, so this is sized for streams, not cores: 2 cores carried 400+ paced streams (bench/capacity). */
  CHAT_CONCURRENCY: z.coerce.number().int().positive().default(512),
  CHAT_USER_QUEUE: z.coerce.number().int().positive().default(16),
  /** Messages one conversation may have waiting while its agent runs (issue 24 item 4); beyond, CONVERSATION_BUSY. 0: none queue. */
  MAX_QUEUED_INPUTS: z.coerce.number().int().min(0).max(100).default(5),
  /** Bytes of one curl call-API event (each repeats the whole answer); past it the stream ends with PAYLOAD_TOO_LARGE. */
  CALL_STREAM_MAX_BYTES: z.coerce.number().int().min(1024).default(8 * 1024 * 1024),
  BODY_MAX_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  LEASE_TTL_S: z.coerce.number().int().positive().default(30),
  /** Several gateway replicas share this database (README "Running several replicas"): the Gradio
   * queue's session bus goes through PostgreSQL instead of this process's memory. */
  REPLICAS: bool.default(false),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(100).default(15_000),
  EVENTS_DRAIN_RETRY_AFTER_MS: z.coerce.number().int().min(0).default(1_000),
  /** Headless background runs (pg-boss): seconds without a heartbeat before a run's worker counts as lost (>= 10). */
  JOBS_HEARTBEAT_S: z.coerce.number().int().min(10).default(10),
  /** How often the job queue looks for lost jobs and expired approvals' backstop (seconds). */
  JOBS_SUPERVISE_S: z.coerce.number().int().min(1).default(5),
  JOBS_POLL_S: z.coerce.number().min(0.5).default(2),
  /** Background runs one process executes at once. */
  JOBS_CONCURRENCY: z.coerce.number().int().positive().default(8),
  /** Retries of a background run whose process died (or a failed start that may succeed later). */
  JOBS_RETRY_LIMIT: z.coerce.number().int().min(0).default(3),
  /** YAML or JSON file naming MCP servers whose tools the agent gets (README "Bring your own tools"). */
  TOOLS_FILE: z.string().optional(),
  /** Tool results longer than this are cut for the model, with a note saying so. */
  TOOL_RESULT_MAX_CHARS: z.coerce.number().int().min(100).default(20_000),
  /** How many MCP tools (best ranked for the request) the model is offered per turn. */
  MCP_TOOLS_TOP_N: z.coerce.number().int().min(0).max(100).default(5),
  /** Timeout of one MCP request (connect, list, call). */
  MCP_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  /** The built-in operations tools; off leaves the agent with its MCP tools only. */
  BUILTIN_TOOLS: bool.default(true),
  /** YAML or JSON tool policy (seed 000: default_action, tool_rules, tenant_rules, user_rules). A bad file stops the start. */
  POLICY_FILE: z.string().optional(),
  /** How long a run may use a user's remembered tenant (users.tenant) for the policy; 0 reads it every run. */
  POLICY_TENANT_CACHE_S: z.coerce.number().int().min(0).default(10),
  /** Seals private signing keys at rest; unset: a 0600 file under DATA_DIR. Same value on every replica. */
  KEY_ENCRYPTION_KEY: z.string().min(32).optional(),
  /** Single sign-on (issue 39, README "Single sign-on"): the OpenID provider's issuer URL; unset: off. */
  OIDC_ISSUER: optionalUrl,
  OIDC_CLIENT_ID: z.string().optional(),
  /** Unset: a public client (PKCE alone). */
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_SCOPES: z.string().default('openid profile email'),
  OIDC_NAME: z.string().min(1).max(60).default('Single sign-on'),
  /** The claims a username is taken from, in order (the first that fits). */
  OIDC_USERNAME_CLAIM: z.string().default('preferred_username,email,sub'),
  OIDC_ROLE_CLAIM: z.string().default('groups'),
  /** `admin=ops-admins;operator=oncall,sre;viewer=*`: the highest role any group maps to. Unset: viewer. */
  OIDC_ROLE_MAP: z.string().optional(),
  OIDC_TENANT_CLAIM: z.string().optional(),
  /** http: issuers (a loopback host only; tests): never in production. */
  OIDC_ALLOW_HTTP: bool.default(false),
  /** false: single sign-on only (the login page and the Gradio /login refuse passwords). */
  PASSWORD_LOGIN: bool.default(true),
});

export interface Config {
  host: string;
  port: number;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  publicUrl: string | undefined;
  apiUrl: string | undefined;
  /** `titles`: MODEL_TITLES, the model's conversation titles (a real model only; engine/first-title.ts). */
  model: { baseUrl: string | undefined; apiKey: string; name: string; timeoutMs: number; maxRetries: number; idleTimeoutMs: number; titles: boolean };
  offlineModelDelayMs: number;
  approvalTimeoutS: number;
  /** APPROVAL_WEBHOOKS as given (v1/webhooks/settings.ts reads it). */
  approvalWebhooks: string | undefined;
  /** APPROVAL_WEBHOOK_RETRY_MS: the webhook retry schedule's first delay. */
  approvalWebhookRetryMs: number;
  /** APPROVAL_STREAMS_PER_USER: a user's open approval streams in this process (429 beyond). */
  approvalStreamsPerUser: number;
  /** AUDIT_CHECKPOINT_S: how often each tenant's chain head is signed (audit/checkpoints.ts). */
  auditCheckpointS: number;
  demoUsers: boolean;
  /** Why demo users are on or off, said once at start. */
  demoUsersReason: string;
  /** IPs/CIDRs of trusted proxies ([] trusts nobody). */
  trustProxy: string[];
  demoPassword: string | undefined;
  service: { clientId: string; clientSecret: string; secretGenerated: boolean };
  jwt: { issuer: string; userTokenTtlS: number; serviceTokenTtlS: number; sessionAccessTtlS: number; agentTokenTtlS: number };
  uploadMaxBytes: number;
  uploads: { requestMaxBytes: number; quotaBytes: number; retentionMs: number };
  /** /chat files given by URL (issue 24 item 2). */
  fileUrls: { fetch: boolean; maxBytes: number; timeoutMs: number; allowCidrs: string[] };
  chatPerUser: { concurrency: number; queueSize: number };
  /** MAX_QUEUED_INPUTS: messages a conversation may have waiting for their turn. */
  maxQueuedInputs: number;
  /** /chat events running at once per process. */
  chatConcurrency: number;
  /** CALL_STREAM_MAX_BYTES: one curl call-API event's cap (issue 30 finding 12). */
  callStreamMaxBytes: number;
  bodyMaxBytes: number;
  leaseTtlS: number;
  /** Several gateway replicas share the database (PostgreSQL session bus). */
  replicas: boolean;
  shutdownGraceMs: number;
  /** Event streams (issue 8): comment-line heartbeat period, and the drain frame's retry hint. */
  events: { heartbeatMs: number; drainRetryAfterMs: number };
  jobs: { heartbeatS: number; superviseS: number; pollS: number; concurrency: number; retryLimit: number };
  keyEncryptionKey: string | undefined;
  attachments: { maxBytesPerFile: number; maxBytesPerTurn: number; vision: boolean; pdf: { maxMb: number; workers: number; maxPages: number; timeoutMs: number } };
  tools: { file: string | undefined; resultMaxChars: number; mcpTopN: number; mcpTimeoutMs: number; builtin: boolean };
  /** The tool policy file (server/policy); unset: the built-in defaults alone. */
  policy: { file: string | undefined; tenantCacheS: number };
  /** Single sign-on with an OpenID provider (server/identity/oidc); issuer unset: off. */
  oidc: {
    issuer: string | undefined;
    clientId: string;
    clientSecret: string | undefined;
    scopes: string;
    name: string;
    usernameClaims: string[];
    roleClaim: string;
    roleMap: string | undefined;
    tenantClaim: string | undefined;
    allowHttp: boolean;
  };
  passwordLogin: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment into a Config; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const badProxy = e.TRUST_PROXY.split(',').map((v) => v.trim()).filter((v) => v && !isIpOrCidr(v));
  if (badProxy.length > 0) throw new ConfigError(`Invalid configuration:\n  TRUST_PROXY: not an IP or CIDR: ${badProxy.join(', ')}`);
  const fileUrlAllow = e.FILE_URL_FETCH_ALLOW_CIDRS.split(',').map((v) => v.trim()).filter(Boolean);
  const badAllow = fileUrlAllow.filter((v) => !isIpOrCidr(v));
  if (badAllow.length > 0) throw new ConfigError(`Invalid configuration:\n  FILE_URL_FETCH_ALLOW_CIDRS: not an IP or CIDR: ${badAllow.join(', ')}`);
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    apiUrl: e.API_URL?.replace(/\/+$/, ''),
    model: {
      baseUrl: e.OPENAI_BASE_URL?.replace(/\/+$/, ''),
      apiKey: e.OPENAI_API_KEY,
      name: e.OPENAI_MODEL,
      timeoutMs: e.OPENAI_TIMEOUT_MS,
      maxRetries: e.OPENAI_MAX_RETRIES,
      idleTimeoutMs: e.MODEL_IDLE_TIMEOUT_MS,
      titles: e.MODEL_TITLES,
    },
    offlineModelDelayMs: e.OFFLINE_MODEL_DELAY_MS,
    approvalTimeoutS: e.APPROVAL_TIMEOUT_S,
    approvalWebhooks: e.APPROVAL_WEBHOOKS,
    approvalWebhookRetryMs: e.APPROVAL_WEBHOOK_RETRY_MS,
    approvalStreamsPerUser: e.APPROVAL_STREAMS_PER_USER,
    auditCheckpointS: e.AUDIT_CHECKPOINT_S,
    demoUsers: e.DEMO_USERS ?? e.DATABASE_URL === undefined,
    demoUsersReason: demoUsersReason(e.DEMO_USERS, e.DATABASE_URL !== undefined),
    trustProxy: e.TRUST_PROXY.split(',').map((v) => v.trim()).filter(Boolean),
    demoPassword: e.DEMO_PASSWORD,
    service: {
      clientId: e.SERVICE_CLIENT_ID,
      // One process: a secret generated at start is shared in memory by the gateway and the api.
      clientSecret: e.SERVICE_CLIENT_SECRET ?? randomBytes(24).toString('base64url'),
      secretGenerated: e.SERVICE_CLIENT_SECRET === undefined,
    },
    jwt: { issuer: e.JWT_ISSUER, userTokenTtlS: e.USER_TOKEN_TTL_S, serviceTokenTtlS: e.SERVICE_TOKEN_TTL_S, sessionAccessTtlS: e.SESSION_ACCESS_TTL_S, agentTokenTtlS: e.AGENT_TOKEN_TTL_S },
    uploadMaxBytes: e.UPLOAD_MAX_BYTES,
    uploads: {
      requestMaxBytes: e.UPLOAD_REQUEST_MAX_BYTES ?? 4 * e.UPLOAD_MAX_BYTES,
      quotaBytes: e.UPLOAD_QUOTA_BYTES,
      retentionMs: e.UPLOAD_RETENTION_DAYS * 86_400_000,
    },
    fileUrls: { fetch: e.FILE_URL_FETCH, maxBytes: e.FILE_URL_MAX_BYTES ?? e.UPLOAD_MAX_BYTES, timeoutMs: e.FILE_URL_TIMEOUT_MS, allowCidrs: fileUrlAllow },
    chatPerUser: { concurrency: e.CHAT_USER_CONCURRENCY, queueSize: e.CHAT_USER_QUEUE },
    maxQueuedInputs: e.MAX_QUEUED_INPUTS,
    chatConcurrency: e.CHAT_CONCURRENCY,
    callStreamMaxBytes: e.CALL_STREAM_MAX_BYTES,
    bodyMaxBytes: e.BODY_MAX_BYTES,
    leaseTtlS: e.LEASE_TTL_S,
    replicas: e.REPLICAS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    events: { heartbeatMs: e.EVENTS_HEARTBEAT_MS, drainRetryAfterMs: e.EVENTS_DRAIN_RETRY_AFTER_MS },
    jobs: { heartbeatS: e.JOBS_HEARTBEAT_S, superviseS: e.JOBS_SUPERVISE_S, pollS: e.JOBS_POLL_S, concurrency: e.JOBS_CONCURRENCY, retryLimit: e.JOBS_RETRY_LIMIT },
    keyEncryptionKey: e.KEY_ENCRYPTION_KEY,
    attachments: {
      maxBytesPerFile: e.ATTACHMENT_MAX_BYTES_PER_FILE,
      maxBytesPerTurn: e.ATTACHMENT_MAX_BYTES_PER_TURN,
      vision: e.OPENAI_VISION,
      pdf: { maxMb: e.ATTACHMENT_PDF_MAX_MB, workers: e.ATTACHMENT_PDF_WORKERS, maxPages: e.ATTACHMENT_PDF_MAX_PAGES, timeoutMs: e.ATTACHMENT_PDF_TIMEOUT_MS },
    },
    tools: {
      file: e.TOOLS_FILE ? resolve(e.TOOLS_FILE) : undefined,
      resultMaxChars: e.TOOL_RESULT_MAX_CHARS,
      mcpTopN: e.MCP_TOOLS_TOP_N,
      mcpTimeoutMs: e.MCP_TIMEOUT_MS,
      builtin: e.BUILTIN_TOOLS,
    },
    policy: { file: e.POLICY_FILE ? resolve(e.POLICY_FILE) : undefined, tenantCacheS: e.POLICY_TENANT_CACHE_S },
    oidc: {
      issuer: e.OIDC_ISSUER,
      clientId: e.OIDC_CLIENT_ID ?? 'airlock',
      clientSecret: e.OIDC_CLIENT_SECRET || undefined,
      scopes: e.OIDC_SCOPES,
      name: e.OIDC_NAME,
      usernameClaims: e.OIDC_USERNAME_CLAIM.split(',').map((c) => c.trim()).filter(Boolean),
      roleClaim: e.OIDC_ROLE_CLAIM,
      roleMap: e.OIDC_ROLE_MAP || undefined,
      tenantClaim: e.OIDC_TENANT_CLAIM || undefined,
      allowHttp: e.OIDC_ALLOW_HTTP,
    },
    passwordLogin: e.PASSWORD_LOGIN,
  };
}

/** `10.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`. */
function isIpOrCidr(value: string): boolean {
  const [ip, bits, extra] = value.split('/');
  const family = isIP(ip);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function demoUsersReason(asked: boolean | undefined, realDatabase: boolean): string {
  if (asked === true) return 'Demo users are on (DEMO_USERS=true).';
  if (asked === false) return 'Demo users are off (DEMO_USERS=false).';
  return realDatabase
    ? 'Demo users are off: DATABASE_URL is set (DEMO_USERS=true turns them on).'
    : 'Demo users are on for the embedded database (DEMO_USERS=false turns them off).';
}
