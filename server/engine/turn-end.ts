/**
 * How a turn (turn.ts) ends: its answer and run.finished in one commit — done, cancelled (Stop or
 * shutdown) or failed (the error as a taxonomy code, the answer so far kept). An end that cannot be
 * written because the database is away is deferred, with the answer, until it is back.
 *
 *   end / error / stop -> [assistant.message] run.finished(done | failed | cancelled)
 *   the conversation's first done run also names it (first-title.ts): by rule in its commit, then,
 *   a real model, by the model's title, asked after the commit and never waited for
 * @module
 */
import { isDatabaseUnavailable } from '../db/index.ts';
import { isAirlockError } from '../errors.ts';
import { answerDraft } from './drafts.ts';
import { nameAfterFirstAnswer, type FirstTitle } from './first-title.ts';
import type { LedgerEvent, LiveEvent } from './events.ts';
import { TurnAbort, errorFields, toTurnError } from './turn-errors.ts';
import type { TurnScope } from './turn-scope.ts';

/** The agent ended its answer: the last segment and run.finished(done). */
export async function* finishDone(t: TurnScope): AsyncGenerator<LiveEvent> {
  t.turns++;
  const named: { first?: FirstTitle | null } = {};
  const events = await t.commit(async (tx) => {
    const answer = t.transcript.answerText;
    const drafts = answerDraft(t.ctx.runId, answer);
    await t.transcript.endAnswer({}, tx);
    named.first = await nameAfterFirstAnswer(tx, { conversationId: t.ctx.conversationId, runId: t.ctx.runId, answer });
    return [...drafts, ...(await t.settle(tx, { status: 'done', stopReason: 'end_turn' }))];
  });
  // Committed and settled: the model's title is asked outside the transaction, not awaited (the
  // rule's title is there already; the sidebar never waits for the model).
  if (named.first) void t.deps.titles?.ask(named.first);
  yield* events;
}

/** The turn threw (or was stopped): commits its end, or defers it while the database is away. */
export async function* finishFailed(t: TurnScope, error: unknown): AsyncGenerator<LiveEvent> {
  const { deps, ctx } = t;
  const saved = await t.transcript.saveAnswer();
  let ending: LedgerEvent[];
  try {
    ending = await finishAfterError(t, error);
  } catch (finishError) {
    // The database is away: the answer so far and the run's end are written when it is back.
    if (isDatabaseUnavailable(finishError) && deps.pendingWrites) {
      deps.pendingWrites.defer(`end of run ${ctx.runId}`, async () => {
        t.transcript.restoreAnswer(saved);
        await finishAfterError(t, error);
      });
    } else deps.log.error({ err: finishError, runId: ctx.runId }, 'could not record the end of a run');
    throw isDatabaseUnavailable(finishError) ? finishError : error;
  }
  yield* ending;
}

async function finishAfterError(t: TurnScope, error: unknown): Promise<LedgerEvent[]> {
  const { ctx, transcript } = t;
  const text = transcript.answerText;
  // An abort for a taxonomy error (engine.abandon) is a failure, not a Stop.
  const abortedFor = ctx.signal.aborted && isAirlockError(ctx.signal.reason) ? ctx.signal.reason : undefined;
  if (ctx.signal.aborted && !abortedFor) {
    const reason = ctx.signal.reason instanceof TurnAbort ? ctx.signal.reason.reason : 'cancelled';
    return t.commit(async (tx) => {
      await transcript.endAnswer({ cancelled: true }, tx);
      return [...answerDraft(ctx.runId, text, { cancelled: true }), ...(await t.settle(tx, { status: 'cancelled', stopReason: reason }))];
    });
  }
  const failure = toTurnError(abortedFor ?? error, ctx.runId);
  t.span.fail(failure.code, failure.message);
  if (failure.code === 'INTERNAL') t.deps.log.error({ err: error, runId: ctx.runId }, 'turn failed');
  const mark = { code: failure.code, detail: failure.message };
  return t.commit(async (tx) => {
    await transcript.endAnswer({ error: mark }, tx);
    const fields = errorFields(failure);
    return [...answerDraft(ctx.runId, text, { error: mark }), ...(await t.settle(tx, { status: 'failed', stopReason: 'error', error: { ...mark, ...(fields.length ? { fields } : {}) } }))];
  });
}
