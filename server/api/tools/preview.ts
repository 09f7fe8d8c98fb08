/**
 * Previews of the built-in effects (issue 27 item 3), pure: the words an approver reads on the card
 * and the hash of the state they describe. The hash covers what the effect would change or meet
 * (the running deployment, a freeze, an active window, the dependents), never the clock, so the same
 * state always hashes the same and any concurrent change alters it. At execution the api reads the
 * state again under the service's lock and refuses a call whose `If-Match` names another hash (412).
 * @module
 */
import { hashJson } from '../../canonical-json.ts';
import type { DeployState, MaintenanceState } from '../../db/effect-state.ts';
import { AirlockError } from '../../errors.ts';
import type { EffectPreview } from '../../operations/index.ts';

/** "2 h ago", "5 min ago", "3 d ago": coarse, for people. */
export function ago(at: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function deployStateHash(state: DeployState): string {
  return hashJson({ op: 'deploy_service', service: state.service, environment: state.environment, current: state.current?.id ?? null, freeze: state.freeze, exists: [state.serviceExists, state.environmentExists] });
}

export function maintenanceStateHash(state: MaintenanceState): string {
  return hashJson({ op: 'start_maintenance', service: state.service, active: state.active?.id ?? null, dependents: state.dependents, exists: state.serviceExists });
}

/**
 * `no_effect: true` when the call would do nothing at all (no such service or environment): the
 * approval then offers no standing grant (issue 37 item 6), since a grant would stand for calls
 * the approver never saw do anything.
 */
const noEffect = (exists: boolean): { no_effect?: true } => (exists ? {} : { no_effect: true });

/** "checkout-api staging: 2.4.0 → 2.4.1; last deploy 2 h ago by admin". */
export function deployPreview(state: DeployState, version: string, now: Date): EffectPreview {
  const where = `${state.service} ${state.environment}`;
  let summary: string;
  if (!state.serviceExists) summary = `${state.service}: no such service; nothing would be deployed`;
  else if (!state.environmentExists) summary = `${state.environment}: no such environment; nothing would be deployed`;
  else if (state.freeze) summary = `${where}: deploy freeze; ${version} would be refused`;
  else if (!state.current) summary = `${where}: nothing deployed yet → ${version} (first deploy)`;
  else summary = `${where}: ${state.current.version} → ${version}${state.current.version === version ? ' (same version again)' : ''}; last deploy ${ago(state.current.at, now)} by ${state.current.deployedBy}`;
  return {
    summary,
    details: {
      current_version: state.current?.version ?? null,
      new_version: version,
      last_deploy: state.current ? { at: state.current.at.toISOString(), by: state.current.deployedBy } : null,
      deploy_freeze: state.freeze,
      ...noEffect(state.serviceExists && state.environmentExists),
    },
    state_hash: deployStateHash(state),
  };
}

/** "db-primary: no maintenance window now; 2 dependent services". */
export function maintenancePreview(state: MaintenanceState, durationMinutes: number, now: Date): EffectPreview {
  const deps = state.dependents.length === 1 ? '1 dependent service' : `${state.dependents.length} dependent services`;
  let summary: string;
  if (!state.serviceExists) summary = `${state.service}: no such service; nothing would start`;
  else if (state.active) summary = `${state.service}: already in maintenance until ${state.active.endsAt.toISOString()} (by ${state.active.createdBy}); a new window would be refused`;
  else summary = `${state.service}: no maintenance window now; ${deps}; ${durationMinutes} min from now`;
  return {
    summary,
    details: { active_window: state.active ? { id: state.active.id, ends_at: state.active.endsAt.toISOString() } : null, dependents: state.dependents, duration_minutes: durationMinutes, ...noEffect(state.serviceExists) },
    state_hash: maintenanceStateHash(state),
  };
}

/**
 * The execution's precondition: with `If-Match`, the state must still hash as the preview said.
 * Without it, nothing to check (calls that had no preview). A quoted ETag form is accepted too.
 */
export function assertStateUnchanged(ifMatch: string | undefined, current: string): void {
  if (!ifMatch) return;
  const expected = ifMatch.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
  if (expected === current) return;
  throw new AirlockError('PRECONDITION_FAILED', 'The state changed since the preview was approved; nothing was done.', {
    details: { expected_state_hash: expected, state_hash: current },
  });
}
