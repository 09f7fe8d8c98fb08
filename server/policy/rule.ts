/**
 * One rule of the policy file, at every rule level (user_rules, tenant_rules, tool_rules): an
 * action, or an object, or a list of them where the first match wins (issue 26, Decisions):
 *
 *   deploy_service:
 *     - action: require_approval
 *       when: {environment: production}
 *       approvals: {count: 2, roles: [admin], distinct_from_requester: true}
 *       escalate: {after_s: 600, roles: [admin]}
 *       timeout_s: 1800
 *       grantable: false
 *     - require_approval
 *
 * Pure: validation with a clear message per mistake (file.ts adds the file and the line), the
 * normal form every reader uses (`ruleEntries`), and the match on a call's arguments. `when`
 * compares each named argument with strict equality to a scalar, or to one of a list of scalars; a
 * missing argument never matches. The fields `grantable`, `max_grant_s` (grants, issue 27) and
 * `step_up` (issue 28) are validated here for those readers.
 * @module
 */
import { USER_ROLES, type UserRole } from '../auth/index.ts';
import { TOOL_ACTIONS, type ToolAction } from './actions.ts';

export type Scalar = string | number | boolean | null;

/** The approvers a rule asks for. No roles and no users: the default (the requester and the tenant's admins). */
export interface ApprovalsRequirement {
  count: number;
  roles: UserRole[];
  users: string[];
  distinct_from_requester: boolean;
}

/** A rule entry in its normal form. Fields the file left out stay undefined (approvals: count 1, default approvers). */
export interface PolicyRule {
  action: ToolAction;
  when?: Record<string, Scalar[]>;
  approvals?: ApprovalsRequirement;
  escalate?: { after_s: number; roles: UserRole[] };
  timeout_s?: number;
  grantable?: boolean;
  max_grant_s?: number;
  step_up?: 'passkey';
}

/** A rule as the file may write it (validated by `ruleIssues`, kept as written for GET /policy). */
export type ToolRule = ToolAction | RuleObject | Array<ToolAction | RuleObject>;
export interface RuleObject {
  action: ToolAction;
  when?: Record<string, Scalar | Scalar[]>;
  approvals?: { count: number; roles?: UserRole[]; users?: string[]; distinct_from_requester?: boolean };
  escalate?: { after_s: number; roles: UserRole[] };
  timeout_s?: number;
  grantable?: boolean;
  max_grant_s?: number;
  step_up?: 'passkey';
}

/** The longest a pending approval may wait by a rule's timeout_s (7 days). */
export const MAX_RULE_TIMEOUT_S = 7 * 24 * 3600;
/** The longest grant a rule may allow (issue 27: at most 8 h). */
export const MAX_GRANT_S = 8 * 3600;
/** The most approvals a rule may ask for. */
export const MAX_APPROVALS = 10;

const RULE_KEYS = ['action', 'when', 'approvals', 'escalate', 'timeout_s', 'grantable', 'max_grant_s', 'step_up'] as const;
const APPROVALS_KEYS = ['count', 'roles', 'users', 'distinct_from_requester'] as const;
const ESCALATE_KEYS = ['after_s', 'roles'] as const;

export interface RuleIssue {
  /** Relative to the rule. */
  path: Array<string | number>;
  message: string;
  /** The offending key, for its line. */
  key?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is Scalar => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const isPositiveInt = (v: unknown, max: number): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= max;

/** Pure: every mistake in one rule (empty: valid). */
export function ruleIssues(rule: unknown): RuleIssue[] {
  if (Array.isArray(rule)) {
    if (rule.length === 0) return [{ path: [], message: 'an empty list of rules: write at least one' }];
    const issues = rule.flatMap((entry, i) => entryIssues(entry).map((x) => ({ ...x, path: [i, ...x.path] })));
    // An entry after one with no `when` can never be reached: most likely a mistake in the order.
    const catchAll = rule.findIndex((e) => typeof e === 'string' || (isObject(e) && e.when === undefined));
    if (catchAll >= 0 && catchAll < rule.length - 1) issues.push({ path: [catchAll + 1], message: `never reached: entry ${catchAll} has no "when" and matches every call (the first match wins)` });
    return issues;
  }
  return entryIssues(rule);
}

function entryIssues(entry: unknown): RuleIssue[] {
  if (typeof entry === 'string' || !isObject(entry)) {
    return (TOOL_ACTIONS as readonly unknown[]).includes(entry) ? [] : [{ path: [], message: `expected one of ${TOOL_ACTIONS.join(', ')}, or a rule {action, when?, approvals?, …}, or a list of them` }];
  }
  const issues: RuleIssue[] = [];
  const add = (path: Array<string | number>, message: string, key?: string) => issues.push({ path, message, ...(key ? { key } : {}) });
  for (const key of Object.keys(entry)) if (!(RULE_KEYS as readonly string[]).includes(key)) add([], `unknown key "${key}" (a rule holds ${RULE_KEYS.join(', ')})`, key);
  const action = entry.action;
  if (action === undefined) add(['action'], 'missing');
  else if (!(TOOL_ACTIONS as readonly unknown[]).includes(action)) add(['action'], `expected one of ${TOOL_ACTIONS.join(', ')}`);
  const approval = action === 'require_approval';
  const onlyWithApproval = (key: string) => {
    if (entry[key] !== undefined && action !== undefined && !approval) add([key], `only a require_approval rule has ${key} (this one is ${String(action)})`, key);
  };

  if (entry.when !== undefined) {
    if (!isObject(entry.when) || Object.keys(entry.when).length === 0) add(['when'], 'expected {<argument>: value or [values]} naming at least one argument');
    else {
      for (const [arg, want] of Object.entries(entry.when)) {
        const ok = isScalar(want) || (Array.isArray(want) && want.length > 0 && want.every(isScalar));
        if (!ok) add(['when', arg], 'expected a string, number, boolean or null, or a non-empty list of them');
      }
    }
  }

  if (entry.approvals !== undefined) {
    onlyWithApproval('approvals');
    const a = entry.approvals;
    if (!isObject(a)) add(['approvals'], `expected {count, roles?, users?, distinct_from_requester?}`);
    else {
      for (const key of Object.keys(a)) if (!(APPROVALS_KEYS as readonly string[]).includes(key)) add(['approvals'], `unknown key "${key}" (approvals hold ${APPROVALS_KEYS.join(', ')})`, key);
      if (a.count === undefined) add(['approvals', 'count'], 'missing');
      else if (!isPositiveInt(a.count, MAX_APPROVALS)) add(['approvals', 'count'], `expected a whole number from 1 to ${MAX_APPROVALS} (approval needs at least one approver)`);
      if (a.roles !== undefined) rolesIssues(a.roles, ['approvals', 'roles'], add);
      if (a.users !== undefined && !(Array.isArray(a.users) && a.users.length > 0 && a.users.every((u) => typeof u === 'string' && u.length > 0))) add(['approvals', 'users'], 'expected a non-empty list of usernames');
      if (a.distinct_from_requester !== undefined && typeof a.distinct_from_requester !== 'boolean') add(['approvals', 'distinct_from_requester'], 'expected true or false');
      // Only named users and no role: there must be enough of them to reach the count.
      if (a.roles === undefined && Array.isArray(a.users) && isPositiveInt(a.count, MAX_APPROVALS) && new Set(a.users).size < a.count) {
        add(['approvals', 'count'], `${a.count} approvals, but only ${new Set(a.users).size} users named and no roles: it could never be approved`);
      }
    }
  }

  if (entry.escalate !== undefined) {
    onlyWithApproval('escalate');
    const e = entry.escalate;
    if (!isObject(e)) add(['escalate'], 'expected {after_s, roles}');
    else {
      for (const key of Object.keys(e)) if (!(ESCALATE_KEYS as readonly string[]).includes(key)) add(['escalate'], `unknown key "${key}" (escalate holds after_s, roles)`, key);
      if (e.after_s === undefined) add(['escalate', 'after_s'], 'missing');
      else if (!isPositiveInt(e.after_s, MAX_RULE_TIMEOUT_S)) add(['escalate', 'after_s'], `expected whole seconds from 1 to ${MAX_RULE_TIMEOUT_S}`);
      if (e.roles === undefined) add(['escalate', 'roles'], 'missing');
      else rolesIssues(e.roles, ['escalate', 'roles'], add);
      if (isPositiveInt(e.after_s, MAX_RULE_TIMEOUT_S) && isPositiveInt(entry.timeout_s, MAX_RULE_TIMEOUT_S) && e.after_s >= entry.timeout_s) {
        add(['escalate', 'after_s'], `${e.after_s} s is not before the timeout (${entry.timeout_s} s): it would never escalate`);
      }
    }
  }

  if (entry.timeout_s !== undefined) {
    onlyWithApproval('timeout_s');
    if (!isPositiveInt(entry.timeout_s, MAX_RULE_TIMEOUT_S)) add(['timeout_s'], `expected whole seconds from 1 to ${MAX_RULE_TIMEOUT_S}`);
  }

  if (entry.step_up !== undefined) {
    onlyWithApproval('step_up');
    if (entry.step_up !== 'passkey') add(['step_up'], 'expected "passkey"');
  }

  // Grants (issue 27): never for two approvers or a step-up, nor for anything but an approval.
  const strict = (isObject(entry.approvals) && typeof entry.approvals.count === 'number' && entry.approvals.count > 1) || entry.step_up !== undefined;
  if (entry.grantable !== undefined) {
    onlyWithApproval('grantable');
    if (typeof entry.grantable !== 'boolean') add(['grantable'], 'expected true or false');
    else if (entry.grantable && strict) add(['grantable'], 'a rule with approvals.count > 1 or step_up is never grantable');
  }
  if (entry.max_grant_s !== undefined) {
    onlyWithApproval('max_grant_s');
    if (!isPositiveInt(entry.max_grant_s, MAX_GRANT_S)) add(['max_grant_s'], `expected whole seconds from 1 to ${MAX_GRANT_S} (8 h)`);
    else if (entry.grantable === false || strict) add(['max_grant_s'], 'this rule is not grantable, so a grant length means nothing');
  }
  return issues;
}

function rolesIssues(roles: unknown, path: Array<string | number>, add: (path: Array<string | number>, message: string) => void): void {
  if (!Array.isArray(roles) || roles.length === 0) return add(path, `expected a non-empty list of roles (${USER_ROLES.join(', ')})`);
  roles.forEach((r, i) => {
    if (!(USER_ROLES as readonly unknown[]).includes(r)) add([...path, i], `unknown role ${JSON.stringify(r)} (expected ${USER_ROLES.join(', ')})`);
  });
}

/** Pure: a valid rule in its normal form, a list of entries (first match wins). */
export function ruleEntries(rule: ToolRule): PolicyRule[] {
  return (Array.isArray(rule) ? rule : [rule]).map(normalEntry);
}

function normalEntry(entry: ToolAction | RuleObject): PolicyRule {
  if (typeof entry === 'string') return { action: entry };
  const { when, approvals, ...rest } = entry;
  return {
    ...rest,
    ...(when ? { when: Object.fromEntries(Object.entries(when).map(([arg, v]) => [arg, Array.isArray(v) ? v : [v]])) } : {}),
    ...(approvals
      ? { approvals: { count: approvals.count, roles: approvals.roles ?? [], users: approvals.users ?? [], distinct_from_requester: approvals.distinct_from_requester ?? false } }
      : {}),
  };
}

/** Pure: does this entry apply to a call with `args`? No `when`: every call. */
export function ruleMatches(rule: PolicyRule, args: Readonly<Record<string, unknown>>): boolean {
  if (!rule.when) return true;
  return Object.entries(rule.when).every(([arg, values]) => Object.hasOwn(args, arg) && values.some((v) => v === args[arg]));
}

/** Pure: the first entry of `rule` matching `args`, with its index; none: undefined (the next level decides). */
export function firstMatch(rule: ToolRule, args: Readonly<Record<string, unknown>>): { entry: PolicyRule; index: number } | undefined {
  const entries = ruleEntries(rule);
  const index = entries.findIndex((e) => ruleMatches(e, args));
  return index < 0 ? undefined : { entry: entries[index], index };
}

/** Pure: the `when` of an entry in words, for a decision's reason (`environment=production`). */
export function whenText(rule: PolicyRule): string {
  if (!rule.when) return '';
  return Object.entries(rule.when)
    .map(([arg, values]) => `${arg}=${values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('|')}`)
    .join(', ');
}

/**
 * What an approval asks for under a rule, carried with the paused call into its approval row:
 * how many approvers and which, how long it may wait, whom to notify when nobody answers.
 * Absent fields: the defaults (one approver, the requester or an admin; the configured timeout).
 */
export interface ApprovalTerms {
  approvals?: ApprovalsRequirement;
  timeout_s?: number;
  escalate?: { after_s: number; roles: UserRole[] };
  /** Each approver signs the action's hash with a registered passkey when approving (issue 28). */
  step_up?: 'passkey';
}

/**
 * Pure: how long a grant may let this rule's calls run without a card (issue 27 item 2), in seconds;
 * 0: never (not an approval rule, `grantable: false`, more than one approver, or a step-up).
 */
export function grantLimitS(rule: PolicyRule): number {
  if (rule.action !== 'require_approval' || rule.grantable === false || rule.step_up || (rule.approvals?.count ?? 1) > 1) return 0;
  return rule.max_grant_s ?? MAX_GRANT_S;
}

/** What an approval offers its approver besides Confirm (issue 27): a grant of at most `max_ttl_s`, by default for `match`. */
export interface GrantOffer {
  max_ttl_s: number;
  /** {argument: exact value}: the call's values of the arguments the rule and the tool mark as scope. */
  match: Record<string, unknown>;
}

/**
 * Pure: the grant an approval of this call may offer, or null when its rule is not grantable. The
 * default match is the call's exact values of the scope arguments: those the rule's `when` names,
 * and those the tool itself marks (`toolScope`, e.g. deploy_service's environment). With neither,
 * every argument: the grant then covers this exact call and nothing wider. Null as well when that
 * match would be empty under a rule without `when` (a call with no arguments): it would cover every call.
 */
export function grantOffer(rule: PolicyRule, args: Readonly<Record<string, unknown>>, toolScope: readonly string[] = []): GrantOffer | null {
  const max = grantLimitS(rule);
  if (max <= 0) return null;
  const named = new Set([...Object.keys(rule.when ?? {}), ...toolScope]);
  const keys = named.size > 0 ? [...named].filter((k) => Object.hasOwn(args, k)) : Object.keys(args);
  // An empty match of a rule without `when` would cover every call of the tool (issue 36): none.
  if (keys.length === 0 && !rule.when) return null;
  return { max_ttl_s: max, match: Object.fromEntries(keys.sort().map((k) => [k, args[k]])) };
}

/** Pure: the terms of a deciding rule entry (nothing for the defaults). */
export function approvalTermsOf(rule: PolicyRule): ApprovalTerms | undefined {
  if (rule.action !== 'require_approval') return undefined;
  const terms: ApprovalTerms = {
    ...(rule.approvals ? { approvals: rule.approvals } : {}),
    ...(rule.timeout_s ? { timeout_s: rule.timeout_s } : {}),
    ...(rule.escalate ? { escalate: rule.escalate } : {}),
    ...(rule.step_up ? { step_up: rule.step_up } : {}),
  };
  return Object.keys(terms).length ? terms : undefined;
}
