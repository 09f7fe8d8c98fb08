/**
 * A headless run's status (seed 000 + issue 11's Decisions), pure: the row's own status while
 * nothing runs (queued) or when it settled the run itself (cancelled before a turn, failed after
 * its retries), else the newest turn's engine run: done -> completed, paused -> awaiting_approval.
 * @module
 */
import type { AgentRunRowStatus } from '../../db/agent-runs.ts';
import type { RunRowStatus } from '../../db/runs.ts';

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

export const isTerminal = (status: V1RunStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';
