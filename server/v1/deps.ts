/** What the v1 route modules share (index.ts builds it): a leaf, so routes never import index.ts. */
import type { Pool } from '../db/index.ts';
import type { createApprovalService } from './approval-service.ts';
import type { JobQueue } from './job-queue.ts';
import type { RunService } from './run-service.ts';

export interface V1Deps {
  pool: Pool;
  runs: RunService;
  approvals: ReturnType<typeof createApprovalService>;
  jobs: () => JobQueue;
}
