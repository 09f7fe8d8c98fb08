/** list_maintenance_events: maintenance windows, filtered by status and service. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const listMaintenanceEvents = defineBackendTool({
  name: 'list_maintenance_events',
  description: 'List maintenance events (maintenance windows) of services: active, upcoming, past or all.',
  schema: z.object({
    status: z.enum(['active', 'upcoming', 'past', 'all']).optional().describe('Which events to list (default all)'),
    service: z.string().optional().describe('Only events of this service, e.g. "db-primary"'),
  }),
  call: ({ status, service }) => ({ query: { status, service } }),
});
