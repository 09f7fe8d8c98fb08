/**
 * Headless runs over the engine (the transport-free turns of server/engine): a run is its first
 * turn plus every resume after an approval, all linked to one run_id (prepareTurn), so a resumed run
 * keeps its id and its stored tool_policy. Streamed and synchronous runs execute in the request's
 * process; background runs go through the job queue (job-queue.ts).
 *
 *   create row -> engine.submit (request_id v1:<run>:<attempt>) -> prepareTurn links the turn
 *     -> follow the turn's events (live: SSE / summary; background: until it settles)
 *   approve / deny / expire -> engine.submit as the requester with the decision -> resume turn
 *   background retry after a dead attempt -> engine.submit with retryOf (no message: the thread
 *     resumes from its checkpoint, issue 30)
 * @module
 */
import { randomUUID } from 'node:crypto';
import { countQueuedRuns, getAgentRun, insertAgentRun, lockUserQueue, isCancelRequested, linkTurn, requestCancel, pausedRunOfConversation, setAgentRunStatus, type AgentRun, type AgentRunMode } from '../db/agent-runs.ts';
import { withTransaction, type Pool } from '../db/index.ts';
import type { UserAdmission } from '../http/index.ts';
import { recoverOrphanedRuns, type Engine, type Ledger, type LedgerEvent, type LiveEvent, type TurnHandle, type TurnAction, type TurnSetup } from '../engine/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { durableEvents, type AgentEventV1 } from './agent-events.ts';
import type { V1Caller } from './identity.ts';
import type { RunRequest } from './schemas.ts';
import type { UserTokenMinter } from './user-token.ts';

/** request_id of a run's turns: the prefix names the run (prepareTurn links by it). */
const TURN_REQUEST = /^v1:([A-Za-z0-9._:-]{1,128}):\d+$/; // run ids are opaque (issue 24): the attempt is the last part
/** What a refused POST /runs tells the client to wait (seconds). */
const QUEUE_RETRY_AFTER_S = 5;
/** The route of a live run another face started (its `metadata.face`), for the audit of what its message supersedes. */
const FACE_PATHS: Record<string, string> = { openai: '/api/agent/openai/v1/chat/completions' };
export const turnRequestId = (runId: string, attempt: number): string => `v1:${runId}:${attempt}`;

export interface RunServiceDeps {
  pool: Pool;
  /** Streamed / synchronous runs (shared with AG-UI) one user may have going at once in this process (429 beyond). */
  admission: UserAdmission;
  /** Background runs one user may have queued (429 at POST /runs beyond). */
  userQueue: number;
  engine: () => Engine;
  ledger: Ledger;
  mintToken: UserTokenMinter;
  leaseTtlS: number;
  log: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export type RunService = ReturnType<typeof createRunService>;

export function createRunService(deps: RunServiceDeps) {
  const { pool } = deps;
  /** Turns running in this process, by run id: a cancel here reaches them at once. */
  const local = new Map<string, TurnHandle>();

  /** EngineOptions.prepareTurn: links a turn to its run and hands it the run's stored policy. */
  async function prepareTurn(turn: { runId: string; conversationId: string; requestId: string; action: TurnAction | null; fresh?: boolean }): Promise<TurnSetup | void> {
    const named = TURN_REQUEST.exec(turn.requestId)?.[1];
    // A /chat message in a new conversation: nothing to link, nothing paused (no query on the token path).
    if (!named && turn.fresh) return;
    if (!turn.action) {
      // A new message in the session supersedes what a paused run waits for (its approvals are
      // denied as superseded by this turn): that run ends here, cancelled.
      const paused = await pausedRunOfConversation(pool, turn.conversationId);
      if (paused && paused.id !== named) await setAgentRunStatus(pool, { id: paused.id, status: 'cancelled', error: { code: 'CONFLICT', message: 'Superseded by a new message in the session.' } });
      if (!named) return;
    }
    // A decision made anywhere (/chat confirm, a tab, this API, the expiry) resumes the paused run.
    const run = named ? await getAgentRun(pool, named) : await pausedRunOfConversation(pool, turn.conversationId);
    if (!run) return;
    // A token minted for this turn, whoever submitted it (a tab's confirm carries a browser token
    // with minutes left; the first turn's is long gone after an approval wait).
    const [, userToken] = await Promise.all([linkTurn(pool, { engineRunId: turn.runId, runId: run.id, conversationId: turn.conversationId }), deps.mintToken(run.userId)]);
    return { toolPolicy: run.toolPolicy, callerSystem: run.systemPrompt, userToken };
  }

  /**
   * A new run's row. A background run is admitted against the user's queue cap (`CHAT_USER_QUEUE`,
   * 429 beyond); `queuedAhead` is how many of the user's runs wait before it (its fair-order rank).
   */
  async function create(caller: V1Caller, request: RunRequest, mode: AgentRunMode): Promise<AgentRun & { queuedAhead: number }> {
    const id = request.runId ?? randomUUID();
    const row = {
      id,
      tenant: caller.tenant,
      userId: caller.userId,
      username: caller.username,
      userKey: caller.userKey,
      sessionId: request.sessionId,
      sessionRef: request.sessionRef,
      mode,
      status: mode === 'background' ? 'queued' : 'running',
      text: request.text,
      systemPrompt: request.system,
      toolPolicy: request.toolPolicy,
      metadata: request.metadata,
      authProvider: caller.authProvider,
    } as const;
    let queuedAhead = 0;
    const inserted = mode !== 'background'
      ? await insertAgentRun(pool, row)
      : await withTransaction(pool, async (client) => {
          await lockUserQueue(client, caller.userId);
          queuedAhead = await countQueuedRuns(client, caller.userId);
          if (queuedAhead >= deps.userQueue) {
            throw new AirlockError('RATE_LIMITED', `At most ${deps.userQueue} background runs queued per user; wait for some to start.`, { details: { retry_after_s: QUEUE_RETRY_AFTER_S } });
          }
          return insertAgentRun(client, row);
        });
    if (!inserted) throw new AirlockError('CONFLICT', `A run with id ${id} already exists.`);
    return { ...(await getAgentRun(pool, id))!, queuedAhead };
  }

  /**
   * Starts the run's next turn as `token`'s user. A retry (`retryOf`, the dead turn) sends no
   * message: the engine resumes the thread from its checkpoint (issue 30).
   */
  async function submitTurn(run: AgentRun, token: string, attempt: number, retryOf: string | null = null): Promise<TurnHandle> {
    // A message in a session supersedes what waits there: audited as made through this route.
    const origin = { method: 'POST', path: run.mode === 'background' ? '/api/agent/v1/runs' : (FACE_PATHS[String(run.metadata.face)] ?? '/api/agent/v1/chat/completions') };
    const handle = await deps.engine().submit(
      { text: run.text, files: [], conversationId: run.sessionId, action: null, requestId: turnRequestId(run.id, attempt), approvalId: null, origin, retryOf },
      { userId: run.userId, token },
      // A live run sent while the session's agent runs waits for its turn (issue 24); a background
      // job retries a busy session on its own.
      { queue: run.mode !== 'background' },
    );
    local.set(run.id, handle);
    return handle;
  }

  /** Counts a live run of `userId` against the per-user cap it shares with AG-UI; RATE_LIMITED beyond. Returns the release. */
  function admitLive(userId: string): () => void {
    return deps.admission.admit(userId);
  }

  /** A stream/sync run: its first turn, with the caller's own token. A refused start fails the run. */
  async function startLive(run: AgentRun, caller: V1Caller): Promise<TurnHandle> {
    try {
      return await submitTurn(run, caller.userToken, 1);
    } catch (error) {
      const e = isAirlockError(error) ? error : new AirlockError('INTERNAL');
      await setAgentRunStatus(pool, { id: run.id, status: 'failed', error: { code: e.code, message: e.message } });
      throw error;
    }
  }

  /** Follows a handle to its end, cancelling when a cancel was requested anywhere. */
  async function drive(runId: string, handle: TurnHandle, onEvent?: (e: LiveEvent) => void): Promise<LedgerEvent | null> {
    let finished: LedgerEvent | null = null;
    const poll = setInterval(() => {
      isCancelRequested(pool, runId).then((yes) => yes && handle.cancel(), () => {});
    }, 1_000);
    poll.unref();
    try {
      for await (const event of handle.events()) {
        onEvent?.(event);
        if (event.kind === 'run.finished') finished = event;
      }
    } finally {
      clearInterval(poll);
      if (local.get(runId) === handle) local.delete(runId);
    }
    return finished;
  }

  /**
   * The job of a background run: run its turn, or, when an earlier attempt's process died, retry it
   * once the dead turn is settled (orphan recovery) and its conversation lease has lapsed.
   * Returns normally when the run is settled or paused; throws to make the queue retry.
   */
  async function executeBackground(runId: string, lastAttempt = false): Promise<void> {
    try {
      await attempt(runId);
    } catch (error) {
      // Out of retries (or a user who no longer exists): the run ends failed, not queued forever.
      const e = isAirlockError(error) ? error : new AirlockError('INTERNAL', `The run could not be executed (reference ${runId}).`);
      if (lastAttempt || !e.retryable) {
        deps.log.error({ err: error, runId }, 'background run failed');
        await setAgentRunStatus(pool, { id: runId, status: 'failed', from: ['queued', 'running'], error: { code: e.code, message: e.message } });
        return;
      }
      throw error;
    }
  }

  async function attempt(runId: string): Promise<void> {
    let run = await getAgentRun(pool, runId);
    if (!run || run.rowStatus === 'cancelled' || run.rowStatus === 'failed') return;
    if (run.cancelRequested && !run.lastTurn) {
      await setAgentRunStatus(pool, { id: runId, status: 'cancelled' });
      return;
    }
    if (run.lastTurn) {
      const deadline = Date.now() + (deps.leaseTtlS * 3 + 5) * 1000;
      // An earlier attempt's turn still "running": its process died (its job lost the heartbeat);
      // recovery settles it once its lease lapsed.
      while (run.lastTurn?.status === 'running') {
        if (Date.now() > deadline) throw new AirlockError('SERVICE_UNAVAILABLE', 'The previous attempt is still running.');
        await recoverOrphanedRuns(pool, deps.ledger);
        await delay(250);
        run = (await getAgentRun(pool, runId))!;
      }
      if (!(await retryable(run))) return;
      await setAgentRunStatus(pool, { id: runId, status: 'queued' });
    }
    // The message is sent once: a retry after it was stored resumes the thread instead.
    const retryOf = run.lastTurn && (await messageStored(run)) ? run.lastTurn.id : null;
    const token = await deps.mintToken(run.userId);
    const attempt = run.attempts + 1;
    // Counted now, marked running only once its turn is linked: until then the newest turn is the
    // dead attempt's (failed), and a row "running" over it would read as a failed run to a poller.
    await setAgentRunStatus(pool, { id: runId, status: 'queued', attempt: true });
    let handle: TurnHandle | null = null;
    const deadline = Date.now() + (deps.leaseTtlS * 2 + 5) * 1000;
    while (!handle) {
      try {
        handle = await submitTurn({ ...run, sessionId: run.sessionId ?? (await getAgentRun(pool, runId))!.sessionId }, token, attempt, retryOf);
      } catch (error) {
        // The dead attempt's conversation lease lapses within its TTL.
        if (isAirlockError(error) && error.code === 'CONVERSATION_BUSY' && Date.now() < deadline) {
          await delay(500);
          continue;
        }
        const e = isAirlockError(error) ? error : new AirlockError('INTERNAL');
        if (e.retryable) throw error;
        await setAgentRunStatus(pool, { id: runId, status: 'failed', error: { code: e.code, message: e.message } });
        return;
      }
    }
    await setAgentRunStatus(pool, { id: runId, status: 'running', from: ['queued'] });
    const end = await drive(runId, handle);
    // A shutdown stopped it: the next process retries (the job fails now, or its heartbeat lapses).
    if (end?.kind === 'run.finished' && end.payload.status === 'cancelled' && end.payload.stop_reason === 'shutdown') {
      await setAgentRunStatus(pool, { id: runId, status: 'queued' });
      throw new AirlockError('SERVICE_UNAVAILABLE', 'The server shut down during the run; it will be retried.');
    }
  }

  /** Did the run's last turn end because its process went away (retry), or for good? */
  async function retryable(run: AgentRun): Promise<boolean> {
    if (!run.lastTurn || !run.sessionId) return false;
    if (run.lastTurn.status !== 'failed' && run.lastTurn.status !== 'cancelled') return false;
    const events = await deps.ledger.readRun(run.sessionId, run.lastTurn.id);
    const end = events.findLast((e) => e.kind === 'run.finished');
    return end?.kind === 'run.finished' && (end.payload.stop_reason === 'process_exit' || end.payload.stop_reason === 'shutdown');
  }

  /**
   * Did an earlier turn of the run store its message (user.message)? If not, the dead attempt died
   * before the message was taken, and the retry sends it.
   */
  async function messageStored(run: AgentRun): Promise<boolean> {
    if (!run.sessionId) return false;
    for (const turnId of run.turnIds) {
      if ((await deps.ledger.readRun(run.sessionId, turnId)).some((e) => e.kind === 'user.message')) return true;
    }
    return false;
  }

  /** Cancel: a queued run never starts, a running one is stopped where it runs (here or by its poll). */
  async function cancel(run: AgentRun): Promise<void> {
    await requestCancel(pool, run.id);
    if (run.rowStatus === 'queued' && !run.lastTurn) await setAgentRunStatus(pool, { id: run.id, status: 'cancelled', from: ['queued'] });
    local.get(run.id)?.cancel();
  }

  /** The run's durable events (session_start, then its turns' committed events), sequence from 1. */
  async function events(run: AgentRun): Promise<AgentEventV1[]> {
    const ledger: LedgerEvent[] = [];
    if (run.sessionId) for (const turnId of run.turnIds) ledger.push(...(await deps.ledger.readRun(run.sessionId, turnId)));
    return durableEvents({ runId: run.id, sessionId: run.sessionRef ?? run.sessionId }, { createdAt: run.createdAt, text: run.text, userKey: run.userKey, metadata: run.metadata }, ledger);
  }

  return { prepareTurn, admitLive, create, startLive, drive, executeBackground, cancel, events };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
