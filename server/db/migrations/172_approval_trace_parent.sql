-- OpenTelemetry (issue 28 item 5): the W3C traceparent of the turn that paused for an approval,
-- so that its `airlock.approval.wait` span, made when it is decided (possibly by another process,
-- hours later), joins that turn's trace. NULL when traces were off at the pause.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS trace_parent text;
