/** deploy_service: deploys a version of a service to an environment (needs the user's approval). @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const deployService = defineBackendTool({
  name: 'deploy_service',
  description: 'Deploy (release, roll out) a version of a service to an environment. Requires the user\'s confirmation.',
  schema: z.object({
    service: z.string().min(1).describe('The service to deploy, e.g. "checkout-api"'),
    version: z.string().min(1).describe('The version to deploy, e.g. "2.4.1"'),
    environment: z.string().min(1).describe('The target environment, e.g. "staging" or "production"'),
  }),
  call: (body) => ({ body }),
});
