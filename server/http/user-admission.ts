/**
 * Per-user admission of the streamed transports in one process (issue 30 item 4): AG-UI runs and
 * v1 streamed/synchronous runs share one counter per user, capped at `CHAT_USER_CONCURRENCY` (the
 * Gradio /chat cap). Beyond it: 429 RATE_LIMITED with `Retry-After`, at once (no waiting).
 * @module
 */
import { AirlockError } from '../errors.ts';

/** What a refused start tells the client to wait (seconds). */
export const ADMISSION_RETRY_AFTER_S = 2;

export interface UserAdmission {
  /** Counts a run of `userId`; throws RATE_LIMITED beyond the cap. Returns the (idempotent) release. */
  admit(userId: string): () => void;
  /** Runs of `userId` admitted now (tests, metrics). */
  running(userId: string): number;
}

export function createUserAdmission(limit: number): UserAdmission {
  const byUser = new Map<string, number>();
  return {
    admit(userId) {
      const n = byUser.get(userId) ?? 0;
      if (n >= limit) {
        throw new AirlockError('RATE_LIMITED', `At most ${limit} streamed runs at once per user; wait for one to end, or use POST /api/agent/v1/runs.`, { details: { retry_after_s: ADMISSION_RETRY_AFTER_S } });
      }
      byUser.set(userId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (byUser.get(userId) ?? 1) - 1;
        if (left > 0) byUser.set(userId, left);
        else byUser.delete(userId);
      };
    },
    running: (userId) => byUser.get(userId) ?? 0,
  };
}

/** The `Retry-After` of a RATE_LIMITED error that names one (error handlers set the header). */
export function retryAfterOf(error: AirlockError): number | null {
  if (error.code !== 'RATE_LIMITED') return null;
  const s = (error.details as { retry_after_s?: unknown } | undefined)?.retry_after_s;
  return typeof s === 'number' && s > 0 ? Math.ceil(s) : null;
}
