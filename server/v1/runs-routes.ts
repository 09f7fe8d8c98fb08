/**
 * Background runs (seed 000 "Background Run Contract"): create (202 queued, executed by the job
 * queue), list, read, replay events by sequence, cancel. Another tenant's run is NOT_FOUND.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { getAgentRun, listAgentRuns, type AgentRun } from '../db/agent-runs.ts';
import { getConversationForUser } from '../db/conversations.ts';
import { readBranches } from '../db/branches.ts';
import { AirlockError } from '../errors.ts';
import { pageEvents } from './agent-events.ts';
import { assertUserKey, canSee, v1Caller, type V1Caller } from './identity.ts';
import type { V1Deps } from './deps.ts';
import { isTerminal, runStatus, RUN_STATUSES, statusPairs } from './run-status.ts';
import { EventsQuery, IdParams, ListQuery, parseRunRequest, parseWith } from './schemas.ts';
import { resolveSession, sessionIdOf } from './sessions.ts';
import { runWire, summarize } from './serialize.ts';
import { roleAllows } from '../auth/index.ts';

/** The run if this caller may see it: their own, or their tenant's with approvals:decide. */
export async function visibleRun(deps: V1Deps, caller: V1Caller, id: string): Promise<AgentRun> {
  const run = await getAgentRun(deps.pool, id);
  if (!run || !canSee(caller, { tenant: run.tenant, userId: run.userId })) throw new AirlockError('NOT_FOUND', 'No such run.');
  return run;
}

/** Runs the caller may list: the tenant's for a role with approvals:decide, else their own. */
export function listScope(caller: V1Caller): { tenant: string; userId: string | null } {
  return { tenant: caller.tenant, userId: roleAllows({ role: caller.role, permission: 'approvals:decide' }) ? null : caller.userId };
}

export function parseStatusFilter(status: string | undefined): (typeof RUN_STATUSES)[number] | null {
  if (status === undefined) return null;
  if (!(RUN_STATUSES as readonly string[]).includes(status)) throw new AirlockError('VALIDATION_ERROR', `status must be one of ${RUN_STATUSES.join(', ')}.`);
  return status as (typeof RUN_STATUSES)[number];
}

/**
 * One page of the runs this caller may list, newest first: `status` filtered in SQL before the
 * LIMIT (a page is never short because of it), keyset paging by `before` (the previous page's
 * last run_id, its `next_before`). Shared by /runs and /traces.
 */
export async function listPage(deps: V1Deps, caller: V1Caller, query: { limit: number; status?: string; before?: string }): Promise<{ rows: AgentRun[]; nextBefore: string | null }> {
  const status = parseStatusFilter(query.status);
  const before = query.before ? await visibleRun(deps, caller, query.before).catch(() => {
    throw new AirlockError('VALIDATION_ERROR', 'before must be the run_id of a run in this list (a next_before).');
  }) : null;
  const rows = await listAgentRuns(deps.pool, { ...listScope(caller), limit: query.limit, statuses: status ? statusPairs(status) : null, before: before?.id ?? null });
  return { rows, nextBefore: rows.length === query.limit ? rows.at(-1)!.id : null };
}

export const runRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.post('/runs', async (request, reply) => {
    const caller = v1Caller(request);
    const parsed = parseRunRequest(request.body);
    assertUserKey(caller, parsed.userKey);
    // An alias session_id names (or creates) the caller's conversation (issue 24, sessions.ts).
    const input = await resolveSession(deps.pool, caller.userId, parsed);
    // Checked now, not when the job runs: the caller hears of a wrong session at once.
    if (input.sessionId && !(await getConversationForUser(deps.pool, { userId: caller.userId, id: input.sessionId }))) {
      throw new AirlockError('NOT_FOUND', 'This session does not exist.');
    }
    const run = await deps.runs.create(caller, input, 'background');
    // Fair between users: the job's rank is how many of this user's runs wait before it.
    await deps.jobs().enqueueRun(run.id, run.queuedAhead);
    reply.status(202);
    return { run_id: run.id, status: 'queued', session_id: sessionIdOf(run), created_at: run.createdAt.toISOString() };
  });

  app.get('/runs', async (request) => {
    const caller = v1Caller(request);
    const { rows, nextBefore } = await listPage(deps, caller, parseWith(ListQuery, request.query));
    const runs = rows.map(runWire);
    return { runs, count: runs.length, next_before: nextBefore };
  });

  app.get('/runs/:id', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    const run = await visibleRun(deps, v1Caller(request), id);
    const [events, branches] = await Promise.all([deps.runs.events(run), run.sessionId ? readBranches(deps.pool, run.sessionId) : null]);
    const summary = summarize(events);
    // The session's active branch (issue 29): a run's events are on the branch it ran on.
    return { ...runWire(run), content: summary.content, tool_calls: summary.toolCalls, approval_request_ids: summary.pendingApprovalIds, active_branch: branches?.active ?? 0 };
  });

  app.get('/runs/:id/events', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    const query = parseWith(EventsQuery, request.query);
    const run = await visibleRun(deps, v1Caller(request), id);
    return { run_id: run.id, ...pageEvents(await deps.runs.events(run), query.after_sequence, query.limit) };
  });

  app.post('/runs/:id/cancel', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    const caller = v1Caller(request);
    const run = await visibleRun(deps, caller, id);
    const status = runStatus(run);
    if (isTerminal(status)) throw new AirlockError('CONFLICT', `The run is already ${status}.`, { details: { status } });
    await deps.runs.cancel(run);
    // A paused run: deny what it waits for (the model is told, the turn ends), then it is cancelled.
    if (status === 'awaiting_approval') {
      for (const approvalId of summarize(await deps.runs.events(run)).pendingApprovalIds) {
        await deps.approvals.decide(caller, approvalId, 'deny', 'run cancelled').catch(() => {});
      }
      await deps.pool.query("UPDATE agent_runs SET status = 'cancelled' WHERE id = $1", [run.id]);
    }
    // A running turn commits its cancel within moments (here, or at the next poll where it runs).
    const deadline = Date.now() + 5_000;
    let current = (await getAgentRun(deps.pool, id))!;
    while (!isTerminal(runStatus(current)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      current = (await getAgentRun(deps.pool, id))!;
    }
    return runWire(current);
  });
};
