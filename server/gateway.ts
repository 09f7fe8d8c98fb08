/**
 * The gateway role: `/chat` on the Gradio server at `/api/agent/gradio`, backed by the LangGraph
 * agent (checkpoints in PostgreSQL) and, when no model endpoint is configured, the offline model.
 * The only place that joins gradio/ and agent/.
 *
 * Phases, in this order (hooks run in the order they are added, so the order is behaviour):
 *   1. agent       the policy file, the model, the checkpointer, the tool sources, the runtime
 *   2. control     /api/agent/v1 policy and ops routes, /api/agent/info
 *   3. engine      uploads, the ledger, the headless API, liveness, the engine and its recovery sweep
 *   4. transports  the v1 routes, ledger events, AG-UI and Gradio /chat over the one engine
 *   5. drain       the engine's drain, after every transport's
 *   6. owed        resumes of decided approvals, after listen
 * @module
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { createAgentRuntime, createTitleModel, defaultActions, toolPrefixes, type AgentRuntime, type TitleModel, type ToolSource } from './agent/index.ts';
import { createUserTokenVerifier, keyCipherFor } from './auth/index.ts';
import type { Config } from './config.ts';
import type { Pool } from './db/index.ts';
import { isFileReferenced } from './db/messages.ts';
import { agUiRoutes } from './ag-ui/index.ts';
import { openAiRoutes, OPENAI_PREFIX } from './openai/index.ts';
import { createHeadless, loadWebhooks, V1_PREFIX } from './v1/index.ts';
import { createEngine, PgLedger, ProcessLiveness, type Engine, type EngineOptions } from './engine/index.ts';
import { AirlockError } from './errors.ts';
import { eventRoutes } from './events/index.ts';
import { insertAudit } from './db/audit.ts';
import { useMatchingGrant } from './db/grants.ts';
import { cachedTenantLookup, loadToolPolicy, unknownRuleTools, type PolicyFile } from './policy/index.ts';
import { createServiceTokenVerifier } from './auth/index.ts';
import { opsRoutes } from './v1/ops-routes.ts';
import { policyRoutes } from './v1/policy-routes.ts';
import { gradioPlugin, orphanCompletion, PgSessionBus, PgUploadStore, UploadStore, type UploadStorage } from './gradio/index.ts';
import { createChatAttachments } from './engine/attachments.ts';
import { chatEndpoint } from './chat/chat-endpoint.ts';
import { guardChatErrors } from './chat/chat-error.ts';
import { forGradioClients } from './chat/gradio-view.ts';
import { createChatHandler } from './chat/chat-handler.ts';
import { sessionConversations } from './chat/session-continuity.ts';
import { fileUrlResolver } from './chat/file-urls.ts';
import { createCheckpointer } from './agent/checkpointer.ts';
import { gradioLogin } from './api/auth/gradio-login.ts';
import { chatOwnerKey, createChatAuthenticator } from './chat/identity.ts';
import { startToolSources } from './agent/tool-sources.ts';
import { PendingWrites } from './engine/pending-writes.ts';
import { resumeOwedApprovals } from './approvals/recovery.ts';
import { startOfflineModelServer } from './agent/offline-model/server.ts';

export interface GatewayOptions {
  config: Config;
  pool: Pool;
  databaseUrl: string;
  apiUrl: () => string;
  /** Loaded already (main.ts); else read from POLICY_FILE here. */
  policy?: PolicyFile;
  /** Told of each model title asked, with its outcome (EngineOptions.onModelTitle; tests await it). */
  onModelTitle?: EngineOptions['onModelTitle'];
}

export const GRADIO_MOUNT = '/api/agent/gradio';

export const gatewayRoutes: FastifyPluginAsync<GatewayOptions> = async (app, options) => {
  const started = await startAgent(app, options);
  await controlRoutes(app, options, started);
  const core = await startEngine(app, options, started);
  await mountTransports(app, options, core);
  // After every transport's drain (the preClose of a plugin registered after them runs last), and
  // before the server waits on its connections: runs still going (a headless completion, a
  // background run) may end by themselves within what is left of the grace; then the rest are
  // stopped and commit their end, so the streams following them end too instead of holding the stop.
  await app.register(async (last) => last.addHook('preClose', async () => core.engine.drain(core.drainDeadline())));
  resumeOwedAfterListen(app, options, started.agent, core.engine);
};

type Verifiers = { verifyUser: ReturnType<typeof createUserTokenVerifier>; verifyService: ReturnType<typeof createServiceTokenVerifier> };
type ModelInfo = { name: string; baseUrl: string; apiKey: string; offline: boolean };
type Started = { agent: AgentRuntime; sources: ToolSource[]; policy: PolicyFile; pendingWrites: PendingWrites; verifiers: Verifiers; model: ModelInfo; titleModel?: TitleModel };

/** Phase 1: the policy, the model, the checkpointer, the tool sources and the agent runtime. */
async function startAgent(app: FastifyInstance, { config, pool, databaseUrl, apiUrl, ...options }: GatewayOptions): Promise<Started> {
  // First, before anything starts: a bad policy file stops the start (PolicyFileError names the line).
  const policy = options.policy ?? (await loadToolPolicy(config.policy.file));
  const offline = config.model.baseUrl === undefined;
  const offlineModel = offline ? await startOfflineModelServer({ delayMs: config.offlineModelDelayMs, modelName: config.model.name }) : undefined;
  const checkpointer = await createCheckpointer(pool, databaseUrl);
  const pendingWrites = new PendingWrites({ log: app.log });
  app.addHook('onClose', async () => {
    await pendingWrites.close();
    await offlineModel?.close();
    await checkpointer.end();
  });

  const verifiers: Verifiers = { verifyUser: createUserTokenVerifier({ pool, config }), verifyService: createServiceTokenVerifier({ pool, config }) };
  const sources = await startToolSources(app, { config, pool, verifyUser: verifiers.verifyUser });
  const agent = await createAgentRuntime({
    policy,
    tenantOf: cachedTenantLookup(pool, config.policy.tenantCacheS),
    audit: (entry) => insertAudit(pool, entry),
    grants: (call) => useMatchingGrant(pool, { ...call, now: new Date() }),
    sources,
    offerTopN: config.tools.mcpTopN,
    model: { ...config.model, baseUrl: offlineModel?.baseUrl ?? config.model.baseUrl! },
    apiUrl,
    serviceCredentials: { clientId: config.service.clientId, clientSecret: config.service.clientSecret },
    checkpointer,
  });
  const model: ModelInfo = { name: config.model.name, baseUrl: offlineModel?.baseUrl ?? config.model.baseUrl!, apiKey: config.model.apiKey, offline };
  // A real model titles conversations after their first answer (MODEL_TITLES); the offline model's stay the rule's.
  const titleModel = !offline && config.model.titles ? createTitleModel({ ...config.model, baseUrl: model.baseUrl }) : undefined;
  return { agent, sources, policy, pendingWrites, verifiers, model, titleModel };
}

/** Phase 2: the control-plane routes of /api/agent/v1 (issue 11 part B; the runs API registers its own). */
async function controlRoutes(app: FastifyInstance, { config, pool }: GatewayOptions, started: Started) {
  const { policy, sources, model, verifiers, titleModel } = started;
  const builtinDefaults = () => defaultActions(sources);
  // A misspelt rule denies nothing: say so at start (the tools of sources not up yet count as known by prefix).
  const unknownTools = unknownRuleTools(policy.rules, new Set(builtinDefaults().keys()), toolPrefixes(sources));
  if (unknownTools.length > 0) app.log.warn({ tools: unknownTools, file: policy.source }, 'the policy file names tools the agent does not have (a typo?)');
  await app.register(policyRoutes, { prefix: '/api/agent/v1', pool, policy, verifiers, builtinDefaults, toolPrefixes: () => toolPrefixes(sources) });
  await app.register(opsRoutes, { prefix: '/api/agent/v1', pool, verifiers, model, toolSources: sources });
  // `model_titles`: the sidebar reads a first answer's title back again when the model's may follow.
  app.get('/api/agent/info', async () => ({ model: config.model.name, offline_model: model.offline, model_titles: titleModel !== undefined, approval_timeout_s: config.approvalTimeoutS }));
}

/** Phase 3: uploads, the ledger, the headless API, this process's liveness, the engine and its recovery. */
async function startEngine(app: FastifyInstance, { config, pool, databaseUrl, onModelTitle }: GatewayOptions, { agent, policy, pendingWrites, sources, titleModel }: Started) {
  const uploadDir = join(config.dataDir, 'uploads');
  // Several replicas: uploads live in PostgreSQL (each replica keeps a local copy to serve from).
  const uploadLimits = { requestMaxBytes: config.uploads.requestMaxBytes, quotaBytes: config.uploads.quotaBytes };
  const uploads: UploadStorage = config.replicas ? new PgUploadStore(pool, uploadDir, uploadLimits) : new UploadStore(uploadDir, uploadLimits);
  const verifyUser = createUserTokenVerifier({ pool, config });
  const ledger = new PgLedger(pool);
  // The headless API (/api/agent/v1, issue 11): a second transport over the same engine.
  const headless = createHeadless({ config, pool, databaseUrl, ledger, log: app.log, serviceRules: policy.rules?.service_rules, webhooks: await loadWebhooks(config.approvalWebhooks),
    decide: (subject, tool, args) => policy.decide(subject, tool, defaultActions(sources).get(tool), args) });
  // This process's pulse (engine/liveness.ts): its runs and leases carry its owner, so a killed
  // process frees its conversations at once. Losing the pulse ends this process's runs first.
  const liveness = await ProcessLiveness.start({ pool, heartbeatMs: (config.leaseTtlS * 1000) / 3, log: app.log });
  const engine = createEngine({
    ...headless.engineHooks,
    owner: liveness.owner,
    pool,
    ledger,
    agent,
    // Attached files must be uploads this gateway stored for this user.
    files: { resolve: async (path, userId) => (await uploads.lookup(path, userId))?.path ?? null },
    prepareAttachments: createChatAttachments({ db: pool, settings: config.attachments }),
    approvalTimeoutS: config.approvalTimeoutS,
    leaseTtlS: config.leaseTtlS,
    log: app.log,
    pendingWrites,
    titleModel,
    onModelTitle,
  });
  liveness.onLost(() => engine.abandon(new AirlockError('SERVICE_UNAVAILABLE', 'The server lost its database connection while answering; please retry.')));
  const runRecovery = engine.startRecovery();
  await runRecovery.ready;
  await headless.start(engine, agent);
  let drainDeadline = 0;
  app.addHook('preClose', async () => {
    drainDeadline = Date.now() + config.shutdownGraceMs; // one grace for every transport's drain
    runRecovery.stop();
    engine.closing(); // the Gradio drain's stop then cancels runs as `shutdown`
    await headless.closing();
  });
  app.addHook('onClose', async () => {
    await headless.stop();
    await liveness.stop();
    await ledger.close();
  });
  return { engine, ledger, headless, uploads, uploadDir, verifyUser, drainDeadline: () => drainDeadline };
}

type Core = Awaited<ReturnType<typeof startEngine>>;

/** Phase 4: every transport over the one engine. */
async function mountTransports(app: FastifyInstance, { config, pool }: GatewayOptions, { engine, ledger, headless, uploads, uploadDir, verifyUser }: Core) {
  // Gradio session continuity (issue 24 item 2): a session's calls without conversation_id share one.
  const handler = createChatHandler({ engine, sessions: sessionConversations(pool), fileUrls: fileUrlResolver(config.fileUrls, uploads) });
  // Several replicas: the Gradio queue's sessions live in PostgreSQL, so join, stream, cancel and
  // heartbeat may each land on a different replica. One process keeps the in-memory bus (latency).
  // A dead replica's events end with a retryable error the UI names (SERVICE_UNAVAILABLE).
  const orphanError = { title: 'SERVICE_UNAVAILABLE', message: 'The server running this request stopped; please retry.' };
  const bus = config.replicas ? await PgSessionBus.start({ pool, log: app.log, orphanMessage: (eventId) => orphanCompletion(eventId, orphanError) }) : undefined;
  if (bus) app.addHook('onClose', async () => bus.close());
  await app.register(headless.routes, { prefix: V1_PREFIX });
  await app.register(eventRoutes, {
    pool,
    ledger,
    engine,
    verifyUser,
    heartbeatMs: config.events.heartbeatMs,
    drainRetryAfterMs: config.events.drainRetryAfterMs,
  });
  // AG-UI (issue 13): POST /api/agent/ag-ui, the same engine, another protocol.
  await app.register(agUiRoutes, { pool, ledger, engine, verifyUser, heartbeatMs: config.events.heartbeatMs, admission: headless.admission });
  // The OpenAI-compatible face (issue 43 item 4): v1's runs and callers, OpenAI's wire format.
  await app.register(openAiRoutes, { prefix: OPENAI_PREFIX, ...headless.face, heartbeatMs: config.events.heartbeatMs });
  await app.register(gradioPlugin, {
    prefix: GRADIO_MOUNT,
    // Client.connect(url, {auth: [user, pass]}) (JS and Python): a cookie holding a user JWT.
    ...gradioLogin({ pool, config, verify: verifyUser }),
    endpoints: [
      { ...chatEndpoint(guardChatErrors(forGradioClients(handler), app.log)), concurrencyLimit: config.chatConcurrency, userConcurrencyLimit: config.chatPerUser.concurrency, userQueueSize: config.chatPerUser.queueSize },
    ],
    authenticate: createChatAuthenticator(verifyUser),
    // Sessions, events and uploads belong to the user who made them (issue 9 items 4 and 5).
    identityKey: chatOwnerKey,
    dataDir: uploadDir,
    uploadStore: uploads,
    uploadMaxBytes: config.uploadMaxBytes,
    uploadRequestMaxBytes: config.uploads.requestMaxBytes,
    uploadQuotaBytes: config.uploads.quotaBytes,
    uploadRetentionMs: config.uploads.retentionMs || undefined,
    // History chips stay downloadable: a file a stored message names is never swept.
    isFileReferenced: (path) => isFileReferenced(pool, path),
    bodyLimit: config.bodyMaxBytes,
    callStreamMaxBytes: config.callStreamMaxBytes,
    publicUrl: config.publicUrl,
    title: 'Airlock',
    // /chat as the MCP tool `chat` at /api/agent/gradio/gradio_api/mcp/ (issue 13).
    mcpServer: true,
    // As upstream for a ChatInterface (its history is State): true, so JS clients open the
    // heartbeat too (Python always does). One per client session: a user's tabs, scripts and
    // notebooks together may hold 32 (issue 24 item 2; more are ended after one period).
    connectHeartbeat: true,
    heartbeatsPerIdentity: 32,
    drainMs: config.shutdownGraceMs,
    bus,
  });
}

/** Phase 6: resumes owed by decided approvals, after listen (a recovered resume calls the tools through the api, which may be this process). */
function resumeOwedAfterListen(app: FastifyInstance, { config, pool }: GatewayOptions, agent: AgentRuntime, engine: Engine): void {
  const recovery = new AbortController();
  app.addHook('preClose', async () => recovery.abort());
  let resuming: Promise<unknown> | null = null;
  const resumeOwed = () => {
    if (resuming || recovery.signal.aborted) return; // one pass at a time
    resuming = resumeOwedApprovals({
      pool, agent, submit: (input, user) => engine.submit(input, user), issuer: config.jwt.issuer, userTokenTtlS: config.jwt.userTokenTtlS, leaseTtlS: config.leaseTtlS, log: app.log, signal: recovery.signal,
      cipher: keyCipherFor(config), // it signs as the user who decided: the api's sealed key must open here
    })
      .catch((error) => app.log.error({ err: error }, 'resuming decided approvals failed'))
      .finally(() => (resuming = null));
  };
  app.addHook('onListen', async () => {
    resumeOwed();
    // Replicas: a replica SIGKILLed between a confirm and its tool leaves a decision owed; the
    // others pick it up (the conversation lease makes the resume run once, after the dead
    // replica's lease lapsed), instead of waiting for some replica to restart.
    if (!config.replicas) return;
    const timer = setInterval(resumeOwed, 2 * config.leaseTtlS * 1000);
    timer.unref();
    recovery.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  });
}
