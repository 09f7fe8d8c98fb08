/**
 * A headless run's status (seed 000 + issue 11's Decisions), pure: the row's own status while
 * nothing runs (queued) or when it settled the run itself (cancelled before a turn, failed after
 * its retries), else the newest turn's engine run: done -> completed, paused -> awaiting_approval.
 * @module
 */
import type { AgentRunRowStatus } from '../db/agent-runs.ts';
import type { RunRowStatus } from '../db/runs.ts';

export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type V1RunStatus = (typeof RUN_STATUSES)[number];

const FROM_TURN: Record<RunRowStatus, V1RunStatus> = {
  running: 'running',
  paused: 'awaiting_approval',
  done: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function runStatus(run: { rowStatus: AgentRunRowStatus; lastTurn: { status: RunRowStatus } | null }): V1RunStatus {
  if (run.rowStatus !== 'running') return run.rowStatus;
  return run.lastTurn ? FROM_TURN[run.lastTurn.status] : 'running';
}

/** Every row status (a Record, so a new one fails to compile until it is listed). */
const ROW_STATUSES = Object.keys({ queued: 1, running: 1, cancelled: 1, failed: 1 } satisfies Record<AgentRunRowStatus, 1>) as AgentRunRowStatus[];
const TURN_STATUSES = [null, ...(Object.keys(FROM_TURN) as RunRowStatus[])];

/** A (row status, newest turn status) pair; turn null: no turn started. */
export interface StatusPair {
  row: AgentRunRowStatus;
  turn: RunRowStatus | null;
}

/**
 * Pure: the (row, newest turn) status pairs that `runStatus` maps to `status`, so a list filters by
 * the derived status in SQL (db/agent-runs.ts) with this module still the one place that maps.
 */
export function statusPairs(status: V1RunStatus): StatusPair[] {
  const pairs: StatusPair[] = [];
  for (const row of ROW_STATUSES) {
    for (const turn of TURN_STATUSES) {
      if (runStatus({ rowStatus: row, lastTurn: turn ? { status: turn } : null }) === status) pairs.push({ row, turn });
    }
  }
  return pairs;
}

export const isTerminal = (status: V1RunStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';
