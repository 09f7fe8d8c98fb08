/**
 * Edit, then approve (issue 27 item 1), the card's side: the paused call's arguments as fields a
 * person can change, and the fields read back into the arguments object the confirm sends. Each
 * field keeps its argument's JSON type (a number stays a number); anything that is not a string,
 * number or boolean is edited as JSON. The server checks the result against the tool's schema;
 * this only refuses what cannot be read (a number field that is no number, JSON that does not parse).
 * A number field's `text` is what its input gives: Svelte's `bind:value` on `type="number"` gives a
 * number, or null while the input is empty or holds no number (issue 37 item 2: calling `.trim()` on
 * it threw, and Confirm sent nothing and said nothing); a string from anywhere else is read too.
 * Pure.
 * @module
 */
import { labeledArgs } from './approval-view.ts';
import type { ErrorField } from '../wire/index.ts';

export type EditKind = 'string' | 'number' | 'boolean' | 'json';

export interface EditField {
  key: string;
  label: string;
  kind: EditKind;
  /** What the input shows (and holds while it is edited); a number field's input may hold a number or null. */
  text: string | number | null;
}

const kindOf = (value: unknown): EditKind => (typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'json');

/** The fields of a call's arguments, under their human labels, in the card's order. */
export function editFields(input: unknown, labels: Record<string, string> = {}): EditField[] {
  return labeledArgs(input, labels).map(({ key, label, value }) => {
    const kind = kindOf(value);
    return { key, label, kind, text: kind === 'string' ? (value as string) : JSON.stringify(value) };
  });
}

export type ReadArgs = { ok: true; args: Record<string, unknown> } | { ok: false; errors: Record<string, string> };

/** The fields read back into arguments; per field, why it cannot be read. */
export function readFields(fields: readonly EditField[]): ReadArgs {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    if (f.kind === 'string') args[f.key] = textOf(f.text);
    else if (f.kind === 'boolean') args[f.key] = f.text === 'true';
    else if (f.kind === 'number') {
      const n = numberOf(f.text);
      if (n === null) errors[f.key] = 'a number, please';
      else args[f.key] = n;
    } else {
      try {
        args[f.key] = JSON.parse(textOf(f.text));
      } catch {
        errors[f.key] = 'not valid JSON';
      }
    }
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, args };
}

const textOf = (text: EditField['text']): string => (text === null ? '' : String(text));

/** A number field's value as a finite number, or null: empty, or no number. */
function numberOf(text: EditField['text']): number | null {
  if (typeof text === 'number') return Number.isFinite(text) ? text : null;
  if (text === null || text.trim() === '') return null;
  const n = Number(text.trim());
  return Number.isFinite(n) ? n : null;
}

/**
 * The server's word on edited arguments (a VALIDATION_ERROR's `fields`) placed by the fields: an
 * error about `flags.canary` goes by `flags`; one about the arguments as a whole (path '', an
 * unknown argument), or about an argument with no field here, goes above them.
 */
export function placeFieldErrors(fields: readonly EditField[], errors: readonly ErrorField[]): { byKey: Record<string, string>; general: string[] } {
  const keys = new Set(fields.map((f) => f.key));
  const byKey: Record<string, string> = {};
  const general: string[] = [];
  for (const { path, message } of errors) {
    const key = path.split('.')[0];
    if (key && keys.has(key)) byKey[key] = byKey[key] ? `${byKey[key]}; ${message}` : message;
    else general.push(path ? `${path}: ${message}` : message);
  }
  return { byKey, general };
}

/** The policy's word on a call (POST /api/agent/v1/policy/check), as far as the editor uses it. */
export interface PolicyCheck {
  approvals_required: number;
  should_allow: boolean;
}

/**
 * What the editor says before Confirm when the edited arguments change who must approve (issue 37
 * item 3; decision 6): "With these arguments it needs 2 approvals (now 1).", or that the policy
 * refuses it; null when the edit changes nothing there. `now`: the approvals the card needs.
 */
export function approversNote(now: number, check: PolicyCheck): string | null {
  if (!check.should_allow) return 'The policy refuses this call with these arguments.';
  const needs = Math.max(check.approvals_required, 1);
  if (needs === now) return null;
  return `With these arguments it needs ${needs} approval${needs === 1 ? '' : 's'} (now ${now}).`;
}
