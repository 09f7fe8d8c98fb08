/**
 * Confirmed means done. A decision is committed (confirm_resolved) before the graph resumes, so a
 * crash in between leaves an approved action that never ran. At gateway start every such thread is
 * resumed once, as the user who decided: the resume goes through the normal /chat turn (lease,
 * transcript, approvals) as a confirm with nothing left pending, which resumes exactly what is owed.
 * Tools take the tool call id as their idempotency key, so a tool that had already run before the
 * crash is not run twice.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { AgentRuntime } from '../agent/index.ts';
import { getUserById, keyStoreFor, signUserToken } from '../auth/index.ts';
import type { Pool } from '../db/index.ts';
import type { EndpointRequest } from '../gradio/index.ts';
import { owedResume, threadsOwedResume } from './approvals.ts';
import type { ChatIdentity } from './identity.ts';

/** Lifetime of the token a recovered resume acts with: long enough for one turn's tools. */
const RECOVERY_TOKEN_TTL_S = 300;

export interface RecoveryDeps {
  pool: Pool;
  agent: AgentRuntime;
  handleChat: (request: EndpointRequest<ChatIdentity>) => AsyncIterable<unknown>;
  issuer: string;
  log: FastifyBaseLogger;
  signal: AbortSignal;
}

/** Resumes every thread owed a resume; returns how many turns it ran. */
export async function resumeOwedApprovals(deps: RecoveryDeps): Promise<number> {
  let resumed = 0;
  for (const owed of await threadsOwedResume(deps.pool)) {
    if (deps.signal.aborted) break;
    // Only a fully decided batch: a confirm turn would otherwise decide a still-pending approval.
    if (!(await owedResume(deps.pool, deps.agent, owed.threadId, () => new Date()))) continue;
    const user = await getUserById(deps.pool, owed.userId);
    if (!user) {
      deps.log.warn({ conversationId: owed.conversationId }, 'a decided approval cannot be resumed: its user no longer exists');
      continue;
    }
    const { token } = await signUserToken(keyStoreFor(deps.pool), { issuer: deps.issuer, ttlS: RECOVERY_TOKEN_TTL_S, user });
    const eventId = `recovery-${randomUUID()}`;
    const request: EndpointRequest<ChatIdentity> = {
      data: ['confirm', owed.conversationId, 'confirm', null, null, null, null],
      eventData: null,
      identity: { userId: user.id, username: user.username, role: user.role, token },
      headers: {},
      signal: deps.signal,
      sessionHash: 'recovery',
      eventId,
    };
    for await (const _ of deps.handleChat(request)) {
      // The turn records itself in the transcript; nobody is listening to this stream.
    }
    deps.log.info({ conversationId: owed.conversationId, eventId }, 'resumed a decided approval left by a previous process');
    resumed++;
  }
  return resumed;
}
