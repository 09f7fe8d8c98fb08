/** What the v1 route modules share (index.ts builds it): a leaf, so routes never import index.ts. */
import type { Pool } from '../db/index.ts';
import type { createApprovalService } from '../approvals/service.ts';
import type { JobQueue } from './job-queue.ts';
import type { RunService } from './run-service.ts';
import type { PolicyDecision, PolicySubject } from '../policy/index.ts';

export interface V1Deps {
  pool: Pool;
  runs: RunService;
  approvals: ReturnType<typeof createApprovalService>;
  jobs: () => JobQueue;
  /** The tool policy's decision for a call (POST /grants asks the rule a grant falls under); absent: no grants made directly. */
  decide?: (subject: PolicySubject, tool: string, args: Readonly<Record<string, unknown>>) => PolicyDecision;
  /** PUBLIC_URL: the passkeys' relying party (issue 28); unset: each request's host. */
  publicUrl?: string;
}
