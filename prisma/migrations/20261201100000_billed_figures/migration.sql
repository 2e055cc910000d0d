-- What a vendor reported it billed for an upstream task, kept beside what the gateway priced it (cost): the
-- amount, its unit (units, credits, tokens, seconds) and that amount at the channel's price of the model.
-- Written on the accepted attempt when the upstream task ends; null while unknown.
ALTER TABLE "task_attempts" ADD COLUMN "billed_amount" DOUBLE PRECISION;
ALTER TABLE "task_attempts" ADD COLUMN "billed_unit" VARCHAR(16);
ALTER TABLE "task_attempts" ADD COLUMN "billed_cost" DOUBLE PRECISION;
