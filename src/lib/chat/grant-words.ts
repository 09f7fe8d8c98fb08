/**
 * What a standing grant covers, in plain words (issue 37 item 6): the button that makes one says it
 * ("Allow deploys of checkout-api to staging for 1 h"), and so do the resolved card and the Grants
 * tab, so nobody makes or reads a grant wider than they think. Pure; the built-in tools get a
 * sentence of their own, any other tool its argument values.
 * @module
 */

const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** Per built-in tool: the words for its match, and the arguments those words already say. */
const PHRASES: Record<string, { says: readonly string[]; words: (m: Record<string, unknown>) => string }> = {
  deploy_service: {
    says: ['service', 'version', 'environment'],
    words: (m) => `deploys of ${'service' in m ? show(m.service) : 'any service'}${'version' in m ? ` ${show(m.version)}` : ''} to ${'environment' in m ? show(m.environment) : 'any environment'}`,
  },
  start_maintenance: { says: ['service'], words: (m) => `maintenance on ${'service' in m ? show(m.service) : 'any service'}` },
  end_maintenance: { says: ['service'], words: (m) => `ending maintenance on ${'service' in m ? show(m.service) : 'any service'}` },
};

/** "deploys of checkout-api to staging"; "start_maintenance calls with reason = x"; "every my_tool call". */
export function grantScopeText(tool: string, match: Record<string, unknown>): string {
  const phrase = PHRASES[tool];
  const rest = Object.entries(match).filter(([k]) => !phrase?.says.includes(k)).map(([k, v]) => `${k} = ${show(v)}`);
  if (phrase) return `${phrase.words(match)}${rest.length ? ` where ${rest.join(', ')}` : ''}`;
  return rest.length ? `${tool} calls with ${rest.join(', ')}` : `every ${tool} call`;
}

/** "1 h", "8 h", "30 min". */
export function ttlText(ttlS: number): string {
  return ttlS % 3600 === 0 ? `${ttlS / 3600} h` : `${Math.max(1, Math.round(ttlS / 60))} min`;
}

/** The button: "Allow deploys of checkout-api to staging for 1 h". */
export function grantButtonText(tool: string, match: Record<string, unknown>, ttlS: number): string {
  return `Allow ${grantScopeText(tool, match)} for ${ttlText(ttlS)}`;
}

/** The grant lengths a card offers, within the rule's limit. */
export const GRANT_TTLS_S = [3600, 8 * 3600] as const;
