/**
 * Confirmed means done. A decision is committed (confirm_resolved) before the graph resumes, so a
 * crash in between leaves an approved action that never ran. At gateway start every such thread is
 * resumed once, as the user who decided: the resume is an engine turn like any other (lease,
 * transcript, approvals; decision-turn.ts, as the v1 approvals API runs its decisions), a confirm
 * with nothing left pending, which resumes exactly what is owed.
 * Tools take the tool call id as their idempotency key, so a tool that had already run before the
 * crash is not run twice.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { AgentRuntime } from '../agent/index.ts';
import { getUserById, keyStoreFor, signUserToken, type KeyCipher } from '../auth/index.ts';
import type { Pool } from '../db/index.ts';
import { isAirlockError } from '../errors.ts';
import { retryWhileBusy, type SubmitDecisionTurn } from './decision-turn.ts';
import { owedResume, threadsOwedResume } from './decide.ts';

/** Lifetime of the token a recovered resume acts with: long enough for one turn's tools. */
const RECOVERY_TOKEN_TTL_S = 300;

export interface RecoveryDeps {
  pool: Pool;
  agent: AgentRuntime;
  /** The engine's submit. */
  submit: SubmitDecisionTurn;
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
  const results = await Promise.all((await threadsOwedResume(deps.pool)).map((owed) => resumeThread(deps, owed).catch((error) => report(deps, owed, error))));
  return results.filter(Boolean).length;
}

async function resumeThread(deps: RecoveryDeps, owed: { threadId: string; conversationId: string; userId: string }): Promise<boolean> {
  // The dead process may still hold the conversation's lease (a hung one, until its TTL): retry
  // while busy. Each attempt checks again that the batch is fully decided, since a confirm turn
  // would otherwise decide a still-pending approval.
  const run = await retryWhileBusy(
    async () => {
      if (deps.signal.aborted || !(await owedResume(deps.pool, deps.agent, owed.threadId, () => new Date()))) return null;
      const user = await getUserById(deps.pool, owed.userId);
      if (!user) {
        deps.log.warn({ conversationId: owed.conversationId }, 'a decided approval cannot be resumed: its user no longer exists');
        return null;
      }
      const { token } = await signUserToken(keyStoreFor(deps.pool, deps.cipher), { issuer: deps.issuer, ttlS: Math.min(RECOVERY_TOKEN_TTL_S, deps.userTokenTtlS ?? RECOVERY_TOKEN_TTL_S), user });
      const input = { text: 'confirm', files: [] as [], conversationId: owed.conversationId, action: 'confirm' as const, requestId: `recovery-${randomUUID()}`, approvalId: null };
      return deps.submit(input, { userId: user.id, token });
    },
    { untilMs: Date.now() + (deps.leaseTtlS + 1) * 1000, everyMs: (deps.leaseTtlS * 1000) / 4, signal: deps.signal },
  );
  if (!run) return false;
  // The turn records itself in the ledger and the transcript; this only waits for its end.
  let outcome: string | undefined;
  for await (const event of run.events()) if (event.kind === 'run.finished') outcome = (event.payload as { status: string }).status;
  deps.log.info({ conversationId: owed.conversationId, outcome }, 'resumed a decided approval left by a previous process');
  return true;
}

/** A resume that could not run (still busy at its deadline, the database away): logged, retried by the next pass. */
function report(deps: RecoveryDeps, owed: { conversationId: string }, error: unknown): false {
  if (isAirlockError(error) && error.code === 'CONVERSATION_BUSY') deps.log.info({ conversationId: owed.conversationId }, 'a decided approval waits: its conversation is still busy');
  else deps.log.error({ err: error, conversationId: owed.conversationId }, 'resuming a decided approval failed');
  return false;
}
