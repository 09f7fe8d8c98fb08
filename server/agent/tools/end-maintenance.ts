/** end_maintenance: ends a service's active maintenance window (needs the user's approval). @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const endMaintenance = defineBackendTool({
  name: 'end_maintenance',
  description: 'End the active maintenance window of a service. Requires the user\'s confirmation.',
  schema: z.object({
    service: z.string().min(1).describe('The service whose active maintenance should end, e.g. "db-primary"'),
  }),
  call: (body) => ({ body }),
});
