/**
 * What an approval card shows besides the arguments (issue 27 items 3 and 4), in the words every
 * transport shares: the preview of the effect and the arguments' human labels (their types are the
 * wire module's); here, the lowest place both the api (which answers dry runs) and the agent (which
 * asks for them) may import, the labels are made from a tool's schema.
 * @module
 */

/** The wire's `preview` ({summary, details?, state_hash}) and `labels` ({argument: label}), declared in the wire module. */
import type { ArgumentLabels } from '../../src/lib/wire/index.ts';

export type { ArgumentLabels, EffectPreview } from '../../src/lib/wire/index.ts';

/** "duration_minutes" -> "Duration minutes"; "dryRun" -> "Dry run". */
export function humanize(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ').trim().toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

/**
 * The labels of a JSON Schema's properties: a property's `title` when it has one, else its name in
 * words. (A `description` is a sentence for the model, too long for a label; the card shows it as help.)
 */
export function argumentLabels(schema: unknown): ArgumentLabels {
  const props = (schema as { properties?: Record<string, { title?: unknown }> } | null)?.properties;
  if (!props || typeof props !== 'object') return {};
  const labels: ArgumentLabels = {};
  for (const [key, prop] of Object.entries(props)) {
    const title = prop && typeof prop.title === 'string' && prop.title.trim() ? prop.title.trim().slice(0, 80) : null;
    labels[key] = title ?? humanize(key);
  }
  return labels;
}
