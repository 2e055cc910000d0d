-- OpenTelemetry: the W3C traceparent of the request that created a task, and of the work that made a
-- notification, so the task's steps and the notification's deliveries join that trace on any instance.
-- NULL when tracing was off.
ALTER TABLE "tasks" ADD COLUMN "trace_parent" VARCHAR(55);

ALTER TABLE "callback_deliveries" ADD COLUMN "trace_parent" VARCHAR(55);
