/** create_task: files a follow-up task. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const createTask = defineBackendTool({
  name: 'create_task',
  description: 'Create a follow-up task (ticket, todo) for the team, optionally about a service and with a priority.',
  schema: z.object({
    title: z.string().min(1).describe('A short title for the task'),
    description: z.string().optional().describe('More detail about what to do'),
    service: z.string().optional().describe('The service the task is about, e.g. "payments-api"'),
    priority: z.enum(['low', 'medium', 'high']).optional().describe('Priority (default medium)'),
  }),
  call: (body) => ({ body }),
});
