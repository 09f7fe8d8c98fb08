/** list_deployments: recent deployments, filtered by service and environment. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const listDeployments = defineBackendTool({
  name: 'list_deployments',
  description: 'List recent deployments (releases) of services, newest first, optionally for one service or environment.',
  schema: z.object({
    service: z.string().optional().describe('Only deployments of this service, e.g. "checkout-api"'),
    environment: z.string().optional().describe('Only deployments to this environment, e.g. "staging"'),
    limit: z.number().int().min(1).max(100).optional().describe('Maximum number of deployments (default 20)'),
  }),
  call: (query) => ({ query }),
});
