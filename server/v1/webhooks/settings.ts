/**
 * `APPROVAL_WEBHOOKS` (issue 26 item 3): a JSON list of `{url, secret, format: "json"|"slack",
 * events?}`, given inline (a value starting with `[`) or as the path of a file holding it. A bad
 * value stops the start with a message that names what is wrong, like a bad policy file.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/** `audit.checkpoint` (issue 36 item 3) goes only to endpoints whose `events` name it; the others go to every endpoint that lists none. */
export const WEBHOOK_EVENTS = ['approval.requested', 'approval.progress', 'approval.decided', 'approval.expired', 'approval.escalated', 'audit.checkpoint'] as const;

const Endpoint = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  /** The HMAC key: at least 16 characters. */
  secret: z.string().min(16),
  format: z.enum(['json', 'slack']).default('json'),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).optional(),
});
const Endpoints = z.array(Endpoint);
export type WebhookEndpoint = z.infer<typeof Endpoint>;

export class WebhookSettingsError extends Error {
  override readonly name = 'WebhookSettingsError';
}

/** Pure: the endpoints of a JSON text; throws WebhookSettingsError naming `source` and the mistake. */
export function parseWebhooks(text: string, source: string): WebhookEndpoint[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new WebhookSettingsError(`APPROVAL_WEBHOOKS (${source}) is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = Endpoints.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new WebhookSettingsError(`APPROVAL_WEBHOOKS (${source}) ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The configured endpoints: none when unset; inline JSON when the value starts with `[`; else a file. */
export async function loadWebhooks(value: string | undefined): Promise<WebhookEndpoint[]> {
  const v = value?.trim();
  if (!v) return [];
  if (v.startsWith('[')) return parseWebhooks(v, 'inline');
  let text: string;
  try {
    text = await readFile(v, 'utf8');
  } catch (error) {
    throw new WebhookSettingsError(`APPROVAL_WEBHOOKS file ${v} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  return parseWebhooks(text, v);
}

/** Does any endpoint name `event` (the signer writes checkpoint events only then)? */
export function anyEndpointNames(endpoints: readonly WebhookEndpoint[], event: (typeof WEBHOOK_EVENTS)[number]): boolean {
  return endpoints.some((e) => e.events?.includes(event) ?? false);
}
