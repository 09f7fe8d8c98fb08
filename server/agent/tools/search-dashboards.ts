/** search_dashboards: find monitoring dashboards by words. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const searchDashboards = defineBackendTool({
  name: 'search_dashboards',
  description: 'Search monitoring dashboards (metrics, latency, errors, traffic graphs) by keywords.',
  schema: z.object({
    query: z.string().min(1).describe('Words to search for in dashboard titles and descriptions, e.g. "latency"'),
    limit: z.number().int().min(1).max(50).optional().describe('Maximum number of dashboards to return (default 10)'),
  }),
  call: ({ query, limit }) => ({ query: { q: query, limit } }),
});
