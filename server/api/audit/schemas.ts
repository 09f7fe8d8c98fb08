/** Query schema of GET /api/audit. */
import { z } from 'zod';

export const AuditQuery = z.object({
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  operation: z.string().max(100).optional(),
  user_id: z.uuid().optional(),
  outcome: z.enum(['success', 'denied', 'unauthorized', 'invalid', 'not_found', 'conflict', 'error', 'replayed']).optional(),
  tool_call_id: z.string().max(200).optional(),
  conversation_id: z.string().max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

export const AuditCursor = z.object({ b: z.string().regex(/^\d{1,19}$/) });
