-- quality_summary: what the ingest runs into the warehouse read, stored, rejected and skipped, and how many
-- stored hands carry a validator finding.
-- Check: lines_read = records_stored + rejects + duplicates (each run reconciles, so the totals do);
-- hands_with_issues <= records_stored.
WITH
runs AS (
    SELECT
        count(run_id) AS runs,
        coalesce(sum(lines_read), 0)::BIGINT AS lines_read,
        coalesce(sum(records_stored), 0)::BIGINT AS records_stored,
        coalesce(sum(records_invalid), 0)::BIGINT AS records_invalid,
        coalesce(sum(rejects), 0)::BIGINT AS rejects,
        coalesce(sum(duplicates), 0)::BIGINT AS duplicates,
        coalesce(sum(conflicts), 0)::BIGINT AS conflicts
    FROM ingest_runs
),

flagged AS (
    SELECT count(DISTINCT hand_id) AS hands_with_issues FROM issues WHERE hand_id IS NOT NULL
)

SELECT runs.*, flagged.hands_with_issues
FROM runs, flagged
