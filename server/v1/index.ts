/**
 * The headless agent API at `/api/agent/v1` (issue 11, seed 000), served by the gateway role: a
 * thin transport over the engine, like /chat. Every route takes the v1 identity (identity.ts) and
 * answers errors as `{"type":"error","error":{code,message}}` (errors.ts).
 *
 *   const headless = createHeadless({...});            // before the engine: its hooks
 *   createEngine({ ...headless.engineHooks, ... });
 *   await headless.start(engine);                       // the job queue's workers
 *   app.register(headless.routes, { prefix: V1_PREFIX });
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { createServiceTokenVerifier, createUserTokenVerifier, keyCipherFor } from '../auth/index.ts';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';
import type { Engine, Ledger } from '../engine/index.ts';
import type { AgentRuntime } from '../agent/index.ts';
import { AirlockError } from '../errors.ts';
import { createUserAdmission } from '../http/index.ts';
import { createApprovalService, type ApprovalServiceDeps } from '../approvals/service.ts';
import type { V1Deps } from './deps.ts';
import { approvalRoutes } from './approvals-routes.ts';
import { grantRoutes } from './grants-routes.ts';
import { passkeyRoutes } from './passkeys-routes.ts';
import { approvalStreamRoutes } from './approvals-stream.ts';
import { approvalLinkDecisionRoutes, approvalLinkPreviewRoutes } from './approval-links.ts';
import { startWebhookDelivery } from './webhooks/delivery.ts';
import type { WebhookEndpoint } from './webhooks/settings.ts';
import { completionRoutes } from './completions.ts';
import { registerV1Errors } from './errors.ts';
import { v1Authenticate, v1ResolveUserKey } from './identity.ts';
import { startJobQueue, type JobQueue } from './job-queue.ts';
import { createRunService, type RunService } from './run-service.ts';
import { runRoutes } from './runs-routes.ts';
import { traceRoutes } from './traces-routes.ts';
import { createUserTokenMinter } from './user-token.ts';

export const V1_PREFIX = '/api/agent/v1';

export type { V1Deps } from './deps.ts';

/** Route modules whose every route needs a caller (identity.ts), each a plugin of its own. */
const ROUTES: FastifyPluginAsync<V1Deps>[] = [completionRoutes, runRoutes, traceRoutes, approvalRoutes, approvalLinkDecisionRoutes, grantRoutes, passkeyRoutes];
/** Route modules that authenticate on their own terms, or not at all (a public health check; a link's preview). */
const OPEN_ROUTES: FastifyPluginAsync<V1Deps>[] = [approvalLinkPreviewRoutes];

export interface HeadlessOptions {
  config: Config;
  pool: Pool;
  databaseUrl: string;
  ledger: Ledger;
  log: ApprovalServiceDeps['log'] & { error(obj: object, msg?: string): void };
  /** The policy file's service_rules (issue 24): which services may name the user by user_key alone. */
  serviceRules?: Record<string, { user_key_only: boolean }>;
  /** APPROVAL_WEBHOOKS, loaded (issue 26): none, no outbox and no delivery. */
  webhooks?: WebhookEndpoint[];
  /** The tool policy's decision for a call, with the tools' built-in defaults (POST /grants). */
  decide?: V1Deps['decide'];
}

export function createHeadless(options: HeadlessOptions) {
  const { config, pool, log } = options;
  let engine: Engine | undefined;
  let jobs: JobQueue | undefined;
  let stopWebhooks: (() => Promise<void>) | undefined;
  const getEngine = () => {
    if (!engine) throw new AirlockError('SERVICE_UNAVAILABLE', 'The agent is starting.');
    return engine;
  };
  const getJobs = () => {
    if (!jobs) throw new AirlockError('SERVICE_UNAVAILABLE', 'The job queue is starting.');
    return jobs;
  };
  const mintToken = createUserTokenMinter({ pool, cipher: keyCipherFor(config), issuer: config.jwt.issuer, userTokenTtlS: config.jwt.userTokenTtlS, agentTokenTtlS: config.jwt.agentTokenTtlS });
  // The per-user cap of streamed runs in this process, shared with AG-UI (issue 30 item 4).
  const admission = createUserAdmission(config.chatPerUser.concurrency);
  const runs = createRunService({ pool, engine: getEngine, ledger: options.ledger, mintToken, leaseTtlS: config.leaseTtlS, admission, userQueue: config.chatPerUser.queueSize, log });
  let reviewEdit: AgentRuntime['reviewEdit'] | undefined;
  const approvals = createApprovalService({
    pool, submit: () => (input, user) => getEngine().submit(input, user), mintToken, log,
    reviewEdit: () => reviewEdit ?? (() => Promise.reject(new AirlockError('SERVICE_UNAVAILABLE', 'The agent is starting.'))),
  });
  const deps: V1Deps = { pool, runs, approvals, jobs: getJobs, publicUrl: config.publicUrl, ...(options.decide ? { decide: options.decide } : {}) };
  const identity = {
    pool,
    verifyUser: createUserTokenVerifier({ pool, config }),
    verifyService: createServiceTokenVerifier({ pool, config }),
    userKeyOnly: (clientId: string) => options.serviceRules?.[clientId]?.user_key_only === true,
    mintToken,
  };

  const routes: FastifyPluginAsync = async (app) => {
    registerV1Errors(app);
    for (const plugin of OPEN_ROUTES) await app.register(plugin, deps);
    await app.register(async (authed) => {
      authed.addHook('onRequest', v1Authenticate(identity));
      authed.addHook('preHandler', v1ResolveUserKey(identity));
      for (const plugin of ROUTES) await authed.register(plugin, deps);
      await authed.register(approvalStreamRoutes, { ...deps, ledger: options.ledger, streamsPerUser: config.approvalStreamsPerUser });
    });
  };

  return {
    /** The per-user admission of streamed runs, for the other streamed transports (AG-UI). */
    admission,
    /** EngineOptions: link turns to runs (with the stored policy) and schedule approval expiry. */
    engineHooks: {
      prepareTurn: runs.prepareTurn,
      // Queued input (issue 24): a queued message's turn acts with a token minted when it starts.
      queue: config.maxQueuedInputs > 0 ? { max: config.maxQueuedInputs, mintUserToken: mintToken } : undefined,
      approvalOutbox: (options.webhooks?.length ?? 0) > 0,
      onApprovalsOpened: (opened: Array<{ approvalId: string; expiresAt: Date }>) => {
        for (const a of opened) jobs?.scheduleExpiry(a.approvalId, a.expiresAt).catch((err) => log.error({ err, approvalId: a.approvalId }, 'could not schedule an approval expiry'));
      },
    },
    routes,
    /** What another face of the same runs needs (server/openai): v1's deps and its identity (the same callers as v1). */
    face: { deps, identity },
    /** Starts the job queue's workers (background runs, approval expiry) once the engine exists. */
    /** `agent`: checks an approver's edit before it is submitted (issue 27). */
    async start(e: Engine, agent?: Pick<AgentRuntime, 'reviewEdit'>): Promise<void> {
      if (agent) reviewEdit = (input) => agent.reviewEdit(input);
      engine = e;
      if (options.webhooks?.length) stopWebhooks = startWebhookDelivery({ pool, endpoints: options.webhooks, publicUrl: config.publicUrl, retryMs: config.approvalWebhookRetryMs, log });
      jobs = await startJobQueue({
        pool,
        databaseUrl: options.databaseUrl,
        settings: config.jobs,
        handlers: { run: runs.executeBackground, expire: (id) => approvals.expireDue(id, { strict: id !== null }).then(() => {}) },
        log,
      });
    },
    /** Closing: no more background runs start here (JobQueue.stopTakingRuns). */
    async closing(): Promise<void> {
      await jobs?.stopTakingRuns();
    },
    async stop(): Promise<void> {
      await stopWebhooks?.();
      await jobs?.stop();
    },
  };
}

export { anyEndpointNames, loadWebhooks, WebhookSettingsError } from './webhooks/settings.ts';
