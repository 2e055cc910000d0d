-- The admission statement (TaskIntake: tasks and their jobs written in one statement, mgw_admit_tasks called
-- laterally once per owner) is a named statement, but PostgreSQL planned it anew at every call: planned for
-- no values, the lateral call was taken to return 1,000 rows per owner (a set-returning function's default),
-- so the generic plan always looked dearer than a plan for the call's own values, and it was never used.
-- pg_stat_statements under the image door: as many plans as calls, 0.57 ms of planning each against 0.6 ms
-- of execution. The function returns one row per task of its owner's slice, a handful in practice: with that
-- estimate the generic plan is taken after PostgreSQL's five custom ones, and each admission is only bound
-- and run (its round trip 1.49 ms -> 1.0 ms on the reference machine).
ALTER FUNCTION "mgw_admit_tasks"(VARCHAR, UUID[], INTEGER[], INTEGER[], INTEGER, INTEGER, CHAR(7), TIMESTAMPTZ) ROWS 10;
