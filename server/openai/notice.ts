/**
 * What the answer says while a tool call waits for an approval (issue 43, More decisions 7): an
 * OpenAI client has no card to show, so the words go into the answer itself, "Waiting for
 * approval: <prompt>. Decide at <origin>/approvals", plus the caller's own one-use decision link
 * (server/v1/approval-links.ts) when they are one of its approvers. Nothing the client sends back
 * ever decides it: only the inbox, the link, a tab or the v1 approvals API do.
 * @module
 */
import { mintLinksForApproval } from '../db/approval-links.ts';
import type { Pool } from '../db/index.ts';

/** Pure: the words of a pause, with the decision link when there is one. */
export function noticeText(origin: string, prompt: string, linkToken: string | null): string {
  const link = linkToken ? `, or with your one-use decision link ${origin}/approve/${linkToken}` : '';
  return `\n\nWaiting for approval: ${prompt.trim().replace(/[.?!:\s]+$/, '')}. Decide at ${origin}/approvals${link}.\n\n`;
}

/** The words for the approval `approvalId` the caller's run waits for. */
export async function approvalNotice(pool: Pool, o: { origin: string; callerId: string; approvalId: string; prompt: string }): Promise<string> {
  const [mine] = await mintLinksForApproval(pool, o.approvalId, undefined, o.callerId);
  return noticeText(o.origin, o.prompt, mine?.token ?? null);
}
