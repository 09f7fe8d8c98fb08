/**
 * Signed one-use decision links (issue 26 item 4). A notification carries `PUBLIC_URL/approve/
 * {token}` per designated approver; the page reads what will run with `GET
 * /api/agent/v1/approve/{token}` (no sign-in: it never decides and never consumes the token, as
 * scanners and unfurlers fetch links) and decides with `POST /api/agent/v1/approve/{token}/
 * {approve|deny}` as the signed-in approver. At that moment everything is checked again: the token
 * is known, unused and unexpired, the caller is its approver, the approval is still pending with
 * the same action hash, the approver still allowed (approvers.ts); the token is consumed in the
 * decision's own transaction (decide.ts), so a second use decides nothing. Answers carry
 * `Referrer-Policy: no-referrer`.
 * @module
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { getApprovalRecord } from '../db/approval-records.ts';
import { findApprovalLink, linkHash, linkMatchesAction } from '../db/approval-links.ts';
import { AirlockError } from '../errors.ts';
import type { V1Deps } from './deps.ts';
import { v1Caller } from './identity.ts';
import { DecisionBody, parseWith } from './schemas.ts';
import { approvalWire } from './serialize.ts';
import { z } from 'zod';

const TokenParams = z.strictObject({ token: z.string().min(1).max(200) });

const noReferrer = (reply: FastifyReply) => reply.header('referrer-policy', 'no-referrer').header('cache-control', 'no-store');

/** The link of `token` (`found`: already read) if it may still be used now, else the refusal. */
async function usableLink(deps: V1Deps, token: string, found?: Awaited<ReturnType<typeof findApprovalLink>>) {
  const link = found === undefined ? await findApprovalLink(deps.pool, token) : found;
  if (!link) throw new AirlockError('NOT_FOUND', 'This link is not valid.');
  if (link.usedAt) throw new AirlockError('CONFLICT', 'This link was already used.');
  if (link.expiresAt.getTime() <= Date.now()) throw new AirlockError('APPROVAL_EXPIRED', 'This link has expired.');
  const record = await getApprovalRecord(deps.pool, link.approvalId);
  if (!record) throw new AirlockError('NOT_FOUND', 'This link is not valid.');
  return { link, record };
}

/** GET: what the link would decide (public, never consumes). */
export const approvalLinkPreviewRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.get('/approve/:token', async (request, reply) => {
    noReferrer(reply);
    const { token } = parseWith(TokenParams, request.params);
    const { link, record } = await usableLink(deps, token);
    const approver = record.decisions.find((d) => d.userId === link.userId)?.user;
    return { approval: approvalWire(record), link: { expires_at: link.expiresAt.toISOString(), decided: approver !== undefined } };
  });
};

/** POST: the signed-in approver decides by the link. */
export const approvalLinkDecisionRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  for (const decision of ['approve', 'deny'] as const) {
    app.post(`/approve/:token/${decision}`, async (request, reply) => {
      noReferrer(reply);
      const { token } = parseWith(TokenParams, request.params);
      const body = parseWith(DecisionBody, request.body);
      const caller = v1Caller(request);
      const found = await findApprovalLink(deps.pool, token);
      try {
        const { link } = await usableLink(deps, token, found);
        // Another user's session: the link is not theirs, whatever they may decide otherwise.
        if (caller.userId !== link.userId) throw new AirlockError('FORBIDDEN', 'This link belongs to another approver.');
        // The action it was minted for, still: checked here, and again when it is consumed.
        if (!(await linkMatchesAction(deps.pool, link))) throw new AirlockError('CONFLICT', 'The action changed since this link was sent.');
      } catch (error) {
        // A refusal of a real link is an attempt on its approval: audited like the service's own
        // (a forged token names no approval, and is not).
        if (found) await deps.approvals.auditRefused([caller, found.approvalId, decision, body.reason ?? null, 'link'], error).catch((e) => request.log.warn({ err: e }, 'a refused link attempt could not be audited'));
        throw error;
      }
      return approvalWire(await deps.approvals.decide(caller, found!.approvalId, decision, body.reason ?? null, 'link', linkHash(token)));
    });
  }
};
