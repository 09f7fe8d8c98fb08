/**
 * The gateway role: `/chat` on the Gradio server at `/api/agent/gradio`, backed by the LangGraph
 * agent (checkpoints in PostgreSQL) and, when no model endpoint is configured, the offline model.
 * The only place that joins gradio/ and agent/.
 * @module
 */
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { createAgentRuntime } from '../agent/index.ts';
import { createUserTokenVerifier, keyCipherFor } from '../auth/index.ts';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';
import { gradioPlugin } from '../gradio/index.ts';
import { chatEndpoint } from './chat-endpoint.ts';
import { createChatHandler } from './chat-handler.ts';
import { createCheckpointer } from './checkpointer.ts';
import { createChatAuthenticator } from './identity.ts';
import { resumeOwedApprovals } from './recovery.ts';
import { startOfflineModelServer } from './offline-model-server.ts';

export interface GatewayOptions {
  config: Config;
  pool: Pool;
  databaseUrl: string;
  apiUrl: () => string;
}

export const GRADIO_MOUNT = '/api/agent/gradio';

export const gatewayRoutes: FastifyPluginAsync<GatewayOptions> = async (app, { config, pool, databaseUrl, apiUrl }) => {
  const offline = config.model.baseUrl === undefined;
  const offlineModel = offline ? await startOfflineModelServer({ delayMs: config.offlineModelDelayMs, modelName: config.model.name }) : undefined;
  const checkpointer = await createCheckpointer(pool, databaseUrl);
  app.addHook('onClose', async () => {
    await offlineModel?.close();
    await checkpointer.end();
  });

  const agent = await createAgentRuntime({
    model: { ...config.model, baseUrl: offlineModel?.baseUrl ?? config.model.baseUrl! },
    apiUrl,
    serviceCredentials: { clientId: config.service.clientId, clientSecret: config.service.clientSecret },
    checkpointer,
  });

  app.get('/api/agent/info', async () => ({
    model: config.model.name,
    offline_model: offline,
    approval_timeout_s: config.approvalTimeoutS,
  }));

  const uploadDir = join(config.dataDir, 'uploads');
  const handler = createChatHandler({
    pool,
    uploadDir,
    agent,
    approvalTimeoutS: config.approvalTimeoutS,
    leaseTtlS: config.leaseTtlS,
    log: app.log,
  });
  await app.register(gradioPlugin, {
    prefix: GRADIO_MOUNT,
    endpoints: [chatEndpoint(handler)],
    authenticate: createChatAuthenticator(createUserTokenVerifier({ pool, config })),
    dataDir: uploadDir,
    uploadMaxBytes: config.uploadMaxBytes,
    bodyLimit: config.bodyMaxBytes,
    publicUrl: config.publicUrl,
    title: 'Airlock',
    drainMs: config.shutdownGraceMs,
  });

  // After listen: a recovered resume calls the tools through the api, which may be this process.
  const recovery = new AbortController();
  app.addHook('preClose', async () => recovery.abort());
  app.addHook('onListen', async () => {
    resumeOwedApprovals({
      pool, agent, handleChat: handler, issuer: config.jwt.issuer, leaseTtlS: config.leaseTtlS, log: app.log, signal: recovery.signal,
      cipher: keyCipherFor(config), // it signs as the user who decided: the api's sealed key must open here
    }).catch((error) =>
      app.log.error({ err: error }, 'resuming decided approvals failed'),
    );
  });
};
