-- rejects_by_code: input lines that are not stored records, by why (an issue code such as SCHEMA_JSON, or
-- INGEST_READ / INGEST_LINE_TOO_LONG / INGEST_CONFLICT), with their bytes.
-- Check: the rejects add up to warehouse_counts.rejects.
WITH
source AS (
    SELECT code, size FROM rejects
)

SELECT code, count(*) AS rejects, coalesce(sum(size), 0)::BIGINT AS bytes
FROM source
GROUP BY code
ORDER BY rejects DESC, code
