/** check_health: the health of one service or all. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const checkHealth = defineBackendTool({
  name: 'check_health',
  description: 'Check the health status (up, degraded, down, latency, error rate) of one service or of all services.',
  schema: z.object({
    service: z.string().optional().describe('The service to check, e.g. "payments-api"; omit for all services'),
  }),
  call: ({ service }) => ({ query: { service } }),
});
