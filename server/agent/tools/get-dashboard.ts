/** get_dashboard: one dashboard by id. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const getDashboard = defineBackendTool({
  name: 'get_dashboard',
  description: 'Get one monitoring dashboard with its panels by its id (from search_dashboards).',
  schema: z.object({
    id: z.string().min(1).describe('The dashboard id, as returned by search_dashboards'),
  }),
  call: ({ id }) => ({ params: { id } }),
});
