/** start_maintenance: opens a maintenance window (needs the user's approval). @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const startMaintenance = defineBackendTool({
  name: 'start_maintenance',
  description: 'Start a maintenance window on a service now, for a duration, with a reason. Requires the user\'s confirmation.',
  schema: z.object({
    service: z.string().min(1).describe('The service to put into maintenance, e.g. "db-primary"'),
    duration_minutes: z.number().int().min(1).max(24 * 60).describe('How long the maintenance lasts, in minutes').meta({ title: 'Duration (minutes)' }),
    reason: z.string().min(1).describe('Why, e.g. "disk upgrade"'),
  }),
  call: (body) => ({ body }),
});
