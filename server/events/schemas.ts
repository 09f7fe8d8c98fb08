/**
 * Request schemas of the event routes (zod at the edge).
 * @module
 */
import { z } from 'zod';

export const EVENTS_PAGE_DEFAULT = 100;
export const EVENTS_PAGE_MAX = 500;

export const ConversationParams = z.object({ id: z.uuid('id must be a conversation id (a UUID)') });

const Seq = z.coerce.number().int('after must be an integer').min(0, 'after must be 0 or more').max(Number.MAX_SAFE_INTEGER);

/** A branch of a conversation (issue 29). */
export const BranchNumber = z.coerce.number('branch must be a branch number').int('branch must be an integer').min(0).max(2_147_483_647);

export const EventsPageQuery = z.object({
  after: Seq.default(0),
  /** Only the events of this branch (`payload.branch`, absent: 0); absent: every event. */
  branch: BranchNumber.optional(),
  limit: z.coerce.number().int().min(1).max(EVENTS_PAGE_MAX, `limit is at most ${EVENTS_PAGE_MAX}`).default(EVENTS_PAGE_DEFAULT),
});

export const SwitchBranchBody = z.strictObject({ branch: z.number('branch must be a branch number').int().min(0).max(2_147_483_647) });

const Flag = (name: string) =>
  z.enum(['0', '1', 'true', 'false'], `${name} must be 1 or 0`).default('0').transform((v) => v === '1' || v === 'true');

export const EventsStreamQuery = z
  .object({
    after: Seq.optional(),
    // Seed 001: token-level `event: partial` frames only for a client that asks (`partials=1`).
    partials: Flag('partials'),
    // Airlock's extension: on attaching to a running answer, its segment so far once, as
    // `event: partial_snapshot` (never on a Last-Event-ID resume: nothing is replayed).
    snapshot: Flag('snapshot'),
  })
  .refine((q) => q.partials || !q.snapshot, { message: 'snapshot=1 needs partials=1', path: ['snapshot'] });
