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
import { getUserById, keyStoreFor, signUserToken, type KeyCipher } from '../auth/index.ts';
import type { Pool } from '../db/index.ts';
import type { EndpointRequest } from '../gradio/index.ts';
import { owedResume, threadsOwedResume } from './steps.ts';
import type { ChatIdentity } from '../chat/identity.ts';

/** Lifetime of the token a recovered resume acts with: long enough for one turn's tools. */
const RECOVERY_TOKEN_TTL_S = 300;

export interface RecoveryDeps {
  pool: Pool;
  agent: AgentRuntime;
  handleChat: (request: EndpointRequest<ChatIdentity>) => AsyncIterable<Array<{ metadata: { type: string; code?: string } }>>;
  issuer: string;
  /** Opens the sealed signing key (KEY_ENCRYPTION_KEY, shared with the api role). */
  cipher: KeyCipher;
  /** USER_TOKEN_TTL_S: verifiers refuse tokens living longer, so the recovery token never does. */
  userTokenTtlS?: number;
  /** The lease lifetime: a lease held by the dead process frees itself within it. */
  leaseTtlS: number;
  log: FastifyBaseLogger;
  signal: AbortSignal;
}

/** Resumes every thread owed a resume; returns how many turns it ran. */
export async function resumeOwedApprovals(deps: RecoveryDeps): Promise<number> {
  const results = await Promise.all((await threadsOwedResume(deps.pool)).map((owed) => resumeThread(deps, owed)));
  return results.filter(Boolean).length;
}

async function resumeThread(deps: RecoveryDeps, owed: { threadId: string; conversationId: string; userId: string }): Promise<boolean> {
  // The dead process may still hold the conversation's lease: retry until it expires (at most a TTL).
  const deadline = Date.now() + (deps.leaseTtlS + 1) * 1000;
  while (!deps.signal.aborted) {
    // Only a fully decided batch: a confirm turn would otherwise decide a still-pending approval.
    if (!(await owedResume(deps.pool, deps.agent, owed.threadId, () => new Date()))) return false;
    const user = await getUserById(deps.pool, owed.userId);
    if (!user) {
      deps.log.warn({ conversationId: owed.conversationId }, 'a decided approval cannot be resumed: its user no longer exists');
      return false;
    }
    const { token } = await signUserToken(keyStoreFor(deps.pool, deps.cipher), { issuer: deps.issuer, ttlS: Math.min(RECOVERY_TOKEN_TTL_S, deps.userTokenTtlS ?? RECOVERY_TOKEN_TTL_S), user });
    const eventId = `recovery-${randomUUID()}`;
    const request: EndpointRequest<ChatIdentity> = {
      data: ['confirm', owed.conversationId, 'confirm', null, null, null, null],
      eventData: null,
      identity: { userId: user.id, username: user.username, role: user.role, token },
      headers: {},
      signal: deps.signal,
      cancelSignal: deps.signal,
      sessionHash: 'recovery',
      eventId,
      // Nobody listens to this stream: side messages go nowhere.
      log: () => {},
      progress: () => {},
    };
    let last: { type: string; code?: string } | undefined;
    // The turn records itself in the transcript; nobody listens to this stream.
    for await (const [message] of deps.handleChat(request)) last = message.metadata;
    if (last?.type === 'error' && last.code === 'CONVERSATION_BUSY' && Date.now() < deadline) {
      await abortableDelay((deps.leaseTtlS * 1000) / 4, deps.signal);
      continue;
    }
    deps.log.info({ conversationId: owed.conversationId, eventId, outcome: last?.type }, 'resumed a decided approval left by a previous process');
    return true;
  }
  return false;
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
