/**
 * The empty state's suggestions for a role (issue 29 item 7), following server/auth/rbac.ts:
 * a viewer reads; an operator also opens maintenance windows and tasks; an admin also deploys.
 * A suggestion the role could not carry out would only lead to a refusal. Pure.
 * @module
 */

const READ = ['Search dashboards for latency', "What's the health of all services?", 'List recent deployments'];
const OPERATE = ['Start maintenance on db-primary for 30 minutes because of a disk upgrade'];
const DEPLOY = ['Deploy checkout-api 2.4.1 to staging'];

/** The prompts offered to a user of this role, ending with "What can you do?". */
export function suggestionsFor(role: string | undefined): string[] {
  const extra = role === 'admin' ? [...OPERATE, ...DEPLOY] : role === 'operator' ? OPERATE : [];
  return [...READ, ...extra, 'What can you do?'];
}
