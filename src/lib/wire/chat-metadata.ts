/**
 * The /chat wire vocabulary: what each yield's `metadata` holds (ARCHITECTURE.md, "The /chat
 * endpoint"; CONTRACTS §4), declared once as zod schemas, with the TypeScript types derived from
 * them, for the server that emits the messages and the UI that reads them.
 *
 * The schemas are strict: a test parses every message the server emits with them, so a field the
 * server adds without adding it here fails. The UI imports only the types (`import type`, erased
 * at build), so zod stays out of the browser bundle (tests/unit/server/architecture.test.ts).
 * @module
 */
import { z } from 'zod';
import { MAX_GRANT_TTL_S } from './decision.ts';
import { ERROR_CODES, type ErrorCode, type ErrorField } from './errors.ts';

const ErrorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

/**
 * A file reference: what the Gradio upload returns and a client sends in `message.files`; on a
 * stored user message and the `attachments` event it also says what the assistant got of it.
 */
export const FileRefSchema = z.strictObject({
  path: z.string().min(1),
  orig_name: z.string().optional(),
  size: z.number().optional(),
  mime_type: z.string().optional(),
  url: z.string().optional(),
  /** Gradio's FileData marker, sent by clients; the gateway drops it. */
  meta: z.strictObject({ _type: z.literal('gradio.FileData') }).optional(),
  kind: z.enum(['text', 'pdf', 'image', 'other']).optional(),
  status: z.enum(['read', 'truncated', 'not_seen', 'not_read', 'failed']).optional(),
  /** Why it was cut or not read, for the user. */
  note: z.string().optional(),
});

/** The tool policy decision that routed a call (`action: caution` flags it). */
export const PolicyStampSchema = z.strictObject({
  scope: z.string(),
  action: z.enum(['allow', 'caution', 'require_approval', 'deny']),
  matched: z.boolean(),
});

/** Why an approval was decided, in v1's words. */
export const APPROVAL_REASONS = ['user_confirmed', 'user_denied', 'approval_timeout', 'superseded_by_new_message', 'state_changed'] as const;

/** An effect's preview (issue 27): the effect in words, optional facts, and the hash of the state it read. */
/** One argument an error is about (errors.ts ErrorField). */
export const ErrorFieldSchema = z.strictObject({ path: z.string(), message: z.string() }) satisfies z.ZodType<ErrorField>;

export const EffectPreviewSchema = z.strictObject({ summary: z.string(), details: z.record(z.string(), z.unknown()).optional(), state_hash: z.string() });

/**
 * An approver's edit of the arguments before approving (issue 27 item 1): the model's proposal,
 * what runs instead, and the RFC 6902 JSON Patch from one to the other.
 */
export const ArgumentsEditSchema = z.strictObject({
  original_args: z.record(z.string(), z.unknown()),
  args: z.record(z.string(), z.unknown()),
  patch: z.array(z.strictObject({ op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']), path: z.string(), value: z.unknown().optional(), from: z.string().optional() })),
});

/** Human labels of a tool's arguments, `{argument: label}` (issue 27). */
export const ArgumentLabelsSchema = z.record(z.string(), z.string());

/** The approval of the same call that a state change closed (denied / state_changed); this card asks again. */
export const ReplacesSchema = z.strictObject({ approval_id: z.string(), reason: z.literal('state_changed') });

/**
 * What approving may also make (issue 27 item 2): a standing grant of at most `max_ttl_s` seconds,
 * by default for `match` ({argument: exact value}). Null on a card: the rule allows no grant.
 */
export const GrantOfferSchema = z.strictObject({ max_ttl_s: z.number().int().positive(), match: z.record(z.string(), z.unknown()) });
export type GrantOffer = z.infer<typeof GrantOfferSchema>;
export type GrantMade = z.infer<typeof GrantMadeSchema>;
/** Who may approve an approval that needs several: the rule's roles and usernames (issue 37 item 4). */
export const ApproversSchema = z.strictObject({ roles: z.array(z.string()), users: z.array(z.string()) });
/** The standing grant a confirm made ("Allow deploys of checkout-api to staging for 1 h", issue 37 item 6). */
export const GrantMadeSchema = z.strictObject({ id: z.string(), match: z.record(z.string(), z.unknown()), ttl_s: z.number().int().positive(), expires_at: z.string() });

/** A call run under a grant, without a card: "allowed by grant `grant_id`, by `grant_by`, until `grant_until`". */
const GRANT_USE = {
  grant_id: z.string().optional(),
  /** The username of whoever made the grant. */
  grant_by: z.string().optional(),
  /** The grant's expiry, ISO 8601. */
  grant_until: z.string().optional(),
};

/* What a person may send with a decision (issue 27; decision.ts has its words and types). */
/** A tool call's arguments as an approver edited them: a JSON object, validated later against the tool's schema. */
export const EditedArgumentsSchema = z.record(z.string().min(1).max(128), z.unknown(), 'arguments must be a JSON object of the tool\'s arguments');

/** "Allow for 1 hour": how long, which argument values it covers (default: the rule's scope values) and for whom. */
export const GrantRequestSchema = z.strictObject(
  {
    ttl_s: z.number('grant.ttl_s must be a number of seconds').int().positive().max(MAX_GRANT_TTL_S, `grant.ttl_s must be at most ${MAX_GRANT_TTL_S}`),
    match: z.record(z.string().min(1).max(128), z.unknown()).optional(),
    scope: z.enum(['user', 'tenant'], 'grant.scope must be "user" or "tenant"').optional(),
  },
  'grant must be {ttl_s, match?, scope?}',
);
export type EditedArguments = z.infer<typeof EditedArgumentsSchema>;
export type GrantRequest = z.infer<typeof GrantRequestSchema>;

/**
 * Where a streamed answer's time went, in milliseconds (issue 28 item 6; CONTRACTS, Server-Timing):
 * on the last message of a /chat turn, as `Server-Timing` says it for answers not streamed.
 */
export const TimingsSchema = z.strictObject({ queue: z.number(), model: z.number(), tools: z.number(), db: z.number(), total: z.number() });

/** The keys Gradio's own clients read on a tool step (`gr.Chatbot` "thoughts"; chat/gradio-view.ts). */
const GRADIO_KEYS = {
  title: z.string().optional(),
  status: z.enum(['pending', 'done']).optional(),
  id: z.string().optional(),
  /** Seconds. */
  duration: z.number().optional(),
  log: z.string().optional(),
};

/**
 * The union, with `wire` added to every kind (what the message carries besides its own fields)
 * and `gradio` to the tool steps.
 */
function metadataUnion<W extends z.ZodRawShape, G extends z.ZodRawShape>(wire: W, gradio: G) {
  return z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('stream_token'), token: z.string(), ...wire }),
    z.strictObject({
      type: z.literal('tool_start'), tool: z.string(), input: z.unknown(), tool_call_id: z.string(),
      policy: PolicyStampSchema.optional(),
      /** The standing grant it ran under, without a card (issue 27). */
      ...GRANT_USE, ...wire, ...gradio,
    }),
    z.strictObject({
      type: z.literal('tool_end'), tool: z.string(), output: z.unknown(), tool_call_id: z.string(), duration_ms: z.number(), ...GRANT_USE, ...wire, ...gradio,
    }),
    z.strictObject({
      type: z.literal('tool_error'), tool: z.string(), error: z.string(), tool_call_id: z.string(), code: ErrorCodeSchema.optional(), ...wire, ...gradio,
    }),
    z.strictObject({
      type: z.literal('confirm_required'),
      prompt: z.string(),
      thread_id: z.string(),
      approval_id: z.string(),
      tool: z.string(),
      input: z.record(z.string(), z.unknown()),
      expires_at: z.string(),
      timeout_s: z.number(),
      /** How many approvers it needs, when more than one (issue 26). */
      approvals_required: z.number().int().min(2).optional(),
      /** Who may give them (issue 37 item 4): the card says whom it waits for. */
      approvers: ApproversSchema.optional(),
      /** Approving needs the approver's passkey (issue 28): the UI decides it through the v1 approve route. */
      step_up: z.literal('passkey').optional(),
      /** The effect's preview, null: the tool has none (issue 27). */
      preview: EffectPreviewSchema.nullable(),
      /** Human labels of the arguments, from the tool's schema (issue 27). */
      labels: ArgumentLabelsSchema,
      replaces: ReplacesSchema.optional(),
      /** The grant an approver may make instead of a one-off Confirm ("Allow for 1 hour"); null: not grantable. */
      grantable: GrantOfferSchema.nullable(),
      ...wire,
    }),
    /** One approver of several approved (issue 26, ledger approval.approved); the approval stays pending. */
    z.strictObject({
      type: z.literal('confirm_progress'),
      approval_id: z.string(),
      /** The approver's username. */
      by: z.string(),
      approved_count: z.number().int().positive(),
      approvals_required: z.number().int().positive(),
      ...wire,
    }),
    z.strictObject({
      type: z.literal('confirm_resolved'),
      result: z.enum(['confirmed', 'denied', 'expired']),
      approval_id: z.string(),
      reason: z.enum(APPROVAL_REASONS).optional(),
      /** Who decided (a username; issue 37 item 3); absent on an expiry. */
      by: z.string().optional(),
      /** Confirmed with the arguments edited (issue 27 item 1): the call ran `edited.args`. */
      edited: ArgumentsEditSchema.optional(),
      /** The confirm also made this standing grant (issue 37 item 6). */
      grant_made: GrantMadeSchema.optional(),
      ...wire,
    }),
    /**
     * `tool_call_id`: the error is one step's (a tool the user may not run), said to the user while
     * the turn goes on; the turn still completes. Without it, the turn itself failed. `fields`: the
     * arguments a VALIDATION_ERROR is about (a confirm's edited arguments), each by its path
     * (`version`, `flags.canary`; '' for the arguments as a whole), so a UI can say it by the field.
     */
    z.strictObject({
      type: z.literal('error'), code: ErrorCodeSchema, detail: z.string(), retryable: z.boolean(), tool_call_id: z.string().optional(),
      fields: z.array(ErrorFieldSchema).optional(),
      ...wire,
    }),
    /** What the model got of each attached file, once, before the answer. */
    z.strictObject({ type: z.literal('attachments'), files: z.array(FileRefSchema), ...wire }),
    /**
     * The message waits behind the running answer (issue 24 item 4): the call stays open and its
     * own turn streams when it starts. `position` 1 is next; `request_id` removes it
     * (DELETE /api/agent/conversations/{id}/queue/{request_id}).
     */
    z.strictObject({ type: z.literal('queued'), position: z.number().int().positive(), request_id: z.string(), ...wire }),
  ]);
}

/** A message's own metadata, as the projection makes it (no conversation yet). */
export const ChatMetadataSchema = metadataUnion({}, {});

/**
 * The metadata as it goes out on /chat: the conversation it belongs to, the turn's `timings` on
 * its last message, and Gradio's keys on tool steps.
 */
export const WireMetadataSchema = metadataUnion({ conversation_id: z.string(), timings: TimingsSchema.optional() }, GRADIO_KEYS);

/** One /chat yield as clients receive it: `content` is the answer so far. */
export const WireMessageSchema = z.strictObject({ role: z.literal('assistant'), content: z.string(), metadata: WireMetadataSchema });

export type FileRef = z.infer<typeof FileRefSchema>;
export type PolicyStamp = z.infer<typeof PolicyStampSchema>;
export type ApprovalReason = (typeof APPROVAL_REASONS)[number];
export type EffectPreview = z.infer<typeof EffectPreviewSchema>;
export type ArgumentLabels = z.infer<typeof ArgumentLabelsSchema>;
export type ArgumentsEdit = z.infer<typeof ArgumentsEditSchema>;
export type Replaces = z.infer<typeof ReplacesSchema>;
export type ChatMetadata = z.infer<typeof ChatMetadataSchema>;
export type WireMetadata = z.infer<typeof WireMetadataSchema>;
export type WireMessage = z.infer<typeof WireMessageSchema>;
export type Timings = z.infer<typeof TimingsSchema>;

/** A yield as the gateway makes it, before Gradio's view adds its keys (server/chat). */
export interface ChatMessage {
  role: 'assistant';
  content: string;
  metadata: ChatMetadata & { conversation_id: string; timings?: Timings };
}
