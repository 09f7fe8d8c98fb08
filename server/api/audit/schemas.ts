/** Query schemas of GET /api/audit and its export. */
import { z } from 'zod';
import { isBigintText, isValidTimestamp } from '../scalars.ts';

/** ISO 8601 with an offset, and a day that exists (zod alone lets 2026-02-31 through). */
const timestamp = z.iso.datetime({ offset: true }).refine(isValidTimestamp, 'must be a real date and time');

export const AuditQuery = z.object({
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  operation: z.string().max(100).optional(),
  user_id: z.uuid().optional(),
  outcome: z.enum(['success', 'denied', 'unauthorized', 'invalid', 'not_found', 'conflict', 'error', 'replayed', 'preview']).optional(),
  tool_call_id: z.string().max(200).optional(),
  conversation_id: z.string().max(200).optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
});

export const AuditCursor = z.object({ b: z.string().refine(isBigintText) });

/** GET /api/audit/export: an audit row id range, both ends included. */
export const AuditExportQuery = z.object({
  from: z.string().refine(isBigintText, 'must be an audit row id').optional(),
  to: z.string().refine(isBigintText, 'must be an audit row id').optional(),
});
