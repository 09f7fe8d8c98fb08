/**
 * The frames of one AG-UI run, from the engine: a run followed from its start, or a reconnect.
 *
 * Reconnect (`Last-Event-ID`): AG-UI has no resume, and a client cannot tell us how much of the
 * streaming answer it got (tokens are live-only, without an id). So it first gets the thread as
 * ONE MESSAGES_SNAPSHOT (the ledger's messages and the answer streamed so far, under the ids the
 * live stream used): the snapshot replaces what it holds, so no text doubles. Then the run goes on
 * live: the streaming answer continues under its id, new commits as usual, to the run's end.
 * @module
 */
import { EventType, type BaseEvent } from '@ag-ui/core';
import type { Pool } from '../db/index.ts';
import { EventQueue } from '../engine/event-queue.ts';
import { activeBranchEvents, followLedger, isCommitted, type Engine, type LedgerEvent, type Ledger, type LiveEvent } from '../engine/index.ts';
import type { AgUiProjection, Frame } from './projection.ts';
import { threadMessages } from './snapshot.ts';
import { pendingInterrupts } from './interrupts.ts';

export interface StreamDeps {
  pool: Pool;
  ledger: Ledger;
  engine: Engine;
}

const PAGE = 500;

/** One event through the projection; a pause that asked nothing itself names the approvals still waiting. */
async function project(deps: StreamDeps, view: AgUiProjection, event: LiveEvent, conversationId: string): Promise<Frame[]> {
  if (event.kind === 'run.finished' && event.payload.status === 'paused' && view.interrupts.length === 0) {
    view.addInterrupts(await pendingInterrupts(deps.pool, conversationId));
  }
  return view.apply(event);
}

/**
 * RUN_STARTED, then the run's events from its start to its end. A run queued behind the thread's
 * running answer (issue 24) says so first, as the CUSTOM event `queued` ({type, position,
 * request_id}); its events follow when its turn starts.
 */
export async function* runFrames(deps: StreamDeps, view: AgUiProjection, events: AsyncIterable<LiveEvent>, conversationId: string, queued?: { position: number; requestId: string }): AsyncGenerator<Frame> {
  yield view.runStarted();
  if (queued) yield { event: { type: EventType.CUSTOM, name: 'queued', value: { type: 'queued', position: queued.position, request_id: queued.requestId } } };
  for await (const event of events) yield* await project(deps, view, event, conversationId);
}

async function readThread(ledger: Ledger, conversationId: string): Promise<LedgerEvent[]> {
  const all: LedgerEvent[] = [];
  for (;;) {
    const page = await ledger.read(conversationId, { after: all.at(-1)?.seq ?? 0, limit: PAGE });
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

/** RUN_STARTED, the thread as a snapshot, then the rest of the run live. */
export async function* reconnectFrames(deps: StreamDeps, view: AgUiProjection, run: { id: string; conversationId: string }): AsyncGenerator<Frame> {
  yield view.runStarted();
  // Subscribe before reading the ledger, so that no commit falls between the two.
  const hub = deps.engine.liveRun(run.conversationId);
  let queue: EventQueue<LiveEvent> | null = null;
  let missed: LiveEvent[] = [];
  if (hub && hub.runId === run.id && !hub.finished) {
    const q = new EventQueue<LiveEvent>();
    const sub = hub.subscribe({ event: (e) => q.push(e), end: (failure) => (failure === undefined ? q.end() : q.fail(failure)) });
    missed = sub.missed;
    if (sub.ended) q.end();
    q.onReturn = sub.unsubscribe;
    queue = q;
  }
  try {
    const thread = await readThread(deps.ledger, run.conversationId);
    const head = thread.at(-1)?.seq ?? 0;
    let finished: LedgerEvent | undefined;
    for (const e of thread) {
      if (e.payload.run_id !== run.id) continue;
      if (e.kind === 'run.finished') finished = e;
      else view.apply(e); // the client gets these in the snapshot: only the projection's state moves
    }
    const seenByHub = Math.max(0, ...missed.filter(isCommitted).map((e) => e.seq));
    // The hub's partial is the answer since ITS last commit; a later commit in the ledger has it all.
    const streaming = head <= seenByHub ? missed.filter((e) => e.kind === 'partial').map((e) => e.payload.token).join('') : '';
    // The thread as its active branch shows it (issue 29); which branch rides in `rawEvent`, the
    // one field AG-UI leaves to the source (a STATE_SNAPSHOT would be the agent's state instead).
    const shown = activeBranchEvents(thread);
    const messages = threadMessages(shown.events, { runId: run.id, text: streaming });
    yield { event: { type: EventType.MESSAGES_SNAPSHOT, messages, rawEvent: { active_branch: shown.branch } } as BaseEvent, id: head };
    view.resumeText(streaming);

    if (finished) {
      yield* await project(deps, view, finished, run.conversationId);
      return;
    }
    if (queue) {
      // Commits the snapshot has, and the tokens streamed before them, were already sent.
      let skipping = head > seenByHub;
      for await (const e of queue) {
        if (isCommitted(e) && e.seq <= head) {
          if (e.seq === head) skipping = false;
          continue;
        }
        if (skipping) continue;
        yield* await project(deps, view, e, run.conversationId);
      }
    } else {
      // Finished since, or running in another process: its commits come through the ledger.
      const rest = followLedger(deps.ledger, run.conversationId, { after: head, filter: (e) => e.run_id === run.id, until: (e) => e.kind === 'run.finished' });
      for await (const e of rest) yield* await project(deps, view, e, run.conversationId);
    }
  } finally {
    await queue?.return();
  }
}
