/** get_environment: facts about one environment or all. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const getEnvironment = defineBackendTool({
  name: 'get_environment',
  description: 'Get information about an environment (staging, production…): region, cluster, versions of services running there.',
  schema: z.object({
    environment: z.string().optional().describe('The environment, e.g. "staging"; omit for all environments'),
  }),
  call: ({ environment }) => ({ query: { environment } }),
});
