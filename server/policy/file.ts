/**
 * The policy file (`POLICY_FILE`, YAML or JSON, seed 000's shape, with or without the top-level
 * `policy:` key). Unlike the tools file, a bad policy file stops the start: running with a policy
 * other than the one written would allow what the operator meant to deny. The error names the
 * file and the line (start-failure.ts prints it as one line).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { PolicyRulesSchema, type PolicyRules } from './types.ts';

export class PolicyFileError extends Error {
  override readonly name = 'PolicyFileError';
}

type Path = Array<string | number>;

/** The 1-based line of the node at `path` (of the key named by `key`, when given); the nearest ancestor's otherwise. */
function lineOf(doc: Document, lines: LineCounter, path: Path, key?: string): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (!node || typeof node !== 'object' || !('range' in node) || !node.range) continue;
    if (key !== undefined && depth === path.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair && isScalar(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
    }
    // A key whose value failed: point at the key's line (a nested map starts on the next one).
    if (depth > 0) {
      const parent = depth === 1 ? doc.contents : doc.getIn(path.slice(0, depth - 1), true);
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(path[depth - 1]));
        if (pair && isScalar(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
      }
    }
    const range = (node as { range?: [number, number, number] }).range;
    return range ? lines.linePos(range[0]).line : 1;
  }
  return 1;
}

function describeIssue(issue: z.core.$ZodIssue): { key?: string; text: string } {
  const where = issue.path.join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    return { key, text: `unknown key "${key}"${issue.path.length ? ` in ${where}` : ''} (expected default_action, tool_rules, tenant_rules, user_rules, service_rules; tenant and user entries hold "tools", service entries "user_key_only")` };
  }
  // A rule's own mistake (rule.ts), its key named for the line.
  if (issue.code === 'custom') {
    const key = (issue.params as { key?: string } | undefined)?.key;
    return { ...(key ? { key } : {}), text: `${where}: ${issue.message}` };
  }
  if (issue.code === 'invalid_value') return { text: `${where}: expected one of ${issue.values.join(', ')}` };
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return { text: `${where}: missing` };
  // A record key that fails its own check (user_rules keys are tenant:username) nests its reason.
  if (issue.code === 'invalid_key') return { text: `${where}: ${issue.issues[0]?.message ?? issue.message}` };
  return { text: `${where}: ${issue.message}` };
}

/** Parses the text of a policy file; throws PolicyFileError naming `source` and the line. */
export function parsePolicyText(text: string, source: string): PolicyRules {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = syntax.linePos?.[0]?.line ?? 1;
    throw new PolicyFileError(`the policy file ${source} line ${line}: not valid YAML or JSON: ${syntax.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}. Fix it or unset POLICY_FILE.`);
  }
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) throw new PolicyFileError(`the policy file ${source} line 1: the file is empty. Fix it or unset POLICY_FILE.`);
  const wrapped = typeof raw === 'object' && !Array.isArray(raw) && 'policy' in raw;
  if (wrapped && Object.keys(raw).length > 1) {
    const extra = Object.keys(raw).find((k) => k !== 'policy')!;
    throw new PolicyFileError(`the policy file ${source} line ${lineOf(doc, lines, [], extra)}: unknown key "${extra}" next to "policy". Fix it or unset POLICY_FILE.`);
  }
  const prefix: Path = wrapped ? ['policy'] : [];
  const parsed = PolicyRulesSchema.safeParse(wrapped ? (raw as { policy: unknown }).policy : raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const { key, text: what } = describeIssue(issue);
    const path = [...prefix, ...(issue.path as Path)];
    throw new PolicyFileError(`the policy file ${source} line ${lineOf(doc, lines, path, key)}: ${what}. Fix it or unset POLICY_FILE.`);
  }
  return parsed.data;
}

/** Reads `POLICY_FILE`; unset: no rules (the built-in defaults alone). */
export async function loadPolicyFile(path: string | undefined): Promise<PolicyRules | null> {
  if (!path) return null;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new PolicyFileError(`the policy file ${path} cannot be read (${code}). Fix POLICY_FILE or unset it.`);
  }
  return parsePolicyText(text, path);
}
