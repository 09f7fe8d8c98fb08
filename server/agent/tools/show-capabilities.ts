/** show_capabilities: what the signed-in user may do through the assistant. @module */
import { z } from 'zod';
import { defineBackendTool } from './define.ts';

export const showCapabilities = defineBackendTool({
  name: 'show_capabilities',
  description: 'Show what the assistant can do for the current user: the available tools, which are allowed for their role, and their permissions. Use for help or "what can you do".',
  schema: z.object({}),
  call: () => ({}),
});
