/**
 * The tool policy decision, pure and table-tested (tests/unit/server/policy/decide.test.ts).
 *
 *   user_rules[tenant:username].tools[tool]   -> that rule          (may lower the built-in)
 *   tenant_rules[tenant].tools[tool]          -> that rule          (may lower the built-in)
 *   tool_rules[tool]                          -> that rule          (may lower the built-in)
 *   default_action                            -> that action, unless the built-in is stricter
 *   no default_action                         -> the built-in default
 *
 * The built-in default is the tool's own need (issue 11, Decisions): the catalog's dangerous
 * operations and MCP tools without a read-only hint need approval. It is a floor that only a rule
 * naming the tool lowers: a blanket `default_action: allow` must never switch off the approval of
 * a deploy, while `tool_rules: {deploy_service: allow}` says exactly that and is obeyed.
 * A rule may be a list with `when` conditions on the call's arguments (rule.ts): at each level the
 * first entry matching the arguments decides; a level where none matches passes to the next.
 * @module
 */
import { firstMatch, ruleEntries, whenText, type PolicyRule, type ToolRule } from './rule.ts';
import { TOOL_ACTIONS, type PolicyDecision, type PolicyRules, type PolicySubject, type ToolAction } from './types.ts';

/** How strict an action is (allow 0 … deny 3). */
export function strictness(action: ToolAction): number {
  return TOOL_ACTIONS.indexOf(action);
}

const VERB: Record<ToolAction, string> = { allow: 'allows', caution: 'allows with caution', require_approval: 'requires approval for', deny: 'denies' };

export function userKey(s: PolicySubject): string {
  return `${s.tenant}:${s.username}`;
}

/** The rules naming `tool` for `subject`, most specific first. */
function namedRules(rules: PolicyRules, subject: PolicySubject, tool: string): Array<{ level: 'user' | 'tenant' | 'tool'; scope: string; rule: ToolRule }> {
  const key = userKey(subject);
  const levels = [
    { level: 'user' as const, scope: `user:${key}`, rule: rules.user_rules[key]?.tools[tool] },
    { level: 'tenant' as const, scope: `tenant:${subject.tenant}`, rule: rules.tenant_rules[subject.tenant]?.tools[tool] },
    { level: 'tool' as const, scope: `tool:${tool}`, rule: rules.tool_rules[tool] },
  ];
  return levels.filter((l): l is typeof l & { rule: ToolRule } => l.rule !== undefined);
}

/**
 * The decision for `tool` called by `subject` with `args`, given the tool's built-in default.
 * Without `args` (a listing with no call) `when` entries match nothing.
 */
export function decideToolPolicy(rules: PolicyRules | null, subject: PolicySubject, tool: string, builtin: ToolAction, args: Readonly<Record<string, unknown>> = {}): PolicyDecision {
  if (rules) {
    for (const { level, scope, rule } of namedRules(rules, subject, tool)) {
      const hit = firstMatch(rule, args);
      if (!hit) continue;
      const when = whenText(hit.entry);
      return {
        tool, action: hit.entry.action, scope, level, matched: true,
        reason: `Policy ${scope} ${VERB[hit.entry.action]} ${tool}${when ? ` when ${when}` : ''}`,
        rule: hit.entry, ...(Array.isArray(rule) ? { entry: hit.index } : {}),
      };
    }
    const fallback = rules.default_action;
    if (fallback && strictness(fallback) >= strictness(builtin)) {
      return { tool, action: fallback, scope: 'default', level: 'default', matched: true, reason: `Policy default_action ${VERB[fallback]} ${tool}`, rule: { action: fallback } };
    }
    if (fallback) {
      return { tool, action: builtin, scope: 'builtin', level: 'builtin', matched: false, reason: `Built-in: ${tool} ${builtinWhy(builtin)}; default_action ${fallback} does not lower it`, rule: { action: builtin } };
    }
  }
  return { tool, action: builtin, scope: 'builtin', level: 'builtin', matched: false, reason: `Built-in: ${tool} ${builtinWhy(builtin)}`, rule: { action: builtin } };
}

/**
 * Every action a call of `tool` may get, whatever its arguments: the entries up to the first one
 * with no `when`, level by level, then the default. Who must hold a tool's start until it is
 * known whether the call pauses asks this (agent/events.ts).
 */
export function possibleActions(rules: PolicyRules | null, subject: PolicySubject, tool: string, builtin: ToolAction): Set<ToolAction> {
  const actions = new Set<ToolAction>();
  if (rules) {
    for (const { rule } of namedRules(rules, subject, tool)) {
      for (const entry of ruleEntries(rule)) {
        actions.add(entry.action);
        if (!entry.when) return actions;
      }
    }
  }
  // No entry matched on any level: default_action, unless the built-in is stricter.
  const fallback = rules?.default_action;
  actions.add(fallback && strictness(fallback) >= strictness(builtin) ? fallback : builtin);
  return actions;
}

export type { PolicyRule };

function builtinWhy(action: ToolAction): string {
  if (action === 'require_approval') return 'acts on systems and needs approval';
  if (action === 'caution') return 'may change state and runs with caution';
  if (action === 'deny') return 'is denied';
  return 'is read-only and allowed';
}

/** The dry-run's `level` (seed 000): how dangerous the call is, from the decided action. */
export function riskLevel(action: ToolAction): 'safe' | 'caution' | 'danger' | 'forbidden' {
  return ({ allow: 'safe', caution: 'caution', require_approval: 'danger', deny: 'forbidden' } as const)[action];
}

/**
 * Tool names the rules mention that match no tool the agent has (`known`), nor a tool of a
 * configured MCP server (`<server>_…`, whose list may not be loaded yet): most likely typos, and a
 * misspelt deny denies nothing. Sorted, each with where it was named.
 */
export function unknownRuleTools(rules: PolicyRules | null, known: ReadonlySet<string>, mcpPrefixes: readonly string[] = []): string[] {
  if (!rules) return [];
  const named = [
    ...Object.keys(rules.tool_rules).map((t) => [t, 'tool_rules'] as const),
    ...Object.entries(rules.tenant_rules).flatMap(([tenant, r]) => Object.keys(r.tools).map((t) => [t, `tenant_rules.${tenant}`] as const)),
    ...Object.entries(rules.user_rules).flatMap(([key, r]) => Object.keys(r.tools).map((t) => [t, `user_rules.${key}`] as const)),
  ];
  return named
    .filter(([tool]) => !known.has(tool) && !mcpPrefixes.some((p) => tool.startsWith(p)))
    .map(([tool, where]) => `${tool} (${where})`)
    .sort();
}
