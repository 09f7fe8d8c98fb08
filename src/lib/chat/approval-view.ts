/**
 * What an approval card says besides its question (issue 27 item 4), pure: the preview of the
 * effect, the arguments under human labels, and the risk, so a production target stands out.
 * The server sends `preview` (null: the tool has none) and `labels` on `confirm_required` and the
 * stored card; cards from before that carry neither.
 * @module
 */
import type { ApprovalItem } from './types.ts';

export interface CardPreview {
  summary: string;
  details?: Record<string, unknown>;
}

/**
 * `preview`/`labels`/`replaces`/`grantable`/`step_up`, and an M-of-N approval's `approvals_required`/`approved_by`
 * (issue 26), of a `confirm_required` or stored card, read defensively.
 */
export function cardExtrasOf(card: object): Pick<ApprovalItem, 'preview' | 'labels' | 'replaces' | 'grantable' | 'approvalsRequired' | 'approvedBy' | 'approvers' | 'stepUp'> {
  const m = card as Record<string, unknown>;
  const p = m.preview as { summary?: unknown; details?: unknown } | null | undefined;
  const preview = p === null ? null : p && typeof p.summary === 'string' ? { summary: p.summary, ...(p.details && typeof p.details === 'object' ? { details: p.details as Record<string, unknown> } : {}) } : undefined;
  const labels = m.labels && typeof m.labels === 'object' ? Object.fromEntries(Object.entries(m.labels as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as Record<string, string> : undefined;
  const replaced = (m.replaces as { approval_id?: unknown } | undefined)?.approval_id;
  const g = m.grantable as { max_ttl_s?: unknown; match?: unknown } | null | undefined;
  const grantable = g && typeof g.max_ttl_s === 'number' && g.match && typeof g.match === 'object' ? { maxTtlS: g.max_ttl_s, match: g.match as Record<string, unknown> } : null;
  const approvedBy = Array.isArray(m.approved_by) ? m.approved_by.filter((u): u is string => typeof u === 'string') : [];
  return {
    ...(preview !== undefined ? { preview } : {}), ...(labels ? { labels } : {}), ...(typeof replaced === 'string' ? { replaces: replaced } : {}), ...(grantable ? { grantable } : {}), ...(m.step_up === 'passkey' ? { stepUp: true } : {}),
    ...(typeof m.approvals_required === 'number' ? { approvalsRequired: m.approvals_required, approvedBy, ...approversIn(m.approvers) } : {}),
  };
}

const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : []);

/** Who may approve an approval that needs several (issue 37 item 4), when the card says. */
function approversIn(v: unknown): Pick<ApprovalItem, 'approvers'> {
  const a = v as { roles?: unknown; users?: unknown } | null | undefined;
  return a && typeof a === 'object' ? { approvers: { roles: names(a.roles), users: names(a.users) } } : {};
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Who decided, an edit's arguments before and after (issue 37 item 3) and the grant a confirm made
 * (item 6), of a `confirm_resolved` (`by`, `edited`, `grant_made`) or a stored card (`decided_by`, …), read defensively.
 */
export function decisionOf(message: object): Pick<ApprovalItem, 'decidedBy' | 'edited' | 'grantMade'> {
  const m = message as Record<string, unknown>;
  const by = typeof m.by === 'string' ? m.by : typeof m.decided_by === 'string' ? m.decided_by : '';
  const e = m.edited as { original_args?: unknown; args?: unknown } | undefined;
  const g = m.grant_made as { match?: unknown; ttl_s?: unknown; expires_at?: unknown } | undefined;
  const grantMade = g && isRecord(g.match) && typeof g.ttl_s === 'number' && typeof g.expires_at === 'string' ? { match: g.match, ttlS: g.ttl_s, until: g.expires_at } : null;
  return { ...(by ? { decidedBy: by } : {}), ...(e && isRecord(e.original_args) && isRecord(e.args) ? { edited: { from: e.original_args, to: e.args } } : {}), ...(grantMade ? { grantMade } : {}) };
}

/** The grant of a tool_start/tool_end or stored tool card, when the call ran under one. */
export function grantUseOf(card: object): { grant: { id: string; by: string; until: string } } | Record<string, never> {
  const m = card as Record<string, unknown>;
  return typeof m.grant_id === 'string' ? { grant: { id: m.grant_id, by: typeof m.grant_by === 'string' ? m.grant_by : '', until: typeof m.grant_until === 'string' ? m.grant_until : '' } } : {};
}

/** The arguments as (label, value) rows, in the order the model gave them. */
export function labeledArgs(input: unknown, labels: Record<string, string> = {}): Array<{ key: string; label: string; value: unknown }> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return [];
  return Object.entries(input as Record<string, unknown>).map(([key, value]) => ({ key, label: labels[key] ?? key, value }));
}

const PRODUCTION = /^(prod|production|live)$/i;

/** `high` when the call targets production (any argument naming it), else `normal`. */
export function riskOf(input: unknown): 'high' | 'normal' {
  if (!input || typeof input !== 'object') return 'normal';
  return Object.values(input as Record<string, unknown>).some((v) => typeof v === 'string' && PRODUCTION.test(v.trim())) ? 'high' : 'normal';
}

/**
 * Whether arguments being edited differ from the proposed ones (any key's value, deeply; key
 * order does not count). The card then shows the risk of what will run, and says the preview is
 * of the proposed call: it was read before the pause and an edit is not previewed again.
 */
export function argsChanged(proposed: unknown, edited: Record<string, unknown> | null): boolean {
  return edited !== null && !sameValue(proposed ?? {}, edited);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
