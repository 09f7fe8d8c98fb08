/**
 * Request schemas of the event routes (zod at the edge).
 * @module
 */
import { z } from 'zod';

export const EVENTS_PAGE_DEFAULT = 100;
export const EVENTS_PAGE_MAX = 500;

export const ConversationParams = z.object({ id: z.uuid('id must be a conversation id (a UUID)') });

const Seq = z.coerce.number().int('after must be an integer').min(0, 'after must be 0 or more').max(Number.MAX_SAFE_INTEGER);

export const EventsPageQuery = z.object({
  after: Seq.default(0),
  limit: z.coerce.number().int().min(1).max(EVENTS_PAGE_MAX, `limit is at most ${EVENTS_PAGE_MAX}`).default(EVENTS_PAGE_DEFAULT),
});

export const EventsStreamQuery = z.object({
  after: Seq.optional(),
  // Partial frames are on by default; `partials=0` (or false) turns them off.
  partials: z.enum(['0', '1', 'true', 'false']).default('1').transform((v) => v === '1' || v === 'true'),
});
