/**
 * The headless API's request shapes (seed 000), validated with zod at the edge. Unknown fields are
 * ignored (the seed's consumers must tolerate them, and so do we): model, temperature, skills…
 * As at the REST edge (http/validate.ts), what PostgreSQL would refuse is a VALIDATION_ERROR here,
 * never a 500: U+0000 in any string or key, a body nested deeper than MAX_NESTING, and `metadata`
 * (stored as jsonb, echoed on every read) nested deeper than METADATA_MAX_DEPTH.
 * @module
 */
import { z } from 'zod';
import { EditedArgumentsSchema } from '../../src/lib/wire/chat-metadata.ts';
import type { ToolPolicy } from '../agent/run-tool-allowlist.ts';
import { AirlockError } from '../errors.ts';
import { MAX_NESTING, pathDeeperThan, pathOfNul } from '../http/validate.ts';
import { GrantRequestSchema } from '../../src/lib/wire/chat-metadata.ts';

/** Deepest `metadata` a run may carry: the object itself is level 1 (issue 30). */
export const METADATA_MAX_DEPTH = 32;

const Message = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).passthrough())]),
});

const ToolPolicySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('none') }).passthrough(),
  z.object({ mode: z.literal('allowlist'), allowed_tools: z.array(z.string().min(1).max(200)).max(500) }).passthrough(),
]);

const Uuid = z.uuid();
/** Whether a session_id is a conversation id (else the caller's alias of one). */
export const isUuid = (value: string): boolean => Uuid.safeParse(value).success;

/** Seed 000's opaque ids (issue 24): 1-128 characters of [A-Za-z0-9._:-]. */
export const OPAQUE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const OpaqueId = z.string().regex(OPAQUE_ID, 'must be 1-128 characters of A-Z a-z 0-9 . _ : -');

export const CompletionRequest = z.object({
  messages: z.array(Message).min(1).max(200),
  stream: z.boolean().default(false),
  /** stream:true: `end` (default) follows the run through an approval pause to its end; `pause` ends the stream at the pause (issue 24). */
  stream_until: z.enum(['end', 'pause']).default('end'),
  /** A conversation id (a UUID), or the caller's own name for one (an alias, issue 24). */
  session_id: OpaqueId.nullish(),
  user_key: z.string().max(200).nullish(),
  tool_policy: ToolPolicySchema.nullish(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** Pure: the text of a message's content. */
function textOf(content: z.infer<typeof Message>['content']): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

export interface RunRequest {
  /** The turn's words: the last user message. */
  text: string;
  /** The caller's system messages, joined (put before the agent's own). */
  system: string | null;
  /** session_id when it is a UUID (a conversation id), lower-cased; else null until resolved (sessions.ts). */
  sessionId: string | null;
  /** session_id when it is not a UUID: the caller's alias of a conversation, echoed as session_id. */
  sessionRef: string | null;
  userKey: string | null;
  toolPolicy: ToolPolicy | null;
  metadata: Record<string, unknown>;
  /** metadata.run_id: the caller's id for the run (an opaque string, issue 24), else a UUID is generated. */
  runId: string | null;
  stream: boolean;
  /** stream:true: follow the run to its end (`end`) or stop at an approval pause (`pause`). */
  streamUntil: 'end' | 'pause';
}

/** A VALIDATION_ERROR for one field, in this API's shape (`path: message`, details). */
function invalid(path: string, message: string): AirlockError {
  return new AirlockError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });
}

/** Pure: the first thing PostgreSQL would refuse in a parsed body, as a VALIDATION_ERROR, else null. */
export function unstorable(value: unknown): AirlockError | null {
  const nul = pathOfNul(value);
  return nul === null ? null : invalid(nul || 'body', 'must not contain the NUL character');
}

/** Parses a completion / run body; VALIDATION_ERROR naming the first problem. */
export function parseRunRequest(body: unknown): RunRequest {
  const tooDeep = pathDeeperThan(body, MAX_NESTING);
  if (tooDeep !== null) throw invalid(tooDeep, `must not nest deeper than ${MAX_NESTING} levels`);
  const parsed = CompletionRequest.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AirlockError('VALIDATION_ERROR', `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`, {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const r = parsed.data;
  const deepMetadata = pathDeeperThan(r.metadata, METADATA_MAX_DEPTH);
  if (deepMetadata !== null) throw invalid(`metadata.${deepMetadata}`, `must not nest deeper than ${METADATA_MAX_DEPTH} levels`);
  const nul = unstorable(r);
  if (nul) throw nul;
  const user = r.messages.findLast((m) => m.role === 'user');
  const text = user ? textOf(user.content).trim() : '';
  if (!text) throw new AirlockError('VALIDATION_ERROR', 'messages must include a non-empty user message.');
  const system = r.messages.filter((m) => m.role === 'system').map((m) => textOf(m.content).trim()).filter(Boolean).join('\n\n') || null;
  const runId = r.metadata.run_id;
  if (runId !== undefined && runId !== null && (typeof runId !== 'string' || !OPAQUE_ID.test(runId))) throw invalid('metadata.run_id', 'must be 1-128 characters of A-Z a-z 0-9 . _ : -');
  const policy = r.tool_policy;
  return {
    text,
    system,
    sessionId: r.session_id && Uuid.safeParse(r.session_id).success ? r.session_id.toLowerCase() : null,
    sessionRef: r.session_id && !Uuid.safeParse(r.session_id).success ? r.session_id : null,
    userKey: r.user_key ?? null,
    toolPolicy: !policy ? null : policy.mode === 'none' ? { mode: 'none' } : { mode: 'allowlist', allowedTools: [...new Set(policy.allowed_tools)] },
    metadata: r.metadata,
    runId: (runId as string | undefined) ?? null,
    stream: r.stream,
    streamUntil: r.stream_until,
  };
}

/** Wire form of a stored policy (the seed's snake_case). */
export function toolPolicyWire(policy: ToolPolicy | null): Record<string, unknown> | null {
  if (!policy) return null;
  return policy.mode === 'none' ? { mode: 'none' } : { mode: 'allowlist', allowed_tools: policy.allowedTools };
}

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  status: z.string().max(40).optional(),
  /** GET /runs: the run_id after which the page starts (the previous page's next_before). */
  before: OpaqueId.optional(),
});

/** GET /approvals: the list's query, plus `session_id` (a conversation id or the caller's alias of one). */
export const ApprovalsQuery = ListQuery.extend({ session_id: OpaqueId.optional() });

export const EventsQuery = z.object({
  after_sequence: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/**
 * A step-up approval's passkey signature (issue 28): the nonce the server issued for it
 * (POST …/approvals/{id}/passkey-challenge) and the browser's WebAuthn assertion as
 * @simplewebauthn/browser's startAuthentication returns it (AuthenticationResponseJSON; the
 * browser's own parts may carry fields of their own).
 */
export const PasskeyAssertion = z.strictObject(
  {
    nonce: z.string().min(1).max(128),
    response: z.looseObject({
      id: z.string().min(1).max(1024),
      rawId: z.string().min(1).max(1024),
      type: z.literal('public-key'),
      response: z.looseObject({
        clientDataJSON: z.string().min(1).max(8192),
        authenticatorData: z.string().min(1).max(8192),
        signature: z.string().min(1).max(1024),
        userHandle: z.string().max(1024).optional(),
      }),
      clientExtensionResults: z.looseObject({}),
      authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
    }),
  },
  'passkey must be {nonce, response}: the WebAuthn assertion over the challenge the server issued',
);

/** Registering a passkey (the settings page): the authenticator's answer (RegistrationResponseJSON) and a name. */
export const PasskeyRegistration = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  response: z.looseObject({
    id: z.string().min(1).max(1024),
    rawId: z.string().min(1).max(1024),
    type: z.literal('public-key'),
    response: z.looseObject({ clientDataJSON: z.string().min(1).max(8192), attestationObject: z.string().min(1).max(65536) }),
    clientExtensionResults: z.looseObject({}),
  }),
});

/** Unknown fields are refused, never ignored: a decision must mean exactly what it says. */
export const DecisionBody = z.strictObject({ reason: z.string().max(2000).nullish(), passkey: PasskeyAssertion.optional() });
/** `approve` alone may also make a standing grant (issue 27: "Allow for 1 hour"); a link or a deny never does. */
/** approve: `arguments`, the arguments as the approver edited them (issue 27 item 1); a deny refuses it (400, strict). */
export const ApproveBody = DecisionBody.extend({ grant: GrantRequestSchema.optional(), arguments: EditedArgumentsSchema.optional() });
/** passkey-challenge: `arguments`, the edit an approve will carry (its final action hash is what the passkey signs; issue 36). */
export const ChallengeBody = z.strictObject({ arguments: EditedArgumentsSchema.optional() });

export const IdParams = z.object({ id: z.string().min(1).max(128) });

/** Parses with a zod schema; VALIDATION_ERROR on failure, and on NUL anywhere in what it keeps. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) {
    const nul = unstorable(parsed.data);
    if (nul) throw nul;
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  throw new AirlockError('VALIDATION_ERROR', `${issue?.path.join('.') || 'request'}: ${issue?.message ?? 'invalid'}`);
}
